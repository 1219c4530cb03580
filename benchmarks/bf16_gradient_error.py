"""How far bfloat16 training gradients are from float32 ones, part by part of the model.

    .venv/bin/python benchmarks/bf16_gradient_error.py --checkpoint runs/demo_cpu/model.ckpt-5000
        [--pipeline_config_path configs/demo_cpu.config] [--batches 4]
        [--variants bn=FusedBatchNormV3,FusedBatchNormGradV3 ...]

Takes --batches real batches from the config's training reader once, then computes the loss and
the gradient of every trainable variable on each of them, from the same checkpoint, in one float32
session and one session per bfloat16 variant (the trainer's graph and session options:
train_config.mixed_precision on, oneDNN's auto mixed precision). A variant NAME=OP,OP keeps the
named op types in float32 besides aster.core.session_options.FLOAT32_OPS (the pass's lists, set in
the environment before its session is created, as the trainer sets them); `bf16` is the trainer's
own lists.

Reported per variant: the relative gradient error |g_bf16 - g_fp32| / |g_fp32| over all variables
(median over the batches) and per part of the model (over the batches), the loss difference, how
alike the errors of different batches are (the median cosine between them, overall and per part:
near 0 is rounding noise, near 1 a bias that adds up step after step), the error against the
minibatch noise variable by variable (the figure that says whether the rounding matters to the
optimizer), and which op types ran in bfloat16. For scale, the same norm between the
float32 gradients of consecutive batches (minibatch noise): an error far below it adds little to
what stochastic gradient descent already averages away.

Needs a CPU with native bfloat16 (AVX-512 BF16 or AMX); elsewhere the pass is skipped and the
script stops with a message. The checkpoint must match the config (e.g. the one `make train`
writes).
"""

import argparse
import collections
import logging
import os
import statistics
import sys

import common  # benchmarks/common.py (scripts run as python benchmarks/<name>.py)
import numpy as np
import step_profile  # its import holds back TensorFlow's C++ warnings, as here

from aster.utils import cli_logging


def parse_variant(text):
    """'NAME=OP,OP' (or 'NAME=') -> (NAME, [OP, ...])."""
    name, sep, ops = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--variants: expected NAME=OP,OP, got {text!r}")
    return name, [op for op in ops.split(",") if op]


def set_float32_ops(extra_ops):
    """Sets the bfloat16 pass's lists (session_options.FLOAT32_LIST_VARS) to the trainer's float32
    ops plus extra_ops, replacing what the environment or an earlier variant had there."""
    from aster.core import session_options

    ops = ",".join(dict.fromkeys([*session_options.FLOAT32_OPS, *extra_ops]))
    for name in session_options.FLOAT32_LIST_VARS:
        os.environ[name] = ops


def scope_of(name):
    """The part of the model a variable belongs to: the first two levels of its name scope."""
    return step_profile.scope_of(name)[0]


def relative_error(grads, reference):
    """|grads - reference| / |reference|, each a list of arrays (all variables as one vector)."""
    diff = sum(float(((g - r) ** 2).sum()) for g, r in zip(grads, reference, strict=True))
    norm = sum(float((r ** 2).sum()) for r in reference)
    return float(np.sqrt(diff / norm)) if norm else float("nan")


def scope_indices(names):
    """{scope: [index of each variable of that part]} in scope order."""
    indices = collections.defaultdict(list)
    for i, name in enumerate(names):
        indices[scope_of(name)].append(i)
    return dict(sorted(indices.items()))


def errors_by_scope(names, runs, reference_runs):
    """{scope: relative error over all batches} for per-batch gradient lists."""
    return {scope: relative_error([g[i] for g in runs for i in keep],
                                  [r[i] for r in reference_runs for i in keep])
            for scope, keep in scope_indices(names).items()}


def error_cosines(runs, reference_runs):
    """Cosines between the gradient errors of every pair of batches."""
    errors = [np.concatenate([(g - r).ravel() for g, r in zip(grads, reference, strict=True)])
              for grads, reference in zip(runs, reference_runs, strict=True)]
    cosines = []
    for i, a in enumerate(errors):
        for b in errors[i + 1:]:
            denominator = np.linalg.norm(a) * np.linalg.norm(b)
            cosines.append(float(a @ b / denominator) if denominator else 0.0)
    return cosines


