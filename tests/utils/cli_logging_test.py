import logging

from aster.tf_setup import tf
from aster.utils import cli_logging


def test_tensorflow_records_are_printed_once(capsys):
    root = logging.getLogger()
    saved = list(root.handlers)
    try:
        for handler in saved:
            root.removeHandler(handler)
        cli_logging.configure()
        tf.get_logger().info("one line please")
        err = capsys.readouterr().err
        assert err.count("one line please") == 1
        assert "INFO tensorflow: one line please" in err
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved:
            root.addHandler(handler)
