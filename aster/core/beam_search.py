"""Beam search over any step function, with parent-pointer backtracking (gather_tree semantics).

At every step each of the K live hypotheses per sample is extended by every class; the K best
extensions (by score) survive. Scores are total log-probabilities, or with a length penalty alpha
(GNMT, Wu et al. 2016) log-probability / ((5 + length) / 6) ** alpha. A hypothesis that has emitted
EOS is finished: it extends only with EOS, at zero cost and without growing, so it keeps competing
with its final score. The search stops when every hypothesis is finished (or can never be chosen)
or after max_num_steps. The surviving hypotheses are then read back to front through their parent
pointers, as tf.contrib.seq2seq.gather_tree did, giving labels in time order, EOS after the end.
"""

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


def gather_tree(step_ids, parent_ids):
    """Backtracks parent pointers.

    Args:
      step_ids: [T, B, K] int32, the label chosen at each step for each surviving beam.
      parent_ids: [T, B, K] int32, the beam each surviving beam extended at that step.

    Returns:
      [T, B, K] int32: full label sequences of the beams surviving after the last step.
    """
    num_beams = tf.shape(step_ids)[2]
    final_beams = tf.tile(tf.expand_dims(tf.range(num_beams), 0), [tf.shape(step_ids)[1], 1])

    def backtrack(carry, elems):
        beams, _ = carry
        ids, parents = elems
        return (tf.gather(parents, beams, batch_dims=1), tf.gather(ids, beams, batch_dims=1))

    _, labels = tf.scan(backtrack, (step_ids, parent_ids),
                        initializer=(final_beams, tf.zeros_like(final_beams)), reverse=True)
    return labels


def _gather_beams(tensor, indices, batch_size, beam_width):
    """Reorders [B * K, ...] by per-sample beam indices [B, K]."""
    flat = tf.reshape(indices + tf.expand_dims(tf.range(batch_size) * beam_width, 1), [-1])
    return tf.gather(tensor, flat)


def beam_search(step_fn, initial_state, batch_size, beam_width, max_num_steps, go_label, eos_label,
                length_penalty=0.0):
    """Runs beam search.

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
    k = beam_width
    neg_inf = float("-inf")

    def cond(t, prev, state, log_probs, finished, lengths, ids_ta, parents_ta):
        del prev, state, lengths, ids_ta, parents_ta
        done = tf.logical_or(finished, tf.equal(log_probs, neg_inf))
        return tf.logical_and(t < max_num_steps, tf.logical_not(tf.reduce_all(done)))

    def body(t, prev, state, log_probs, finished, lengths, ids_ta, parents_ta):
        old_state, old_log_probs, old_finished, old_lengths = state, log_probs, finished, lengths
        logits, state = step_fn(prev, state)
        num_classes = tf.shape(logits)[1]
        step_lp = tf.reshape(tf.nn.log_softmax(logits), [batch_size, k, num_classes])
        eos_only = tf.math.log(tf.one_hot(eos_label, num_classes, dtype=step_lp.dtype))
        step_lp = tf.where(tf.broadcast_to(finished[:, :, None], tf.shape(step_lp)),
                           tf.broadcast_to(eos_only, tf.shape(step_lp)), step_lp)
        total = tf.expand_dims(log_probs, 2) + step_lp  # [B, K, C]
        grown = lengths + 1 - tf.cast(finished, tf.int32)  # [B, K]
        scores = total / tf.expand_dims(gnmt_length_penalty(grown, alpha), 2)
        top_scores, index = tf.nn.top_k(tf.reshape(scores, [batch_size, -1]), k=k)
        del top_scores
        parents = index // num_classes
        labels = index % num_classes
        log_probs = tf.gather(tf.reshape(total, [batch_size, -1]), index, batch_dims=1)
        was_finished = tf.gather(finished, parents, batch_dims=1)
        finished = tf.logical_or(was_finished, tf.equal(labels, eos_label))
        lengths = tf.gather(grown, parents, batch_dims=1)
        new_state = tf.nest.map_structure(
            lambda x: _gather_beams(x, parents, batch_size, k), state)
        # Keep the static shapes the loop started with (the gathers lose them).
        tf.nest.map_structure(lambda new, old: new.set_shape(old.shape), new_state, old_state)
        new_prev = tf.reshape(labels, tf.shape(prev))
        new_prev.set_shape(prev.shape)
        for new, old in ((log_probs, old_log_probs), (finished, old_finished),
                         (lengths, old_lengths)):
            new.set_shape(old.shape)
        return (t + 1, new_prev, new_state, log_probs, finished, lengths,
                ids_ta.write(t, labels), parents_ta.write(t, parents))

    # Only the first beam is live at the start: the K copies are identical.
    first = tf.one_hot(0, k, on_value=0.0, off_value=neg_inf)
    loop_vars = (
        tf.constant(0), tf.fill([batch_size * k], go_label), initial_state,
        tf.tile(first[None, :], [batch_size, 1]), tf.zeros([batch_size, k], tf.bool),
        tf.zeros([batch_size, k], tf.int32),
        tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[None, k]),
        tf.TensorArray(tf.int32, size=0, dynamic_size=True, element_shape=[None, k]))
    _, _, _, log_probs, _, lengths, ids_ta, parents_ta = tf.while_loop(
        cond, body, loop_vars, maximum_iterations=max_num_steps, name="beam_search")
    labels = gather_tree(ids_ta.stack(), parents_ta.stack())  # [T, B, K]
    labels = tf.transpose(labels, [1, 2, 0])
    # After a beam's end only EOS (already so for finished beams; this also covers dead beams).
    after_end = tf.logical_not(tf.sequence_mask(lengths, tf.shape(labels)[2]))
    labels = tf.where(after_end, tf.fill(tf.shape(labels), eos_label), labels)
    scores = log_probs / gnmt_length_penalty(lengths, alpha)
    return BeamSearchOutput(labels, log_probs, lengths, scores)
