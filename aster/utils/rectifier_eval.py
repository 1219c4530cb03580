"""Rectifier diagnostics of the evaluator: control-point displacement and identity rectification.

Models with a spatial transformer (a `spatial_transformer` attribute with `init_control_points`
and `target_control_points`) get, per dataset, how far the predicted control points moved from
the rectifier's initial ones; with eval_config.compare_identity_rectification the same batches are
also decoded with the control points replaced by the TPS target pattern (the identity
rectification, a plain resize) through a second predict() that reuses every variable.
"""

import numpy as np

from aster.core.standard_fields import PredictionFields
from aster.tf_setup import tf


def spatial_transformer(model):
    """The model's spatial transformer when it has one with init_control_points and
    target_control_points (aster.core.spatial_transformer.SpatialTransformer), else None."""
    stn = getattr(model, "spatial_transformer", None)
    if stn is None or any(getattr(stn, name, None) is None
                          for name in ("init_control_points", "target_control_points")):
        return None
    return stn


def control_point_displacement(control_points, init_points, input_height, input_width):
    """Per-image distances of predicted control points from the rectifier's initial ones.

    Args:
      control_points: [B, K, 2] float32 normalised (x, y) in the rectifier's input.
      init_points: [K, 2] numpy (SpatialTransformer.init_control_points).
      input_height, input_width: the rectifier's input size in pixels (int or scalar tensors).

    Returns:
      dict of [B] float32 tensors: mean_displacement / max_displacement (mean and maximum over
      the K points of the Euclidean distance, normalised units) and mean_displacement_px /
      max_displacement_px (the same with x scaled by input_width and y by input_height).
    """
    init = tf.constant(np.asarray(init_points, np.float32))
    with tf.name_scope("ControlPointDisplacement"):
        diff = tf.cast(control_points, tf.float32) - init[None]
        scale = tf.cast(tf.stack([input_width, input_height]), tf.float32)
        distance = tf.sqrt(tf.reduce_sum(tf.square(diff), axis=-1))
        distance_px = tf.sqrt(tf.reduce_sum(tf.square(diff * scale), axis=-1))
        return {
            "mean_displacement": tf.reduce_mean(distance, axis=1),
            "max_displacement": tf.reduce_max(distance, axis=1),
            "mean_displacement_px": tf.reduce_mean(distance_px, axis=1),
            "max_displacement_px": tf.reduce_max(distance_px, axis=1),
        }


def identity_rectification_text(model, preprocessed_images):
    """Decodes `preprocessed_images` again with the rectifier forced to the identity.

    The control points are replaced by the TPS target pattern
    (spatial_transformer.target_control_points, for which the TPS grid is the identity map)
    and model.predict runs a second time under a reusing variable scope, so it shares every
    variable of the normal path (call it after the normal predict()).

    Returns:
      [B] string tensor: the fused text of that path.

    Raises:
      RuntimeError: the second path created variables (it would not share the restored ones).
    """
    # [K, 2]: batch_transform broadcasts it over the batch.
    points = np.asarray(model.spatial_transformer.target_control_points, np.float32)
    before = set(tf.global_variables())
    with tf.variable_scope(tf.get_variable_scope(), reuse=True), \
            tf.name_scope("IdentityRectification"):
        predictions = model.postprocess(model.predict(preprocessed_images,
                                                      control_points=points))
    created = [v.op.name for v in tf.global_variables() if v not in before]
    if created:
        raise RuntimeError(f"the identity-rectification path created {len(created)} variables "
                           f"instead of reusing the model's: {created[:5]}")
    return predictions[PredictionFields.text]


def displacement_report(sums, count, num_control_points):
    """The "rectifier" entry of a dataset's result from the per-image sums (None without one)."""
    if num_control_points is None:
        return None
    report = {k: (v / count if count else None) for k, v in sums.items()}
    report["num_control_points"] = num_control_points
    return report
