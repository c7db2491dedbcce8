"""Real public files of each message shape (``tests/data/chat/shapes/``, provenance in its README) load with
``load_dataset("pchronicle", "auto")``: every call, result, text, reasoning and signature in its place, counted
here by walking the source JSON (not with the reader); no ``content_flattened``; ``to_messages`` and
``to_sharegpt`` write each call once; the same-source writer gives the file's record back."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets.losses import collect_losses

DATA = Path(__file__).resolve().parents[2] / "data" / "chat" / "shapes"
FILES = sorted(p for p in DATA.iterdir() if p.suffix in (".json", ".jsonl"))


def _empty():
    return {"user_texts": [], "agent_texts": [], "reasoning": [], "signatures": [], "calls": [], "results": []}


def _gemini(counts, contents):
    for content in contents:
        agent = content.get("role") == "model"
        for part in content["parts"]:
            if "thoughtSignature" in part:
                counts["signatures"].append(part["thoughtSignature"])
            if "functionCall" in part:
                counts["calls"].append((part["functionCall"]["name"], part["functionCall"].get("args", {})))
            elif "functionResponse" in part:
                counts["results"].append((part["functionResponse"]["name"], part["functionResponse"]["response"]))
            elif part.get("thought"):
                counts["reasoning"].append(part["text"])
            elif "text" in part:
                counts["agent_texts" if agent else "user_texts"].append(part["text"])


def _anthropic(counts, message):
    texts = [b["text"] for b in message["content"] if b["type"] == "text"]
    if texts:
        counts["agent_texts" if message["role"] == "assistant" else "user_texts"].append("".join(texts))
    for block in message["content"]:
        if block["type"] == "thinking":
            counts["reasoning"].append(block["thinking"])
            counts["signatures"].append(block["signature"])
        elif block["type"] == "tool_use":
            counts["calls"].append((block["name"], block["input"]))


def _responses(counts, items):
    for item in items:
        if item["type"] == "reasoning":
            counts["reasoning"] += [s["text"] for s in item["summary"]]
            if "encrypted_content" in item:
                counts["signatures"].append(item["encrypted_content"])
        elif item["type"] == "message":
            text = "".join(p["text"] for p in item["content"])
            counts["agent_texts" if item["role"] == "assistant" else "user_texts"].append(text)
        elif item["type"] == "function_call":
            counts["calls"].append((item["name"], orjson.loads(item["arguments"])))
        elif item["type"] == "function_call_output":
            counts["results"].append((None, item["output"]))


def source_counts(path):
    """What the source holds, by its own shape's rules (the provider's documentation, not the reader)."""
    value = orjson.loads(path.read_bytes())
    counts = _empty()
    if "history" in value:
        _gemini(counts, value["history"])
    elif "candidates" in value:
        _gemini(counts, [value["candidates"][0]["content"]])
    elif value.get("type") == "message":
        _anthropic(counts, value)
    elif value.get("object") == "response":
        _responses(counts, value["output"])
    else:
        raise AssertionError(f"no counting rule for {path.name}")
    return counts


def story_counts(story):
    counts = _empty()
    fn_of = {}
    for turn in story["turns"]:
        if turn["msg"]:
            counts["agent_texts" if turn["src"] == "agent" else "user_texts"].append(turn["msg"])
        if "reason" in turn:
            counts["reasoning"].append(turn["reason"])
        for piece in (turn.get("extra") or {}).get("reasoning", ()):
            counts["signatures"] += [piece[k] for k in ("signature", "encrypted_content") if k in piece]
        for call in turn.get("tool_calls") or ():
            counts["calls"].append((call["fn"], call["args"]))
            fn_of[call["tcid"]] = call["fn"]
        for result in (turn.get("observation") or {}).get("results", ()):
            counts["results"].append((fn_of[result["source_call_id"]], result["content"]))
    return counts


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    ds = load_dataset("pchronicle", "auto", data_files=[str(f) for f in FILES], split="train", cache_dir=str(cache))
    stories = [pc.row_to_story(row) for row in ds]
    return {s["origin"]["document_id"].rsplit("/", 1)[-1]: s for s in stories}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_call_result_text_and_reasoning_in_its_place(loaded, path):
    story = loaded[path.name]
    assert story["origin"]["format"] == "chat"
    want = source_counts(path)
    got = story_counts(story)
    assert got == want
    assert want["calls"] or want["reasoning"]  # each file exercises its shape's structure
    # results are on the turn of the call they answer (Gemini's by name and order: no id in these files)
    for turn in story["turns"]:
        calls = {c["tcid"] for c in turn.get("tool_calls") or ()}
        for result in (turn.get("observation") or {}).get("results", ()):
            assert result["source_call_id"] in calls


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_training_outputs_write_each_call_once(loaded, path):
    story = loaded[path.name]
    n_calls = len(source_counts(path)["calls"])
    with collect_losses() as report:
        messages = pc.to_messages(story)["messages"]
        conv = pc.to_sharegpt(story)["conversations"]
    assert sum(len(m.get("tool_calls") or ()) for m in messages) == n_calls
    assert sum(t["value"].count("<tool_call>") for t in conv if t["from"] == "gpt") == n_calls
    assert "content_flattened" not in report.counts
    text = orjson.dumps([messages, conv]).decode()
    assert "functionCall" not in text and "tool_use" not in text and "summary_text" not in text


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_same_source_round_trip(path):
    stories = pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    written = [orjson.loads(line) for line in pc.from_storyline("chat", stories).split("\n") if line]
    assert written == [orjson.loads(path.read_bytes())]
