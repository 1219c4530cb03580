"""A copy of the source tree, for tests that build the package or run the docs from a checkout."""

import os
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Top-level entries of the checkout a copy leaves out: git, the virtualenv, generated data, runs
# and build outputs (all in .gitignore).
LEFT_OUT = frozenset({".git", ".venv", "build", "dist", "data", "runs", "train_dir", "eval_dir",
                      ".gl", ".whl", ".pytest_cache", ".ruff_cache"})


def _ignore(directory, names):
    left_out = {name for name in names if name == "__pycache__" or name.endswith(".egg-info")}
    if os.path.samefile(directory, ROOT):
        left_out |= LEFT_OUT & set(names)
    return left_out


def copy_source_tree(destination):
    """Copies the checkout to `destination` (which must not exist) without LEFT_OUT.

    Modification times are kept, so `make` sees the copy as it sees the checkout. Generated
    files that are not in LEFT_OUT (aster/protos/*_pb2.py after an install) are copied too.

    Returns:
      str, the destination.
    """
    shutil.copytree(ROOT, destination, ignore=_ignore, symlinks=True)
    return str(destination)
