"""One bidirectional recurrent layer over a feature sequence, with an optional FC projection.

    inputs [B, T, D] -> forward and backward cells (separate weights) -> concat [B, T, 2 * units]
      -> [optional FC num_output_units under fc_hyperparams] -> [B, T, D']

static=True unrolls over the static T with tf.nn.static_bidirectional_rnn (the original's
default); for two plain LSTMCells the same unroll is written here with each cell's input share of
the gates computed for all steps in one product (same variables and math; float32 training of the
paper config 5-9% faster, benchmarks/RESULTS.md). static=False uses tf.nn.bidirectional_dynamic_rnn
(a while loop, any T).
"""

from aster.core.decoder_cells import build_cell, is_plain_lstm, lstm_update
from aster.tf_setup import slim, tf


class BidirectionalRnn:
    """A bidirectional RNN layer; tensors in, tensors out."""

    def __init__(
        self,
        fw_cell,
        bw_cell,
        static=True,
        rnn_regularizer=None,
        num_output_units=0,
        fc_hyperparams=None,
        summarize_activations=False,
    ):
        """Args:
        fw_cell, bw_cell: tf.nn.rnn_cell.RNNCell objects (distinct, so weights are separate).
        static: unroll statically (True) or use a dynamic while loop (False).
        rnn_regularizer: function weights -> scalar loss applied to every kernel variable of both
          cells when they are created (added to tf.GraphKeys.REGULARIZATION_LOSSES), or None.
        num_output_units: when > 0, a fully connected projection to this many units follows.
        fc_hyperparams: slim arg_scope dict for fully_connected; required when num_output_units > 0.
        summarize_activations: add a histogram summary of the output.

        Raises:
          ValueError: num_output_units is negative, or positive without fc_hyperparams, or the two
            cells are the same object.
        """
        if fw_cell is bw_cell:
            raise ValueError("fw_cell and bw_cell must be distinct cells (separate weights)")
        if num_output_units < 0:
            raise ValueError(f"num_output_units: must be >= 0, got {num_output_units}")
        if num_output_units > 0 and fc_hyperparams is None:
            raise ValueError(
                f"fc_hyperparams: required (op: FC) when num_output_units > 0 "
                f"(num_output_units = {num_output_units})"
            )
        self._fw_cell = fw_cell
        self._bw_cell = bw_cell
        self._static = static
        self._rnn_regularizer = rnn_regularizer
        self._num_output_units = num_output_units
        self._fc_hyperparams = fc_hyperparams
        self._summarize_activations = summarize_activations

    @property
    def output_size(self):
        """Units per time step of the output."""
        if self._num_output_units > 0:
            return self._num_output_units
        return self._fw_cell.output_size + self._bw_cell.output_size

    def apply(self, inputs, scope=None):
        """Runs the layer.

        Args:
          inputs: [B, T, D] float32; T must be static when static=True.
          scope: variable scope name, default "BidirectionalRnn".

        Returns:
          [B, T, output_size] float32.

        Raises:
          ValueError: static=True and T is not known when the graph is built.
        """
        with tf.variable_scope(scope, "BidirectionalRnn", [inputs]):
            existing = set(tf.global_variables())
            outputs = self._run_cells(inputs)
            self._regularize([v for v in tf.trainable_variables() if v not in existing])
            if self._num_output_units > 0:
                outputs = self._project(outputs)
            if self._summarize_activations:
                tf.summary.histogram("outputs", outputs)
        return outputs

    def _run_cells(self, inputs):
        if self._static:
            steps = inputs.shape[1]
            if steps is None:
                raise ValueError(
                    f"static BidirectionalRnn needs a static sequence length, got shape "
                    f"{inputs.shape}; set static: false for variable lengths"
                )
            if is_plain_lstm(self._fw_cell) and is_plain_lstm(self._bw_cell):
                return _static_bidirectional_lstm(self._fw_cell, self._bw_cell, inputs)
            outputs, _, _ = tf.nn.static_bidirectional_rnn(
                self._fw_cell, self._bw_cell, tf.unstack(inputs, axis=1), dtype=inputs.dtype
            )
            return tf.stack(outputs, axis=1)
        (fw_out, bw_out), _ = tf.nn.bidirectional_dynamic_rnn(
            self._fw_cell, self._bw_cell, inputs, dtype=inputs.dtype
        )
        return tf.concat([fw_out, bw_out], axis=2)

    def _regularize(self, new_variables):
        """Adds the regularizer on newly created kernels (reused variables are already counted)."""
        if self._rnn_regularizer is None:
            return
        for variable in new_variables:
            if "kernel" in variable.op.name.split("/")[-1]:
                loss = self._rnn_regularizer(variable)
                if loss is not None:
                    tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, loss)

    def _project(self, outputs):
        """FC on every step; done on [B * T, D] so batch norm sees a rank-2 input."""
        shape = tf.shape(outputs)
        flat = tf.reshape(outputs, [-1, outputs.shape[-1]])
        with slim.arg_scope(self._fc_hyperparams):
            projected = slim.fully_connected(flat, self._num_output_units, scope="Projection")
        projected = tf.reshape(projected, tf.stack([shape[0], shape[1], self._num_output_units]))
        static = outputs.shape.as_list()[:2] + [self._num_output_units]
        projected.set_shape(static)
        return projected


