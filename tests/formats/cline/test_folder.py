"""A Cline ``tasks`` folder as it lies on disk: ``load_dataset("pchronicle", "auto", data_dir=…)``, the batched
``to_messages`` and the CLI read each task's history as one row and leave ``ui_messages.json``,
``task_metadata.json`` and ``context_history.json`` out, said once (before, the load stopped on them)."""

from __future__ import annotations

import json
import shutil

from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.sidecars import index_files

from .common import DATA, TASKS, by_hand


def test_a_tasks_folder_loads_beside_the_files_cline_keeps_there(tmp_path, caplog, capsys):
    with caplog.at_level("WARNING"):
        ds = load_dataset("pchronicle", "auto", data_dir=str(DATA), split="train", cache_dir=str(tmp_path))
    # the two task histories, the two SDK sessions and the two SDK compaction fixtures (one session's), and the
    # Roo Code and Kilo Code tasks (test_roo_kilo.py)
    assert sorted(ds["session"]) == [
        "0f3c2a9e-5b7d-4e21-9c3a-2d8e6f1a4b90",
        "1777073170000",
        "1777080000000",
        "1784094124598_rruoq",
        "1784094124598_rruoq",
        "1784094124598_rruoq",
        "4c8e1d2f-9a3b-4f6e-8d1c-7b5a3e2f1d09",
        "9d2e7c41-0b6a-4f38-a5e2-1c7f9b3d5e28",
        "fixture-success-01",
    ]
    # Cline's 3 files beside its history, Roo's 4 (with its index of tasks) and Kilo's 2
    assert "left out 9 files that hold no session: kilo/kilocode.kilo-code/tasks/" in caplog.text
    out = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    for session, row in zip(ds["session"], out, strict=True):
        if not session.startswith("1777"):
            continue  # the SDK's sessions: test_sdk.py
        counted = by_hand(TASKS / session / "api_conversation_history.json")
        roles = [m["role"] for m in row["messages"]]
        assert roles.count("assistant") == counted["assistant"]
        assert roles.count("tool") == counted["results"]
        assert roles.count("user") == counted["user"]  # each user message: one user turn (context ones too)
        assert sum(len(m["tool_calls"] or ()) for m in row["messages"]) == counted["calls"]
    assert main(["inspect", "--losses", str(DATA)]) == 0
    assert "left out 9 files that hold no session" in capsys.readouterr().err


def test_the_index_files_are_named_only_where_cline_writes_them():
    names = [
        "tasks/1/api_conversation_history.json",
        "tasks/1/ui_messages.json",
        "tasks/1/task_metadata.json",
        "tasks/1/context_history.json",
        "tasks/1/settings.json",
        "project/settings.json",
        "tasks/1/history_item.json",  # Roo Code's
        "tasks/_index.json",
        "project/_index.json",
        "project/history_item.json",
    ]
    assert sorted(index_files(names)) == [1, 2, 3, 4, 6, 7]


def test_the_cli_converts_a_tasks_folder(tmp_path):
    folder = tmp_path / "saoudrizwan.claude-dev"
    shutil.copytree(DATA / "tasks", folder / "tasks")
    out = tmp_path / "out.storyline.jsonl"
    assert main(["convert", str(folder), "--to", "storyline", "-o", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 2


def test_the_sdk_sessions_folder_loads_beside_the_manifests(tmp_path, caplog):
    """Cline's SDK keeps ``<id>.json`` (the session's manifest) and ``<id>.compaction.json`` (its compaction state)
    beside ``<id>.messages.json``: the manifest is read as no conversation and named, the state left out by name."""
    sessions = tmp_path / "data" / "sessions"
    shutil.copytree(DATA / "sessions", sessions)
    folder = sessions / "1784094124598_rruoq"
    manifest = {  # the shape of cline/cline sdk/packages/core/fixtures/session/session.json
        "version": 1,
        "session_id": "1784094124598_rruoq",
        "source": "cli",
        "started_at": "2026-07-15T05:42:04.609Z",
        "ended_at": "2026-07-15T05:42:04.865Z",
        "status": "completed",
        "model": "anthropic/claude-opus-4.8-fast",
        "messages_path": "/home/u/.cline/data/sessions/1784094124598_rruoq/1784094124598_rruoq.messages.json",
    }
    (folder / "1784094124598_rruoq.json").write_text(json.dumps(manifest))
    (folder / "1784094124598_rruoq.compaction.json").write_text(json.dumps({"version": 1, "entries": []}))
    with caplog.at_level("WARNING"):
        ds = load_dataset("pchronicle", "auto", data_dir=str(sessions), split="train", cache_dir=str(tmp_path / "c"))
    assert sorted(ds["session"]) == ["1784094124598_rruoq", "fixture-success-01"]
    assert "1784094124598_rruoq.compaction.json" in caplog.text  # left out by name
    assert "1784094124598_rruoq/1784094124598_rruoq.json" in caplog.text  # no conversation: named
