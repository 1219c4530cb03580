"""Beam search over any step function (the semantics of tf.contrib.seq2seq's beam search decoder).

At every step each of the K live hypotheses per sample is extended by every class; the K best
extensions (by score) survive. Scores are total log-probabilities, or with a length penalty alpha
(GNMT, Wu et al. 2016) log-probability / ((5 + length) / 6) ** alpha. A hypothesis that has emitted
EOS is finished: it extends only with EOS, at zero cost and without growing, so it keeps competing
with its final score. The search stops when every hypothesis is finished (or can never be chosen)
or after max_num_steps. Each survivor carries its labels so far (reordered with the state), so the
result is read off directly instead of being backtracked through parent pointers afterwards
(what tf.contrib.seq2seq.gather_tree did): labels in time order, EOS after the end."""

import collections

from aster.tf_setup import tf

BeamSearchOutput = collections.namedtuple(
    "BeamSearchOutput", ["labels", "log_probs", "lengths", "scores"])
"""labels: [B, K, T] int32, beams sorted best first, EOS after each end; log_probs: [B, K] total
log-probability (EOS included); lengths: [B, K] int32 labels including EOS; scores: [B, K] the
ranking score (log_probs divided by the length penalty when one is set)."""


def tile_batch(tensor, multiplier):
    """Repeats each batch entry `multiplier` times: [b0, b1] -> [b0, b0, b1, b1].

    Args:
      tensor: [B, ...] tensor.
      multiplier: int.

    Returns:
      [B * multiplier, ...] tensor.
    """
    tensor = tf.convert_to_tensor(tensor)
    tiled = tf.repeat(tensor, multiplier, axis=0)
    if tensor.shape.rank is not None and tensor.shape[0] is not None:
        tiled.set_shape([tensor.shape[0] * multiplier] + tensor.shape.as_list()[1:])
    return tiled


def gnmt_length_penalty(lengths, alpha):
    """GNMT length penalty ((5 + lengths) / 6) ** alpha (1 when alpha is 0).

    Args:
      lengths: int32 tensor.
      alpha: float >= 0.

    Returns:
      float32 tensor of the same shape.
    """
    if alpha == 0:
        return tf.ones_like(lengths, tf.float32)
    return tf.pow((5.0 + tf.cast(lengths, tf.float32)) / 6.0, alpha)


def _num_classes(logits):
    """The static class count of [N, C] logits, else its dynamic one."""
    return logits.shape[1] if logits.shape[1] is not None else tf.shape(logits)[1]


