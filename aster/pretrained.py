"""The shipped base model: models/<name>/ of the repository (written by `make pretrain`), which
a wheel carries as aster/models/<name>/ (setup.py copies it there).

    checkpoint, config_path = pretrained.model_files()      # the default model's two paths
    pretrained.shipped_models()                             # ["aster_base"]

A model folder holds one weights-only checkpoint (`model.ckpt-<step>.index` and its data shard),
the `pipeline.config` it reads with and a generated `MODEL_CARD.md`. A shipped model's name is one
of the things checkpoints.resolve takes (`--checkpoint_path aster_base` in aster-demo, aster-export
and aster-eval, `train_config.fine_tune_checkpoint: "aster_base"`); the commands read with
DEFAULT_MODEL when given no checkpoint. A folder that is missing a file or holds a damaged one
raises ModelFolderError with one line naming the file.
"""

import os

DEFAULT_MODEL = "aster_base"
_PACKAGE = os.path.dirname(os.path.abspath(__file__))
# An installed wheel has the models inside the package; a source checkout (and its editable
# install) at the repository's top level.
_WHEEL_MODELS = os.path.join(_PACKAGE, "models")
MODELS_DIR = (_WHEEL_MODELS if os.path.isdir(_WHEEL_MODELS)
              else os.path.join(os.path.dirname(_PACKAGE), "models"))
CONFIG_FILENAME = "pipeline.config"
CARD_FILENAME = "MODEL_CARD.md"


class ModelFolderError(ValueError):
    """A model folder that is missing, incomplete or damaged (the message names the file)."""


def model_dir(name=DEFAULT_MODEL):
    """The folder of the shipped model `name`."""
    return os.path.join(MODELS_DIR, name)


def shipped_models():
    """Names of the model folders shipped with the package."""
    if not os.path.isdir(MODELS_DIR):
        return []
    return sorted(n for n in os.listdir(MODELS_DIR) if os.path.isdir(os.path.join(MODELS_DIR, n)))


def folder_files(folder):
    """(checkpoint prefix, pipeline.config path) of a model folder, each checked to exist.

    Raises:
      ModelFolderError: no such folder, no pipeline.config, no complete checkpoint (an index
        without its data shard or the other way round), or more than one checkpoint.
    """
    if not os.path.isdir(folder):
        raise ModelFolderError(f"{folder}: no such model folder (make pretrain writes it)")
    config_path = os.path.join(folder, CONFIG_FILENAME)
    if not os.path.isfile(config_path):
        raise ModelFolderError(f"{config_path}: missing (the model folder needs the "
                               "pipeline.config its weights were trained with)")
    indexes = [n for n in os.listdir(folder) if n.endswith(".index")]
    shards = [n for n in os.listdir(folder) if ".data-" in n]
    if not indexes:
        named = f" ({shards[0]} has no .index beside it)" if shards else ""
        raise ModelFolderError(f"{folder}: no checkpoint .index file{named}")
    if len(indexes) > 1:
        raise ModelFolderError(f"{folder}: {len(indexes)} checkpoints ({', '.join(indexes)}); "
                               "a model folder holds one")
    from aster.utils import checkpoints  # imports TensorFlow: not before the CLI's logging set-up

    prefix = os.path.join(folder, indexes[0][: -len(".index")])
    if not checkpoints.checkpoint_exists(prefix):
        raise ModelFolderError(f"{prefix}.data-00000-of-00001: missing (the weights of "
                               f"{indexes[0]})")
    return prefix, config_path


def model_files(name=DEFAULT_MODEL):
    """(checkpoint prefix, pipeline.config path) of the shipped model `name`."""
    return folder_files(model_dir(name))
