"""A ``~/.kimi-code/sessions`` folder through ``load_dataset(…, data_dir=…)`` as a user loads it: one row per
journal, the files Kimi Code keeps beside them left out and named, the subagent linked, and the training messages
counted by hand."""

from __future__ import annotations

import logging
import shutil

import datasets

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.sidecars import index_files
from tests.formats.kimi_code.cases import BY_HAND, SESSIONS, SMALL, SUBAGENT, TOOLS, VIS, WORK_DIR, raw_records


def load(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        return datasets.load_dataset(
            "pchronicle", "auto", data_dir=str(SESSIONS), split="train", cache_dir=str(tmp_path / "c")
        )


def test_the_folder_loads_one_row_per_journal(tmp_path, caplog):
    ds = load(tmp_path, caplog)
    assert sorted(ds["session"]) == [TOOLS, f"{TOOLS}/agents/{SUBAGENT}", SMALL]
    # two state.json, named as Kimi Code's (not Kimi CLI's, which lies at the same depth)
    assert "left out 2 files that hold no session" in caplog.text and "Kimi Code's session state" in caplog.text
    named = index_files(
        [
            f"{SESSIONS}/{WORK_DIR}/{TOOLS}/state.json",
            f"{SESSIONS}/{WORK_DIR}/session_index.jsonl",
            f"{SESSIONS}/{WORK_DIR}/{TOOLS}/agents/main/wire.jsonl",
            "home/.kimi/sessions/0a1b/7884d440/state.json",
        ]
    )
    assert sorted(named) == [0, 1, 3]
    assert named[0].startswith("Kimi Code's session state") and named[3].startswith("Kimi CLI's session state")
    msgs = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    files = {
        TOOLS: f"{TOOLS}/agents/main/wire.jsonl",
        f"{TOOLS}/agents/{SUBAGENT}": f"{TOOLS}/agents/{SUBAGENT}/wire.jsonl",
        SMALL: f"{SMALL}/agents/main/wire.jsonl",
    }
    for session, example in zip(ds["session"], msgs, strict=True):
        _n, prompts, own, cli, compactions, steps, calls, results, thinks, _errors = BY_HAND[files[session]]
        roles = [m["role"] for m in example["messages"]]
        counts = [roles.count(r) for r in ("system", "user", "assistant", "tool")]
        assert counts == [prompts, own + cli + compactions, steps, results]
        got_calls = [c for m in example["messages"] for c in m["tool_calls"] or ()]
        assert len(got_calls) == calls
        assert [c["id"] for c in got_calls] == [m["tool_call_id"] for m in example["messages"] if m["role"] == "tool"]
        assert sum(bool(m["reasoning_content"]) for m in example["messages"]) == thinks


def test_a_subagent_is_linked_to_the_call_that_started_it(tmp_path, caplog):
    ds = load(tmp_path, caplog)
    stories = {row["session"]: pc.row_to_story(row) for row in ds}
    child = f"{TOOLS}/agents/{SUBAGENT}"
    assert stories[child]["parent"] == {"psid": TOOLS, "rel": "subagent"}
    assert stories[TOOLS]["children"] == [child]
    [agent_call] = [c for t in stories[TOOLS]["turns"] for c in t.get("tool_calls") or () if c["fn"] == "Agent"]
    assert agent_call["extra"] == {"subagent": child}
    # the subagent's task is the user's turn of its document, not a context turn
    assert [t.get("kind") for t in stories[child]["turns"] if t["src"] == "user"] == [None]


def test_the_cli_converts_a_journal_back_to_itself(tmp_path, capsys):
    path = SESSIONS / WORK_DIR / TOOLS / "agents" / "main" / "wire.jsonl"
    out = tmp_path / "out.jsonl"
    assert main(["convert", str(path), "--to", "kimi-code", "-o", str(out)]) == 0
    assert raw_records(out) == raw_records(path)
    assert main(["inspect", "--losses", str(path)]) == 0
    said = capsys.readouterr().out
    assert "kimi-code: no loss" in said and "storyline: no loss" in said


def test_protocol_1_1_and_a_journal_of_no_conversation(tmp_path, caplog):
    # Kimi Code's own viewer fixtures (tests/data/kimi_code/README.md): an answer as an assistant message, a
    # compaction, and (their third file, written here) a subagent journal that holds only its configuration: left
    # out, said so
    home = tmp_path / "sessions"
    shutil.copytree(VIS, home)
    idle = home / "wd_vis_000000000000" / "sample-main" / "agents" / "agent-0" / "wire.jsonl"
    idle.parent.mkdir(parents=True)
    idle.write_text(
        '{"type":"metadata","protocol_version":"1.1","created_at":1779256900000}\n'
        '{"type":"config.update","cwd":"/tmp/work","profileName":"sub","systemPrompt":"You are a sub-agent.",'
        '"time":1779256900001}\n'
    )
    with caplog.at_level(logging.WARNING):
        ds = datasets.load_dataset(
            "pchronicle", "auto", data_dir=str(home), split="train", cache_dir=str(tmp_path / "c")
        )
    stories = {row["session"]: pc.row_to_story(row) for row in ds}
    assert sorted(stories) == ["sample-compaction", "sample-main"]
    assert "sample-main/agents/agent-0/wire.jsonl" in caplog.text
    turns = stories["sample-compaction"]["turns"]
    assert [(t["src"], t["msg"], t.get("kind")) for t in turns] == [
        ("system", "You are Kimi.", None),
        ("user", "before compaction", None),
        ("agent", "assistant reply", None),
        ("user", "compacted summary", "context"),
        ("user", "after compaction", None),
    ]
    assert [(t["src"], t["msg"]) for t in stories["sample-main"]["turns"]] == [
        ("system", "You are Kimi."),
        ("user", "hi"),
        ("agent", "hello"),
    ]
