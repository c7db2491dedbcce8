"""A ``~/.qwen`` folder through ``load_dataset(…, data_dir=…)`` as a user loads it: one row per session, the files
Qwen Code keeps beside them left out and named, and the training messages counted by hand."""

from __future__ import annotations

import logging

import datasets

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from tests.formats.qwen_code.cases import BY_HAND, HOME, raw_records


def test_the_folder_loads_one_row_per_session(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        ds = datasets.load_dataset(
            "pchronicle", "auto", data_dir=str(HOME), split="train", cache_dir=str(tmp_path / "c")
        )
    assert sorted(s[:8] for s in ds["session"]) == sorted(BY_HAND)
    said = caplog.text
    assert "meta.json" in said and "left out 2 files" in said
    msgs = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    for session, example in zip(ds["session"], msgs, strict=True):
        _n, users, agents, results, *_ = BY_HAND[session[:8]]
        roles = [m["role"] for m in example["messages"]]
        assert roles.count("user") == users and roles.count("assistant") == agents
        assert roles.count("tool") == results
        calls = [c for m in example["messages"] for c in m["tool_calls"] or ()]
        tool_ids = [m["tool_call_id"] for m in example["messages"] if m["role"] == "tool"]
        assert [c["id"] for c in calls] == tool_ids  # each result follows its call


def test_the_cli_converts_a_session_back_to_itself(tmp_path, capsys):
    [path] = (HOME / "projects" / "-work" / "chats").glob("c190cd9d*.jsonl")
    out = tmp_path / "out.jsonl"
    assert main(["convert", str(path), "--to", "qwen-code", "-o", str(out)]) == 0
    assert raw_records(out) == raw_records(path)
    assert main(["inspect", "--losses", str(path)]) == 0
    said = capsys.readouterr().out
    assert "qwen-code: no loss" in said and "storyline: no loss" in said