def beam_search(step_fn, initial_state, batch_size, beam_width, max_num_steps, go_label, eos_label,
                length_penalty=0.0):
    """Runs beam search.

    The K hypotheses of a sample are next to each other in every [B * K, ...] tensor. Each step
    reorders the state and the label history of the survivors with one gather by a flat parent
    index (the labels so far are carried along, so no backtracking pass is needed after the loop).

    Args:
      step_fn: fn(prev_labels [B*K] int32, state) -> (logits [B*K, C] float32, new_state); state is
        a nest of tensors whose leading dimension is B*K (tile_batch each sample K times).
      initial_state: the first state, batch B*K.
      batch_size: int32 scalar B.
      beam_width: int K >= 1.
      max_num_steps: int, the most steps (EOS included).
      go_label: int, label fed at the first step.
      eos_label: int, label that finishes a hypothesis.
      length_penalty: float alpha >= 0 of the GNMT length penalty; 0 ranks by log-probability.

    Returns:
      BeamSearchOutput.

    Raises:
      ValueError: beam_width < 1, max_num_steps < 1 or a negative length penalty.
    """
    alpha = float(length_penalty)
    if beam_width < 1:
        raise ValueError(f"beam_width must be >= 1, got {beam_width}")
    if max_num_steps < 1:
        raise ValueError(f"max_num_steps must be >= 1, got {max_num_steps}")
    if alpha < 0:
        raise ValueError(f"length_penalty must be >= 0, got {alpha}")
    # Longer than 60 lines on purpose: the while loop's cond and body are closures over k,
    # neg_inf, alpha and the sample offsets; split out, they would take seven loop variables and
    # four constants each, and the step is easier to check read in one place.
    k = beam_width
    neg_inf = float("-inf")
    # First flat row of each sample's K hypotheses: [B, 1].
    sample_offsets = tf.expand_dims(tf.range(batch_size) * k, 1)

    def cond(t, labels, state, log_probs, finished, lengths, history):
        del labels, state, lengths, history
        done = tf.logical_or(finished, tf.equal(log_probs, neg_inf))
        return tf.logical_and(t < max_num_steps, tf.logical_not(tf.reduce_all(done)))

    def body(t, labels, state, log_probs, finished, lengths, history):
        # labels, log_probs, finished, lengths: [B*K]; history: [B*K, max_num_steps].
        old = (labels, state, log_probs, finished, lengths, history)
        logits, state = step_fn(labels, state)
        num_classes = _num_classes(logits)
        step_lp = tf.nn.log_softmax(logits)
        # one_hot of rank-1 indices ([1, C] here, [1, max_num_steps] below) and broadcasting:
        # tf2onnx converts only rank-1 OneHot indices.
        eos_only = tf.math.log(tf.one_hot([eos_label], num_classes, dtype=step_lp.dtype))
        step_lp = tf.where_v2(tf.expand_dims(finished, 1), eos_only, step_lp)
        total = tf.expand_dims(log_probs, 1) + step_lp  # [B*K, C]
        grown = lengths + 1 - tf.cast(finished, tf.int32)
        scores = total
        if alpha:
            scores = total / tf.expand_dims(gnmt_length_penalty(grown, alpha), 1)
        _, index = tf.nn.top_k(tf.reshape(scores, [batch_size, -1]), k=k)  # [B, K] of K*C
        parents = tf.reshape(index // num_classes + sample_offsets, [-1])
        labels = tf.reshape(index % num_classes, [-1])
        log_probs = tf.gather(tf.reshape(total, [-1]),
                              tf.reshape(index + sample_offsets * num_classes, [-1]))
        finished = tf.logical_or(tf.gather(finished, parents), tf.equal(labels, eos_label))
        lengths = tf.gather(grown, parents)
        state = tf.nest.map_structure(lambda x: tf.gather(x, parents), state)
        history = (tf.gather(history, parents)
                   + tf.expand_dims(labels, 1)
                   * tf.one_hot(tf.fill([1], t), max_num_steps, dtype=tf.int32))
        new = (labels, state, log_probs, finished, lengths, history)
        # Keep the static shapes the loop started with (the gathers lose them).
        tf.nest.map_structure(lambda n, o: n.set_shape(o.shape), new, old)
        return (t + 1,) + new

    n = batch_size * k
    # Only the first beam of a sample is live at the start: the K copies are identical.
    first = tf.one_hot([0], k, on_value=0.0, off_value=neg_inf)  # [1, K]
    loop_vars = (
        tf.constant(0), tf.fill([n], go_label), initial_state,
        tf.reshape(tf.tile(first, [batch_size, 1]), [-1]), tf.zeros([n], tf.bool),
        tf.zeros([n], tf.int32), tf.zeros([n, max_num_steps], tf.int32))
    num_steps, _, _, log_probs, _, lengths, history = tf.while_loop(
        cond, body, loop_vars, name="beam_search")
    labels = tf.reshape(history[:, :num_steps], [batch_size, k, num_steps])
    log_probs = tf.reshape(log_probs, [batch_size, k])
    lengths = tf.reshape(lengths, [batch_size, k])
    # After a beam's end only EOS (already so for finished beams; this also covers dead beams).
    after_end = tf.logical_not(tf.sequence_mask(lengths, num_steps))
    labels = tf.where(after_end, tf.fill(tf.shape(labels), eos_label), labels)
    scores = log_probs / gnmt_length_penalty(lengths, alpha)
    return BeamSearchOutput(labels, log_probs, lengths, scores)
