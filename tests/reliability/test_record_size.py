"""Memory bounds on hostile records (issues #26, #28): ``max_record_size`` refuses a line (or a file that is one
JSON value) beyond it while it is read, never holding it; whitespace after a line's text is not kept; bad rows of
a capture cost disk, not memory. Each test runs in seconds (small limits, small files)."""

from __future__ import annotations

import bz2
import json
import subprocess
import sys
import textwrap
import tracemalloc
from pathlib import Path

import datasets
import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import BadRecordError
from pchronicle_datasets.cli import main
from pchronicle_datasets.formats import iter_records
from pchronicle_datasets.formats.source import MAX_RECORD_SIZE, RecordTooLargeError
from pchronicle_datasets.quarantine import read_quarantine

REPO = Path(__file__).resolve().parents[2]
LIMIT = 4096


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)


def row(sid: str, content: str = "hi") -> bytes:
    return orjson.dumps(
        {
            "session_id": sid,
            "step_id": 1,
            "messages": [{"role": "user", "content": content}],
            "response": {"role": "assistant", "content": "ok"},
        }
    )


def capture(big: int = 2 * LIMIT) -> bytes:
    """Three sessions; the second's row (line 2) is ``big`` bytes of content."""
    return b"\n".join([row("a"), row("b", "x" * big), row("c")]) + b"\n"


def pieces(data: bytes, size: int = 1000) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def outcome(records) -> list[tuple[int | None, str]]:
    return [(r.line, type(r.error).__name__ if r.error else r.story["session"]) for r in records]


# ------------------------------------------------------------------------------------------- the reader


@pytest.mark.parametrize("fmt", ["openai-msg", "auto"])
@pytest.mark.parametrize("chunked", [False, True])
def test_a_line_beyond_the_limit_is_one_bad_record_naming_file_line_limit_and_option(fmt, chunked):
    data = capture()
    records = list(iter_records(fmt, pieces(data) if chunked else data, "cap.jsonl", max_record_size=LIMIT))
    assert outcome(records) == [(1, "a"), (2, "RecordTooLargeError"), (3, "c")]
    bad = records[1]
    assert bad.raw == b""  # its text is never held, not even for the quarantine
    message = str(bad.error)
    assert "in cap.jsonl line 2" in message and "max_record_size (4,096 bytes)" in message
    assert f"is {len(data.splitlines()[1]):,} bytes" in message and "--max-record-size" in message
    # The default is far above these lines: all three read.
    assert outcome(iter_records(fmt, data, "cap.jsonl"))[1] == (2, "b") and MAX_RECORD_SIZE == 512 << 20


@pytest.mark.parametrize("fmt", ["storyline", "sharegpt", "chat"])
def test_every_json_lines_reader_refuses_the_long_line_and_reads_the_rest(fmt):
    story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": []}
    lines = {
        "storyline": [story, {**story, "session": "t", "meta": {"x": "y" * LIMIT}}, {**story, "session": "u"}],
        "sharegpt": [{"conversations": [{"from": "human", "value": v}]} for v in ("a", "b" * LIMIT, "c")],
        "chat": [[{"role": "user", "content": v}] for v in ("a", "b" * LIMIT, "c")],
    }[fmt]
    data = b"\n".join(orjson.dumps(x) for x in lines) + b"\n"
    records = list(iter_records(fmt, pieces(data), "f.jsonl", max_record_size=LIMIT))
    errors = [(r.line, type(r.error).__name__) for r in records if r.error is not None]
    assert errors == [(2, "RecordTooLargeError")]
    assert len([r for r in records if r.error is None]) >= 2


