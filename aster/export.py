"""aster-export: writes a checkpoint as a SavedModel with a serving signature.

    aster-export --pipeline_config_path CONFIG --checkpoint_path TRAIN_DIR/model.ckpt-1000 \\
                 --output_dir exported/aster

The SavedModel (TF1 graph, tags ["serve"]) has one signature, "serving_default":

    inputs:  images            [B] string   encoded PNG, JPEG, GIF or BMP bytes, any size
    outputs: text              [B] string   UTF-8 transcription
             scores            [B] float32  its log-probability (higher is better)
             rectified_images  [B, h, w, 3] float32 in [-1, 1] (absent without rectification)
             control_points    [B, K, 2] float32, normalised (x, y) (absent without rectification)

Decoding and preprocessing happen in the graph: each image is decoded to RGB, passed through
eval_config.data_preprocessing_steps (as aster-eval does) and resized (bilinear) to the model's
input size (model.*.input_height x input_width); an undecodable image fails the whole call with
InvalidArgumentError. The weights are the checkpoint's moving averages when
eval_config.use_moving_averages is set. The pipeline config is copied to
OUTPUT_DIR/pipeline.config.

Loading it needs TensorFlow only, not this package:

    import tensorflow as tf
    serve = tf.saved_model.load("exported/aster").signatures["serving_default"]
    out = serve(images=tf.constant([open("word.png", "rb").read()]))
    print(out["text"].numpy()[0].decode(), out["scores"].numpy()[0])

`aster-demo --saved_model_dir exported/aster IMAGE...` runs it too. tests/export_test.py checks
that the SavedModel, loaded this way in a process that never imports `aster`, gives the
checkpoint's texts and scores.
"""

import argparse
import logging
import os
import shutil
import sys

from aster.core import preprocessor
from aster.core.standard_fields import InputDataFields as Fields
from aster.core.standard_fields import PredictionFields
from aster.data_decoders import tf_example_decoder
from aster.data_decoders.tf_example_decoder import MAX_PIXELS
from aster.tf_setup import tf
from aster.utils import cli_logging, config_util

logger = logging.getLogger(__name__)

SIGNATURE_KEY = "serving_default"
INPUT_KEY = "images"
OUTPUT_KEYS = ("text", "scores", "rectified_images", "control_points")
_PREDICTION_KEYS = {
    "text": PredictionFields.text,
    "scores": PredictionFields.scores,
    "rectified_images": PredictionFields.rectified_images,
    "control_points": PredictionFields.control_points,
}


def model_input_size(model_config):
    """(height, width) the model takes, from Model.<oneof>.input_height/input_width."""
    which = model_config.WhichOneof("model_oneof")
    if which is None:
        raise ValueError("model: no model is set in the pipeline config")
    sub = getattr(model_config, which)
    return sub.input_height, sub.input_width