def error_to_noise(names, runs, reference_runs):
    """[(ratio, name)] per variable, largest first: the RMS gradient error over the batches
    against the RMS minibatch noise of the float32 gradients (consecutive batches' difference
    over sqrt 2, where the mean gradient cancels). Below ~0.3 the error adds under ~10% to the
    noise variance each step already has (what Adam's second moment sees, per variable)."""
    ratios = []
    for k, name in enumerate(names):
        error = np.mean([((g[k] - r[k]) ** 2).sum()
                         for g, r in zip(runs, reference_runs, strict=True)])
        noise = np.mean([((b[k] - a[k]) ** 2).sum() / 2
                         for a, b in zip(reference_runs[:-1], reference_runs[1:], strict=True)])
        ratios.append((float(np.sqrt(error / noise)) if noise else float("nan"), name))
    return sorted(ratios, reverse=True)


def real_batches(config, count):
    """`count` batches (dicts of arrays) from the config's training readers."""
    from aster.builders import input_reader_builder
    from aster.tf_setup import tf

    graph = tf.Graph()
    with graph.as_default():
        queue = input_reader_builder.build_batch_queue(config.train_input_reader,
                                                       config.train_config, 1)
        batch = queue.dequeue()
        init = [tf.global_variables_initializer(), tf.local_variables_initializer(),
                tf.tables_initializer()]
    with tf.Session(graph=graph) as session:
        session.run(init)
        return [session.run(batch) for _ in range(count)]


class FixedBatches:
    """Stands in for the BatchQueue: dequeue() gives placeholders shaped like `example`."""

    def __init__(self, example):
        self.example = example
        self.images_per_step = len(next(iter(example.values())))
        self.placeholders = {}

    def dequeue(self):
        from aster.tf_setup import tf

        for key, value in self.example.items():
            dtype = tf.string if value.dtype.kind in "SOU" else tf.as_dtype(value.dtype)
            self.placeholders[key] = tf.placeholder(dtype, value.shape, name=f"fixed_{key}")
        return dict(self.placeholders)

    def feed(self, batch):
        return {self.placeholders[key]: batch[key] for key in self.placeholders}


def gradients(config, checkpoint, batches, bfloat16):
    """Loss, gradients and bfloat16 op counts of the trainer's graph on each batch.

    Returns (names, [(loss, [gradient arrays])], Counter of op types that ran in bfloat16).
    """
    from aster import trainer
    from aster.core import conv_gradients
    from aster.tf_setup import tf
    from aster.utils import config_util, train_session

    config = config_util.merge_overrides(
        config, assignments=[common.bfloat16_assignment(bfloat16)])
    deploy = common.deploy_config(1)
    fixed = FixedBatches(batches[0])
    graph = tf.Graph()
    with graph.as_default():
        built = trainer.build_graph(config, os.devnull, deploy,
                                    trainer.Seams(build_batch_queue=lambda *args: fixed))
        variables = tf.trainable_variables()
        # The trainer's gradient code path (few-tap filter gradients as products in bfloat16).
        with conv_gradients.filter_gradients_as_products(
                train_session.cpu_bfloat16(deploy, config.train_config)):
            grads = tf.gradients(built.total_loss, variables)
        # Dense: sparse (gathered) gradients of different batches cover different rows.
        pairs = [(v.op.name, tf.convert_to_tensor(g))
                 for v, g in zip(variables, grads, strict=True) if g is not None]
        saver = tf.train.Saver()
        tables = tf.tables_initializer()
    session = tf.Session(graph=graph,
                         config=train_session.session_config(deploy, config.train_config))
    results, ops = [], collections.Counter()
    with session:
        saver.restore(session, checkpoint)
        session.run(tables)
        for i, batch in enumerate(batches):
            metadata = tf.RunMetadata()
            options = tf.RunOptions(output_partition_graphs=True) if i == 0 else None
            loss, values = session.run([built.total_loss, [g for _, g in pairs]],
                                       fixed.feed(batch), options=options,
                                       run_metadata=metadata)
            if i == 0:
                ops = bfloat16_ops(metadata.partition_graphs)
            results.append((float(loss), [np.asarray(v, np.float64) for v in values]))
    return [name for name, _ in pairs], results, ops


def bfloat16_ops(partition_graphs):
    """Counter of the op types whose T attribute is bfloat16 in the graphs that ran."""
    from aster.tf_setup import tf

    counts = collections.Counter()
    for graph_def in partition_graphs:
        for node in graph_def.node:
            if "T" in node.attr and node.attr["T"].type == tf.bfloat16.as_datatype_enum:
                counts[node.op] += 1
    return counts


