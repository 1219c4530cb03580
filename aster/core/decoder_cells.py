"""The attention decoder's cell pieces: building a cell once, a cheap softmax, the plain-LSTM step.

aster.core.attention_decoder decodes with these; `lstm_step` is LSTMCell.call with the input's
share of the gates precomputed (see LstmWeights), `lstm_update` its element-wise half, which the
static BiLSTM encoder (aster.core.bidirectional_rnn) shares.
"""

import collections

from aster.tf_setup import tf

LstmWeights = collections.namedtuple(
    "LstmWeights", ["label_kernel", "hidden_kernel", "bias", "value_gates"])
"""The attention LSTM's kernel split by the part of its input each row block multiplies, read once
per decode: label_kernel [C, 4H] (one-hot previous label), hidden_kernel [H, 4H] (previous output),
bias [4H]; value_gates: the memory's values times the glimpse rows, [N, T, 4H].

A step then needs no [N, C + D + H] x [C + D + H, 4H] product: the label rows are gathered, the
glimpse rows enter as alignments x value_gates (glimpse . W = sum_t alpha_t (m_t . W)), and only
the H hidden rows are multiplied. Same math; a decoding step no longer streams the whole kernel
(3.5 MB in the paper config) from memory: the paper decoder's batch-1 beam search takes ~35% less
time, greedy decoding at batch 64 ~25% (benchmarks/decoder_step.py). Teacher forcing does not use
the value gates (their [N, T, 4H] gradients cost more than the product saves) but splits the
kernel its own way (split_lstm_step)."""


def call_cell(cell, inputs, state):
    """Runs an RNN cell, building it on first use.

    After building, the cell's `call` is used directly: the legacy layer's __call__ caches a
    variable-scope context bound to the graph of its second call, so a cell used inside one
    tf.while_loop body (a FuncGraph under control flow v2) and then anywhere else would build its
    ops in that body's graph.
    """
    if not cell.built:
        return cell(inputs, state)
    return cell.call(inputs, state)


def build_cell(cell, input_depth, dtype):
    """Creates the variables of an unbuilt cell for inputs of `input_depth`, with the names a
    normal call gives them: a throwaway call, never run, so code that reads the cell's weights
    itself (a split kernel) does not change the checkpoint's names."""
    if not cell.built:
        call_cell(cell, tf.zeros([1, input_depth], dtype), cell.zero_state(1, dtype))


def softmax(logits):
    """Softmax over the last axis from element-wise ops.

    The same math as tf.nn.softmax, but oneDNN's softmax kernel (what TensorFlow runs on CPU) costs
    ~45 microseconds per call even on a [1, 5, 25] tensor, ten times these four ops; the attention
    calls it once per decoding step. The maximum is subtracted for stability only (softmax is
    shift-invariant), so no gradient flows through it.
    """
    exp = tf.exp(logits - tf.stop_gradient(tf.reduce_max(logits, axis=-1, keepdims=True)))
    return exp / tf.reduce_sum(exp, axis=-1, keepdims=True)


def is_plain_lstm(cell):
    """Whether the LSTM fast path covers `cell`: an LSTMCell with a state tuple, no projection and
    no cell clipping (peepholes are covered)."""
    return (type(cell) is tf.nn.rnn_cell.LSTMCell and cell._state_is_tuple
            and cell._num_proj is None and cell._cell_clip is None)


def split_lstm_step(cell):
    """Whether the teacher-forced decoder computes a plain LSTM attention cell's step itself
    (AttentionDecoder._split_lstm_step) rather than through the cell's call.

    The cell's call is MatMul then BiasAdd, which Grappler fuses into one _FusedMatMul; in
    bfloat16 oneDNN runs that fused product with its AVX-512 gemm kernel (`x64:gemm:jit` in
    ONEDNN_VERBOSE) instead of the AMX brgemm of a plain MatMul: on the paper config ~1 ms for a
    [64, 864] x [864, 1024] product, 60 of them per training step. The split step gathers the
    one-hot label rows, multiplies [glimpse, h] by the rest and adds the bias after the sum, so
    nothing is fused and the product runs in the MatMul kernel.
    """
    return is_plain_lstm(cell)


def lstm_step(cell, input_gates, weights, state):
    """LSTMCell.call with the input's share of the gates given (see LstmWeights).

    Args:
      cell: a built LSTMCell for which is_plain_lstm holds (its forget bias, activation and
        peephole weights are used).
      input_gates: [N, 4H], the cell input times the input rows of the kernel.
      weights: LstmWeights.
      state: LSTMStateTuple (c, h).

    Returns:
      (output, new LSTMStateTuple), as the cell's call.
    """
    c_prev, m_prev = state
    gates = tf.nn.bias_add(input_gates + tf.matmul(m_prev, weights.hidden_kernel), weights.bias)
    return lstm_update(cell, gates, c_prev)


def lstm_update(cell, gates, c_prev):
    """The element-wise half of LSTMCell.call: the gates' pre-activations and the previous cell
    state in, (output, new LSTMStateTuple) out.

    Args:
      cell: a built LSTMCell for which is_plain_lstm holds.
      gates: [N, 4H], the input and previous output times the kernel, plus the bias (i, j, f, o).
      c_prev: [N, H], the previous cell state.
    """
    i, j, f, o = tf.split(gates, 4, axis=1)
    sigmoid, activation = tf.sigmoid, cell._activation
    if cell._use_peepholes:
        c = (sigmoid(f + cell._forget_bias + cell._w_f_diag * c_prev) * c_prev
             + sigmoid(i + cell._w_i_diag * c_prev) * activation(j))
        m = sigmoid(o + cell._w_o_diag * c) * activation(c)
    else:
        c = sigmoid(f + cell._forget_bias) * c_prev + sigmoid(i) * activation(j)
        m = sigmoid(o) * activation(c)
    return m, tf.nn.rnn_cell.LSTMStateTuple(c, m)
