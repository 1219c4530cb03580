"""Widens a trained model's ResNet blocks without changing what it computes (Net2WiderNet).

    python -m aster.tools.widen_model --checkpoint_path runs/base_cpu_stage8/model \\
        --pipeline_config_path configs/base_cpu_stage9.config --output_dir runs/stage9_start

The pipeline config states the wider model (feature_extractor.convnet.resnet.block_depths, each
block at least as wide as the checkpoint's; everything else as the checkpoint's model); the
command writes OUTPUT_DIR/model.ckpt-<step>, the checkpoint's model variables at the new widths,
for that config's train_config.fine_tune_checkpoint. A stage can so grow the encoder of a model
it goes on from, instead of training the wider model from scratch.

How (Chen, Goodfellow and Shlens, "Net2Net", 2016): every new channel of a block copies an old
channel chosen at random (its conv weights and batch-norm statistics), so its output equals that
channel's, in training (batch statistics) as in inference. Every layer that reads the block's
output (the block's later units, the next block's first unit, the encoder's first bidirectional
RNN for the last block) splits each old channel's input weights among that channel's copies:
random positive shares that sum to one, element by element. The sums the readers compute are
the old ones, and the copies, whose outgoing weights differ, get different gradients and grow
apart in training (equal shares would keep them equal forever).

Channel groups (a group's channels are widened together; see aster/convnets/resnet.py):
  - the stem's output (Conv0; block_depths[0]), read by Block1/Unit1's Conv1 and Shortcut;
  - block i's residual stream, written by Unit1's Conv2 and Shortcut and by every later unit's
    Conv2 (the identity shortcuts add it to itself), read by the later units' Conv1 and by the
    next block's Unit1 (Conv1, Shortcut) or, after the last block, by the BiLSTM's kernels;
  - each unit's inner channels, written by its Conv1, read by its Conv2.
"""

import argparse
import os
import re
import sys

import numpy as np

from aster.tools import package_model
from aster.utils import checkpoints, cli, cli_logging, config_util

RESNET = "FeatureExtractor/ResNet"
RNN = "FeatureExtractor/BidirectionalRnn0"
# The batch norm's per-channel variables (scale only where the conv scope has scale: true).
CHANNEL_VECTORS = ("BatchNorm/beta", "BatchNorm/gamma", "BatchNorm/moving_mean",
                   "BatchNorm/moving_variance", "biases")
_UNIT = re.compile(rf"^{RESNET}/Block(\d)/Unit(\d+)/")


class WidenError(ValueError):
    """The checkpoint and the config do not describe the same model at two widths."""


def _layers(values):
    """{layer scope: its weights' name} of the ResNet's convs in `values`."""
    return {name[: -len("/weights")]: name for name in values
            if name.startswith(RESNET + "/") and name.endswith("/weights")}


def _units(layers):
    """{block number: number of residual units} in the checkpoint."""
    units = {}
    for layer in layers:
        match = _UNIT.match(layer + "/")
        if match:
            block, unit = int(match.group(1)), int(match.group(2))
            units[block] = max(units.get(block, 0), unit)
    return units


def _split_shares(rng, mapping, shape, axis):
    """Random positive shares [shape] along `axis` (new channels) that sum to one over the copies
    of each old channel, element by element."""
    shares = rng.uniform(0.5, 1.5, size=shape)
    moved = np.moveaxis(shares, axis, 0)
    totals = np.zeros((int(mapping.max()) + 1,) + moved.shape[1:])
    np.add.at(totals, mapping, moved)
    return np.moveaxis(moved / totals[mapping], 0, axis)


