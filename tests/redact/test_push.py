"""Issue #24's acceptance test: every kind of secret planted in every place of a conversation, pushed through
the fake Hub (tests/hub_fake.py: the real huggingface_hub client at its HTTP boundary) in every layout; the
uploaded files are decoded (Parquet read back, JSON Lines parsed, JSON text inside values parsed) and no
planted value is in any of their strings."""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.redact.engine import PLACEHOLDER
from tests.hub_fake import hub_fixture  # noqa: F401 (the `hub` fixture)
from tests.redact.planted import GH_CLASSIC, HF, NEAR_MISSES, PLANTED

LAYOUTS = ["rows", "sharegpt", "messages", "traces", "rows+traces"]
ALL = "\n".join(text for text, _ in PLANTED.values())
SECRETS = {rule: secret for rule, (_, secret) in PLANTED.items()}
OPAQUE = "gAAAAABm" + "Qk9QQVFVRQ" * 8
NEAR = "\n".join(NEAR_MISSES)


def planted_conversation() -> dict:
    """One conversation with every planted text in the system prompt, user text, reasoning, call arguments,
    tool output, a tool definition and an unknown top-level field (→ residual); a GitHub token written in a
    call and echoed in its result; a second token; near misses; an opaque reasoning payload."""
    return {
        "messages": [
            {"role": "system", "content": "You are an agent.\n" + ALL},
            {"role": "user", "content": "Here is my setup:\n" + ALL + "\nand some ids:\n" + NEAR},
            {
                "role": "assistant",
                "content": "",
                "reasoning_content": "The user pasted secrets:\n" + ALL,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "shell", "arguments": json.dumps({"cmd": ALL, "token": GH_CLASSIC})},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "shell", "arguments": json.dumps({"cmd": f"echo {HF}"})},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": f"token was {GH_CLASSIC}\n" + ALL},
            {"role": "tool", "tool_call_id": "call_2", "content": HF},
            {"role": "assistant", "content": "Done."},
        ],
        "tools": [
            {
                "type": "function",
                "function": {"name": "shell", "description": "Run a command. " + ALL, "parameters": {"type": "object"}},
            }
        ],
        "vendor_notes": ALL,
        "vendor_state": {"encrypted_content": OPAQUE},
    }


@pytest.fixture
def planted_file(tmp_path):
    path = tmp_path / "planted.jsonl"
    path.write_text(json.dumps(planted_conversation()) + "\n", encoding="utf-8")
    return path


def _strings(value, out: list[str]) -> list[str]:
    """Every string in a decoded value; JSON text inside a string is decoded too (and kept as text)."""
    if isinstance(value, str):
        out.append(value)
        if value.lstrip()[:1] in ("{", "[", '"'):
            with contextlib.suppress(ValueError):
                _strings(json.loads(value), out)
    elif isinstance(value, dict):
        for k, v in value.items():
            _strings(k, out)
            _strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)
    return out


def uploaded_strings(files: dict[str, bytes]) -> list[str]:
    out: list[str] = []
    for path, content in files.items():
        if path.endswith(".parquet"):
            _strings(pq.read_table(io.BytesIO(content)).to_pylist(), out)
        elif path.endswith(".jsonl"):
            for line in content.decode("utf-8").splitlines():
                if line.strip():
                    _strings(json.loads(line), out)
        else:
            out.append(content.decode("utf-8"))
    return out


def _push(path: Path, layout: str, *more: str) -> int:
    return main(["push", str(path), "--repo", "org/agent-sft", "--to", layout, "--token", "hf_test_token", *more])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_no_planted_value_is_uploaded_in_any_layout(hub, planted_file, layout, capsys):
    assert _push(planted_file, layout) == 0
    err = capsys.readouterr().err
    assert any(p.endswith((".parquet", ".jsonl")) for p in hub.files), hub.files.keys()
    strings = uploaded_strings(hub.files)
    text = "\n".join(strings)
    for rule, secret in SECRETS.items():
        assert not any(secret in s for s in strings), f"{rule} reached the upload ({layout})"
    assert OPAQUE not in text
    # Same secret → same placeholder (a token written in a call and echoed in its result), two → two.
    gh = {p for s in strings for p in PLACEHOLDER.findall(s) if p.startswith("<REDACTED:github-token:")}
    gh.discard("<REDACTED:github-token:3f9a1c2b>")  # a near miss: a placeholder already in the text
    hf = {p for s in strings for p in PLACEHOLDER.findall(s) if p.startswith("<REDACTED:huggingface-token:")}
    assert len(hf) == 1 and len(gh) == 2 and not gh & hf  # two GitHub tokens planted: classic and fine-grained
    # The near misses survive (the user text carries them).
    for near in NEAR_MISSES:
        assert near in text, near[:40]
    # The report: counts per rule, file and field, pointers, never a value; the card: rule counts.
    assert "redaction:" in err and "by file and field" in err and "/turns/*/msg" in err
    for secret in SECRETS.values():
        assert secret not in err
    card = hub.files["README.md"].decode()
    assert "**Redaction:** ran before upload" in card and "email:" in card


