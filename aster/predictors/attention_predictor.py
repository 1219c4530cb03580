"""Attention predictor: an AttentionDecoder plus label handling, loss and text output.

Training (loss): the UTF-8 transcripts are encoded with the label map, reversed when `reverse`
(right-to-left decoder; characters, not bytes), truncated to max_num_steps - 1 characters, and the
decoder is teacher-forced on [GO, c1, ..., cn] to predict [c1, ..., cn, EOS].

Inference (predict): greedy decoding (beam_width 1) or beam search; the output labels are reversed
back to reading order when `reverse`, decoded to text, and scored by their total log-probability.

All variables live under the variable scope `name` (e.g. "Forward", "Backward"), reused by every
call, so training, decoding and several clones share one set of weights.
"""

from aster.core import label_map as label_map_lib
from aster.tf_setup import tf

GO_LABEL = 0
EOS_LABEL = 1


class AttentionPredictor:
    """Sequence predictor over the encoder's feature sequence."""

    def __init__(self, name, decoder, label_map, loss, max_num_steps, beam_width=1, reverse=False,
                 length_penalty=0.0):
        """Constructor.

        Args:
          name: str, variable scope and key of this predictor.
          decoder: aster.core.attention_decoder.AttentionDecoder with GO 0 and EOS 1 and
            label_map.num_classes classes.
          label_map: aster.core.label_map.LabelMap with label_offset >= 2.
          loss: aster.core.loss.SequenceCrossEntropyLoss (callable(logits, labels, lengths)).
          max_num_steps: int >= 2, decoding steps including EOS.
          beam_width: int >= 1; 1 decodes greedily.
          reverse: bool, decode right to left.
          length_penalty: float >= 0, beam search GNMT alpha.

        Raises:
          ValueError: inconsistent label map / decoder, or out-of-range arguments.
        """
        if label_map.label_offset < 2:
            raise ValueError(
                f"{name}: label_map.label_offset must be >= 2 for an attention predictor (label 0 "
                f"is GO, 1 is EOS), got {label_map.label_offset}")
        if decoder.num_classes != label_map.num_classes:
            raise ValueError(f"{name}: decoder has {decoder.num_classes} classes but the label map "
                             f"has {label_map.num_classes}")
        if max_num_steps < 2:
            raise ValueError(f"{name}: max_num_steps must be >= 2, got {max_num_steps}")
        if beam_width < 1:
            raise ValueError(f"{name}: beam_width must be >= 1, got {beam_width}")
        if length_penalty < 0:
            raise ValueError(f"{name}: length_penalty must be >= 0, got {length_penalty}")
        self._name = name
        self._decoder = decoder
        self._label_map = label_map
        self._loss = loss
        self._max_num_steps = max_num_steps
        self._beam_width = beam_width
        self._reverse = reverse
        self._length_penalty = length_penalty

    @property
    def name(self):
        return self._name

    @property
    def label_map(self):
        return self._label_map

    @property
    def num_classes(self):
        return self._label_map.num_classes

    def _scope(self):
        return tf.variable_scope(self._name, reuse=tf.AUTO_REUSE)

    def encode_groundtruth(self, groundtruth_text):
        """Training targets.

        Args:
          groundtruth_text: [B] string tensor.

        Returns:
          decoder_inputs: [B, max_num_steps] int32, GO then the labels.
          targets: [B, max_num_steps] int32, the labels then EOS (EOS padded).
          target_lengths: [B] int32, characters + 1 (EOS).
        """
        steps = self._max_num_steps
        labels, lengths = self._label_map.text_to_labels(groundtruth_text, pad_value=EOS_LABEL)
        if self._reverse:
            labels = label_map_lib.reverse_labels(labels, lengths)
        labels = labels[:, :steps - 1]
        lengths = tf.minimum(lengths, steps - 1)
        labels = tf.pad(labels, [[0, 0], [0, steps - 1 - tf.shape(labels)[1]]],
                        constant_values=EOS_LABEL)
        batch_size = tf.shape(labels)[0]
        decoder_inputs = tf.concat([tf.fill([batch_size, 1], GO_LABEL), labels], axis=1)
        targets = tf.concat([labels, tf.fill([batch_size, 1], EOS_LABEL)], axis=1)
        decoder_inputs.set_shape([None, steps])
        targets.set_shape([None, steps])
        return decoder_inputs, targets, lengths + 1

    def loss(self, feature_sequence, groundtruth_text):
        """Teacher-forced sequence loss.

        Args:
          feature_sequence: [B, T, D] float32, the encoder output.
          groundtruth_text: [B] string tensor.

        Returns:
          float32 scalar.
        """
        with self._scope():
            with tf.name_scope("Loss"):
                decoder_inputs, targets, lengths = self.encode_groundtruth(groundtruth_text)
            memory = self._decoder.build_memory(feature_sequence)
            # Steps after the batch's longest label (EOS included) are masked out of the loss.
            logits = self._decoder.teacher_forced_logits(
                memory, decoder_inputs, active_steps=tf.reduce_max(lengths))
            return self._loss(logits, targets, lengths)

    def predict(self, feature_sequence):
        """Decodes.

        Args:
          feature_sequence: [B, T, D] float32, the encoder output.

        Returns:
          dict: labels [B, T'] int32 in reading order (EOS after the end), scores [B] float32
          total log-probability, lengths [B] int32 number of characters.
        """
        with self._scope():
            memory = self._decoder.build_memory(feature_sequence)
            if self._beam_width == 1:
                out = self._decoder.greedy_decode(memory, self._max_num_steps)
            else:
                out = self._decoder.beam_search_decode(
                    memory, self._max_num_steps, self._beam_width, self._length_penalty)
            lengths = self._label_map.label_lengths(out.labels)
            labels = out.labels
            if self._reverse:
                labels = label_map_lib.reverse_labels(labels, lengths)
        return {"labels": labels, "scores": out.log_probs, "lengths": lengths}

    def postprocess(self, predictions):
        """Text and scores from predict()'s dict.

        Returns:
          dict: text [B] string (reading order), scores [B] float32.
        """
        with tf.name_scope(f"{self._name}/Postprocess"):
            text = self._label_map.labels_to_text(predictions["labels"])
        return {"text": text, "scores": predictions["scores"]}
