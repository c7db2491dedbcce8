"""The quarantine file is a reliable record (issue 14): complete entries only, run ids, cached reloads and
repeated streaming described, write failures named."""

from __future__ import annotations

import errno
import itertools
import json
import logging
import os
from pathlib import Path

import datasets
import pytest
from datasets.exceptions import DatasetGenerationError

import pchronicle_datasets as pc
from pchronicle_datasets import quarantine as qmod
from pchronicle_datasets.builder import QuarantineWriteError
from pchronicle_datasets.cli import main
from pchronicle_datasets.quarantine import QuarantineError, read_quarantine, repair

SAMPLES = Path(pc.__file__).resolve().parent / "samples"
CAPTURE = SAMPLES / "openai_msg" / "gateway_capture.jsonl"
_loads = itertools.count()


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)


def bad_capture(tmp_path: Path, bad_lines: int = 3) -> Path:
    """The capture followed by ``bad_lines`` lines that are not JSON."""
    path = tmp_path / "bad.jsonl"
    path.write_bytes(CAPTURE.read_bytes() + b"".join(b"{not json %d\n" % i for i in range(bad_lines)))
    return path


def load(cache: Path, path: Path, **kwargs):
    return datasets.load_dataset(
        "pchronicle", data_files=str(path), split="train", cache_dir=str(cache), on_bad_records="skip", **kwargs
    )


def convert_skip(src: Path, out: Path, quarantine: Path) -> int:
    return main(
        [
            "convert",
            str(src),
            "--to",
            "storyline",
            "-o",
            str(out),
            "--on-bad-records",
            "skip",
            "--quarantine",
            str(quarantine),
        ]
    )


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]  # fails on a broken line


# ------------------------------------------------------------------------------------ complete entries


PARTIAL = b'{"run": "old", "file": "x.jsonl", "line": 1, "record": "' + b"z" * 150_000  # a run cut mid-entry


@pytest.mark.parametrize("writer", ["cli", "builder"])
def test_a_partial_last_entry_is_repaired_before_appending(tmp_path, writer):
    quarantine = tmp_path / "q.jsonl"
    quarantine.write_bytes(b'{"run": "earlier", "file": "a"}\n' + PARTIAL)
    src = bad_capture(tmp_path)
    if writer == "cli":
        assert convert_skip(src, tmp_path / "out.jsonl", quarantine) == 0
    else:
        load(tmp_path / "cache", src, quarantine_file=str(quarantine))
    entries = lines(quarantine)  # every line parses: nothing was appended onto the partial one
    assert entries[0] == {"run": "earlier", "file": "a"}
    assert [e["record"] for e in entries[1:]] == [f"{{not json {i}" for i in range(3)]
    assert len({e["run"] for e in entries[1:]}) == 1 and entries[1]["run"] != "earlier"


def test_a_reader_never_meets_a_broken_line(tmp_path):
    quarantine = tmp_path / "q.jsonl"
    quarantine.write_bytes(b'{"run": "a"}\n' + PARTIAL)
    assert list(read_quarantine(quarantine)) == [{"run": "a"}]
    assert repair(quarantine) == len(PARTIAL) and quarantine.read_bytes() == b'{"run": "a"}\n'
    quarantine.write_bytes(PARTIAL)
    assert repair(quarantine) == len(PARTIAL) and quarantine.read_bytes() == b""
    assert repair(tmp_path / "missing.jsonl") == 0


