"""Ground-truth control points from text curves (graph code for the original's DivideCurve op).

Records may carry keypoints: (x, y) pairs normalised to [0, 1], the top curve of the word then the
bottom curve, the same number of points on each (SynthText crops). Batched, they are zero padded:
[B, 2N] with trailing (0, 0) pairs after each sample's own points. Each curve is resampled to
K / 2 points equally spaced along its arc length, end points included, giving targets for the K
control points of the rectifier (top edge left to right, then bottom edge left to right). A curve
given right to left (as a polygon's bottom edge usually is) is flipped first.
"""

from aster.tf_setup import tf


def divide_curve(points, num_points, num_divisions):
    """Resamples polylines to equally spaced points along their arc length.

    Args:
      points: [B, M, 2] float32 polylines, padded after each one's first num_points[b] points.
      num_points: [B] int32, valid points per polyline (>= 1; 1 repeats the point).
      num_divisions: int >= 2, points returned per polyline.

    Returns:
      [B, num_divisions, 2] float32: the first and last valid points and equally spaced points
      (by arc length) between them.
    """
    if num_divisions < 2:
        raise ValueError(f"num_divisions must be >= 2, got {num_divisions}")
    with tf.name_scope("DivideCurve"):
        points = tf.convert_to_tensor(points, tf.float32)
        num_points = tf.maximum(tf.cast(num_points, tf.int32), 1)
        max_points = tf.shape(points)[1]
        seg = tf.norm(points[:, 1:] - points[:, :-1], axis=2)  # [B, M-1]
        seg *= tf.cast(tf.sequence_mask(num_points - 1, max_points - 1), tf.float32)
        cum = tf.concat([tf.zeros_like(seg[:, :1]), tf.cumsum(seg, axis=1)], axis=1)  # [B, M]
        total = cum[:, -1:]
        targets = total * tf.linspace(0.0, 1.0, num_divisions)[None, :]  # [B, K]
        last_segment = tf.maximum(num_points - 2, 0)[:, None]
        start = tf.searchsorted(cum, targets, side="right") - 1
        start = tf.clip_by_value(start, 0, last_segment)
        end = tf.minimum(start + 1, num_points[:, None] - 1)
        p0 = tf.gather(points, start, batch_dims=1)
        p1 = tf.gather(points, end, batch_dims=1)
        c0 = tf.gather(cum, start, batch_dims=1)
        c1 = tf.gather(cum, end, batch_dims=1)
        length = c1 - c0
        t = tf.where(length > 0, (targets - c0) / tf.maximum(length, 1e-12),
                     tf.zeros_like(length))
        t = tf.clip_by_value(t, 0.0, 1.0)[:, :, None]
        return p0 + t * (p1 - p0)


def _left_to_right(points, num_points):
    """Flips polylines whose last valid point lies left of their first."""
    first_x = points[:, 0, 0]
    last_x = tf.gather(points[:, :, 0], tf.maximum(num_points - 1, 0), batch_dims=1)
    flipped = tf.reverse_sequence(points, tf.cast(num_points, tf.int64), seq_axis=1, batch_axis=0)
    return tf.where(last_x < first_x, flipped, points)


def keypoints_to_control_points(keypoints, num_control_points):
    """Targets for the rectifier's control points from batched curve keypoints.

    Args:
      keypoints: [B, 2N] float32, (x, y) pairs of the top then the bottom curve, normalised,
        zero padded at the end.
      num_control_points: int K, even, >= 4.

    Returns:
      control_points: [B, K, 2] float32 (top edge left to right, then bottom edge).
      valid: [B] float32, 1 for samples with at least two points per curve, else 0.
    """
    if num_control_points < 4 or num_control_points % 2:
        raise ValueError(f"num_control_points must be even and >= 4, got {num_control_points}")
    with tf.name_scope("KeypointsToControlPoints"):
        keypoints = tf.convert_to_tensor(keypoints, tf.float32)
        pairs = tf.reshape(keypoints, [tf.shape(keypoints)[0], -1, 2])  # [B, N, 2]
        # Two more (0, 0) pairs (padding, never counted) keep every shape non-empty.
        pairs = tf.pad(pairs, [[0, 0], [0, 2], [0, 0]])
        num_pairs = tf.shape(pairs)[1]
        nonzero = tf.reduce_any(tf.not_equal(pairs, 0.0), axis=2)
        index = tf.range(1, num_pairs + 1)[None, :]
        count = tf.reduce_max(tf.where(nonzero, tf.broadcast_to(index, tf.shape(nonzero)),
                                       tf.zeros_like(nonzero, tf.int32)), axis=1)  # [B]
        half = count // 2
        top = _left_to_right(pairs, tf.maximum(half, 1))
        bottom_index = tf.minimum(half[:, None] + tf.range(num_pairs)[None, :],
                                  tf.maximum(count - 1, 0)[:, None])
        bottom = _left_to_right(tf.gather(pairs, bottom_index, batch_dims=1),
                                tf.maximum(count - half, 1))
        k = num_control_points // 2
        control_points = tf.concat([divide_curve(top, tf.maximum(half, 1), k),
                                    divide_curve(bottom, tf.maximum(count - half, 1), k)], axis=1)
        valid = tf.cast(half >= 2, tf.float32)
        return control_points, valid
