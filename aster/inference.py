"""The inference graph and the predictors that run it, for eval, export, demo and benchmarks.

    graph = build_inference_graph(model_config, images)    # in the current graph
    text = graph.predictions[PredictionFields.text]
    with CheckpointPredictor(pipeline_config, "train/model.ckpt-1000") as predictor:
        outputs = predictor.predict([png_bytes, jpeg_bytes])  # {"text": ..., "scores": ...}
    with SavedModelPredictor("exported/aster") as predictor:  # what aster-export wrote
        outputs = predictor.predict([png_bytes])
    images, errors = read_image_files(["word.png"])  # [(path, bytes)], unreadable files named

build_inference_graph is the one recipe: the model in inference mode
(model_builder.build(model, is_training=False)) -> preprocess -> predict -> postprocess, on
[B, h, w, 3] float32 images in [0, 255]. The predictors take encoded image bytes: each image is
decoded to RGB, passed through eval_config.data_preprocessing_steps and resized to the model's
input size (decode_and_resize), and their outputs are the serving signature's (OUTPUT_KEYS, see
aster/exporters/saved_model_export.py). fixed_size_uint8_input is the input of the TFLite and
ONNX exports (aster/exporters/lite_export.py): uint8 images already decoded and resized to the
model's input size.
"""

import dataclasses
import io

from PIL import Image

from aster.core import preprocessor
from aster.core.standard_fields import InputDataFields as Fields
from aster.core.standard_fields import PredictionFields
from aster.data_decoders import tf_example_decoder
from aster.data_decoders.tf_example_decoder import MAX_PIXELS
from aster.tf_setup import tf
from aster.utils import checkpoints

SIGNATURE_KEY = "serving_default"
INPUT_KEY = "images"
OUTPUT_KEYS = ("text", "scores", "rectified_images", "control_points")
_PREDICTION_KEYS = {
    "text": PredictionFields.text,
    "scores": PredictionFields.scores,
    "rectified_images": PredictionFields.rectified_images,
    "control_points": PredictionFields.control_points,
}


def default_model_fn(model_config):
    """The model of `model_config` in inference mode (model_builder.build)."""
    from aster.builders import model_builder

    return model_builder.build(model_config, is_training=False)


def model_input_size(model_config):
    """(height, width) the model takes, from Model.<oneof>.input_height/input_width.

    Raises:
      ValueError: no model is set.
    """
    which = model_config.WhichOneof("model_oneof")
    if which is None:
        raise ValueError("model: no model is set in the pipeline config")
    sub = getattr(model_config, which)
    return sub.input_height, sub.input_width


@dataclasses.dataclass
class InferenceGraph:
    """What build_inference_graph built.

    Attributes:
      model: the RecognitionModel.
      images: [B, input_height, input_width, 3] float32, the preprocessed images.
      predictions: the postprocessed predictions (PredictionFields keys).
      variables: the global variables the model created (what a checkpoint restores).
      model_outputs: what model.predict returned (e.g. each predictor's label ids).
    """

    model: object
    images: object
    predictions: dict
    variables: list
    model_outputs: dict = None


def build_inference_graph(model_config, images, model_fn=None):
    """Builds model -> preprocess -> predict -> postprocess on `images` in the current graph.

    Args:
      model_config: model_pb2.Model.
      images: [B, h, w, 3] float32 tensor in [0, 255].
      model_fn: () -> RecognitionModel in inference mode; default default_model_fn(model_config).

    Returns:
      An InferenceGraph.
    """
    before = set(tf.global_variables())
    model = model_fn() if model_fn is not None else default_model_fn(model_config)
    preprocessed = model.preprocess(images)
    model_outputs = model.predict(preprocessed)
    predictions = model.postprocess(model_outputs)
    variables = [v for v in tf.global_variables() if v not in before]
    return InferenceGraph(model, preprocessed, predictions, variables, model_outputs)


def fixed_size_uint8_input(model_config, name=INPUT_KEY):
    """A uint8 [None, input_height, input_width, 3] placeholder for already decoded and resized
    RGB images (the TFLite export's input), and its float32 view for build_inference_graph.

    Returns:
      (placeholder, [B, input_height, input_width, 3] float32 tensor in [0, 255]).
    """
    height, width = model_input_size(model_config)
    images = tf.placeholder(tf.uint8, [None, height, width, 3], name=name)
    return images, tf.cast(images, tf.float32)


def decode_and_resize(image_bytes, height, width, steps=()):
    """Decodes a [B] string tensor of encoded images to [B, height, width, 3] float32 in [0, 255].

    Each image is decoded to RGB (alpha dropped, gray expanded), passed through `steps` (the
    eval_config.data_preprocessing_steps, as the evaluator applies them) and resized to height x
    width with antialiased bilinear interpolation (the default of the resize_image step: a crop
    larger than the model's input is averaged, not sampled; a no-op when the steps already
    produced that size).

    Args:
      image_bytes: [B] string tensor of encoded images.
      height, width: output size.
      steps: list of (function, kwargs) preprocessing steps (preprocessor_builder.build_steps).
    """

    def decode_one(encoded):
        # Refuse decompression bombs from their header before decoding allocates the pixels.
        guard = tf.debugging.assert_less_equal(
            tf_example_decoder.declared_pixels(encoded), tf.constant(MAX_PIXELS, tf.int64),
            message=f"image declares more than {MAX_PIXELS} pixels; refused")
        with tf.control_dependencies([guard]):
            image = tf.io.decode_image(encoded, channels=3, expand_animations=False)
        example = {Fields.image: tf.cast(image, tf.float32),
                   Fields.groundtruth_text: tf.constant("")}  # for text steps; unused
        image = preprocessor.preprocess(example, list(steps))[Fields.image]
        # Not preprocessor_geometry.resize_image: that clips to [0, 255], and a step may have
        # mapped the pixels elsewhere; antialiased bilinear weights are >= 0 and never overshoot.
        image = tf.compat.v2.image.resize(image, [height, width], "bilinear", antialias=True)
        return tf.reshape(image, [height, width, 3])

    return tf.map_fn(decode_one, image_bytes, dtype=tf.float32, back_prop=False)


