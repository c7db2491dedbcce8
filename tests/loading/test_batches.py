"""``pc.read_batches``: the builder's rows, order and schema as Arrow record batches, for any engine."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import datasets
import fsspec
import pyarrow as pa
import pytest
from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets.quarantine import read_quarantine

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "pchronicle_datasets" / "samples"
SCHEMA = pc.STORYLINE_FEATURES.arrow_schema
FILES = sorted(
    p
    for folder in (ROOT / "tests" / "data", SAMPLES)
    for p in folder.rglob("*")
    if p.is_file() and p.suffix in (".json", ".jsonl", ".traj", ".gz")
)
CAPTURE = (SAMPLES / "openai_msg" / "gateway_capture.jsonl").read_bytes()


@pytest.fixture(autouse=True, scope="module")
def _quiet():
    datasets.disable_progress_bars()
    yield
    datasets.enable_progress_bars()


def _builder_table(data_files, fmt: str = "auto", **options) -> pa.Table:
    """The builder's rows, as ``_generate_tables`` gave them (streaming: no cache between the two)."""
    ds = load_dataset("pchronicle", fmt, split="train", streaming=True, data_files=data_files, **options)
    tables = list(ds.with_format("arrow").iter(batch_size=1000))
    return pa.concat_tables(tables).cast(SCHEMA) if tables else SCHEMA.empty_table()


def _batches_table(path, fmt: str = "auto", **options) -> pa.Table:
    batches = list(pc.read_batches(path, fmt, **options))
    assert all(b.schema == SCHEMA for b in batches)
    return pa.Table.from_batches(batches, schema=SCHEMA)


def _outcome(read):
    try:
        return read(), None
    except Exception as exc:  # the same error, or the same rows
        return None, (type(exc).__name__, str(exc))


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_gives_the_builders_rows_or_its_error(path: Path):
    want, want_error = _outcome(lambda: _builder_table(str(path)))
    got, got_error = _outcome(lambda: _batches_table(path))
    assert got_error == want_error
    if want is not None:
        assert got.schema == want.schema
        assert got.to_pylist() == want.to_pylist()


def _bad_capture(tmp_path: Path) -> Path:
    lines = CAPTURE.splitlines(keepends=True)
    bad = tmp_path / "caps" / "bad.jsonl"
    bad.parent.mkdir()
    bad.write_bytes(lines[0] + b"not json\n" + b"".join(lines[1:]) + b'{"step_id": 1}\n')
    return bad


def test_skip_leaves_out_and_quarantines_what_the_builder_does(tmp_path: Path):
    bad = _bad_capture(tmp_path)
    ours, theirs = tmp_path / "ours.jsonl", tmp_path / "theirs.jsonl"
    want = _builder_table(str(bad), "openai-msg", on_bad_records="skip", quarantine_file=str(theirs))
    got = _batches_table(bad, "openai-msg", on_bad_records="skip", quarantine_file=ours)
    assert got.num_rows == want.num_rows > 0
    assert got.to_pylist() == want.to_pylist()

    def entries(path):
        return [{k: v for k, v in e.items() if k != "run"} for e in read_quarantine(path)]

    assert entries(ours) == entries(theirs)
    assert [e["line"] for e in entries(ours)] == [2, len(CAPTURE.splitlines()) + 2]
    assert len({e["run"] for e in read_quarantine(ours)}) == 1  # one read is one run


def test_error_stops_at_the_first_bad_record_naming_it(tmp_path: Path):
    bad = _bad_capture(tmp_path)
    with pytest.raises(pc.BadRecordError, match=r"in bad\.jsonl line 2"):
        list(pc.read_batches(bad, "openai-msg"))
    # skip without a quarantine file: counted and described, nothing written
    messages: list[str] = []
    got = _batches_table(bad, "openai-msg", on_bad_records="skip", log=messages.append)
    assert got.num_rows > 0
    assert messages[-1].startswith("skipped 2 bad record(s)")


def test_a_folder_is_read_as_data_dir_is(tmp_path: Path):
    corpus = tmp_path / "corpus"
    (corpus / "a").mkdir(parents=True)
    (corpus / "b" / "c").mkdir(parents=True)
    (corpus / "a" / "cap.jsonl").write_bytes(CAPTURE)
    (corpus / "b" / "c" / "cap.jsonl.gz").write_bytes(gzip.compress(CAPTURE))
    shutil.copy(SAMPLES / "chat" / "openhands_sdk_fncall-llm-message.json", corpus / "b" / "conv.json")
    want = _builder_table(None, data_dir=str(corpus))
    # A folder is read as the CLI reads it: only files of FOLDER_EXTENSIONS (data_dir would read this one too).
    (corpus / "b" / "notes.txt").write_text("not a trajectory")
    got = _batches_table(corpus)
    assert got.to_pylist() == want.to_pylist()
    ids = [o["document_id"] for o in got.column("origin").to_pylist()]
    assert ids[0] == "a/cap.jsonl" and ids[-1] == "b/conv.json" and "b/c/cap.jsonl.gz" in ids


def test_globs_lists_urls_and_batch_size(tmp_path: Path):
    pattern = str(SAMPLES / "*" / "*.jsonl")
    want = _builder_table(pattern)
    assert _batches_table(pattern).to_pylist() == want.to_pylist()
    files = sorted((SAMPLES / "storyline").glob("*.json"))
    listed = _builder_table([str(p) for p in files])
    batches = list(pc.read_batches(files, "storyline", batch_size=1))
    assert [b.num_rows for b in batches] == [1] * listed.num_rows
    assert pa.Table.from_batches(batches).to_pylist() == listed.to_pylist()
    with fsspec.open("memory://batches/caps/cap.jsonl.gz", "wb") as f:
        f.write(gzip.compress(CAPTURE))
    (tmp_path / "cap.jsonl.gz").write_bytes(gzip.compress(CAPTURE))
    remote = _batches_table("memory://batches/caps/cap.jsonl.gz")
    assert remote.num_rows and remote.to_pylist() == _batches_table(tmp_path / "cap.jsonl.gz").to_pylist()
    assert remote.to_pylist() == _builder_table("memory://batches/caps/cap.jsonl.gz").to_pylist()
    assert _batches_table("memory://batches/caps/").to_pylist() == remote.to_pylist()  # a remote folder


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"batch_size": 0}, "batch_size must be a positive integer"),
        ({"on_bad_records": "ignore"}, "on_bad_records must be"),
        ({"max_decompressed_size": -1}, "max_decompressed_size"),
        ({"format": "nope"}, "unknown pchronicle format"),
    ],
)
def test_options_are_refused_before_anything_is_read(options, message):
    with pytest.raises(ValueError, match=message):
        next(pc.read_batches("does-not-exist.jsonl", **options))


def test_limits_are_the_builders(tmp_path: Path):
    big = tmp_path / "big.jsonl"
    big.write_bytes(CAPTURE + json.dumps({"session_id": "x", "pad": "y" * 5000}).encode() + b"\n")
    with pytest.raises(pc.BadRecordError, match="max_record_size"):
        list(pc.read_batches(big, "openai-msg", max_record_size=4096))
