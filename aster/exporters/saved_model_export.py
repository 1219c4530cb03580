"""`aster-export` (--format saved_model, the default): a checkpoint as a SavedModel.

    export_saved_model(pipeline_config, "train/model.ckpt-1000", "exported/aster")

The SavedModel (TF1 graph, tags ["serve"]) has one signature, "serving_default":

    inputs:  images            [B] string   encoded PNG, JPEG, GIF or BMP bytes, any size
    outputs: text              [B] string   UTF-8 transcription
             scores            [B] float32  its log-probability (higher is better)
             rectified_images  [B, h, w, 3] float32 in [-1, 1] (absent without rectification)
             control_points    [B, K, 2] float32, normalised (x, y) (absent without rectification)

Decoding and preprocessing happen in the graph (built by aster/inference.py): each image is
decoded to RGB, passed through eval_config.data_preprocessing_steps (as aster-eval does) and
resized (bilinear) to the model's input size (model.*.input_height x input_width); an
undecodable image fails the whole call with InvalidArgumentError. The weights are the
checkpoint's moving averages when eval_config.use_moving_averages is set. The pipeline config is
copied to OUTPUT_DIR/pipeline.config.

Loading it needs TensorFlow only, not this package:

    import tensorflow as tf
    serve = tf.saved_model.load("exported/aster").signatures["serving_default"]
    out = serve(images=tf.constant([open("word.png", "rb").read()]))
    print(out["text"].numpy()[0].decode(), out["scores"].numpy()[0])

`aster-demo --saved_model_dir exported/aster IMAGE...` runs it too.
tests/exporters/saved_model_export_test.py checks that the SavedModel, loaded this way in a process
that never imports `aster`, gives the checkpoint's texts and scores.
"""

import logging
import os
import shutil

from aster.inference import INPUT_KEY, SIGNATURE_KEY, CheckpointPredictor
from aster.tf_setup import tf
from aster.utils import config_util

logger = logging.getLogger(__name__)


def export_saved_model(pipeline_config, checkpoint_path, output_dir, model_fn=None,
                       overwrite=False):
    """Writes the SavedModel described in the module docstring.

    Args:
      pipeline_config: pipeline_pb2.TrainEvalPipelineConfig.
      checkpoint_path: checkpoint prefix.
      output_dir: the SavedModel folder; must not exist unless overwrite.
      model_fn: see aster.inference.CheckpointPredictor.
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
                inputs={INPUT_KEY: predictor.inputs}, outputs=predictor.outputs)
            builder = tf.saved_model.Builder(output_dir)
            builder.add_meta_graph_and_variables(
                predictor.session, [tf.saved_model.SERVING],
                signature_def_map={SIGNATURE_KEY: signature},
                main_op=predictor.tables_init, strip_default_attrs=True)
            builder.save()
    config_util.save_pipeline_config(pipeline_config, os.path.join(output_dir, "pipeline.config"))
    logger.info("exported %s to %s", checkpoint_path, output_dir)
    return output_dir