@pytest.mark.parametrize("size", [700, 1000, 1500])
def test_a_line_after_a_long_one_is_measured_alone(size):
    # The long line's kept part was still counted when the next line that runs across a chunk began: a good
    # line of 900 bytes after it was refused as one of 900 + the long line's bytes (found by the line parts'
    # property test on a real chat file). Every cut of the chunks, so the lines cross them in every way.
    good = [row(s, "y" * 900) for s in ("a", "c", "d", "e")]
    data = b"\n".join([good[0], row("b", "x" * 2 * LIMIT), *good[1:]]) + b"\n"
    for shift in range(0, size, 97):
        chunks = [data[:shift], *pieces(data[shift:], size)] if shift else pieces(data, size)
        got = outcome(iter_records("openai-msg", chunks, "cap.jsonl", max_record_size=LIMIT))
        assert got == [(1, "a"), (2, "RecordTooLargeError"), (3, "c"), (4, "d"), (5, "e")], (size, shift)


def test_a_file_that_is_one_json_value_beyond_the_limit_is_refused_whole():
    story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": []}
    pretty = orjson.dumps({**story, "meta": {"x": "y" * 2 * LIMIT}}, option=orjson.OPT_INDENT_2)
    for data in (pretty, pieces(pretty)):
        [rec] = iter_records("auto", data, "one.json", max_record_size=LIMIT)
        assert isinstance(rec.error, RecordTooLargeError) and rec.raw == b""
        assert "the file is one JSON value of more than 4,096 bytes" in str(rec.error)
        assert str(rec.error).endswith("in one.json")
    [rec] = iter_records("storyline", pretty, "one.json", max_record_size=len(pretty))
    assert rec.error is None  # at the limit: read


def test_a_long_first_line_does_not_hide_the_format_of_the_rest():
    data = b"\n".join([row("b", "x" * 2 * LIMIT), row("a")]) + b"\n"
    assert outcome(iter_records("auto", pieces(data), "cap.jsonl", max_record_size=LIMIT)) == [
        (1, "RecordTooLargeError"),
        (2, "a"),
    ]


def test_the_long_line_is_not_held_while_it_is_read():
    """32 MiB of one bzip2 line with a 1 MiB limit: the reader's peak stays near the limit, not the line."""
    line = b'{"session_id": "s", "step_id": 1, "messages": [{"role": "user", "content": "' + b"x" * (32 << 20)
    data = bz2.compress(line + b'"}]}\n' + row("a") + b"\n", 1)
    tracemalloc.start()
    try:
        records = list(iter_records("openai-msg", data, "big.jsonl.bz2", max_record_size=1 << 20))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert outcome(records) == [(1, "RecordTooLargeError"), (2, "a")]
    assert f"is {len(line) + 4:,} bytes" in str(records[0].error)  # up to its newline
    assert peak < 8 << 20, f"peak {peak / 2**20:.1f} MiB for a 32 MiB line and a 1 MiB limit"


def test_whitespace_after_a_line_is_not_kept_nor_counted():
    """A line followed by 48 MiB of spaces (a bzip2 of a few KB) reads as the same value with a 1 MiB limit, in
    bounded memory; text after such a run cannot be given back exactly, so that line is refused, saying why."""
    padded = bz2.compress(row("a") + b" " * (48 << 20) + b"\n" + row("b") + b"\n", 1)
    tracemalloc.start()
    try:
        records = list(iter_records("openai-msg", padded, "pad.jsonl.bz2", max_record_size=1 << 20))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert outcome(records) == [(1, "a"), (2, "b")]
    # About 14 MiB of fixed buffers (the same for 12, 48 or 96 MiB of spaces); holding the run would be 48 MiB.
    assert peak < 24 << 20, f"peak {peak / 2**20:.1f} MiB"
    inner = bz2.compress(row("a")[:-1] + b" " * (3 << 20) + b"}\n" + row("b") + b"\n", 1)
    records = list(iter_records("openai-msg", inner, "inner.jsonl.bz2"))
    assert outcome(records) == [(1, "FormatError"), (2, "b")]
    assert "a run of more than 1,048,576 bytes of whitespace followed by more text" in str(records[0].error)
    assert "inner.jsonl.bz2 line 1" in str(records[0].error)
    # A file that is one JSON value: trailing spaces are left out (the same value); a run inside it is refused.
    story = orjson.dumps({"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": []})
    [rec] = iter_records("auto", pieces(story + b" " * (3 << 20), 1 << 20), "one.json")
    assert rec.error is None and rec.story["session"] == "s"
    pretty = story[:-1] + b"\n" + b" " * (3 << 20) + b"\n}"
    [rec] = iter_records("storyline", pieces(pretty, 1 << 20), "one.json")
    assert "the file holds a run of more than 1,048,576 bytes of whitespace" in str(rec.error)


