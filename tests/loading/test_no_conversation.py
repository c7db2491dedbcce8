"""A session file that holds no conversation is left out of a read, named in one note, under either policy.

Real session folders hold such files beside the sessions: Claude Code's summary files (``summary`` lines whose
``leafUuid`` names a message of another session file; microsoft/amplifier's
``ai_working/claude_code_logging/summary_files_analysis.md``) and files of ``file-history-snapshot`` lines, a
Codex rollout or a Pi session of its header only, a Gemini CLI session with no message. Before, the first one
stopped ``load_dataset("pchronicle", "auto", data_dir="~/.claude/projects")`` (docs/builder.md, "Files that hold
no conversation").
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import datasets
import pyarrow as pa
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError, NoConversationError
from pchronicle_datasets.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"
SESSION = DATA / "claude_code" / "entire_2.0.76" / "488c5296-fc78-4fdf-8cfd-f1cae9454bd0.jsonl"  # real, 2.0.76
REAL_LINES = SESSION.read_bytes().splitlines(keepends=True)
# The session's own first two lines are its real summary lines; a snapshot line of the same file.
SUMMARIES = b"".join(REAL_LINES[:2])
SNAPSHOT = next(line for line in REAL_LINES if b'"type":"file-history-snapshot"' in line)


def lines(*records: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


BOOKKEEPING = {
    "claude-code summaries": ("claude-code", SUMMARIES),
    "claude-code snapshots": ("claude-code", SNAPSHOT),
    "codex header": (
        "codex",
        lines(
            {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s", "cwd": "/w"}},
            {"timestamp": "2026-01-01T00:00:01Z", "type": "event_msg", "payload": {"type": "task_started"}},
        ),
    ),
    "pi header": ("pi", lines({"type": "session", "version": 3, "id": "s1", "timestamp": "t", "cwd": "/w"})),
    "gemini-cli no message": (
        "gemini-cli",
        json.dumps({"sessionId": "s", "projectHash": "h", "startTime": "t", "lastUpdated": "t", "messages": []}),
    ),
    "copilot-cli no message": (
        "copilot-cli",
        lines(
            {
                "type": "session.start",
                "id": "e1",
                "timestamp": "t",
                "parentId": None,
                "data": {"sessionId": "s", "version": 1, "producer": "copilot-agent", "startTime": "t"},
            }
        ),
    ),
    "opencode no message": ("opencode", json.dumps({"info": {"id": "ses_1", "title": "t"}, "messages": []})),
    "kimi-code records only": (
        "kimi-code",
        lines(
            {"type": "metadata", "protocol_version": "1.4"},
            {"type": "config.update", "systemPrompt": "You are Kimi Code CLI."},
            {"type": "turn.prompt", "input": [{"type": "text", "text": "hi"}]},
            {"type": "context.append_loop_event", "event": {"type": "step.begin", "uuid": "s0"}},
        ),
    ),
    "kimi-cli bookkeeping only": (
        "kimi-cli",
        lines({"role": "_system_prompt", "content": "You are Kimi CLI."}, {"role": "_checkpoint", "id": 0}),
    ),
    "goose no message": (
        "goose",
        json.dumps({"id": "20260805_1", "working_dir": "/w", "extension_data": {}, "conversation": []}),
    ),
    "qwen-code system records only": (
        "qwen-code",
        lines(
            {
                "uuid": "a",
                "parentUuid": None,
                "sessionId": "s",
                "timestamp": "t",
                "type": "system",
                "subtype": "custom_title",
                "systemPayload": {"customTitle": "x"},
            },
        ),
    ),
}


@pytest.mark.parametrize("case", BOOKKEEPING)
def test_a_file_of_bookkeeping_only_holds_no_conversation(case):
    fmt, data = BOOKKEEPING[case]
    with pytest.raises(NoConversationError) as got:
        pc.into_storyline(fmt, data, document_id="f.jsonl")
    assert isinstance(got.value, FormatError) and got.value.document_id == "f.jsonl"


TOOL_ONLY = {"role": "tool", "content": []}  # a role Goose does not write: the message stays residual, whole


@pytest.mark.parametrize(
    ("fmt", "data"),
    [
        ("gemini-cli", json.dumps({"sessionId": "s", "messages": [{"id": "m", "type": "no-such-type"}]})),
        ("opencode", json.dumps({"info": {"id": "ses_1"}, "messages": [{"info": {"role": "narrator"}}]})),
        ("qwen-code", json.dumps({"uuid": "a", "parentUuid": None, "sessionId": "s", "type": "user", "message": {}})),
        ("kimi-cli", lines({"role": "_checkpoint", "id": 0}, {"role": "user", "text": "hi"})),
        (
            "goose",
            json.dumps({"id": "s", "working_dir": "/w", "extension_data": {}, "conversation": [TOOL_ONLY]}),
        ),
        ("kimi-code", lines({"type": "context.append_message", "message": {"role": "user", "text": "hi"}})),
    ],
)
def test_messages_that_all_fall_into_residual_are_still_refused(fmt, data):
    with pytest.raises(FormatError) as got:
        pc.into_storyline(fmt, data, document_id="f.json")
    assert not isinstance(got.value, NoConversationError)


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    """A ~/.claude/projects folder: one real session, its summary file and a snapshot-only file beside it."""
    root = tmp_path / "projects" / "-home-me-app"
    root.mkdir(parents=True)
    shutil.copy(SESSION, root / SESSION.name)
    (root / "11111111-2222-4333-8444-555555555555.jsonl").write_bytes(SUMMARIES)
    (root / "21111111-2222-4333-8444-555555555555.jsonl").write_bytes(SNAPSHOT)
    return tmp_path / "projects"


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)


NOTE = "left out 2 files that hold no conversation: -home-me-app/11111111-2222-4333-8444-555555555555.jsonl ("


@pytest.mark.parametrize("kwargs", [{}, {"num_proc": 2}, {"streaming": True}], ids=["one", "workers", "stream"])
def test_the_folder_loads_its_sessions_and_names_what_it_left_out(projects, tmp_path, caplog, kwargs):
    with caplog.at_level(logging.WARNING):
        dd = datasets.load_dataset(
            "pchronicle", "auto", data_dir=str(projects), cache_dir=str(tmp_path / "cache"), **kwargs
        )
    rows = list(dd["train"])
    assert [r["origin"]["document_id"] for r in rows] == [f"-home-me-app/{SESSION.name}"]
    alone = pc.into_storyline("claude-code", SESSION.read_bytes(), document_id=f"-home-me-app/{SESSION.name}")
    assert [pc.row_to_story(r) for r in rows] == alone
    if kwargs.get("streaming"):  # no generation to sum up: a note per file
        assert caplog.text.count("holds no conversation") == 2
    else:
        assert caplog.text.count(NOTE) == 1
        caplog.clear()
        with caplog.at_level(logging.WARNING):  # from the cache: said again
            datasets.load_dataset("pchronicle", "auto", data_dir=str(projects), cache_dir=str(tmp_path / "cache"))
        assert f"loaded from the cache: generating it {NOTE}" in caplog.text


def test_a_load_of_no_conversation_at_all_says_so(projects, tmp_path):
    (projects / "-home-me-app" / SESSION.name).unlink()
    with pytest.raises(NoConversationError, match="no file of this load holds a conversation"):
        datasets.load_dataset("pchronicle", "auto", data_dir=str(projects), cache_dir=str(tmp_path / "cache"))


def test_read_batches_and_the_cli_leave_them_out_too(projects, tmp_path, capsys):
    said: list[str] = []
    table = pa.Table.from_batches(pc.read_batches(projects, log=said.append), schema=pc.STORYLINE_FEATURES.arrow_schema)
    assert table.num_rows == 1 and len(said) == 1 and said[0].startswith(NOTE)
    out = tmp_path / "out.jsonl"
    assert main(["convert", str(projects), "--to", "storyline", "-o", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 1
    assert "left out 2 files that hold no conversation:" in capsys.readouterr().err


def test_validate_and_inspect_count_them_apart_from_problems(projects, capsys):
    assert main(["validate", str(projects)]) == 0
    assert "1 valid document(s), 0 problem(s)" in capsys.readouterr().err
    assert main(["inspect", "--json", str(projects)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["documents"] == 1 and report["bad_records"] == 0
    assert [Path(p).name for p in report["files_without_conversation"]] == [
        "11111111-2222-4333-8444-555555555555.jsonl",
        "21111111-2222-4333-8444-555555555555.jsonl",
    ]
