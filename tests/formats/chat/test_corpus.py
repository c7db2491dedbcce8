"""The public OpenAI-style message files (``tests/data/chat/corpus/``, copied from the shared corpora) load with
``load_dataset("pchronicle", "auto")``; every tool call and result is in the documents; ``to_messages`` gives
back roles, call ids, names, arguments and result linking; ``to_sharegpt`` runs on them."""

from __future__ import annotations

import orjson
import pytest
from datasets import load_dataset

import pchronicle_datasets as pc

from .common import CORPUS, source_records, written_records

FILES = sorted(CORPUS.glob("*.json"))


def _messages(record):
    return record if isinstance(record, list) else record["messages"]


def _all_messages(record):
    """The conversation's messages, with a litellm response's message last."""
    messages = list(_messages(record))
    if isinstance(record, dict) and isinstance(record.get("response"), dict):
        messages.append(record["response"]["choices"][0]["message"])
    return messages


def test_load_dataset_auto(tmp_path):
    ds = load_dataset("pchronicle", "auto", data_files=[str(f) for f in FILES], split="train", cache_dir=str(tmp_path))
    assert ds.num_rows == len(FILES)
    stories = [pc.row_to_story(row) for row in ds]
    assert {s["origin"]["format"] for s in stories} == {"chat"}
    by_file = {s["origin"]["document_id"].rsplit("/", 1)[-1]: s for s in stories}
    for path in FILES:
        story = by_file[path.name]
        [record] = source_records(path)
        calls = []
        for m in _all_messages(record):
            calls += [
                (c["id"], c["function"]["name"], orjson.loads(c["function"]["arguments"]))
                for c in m.get("tool_calls") or ()
            ]
            if isinstance(m.get("function_call"), dict):  # legacy: no id in the source, a generated one here
                fc = m["function_call"]
                calls.append((None, fc["name"], orjson.loads(fc["arguments"])))
        got = story_calls(story)
        assert [(None if want[0] is None else g[0], *g[1:]) for g, want in zip(got, calls, strict=True)] == calls
        assert len(got) == len(calls)
        results = [m for m in _all_messages(record) if m["role"] in ("tool", "function")]
        got = [r for t in story["turns"] for r in (t.get("observation") or {}).get("results", [])]
        assert [r["content"] for r in got] == [m["content"] for m in results]


def story_calls(story):
    return [(c["tcid"], c["fn"], c["args"]) for t in story["turns"] for c in t.get("tool_calls") or ()]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_same_source_round_trip(path):
    stories = pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    assert written_records(pc.from_storyline("chat", stories)) == source_records(path)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_to_messages_gives_back_roles_ids_names_arguments_and_links(path):
    [story] = pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    [record] = source_records(path)
    out = pc.to_messages(story, arguments="object")["messages"]
    source = _all_messages(record)
    legacy = {"function": "tool"}
    assert [m["role"] for m in out] == [legacy.get(m["role"], m["role"]) for m in source]
    names = {}
    for got, want in zip(out, source, strict=True):
        for g, w in zip(got.get("tool_calls") or (), want.get("tool_calls") or (), strict=False):
            assert (g["id"], g["function"]["name"]) == (w["id"], w["function"]["name"])
            assert g["function"]["arguments"] == orjson.loads(w["function"]["arguments"])
            names[g["id"]] = g["function"]["name"]
        if isinstance(want.get("function_call"), dict):
            fc = want["function_call"]
            [g] = got["tool_calls"]
            assert (g["function"]["name"], g["function"]["arguments"]) == (fc["name"], orjson.loads(fc["arguments"]))
            names[g["id"]] = fc["name"]
        if want["role"] == "tool":
            assert got["tool_call_id"] == want["tool_call_id"]
            assert got["name"] == want["name"] == names[want["tool_call_id"]]
            assert got["content"] == want["content"]
        if want["role"] == "function":
            assert got["name"] == want["name"] and names[got["tool_call_id"]] == want["name"]


def test_litellm_log_keeps_the_native_calls_of_raw_messages_as_residual():
    path = CORPUS / "openhands_sdk_litellm_log_deepseek-chat_nonfncall_1757015076.651.json"
    [story] = pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    fields = story["unknown_fields"]["sources"]["chat"]["fields"]
    raw_ids = [c["id"] for m in fields["/raw_messages"] for c in m.get("tool_calls") or ()]
    assert raw_ids == ["call_00_MYiKq2phNBtYd9chUKjkAgdV", "toolu_02", "toolu_03"]
    assert len(story["agent"]["tools"]) == 3


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_to_sharegpt_runs(path):
    [story] = pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    conv = pc.to_sharegpt(story)["conversations"]
    assert conv[0]["from"] == "system"
    calls = sum(len(t.get("tool_calls") or ()) for t in story["turns"])
    assert sum(c["value"].count("<tool_call>") for c in conv if c["from"] == "gpt") == calls
    results = sum(len((t.get("observation") or {}).get("results", [])) for t in story["turns"])
    assert sum(c["value"].count("<tool_response>") for c in conv if c["from"] == "tool") == results
