"""Evaluation settings read from the pipeline config: dataset names, character set, decoding.

    names = dataset_names([input_path(r) for r in config.eval_input_reader],
                          config.eval_config.dataset_name)
    charset = model_charset(config.model)        # what protocol 0 (auto) resolves against
    decoding_settings(config.model)              # what the reports say about decoding
    final_step(config, checkpoint_dir)           # where the evaluation loop stops

Checkpoint discovery and the polling loop live in aster/utils/checkpoints.py, the reports in
aster/eval_reports.py.
"""

import logging
import os
import re

logger = logging.getLogger(__name__)

# The field of each reader type that says where its data is (what a dataset is named after).
_PATH_FIELDS = {"tf_record_input_reader": "input_path", "lmdb_input_reader": "path"}


def input_path(reader_config):
    """The reader's data path (TFRecord files, LMDB directories); "" for a reader without one."""
    kind = reader_config.WhichOneof("input_reader")
    if kind not in _PATH_FIELDS:
        return ""
    return getattr(getattr(reader_config, kind), _PATH_FIELDS[kind])


def model_charset(model_config):
    """The characters the model can output: those of its decoded predictors' label maps, in
    order, each once; None when the model config has no such predictor.

    Raises:
      ValueError: a character set that cannot be read (named by its field path).
    """
    from aster.builders import character_set_builder

    which = model_config.WhichOneof("model_oneof")
    if which is None:
        return None
    chars = {}
    for i, predictor in enumerate(getattr(model_config, which).predictor):
        kind = predictor.WhichOneof("predictor_oneof")
        if kind is None or predictor.auxiliary or not getattr(predictor, kind).HasField(
                "label_map"):
            continue
        path = f"model.{which}.predictor[{i}].{kind}.label_map.character_set"
        chars.update(dict.fromkeys(character_set_builder.build(
            getattr(predictor, kind).label_map.character_set, path)))
    return list(chars) or None


def dataset_names(input_paths, configured_names=()):
    """One report name per eval reader.

    Args:
      input_paths: each reader's input path: TFRecord files or LMDB directories (a path, glob or
        comma-separated list; "" if none).
      configured_names: eval_config.dataset_name; entry i, when present and non-empty, names
        reader i.

    Returns:
      A list of distinct names usable as folder names: the configured name, else the first input
      path's base name without extensions and shard suffix ("data/svt-00000-of-00004.tfrecord" ->
      "svt", "lmdb/IIIT5k_3000/" -> "IIIT5k_3000"), else (no path) "dataset<i>"; repeated names
      get "_2", "_3", ...
    """
    names, used = [], set()
    for i, path in enumerate(input_paths):
        name = configured_names[i] if i < len(configured_names) else ""
        if not name:
            first = path.split(",")[0].strip().rstrip("/" + os.sep)
            name = os.path.basename(first)
            name = re.sub(r"-\d+-of-\d+", "", name)
            name = re.sub(r"[*?\[\]]", "", name.split(".")[0])
        name = re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or f"dataset{i}"
        base, k = name, 2
        while name in used:
            name, k = f"{base}_{k}", k + 1
        used.add(name)
        names.append(name)
    return names


def decoding_settings(model_config):
    """The decoding settings of each predictor of a Model message, for the reports.

    Returns:
      A list of dicts: predictor (name), type (the predictor oneof), beam_width, and for
      attention predictors max_num_steps, reverse and length_penalty. Auxiliary predictors
      (trained, never decoded) are left out.
    """
    which = model_config.WhichOneof("model_oneof")
    if which is None:
        return []
    settings = []
    for predictor in getattr(model_config, which).predictor:
        kind = predictor.WhichOneof("predictor_oneof")
        if kind is None or predictor.auxiliary:
            continue
        sub = getattr(predictor, kind)
        entry = {"predictor": predictor.name, "type": kind, "beam_width": sub.beam_width}
        if kind == "attention_predictor":
            entry.update(max_num_steps=sub.max_num_steps, reverse=sub.reverse,
                         length_penalty=round(sub.length_penalty, 6))
        settings.append(entry)
    return settings


def final_step(pipeline_config, checkpoint_dir):
    """train_config.num_steps of the training run (its pipeline.config when present)."""
    from aster.utils import config_util

    path = os.path.join(checkpoint_dir, config_util.PIPELINE_FILENAME)
    if os.path.isfile(path):
        try:
            return config_util.load_pipeline_config(path).train_config.num_steps
        except ValueError as e:
            logger.warning("cannot read %s (%s); using this config's num_steps", path, e)
    return pipeline_config.train_config.num_steps
