"""Tests for aster/serve/loading.py: the served predictor and the facts of GET /v1/model."""

import json
import os

import pytest
import shipped_stand_in
from serve_fixtures import ROOT, image_bytes
from tiny_model import tiny_config

from aster import pretrained
from aster.exporters import saved_model_export
from aster.serve import loading
from aster.utils import config_util

CARD = {"name": "aster_base", "model": {"charset": "lowercase"},
        "beam": {"step": 3, "protocol_name": "case-insensitive digits and letters",
                 "datasets": [{"name": "val", "accuracy": 0.9}, {"name": "val_ood",
                                                                  "accuracy": 0.8}]}}


def test_shipped_model_with_its_card(tmp_path, monkeypatch):
    prefix = shipped_stand_in.install(tmp_path, monkeypatch, tiny_config(), step=3, value=42.0)
    with open(os.path.join(os.path.dirname(prefix), loading.CARD_JSON), "w") as f:
        json.dump(CARD, f)
    predictor, info = loading.load_model()
    with predictor:
        assert predictor.predict([image_bytes()])["text"].tolist() == [b"42"]
    assert info == {"name": "aster_base", "source": "checkpoint", "path": prefix, "step": 3,
                    "charset": "lowercase", "input_size": [32, 64],
                    "protocol": "case-insensitive digits and letters",
                    "accuracy": {"val": 0.9, "val_ood": 0.8}}


def test_checkpoint_without_a_card_is_described_from_its_config_and_name(tmp_path, monkeypatch):
    shipped_stand_in.install(tmp_path, monkeypatch, tiny_config(), step=5)
    train = tmp_path / "models" / pretrained.DEFAULT_MODEL
    predictor, info = loading.load_model(str(train), set_damaged_card(train))
    predictor.close()
    assert (info["name"], info["step"], info["charset"]) == (pretrained.DEFAULT_MODEL, 5,
                                                             "lowercase")
    assert info["accuracy"] is None and info["protocol"] is None


def set_damaged_card(folder):
    """Writes a card.json that is not JSON (a damaged card is ignored); returns the config."""
    (folder / loading.CARD_JSON).write_text("{not json")
    return str(folder / pretrained.CONFIG_FILENAME)


def test_saved_model_is_described_from_the_config_inside_it(tmp_path, monkeypatch):
    prefix = shipped_stand_in.install(tmp_path, monkeypatch, tiny_config(), value=42.0)
    exported = str(tmp_path / "exported")
    saved_model_export.export_saved_model(tiny_config(), prefix, exported)
    predictor, info = loading.load_model(saved_model_dir=exported)
    with predictor:
        assert predictor.predict([image_bytes()])["text"].tolist() == [b"42"]
    assert info["name"] == "exported" and info["source"] == "saved_model"
    assert info["step"] is None and info["charset"] == "lowercase"
    os.remove(os.path.join(exported, config_util.PIPELINE_FILENAME))
    predictor, info = loading.load_model(saved_model_dir=exported)
    predictor.close()
    assert info["charset"] is None and info["input_size"] is None


def test_checkpoint_name_without_a_step_has_none():
    info = loading.model_info("/models/weights", None, None, "checkpoint")
    assert (info["name"], info["step"]) == ("models", None)


def test_the_shipped_models_card_gives_its_accuracy():
    folder = os.path.join(ROOT, "models", pretrained.DEFAULT_MODEL)
    if not os.path.isfile(os.path.join(folder, loading.CARD_JSON)):
        pytest.skip("no shipped model card in this checkout")
    with open(os.path.join(folder, loading.CARD_JSON)) as f:
        card = json.load(f)
    info = loading.model_info(os.path.join(folder, "model.ckpt-1"), None, card, "checkpoint")
    assert info["name"] == "aster_base" and info["charset"] == "allcases_symbols"
    assert set(info["accuracy"]) >= {"val", "val_ood"}
    assert all(0 < a <= 1 for a in info["accuracy"].values())


def test_missing_checkpoint_raises(tmp_path):
    with pytest.raises(ValueError, match="--checkpoint_path"):
        loading.load_model(str(tmp_path / "nothing"))
