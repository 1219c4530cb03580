"""Attentional sequence decoder (ASTER section 3.2), written on tf.compat.v1 without tf.contrib.

One decoding step, for a batch of N hypotheses (N = B, or B * beam_width in beam search):

    sync (the paper):   glimpse_t = attend(h_{t-1});  h_t = cell([onehot(y_{t-1}), glimpse_t])
    non-sync (Luong):   h_t = cell([onehot(y_{t-1}), glimpse_{t-1}]);  glimpse_t = attend(h_t)
    logits_t = FC([h_t, lm outputs]) -> [N, num_classes]

attend(q) is additive (Bahdanau) attention: e_i = v . tanh(W_m m_i + W_q q), alpha = softmax(e),
glimpse = sum_i alpha_i m_i over the encoder sequence m [N, T, D]. Optional language-model cells
run on top of the attention cell; the classifier then sees all their outputs concatenated.

Training feeds the ground truth (teacher forcing); inference decodes greedily or by beam search
(aster.core.beam_search), stopping when every sequence has emitted EOS or after max_num_steps.
"""

import collections

from aster.core import beam_search
from aster.core.decoder_cells import (
    LstmWeights,
    build_cell,
    call_cell,
    is_plain_lstm,
    lstm_step,
    lstm_update,
    softmax,
    split_lstm_step,
)
from aster.tf_setup import tf

# The attention's variable scope: the name of the first memory when a decoder could attend to
# several, kept so that every checkpoint restores.
ATTENTION_SCOPE = "attention_0"

Memory = collections.namedtuple("Memory", ["values", "keys", "lstm", "cell_rows"],
                                defaults=(None,))
"""Encoder memory: values [N, T, D] float32, the encoder sequence; keys its projection [N, T, U];
lstm: LstmWeights while decoding with a plain LSTM attention cell, else None; cell_rows: while
teacher forcing a plain LSTM attention cell (split_lstm_step), its kernel read once and split into
the label rows [C, 4H] and the glimpse-and-output rows [D + H, 4H], and its bias [4H]; else
None."""

DecoderState = collections.namedtuple("DecoderState", ["cell", "lm", "query"])
"""cell: the attention cell's state; lm: tuple of LM cell states; query: [N, H] previous cell
output (sync) or [N, D] previous glimpse (non-sync)."""

DecodeOutput = collections.namedtuple("DecodeOutput", ["labels", "log_probs", "lengths"])
"""labels: [B, T] int32 (EOS after the end); log_probs: [B] float32 total log-probability of the
labels up to and including EOS; lengths: [B] int32 number of labels including EOS."""