def test_each_entry_is_one_whole_write_even_when_the_kernel_writes_short(tmp_path, monkeypatch):
    real_write = os.write
    calls = []

    def short_write(fd, data):
        calls.append(len(data))
        return real_write(fd, bytes(data[: max(1, len(data) // 3)]))  # a third at a time

    monkeypatch.setattr(qmod.os, "write", short_write)
    quarantine = tmp_path / "q.jsonl"
    assert convert_skip(bad_capture(tmp_path), tmp_path / "o.jsonl", quarantine) == 0
    assert len(lines(quarantine)) == 3 and len(calls) > 3


def test_a_write_failing_mid_entry_is_named_and_repaired_by_the_next_run(tmp_path, monkeypatch, capsys):
    real_write = os.write
    quarantine = tmp_path / "q.jsonl"

    def disk_full_after_half(fd, data):
        if len(data) > 10:
            real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(qmod.os, "write", disk_full_after_half)
    assert convert_skip(bad_capture(tmp_path), tmp_path / "o.jsonl", quarantine) == 1
    err = capsys.readouterr().err
    assert f"cannot write the quarantine file: No space left on device [OSError] in {quarantine}" in err
    assert not (tmp_path / "o.jsonl").exists()  # the output of a failed run is not left either
    monkeypatch.setattr(qmod.os, "write", real_write)
    assert convert_skip(bad_capture(tmp_path), tmp_path / "o.jsonl", quarantine) == 0
    assert len(lines(quarantine)) == 3


# ------------------------------------------------------------------------------------------- builder


def test_a_quarantine_write_failure_in_the_builder_names_path_and_cause(tmp_path, monkeypatch):
    def full(path, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(qmod, "_append", full)
    quarantine = tmp_path / "q.jsonl"
    with pytest.raises(QuarantineWriteError) as info:
        load(tmp_path / "cache", bad_capture(tmp_path), quarantine_file=str(quarantine))
    assert isinstance(info.value, DatasetGenerationError)  # load_dataset lets it through as it is
    assert str(quarantine) in str(info.value) and "No space left on device" in str(info.value)


def test_an_unwritable_quarantine_file_fails_before_reading(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "q"
    folder.mkdir()
    src = bad_capture(tmp_path)
    with pytest.raises(QuarantineWriteError, match="it is a folder") as info:
        load(tmp_path / "cache", src, quarantine_file=str(folder))
    assert isinstance(info.value, QuarantineError)
    from pchronicle_datasets import cli

    read = []
    monkeypatch.setattr(cli, "_read", lambda path: read.append(path) or src.read_bytes())
    assert convert_skip(src, tmp_path / "o.jsonl", folder) == 1
    assert f"cannot write the quarantine file: it is a folder [PermissionError] in {folder}" in capsys.readouterr().err
    assert read == [] and not (tmp_path / "o.jsonl").exists()


def test_entries_carry_the_run_that_wrote_them(tmp_path):
    quarantine = tmp_path / "q.jsonl"
    src = bad_capture(tmp_path)
    load(tmp_path / "cache1", src, quarantine_file=str(quarantine))
    load(tmp_path / "cache2", src, quarantine_file=str(quarantine))
    entries = lines(quarantine)
    runs = [e["run"] for e in entries]
    assert len(entries) == 6 and runs[0] == runs[2] != runs[3] == runs[5]


def test_a_cached_reload_writes_nothing_and_reports_the_skipped_count(tmp_path, caplog):
    quarantine = tmp_path / "q.jsonl"
    src = bad_capture(tmp_path, bad_lines=39)
    first = load(tmp_path / "cache", src, quarantine_file=str(quarantine))
    written = quarantine.read_bytes()
    [run] = {e["run"] for e in lines(quarantine)}
    with caplog.at_level(logging.WARNING):
        again = load(tmp_path / "cache", src, quarantine_file=str(quarantine))
    assert again.num_rows == first.num_rows == 3
    assert quarantine.read_bytes() == written  # no new entries
    messages = [r.getMessage() for r in caplog.records if r.name == "pchronicle_datasets.builder"]
    [cached] = [m for m in messages if "loaded from the cache" in m]
    assert "skipped 39 bad record(s) in 1 file(s)" in cached and str(quarantine) in cached and run in cached


def test_streaming_twice_writes_each_entry_once(tmp_path, caplog):
    quarantine = tmp_path / "q.jsonl"
    ds = load(tmp_path / "cache", bad_capture(tmp_path, bad_lines=39), quarantine_file=str(quarantine), streaming=True)
    with caplog.at_level(logging.WARNING):
        assert [r["session"] for r in ds] == [r["session"] for r in ds]
    assert len(lines(quarantine)) == 39  # not 78
    summaries = [r.getMessage() for r in caplog.records if "skipped 39 bad record(s)" in r.getMessage()]
    assert len(summaries) == 2 and "again" in summaries[1]


# ------------------------------------------------------------------------------------- bounded logging


def many_bad_lines(tmp_path: Path, n: int) -> Path:
    path = tmp_path / "many.storyline.jsonl"
    good = json.dumps({"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": []})
    path.write_bytes(good.encode() + b"\n" + b"{not json\n" * n)
    return path


def test_200000_bad_lines_log_a_bounded_number_of_examples_and_one_summary_cli(tmp_path, capsys):
    src = many_bad_lines(tmp_path, 200_000)
    out = tmp_path / "o.jsonl"
    assert (
        main(
            [
                "convert",
                str(src),
                "--from",
                "storyline",
                "--to",
                "storyline",
                "-o",
                str(out),
                "--on-bad-records",
                "skip",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err.splitlines()
    examples = [line for line in err if line.startswith("skipped a bad record")]
    assert len(examples) == qmod.MAX_EXAMPLES
    [summary] = [line for line in err if line.startswith("skipped 200000 bad record(s)")]
    assert f"the first {qmod.MAX_EXAMPLES} shown" in summary
    assert len(err) < 20


def test_200000_bad_lines_log_a_bounded_number_of_examples_and_one_summary_builder(tmp_path, caplog):
    src = many_bad_lines(tmp_path, 200_000)
    with caplog.at_level(logging.WARNING):
        ds = load(tmp_path / "cache", src)
    assert ds.num_rows == 1
    ours = [r.getMessage() for r in caplog.records if r.name == "pchronicle_datasets.builder"]
    assert len(ours) == qmod.MAX_EXAMPLES + 1
    assert "skipped 200000 bad record(s) in many.storyline.jsonl" in ours[-1]
