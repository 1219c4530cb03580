"""The stand-in model (tests/stand_in_model.py) as the shipped `aster_base`, for the tests of the
commands that take a shipped model's name (aster-demo, aster-export, aster-eval)."""

import os

from stand_in_model import StandInModel, write_checkpoint

from aster import inference, pretrained
from aster.tf_setup import tf
from aster.utils import config_util


def install(tmp_path, monkeypatch, config, step=3, value=42.0):
    """A models folder in tmp_path whose `aster_base` holds a stand-in checkpoint and `config`;
    pretrained.MODELS_DIR points there and inference builds the stand-in model.

    Returns:
      The shipped checkpoint's prefix.
    """
    folder = tmp_path / "models" / pretrained.DEFAULT_MODEL
    os.makedirs(folder)
    checkpoint = write_checkpoint(str(folder), step, value)
    os.remove(folder / "checkpoint")  # a model folder is weights, config and card: no state file
    config_util.save_pipeline_config(config, str(folder / pretrained.CONFIG_FILENAME))
    monkeypatch.setattr(pretrained, "MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setattr(inference, "default_model_fn", lambda model_config: StandInModel())
    return checkpoint


def lagging_run(train_dir, config):
    """A training folder with stand-in checkpoints at steps 10 (value 10) and 20 (value 20),
    whose `checkpoint` state file still names step 10, and its pipeline.config.

    Returns:
      The prefix of step 20, the folder's newest complete checkpoint.
    """
    ten = write_checkpoint(str(train_dir), 10, 10.0)
    twenty = write_checkpoint(str(train_dir), 20, 20.0)
    tf.train.update_checkpoint_state(str(train_dir), ten, all_model_checkpoint_paths=[ten])
    config_util.save_pipeline_config(config, str(train_dir / "pipeline.config"))
    return twenty
