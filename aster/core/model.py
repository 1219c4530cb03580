"""The recognition model contract every meta-architecture implements.

Data flow (B = batch size, H x W = the model's input size, 64 x 256 in the paper config)::

    images [B, h, w, 3] float32 in [0, 255]  (any size; the batcher pads/resizes per config)
      -> preprocess()   [B, H, W, 3] float32 in [-1, 1], resized to the model's input size
      -> predict()      dict: rectified images [B, 32, 100, 3], control points [B, K, 2],
                        per-predictor logits / decoded labels
      -> loss()         dict of named scalar float32 losses (e.g. "Forward/loss",
                        "Backward/loss", "keypoint_loss"); the total is their sum
      -> postprocess()  dict with standard_fields.PredictionFields keys: text [B] string,
                        scores [B] float32, control_points, rectified_images

provide_groundtruth() must be called before loss() in training; it takes the batched
groundtruth_text [B] string tensor (and optional keypoints [B, 2K] normalised).
"""

import abc


class RecognitionModel(abc.ABC):
    """Abstract text recognition model (graph-mode, tf.compat.v1)."""

    def __init__(self, is_training):
        self._is_training = is_training
        self._groundtruth = {}

    @property
    def is_training(self):
        return self._is_training

    @abc.abstractmethod
    def preprocess(self, images):
        """Maps [B, h, w, 3] float32 images in [0, 255] to model inputs [B, H, W, 3] in [-1, 1]."""

    @abc.abstractmethod
    def predict(self, preprocessed_images, scope=None):
        """Runs the network. Returns a dict of prediction tensors (see module docstring)."""

    @abc.abstractmethod
    def loss(self, predictions_dict, scope=None):
        """Returns a dict of named scalar losses computed against the provided groundtruth."""

    @abc.abstractmethod
    def postprocess(self, predictions_dict, scope=None):
        """Returns a dict keyed by standard_fields.PredictionFields."""

    def provide_groundtruth(self, groundtruth_text, groundtruth_keypoints=None):
        """Stores groundtruth for loss().

        Args:
          groundtruth_text: [B] string tensor of UTF-8 transcripts.
          groundtruth_keypoints: optional [B, 2K] float32 keypoints normalised to [0, 1].
        """
        self._groundtruth = {"text": groundtruth_text, "keypoints": groundtruth_keypoints}

    def groundtruth(self):
        """The dict stored by provide_groundtruth."""
        return self._groundtruth