def widen(values, block_depths, seed=0):
    """The model variables `values` ({name: array}) with the ResNet's blocks at `block_depths`.

    Args:
      values: {variable name: numpy array}, a checkpoint's model variables.
      block_depths: 5 ints, each at least the checkpoint's width of that block.
      seed: the random copies and shares.

    Returns:
      (new values: {name: array} of the same names and dtypes, [(group, old width, new width,
      mapping)] for each widened group: new channel j copies old channel mapping[j]).

    Raises:
      WidenError: the checkpoint has no ResNet of 5 blocks, a block narrower than the
        checkpoint's, or the last block widened with no bidirectional RNN reading it.
    """
    rng = np.random.default_rng(seed)
    layers = _layers(values)
    units = _units(layers)
    if f"{RESNET}/Conv0" not in layers or sorted(units) != [1, 2, 3, 4, 5]:
        raise WidenError(f"the checkpoint has no {RESNET} of 5 blocks (found blocks "
                         f"{sorted(units)}): only the ResNet encoder can be widened")

    def width(layer):
        return values[layers[layer]].shape[-1]

    for block, depth in enumerate(block_depths, 1):
        old = width(f"{RESNET}/Block{block}/Unit1/Conv2")
        if int(depth) < old:
            raise WidenError(f"block_depths[{block - 1}] is {depth}, narrower than the "
                             f"checkpoint's Block{block} ({old} channels): a model can only be "
                             "widened")
    new = {name: np.asarray(value, np.float64) for name, value in values.items()}
    widened = []

    def grow(name, writers, readers, depth):
        old = width(writers[0])
        if depth == old:
            return
        mapping = np.concatenate([np.arange(old), rng.integers(0, old, depth - old)])
        for layer in writers:
            new[layers[layer]] = np.take(new[layers[layer]], mapping, axis=-1)
            for vector in CHANNEL_VECTORS:
                if f"{layer}/{vector}" in new:
                    new[f"{layer}/{vector}"] = np.take(new[f"{layer}/{vector}"], mapping, axis=0)
        for name_, axis, rows in readers:
            weights = new[name_]
            head = np.take(weights if rows is None else weights[:rows], mapping, axis=axis)
            head = head * _split_shares(rng, mapping, head.shape, axis)
            new[name_] = head if rows is None else np.concatenate([head, weights[rows:]], axis=0)
        widened.append((name, old, depth, mapping))

    def conv_readers(scopes):
        return [(layers[scope], 2, None) for scope in scopes]

    # The stem's output is as wide as Block1 (block_depths[0]).
    stream_name, stream_writers, stream_readers = "the stem (Conv0)", [f"{RESNET}/Conv0"], []
    prev_depth = int(block_depths[0])
    for block in range(1, 6):
        prefix = f"{RESNET}/Block{block}"
        depth = int(block_depths[block - 1])
        # The previous stream is read by its own block's later units and by this block's first.
        readers = conv_readers([f"{prefix}/Unit1/Conv1", f"{prefix}/Unit1/Shortcut"])
        grow(stream_name, stream_writers, stream_readers + readers, prev_depth)
        stream_writers = [f"{prefix}/Unit1/Conv2", f"{prefix}/Unit1/Shortcut"]
        stream_readers = []
        for unit in range(1, units[block] + 1):
            scope = f"{prefix}/Unit{unit}"
            grow(f"{scope} (inner)", [f"{scope}/Conv1"], conv_readers([f"{scope}/Conv2"]), depth)
            if unit > 1:
                stream_writers.append(f"{scope}/Conv2")
                stream_readers += conv_readers([f"{scope}/Conv1"])
        stream_name, prev_depth = f"{prefix} (output)", depth
    old_output = width(stream_writers[0])
    kernels = sorted(name for name in values
                     if name.startswith(RNN + "/") and name.endswith("/kernel"))
    if prev_depth > old_output and not kernels:
        raise WidenError(f"block_depths[4] {prev_depth} widens the encoder's output, which no "
                         f"bidirectional RNN reads ({RNN}/.../kernel): the predictors' input "
                         "sizes cannot change")
    grow(stream_name, stream_writers, stream_readers + [(k, 0, old_output) for k in kernels],
         prev_depth)
    out = {name: new[name].astype(np.asarray(values[name]).dtype) for name in new}
    return out, widened


def build_parser():
    parser = argparse.ArgumentParser(prog="python -m aster.tools.widen_model",
                                     description=__doc__.split("\n")[0])
    cli.add_checkpoint_flag(parser, None, "required")
    parser.add_argument("--pipeline_config_path", required=True,
                        help="the wider model's config (its resnet.block_depths)")
    parser.add_argument("--output_dir", required=True,
                        help="where model.ckpt-<step> is written (created)")
    parser.add_argument("--seed", type=int, default=0, help="the random copies and shares")
    cli.add_override_flags(parser)
    return parser


def block_depths(config):
    """The config's ResNet block_depths (5 ints)."""
    model = config.model.WhichOneof("model_oneof")
    extractor = getattr(config.model, model).feature_extractor
    if extractor.convnet.WhichOneof("convnet_oneof") != "resnet":
        raise WidenError("model...feature_extractor.convnet is not a resnet: only the ResNet "
                         "encoder can be widened")
    depths = list(extractor.convnet.resnet.block_depths)
    if len(depths) != 5:
        raise WidenError(f"model...feature_extractor.convnet.resnet.block_depths has "
                         f"{len(depths)} values: give all 5 widths")
    return depths


def main(argv=None):
    args = build_parser().parse_args(argv)
    prog = "widen_model"
    if not args.checkpoint_path:
        return cli.fail(prog, "--checkpoint_path is required", cli.CONFIG_ERROR_STATUS)
    try:
        depths = block_depths(cli.load_with_overrides(args))
    except (config_util.ConfigError, WidenError) as e:
        return cli.config_error(prog, e)
    cli_logging.configure()
    try:
        checkpoint = checkpoints.resolve(args.checkpoint_path, "--checkpoint_path")
        values, widened = widen(package_model.weights(checkpoint, False), depths, args.seed)
    except WidenError as e:
        return cli.config_error(prog, e)
    except ValueError as e:
        return cli.fail(prog, e)
    os.makedirs(args.output_dir, exist_ok=True)
    prefix = os.path.join(args.output_dir,
                          f"model.ckpt-{checkpoints.checkpoint_step(checkpoint) or 0}")
    package_model.write_weights(values, prefix)
    for name, old, depth, _ in widened:
        print(f"widen_model: {name}: {old} -> {depth} channels")
    if not widened:
        print("widen_model: every block is as wide as the checkpoint's; copied as it is")
    print(f"widen_model: wrote {prefix}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
