"""Training summaries: losses, gradient/parameter/update norms, rectification samples.

Tags written (besides `LearningRate` from the optimizer builder and `input/dropped_<reason>` from
the batch queue):
  losses/<name> (mean over clones), losses/regularization_loss, losses/total_loss;
  global_norm/gradients: the clones' summed gradients before train_config's multipliers, freezing
    and clipping (so an explosion shows even when clipped);
  global_norm/clipped_gradients: the gradients applied, after those hooks (only when
    gradient_clipping_by_norm or clip_gradients_by_global_norm is set);
  global_norm/parameters: every trainable variable;
  global_norm/updates: the last update of the variables (single machine);
  images/input_with_control_points, images/rectified (when the model rectifies).
"""

from aster.core.standard_fields import PredictionFields
from aster.tf_setup import tf
from aster.utils import model_deploy

# Half size (normalised units) of the box drawn around each control point.
_POINT_RADIUS = 0.015


def _loss_summaries(clones, total_loss):
    per_name = {}
    for clone in clones:
        losses = clone.outputs[model_deploy.LOSSES_KEY]
        items = losses.items() if isinstance(losses, dict) else enumerate(losses)
        for name, loss in items:
            per_name.setdefault(str(name), []).append(loss)
    for name, values in per_name.items():
        tf.summary.scalar(f"losses/{name}", tf.add_n(values) / float(len(values)))
    regularization = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    if regularization:
        tf.summary.scalar("losses/regularization_loss", tf.add_n(regularization))
    tf.summary.scalar("losses/total_loss", total_loss)


def _gradient_norm(tag, grads_and_vars):
    grads = [g for g, _ in grads_and_vars or [] if g is not None]
    if grads:
        tf.summary.scalar(tag, tf.global_norm(grads))


def _norm_summaries(gradients, clipped_gradients, updates_norm):
    _gradient_norm("global_norm/gradients", gradients)
    _gradient_norm("global_norm/clipped_gradients", clipped_gradients)
    params = tf.trainable_variables()
    if params:
        tf.summary.scalar("global_norm/parameters", tf.global_norm(params))
    if updates_norm is not None:
        tf.summary.scalar("global_norm/updates", updates_norm)


def draw_control_points(images, control_points):
    """Marks control points on images.

    Args:
      images: [B, H, W, 3] float32 in [0, 1].
      control_points: [B, K, 2] float32 (x, y) normalised to [0, 1].

    Returns:
      [B, H, W, 3] float32 with a small box around each point.
    """
    x, y = control_points[..., 0], control_points[..., 1]
    boxes = tf.stack([y - _POINT_RADIUS, x - _POINT_RADIUS, y + _POINT_RADIUS,
                      x + _POINT_RADIUS], axis=-1)
    colors = tf.constant([[0.0, 1.0, 0.0, 1.0]])
    return tf.image.draw_bounding_boxes(images, tf.clip_by_value(boxes, 0.0, 1.0), colors=colors)


def _image_summaries(clone, max_outputs):
    predictions = clone.outputs.get("predictions") or {}
    inputs = clone.outputs.get("preprocessed_images")
    if max_outputs <= 0 or inputs is None or inputs.shape.ndims != 4:
        return
    inputs = tf.clip_by_value((inputs[:max_outputs] + 1.0) / 2.0, 0.0, 1.0)
    if inputs.shape[-1] == 1:
        inputs = tf.image.grayscale_to_rgb(inputs)
    points = predictions.get(PredictionFields.control_points)
    if points is not None:
        inputs = draw_control_points(inputs, points[:max_outputs])
    tf.summary.image("images/input_with_control_points", inputs, max_outputs=max_outputs)
    rectified = predictions.get(PredictionFields.rectified_images)
    if rectified is not None:
        tf.summary.image("images/rectified",
                         tf.clip_by_value((rectified[:max_outputs] + 1.0) / 2.0, 0.0, 1.0),
                         max_outputs=max_outputs)


def add_summaries(clones, total_loss, gradients, clipped_gradients, updates_norm, max_images=3):
    """Adds the training summaries to the SUMMARIES collection (images from the first clone).

    Args:
      clones: model_deploy clones (their losses; the first one's images and predictions).
      total_loss: the summed loss.
      gradients: [(gradient, variable)] before the gradient hooks.
      clipped_gradients: [(gradient, variable)] as applied, or None when nothing clips them.
      updates_norm: global norm of the last update, or None.
      max_images: images per image summary.
    """
    with tf.name_scope(None):
        _loss_summaries(clones, total_loss)
        _norm_summaries(gradients, clipped_gradients, updates_norm)
        with tf.device(clones[0].device):
            _image_summaries(clones[0], max_images)
