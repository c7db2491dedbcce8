"""Real public files of each message shape (``tests/data/chat/shapes/``, provenance in its README) load with
``load_dataset("pchronicle", "auto")``: every call, result, text and reasoning in its place, counted here by
walking the source JSON (not by the reader); no ``content_flattened``; ``to_messages`` and ``to_sharegpt`` write
each call once; the same-source writer gives the file's record back."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets.losses import collect_losses

DATA = Path(__file__).resolve().parents[2] / "data" / "chat" / "shapes"
FILES = sorted(p for p in DATA.iterdir() if p.suffix in (".json", ".jsonl"))


def _gemini_counts(contents):
    """What a Gemini history holds: texts by role, thoughts, calls and results (name, args / response)."""
    counts = {"user_texts": [], "model_texts": [], "thoughts": [], "calls": [], "results": []}
    for content in contents:
        for part in content["parts"]:
            if "functionCall" in part:
                counts["calls"].append((part["functionCall"]["name"], part["functionCall"].get("args", {})))
            elif "functionResponse" in part:
                counts["results"].append((part["functionResponse"]["name"], part["functionResponse"]["response"]))
            elif part.get("thought"):
                counts["thoughts"].append(part["text"])
            elif "text" in part:
                counts["user_texts" if content["role"] == "user" else "model_texts"].append(part["text"])
    return counts


def _story_counts(story):
    counts = {"user_texts": [], "model_texts": [], "thoughts": [], "calls": [], "results": []}
    fn_of = {}
    for turn in story["turns"]:
        if turn["msg"]:
            counts["user_texts" if turn["src"] == "user" else "model_texts"].append(turn["msg"])
        if "reason" in turn:
            counts["thoughts"].append(turn["reason"])
        for call in turn.get("tool_calls") or ():
            counts["calls"].append((call["fn"], call["args"]))
            fn_of[call["tcid"]] = call["fn"]
        for result in (turn.get("observation") or {}).get("results", ()):
            counts["results"].append((fn_of[result["source_call_id"]], result["content"]))
    return counts


def _source(path):
    return orjson.loads(path.read_bytes())


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    ds = load_dataset("pchronicle", "auto", data_files=[str(f) for f in FILES], split="train", cache_dir=str(cache))
    return {pc.row_to_story(row)["origin"]["document_id"].rsplit("/", 1)[-1]: pc.row_to_story(row) for row in ds}


@pytest.mark.parametrize("path", [p for p in FILES if p.name.startswith("gemini")], ids=lambda p: p.stem)
def test_gemini_history_loads_whole(loaded, path):
    story = loaded[path.name]
    assert story["origin"]["format"] == "chat"
    want = _gemini_counts(_source(path)["history"])
    got = _story_counts(story)
    assert got == want
    assert len(want["calls"]) >= 1 and len(want["results"]) == len(want["calls"])
    # results are linked to the calls they answer (by name and order: Gemini gives no id here)
    for turn in story["turns"]:
        calls = {c["tcid"] for c in turn.get("tool_calls") or ()}
        for result in (turn.get("observation") or {}).get("results", ()):
            assert result["source_call_id"] in calls


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_training_outputs_write_each_call_once(loaded, path):
    story = loaded[path.name]
    n_calls = sum(len(t.get("tool_calls") or ()) for t in story["turns"])
    with collect_losses() as report:
        messages = pc.to_messages(story)["messages"]
        conv = pc.to_sharegpt(story)["conversations"]
    assert sum(len(m.get("tool_calls") or ()) for m in messages) == n_calls
    assert sum(t["value"].count("<tool_call>") for t in conv if t["from"] == "gpt") == n_calls
    assert "content_flattened" not in report.counts
    assert not any("functionCall" in t["value"] or '"tool_use"' in t["value"] for t in conv)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_same_source_round_trip(path):
    stories = pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    written = [orjson.loads(line) for line in pc.from_storyline("chat", stories).split("\n") if line]
    assert written == [_source(path)]
