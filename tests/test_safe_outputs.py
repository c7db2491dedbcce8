"""Files named from data stay in their output folder and never clash; nothing from input data is run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.paths import document_file_names, safe_path

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = [
    "../escape",
    "../../etc/passwd",
    "/abs/path",
    "a/b",
    "a\\b",
    "C:\\Windows\\x",
    "nul\x00byte",
    "CON",
    "con",
    "aux.txt",
    "LPT1",
    ".",
    "..",
    "...",
    ".hidden",
    "",
    " ",
    "x" * 5000,
    "Session",
    "session",
    "SESSION",
    "é",
    "e\u0301",
    "tab\there",
    "new\nline",
    '*?<>|:"',
]


def story(session: str) -> dict:
    return {
        "schema_version": "storyline/v1",
        "session": session or "s",
        "agent": {"id": "a"},
        "turns": [{"id": 1, "src": "user", "msg": session}],
    }


@given(st.lists(st.text(max_size=40), min_size=1, max_size=25))
@settings(max_examples=300, deadline=None)
def test_names_are_safe_and_distinct(names):
    files = document_file_names(names)
    assert len(files) == len(names)
    assert len({f.lower() for f in files}) == len(files)  # distinct on case-insensitive disks too
    for f in files:
        assert re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*\.storyline\.json", f), f
        assert len(f) < 200 and ".." not in f.removesuffix(".storyline.json").strip(".")[:1]


def test_plain_unique_ids_keep_their_name():
    assert document_file_names(["run-1", "s_2.b"]) == ["run-1.storyline.json", "s_2.b.storyline.json"]


def test_the_same_ids_give_the_same_names():
    assert document_file_names(HOSTILE) == document_file_names(list(HOSTILE))


def test_safe_path_refuses_to_leave_the_folder(tmp_path):
    assert safe_path(tmp_path, "a.storyline.json").parent == tmp_path.resolve()
    for bad in ("../a.json", "/etc/passwd", "sub/a.json"):
        with pytest.raises(ValueError, match="outside"):
            safe_path(tmp_path, bad)


def test_cli_per_document_files_stay_inside_and_do_not_clash(tmp_path):
    src = tmp_path / "in.storyline.jsonl"
    src.write_text(pc.from_storyline("storyline", [story(s) for s in HOSTILE if s]), encoding="utf-8")
    out = tmp_path / "out" / "sessions"
    assert main(["convert", str(src), "--to", "storyline", "--per-document", "-o", str(out)]) == 0
    written = sorted(out.iterdir())
    assert len(written) == len([s for s in HOSTILE if s])
    assert all(p.parent == out for p in written)  # nothing outside, nothing in subfolders
    assert sorted(p.name for p in (tmp_path).iterdir()) == ["in.storyline.jsonl", "out"]
    sessions = sorted(pc.into_storyline("storyline", p.read_bytes())[0]["session"] for p in written)
    assert sessions == sorted(s for s in HOSTILE if s)  # one file per document, none overwritten


def test_sharegpt_output_folder_uses_fixed_names(tmp_path):
    src = ROOT / "pchronicle_datasets" / "samples" / "openai_msg" / "gateway_capture.jsonl"
    assert main(["convert", str(src), "--to", "sharegpt", "-o", str(tmp_path / "train")]) == 0
    assert sorted(p.name for p in (tmp_path / "train").iterdir()) == [
        "failed_trajectories.jsonl",
        "trajectory_samples.jsonl",
    ]


def test_no_code_is_run_or_unpickled_from_input_data():
    """The package never evaluates, executes or unpickles anything: input is parsed as JSON only."""
    pattern = re.compile(
        r"(?<![\w.])(eval|exec|compile)\(|pickle\.loads?\(|marshal\.loads?\(|yaml\.load\(|__import__\("
    )
    offenders = []
    for path in (ROOT / "pchronicle_datasets").rglob("*.py"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line) and not line.lstrip().startswith(("#", ">>>")):
                offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert offenders == []


def test_a_quarantine_entry_is_data_not_code(tmp_path):
    """What a bad record holds goes into the quarantine file as a JSON string, whatever it looks like."""
    src = tmp_path / "bad.jsonl"
    src.write_text('{"__class__": "os.system", "cmd": "rm -rf /"}\n{"session_id": 1}\n', encoding="utf-8")
    quarantine = tmp_path / "q.jsonl"
    code = main(
        [
            "convert",
            str(src),
            "--from",
            "openai-msg",
            "--to",
            "storyline",
            "-o",
            str(tmp_path / "o.jsonl"),
            "--on-bad-records",
            "skip",
            "--quarantine",
            str(quarantine),
        ]
    )
    assert code == 0
    entries = [json.loads(line) for line in quarantine.read_text().splitlines()]
    assert [e["record"] for e in entries] == ['{"__class__": "os.system", "cmd": "rm -rf /"}', '{"session_id": 1}']
