"""Text from the data that goes into a dataset card cannot change the card's structure (issue 14)."""

from __future__ import annotations

import re

import yaml
from datasets import Dataset

from pchronicle_datasets.hub import MAX_CARD_TEXT, card_text, dataset_card

HOSTILE_FORMATS = [
    "x\n# Injected heading\n",
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[click me](https://evil.example/phish)",
    "![pixel](https://evil.example/p.png)",
    "https://evil.example/bare www.evil.example a@evil.example",
    "a | b | c",
    "`code` **bold** ~~strike~~",
    "---\nconfigs: []\n---",
    "\r\n\t\x00\x1b[31m",
    "z" * 5000,
]


def card_for(formats: list[str]) -> str:
    ds = Dataset.from_dict({"origin": [{"format": f, "document_id": "d"} for f in formats]})
    return dataset_card({"train": ds}, repo_id="org/demo", conversion="test")


def structure(card: str) -> list[str]:
    """The lines that give the card its shape: front matter, headings, list items, table rows, fences."""
    return [
        re.sub(r"\*\*Source formats:\*\*.*", "**Source formats:**", line)
        for line in card.splitlines()
        if line.startswith(("---", "#", "- ", "|", "```"))
    ]


def test_hostile_format_names_do_not_change_the_card_structure():
    plain = card_for(["openai-msg"] * len(HOSTILE_FORMATS))
    hostile = card_for(HOSTILE_FORMATS)
    assert structure(hostile) == structure(plain)
    assert len(hostile.splitlines()) == len(plain.splitlines())
    assert yaml.safe_load(hostile.split("---")[1]) == yaml.safe_load(plain.split("---")[1])
    [line] = [ln for ln in hostile.splitlines() if ln.startswith("- **Source formats:**")]
    assert "<" not in line and ">" not in line  # no HTML
    values = re.sub(r": 1(, |$)", r"\1", line.split(":**", 1)[1])
    # Every character that makes a link, an image, code, a table cell, a heading or an autolink is escaped.
    assert not re.search(r"(?<!\\)[\[\]()!`|#:.@]", values), values


def test_card_text_keeps_plain_names_and_is_bounded():
    assert card_text("openai-msg") == "openai-msg"
    assert card_text("storyline → to_sharegpt") == "storyline → to_sharegpt"
    assert len(card_text("z" * 5000)) == MAX_CARD_TEXT
    assert card_text("a\nb\r\nc") == "a b  c"
