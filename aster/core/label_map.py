"""Text <-> class labels, in graph mode, UTF-8 correct.

Label layout (label_offset L, character set of N characters):

    0 .. L-1        reserved; the attention decoders use 0 = GO and 1 = EOS (L = 2 in the configs)
    L .. L+N-1      the characters, in character-set order
    L+N             the unknown class, only with unknown_handling "unknown_class"

num_classes = L + N (+ 1 with the unknown class).

Characters outside the set are never silently turned into a valid character's label (the original
ASTER mapped them to label 0 / label_offset). `unknown_handling` decides:

- "drop": they are removed from the text before encoding ("a-b" with a set without "-" encodes
  as "ab"). A label that becomes empty stays empty (length 0).
- "unknown_class": they map to `unk_label`, an extra class the model can learn and predict; it
  decodes to U+FFFD (the Unicode replacement character), which every evaluation protocol's
  character filter removes.

Text is split into Unicode code points with tf.strings.unicode_split (bytes that are not valid
UTF-8 become U+FFFD, hence unknown). Encoding uses a tf.lookup.StaticHashTable, whose initializer
is in tf.GraphKeys.TABLE_INITIALIZERS: run tf.tables_initializer() (MonitoredTrainingSession and
Scaffold do it by default; a SavedModel needs it in its main_op). Decoding is a gather from a
constant and needs no initialisation.
"""

from aster.tf_setup import tf

DROP = "drop"
UNKNOWN_CLASS = "unknown_class"
UNKNOWN_TEXT = "\ufffd"


class LabelMap:
    """Maps UTF-8 strings to int32 label sequences and back."""

    def __init__(self, character_set, label_offset=0, unknown_handling=DROP, unk_label=None):
        """Constructor.

        Args:
          character_set: sequence of distinct single-character str.
          label_offset: int >= 0, label of the first character.
          unknown_handling: DROP or UNKNOWN_CLASS (see module docstring).
          unk_label: label of the unknown class; None or 0 means label_offset + len(character_set),
            the only other accepted value. Ignored with DROP.

        Raises:
          ValueError: an empty or repeating character set, a negative offset, an unknown handling
            mode, or an unk_label other than label_offset + len(character_set).
        """
        chars = list(character_set)
        if not chars:
            raise ValueError("label_map.character_set is empty")
        if len(set(chars)) != len(chars) or any(len(c) != 1 for c in chars):
            raise ValueError(
                "label_map.character_set must hold distinct single characters, got "
                f"{chars[:10]!r}{'...' if len(chars) > 10 else ''}")
        if label_offset < 0:
            raise ValueError(f"label_map.label_offset must be >= 0, got {label_offset}")
        if unknown_handling not in (DROP, UNKNOWN_CLASS):
            raise ValueError(
                f"label_map.unknown_handling: unknown mode {unknown_handling!r}; expected one of "
                f"{[DROP, UNKNOWN_CLASS]}")
        self._chars = chars
        self._label_offset = int(label_offset)
        self._unknown_handling = unknown_handling
        end = self._label_offset + len(chars)
        self._unk_label = None
        if unknown_handling == UNKNOWN_CLASS:
            if unk_label not in (None, 0, end):
                raise ValueError(
                    f"label_map.unk_label is {unk_label}, but the unknown class must follow the "
                    f"characters: set it to {end} (label_offset + {len(chars)} characters) or "
                    "leave it unset")
            self._unk_label = end
        self._num_classes = end + (1 if self._unk_label is not None else 0)
        self._table = None

    @property
    def character_set(self):
        """The characters, in label order (list of str)."""
        return list(self._chars)

    @property
    def label_offset(self):
        return self._label_offset

    @property
    def num_classes(self):
        """label_offset + len(character_set), plus 1 with the unknown class."""
        return self._num_classes

    @property
    def unk_label(self):
        """Label of the unknown class, or None with DROP."""
        return self._unk_label

    @property
    def unknown_handling(self):
        return self._unknown_handling

    def _lookup_table(self):
        # One table per graph: the map may be used from several graphs (tests, export).
        graph = tf.get_default_graph()
        if self._table is None or self._table[0] is not graph:
            with tf.name_scope("LabelMapTable"):
                values = range(self._label_offset, self._label_offset + len(self._chars))
                init = tf.lookup.KeyValueTensorInitializer(
                    tf.constant(self._chars, dtype=tf.string),
                    tf.constant(list(values), dtype=tf.int32))
                table = tf.lookup.StaticHashTable(init, default_value=-1)
            self._table = (graph, table)
        return self._table[1]

    def text_to_labels(self, text, pad_value=0, return_lengths=True):
        """Encodes UTF-8 strings.

        Args:
          text: [B] string tensor.
          pad_value: int label written after each sequence's end.
          return_lengths: also return the lengths.

        Returns:
          labels: [B, T] int32, T = the longest encoded text (0 when all are empty).
          lengths: [B] int32 number of labels per text (characters after dropping unknowns).
        """
        with tf.name_scope("TextToLabels"):
            text = tf.convert_to_tensor(text, dtype=tf.string)
            chars = tf.strings.unicode_split(text, "UTF-8")
            ids = tf.ragged.map_flat_values(self._lookup_table().lookup, chars)
            if self._unk_label is None:
                ids = tf.ragged.boolean_mask(ids, ids >= 0)
            else:
                ids = tf.ragged.map_flat_values(
                    lambda x: tf.where(x >= 0, x, tf.fill(tf.shape(x), self._unk_label)), ids)
            labels = ids.to_tensor(default_value=pad_value)
            lengths = tf.cast(ids.row_lengths(), tf.int32)
        return (labels, lengths) if return_lengths else labels

    def label_lengths(self, labels):
        """Number of labels before the first reserved (< label_offset) or negative label.

        Args:
          labels: [B, T] int32.

        Returns:
          [B] int32.
        """
        # Positions with no reserved label at or before them (a cumsum, not a cumprod of the
        # text positions: the same count, and TFLite has a built-in kernel for it).
        ended = tf.cast(labels < self._label_offset, tf.int32)
        return tf.reduce_sum(tf.cast(tf.equal(tf.cumsum(ended, axis=1), 0), tf.int32), axis=1)

    def labels_to_text(self, labels):
        """Decodes label sequences; each ends at its first reserved label (EOS, GO, padding) or
        negative label. The unknown class decodes to U+FFFD.

        Args:
          labels: [B, T] int integer tensor.

        Returns:
          [B] string tensor (UTF-8).
        """
        with tf.name_scope("LabelsToText"):
            labels = tf.cast(labels, tf.int32)
            table = [""] * self._label_offset + self._chars
            if self._unk_label is not None:
                table.append(UNKNOWN_TEXT)
            keep = tf.sequence_mask(self.label_lengths(labels), tf.shape(labels)[1])
            safe = tf.clip_by_value(labels, 0, self._num_classes - 1)
            chars = tf.gather(tf.constant(table, dtype=tf.string), safe)
            chars = tf.where(keep, chars, tf.fill(tf.shape(chars), ""))
            return tf.strings.reduce_join(chars, axis=1)


def reverse_labels(labels, lengths):
    """Reverses the first `lengths[i]` labels of each row, leaving the padding in place.

    Args:
      labels: [B, T] int32.
      lengths: [B] int32.

    Returns:
      [B, T] int32.
    """
    return tf.reverse_sequence(labels, tf.cast(lengths, tf.int64), seq_axis=1, batch_axis=0)

