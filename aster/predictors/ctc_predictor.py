"""CTC predictor (CRNN): per-frame classification trained with connectionist temporal
classification.

A fully connected layer maps each frame of the encoder sequence [B, T, D] to num_classes + 1
logits; the last class is the CTC blank. Training uses tf.nn.ctc_loss (mean over the batch of the
per-sample negative log-likelihood, times loss_weight). Inference uses tf.nn.ctc_greedy_decoder
(beam_width 1, best path) or tf.nn.ctc_beam_search_decoder; the score is the log-probability of
the best path (greedy) or of the best labelling found by the beam (beam search).
"""

from aster.tf_setup import slim, tf


class CtcPredictor:
    """CTC head over the encoder's feature sequence."""

    def __init__(self, name, label_map, fc_hyperparams=None, beam_width=1, loss_weight=1.0):
        """Constructor.

        Args:
          name: str, variable scope and key of this predictor.
          label_map: aster.core.label_map.LabelMap (any label_offset; reserved labels are simply
            never targets).
          fc_hyperparams: optional slim arg_scope for slim.fully_connected (the output layer is
            always linear, without normalization).
          beam_width: int >= 1; 1 decodes greedily.
          loss_weight: float >= 0.

        Raises:
          ValueError: beam_width < 1 or a negative loss_weight.
        """
        if beam_width < 1:
            raise ValueError(f"{name}: beam_width must be >= 1, got {beam_width}")
        if loss_weight < 0:
            raise ValueError(f"{name}: loss_weight must be >= 0, got {loss_weight}")
        self._name = name
        self._label_map = label_map
        self._fc_hyperparams = fc_hyperparams
        self._beam_width = beam_width
        self._loss_weight = loss_weight

    @property
    def name(self):
        return self._name

    @property
    def label_map(self):
        return self._label_map

    @property
    def num_classes(self):
        """Classes including the blank."""
        return self._label_map.num_classes + 1

    def _logits(self, feature_sequence):
        """Returns time-major logits [T, B, C+1] of a [B, T, D] sequence and its lengths [B]."""
        with tf.variable_scope(self._name, reuse=tf.AUTO_REUSE):
            scope = self._fc_hyperparams or {}
            with slim.arg_scope(scope):
                logits = slim.fully_connected(feature_sequence, self.num_classes,
                                              activation_fn=None, normalizer_fn=None,
                                              scope="logits")
        shape = tf.shape(logits)
        lengths = tf.fill([shape[0]], shape[1])
        return tf.transpose(logits, [1, 0, 2]), lengths

    def loss(self, feature_sequence, groundtruth_text):
        """CTC loss.

        Args:
          feature_sequence: [B, T, D] float32, the encoder output.
          groundtruth_text: [B] string tensor.

        Returns:
          float32 scalar: the mean over the batch. A sample no alignment fits contributes 0
          (and no gradient): more labels than frames, or fewer frames than its labels and the
          blanks its repeated letters need ("book" needs 5): a 25-character text on 25 frames.
        """
        logits, seq_lengths = self._logits(feature_sequence)
        with tf.name_scope(f"{self._name}/Loss"):
            labels, lengths = self._label_map.text_to_labels(groundtruth_text)
            mask = tf.sequence_mask(lengths, tf.shape(labels)[1])
            # A path needs a frame per label and a blank between two equal labels in a row.
            repeats = tf.reduce_sum(tf.cast(
                tf.logical_and(tf.equal(labels[:, 1:], labels[:, :-1]), mask[:, 1:]), tf.int32),
                axis=1)
            fits = lengths + repeats <= seq_lengths
            # A sample no path fits keeps only its first label (which fits: no infinite loss, no
            # "No valid path found" from the kernel; the kernel refuses an empty one), and its
            # loss is then dropped.
            first = tf.equal(tf.range(tf.shape(labels)[1]), 0)[tf.newaxis, :]
            indices = tf.where(tf.logical_and(mask, tf.logical_or(fits[:, tf.newaxis], first)))
            sparse = tf.SparseTensor(indices, tf.gather_nd(labels, indices),
                                     tf.cast(tf.shape(labels), tf.int64))
            losses = tf.nn.ctc_loss(sparse, logits, seq_lengths, time_major=True,
                                    ignore_longer_outputs_than_inputs=True)
            losses = tf.where(fits, losses, tf.zeros_like(losses))
            return tf.reduce_mean(losses) * self._loss_weight

    def predict(self, feature_sequence):
        """Decodes.

        Args:
          feature_sequence: [B, T, D] float32, the encoder output.

        Returns:
          dict: labels [B, T'] int32 (-1 after the end), scores [B] float32 log-probability,
          lengths [B] int32.
        """
        logits, seq_lengths = self._logits(feature_sequence)
        with tf.name_scope(f"{self._name}/Decode"):
            log_probs = tf.nn.log_softmax(logits)
            if self._beam_width == 1:
                decoded, neg_sum = tf.nn.ctc_greedy_decoder(log_probs, seq_lengths)
                scores = -neg_sum[:, 0]
            else:
                # merge_repeated=False: the beam already collapses repeats between blanks; the
                # v1 default (True) would also merge a real double letter ("hello" -> "helo").
                decoded, path_log_probs = tf.nn.ctc_beam_search_decoder(
                    log_probs, seq_lengths, beam_width=self._beam_width, top_paths=1,
                    merge_repeated=False)
                scores = path_log_probs[:, 0]
            labels = tf.cast(tf.sparse.to_dense(decoded[0], default_value=-1), tf.int32)
            lengths = self._label_map.label_lengths(labels)
        return {"labels": labels, "scores": scores, "lengths": lengths}

    def postprocess(self, predictions):
        """Text and scores from predict()'s dict."""
        with tf.name_scope(f"{self._name}/Postprocess"):
            text = self._label_map.labels_to_text(predictions["labels"])
        return {"text": text, "scores": predictions["scores"]}
