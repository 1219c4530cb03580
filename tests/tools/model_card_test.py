"""aster/tools/model_card.py: what the card says follows the model's character set."""

import copy
import json
import os

from aster.tools import model_card

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _shipped_card():
    with open(os.path.join(ROOT, "models", "aster_base", "card.json"), encoding="utf-8") as f:
        return json.load(f)


def test_a_36_class_card_has_no_protocol_94_column():
    card = copy.deepcopy(_shipped_card())
    card["model"].update(charset="lowercase", num_characters=36, max_characters=17)
    for d in card["beam"]["datasets"]:
        d["protocols"] = {"36": {"accuracy": d["accuracy"]}}
    text = model_card.render(card)
    assert "protocol 94" not in text
    assert "upper case is read as lower case" in text
    assert "- 36 lower-case alphanumeric classes: no punctuation, no case" in text


def test_the_shipped_94_class_card_shows_protocol_94_beside_the_headline():
    card = _shipped_card()
    text = model_card.render(card)
    assert "| set | images | beam | greedy | beam, protocol 94 |" in text
    first = card["beam"]["datasets"][0]
    p94 = model_card._pct(first["protocols"]["94"]["accuracy"])
    assert f"| `{first['name']}` | {first['size']} | " in text and f"| {p94} |" in text
    assert ("94 classes (allcases_symbols: the 94 printable ASCII characters: letters with their "
            "case, digits and punctuation), at most 25 characters.") in text
    assert "- 94 classes, the printable ASCII characters: no space (one word per crop)" in text
    assert "lower-case" not in text


def test_earlier_stages_list_their_sets_in_the_models_evaluation_order():
    """Fresh facts (sets in evaluation order) and the same facts read back from card.json
    (stored with sorted keys) render the same card."""
    card = copy.deepcopy(_shipped_card())
    names = [d["name"] for d in card["beam"]["datasets"]]
    stage = card
    while stage.get("starts_from"):
        stage = stage["starts_from"]
        stage["accuracy"] = dict(sorted(stage["accuracy"].items(), reverse=True))
    text = model_card.render(card)
    assert text == model_card.render(json.loads(json.dumps(card, sort_keys=True)))
    earlier = [line for line in text.splitlines() if line.startswith("- Stage ")][-1]
    listed = [name for name in names if f"`{name}` " in earlier]
    assert listed == sorted(listed, key=lambda n: earlier.index(f"`{n}` "))
    assert listed[:3] == ["val", "val_ood", "val_ood_curved"]