def test_invalid_limits_are_refused():
    for bad in (0, -1, 1.5, "4K", True):
        with pytest.raises(ValueError, match="max_record_size must be a positive integer"):
            list(iter_records("auto", b"{}", "f", max_record_size=bad))


# ------------------------------------------------------------------------------------------- the builder


def _load(tmp_path: Path, path: Path, **options):
    return datasets.load_dataset(
        "pchronicle",
        "openai-msg",
        data_files=str(path),
        split="train",
        cache_dir=str(tmp_path / "cache"),
        **options,
    )


def test_load_dataset_refuses_or_skips_the_long_line(tmp_path):
    path = tmp_path / "cap.jsonl"
    path.write_bytes(capture())
    with pytest.raises(BadRecordError, match=r"max_record_size \(4,096 bytes\).* in cap\.jsonl line 2"):
        _load(tmp_path, path, max_record_size=LIMIT)
    quarantine = tmp_path / "q.jsonl"
    ds = _load(tmp_path, path, max_record_size=LIMIT, on_bad_records="skip", quarantine_file=str(quarantine))
    assert [pc.row_to_story(r)["session"] for r in ds] == ["a", "c"]
    [entry] = read_quarantine(quarantine)
    assert entry["line"] == 2 and entry["error_type"] == "RecordTooLargeError" and entry["record"] is None
    with pytest.raises(ValueError, match="max_record_size must be a positive integer"):
        _load(tmp_path, path, max_record_size=0)


# ------------------------------------------------------------------------------------------- the CLI


def test_every_reading_command_takes_max_record_size(tmp_path, capsys):
    path = tmp_path / "cap.jsonl"
    path.write_bytes(capture())
    assert main(["validate", str(path), "--max-record-size", "4K"]) == 1
    err = capsys.readouterr()
    assert "max_record_size (4,096 bytes)" in err.out + err.err and "line 2" in err.out + err.err
    out = tmp_path / "out.jsonl"
    assert main(["convert", str(path), "--to", "storyline", "-o", str(out), "--max-record-size", "4K"]) == 1
    assert "cap.jsonl line 2" in capsys.readouterr().err and not out.exists()  # nothing half-written
    assert main(["convert", str(path), "--to", "storyline", "-o", str(out), "--max-record-size", "4K",
                 "--on-bad-records", "skip"]) == 0  # fmt: skip
    assert [json.loads(x)["session"] for x in out.read_text().splitlines()] == ["a", "c"]
    assert main(["validate", str(path)]) == 0  # the default limit reads it


# ------------------------------------------------------------------------------------------- Spark's tasks


