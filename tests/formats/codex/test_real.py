"""Real Codex rollouts (tests/data/codex/README.md): every call and result, counted here from the JSON lines
without the reader; names resolved; usage per turn summed once; the compaction not a user turn of the training
text; developer messages kept as developer; each file written back as equal JSON lines. What datasets + teich
give for the same files is measured beside (docs/formats/codex.md, "what datasets+teich lose").

``PCHRONICLE_CODEX_CORPUS=<folder>`` adds every ``*.jsonl*`` file of a folder (a whole ~/.codex/sessions).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.compression import decompress
from pchronicle_datasets.formats import codex, detect

DATA = Path(__file__).parents[2] / "data" / "codex"
CALLS = {"function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call",
         "image_generation_call"}  # fmt: skip
OUTPUTS = {"function_call_output", "custom_tool_call_output"}
names_of = ("function_call", "custom_tool_call")


def _files() -> list[Path]:
    files = sorted(p for p in DATA.glob("*.jsonl") if ".written." not in p.name)
    corpus = os.environ.get("PCHRONICLE_CODEX_CORPUS")
    if corpus:
        files += sorted(p for p in Path(corpus).rglob("*.jsonl*") if p.is_file())
    return files


FILES = _files()


def _lines(path: Path) -> list[dict]:
    data = decompress(path.read_bytes()) if path.suffix != ".jsonl" else path.read_bytes()
    return [orjson.loads(x) for x in data.splitlines() if x.strip()]


def _items(lines: list[dict]) -> list[dict]:
    return [x["payload"] for x in lines if x.get("type") == "response_item"]


def _story(path: Path) -> dict:
    data = decompress(path.read_bytes()) if path.suffix != ".jsonl" else path.read_bytes()
    (story,) = codex.decode(data, path.name)
    return story


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:40])
def test_every_call_and_result_with_its_name(path):
    items, story = _items(_lines(path)), _story(path)
    calls = [c for t in story["turns"] for c in t.get("tool_calls") or ()]
    assert len(calls) == sum(i["type"] in CALLS for i in items)
    outputs = [i for i in items if i["type"] in OUTPUTS]
    results = [r for t in story["turns"] for r in (t.get("observation") or {}).get("results") or ()]
    assert len(results) == len(outputs)
    names = {i["call_id"]: i["name"] for i in items if i["type"] in ("function_call", "custom_tool_call")}
    by_tcid = {c["tcid"]: c for c in calls}
    for out, res in zip(outputs, results, strict=True):
        assert res["source_call_id"] == out["call_id"] and res["content"] == out["output"]
        assert by_tcid[res["source_call_id"]]["fn"] == names[out["call_id"]]  # the result's name, resolved
    hosted = {"local_shell_call": "local_shell", "web_search_call": "web_search", "tool_search_call": "tool_search",
              "image_generation_call": "image_generation"}  # fmt: skip
    counted = Counter(
        i.get("name") if i["type"] in names_of else hosted[i["type"]] for i in items if i["type"] in CALLS
    )
    assert {s["tool"]: s["count"] for s in pc.compute_tool_stats(story)} == dict(counted)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:40])
def test_usage_per_turn_is_each_distinct_token_count_once(path):
    lines, story = _lines(path), _story(path)
    expected, previous = {"input_tokens": 0, "output_tokens": 0}, None
    for x in lines:
        info = (
            x["payload"].get("info")
            if x.get("type") == "event_msg" and x["payload"].get("type") == "token_count"
            else None
        )
        if not isinstance(info, dict) or info.get("total_token_usage") == previous:
            continue
        previous = info.get("total_token_usage")
        for key in expected:
            expected[key] += (info.get("last_token_usage") or {}).get(key, 0)
    turns = story["turns"]
    unattributed = story["meta"]["codex"].get("unattributed_usage", {})
    got_in = sum(t.get("metrics", {}).get("prompt_tokens", 0) for t in turns) + unattributed.get("input_tokens", 0)
    got_out = sum(t.get("metrics", {}).get("completion_tokens", 0) for t in turns) + unattributed.get(
        "output_tokens", 0
    )
    assert (got_in, got_out) == (expected["input_tokens"], expected["output_tokens"])
    assert all(t["src"] == "agent" for t in turns if "metrics" in t)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:40])
def test_training_text_roles_compaction_and_developer(path):
    items, story = _items(_lines(path)), _story(path)
    messages = pc.to_messages(story, arguments="object")["messages"]
    roles = [m["role"] for m in messages]
    source_roles = [i.get("role") for i in items if i["type"] == "message"]
    # every user message of the training text is a user message of the source: a compaction is not one
    assert roles.count("user") == source_roles.count("user")
    assert roles.count("developer") == source_roles.count("developer")  # developer stays developer
    compactions = [t for t in story["turns"] if (t.get("extra") or {}).get("compaction")]
    assert len(compactions) == sum(x.get("type") == "compacted" for x in _lines(path)) + sum(
        i["type"] == "compaction" for i in items
    )
    for turn in compactions:
        assert turn["kind"] == "context" and turn["src"] == "system"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:40])
def test_same_source_writer_gives_equal_json_lines(path):
    lines, story = _lines(path), _story(path)
    back = [orjson.loads(x) for x in codex.encode([story]).splitlines()]
    assert back == lines
    data = path.read_bytes() if path.suffix == ".jsonl" else decompress(path.read_bytes())
    assert detect(data) is codex


def test_the_compacted_line_keeps_its_replacement_history():
    path = DATA / "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.excerpt.jsonl"
    (line,) = [x for x in _lines(path) if x["type"] == "compacted"]
    (turn,) = [t for t in _story(path)["turns"] if (t.get("extra") or {}).get("compaction") == "compacted"]
    assert turn["extra"]["replacement_history"] == line["payload"]["replacement_history"]
    assert turn["msg"] == line["payload"]["message"] and turn["ts"] == line["timestamp"]


def test_what_datasets_and_teich_lose_on_the_same_file(tmp_path):
    """The measured half of docs/formats/codex.md's loss table: datasets' json builder (teich) on the excerpt."""
    pytest.importorskip("teich")
    datasets = pytest.importorskip("datasets")
    path = DATA / "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.excerpt.jsonl"
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / path.name).write_bytes(path.read_bytes())
    row = datasets.load_dataset(
        "json", data_files=str(tmp_path / "in" / "*.jsonl"), split="train", cache_dir=str(tmp_path / "c")
    )[0]
    items, story = _items(_lines(path)), _story(path)
    if "num_tool_calls" not in row:
        pytest.skip("datasets did not hand the file to teich")
    ours = pc.story_to_row(story)["num_tool_calls"]
    assert int(row["num_tool_calls"]) == sum(i["type"] == "function_call" for i in items) < ours
    roles = [m["role"] for m in row["messages"]]
    assert "developer" not in roles and roles.count("system") >= sum(i.get("role") == "developer" for i in items)
    assert "usage" not in str(row["metadata"]) and any("metrics" in t for t in story["turns"])
    assert "web_search" not in str(row["messages"]) and "compacted" not in str(row["messages"])
