"""Test setup shared by every test: legacy Keras before TensorFlow is imported anywhere."""

import os

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