def test_spark_tasks_refuse_as_the_local_reader_does(tmp_path):
    """The pure-Arrow task functions (no Spark started): a whole file read as a stream with both limits, and the
    lines of a split part refused past the limit without reading them further."""
    pytest.importorskip("pyspark")
    from pchronicle_datasets.spark.plan import Part, line_range
    from pchronicle_datasets.spark.records import lines_tables, range_tables, whole_file_tables

    path = tmp_path / "cap.jsonl"
    path.write_bytes(capture())
    whole = Part(str(path), "cap.jsonl", 0, "whole")
    with open(path, "rb") as f:
        [table] = whole_file_tables(whole, "openai-msg", "skip", f, max_record_size=LIMIT)
    bad = [b for b in table.column("_bad").to_pylist() if b]
    assert [(b["line"], b["error_type"], b["record"]) for b in bad] == [(2, "RecordTooLargeError", None)]
    with pytest.raises(BadRecordError, match=r"max_record_size \(4,096 bytes\).* in cap\.jsonl line 2"):
        list(whole_file_tables(whole, "openai-msg", "error", path.read_bytes(), max_record_size=LIMIT))
    bomb = tmp_path / "bomb.jsonl.bz2"
    bomb.write_bytes(bz2.compress(b" " * (8 << 20), 9))
    with pytest.raises(BadRecordError, match="decompresses to more than 1,048,576 bytes"):
        list(whole_file_tables(Part(str(bomb), "bomb.jsonl.bz2", 0, "whole"), "auto", "error", bomb.read_bytes(),
                               max_size=1 << 20))  # fmt: skip

    # A part whose last line runs past its end: read up to the limit only, refused with the local error.
    part = Part(str(path), "cap.jsonl", 0, "range", 0, len(row("a")) + 10, format="openai-msg")
    offset, data = line_range(part, LIMIT)
    assert len(data) <= len(row("a")) + 1 + LIMIT + 1 + 65536
    [table] = range_tables(part, "skip", data, LIMIT)
    assert [b["error_type"] for b in table.column("bad").to_pylist() if b] == ["RecordTooLargeError"]
    story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": []}
    lines = tmp_path / "s.jsonl"
    lines.write_bytes(orjson.dumps(story) + b"\n" + orjson.dumps({**story, "meta": {"x": "y" * LIMIT}}) + b"\n")
    part = Part(str(lines), "s.jsonl", 0, "lines", 0, lines.stat().st_size, format="storyline")
    offset, data = line_range(part, LIMIT)
    [table] = lines_tables(part, "skip", offset, data, LIMIT)
    assert [b["error_type"] for b in table.column("_bad").to_pylist() if b] == ["RecordTooLargeError"]


# ------------------------------------------------------------------------------------------- bad rows


_BAD_ROWS_CHILD = textwrap.dedent(
    """
    import json, resource, sys
    from pchronicle_datasets.formats import openai_msg
    path, budget = sys.argv[1], int(sys.argv[2])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    with open(path, "rb") as f:
        bad = sum(1 for rec in openai_msg.iter_records(f, "hostile.jsonl", budget=budget) if rec.error is not None)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"bad": bad, "growth": after - before}))
    """
)


def test_bad_rows_cost_disk_not_memory(tmp_path):
    """200,000 rows no session can take (``{}``, heartbeats without a session id) with an 8 MiB budget: each held
    one costs about a kilobyte of Python objects (240 MB for these before the fix), so past the budget they go to
    the log on disk and the peak stays near the budget."""
    path = tmp_path / "hostile.jsonl"
    rows = [b"{}", b'{"type":"heartbeat","ts":1712000000}', b"{not json", row("a")]
    path.write_bytes(b"\n".join(rows[i % 3] for i in range(200_000)) + b"\n" + rows[3] + b"\n")
    out = subprocess.run(
        [sys.executable, "-c", _BAD_ROWS_CHILD, str(path), str(8 << 20)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    stats = json.loads(out.stdout.strip().splitlines()[-1])
    assert stats["bad"] == 200_000
    assert stats["growth"] < 80 << 20, f"peak RSS grew by {stats['growth'] / 2**20:.0f} MiB"


def test_logged_bad_rows_come_back_in_file_order_with_their_errors():
    """With a budget of 0 every bad line is logged: the records are exactly those of an unbounded read."""
    from pchronicle_datasets.formats import openai_msg

    lines = []
    for i in range(300):
        kind = i % 7
        if kind in (0, 3):
            lines.append(b"{}")
        elif kind == 1:
            lines.append(b"{not json")
        elif kind == 2:
            lines.append(b"")
        else:
            lines.append(orjson.dumps({**json.loads(row(f"s{i % 5}")), "step_id": i + 1}))
    data = b"\n".join(lines) + b"\n"

    def signature(records):
        return [(r.line, r.raw, str(r.error), r.value if r.error else None, r.story) for r in records]

    want = signature(openai_msg.iter_records(data, "c.jsonl", budget=1 << 40))
    assert sum(1 for w in want if w[2] != "None") > 100
    for source in (lambda: data, lambda: iter(pieces(data, 100))):  # re-readable, and spilled to a file
        for budget in (0, 3000):
            assert signature(openai_msg.iter_records(source(), "c.jsonl", budget=budget)) == want
