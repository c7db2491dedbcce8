"""A ``~/.kimi/sessions`` folder through ``load_dataset(…, data_dir=…)`` as a user loads it: one row per context
file, the files Kimi CLI keeps beside them left out and named, subagents linked, and the training messages
counted by hand."""

from __future__ import annotations

import logging

import datasets

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.sidecars import index_files
from tests.formats.kimi_cli.cases import BY_HAND, FIRST, SECOND, SESSIONS, SUBAGENT, WORK_DIR_HASH, raw_records


def load(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        return datasets.load_dataset(
            "pchronicle", "auto", data_dir=str(SESSIONS), split="train", cache_dir=str(tmp_path / "c")
        )


def test_the_folder_loads_one_row_per_context(tmp_path, caplog):
    ds = load(tmp_path, caplog)
    assert sorted(ds["session"]) == [
        FIRST,
        SECOND,
        f"{SECOND}/context_1",
        f"{SECOND}/subagents/{SUBAGENT}",
    ]
    # three wire.jsonl, two state.json, a meta.json: named by the format's INDEX_FILES
    assert "left out 6 files that hold no session" in caplog.text and "session state" in caplog.text
    beside = sorted(str(p.relative_to(SESSIONS)) for p in SESSIONS.rglob("*") if p.suffix in (".json", ".jsonl"))
    named = index_files([str(SESSIONS / name) for name in beside])
    assert sorted(beside[i].rsplit("/", 1)[1] for i in named) == ["meta.json"] + ["state.json"] * 2 + ["wire.jsonl"] * 3
    assert named[next(i for i, name in enumerate(beside) if name.endswith("wire.jsonl"))].startswith(
        "Kimi CLI's event stream"
    )
    # the most specific name wins: a subagent's meta.json is Kimi CLI's, not the meta.json of a Qwen Code project
    assert named[next(i for i, name in enumerate(beside) if name.endswith("meta.json"))].startswith(
        "Kimi CLI's record of a subagent"
    )
    msgs = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    by_session = {
        FIRST: f"{FIRST}/context.jsonl",
        SECOND: f"{SECOND}/context.jsonl",
        f"{SECOND}/context_1": f"{SECOND}/context_1.jsonl",
        f"{SECOND}/subagents/{SUBAGENT}": f"{SECOND}/subagents/{SUBAGENT}/context.jsonl",
    }
    for session, example in zip(ds["session"], msgs, strict=True):
        _n, prompts, users, agents, results, _cp, _usage, calls, thinks, _errors = BY_HAND[by_session[session]]
        roles = [m["role"] for m in example["messages"]]
        assert [roles.count(r) for r in ("system", "user", "assistant", "tool")] == [prompts, users, agents, results]
        got_calls = [c for m in example["messages"] for c in m["tool_calls"] or ()]
        assert len(got_calls) == calls
        assert [c["id"] for c in got_calls] == [m["tool_call_id"] for m in example["messages"] if m["role"] == "tool"]
        assert sum(bool(m["reasoning_content"]) for m in example["messages"]) == thinks


def test_a_subagent_is_linked_to_the_call_that_started_it(tmp_path, caplog):
    ds = load(tmp_path, caplog)
    stories = {row["session"]: pc.row_to_story(row) for row in ds}
    child = f"{SECOND}/subagents/{SUBAGENT}"
    assert stories[child]["parent"] == {"psid": SECOND, "rel": "subagent"}
    rotated = stories[f"{SECOND}/context_1"]  # the Agent call was made before the compaction
    assert rotated["children"] == [child]
    [agent_call] = [c for t in rotated["turns"] for c in t.get("tool_calls") or () if c["fn"] == "Agent"]
    assert agent_call["extra"] == {"subagent": child}
    assert rotated["extra"] == {"kimi_cli": {"work_dir_hash": WORK_DIR_HASH, "rotated": 1}}


def test_the_cli_converts_a_context_back_to_itself(tmp_path, capsys):
    path = SESSIONS / WORK_DIR_HASH / FIRST / "context.jsonl"
    out = tmp_path / "out.jsonl"
    assert main(["convert", str(path), "--to", "kimi-cli", "-o", str(out)]) == 0
    assert raw_records(out) == raw_records(path)
    assert main(["inspect", "--losses", str(path)]) == 0
    said = capsys.readouterr().out
    assert "kimi-cli: no loss" in said and "storyline: no loss" in said
