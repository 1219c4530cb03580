"""Losses: masked sequence cross-entropy (attention decoders) and L2 keypoint regression."""

from aster.tf_setup import tf


class SequenceCrossEntropyLoss:
    """Masked softmax cross-entropy summed over decoding steps.

    Per sequence the loss is the sum of the per-step cross-entropies over its first `length` steps;
    with sequence_normalize it is divided by the length. The per-sequence losses are summed over
    the batch and, with sample_normalize, divided by the batch size. The result is multiplied by
    `weight`. (The original ASTER computed the sequence-normalised value and then discarded it.)
    """

    def __init__(self, sequence_normalize=False, sample_normalize=True, weight=1.0,
                 label_smoothing=0.0):
        """Constructor.

        Args:
          sequence_normalize: bool, divide each sequence's loss by its length.
          sample_normalize: bool, divide the summed loss by the batch size.
          weight: float multiplier.
          label_smoothing: float in [0, 1): targets become (1 - eps) one-hot + eps / num_classes.

        Raises:
          ValueError: label_smoothing outside [0, 1) or a negative weight.
        """
        if not 0.0 <= label_smoothing < 1.0:
            raise ValueError(
                f"sequence_cross_entropy_loss.label_smoothing must be in [0, 1), got "
                f"{label_smoothing}")
        if weight < 0:
            raise ValueError(f"sequence_cross_entropy_loss.weight must be >= 0, got {weight}")
        self._sequence_normalize = sequence_normalize
        self._sample_normalize = sample_normalize
        self._weight = weight
        self._label_smoothing = label_smoothing

    def __call__(self, logits, labels, lengths, scope=None):
        """Computes the loss.

        Args:
          logits: [B, T, C] float32.
          labels: [B, T] int32 targets (values past a sequence's length are ignored).
          lengths: [B] int32 number of valid steps per sequence.
          scope: optional name scope.

        Returns:
          float32 scalar.
        """
        with tf.name_scope(scope, "SequenceCrossEntropyLoss", [logits, labels, lengths]):
            num_classes = tf.shape(logits)[2]
            if self._label_smoothing > 0:
                eps = self._label_smoothing
                targets = tf.one_hot(labels, num_classes, dtype=logits.dtype)
                targets = targets * (1.0 - eps) + eps / tf.cast(num_classes, logits.dtype)
                step_losses = tf.nn.softmax_cross_entropy_with_logits_v2(
                    labels=targets, logits=logits)
            else:
                step_losses = tf.nn.sparse_softmax_cross_entropy_with_logits(
                    labels=labels, logits=logits)
            mask = tf.sequence_mask(lengths, tf.shape(labels)[1], dtype=step_losses.dtype)
            row_losses = tf.reduce_sum(step_losses * mask, axis=1)
            if self._sequence_normalize:
                row_losses = row_losses / tf.cast(tf.maximum(lengths, 1), row_losses.dtype)
            loss = tf.reduce_sum(row_losses)
            if self._sample_normalize:
                batch_size = tf.maximum(tf.shape(labels)[0], 1)
                loss = loss / tf.cast(batch_size, loss.dtype)
            return loss * self._weight


class L2RegressionLoss:
    """Squared L2 distance, summed over coordinates, averaged over the samples that count."""

    def __init__(self, weight=1.0):
        """Constructor.

        Args:
          weight: float multiplier.

        Raises:
          ValueError: a negative weight.
        """
        if weight < 0:
            raise ValueError(f"l2_regression_loss.weight must be >= 0, got {weight}")
        self._weight = weight

    def __call__(self, prediction, target, sample_weights=None, scope=None):
        """Computes the loss.

        Args:
          prediction: [B, ...] float32.
          target: [B, ...] float32, same shape.
          sample_weights: optional [B] float32 (0 excludes a sample, e.g. one without keypoints);
            the mean is over the sum of the weights (at least 1).
          scope: optional name scope.

        Returns:
          float32 scalar.
        """
        with tf.name_scope(scope, "L2RegressionLoss", [prediction, target]):
            diff = tf.reshape(prediction - target, [tf.shape(prediction)[0], -1])
            per_sample = tf.reduce_sum(tf.square(diff), axis=1)
            if sample_weights is None:
                sample_weights = tf.ones_like(per_sample)
            sample_weights = tf.cast(sample_weights, per_sample.dtype)
            total = tf.reduce_sum(per_sample * sample_weights)
            loss = total / tf.maximum(tf.reduce_sum(sample_weights), 1.0)
            return loss * self._weight
