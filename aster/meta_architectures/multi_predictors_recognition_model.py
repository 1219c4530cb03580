"""ASTER's recognition model: optional TPS rectification, an encoder and several predictors.

    images [B, h, w, 3] float32 in [0, 255]
      -> preprocess: bilinear resize to [B, input_height, input_width, 3], scale to [-1, 1]
      -> spatial transformer (optional): rectified [B, oh, ow, 3], control points [B, K, 2]
      -> feature extractor: one [B, T, D] sequence (paper: [B, 25, 256])
      -> predictors, each under its own variable scope (e.g. "Forward", "Backward")
      -> loss: {"<name>/loss": scalar per predictor, "keypoint_loss" when supervised}
      -> postprocess: per sample the text of the predictor with the highest score

In training, predict() runs the rectifier and the encoder only; loss() runs each predictor
teacher-forced on the groundtruth given to provide_groundtruth() (before or after predict()). In
inference, predict() also decodes. postprocess() decodes lazily if predict() did not (training
graphs), reusing the same variables. All variables are plain (trainable or batch-norm moving
averages), so an ExponentialMovingAverage over tf.trainable_variables() restores as usual.
"""

from aster.core import keypoints as keypoints_lib
from aster.core import model
from aster.core import standard_fields as fields
from aster.tf_setup import tf

FEATURE_SEQUENCE = "feature_sequence"
PREDICTOR_OUTPUTS = "predictor_outputs"


