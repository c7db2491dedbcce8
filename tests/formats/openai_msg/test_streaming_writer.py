"""The streaming writer (``encode_to``, the ``streaming_writer`` capability; issue #28 item 5): the documents are
spilled to disk and the rows sorted in runs, so ``convert --to openai-msg`` holds about one document instead of
the input, and writes exactly the bytes ``encode`` gives, with exactly its losses."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import cli, formats
from pchronicle_datasets.cli import main
from pchronicle_datasets.formats import openai_msg
from pchronicle_datasets.formats.openai_msg import writer
from pchronicle_datasets.losses import collect_losses
from tests.goldens import DATA

REPO = Path(__file__).resolve().parents[3]
SAMPLES = REPO / "pchronicle_datasets" / "samples"


def _documents(path: Path, fmt: str = "auto") -> list[dict[str, Any]]:
    """The documents a file gives (its bad records left out: some golden inputs are refusals)."""
    with path.open("rb") as f:
        return [rec.story for rec in formats.iter_records(fmt, f, path.name) if rec.story is not None]


def _openai_msg_files() -> list[Path]:
    files = sorted((DATA / "openai_msg").rglob("*.input.*")) + sorted((SAMPLES / "openai_msg").iterdir())
    return [p for p in files if p.is_file()]


def _other_documents() -> list[dict[str, Any]]:
    """Documents of the other formats: their golden inputs and samples (synthesized rows, residual envelopes)."""
    stories = []
    for area in sorted(p for p in DATA.iterdir() if p.is_dir() and p.name not in ("openai_msg", "features")):
        for path in sorted(area.rglob("*.input.*"))[:12]:
            try:
                stories += _documents(path)
            except pc.PchronicleError:
                continue  # a file no format claims (a refusal case)
    for folder in ("storyline", "chat", "sharegpt"):
        for path in sorted((SAMPLES / folder).iterdir()):
            stories += _documents(path)
    return stories


def _both(stories: list[dict[str, Any]], tmp_path: Path, budget: int) -> tuple[tuple, tuple]:
    """(bytes, losses) of ``encode`` and of ``encode_to``; losses as every kind in first-reported order, with its
    count, first pointer and document."""

    def losses(report) -> tuple:
        return tuple((k, n, report.first.get(k), report.first_document.get(k)) for k, n in report.counts.items())

    with collect_losses() as old:
        text = openai_msg.encode(stories).encode("utf-8")
    out = io.BytesIO()
    work = tmp_path / f"work-{budget}"
    work.mkdir()
    with collect_losses() as new:
        count = openai_msg.encode_to(iter(stories), out.write, work, budget=budget)
    assert count == len(stories)
    return (text, losses(old)), (out.getvalue(), losses(new))


@pytest.mark.parametrize("path", _openai_msg_files(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_openai_msg_file_streams_to_the_bytes_encode_gives(path, tmp_path):
    stories = _documents(path, "openai-msg")
    for budget in (writer.RUN_BUDGET, 1):  # one run in memory; one run per row
        old, new = _both(stories, tmp_path, budget)
        assert new == old


def test_mixed_documents_stream_to_the_same_bytes_through_many_runs(tmp_path, monkeypatch):
    """Every golden openai-msg document (several files: rows sorted back per file), repeated (renamed sessions),
    with other formats' documents between them (synthesized rows after every recovered one), the envelope of the
    sample whose root fields come back; budget 1 with at most 3 runs open, so runs are merged into one as well."""
    monkeypatch.setattr(writer, "_MAX_RUNS", 3)
    ours = [s for p in _openai_msg_files() for s in _documents(p, "openai-msg")]
    others = _other_documents()
    assert len(ours) > 100 and len(others) > 20
    stories = [*ours, *others[::2], *ours[::3], *others[1::2]]
    old, new = _both(stories, tmp_path, 1)
    assert new == old
    assert b'"session_steps":[' in old[0][:4096]  # the envelope's root fields (the envelope sample) came back
    assert {kind for kind, *_ in old[1]} >= {"session_renamed", "root_fields_merged", "no_agent_turn"}
    assert list(tmp_path.glob("work-1/run-*")) and len(list(tmp_path.glob("work-1/run-*"))) <= 3


def test_a_lone_row_with_a_session_steps_key_is_enveloped_the_same(tmp_path):
    row = {"session_id": "a", "step_id": 1, "messages": [{"role": "user", "content": "hi"}]}
    row["response"] = {"role": "assistant", "content": "hello"}
    lines = [orjson.dumps(row), orjson.dumps({**row, "session_id": "b", "session_steps": "x"})]
    [_, lone] = openai_msg.decode(b"\n".join(lines) + b"\n", "cap.jsonl")
    old, new = _both([lone], tmp_path, 1)
    assert new == old
    assert orjson.loads(old[0])["session_steps"][0]["session_steps"] == "x"


def test_an_invalid_document_fails_before_any_byte_or_loss(tmp_path):
    [story] = _documents(SAMPLES / "openai_msg" / "gateway_capture.jsonl", "openai-msg")[:1]
    out = io.BytesIO()
    with collect_losses() as report, pytest.raises(pc.StorylineError):
        openai_msg.encode_to(iter([story, story, {"session": "x"}]), out.write, tmp_path)
    assert out.getvalue() == b"" and not report.counts


def test_the_capability_is_declared_and_checked():
    assert formats.capability("openai-msg", "streaming_writer") is openai_msg
    assert formats.capability("chat", "streaming_writer") is None

    class Broken:
        NAME, ALIASES, EXTENSION, OUTPUT, PER_DOCUMENT = "broken-stream", (), ".jsonl", "file", False
        sniff = iter_records = decode = encode = staticmethod(lambda *a, **k: None)
        encode_to = "not a function"

    with pytest.raises(TypeError, match="encode_to is a function"):
        formats.register(Broken)


def test_convert_streams_and_leaves_no_scratch_folder(tmp_path, monkeypatch, capsys):
    """``convert --to openai-msg`` goes through ``encode_to`` (never ``encode``), gives the bytes of the list path
    it replaces, and removes its scratch folder whether it succeeds or fails."""
    inputs = [str(p) for p in sorted((SAMPLES / "openai_msg").iterdir())]
    inputs += [str(p) for p in sorted((SAMPLES / "chat").iterdir())]
    folder = tmp_path / "out"
    with monkeypatch.context() as m:  # the list path: every document to ``encode`` at once
        real = cli.capability
        m.setattr(cli, "capability", lambda fmt, name: None if name == "streaming_writer" else real(fmt, name))
        assert main(["convert", *inputs, "--to", "openai-msg", "-o", str(folder / "list.jsonl")]) == 0
    held = capsys.readouterr().err
    monkeypatch.setattr(openai_msg, "encode", lambda *a, **k: pytest.fail("convert held every document"))
    assert main(["convert", *inputs, "--to", "openai-msg", "-o", str(folder / "cap.jsonl")]) == 0
    streamed = capsys.readouterr().err
    assert "session_renamed" in held and streamed.replace("cap.jsonl", "list.jsonl") == held  # the same losses
    assert (folder / "cap.jsonl").read_bytes() == (folder / "list.jsonl").read_bytes()
    assert b"session_steps" in (folder / "cap.jsonl").read_bytes()[:200]  # the envelope sample's root came back
    assert sorted(os.listdir(folder)) == ["cap.jsonl", "list.jsonl"]

    def boom(*args, **kwargs):
        (Path(args[2]) / "documents.jsonl").write_bytes(b"partial")
        raise OSError("disk full")

    monkeypatch.setattr(openai_msg, "encode_to", boom)
    assert main(["convert", *inputs, "--to", "openai-msg", "-o", str(folder / "again.jsonl")]) != 0
    assert "disk full" in capsys.readouterr().err
    assert sorted(os.listdir(folder)) == ["cap.jsonl", "list.jsonl"]


# ------------------------------------------------------------------------------------------------ memory

_CHILD = textwrap.dedent(
    """
    import json, resource, sys
    from pchronicle_datasets.cli import main
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    assert main(["convert", sys.argv[1], "--to", "openai-msg", "-o", sys.argv[2]]) == 0
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"growth": after - before}))
    """
)


def _storylines(path: Path, documents: int) -> None:
    """Storyline JSON Lines (read one line at a time, so the reader holds one document) of ``documents``
    documents of 4 exchanges, each session id twice (renamed sessions)."""
    filler = "x" * 700
    with path.open("wb") as f:
        for i in range(documents):
            turns = []
            for k in range(4):
                turns.append({"id": 2 * k + 1, "src": "user", "msg": f"q{k} {filler}"})
                turns.append({"id": 2 * k + 2, "src": "agent", "msg": f"a{k} {filler}"})
            story = {"schema_version": "storyline/v1", "session": f"s{i % (documents // 2)}", "agent": {"id": "a"}}
            f.write(orjson.dumps({**story, "turns": turns}) + b"\n")


@pytest.mark.skipif(sys.platform != "linux", reason="prlimit and ru_maxrss in KiB: Linux")
def test_convert_to_openai_msg_memory_is_bounded_by_a_document_not_the_input(tmp_path):
    """114 MiB of Storyline documents (20,000) to openai-msg rows (286 MiB): holding every document grew the peak
    RSS by 1,331 MiB; the streaming writer by about 170 MiB (its 64 MiB run budget included: docs/reliability.md).
    In a child process under a 4 GiB address-space limit."""
    src, out = tmp_path / "docs.jsonl", tmp_path / "out.jsonl"
    _storylines(src, 20_000)
    size = src.stat().st_size
    assert size > 100 << 20
    run = subprocess.run(
        ["prlimit", f"--as={4 << 30}", sys.executable, "-c", _CHILD, str(src), str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    growth = json.loads(run.stdout.strip().splitlines()[-1])["growth"]
    assert growth < 256 << 20, f"peak RSS grew by {growth / 2**20:.0f} MiB for {size / 2**20:.0f} MiB of input"
    with out.open("rb") as f:
        assert sum(1 for _ in f) == 4 * 20_000  # one row per agent turn