def _static_bidirectional_lstm(fw_cell, bw_cell, inputs):
    """tf.nn.static_bidirectional_rnn for two plain LSTMCells (is_plain_lstm), with each cell's
    input share of the gates computed for all steps at once.

    The cells' variables get the names static_bidirectional_rnn gives them
    (bidirectional_rnn/{fw,bw}/lstm_cell/{kernel,bias}), so checkpoints load either way. The math
    is LSTMCell's (gates = [x_t, h_{t-1}] . kernel + bias), split as x_t . W_x + h_{t-1} . W_h:
    one [B * T, D] x [D, 4H] product per direction instead of one per step, and one for its
    gradient, so each step is left with the [B, H] x [H, 4H] recurrence.

    Args:
      fw_cell, bw_cell: LSTMCells (built or not).
      inputs: [B, T, D] with static T and D.

    Returns:
      [B, T, fw units + bw units], the forward and backward outputs in input order.
    """
    outputs = []
    with tf.variable_scope("bidirectional_rnn"):
        for name, cell in (("fw", fw_cell), ("bw", bw_cell)):
            with tf.variable_scope(name):
                steps = _lstm_sequence(cell, inputs, reverse=name == "bw")
            outputs.append(tf.stack(steps, axis=1))
    return tf.concat(outputs, axis=2)


def _lstm_sequence(cell, inputs, reverse):
    """The outputs [B, H] of `cell` at each step of inputs [B, T, D], in input order; the cell
    runs from the last step to the first when `reverse`."""
    depth = int(inputs.shape[-1])
    build_cell(cell, depth, inputs.dtype)
    input_kernel, hidden_kernel = tf.split(tf.convert_to_tensor(cell._kernel),
                                           [depth, cell.output_size], axis=0)
    gates = tf.unstack(_input_gates(inputs, input_kernel, tf.convert_to_tensor(cell._bias)), axis=1)
    c = tf.zeros_like(gates[0][:, :cell.output_size])
    outputs, h = [], None
    for step_input in (reversed(gates) if reverse else gates):
        # The zero initial output adds nothing to the first step's gates.
        step_gates = step_input if h is None else step_input + tf.matmul(h, hidden_kernel)
        h, (c, _) = lstm_update(cell, step_gates, c)
        outputs.append(h)
    return outputs[::-1] if reverse else outputs


def _input_gates(inputs, input_kernel, bias):
    """inputs [B, T, D] . input_kernel [D, 4H] + bias for all steps: [B, T, 4H].

    The bias is added after the reshape back to [B, T, 4H], so that Grappler does not fuse it
    with the product: in bfloat16 oneDNN runs a fused MatMul + BiasAdd with its AVX-512 gemm
    kernel rather than the AMX brgemm of a plain MatMul (see decoder_cells.split_lstm_step).
    """
    flat = tf.reshape(inputs, [-1, int(inputs.shape[-1])])
    products = tf.reshape(tf.matmul(flat, input_kernel), [-1, inputs.shape[1], bias.shape[0]])
    return tf.nn.bias_add(products, bias)
