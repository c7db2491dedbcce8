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
    name_of = {}
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
            name_of[item["call_id"]] = item["name"]
        elif item["type"] == "function_call_output":
            counts["results"].append((name_of[item["call_id"]], item["output"]))


def _typed(counts, messages):
    """Azure AI Evaluation's agent messages: text parts, ``tool_call`` parts, ``tool_result`` parts."""
    name_of = {}
    for msg in messages:
        texts = [p["text"] for p in msg["content"] if p["type"] == "text"]
        if texts and msg["role"] != "tool":
            counts["agent_texts" if msg["role"] == "assistant" else "user_texts"].append(texts)
        for part in msg["content"]:
            if part["type"] == "tool_call":
                counts["calls"].append((part["name"], part["arguments"]))
                name_of[part["tool_call_id"]] = part["name"]
            elif part["type"] == "tool_result":  # answers the call its message's tool_call_id names
                counts["results"].append((name_of[msg["tool_call_id"]], part["tool_result"]))


def records(path):
    if path.suffix == ".jsonl":
        return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
    return [orjson.loads(path.read_bytes())]


def source_counts(path):
    """What the source holds, by its own shape's rules (the provider's documentation, not the reader)."""
    counts = _empty()
    for value in records(path):
        _count_record(counts, value, path)
    return counts


def _count_record(counts, value, path):
    if "query" in value:
        _typed(counts, value["query"] + value["response"])
    elif "history" in value:
        _gemini(counts, value["history"])
    elif "candidates" in value:
        _gemini(counts, [value["candidates"][0]["content"]])
    elif value.get("type") == "message":
        _anthropic(counts, value)
    elif value.get("object") == "response":
        _responses(counts, value["output"])
    else:
        raise AssertionError(f"no counting rule for {path.name}")


def story_counts(stories, typed=False):
    counts = _empty()
    fn_of = {}
    for turn in (t for story in stories for t in story["turns"]):
        if turn["msg"]:
            # typed-part messages keep a text-only content list as it is (an OpenAI content list)
            text = [p["text"] for p in turn["msg"]] if typed else turn["msg"]
            counts["agent_texts" if turn["src"] == "agent" else "user_texts"].append(text)
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
    by_file = {}
    for row in ds:
        story = pc.row_to_story(row)
        by_file.setdefault(story["origin"]["document_id"].rsplit("/", 1)[-1], []).append(story)
    return by_file


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_every_call_result_text_and_reasoning_in_its_place(loaded, path):
    stories = loaded[path.name]
    assert {s["origin"]["format"] for s in stories} == {"chat"} and len(stories) == len(records(path))
    want = source_counts(path)
    got = story_counts(stories, typed=path.name.startswith("typed"))
    assert got == want
    assert want["calls"] or want["reasoning"]  # each file exercises its shape's structure
    # results are on the turn of the call they answer (Gemini's by name and order: no id in these files)
    for turn in (t for story in stories for t in story["turns"]):
        calls = {c["tcid"] for c in turn.get("tool_calls") or ()}
        for result in (turn.get("observation") or {}).get("results", ()):
            assert result["source_call_id"] in calls


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_training_outputs_write_each_call_once(loaded, path):
    n_calls = len(source_counts(path)["calls"])
    messages, conv = [], []
    with collect_losses() as report:
        for story in loaded[path.name]:
            messages += pc.to_messages(story)["messages"]
            conv += pc.to_sharegpt(story)["conversations"]
    assert sum(len(m.get("tool_calls") or ()) for m in messages) == n_calls
    assert sum(t["value"].count("<tool_call>") for t in conv if t["from"] == "gpt") == n_calls
    assert "content_flattened" not in report.counts
    text = orjson.dumps([messages, conv]).decode()
    for leak in ("functionCall", "tool_use", "summary_text", '"tool_call"', '"tool_result"'):
        assert leak not in text


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_same_source_round_trip(path):
    stories = pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    written = [orjson.loads(line) for line in pc.from_storyline("chat", stories).split("\n") if line]
    assert written == records(path)