def decode_and_resize(image_bytes, height, width, steps=()):
    """Decodes a [B] string tensor of encoded images to [B, height, width, 3] float32 in [0, 255].

    Each image is decoded to RGB (alpha dropped, gray expanded), passed through `steps` (the
    eval_config.data_preprocessing_steps, as the evaluator applies them) and resized with bilinear
    interpolation to height x width (a no-op when the steps already produced that size).

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
        image = tf.image.resize(image, [height, width])
        return tf.reshape(image, [height, width, 3])

    return tf.map_fn(decode_one, image_bytes, dtype=tf.float32, back_prop=False)


def build_inference_graph(model, image_bytes, height, width, steps=()):
    """Builds decode -> preprocessing steps -> model in the current graph; returns the outputs.

    Args:
      model: a RecognitionModel in inference mode.
      image_bytes: [B] string tensor of encoded images.
      height, width: the model's input size.
      steps: the eval preprocessing steps (see decode_and_resize).

    Returns:
      dict with keys from OUTPUT_KEYS (those the model provides).
    """
    images = decode_and_resize(image_bytes, height, width, steps)
    predictions = model.postprocess(model.predict(model.preprocess(images)))
    return {key: tf.identity(predictions[field], name=key)
            for key, field in _PREDICTION_KEYS.items() if predictions.get(field) is not None}


class CheckpointPredictor:
    """Runs the serving graph from a checkpoint in-process (what the SavedModel will hold).

    Usage: `with CheckpointPredictor(config, ckpt) as p: outputs = p.predict(list_of_bytes)`.
    """

    def __init__(self, pipeline_config, checkpoint_path, model_fn=None, session_config=None):
        """Builds the graph and restores the checkpoint.

        Args:
          pipeline_config: pipeline_pb2.TrainEvalPipelineConfig.
          checkpoint_path: checkpoint prefix.
          model_fn: () -> RecognitionModel; default model_builder.build(model, False).
          session_config: optional tf.ConfigProto of the session (threads, bfloat16, see
            aster.core.session_options); the exported SavedModel does not keep it.

        Raises:
          ValueError: no model in the config, or a checkpoint that does not match it.
          aster.eval_util.CheckpointUnavailableError: the checkpoint cannot be read.
        """
        from aster import evaluator
        from aster.builders import preprocessor_builder

        height, width = model_input_size(pipeline_config.model)
        steps = preprocessor_builder.build_steps(
            pipeline_config.eval_config.data_preprocessing_steps,
            "eval_config.data_preprocessing_steps")
        model_fn = model_fn or (lambda: evaluator.default_model_fn(pipeline_config.model))
        self.graph = tf.Graph()
        with self.graph.as_default():
            self.image_bytes = tf.placeholder(tf.string, [None], name=INPUT_KEY)
            before = set(tf.global_variables())
            self.outputs = build_inference_graph(model_fn(), self.image_bytes, height, width,
                                                 steps)
            model_vars = [v for v in tf.global_variables() if v not in before]
            saver = evaluator.make_saver(
                model_vars, checkpoint_path, pipeline_config.eval_config.use_moving_averages)
            self.tables_init = tf.tables_initializer()
            self.session = tf.Session(graph=self.graph, config=session_config)
            self.session.run([tf.local_variables_initializer(), self.tables_init])
            evaluator.restore(self.session, saver, checkpoint_path)

    def predict(self, encoded_images):
        """Runs the graph on a list of encoded image bytes; returns dict of numpy arrays."""
        return self.session.run(self.outputs, {self.image_bytes: list(encoded_images)})

    def close(self):
        self.session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def export_saved_model(pipeline_config, checkpoint_path, output_dir, model_fn=None,
                       overwrite=False):
    """Writes the SavedModel described in the module docstring.

    Args:
      pipeline_config: pipeline_pb2.TrainEvalPipelineConfig.
      checkpoint_path: checkpoint prefix.
      output_dir: the SavedModel folder; must not exist unless overwrite.
      model_fn: see CheckpointPredictor.
      overwrite: replace an existing output_dir.

    Returns:
      output_dir.

    Raises:
      ValueError: output_dir exists (without overwrite), or see CheckpointPredictor.
    """
    if os.path.exists(output_dir):
        if not overwrite:
            raise ValueError(f"--output_dir {output_dir!r} already exists (use --overwrite)")
        shutil.rmtree(output_dir)
    with CheckpointPredictor(pipeline_config, checkpoint_path, model_fn) as predictor:
        with predictor.graph.as_default():
            signature = tf.saved_model.predict_signature_def(
                inputs={INPUT_KEY: predictor.image_bytes}, outputs=predictor.outputs)
            builder = tf.saved_model.Builder(output_dir)
            builder.add_meta_graph_and_variables(
                predictor.session, [tf.saved_model.SERVING],
                signature_def_map={SIGNATURE_KEY: signature},
                main_op=predictor.tables_init, strip_default_attrs=True)
            builder.save()
    config_util.save_pipeline_config(pipeline_config, os.path.join(output_dir, "pipeline.config"))
    logger.info("exported %s to %s", checkpoint_path, output_dir)
    return output_dir


def build_parser():
    parser = argparse.ArgumentParser(prog="aster-export", description=__doc__.split("\n")[0])
    parser.add_argument("--pipeline_config_path", default="",
                        help="pipeline config (default: pipeline.config beside the checkpoint)")
    parser.add_argument("--checkpoint_path", required=True,
                        help="checkpoint prefix, or a training folder (its newest checkpoint)")
    parser.add_argument("--output_dir", required=True, help="SavedModel folder to create")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing output_dir")
    from aster.config_cli import add_override_flags

    add_override_flags(parser)
    return parser


def resolve_checkpoint(checkpoint_path, pipeline_config_path, config_override="", assignments=()):
    """Resolves a checkpoint (or training folder) and its pipeline config.

    Returns:
      (checkpoint prefix, pipeline config with overrides applied).

    Raises:
      ValueError: no checkpoint there, or no config given and none beside the checkpoint.
    """
    from aster import eval_util
    if os.path.isdir(checkpoint_path):
        newest = eval_util.newest_checkpoint(checkpoint_path)
        if newest is None:
            raise ValueError(f"--checkpoint_path {checkpoint_path!r}: no complete checkpoint there")
        checkpoint_path = newest.path
    elif not eval_util.checkpoint_exists(checkpoint_path):
        raise ValueError(f"--checkpoint_path {checkpoint_path!r}: no complete checkpoint there "
                         "(expected its .index and .data-* files)")
    if not pipeline_config_path:
        pipeline_config_path = os.path.join(os.path.dirname(checkpoint_path),
                                            config_util.PIPELINE_FILENAME)
        if not os.path.isfile(pipeline_config_path):
            raise ValueError("--pipeline_config_path is required: no pipeline.config beside "
                             f"{checkpoint_path}")
    config = config_util.load_pipeline_config(pipeline_config_path)
    config = config_util.merge_overrides(config, config_override, assignments)
    config_util.validate(config)
    return checkpoint_path, config


def main(argv=None):
    args = build_parser().parse_args(argv)
    cli_logging.configure()
    from aster import eval_util

    try:
        checkpoint, config = resolve_checkpoint(args.checkpoint_path, args.pipeline_config_path,
                                                args.config_override, args.assignments)
        export_saved_model(config, checkpoint, args.output_dir, overwrite=args.overwrite)
    except config_util.ConfigError as e:
        from aster.config_cli import config_error

        return config_error("aster-export", e)
    except (ValueError, eval_util.CheckpointUnavailableError) as e:
        print(f"aster-export: {e}", file=sys.stderr)
        return 1
    print(f"exported {checkpoint} to {args.output_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