def report(names, reference, variants, write=print):
    """Prints the comparison. reference: float32 [(loss, grads)]; variants: {name: (results,
    bfloat16 op Counter)}."""
    reference_grads = [grads for _, grads in reference]
    noise = [relative_error(a, b)
             for a, b in zip(reference_grads[1:], reference_grads[:-1], strict=True)]
    if noise:
        write("minibatch noise (float32, batch i+1 against i): median "
              f"{statistics.median(noise):.3f} ({', '.join(f'{x:.3f}' for x in noise)})")
    for name, (results, ops) in variants.items():
        grads = [g for _, g in results]
        errors = [relative_error(g, r) for g, r in zip(grads, reference_grads, strict=True)]
        losses = [loss - ref for (loss, _), (ref, _) in zip(results, reference, strict=True)]
        write(f"{name}: gradient error median {statistics.median(errors):.4f} "
              f"({', '.join(f'{x:.4f}' for x in errors)}); loss difference "
              f"{', '.join(f'{x:+.4f}' for x in losses)}")
        parts = []
        errors_of_parts = errors_by_scope(names, grads, reference_grads)
        for scope, keep in scope_indices(names).items():
            error = errors_of_parts[scope]
            part_cosines = error_cosines([[g[i] for i in keep] for g in grads],
                                         [[r[i] for i in keep] for r in reference_grads])
            parts.append(f"{scope} {error:.4f}" + (
                f" ({statistics.median(part_cosines):+.2f})" if part_cosines else ""))
        write("  by part (error, median error cosine): " + ", ".join(parts))
        if len(reference_grads) > 1:
            ratios = error_to_noise(names, grads, reference_grads)
            values = [ratio for ratio, _ in ratios]
            write(f"  error / minibatch noise per variable: median {np.median(values):.3f}, "
                  f"90th percentile {np.percentile(values, 90):.3f}, largest "
                  + ", ".join(f"{name} {ratio:.3f}" for ratio, name in ratios[:3]))
        cosines = error_cosines(grads, reference_grads)
        if cosines:
            write(f"  error cosines between batches: median {statistics.median(cosines):+.3f}, "
                  f"range {min(cosines):+.3f} to {max(cosines):+.3f}")
        write(f"  bfloat16 ops ({sum(ops.values())}): "
              + (", ".join(f"{op} {n}" for op, n in ops.most_common()) or "none"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pipeline_config_path", default="configs/demo_cpu.config")
    parser.add_argument("--checkpoint", required=True, help="a checkpoint of that config")
    parser.add_argument("--batches", type=int, default=4,
                        help="real training batches (2 or more for the noise figures)")
    parser.add_argument("--variants", nargs="*", type=parse_variant, default=[],
                        help="NAME=OP,OP: bfloat16 with these op types kept in float32 too")
    args = parser.parse_args(argv)
    if args.batches < 1:
        parser.error("--batches: must be >= 1")

    from aster.core import session_options
    from aster.utils import config_util

    cli_logging.configure(level=logging.WARNING)
    if not session_options.cpu_supports_bfloat16():
        sys.exit("bf16_gradient_error: this CPU has none of "
                 f"{', '.join(session_options.BFLOAT16_CPU_FLAGS)}: the bfloat16 pass would be "
                 "skipped, so there is nothing to compare")
    if not os.path.exists(args.checkpoint + ".index"):
        sys.exit(f"--checkpoint: {args.checkpoint}.index not found")
    description, load = common.machine()
    print(f"machine: {description}, load {load:.1f}")
    config = config_util.load_pipeline_config(args.pipeline_config_path)
    batches = real_batches(config, args.batches)
    names, reference, _ = gradients(config, args.checkpoint, batches, bfloat16=False)
    variants = {}
    for name, extra in [("bf16", []), *args.variants]:
        set_float32_ops(extra)
        _, results, ops = gradients(config, args.checkpoint, batches, bfloat16=True)
        variants[name] = (results, ops)
        print(f"{name}: done", flush=True)
    print(f"{args.pipeline_config_path}, {args.checkpoint}, {args.batches} batches of "
          f"{len(batches[0][next(iter(batches[0]))])}")
    report(names, reference, variants)


if __name__ == "__main__":
    main()
