"""Fine-tuning into another character set: a checkpoint's class rows and columns moved to the
model's classes.

A variable with a class axis (a decoder's output kernel and bias, its LSTM kernel's one-hot rows,
the CTC logits) changes shape when the label map changes, and the plain restore skips it. When
the checkpoint's model folder or training folder holds its pipeline.config, such a variable is
restored class by class instead: each of the model's classes takes the checkpoint's row (or
column) of the same class: the reserved labels (GO, EOS) and every character both sets have; a
character the checkpoint lacks in its case takes its other case ("A" starts as "a" did, in a
model that read capitals as lower case); the rest of the axis (the glimpse and state rows after
the one-hot block, the CTC blank after the classes) is copied as it is. Classes with no match
(new punctuation) keep their initializer.

    remapped = class_remap.remappable(checkpoint_path, model_config, skipped)
    ...after the restore: class_remap.load(remapped, session)
"""

import collections
import logging
import os

import numpy as np

from aster.core import charsets
from aster.tf_setup import tf
from aster.utils import config_util

_LOG = logging.getLogger("aster.trainer")

# A variable to load after the restore, the checkpoint's value, the class counts, class pairs.
Remapped = collections.namedtuple(
    "Remapped", ["variable", "old_value", "old_classes", "new_classes", "pairs"])


def label_map(model_config):
    """(characters, label_offset) of a model config's first predictor's label map, or None."""
    which = model_config.WhichOneof("model_oneof")
    model = getattr(model_config, which) if which else None
    for predictor in getattr(model, "predictor", ()):
        kind = predictor.WhichOneof("predictor_oneof")
        if kind and getattr(predictor, kind).HasField("label_map"):
            proto = getattr(predictor, kind).label_map
            return charsets.from_config(proto.character_set), proto.label_offset
    return None


def class_pairs(old_map, new_map):
    """[(new class, old class)]: the reserved labels, then each new character's old class (the
    same character, or else its other case); characters with neither are left out."""
    (old_chars, old_offset), (new_chars, new_offset) = old_map, new_map
    pairs = [(i, i) for i in range(min(old_offset, new_offset))]
    old_index = {c: old_offset + i for i, c in enumerate(old_chars)}
    for i, char in enumerate(new_chars):
        for candidate in (char, char.lower(), char.upper()):
            if candidate in old_index:
                pairs.append((new_offset + i, old_index[candidate]))
                break
    return pairs


def remap(old_value, new_value, old_classes, new_classes, pairs):
    """new_value with old_value's class block moved by `pairs`, or None when the shapes differ
    otherwise than in one axis that starts with the classes (the same number of other entries
    after them on both sides)."""
    if old_value.ndim != new_value.ndim:
        return None
    axes = [a for a in range(old_value.ndim) if old_value.shape[a] != new_value.shape[a]]
    if len(axes) != 1:
        return None
    axis = axes[0]
    rest = new_value.shape[axis] - new_classes
    if rest < 0 or old_value.shape[axis] - old_classes != rest:
        return None
    out = np.moveaxis(new_value.copy(), axis, 0)
    old = np.moveaxis(old_value, axis, 0)
    new_rows, old_rows = (np.array(p, dtype=np.int64) for p in zip(*pairs, strict=True))
    out[new_rows] = old[old_rows]
    out[new_classes:] = old[old_classes:]
    return np.moveaxis(out, 0, axis)


def _checkpoint_label_map(checkpoint_path):
    """The label map of the pipeline.config beside a checkpoint, or None (with the reason)."""
    path = os.path.join(os.path.dirname(checkpoint_path), "pipeline.config")
    if not os.path.exists(path):
        return None, f"no pipeline.config beside {checkpoint_path}"
    try:
        return label_map(config_util.load_pipeline_config(path).model), None
    except ValueError as error:
        return None, f"cannot read {path}: {error}"


def remappable(checkpoint_path, model_config, skipped):
    """[Remapped] of the variables the plain restore skipped for their shape (`skipped`:
    [(variable, its checkpoint name)]) whose class axis can be moved; logs each one and why the
    others cannot. checkpoint_path is a resolved checkpoint prefix."""
    if not skipped:
        return []
    new_map = label_map(model_config)
    old_map, reason = _checkpoint_label_map(checkpoint_path)
    if new_map is None:
        reason = "the model has no label map"
    elif old_map == new_map:
        reason = "the checkpoint's label map is the model's"
    if reason:
        _LOG.info("fine-tune: no class remapping (%s)", reason)
        return []
    pairs = class_pairs(old_map, new_map)
    old_classes, new_classes = (len(chars) + offset for chars, offset in (old_map, new_map))
    found = []
    for var, ckpt_name in skipped:
        old = tf.train.load_variable(checkpoint_path, ckpt_name)
        # A CTC head has one class more on both sides (the blank): remap counts it as the rest.
        if remap(old, np.zeros(var.shape.as_list(), old.dtype), old_classes, new_classes,
                 pairs) is None:
            _LOG.warning("fine-tune: %s %s cannot take the checkpoint's %s %s class by class; "
                         "it keeps its initializer", var.op.name, var.shape.as_list(), ckpt_name,
                         list(old.shape))
            continue
        found.append(Remapped(var, old, old_classes, new_classes, pairs))
    _LOG.info("fine-tune: %d variables restored class by class (%d of the model's %d classes "
              "from the checkpoint's %d)", len(found), len(pairs), new_classes, old_classes)
    return found


def load(remapped, session):
    """Loads each remapped variable: its initialized value with the checkpoint's classes moved
    in (run after the variables are initialized)."""
    for r in remapped:
        value = remap(r.old_value, session.run(r.variable), r.old_classes, r.new_classes, r.pairs)
        r.variable.load(value.astype(r.variable.dtype.base_dtype.as_numpy_dtype), session)