class AttentionDecoder:
    """Additive-attention RNN decoder with one-hot previous-label input."""

    def __init__(self, cell, num_classes, num_attention_units, sync=True, lm_cells=(),
                 rnn_regularizer=None, go_label=0, eos_label=1, scope="AttentionDecoder"):
        """Constructor.

        Args:
          cell: tf.nn.rnn_cell.RNNCell, the attention cell (its output is the attention query).
          num_classes: int, classes including GO and EOS.
          num_attention_units: int, width of the additive attention's hidden layer.
          sync: bool, attention from the previous state (True, the paper) or from the current
            output (False).
          lm_cells: sequence of RNNCells stacked on the attention cell's output.
          rnn_regularizer: optional fn(tensor) -> scalar applied once to every cell kernel; the
            result goes to tf.GraphKeys.REGULARIZATION_LOSSES.
          go_label: int, label fed at the first step.
          eos_label: int, label that ends a sequence.
          scope: variable scope name of the decoder's own variables.

        Raises:
          ValueError: num_classes or num_attention_units not positive, or GO/EOS out of range.
        """
        if num_classes <= max(go_label, eos_label):
            raise ValueError(
                f"num_classes ({num_classes}) must exceed the GO ({go_label}) and EOS "
                f"({eos_label}) labels")
        if num_attention_units <= 0:
            raise ValueError(f"num_attention_units must be > 0, got {num_attention_units}")
        self._cell = cell
        self._lm_cells = tuple(lm_cells)
        self._num_classes = num_classes
        self._num_units = num_attention_units
        self._sync = sync
        self._regularizer = rnn_regularizer
        self._regularized = set()
        self.go_label = go_label
        self.eos_label = eos_label
        self._scope = scope

    @property
    def num_classes(self):
        return self._num_classes

    def _var_scope(self):
        return tf.variable_scope(self._scope, reuse=tf.AUTO_REUSE)

    # ------------------------------------------------------------------ building blocks

    def build_memory(self, feature_sequence):
        """Projects the encoder output once (the attention keys).

        Args:
          feature_sequence: [B, T, D] float32 with a static D.

        Returns:
          Memory.

        Raises:
          ValueError: D is not static.
        """
        depth = feature_sequence.shape[-1]
        if depth is None:
            raise ValueError(f"the feature sequence needs a static depth, got "
                             f"{feature_sequence.shape}")
        with self._var_scope():
            w = tf.get_variable(f"{ATTENTION_SCOPE}/memory_kernel", [depth, self._num_units])
            keys = tf.tensordot(feature_sequence, w, axes=[[2], [0]])
        return Memory(feature_sequence, keys, None)

    def _decoding_memory(self, memory):
        """`memory` with LstmWeights for a plain LSTM attention cell (built once per decode,
        outside the decoding loop); unchanged for other cells."""
        if memory.lstm is not None or not is_plain_lstm(self._cell):
            return memory
        with self._var_scope():
            return memory._replace(lstm=self._lstm_weights(memory.values))

    def _lstm_weights(self, values):
        """LstmWeights of the attention cell for memory `values` [N, T, D] (builds the cell if
        needed)."""
        depth = int(values.shape[-1])
        build_cell(self._cell, self._num_classes + depth, values.dtype)
        kernel = tf.convert_to_tensor(self._cell._kernel)
        label_rows, value_rows, hidden_rows = tf.split(
            kernel, [self._num_classes, depth, self._cell.output_size], axis=0)
        value_gates = tf.tensordot(values, value_rows, axes=[[2], [0]])
        return LstmWeights(label_rows, hidden_rows, tf.convert_to_tensor(self._cell._bias),
                           value_gates)

    def _attend(self, query, memory, beam_width=1):
        """Glimpse for each query, or for a plain LSTM cell its share of the cell's gates.

        Args:
          query: [B * beam_width, Q], the hypotheses of each sample next to each other.
          memory: Memory of batch B (shared by the beam_width hypotheses of a sample, so beam
            search never copies it).
          beam_width: int, hypotheses per sample.

        Returns:
          [B * beam_width, D] float32, the glimpse; with memory.lstm set [B * beam_width, 4H],
          the glimpse times the cell kernel's glimpse rows.
        """
        source = memory.values if memory.lstm is None else memory.lstm.value_gates
        w_q = tf.get_variable(f"{ATTENTION_SCOPE}/query_kernel",
                              [query.shape[-1], self._num_units])
        v = tf.get_variable(f"{ATTENTION_SCOPE}/attention_v", [self._num_units])
        processed = tf.reshape(tf.matmul(query, w_q), [-1, beam_width, 1, self._num_units])
        # [B, K, T, U]; v . tanh(...) and sum_t alpha_t m_t as matrix products (one pass over the
        # large tensors instead of an element-wise product and a reduction).
        hidden = tf.tanh(tf.expand_dims(memory.keys, 1) + processed)
        energy = tf.squeeze(tf.tensordot(hidden, tf.expand_dims(v, 1), axes=[[3], [0]]), 3)
        alignments = softmax(energy)  # [B, K, T]
        glimpse = tf.matmul(alignments, source)  # [B, K, D] (or 4H)
        return tf.reshape(glimpse, [-1, source.shape[-1]])

    def initial_state(self, memory):
        """Zero state for the batch of `memory`.

        Args:
          memory: Memory with values [N, T, D].

        Returns:
          DecoderState.
        """
        n = tf.shape(memory.values)[0]
        dtype = memory.values.dtype
        cell_state = self._cell.zero_state(n, dtype)
        lm_states = tuple(c.zero_state(n, dtype) for c in self._lm_cells)
        if self._sync:
            query = tf.zeros([n, self._cell.output_size], dtype)
        elif memory.lstm is None:
            query = tf.zeros([n, int(memory.values.shape[-1])], dtype)
        else:  # the previous glimpse's share of the gates (see _attend)
            query = tf.zeros([n, 4 * self._cell.output_size], dtype)
        return DecoderState(cell_state, lm_states, query)

    def step(self, prev_labels, state, memory, beam_width=1):
        """One decoding step.

        Args:
          prev_labels: [N] int32, the previous label (GO at the first step).
          state: DecoderState.
          memory: Memory of batch N / beam_width.
          beam_width: int, hypotheses per sample (N = batch * beam_width, a sample's next to
            each other).

        Returns:
          logits: [N, num_classes] float32.
          new_state: DecoderState.
        """
        with self._var_scope():
            glimpse = (self._attend(state.query, memory, beam_width) if self._sync
                       else state.query)
            if memory.cell_rows is not None:
                output, cell_state = self._split_lstm_step(prev_labels, glimpse, state.cell,
                                                           memory.cell_rows)
            elif memory.lstm is None:
                one_hot = tf.one_hot(prev_labels, self._num_classes, dtype=memory.values.dtype)
                output, cell_state = call_cell(self._cell, tf.concat([one_hot, glimpse], axis=1),
                                                state.cell)
            else:  # one_hot(label) . W = W[label]
                input_gates = tf.gather(memory.lstm.label_kernel, prev_labels) + glimpse
                output, cell_state = lstm_step(self._cell, input_gates, memory.lstm, state.cell)
            query = output if self._sync else self._attend(output, memory, beam_width)
            outputs, lm_states, lm_input = [output], [], output
            for i, (lm_cell, lm_state) in enumerate(zip(self._lm_cells, state.lm, strict=True)):
                with tf.variable_scope(f"lm_{i}"):
                    lm_input, new_lm_state = call_cell(lm_cell, lm_input, lm_state)
                outputs.append(lm_input)
                lm_states.append(new_lm_state)
            features = tf.concat(outputs, axis=1) if len(outputs) > 1 else output
            w = tf.get_variable("output/kernel", [features.shape[-1], self._num_classes])
            b = tf.get_variable("output/bias", [self._num_classes],
                                initializer=tf.zeros_initializer())
            logits = tf.nn.bias_add(tf.matmul(features, w), b)
        return logits, DecoderState(cell_state, tuple(lm_states), query)

    def _teacher_forcing_memory(self, memory):
        """`memory` with cell_rows for a plain LSTM attention cell (split_lstm_step), read once per
        unroll, so that the steps share one read of the kernel and its gradient is one sum."""
        if memory.lstm is not None or not split_lstm_step(self._cell):
            return memory
        depth = int(memory.values.shape[-1])
        with self._var_scope():
            build_cell(self._cell, self._num_classes + depth, memory.values.dtype)
            rows = tf.split(tf.convert_to_tensor(self._cell._kernel), [self._num_classes, -1],
                            axis=0)
            bias = tf.convert_to_tensor(self._cell._bias)
        return memory._replace(cell_rows=(*rows, bias))

    def _split_lstm_step(self, prev_labels, glimpse, state, cell_rows):
        """LSTMCell.call on [one_hot(prev_labels), glimpse] with the kernel's rows given: the
        one-hot product as a gather of the label rows (one_hot(y) . W = W[y]) and the bias added
        after the glimpse-and-output product, so that this product stays a plain MatMul (see
        split_lstm_step). Same variables and math as the cell's own call."""
        label_rows, rest_rows, bias = cell_rows
        gates = tf.gather(label_rows, prev_labels) + tf.matmul(
            tf.concat([glimpse, state.h], axis=1), rest_rows)
        return lstm_update(self._cell, tf.nn.bias_add(gates, bias), state.c)

    def _add_regularization(self):
        """Adds the regularizer of every cell kernel to REGULARIZATION_LOSSES, once per graph."""
        graph = tf.get_default_graph()
        if self._regularizer is None or graph in self._regularized:
            return
        self._regularized.add(graph)
        for cell in (self._cell,) + self._lm_cells:
            for var in cell.trainable_weights:
                if "kernel" in var.op.name:
                    reg = self._regularizer(var)
                    if reg is not None:
                        tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, reg)

    # ------------------------------------------------------------------ training and inference

    def teacher_forced_logits(self, memory, decoder_inputs, active_steps=None):
        """Unrolls the decoder over ground-truth inputs (static unroll).

        Args:
          memory: Memory from build_memory.
          decoder_inputs: [B, T] int32 with a static T: GO followed by the target labels.
          active_steps: optional int32 scalar tensor: only steps t < active_steps are computed
            (the first always is); the others give zero logits and leave the state as it is. A
            loss masked beyond each label's end (EOS included) is the same, and so are its
            gradients, when active_steps is the batch's longest target: training words average
            about 8 characters while the decoder unrolls max_num_steps.

        Returns:
          [B, T, num_classes] float32 logits; step t predicts the label after decoder_inputs[:, t].
        """
        num_steps = decoder_inputs.shape[1]
        if num_steps is None:
            raise ValueError("decoder_inputs needs a static number of steps")
        memory = self._teacher_forcing_memory(memory)
        state = self.initial_state(memory)
        logits = []
        for t in range(num_steps):
            if t == 0 or active_steps is None:  # the first step creates the variables
                step_logits, state = self.step(decoder_inputs[:, t], state, memory)
            else:
                step_logits, state = self._step_if_active(
                    t < active_steps, decoder_inputs[:, t], state, memory, logits[0])
            logits.append(step_logits)
        self._add_regularization()
        return tf.stack(logits, axis=1)

    def _step_if_active(self, active, prev_labels, state, memory, logits_like):
        """step() when `active` (a bool scalar tensor), else zero logits and `state` unchanged."""
        def run():
            return self.step(prev_labels, state, memory)

        def skip():
            return tf.zeros_like(logits_like), tf.nest.map_structure(tf.identity, state)

        return tf.cond(active, run, skip)

    def greedy_decode(self, memory, max_num_steps):
        """Greedy (best-label-per-step) decoding; stops when all sequences have emitted EOS.

        Args:
          memory: Memory from build_memory.
          max_num_steps: int, the most steps (EOS included).

        Returns:
          DecodeOutput with labels [B, T<=max_num_steps].
        """
        batch_size = tf.shape(memory.values)[0]
        memory = self._decoding_memory(memory)

        def cond(t, prev, state, finished, log_probs, lengths, history):
            del prev, state, log_probs, lengths, history
            return tf.logical_and(t < max_num_steps, tf.logical_not(tf.reduce_all(finished)))

        def body(t, prev, state, finished, log_probs, lengths, history):
            logits, state = self.step(prev, state, memory)
            step_log_probs = tf.nn.log_softmax(logits)
            labels = tf.argmax(logits, axis=1, output_type=tf.int32)
            labels = tf.where(finished, tf.fill([batch_size], self.eos_label), labels)
            chosen = tf.gather(step_log_probs, labels, batch_dims=1)
            log_probs += tf.where(finished, tf.zeros_like(chosen), chosen)
            lengths += 1 - tf.cast(finished, tf.int32)
            finished = tf.logical_or(finished, tf.equal(labels, self.eos_label))
            # The labels so far as one [B, max_num_steps] tensor (column t set here), not a
            # TensorArray: its dynamic element shape has no TFLite built-in lowering.
            column = tf.one_hot(tf.fill([1], t), max_num_steps, dtype=tf.int32)  # [1, T]
            history += tf.expand_dims(labels, 1) * column
            return t + 1, labels, state, finished, log_probs, lengths, history

        loop_vars = (
            tf.constant(0), tf.fill([batch_size], self.go_label), self.initial_state(memory),
            tf.zeros([batch_size], tf.bool), tf.zeros([batch_size], tf.float32),
            tf.zeros([batch_size], tf.int32), tf.zeros([batch_size, max_num_steps], tf.int32))
        num_steps, _, _, _, log_probs, lengths, history = tf.while_loop(
            cond, body, loop_vars, maximum_iterations=max_num_steps, name="greedy_decode")
        self._add_regularization()
        return DecodeOutput(history[:, :num_steps], log_probs, lengths)

    def beam_search_decode(self, memory, max_num_steps, beam_width, length_penalty=0.0):
        """Beam search decoding (aster.core.beam_search.beam_search on this decoder's step).

        Args:
          memory: Memory from build_memory (batch B).
          max_num_steps: int, the most steps (EOS included).
          beam_width: int >= 1.
          length_penalty: float alpha >= 0 of the GNMT penalty ((5 + len) / 6) ** alpha.

        Returns:
          DecodeOutput of the top beam per sample, its true total log-probability as log_probs.
        """
        batch_size = tf.shape(memory.values)[0]
        memory = self._decoding_memory(memory)
        initial_state = tf.nest.map_structure(lambda x: beam_search.tile_batch(x, beam_width),
                                              self.initial_state(memory))
        result = beam_search.beam_search(
            lambda prev, state: self.step(prev, state, memory, beam_width),
            initial_state, batch_size, beam_width, max_num_steps,
            go_label=self.go_label, eos_label=self.eos_label, length_penalty=length_penalty)
        self._add_regularization()
        return DecodeOutput(result.labels[:, 0], result.log_probs[:, 0], result.lengths[:, 0])
