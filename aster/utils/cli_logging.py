"""Log set-up shared by the command-line programs (aster-train, aster-eval, aster-export, ...)."""

import logging

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def configure(level=logging.INFO, fmt=FORMAT):
    """Sends every log record, TensorFlow's included, once through the root logger's format.

    TensorFlow's "tensorflow" logger has a handler of its own and also propagates to the root
    logger, so without this each of its lines is printed twice in two formats.
    """
    logging.basicConfig(level=level, format=fmt)
    tf_logger = logging.getLogger("tensorflow")
    for handler in list(tf_logger.handlers):
        tf_logger.removeHandler(handler)
    tf_logger.propagate = True
