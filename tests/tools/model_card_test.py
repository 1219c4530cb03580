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
    text = model_card.render(_shipped_card())
    assert "protocol 94" not in text
    assert "upper case is read as lower case" in text


def test_a_94_class_card_shows_protocol_94_beside_the_headline():
    card = copy.deepcopy(_shipped_card())
    card["model"].update(charset="allcases_symbols", num_characters=94, max_characters=25)
    for i, d in enumerate(card["beam"]["datasets"]):
        d["protocols"] = {"36": {"accuracy": d["accuracy"]}, "94": {"accuracy": 0.5 + i / 100}}
    text = model_card.render(card)
    assert "| set | images | beam | greedy | beam, protocol 94 |" in text
    first = card["beam"]["datasets"][0]
    assert f"| `{first['name']}` | {first['size']} | " in text and "| 50.00% |" in text
    assert ("94 classes (allcases_symbols: the 94 printable ASCII characters: letters with their "
            "case, digits and punctuation), at most 25 characters.") in text