class MultiPredictorsRecognitionModel(model.RecognitionModel):
    """Rectifier + encoder + any number of predictors, fused per sample by score."""

    def __init__(self, feature_extractor, predictors, is_training, spatial_transformer=None,
                 input_height=64, input_width=256, keypoint_supervision=False,
                 regression_loss=None, auxiliary_predictors=()):
        """Constructor.

        Args:
          feature_extractor: object with extract(images, scope) -> [B, T, D] float32.
          predictors: non-empty list of predictors (AttentionPredictor / CtcPredictor) with
            distinct names.
          is_training: Python bool.
          spatial_transformer: optional object with batch_transform(images, scope) -> dict with
            "rectified_images" and "control_points" (and a control_points= keyword for
            predict(control_points=...)).
          input_height, input_width: int, the size preprocess() resizes to.
          keypoint_supervision: bool, add an L2 loss between predicted and groundtruth control
            points (needs a spatial transformer and groundtruth keypoints).
          regression_loss: callable(prediction, target, sample_weights) for that loss.
          auxiliary_predictors: names of predictors that are trained (their loss is added) but
            never decoded or fused.

        Raises:
          ValueError: no predictors, repeated names, a bad input size, keypoint supervision
            without a spatial transformer or regression loss, an unknown auxiliary name, or every
            predictor auxiliary.
        """
        super().__init__(is_training)
        if not predictors:
            raise ValueError("at least one predictor is required")
        names = [p.name for p in predictors]
        if len(set(names)) != len(names):
            raise ValueError(f"predictor names must be distinct, got {names}")
        auxiliary = set(auxiliary_predictors)
        unknown = sorted(auxiliary - set(names))
        if unknown:
            raise ValueError(f"auxiliary predictors {unknown} are not among the predictors {names}")
        if set(names) <= auxiliary:
            raise ValueError("every predictor is auxiliary: at least one must be decoded")
        if input_height <= 0 or input_width <= 0:
            raise ValueError(f"input size must be positive, got {input_height}x{input_width}")
        if keypoint_supervision and (spatial_transformer is None or regression_loss is None):
            raise ValueError("keypoint_supervision needs a spatial_transformer and a "
                             "regression_loss")
        self._feature_extractor = feature_extractor
        self._predictors = list(predictors)
        self._decoded = [p for p in predictors if p.name not in auxiliary]
        self._stn = spatial_transformer
        self._input_size = (input_height, input_width)
        self._keypoint_supervision = keypoint_supervision
        self._regression_loss = regression_loss

    @property
    def predictors(self):
        return list(self._predictors)

    @property
    def decoded_predictors(self):
        """The predictors that inference runs and fuses (all but the auxiliary ones)."""
        return list(self._decoded)

    @property
    def spatial_transformer(self):
        return self._stn

    def preprocess(self, images, scope=None):
        """[B, h, w, 3] float32 in [0, 255] -> [B, input_height, input_width, 3] in [-1, 1]."""
        with tf.name_scope(scope, "Preprocess", [images]):
            images = tf.cast(images, tf.float32)
            if images.shape[1:3].as_list() != list(self._input_size):
                images = tf.compat.v2.image.resize(images, self._input_size, method="bilinear")
            return images * (2.0 / 255.0) - 1.0

    def predict(self, preprocessed_images, scope=None, control_points=None):
        """Runs rectification, the encoder and (in inference) the decoders.

        Args:
          preprocessed_images: [B, input_height, input_width, 3] from preprocess().
          scope: ignored (variable scopes are fixed so checkpoints stay loadable).
          control_points: optional [B, K, 2] (or [K, 2]) normalised points that replace the
            rectifier's prediction (its localization network is skipped), e.g.
            spatial_transformer.target_control_points for the identity rectification. To run
            this beside a normal predict() on the same variables, call it under
            `tf.variable_scope(tf.get_variable_scope(), reuse=True)`.

        Returns:
          dict: rectified_images [B, oh, ow, 3], control_points [B, K, 2] ([B, 0, 2] without a
          rectifier), feature_sequence [B, T, D] (the encoder output), predictor_outputs (dict
          name -> the predictor's predict() dict; empty in training; auxiliary predictors never
          appear).

        Raises:
          ValueError: control_points given to a model without a spatial transformer.
        """
        del scope  # variable scopes are fixed so checkpoints stay loadable
        images = preprocessed_images
        batch_size = tf.shape(images)[0]
        if control_points is not None and self._stn is None:
            raise ValueError("control_points given but the model has no spatial transformer")
        if self._stn is not None:
            given = {} if control_points is None else {"control_points": control_points}
            stn_out = self._stn.batch_transform(images, scope="SpatialTransformer", **given)
            rectified = stn_out["rectified_images"]
            control_points = stn_out["control_points"]
        else:
            rectified = images
            control_points = tf.zeros([batch_size, 0, 2], tf.float32)
        sequence = self._feature_extractor.extract(rectified, scope="FeatureExtractor")
        outputs = {}
        if not self._is_training:
            outputs = {p.name: p.predict(sequence) for p in self._decoded}
        return {
            fields.PredictionFields.rectified_images: rectified,
            fields.PredictionFields.control_points: control_points,
            FEATURE_SEQUENCE: sequence,
            PREDICTOR_OUTPUTS: outputs,
        }

    def loss(self, predictions_dict, scope=None):
        """Returns {"<name>/loss": scalar, ..., "keypoint_loss": scalar (if supervised)}.

        Raises:
          ValueError: provide_groundtruth() was not called, or keypoint supervision without
            groundtruth keypoints.
        """
        text = self._groundtruth.get("text")
        if text is None:
            raise ValueError("call provide_groundtruth() before loss()")
        losses = {}
        with tf.name_scope(scope, "Loss"):
            for predictor in self._predictors:
                losses[f"{predictor.name}/loss"] = predictor.loss(
                    predictions_dict[FEATURE_SEQUENCE], text)
            if self._keypoint_supervision:
                losses["keypoint_loss"] = self._keypoint_loss(
                    predictions_dict[fields.PredictionFields.control_points])
        return losses

    def _keypoint_loss(self, control_points):
        groundtruth = self._groundtruth.get("keypoints")
        if groundtruth is None:
            raise ValueError("keypoint_supervision is on but provide_groundtruth() got no "
                             "groundtruth_keypoints")
        num_points = control_points.shape[1]
        target, valid = keypoints_lib.keypoints_to_control_points(groundtruth, num_points)
        return self._regression_loss(control_points, target, valid)

    def postprocess(self, predictions_dict, scope=None):
        """Fuses the decoded (non-auxiliary) predictors per sample by the highest score.

        Returns:
          dict with PredictionFields text [B] string, scores [B] float32, control_points,
          rectified_images, plus "<name>/text" and "<name>/scores" for every decoded predictor.
        """
        outputs = dict(predictions_dict[PREDICTOR_OUTPUTS])
        result = {}
        with tf.name_scope(scope, "Postprocess"):
            texts, scores = [], []
            for predictor in self._decoded:
                if predictor.name not in outputs:  # a training graph: decode now
                    outputs[predictor.name] = predictor.predict(
                        predictions_dict[FEATURE_SEQUENCE])
                out = predictor.postprocess(outputs[predictor.name])
                texts.append(out["text"])
                scores.append(out["scores"])
                result[f"{predictor.name}/text"] = out["text"]
                result[f"{predictor.name}/scores"] = out["scores"]
            texts = tf.stack(texts, axis=1)  # [B, P]
            scores = tf.stack(scores, axis=1)
            best = tf.argmax(scores, axis=1, output_type=tf.int32)
            result[fields.PredictionFields.text] = tf.gather(texts, best, batch_dims=1)
            result[fields.PredictionFields.scores] = tf.gather(scores, best, batch_dims=1)
        result[fields.PredictionFields.control_points] = predictions_dict[
            fields.PredictionFields.control_points]
        result[fields.PredictionFields.rectified_images] = predictions_dict[
            fields.PredictionFields.rectified_images]
        return result
