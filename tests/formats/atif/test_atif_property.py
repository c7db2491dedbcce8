"""Storyline → ATIF → Storyline for generated documents, and the writer's output against the public ATIF
v1.8 models (the ``atif`` package, test extra only)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pchronicle_datasets as pc
from pchronicle_datasets.formats import from_storyline, into_storyline
from tests.strategies import storylines

Trajectory = pytest.importorskip("atif").Trajectory
SAMPLES = Path(__file__).resolve().parents[3] / "pchronicle_datasets" / "samples"


def _holdable(story: dict) -> bool:
    """Documents this format can hold: not claiming to come from ATIF (those are written back as their
    source, which the generator does not make) and with no ``atif`` export hints of their own."""
    sources = (story.get("unknown_fields") or {}).get("sources") or {}
    meta = story.get("meta")
    return (
        (story.get("origin") or {}).get("format") != "atif"
        and "atif" not in sources
        and not (isinstance(meta, dict) and "atif" in meta)
    )


def _comparable(story: dict) -> dict:
    # /origin says where a document was read from (now: ATIF); unknown_key_counts is recomputed.
    out = {k: v for k, v in story.items() if k not in ("origin", "unknown_key_counts")}
    return out


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.lists(storylines(max_turns=4), min_size=1, max_size=3).map(lambda xs: [x for x in xs if _holdable(x)]))
def test_storyline_atif_storyline_round_trip_and_public_models(stories):
    if not stories:
        return
    text = from_storyline("atif", stories)
    lines = [text] if text.startswith("{\n") else [x for x in text.split("\n") if x]
    for line in lines:
        Trajectory.model_validate(json.loads(line))
    back = into_storyline("atif", text, document_id="out.json")
    assert [_comparable(s) for s in back] == [_comparable(s) for s in stories]


@pytest.mark.parametrize("path", sorted(SAMPLES.glob("*/*.json*")), ids=lambda p: p.name)
def test_every_sample_written_as_atif_validates_and_reads_back(path):
    stories = into_storyline("auto", path.read_bytes(), document_id=path.name)
    text = from_storyline("atif", stories)
    lines = [text] if text.startswith("{\n") else [x for x in text.split("\n") if x]
    for line in lines:
        Trajectory.model_validate(json.loads(line))
    back = into_storyline("atif", text, document_id="x.json")
    assert [_comparable(s) for s in back] == [_comparable(s) for s in stories]


def test_openai_msg_through_atif_gives_the_same_rows_back():
    data = (SAMPLES / "openai_msg" / "gateway_capture.jsonl").read_bytes()
    stories = into_storyline("openai-msg", data, document_id="gateway_capture.jsonl")
    via = into_storyline("atif", from_storyline("atif", stories), document_id="x.json")
    assert from_storyline("openai-msg", via) == from_storyline("openai-msg", stories)


@pytest.mark.parametrize(
    "path", sorted((SAMPLES.parent.parent / "tests" / "data" / "atif").glob("*.json")), ids=lambda p: p.name
)
def test_training_map_functions_run_on_atif_input(path):
    # What they make of results without call ids (terminus-2) is issue #12; here they must run.
    for story in into_storyline("atif", path.read_bytes(), document_id=path.name):
        row = pc.story_to_row(story)
        assert pc.to_sharegpt(row)["conversations"]
        assert pc.to_messages(row, arguments="object")["messages"]


def test_load_dataset_and_cli_read_atif(tmp_path):
    from datasets import load_dataset

    from pchronicle_datasets.cli import main

    src = SAMPLES.parent.parent / "tests" / "data" / "atif" / "harbor_golden_terminus2_timeout.trajectory.json"
    for name in ("atif", "auto"):
        ds = load_dataset("pchronicle", name, data_files=str(src), split="train", cache_dir=str(tmp_path / name))
        assert ds.num_rows == 1 and pc.row_to_story(ds[0])["agent"]["id"] == "terminus-2"
    out = tmp_path / "back.json"
    assert main(["convert", str(src), "--to", "atif", "-o", str(out)]) == 0
    assert orjson.loads(out.read_bytes()) == orjson.loads(src.read_bytes())
    assert main(["validate", str(src)]) == 0