def test_no_redact_uploads_values_and_says_so(hub, planted_file, capsys):
    assert _push(planted_file, "rows", "--no-redact") == 0
    err = capsys.readouterr().err
    assert "redaction is OFF (--no-redact)" in err
    text = "\n".join(uploaded_strings(hub.files))
    assert all(secret in text for secret in SECRETS.values())
    assert "**Redaction:** not run" in hub.files["README.md"].decode()


@pytest.mark.parametrize("layout", ["rows", "sharegpt"])
def test_a_redaction_error_uploads_nothing(hub, planted_file, monkeypatch, capsys, layout):
    def broken(self, text, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(pc.Redactor, "text", broken)
    assert _push(planted_file, layout) == 1
    err = capsys.readouterr().err
    assert "redaction failed" in err and "nothing was" in err
    assert hub.files == {} and not any("/commit/" in url or "/preupload/" in url for _, url in hub.requests)
    assert hub.created == []


def test_push_to_hub_redacts_training_rows_and_fails_closed(hub, planted_file, monkeypatch):
    [story] = pc.into_storyline("chat", planted_file.read_text(), document_id="planted.jsonl")
    from datasets import Dataset

    ds = Dataset(pc.rows_to_table([pc.story_to_row(story)]))
    train = ds.map(pc.to_messages, remove_columns=ds.column_names)  # rendered from raw documents
    r = pc.Redactor(key="stable")
    pc.push_to_hub(train, "org/agent-sft", token="hf_test_token", redact=r)
    strings = uploaded_strings(hub.files)
    assert not any(secret in s for s in strings for secret in SECRETS.values())
    assert r.report.total and set(r.report.by_file()) == {"(rows)"}

    hub.files.clear()
    monkeypatch.setattr(pc.Redactor, "row", lambda self, row: 1 / 0)
    with pytest.raises(pc.RedactionError, match="nothing was uploaded"):
        pc.push_to_hub(train, "org/agent-sft", token="hf_test_token")
    assert hub.files == {}


def _fake_scanner(folder: Path, name: str, script: str) -> None:
    exe = folder / name
    exe.write_text("#!/bin/sh\n" + script)
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)


def test_second_scan_finding_blocks_the_push(hub, planted_file, tmp_path, monkeypatch, capsys):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # A real subprocess: a trufflehog that reports one finding in the first file it is given.
    finding = {
        "DetectorName": "FakeDetector",
        "Raw": "never-printed",
        "SourceMetadata": {"Data": {"Filesystem": {"file": "train.jsonl", "line": 1}}},
    }
    _fake_scanner(bin_dir, "trufflehog", f"echo '{json.dumps(finding)}'\n")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert _push(planted_file, "rows", "--second-scan") == 1
    err = capsys.readouterr().err
    assert "second scan found 1 secret" in err and "FakeDetector" in err and "never-printed" not in err
    assert hub.files == {} and hub.created == []


def test_second_scan_without_findings_pushes(hub, planted_file, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    seen = tmp_path / "seen.txt"
    # The scanner is given decoded JSON Lines of the redacted rows: it records what it saw.
    _fake_scanner(bin_dir, "trufflehog", f'cat "$2"/*.jsonl > {seen}\n')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert _push(planted_file, "rows", "--second-scan") == 0
    assert "data/train-00000-of-00001.parquet" in hub.files
    scanned = seen.read_text()
    assert "<REDACTED:" in scanned and GH_CLASSIC not in scanned


def test_second_scan_with_no_scanner_on_path_blocks(hub, planted_file, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pc.RedactionError, match="neither trufflehog nor betterleaks"):
        from pchronicle_datasets.redact.scanners import run_scanners

        run_scanners(tmp_path)


def test_betterleaks_second_scan_reads_its_report(hub, planted_file, tmp_path, monkeypatch, capsys):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    finding = [{"RuleID": "generic-api-key", "File": "scan/train.jsonl", "StartLine": 3, "Secret": "never-printed"}]
    # A betterleaks that writes its JSON report where -r says and exits 1 (leaks found), as betterleaks does.
    script = (
        'while [ $# -gt 0 ]; do if [ "$1" = "-r" ]; then shift; report="$1"; fi; shift; done\n'
        f"echo '{json.dumps(finding)}' > \"$report\"\nexit 1\n"
    )
    _fake_scanner(bin_dir, "betterleaks", script)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin")
    assert _push(planted_file, "sharegpt", "--second-scan") == 1
    err = capsys.readouterr().err
    assert "betterleaks generic-api-key in train.jsonl line 3" in err and "never-printed" not in err
    assert hub.files == {}
