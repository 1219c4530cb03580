"""`python -m aster.serve`: the aster-serve command (aster/serve/cli.py)."""

import sys

from aster.serve import cli

sys.exit(cli.main())