def serving_outputs(predictions):
    """The serving signature's outputs: OUTPUT_KEYS the model provides, as named tensors."""
    return {key: tf.identity(predictions[field], name=key)
            for key, field in _PREDICTION_KEYS.items() if predictions.get(field) is not None}


class _SessionPredictor:
    """A session, its input tensor and output tensors; predict feeds encoded image bytes."""

    session = inputs = outputs = None

    def predict(self, encoded_images):
        """Runs the graph on a list of encoded image bytes; returns dict of numpy arrays."""
        return self.session.run(self.outputs, {self.inputs: list(encoded_images)})

    def close(self):
        self.session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class CheckpointPredictor(_SessionPredictor):
    """Runs the serving graph from a checkpoint in-process (what the SavedModel will hold).

    Usage: `with CheckpointPredictor(config, ckpt) as p: outputs = p.predict(list_of_bytes)`.
    """

    def __init__(self, pipeline_config, checkpoint_path, model_fn=None, session_config=None):
        """Builds the graph and restores the checkpoint.

        Args:
          pipeline_config: pipeline_pb2.TrainEvalPipelineConfig.
          checkpoint_path: what checkpoints.resolve takes: a checkpoint prefix, a training or
            model folder (its newest complete checkpoint) or a shipped model's name.
          model_fn: () -> RecognitionModel; default default_model_fn(model).
          session_config: optional tf.ConfigProto of the session (threads, bfloat16, see
            aster.core.session_options); the exported SavedModel does not keep it.

        Raises:
          ValueError: no checkpoint there, no model in the config, or a checkpoint that does not
            match it.
          aster.utils.checkpoints.CheckpointUnavailableError: the checkpoint cannot be read.
        """
        from aster.builders import preprocessor_builder

        checkpoint_path = checkpoints.resolve(checkpoint_path)
        height, width = model_input_size(pipeline_config.model)
        steps = preprocessor_builder.build_steps(
            pipeline_config.eval_config.data_preprocessing_steps,
            "eval_config.data_preprocessing_steps")
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.inputs = tf.placeholder(tf.string, [None], name=INPUT_KEY)
            images = decode_and_resize(self.inputs, height, width, steps)
            graph = build_inference_graph(pipeline_config.model, images, model_fn)
            self.outputs = serving_outputs(graph.predictions)
            saver = checkpoints.make_saver(
                graph.variables, checkpoint_path, pipeline_config.eval_config.use_moving_averages)
            self.tables_init = tf.tables_initializer()
            self.session = tf.Session(graph=self.graph, config=session_config)
            self.session.run([tf.local_variables_initializer(), self.tables_init])
            checkpoints.restore(self.session, saver, checkpoint_path)


class SavedModelPredictor(_SessionPredictor):
    """Runs an aster-export SavedModel in a graph-mode session (same outputs as the checkpoint)."""

    def __init__(self, saved_model_dir, session_config=None):
        """Loads the SavedModel's serving signature.

        Raises:
          ValueError: no SavedModel can be loaded from saved_model_dir.
        """
        self.graph = tf.Graph()
        self.session = tf.Session(graph=self.graph, config=session_config)
        with self.graph.as_default():
            try:
                meta = tf.saved_model.loader.load(self.session, [tf.saved_model.SERVING],
                                                  saved_model_dir)
            except (OSError, RuntimeError, tf.errors.OpError) as e:
                raise ValueError(f"--saved_model_dir {saved_model_dir!r}: cannot load a "
                                 f"SavedModel: {e}") from e
        signature = meta.signature_def[SIGNATURE_KEY]
        self.inputs = self.graph.get_tensor_by_name(signature.inputs[INPUT_KEY].name)
        self.outputs = {k: self.graph.get_tensor_by_name(v.name)
                        for k, v in signature.outputs.items()}


def read_image_files(paths):
    """Reads image files for a predictor, checking each decodes with Pillow first.

    Returns (list of (path, bytes), list of "<path>: cannot read the image (...)" messages).
    """
    images, errors = [], []
    for path in paths:
        try:
            with open(path, "rb") as f:
                data = f.read()
            with Image.open(io.BytesIO(data)) as image:
                if image.width * image.height > MAX_PIXELS:  # a decompression bomb: no load()
                    raise ValueError(f"{image.width}x{image.height} pixels is more than "
                                     f"{MAX_PIXELS}")
                image.load()
        except (OSError, ValueError, Image.DecompressionBombError) as e:
            errors.append(f"{path}: cannot read the image ({e})")
            continue
        images.append((path, data))
    return images, errors
