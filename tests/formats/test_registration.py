"""The format contract is complete (issue 10): a format written in the tests (``tests/example_format.py``),
registered at run time with ``pchronicle_datasets.formats.register``, works through every entry point —
``into_storyline`` / ``from_storyline`` / ``convert``, ``"auto"`` detection, ``load_dataset("pchronicle", …)`` and
the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import formats
from pchronicle_datasets.cli import main
from pchronicle_datasets.formats.base import Format
from tests import example_format

RECORDS = [
    {"id": "p1", "pairs": [["user", "hi"], ["agent", "hello"]], "lang": "en"},
    {"id": "p2", "pairs": [["user", "2+2?"], ["agent", "4"]], "score": 1.0},
]
TEXT = "".join(json.dumps(r) + "\n" for r in RECORDS)


@pytest.fixture(scope="module", autouse=True)
def registered():
    formats.register(example_format)
    formats.register(example_format)  # registering the same module again is a no-op
    yield example_format
    formats.unregister("pairs")
    assert "pairs" not in pc.format_names() and "pair-lines" not in pc.format_names()


def test_the_module_satisfies_the_protocol_and_every_builtin_format_does():
    assert isinstance(example_format, Format)
    assert all(isinstance(f, Format) for f in formats.formats())
    assert {"pairs", "pair-lines"} <= set(pc.format_names())


def test_register_refuses_an_incomplete_format_or_a_taken_name():
    class Half:
        NAME = "half"

    with pytest.raises(TypeError, match="a format needs"):
        formats.register(Half)

    class Clash:
        NAME, ALIASES, EXTENSION, OUTPUT, PER_DOCUMENT = "sharegpt", (), ".jsonl", "file", False
        sniff = iter_records = decode = encode = staticmethod(lambda *a, **k: None)

    with pytest.raises(ValueError, match="already registered"):
        formats.register(Clash)
    with pytest.raises(ValueError, match="built-in"):
        formats.unregister("openai-messages")


def test_hub_api_round_trips_and_converts():
    stories = pc.into_storyline("pairs", TEXT, document_id="p.jsonl")
    assert [s["session"] for s in stories] == ["p1", "p2"]
    assert [orjson.loads(line) for line in pc.from_storyline("pairs", stories).splitlines()] == RECORDS
    assert pc.into_storyline("pair-lines", TEXT) == pc.into_storyline("pairs", TEXT)
    sharegpt = pc.convert("pairs", "sharegpt", TEXT)
    assert json.loads(sharegpt.splitlines()[0])["conversations"][1] == {"from": "human", "value": "hi"}
    back = pc.convert("sharegpt", "storyline", sharegpt)
    assert [t["msg"] for t in json.loads(back.splitlines()[0])["turns"]] == ["hi", "hello"]


def test_auto_detection_finds_it_and_no_builtin_format_claims_it():
    assert formats.detect(TEXT.encode()) is example_format
    assert pc.into_storyline("auto", TEXT) == pc.into_storyline("pairs", TEXT)


def test_load_dataset_by_name_and_auto(tmp_path: Path):
    path = tmp_path / "p.jsonl"
    path.write_text(TEXT)
    for config in ("pairs", "auto"):
        ds = datasets.load_dataset(
            "pchronicle", config, data_files=str(path), split="train", cache_dir=str(tmp_path / config)
        )
        assert [pc.row_to_story(row)["session"] for row in ds] == ["p1", "p2"]
        assert ds[0]["origin"]["format"] == "pairs"


def test_cli_reads_and_writes_it(tmp_path: Path, capsys):
    src = tmp_path / "p.jsonl"
    src.write_text(TEXT)
    assert main(["validate", str(src), "--from", "pairs"]) == 0
    out = tmp_path / "out.jsonl"
    assert main(["convert", str(src), "--to", "pairs", "-o", str(out)]) == 0
    assert [orjson.loads(line) for line in out.read_text().splitlines()] == RECORDS
    folder = tmp_path / "sharegpt"
    assert main(["convert", str(src), "--to", "sharegpt", "-o", str(folder)]) == 0
    assert len((folder / "trajectory_samples.jsonl").read_text().splitlines()) == 2
    assert main(["inspect", str(src), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["documents_per_format"] == {"pairs": 2}
