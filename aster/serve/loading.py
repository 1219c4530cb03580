"""The model aster-serve serves: its predictor, and the facts GET /v1/model reports.

    predictor, info = load_model()                                   # the shipped aster_base
    predictor, info = load_model(checkpoint_path="runs/demo_cpu")    # as aster-demo takes it
    predictor, info = load_model(saved_model_dir="exported/aster")

The checkpoint is anything checkpoints.resolve takes, with the pipeline.config beside it unless one
is given (as aster-demo and aster-export read it). The facts come from the model card's card.json
where the checkpoint's folder has one (a shipped or packaged model: name, step, charset, accuracy
on each validation set), and otherwise from the config and the checkpoint's name (no accuracy).
"""

import json
import os

from aster import pretrained
from aster.utils import checkpoints, cli, config_util

CARD_JSON = "card.json"


def load_model(checkpoint_path=pretrained.DEFAULT_MODEL, pipeline_config_path="",
               saved_model_dir="", config_override="", assignments=(), session_config=None):
    """Loads a predictor and describes its model.

    Args:
      checkpoint_path: what checkpoints.resolve takes; ignored with saved_model_dir.
      pipeline_config_path: the checkpoint's config (default: the pipeline.config beside it).
      saved_model_dir: an aster-export SavedModel to serve instead of a checkpoint.
      config_override, assignments: --config_override and --set, for a checkpoint's config.
      session_config: optional tf.ConfigProto of the predictor's session.

    Returns:
      (predictor with predict(list of encoded images) and close(), info dict of model_info).

    Raises:
      config_util.ConfigError: the config does not load or validate.
      ValueError: no checkpoint or SavedModel there, or one that does not match its config.
      checkpoints.CheckpointUnavailableError: the checkpoint cannot be read.
    """
    from aster import inference

    if saved_model_dir:
        predictor = inference.SavedModelPredictor(saved_model_dir, session_config)
        config_path = os.path.join(saved_model_dir, config_util.PIPELINE_FILENAME)
        config = (config_util.load_pipeline_config(config_path) if os.path.isfile(config_path)
                  else None)
        return predictor, model_info(saved_model_dir, config, None, "saved_model")
    checkpoint = checkpoints.resolve(checkpoint_path, "--checkpoint_path")
    config = config_util.load_pipeline_config(cli.config_beside(checkpoint, pipeline_config_path))
    config = config_util.merge_overrides(config, config_override, list(assignments))
    config_util.validate(config)
    predictor = inference.CheckpointPredictor(config, checkpoint, session_config=session_config)
    return predictor, model_info(checkpoint, config, _read_card(checkpoint), "checkpoint")


def _read_card(checkpoint):
    """The card.json beside a checkpoint (a model folder's), or None."""
    path = os.path.join(os.path.dirname(checkpoint), CARD_JSON)
    if not os.path.isfile(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None  # the card is documentation: a damaged one does not stop the server


def model_info(path, config, card, source):
    """What GET /v1/model reports.

    Args:
      path: the checkpoint prefix or SavedModel folder served.
      config: its pipeline config, or None (a SavedModel without one).
      card: the model card's facts (card.json), or None.
      source: "checkpoint" or "saved_model".

    Returns:
      {"name", "source", "path", "step", "charset", "input_size", "protocol", "accuracy"}: the
      name is the card's or the folder's; step, charset, protocol and accuracy ({set: word
      accuracy, beam search}) are None where unknown.
    """
    from aster.tools import model_card

    facts = model_card.model_facts(config) if config is not None else {}
    folder = path if source == "saved_model" else os.path.dirname(path)
    info = {
        "name": os.path.basename(os.path.normpath(folder)) or path,
        "source": source,
        "path": path,
        "step": None,
        "charset": facts.get("charset"),
        "input_size": ([facts["input_height"], facts["input_width"]] if facts else None),
        "protocol": None,
        "accuracy": None,
    }
    if source == "checkpoint":
        try:
            info["step"] = checkpoints.checkpoint_step(path)
        except ValueError:
            pass
    if card:
        beam = card.get("beam") or {}
        info["name"] = card.get("name", info["name"])
        info["step"] = beam.get("step", info["step"])
        info["charset"] = (card.get("model") or {}).get("charset", info["charset"])
        info["protocol"] = beam.get("protocol_name")
        info["accuracy"] = {d["name"]: d["accuracy"] for d in beam.get("datasets", [])
                            if "name" in d and "accuracy" in d} or None
    return info
