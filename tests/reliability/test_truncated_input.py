"""Truncated and partial compressed input is never silent (issue 14): every codec's cut or corrupt stream is one
bad record naming the file and the byte offset; the complete lines before it are kept under skip."""

from __future__ import annotations

import bz2
import gzip
import itertools
import json
import logging
import lzma
import tracemalloc
import zlib
from pathlib import Path

import datasets
import pytest
import zstandard

import pchronicle_datasets as pc
from pchronicle_datasets import BadRecordError, FormatError
from pchronicle_datasets.cli import main
from pchronicle_datasets.compression import (
    DecompressionLimitError,
    compression_of,
    decompress_file,
    iter_decompressed,
)
from pchronicle_datasets.formats import iter_records
from pchronicle_datasets.quarantine import read_quarantine

SAMPLES = Path(pc.__file__).resolve().parent / "samples"
CAPTURE = SAMPLES / "openai_msg" / "gateway_capture.jsonl"
_loads = itertools.count()


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)


def docs(n: int, prefix: str = "s") -> bytes:
    """``n`` small Storyline documents, one per line."""
    return b"".join(
        json.dumps(
            {
                "schema_version": "storyline/v1",
                "session": f"{prefix}{i}",
                "agent": {"id": "a"},
                "turns": [{"id": 1, "src": "user", "msg": f"message {i} " + "x" * 40}],
            }
        ).encode()
        + b"\n"
        for i in range(n)
    )


def zstd_cut_at_a_block_boundary(first: bytes, second: bytes) -> tuple[bytes, bytes]:
    """What a streaming zstd writer leaves when it crashes after flushing ``first``: (the cut file, the whole)."""
    cobj = zstandard.ZstdCompressor().compressobj()
    head = cobj.compress(first) + cobj.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
    return head, head + cobj.compress(second) + cobj.flush()


def load(tmp_path: Path, path: Path, **kwargs):
    cache = tmp_path / "cache" / str(next(_loads))
    return datasets.load_dataset("pchronicle", data_files=str(path), split="train", cache_dir=str(cache), **kwargs)


# ----------------------------------------------------------------------------------------------- zstd


def test_zstd_cut_at_a_block_boundary_is_an_error_naming_file_and_offset(tmp_path):
    data = docs(2000)
    half = data.index(b"\n", len(data) // 2) + 1
    cut, whole = zstd_cut_at_a_block_boundary(data[:half], data[half:])
    assert zstandard.ZstdDecompressor().decompressobj().decompress(cut) == data[:half]  # what loaded silently
    assert decompress_file(whole).text == data
    with pytest.raises(FormatError) as info:
        pc.into_storyline("storyline", cut, document_id="capture.jsonl.zst")
    message = str(info.value)
    assert "capture.jsonl.zst" in message and f"byte {len(cut):,}" in message and "zstd" in message
    assert "cut short" in message
    records = list(iter_records("storyline", cut, "capture.jsonl.zst"))
    assert [r.error for r in records[:-1]] == [None] * data[:half].count(b"\n")
    assert records[-1].error is not None and records[-1].error.line == data[:half].count(b"\n") + 1


def test_zstd_cut_validate_reports_a_problem(tmp_path, capsys):
    data = docs(2000)
    half = data.index(b"\n", len(data) // 2) + 1
    path = tmp_path / "capture.jsonl.zst"
    path.write_bytes(zstd_cut_at_a_block_boundary(data[:half], data[half:])[0])
    assert main(["validate", str(path)]) == 1
    captured = capsys.readouterr()
    complete = data[:half].count(b"\n")
    assert f"{complete} valid document(s), 1 problem(s)" in captured.err
    assert "zstd data ends early" in captured.out and str(path) in captured.out


@pytest.mark.parametrize("policy", ["error", "skip"])
def test_zstd_cut_under_both_policies_of_the_builder(tmp_path, policy):
    data = docs(2000)
    half = data.index(b"\n", len(data) // 2) + 1
    path = tmp_path / "capture.jsonl.zst"
    path.write_bytes(zstd_cut_at_a_block_boundary(data[:half], data[half:])[0])
    if policy == "error":
        with pytest.raises(BadRecordError, match=r"capture\.jsonl\.zst") as info:
            load(tmp_path, path)
        assert "ends early at byte" in str(info.value)
        return
    quarantine = tmp_path / "q.jsonl"
    ds = load(tmp_path, path, on_bad_records="skip", quarantine_file=str(quarantine))
    complete = data[:half].count(b"\n")
    assert ds.num_rows == complete
    [entry] = read_quarantine(quarantine)
    assert entry["file"] == "capture.jsonl.zst" and entry["line"] == complete + 1 and "byte" in entry["error"]


def test_zstd_several_frames_read_whole():
    data = docs(50)
    frames = b"".join(zstandard.ZstdCompressor().compress(part) for part in (data[:1000], data[1000:]))
    assert decompress_file(frames) == (data, None, b"")


# --------------------------------------------------------------------------------------- bzip2 and xz

# bzip2 at level 1 has 100 kB blocks: a cut file keeps the blocks before the cut.
CODECS = {"bzip2": lambda d: bz2.compress(d, 1), "xz": lzma.compress, "gzip": gzip.compress}


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_truncated_stream_keeps_complete_lines_and_names_the_offset(codec):
    data = docs(3000)
    packed = CODECS[codec](data)
    cut = packed[: len(packed) * 3 // 4]
    out = decompress_file(cut, f"c.jsonl.{codec}")
    assert out.error is not None
    assert f"the {codec} data ends early at byte {len(cut):,}" in str(out.error) and f"c.jsonl.{codec}" in str(
        out.error
    )
    assert data.startswith(out.text + out.cut) and out.text.endswith(b"\n") and b"\n" not in out.cut
    assert out.error.line == out.text.count(b"\n") + 1
    # Under skip the complete lines are documents and the cut is one bad record holding the cut line.
    records = list(iter_records("storyline", cut, f"c.jsonl.{codec}"))
    assert sum(r.error is None for r in records) == out.text.count(b"\n")
    assert [r.raw for r in records if r.error is not None] == [out.cut]
    with pytest.raises(FormatError, match="ends early"):
        pc.into_storyline("auto", cut, document_id=f"c.jsonl.{codec}")


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_concatenated_streams_read_whole(codec):
    data = docs(40)
    joined = CODECS[codec](data[:500]) + CODECS[codec](data[500:])
    assert decompress_file(joined) == (data, None, b"")


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_corrupt_data_names_the_bytes(codec):
    packed = bytearray(CODECS[codec](docs(2000)))
    middle = len(packed) // 2
    packed[middle : middle + 64] = bytes(64)
    out = decompress_file(bytes(packed), "c")
    assert out.error is not None and f"the {codec} data" in out.error.reason and "byte" in out.error.reason


def test_xz_input_is_read_like_the_other_compressions(tmp_path, capsys):
    assert compression_of(lzma.compress(b"{}")[:6]) == "xz"
    path = tmp_path / "capture.jsonl.xz"
    path.write_bytes(lzma.compress(CAPTURE.read_bytes()))
    want = pc.into_storyline("openai-msg", CAPTURE.read_bytes(), document_id="capture.jsonl.xz")
    assert pc.into_storyline("auto", path.read_bytes(), document_id="capture.jsonl.xz") == want
    assert main(["validate", str(path)]) == 0
    assert "3 valid document(s), 0 problem(s)" in capsys.readouterr().err
    ds = load(tmp_path, path)
    assert [pc.row_to_story(r) for r in ds] == want
    streamed = load(tmp_path, path, streaming=True)
    assert [pc.row_to_story(r) for r in streamed] == want


# --------------------------------------------------------------------------------------------- gzip


def big_capture(copies: int) -> bytes:
    lines = CAPTURE.read_bytes().splitlines(keepends=True)
    out = []
    for c in range(copies):
        for line in lines:
            row = json.loads(line)
            row["session_id"] += f"-{c}"
            out.append(json.dumps(row).encode() + b"\n")
    return b"".join(out)


def test_gzip_missing_its_tail_keeps_every_complete_record(tmp_path, caplog):
    """The probe's 100 MB capture loaded 0 of its 400 sessions; here 40 copies of the sample (120 sessions)."""
    data = big_capture(40)
    packed = gzip.compress(data)
    path = tmp_path / "capture.jsonl.gz"
    path.write_bytes(packed[:-1000])
    # zlib recovers the decompressible prefix: so do we.
    recovered = zlib.decompressobj(wbits=31).decompress(packed[:-1000])
    kept = recovered[: recovered.rfind(b"\n") + 1]
    assert len(kept) / len(data) > 0.99
    with pytest.raises(BadRecordError) as info:
        load(tmp_path, path)
    assert f"byte {len(packed) - 1000:,}" in str(info.value) and "capture.jsonl.gz" in str(info.value)
    quarantine = tmp_path / "q.jsonl"
    with caplog.at_level(logging.WARNING):
        ds = load(tmp_path, path, on_bad_records="skip", quarantine_file=str(quarantine))
    want = pc.into_storyline("openai-msg", kept, document_id="capture.jsonl.gz")
    assert ds.num_rows == len(want) >= 118
    assert [pc.row_to_story(r) for r in ds] == want
    [entry] = read_quarantine(quarantine)
    assert entry["file"] == "capture.jsonl.gz" and entry["line"] == kept.count(b"\n") + 1
    assert f"byte {len(packed) - 1000:,}" in entry["error"]
    assert entry["record"].encode() == recovered[len(kept) :]  # the cut line is kept in the quarantine


# ---------------------------------------------------------------------------------------- size limit


def test_a_decompression_bomb_stops_at_the_limit_with_bounded_memory():
    cobj = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    bomb = b"".join(cobj.compress(zeros) for _ in range(512)) + cobj.flush()  # 512 MiB in about 0.5 MB
    tracemalloc.start()
    try:
        with pytest.raises(DecompressionLimitError, match=r"more than 10,485,760 bytes \(max_size\)"):
            for _ in iter_decompressed([bomb], document_id="bomb.gz", max_size=10 * 2**20):
                pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * 2**20
    out = decompress_file(bomb, "bomb.gz", max_size=10 * 2**20)
    assert out.text == b"" and "bomb.gz" in str(out.error)


@pytest.mark.parametrize("codec", ["bzip2", "xz", "zstd"])
def test_the_limit_applies_to_every_codec(codec):
    compress = {**CODECS, "zstd": lambda d: zstandard.ZstdCompressor().compress(d)}[codec]
    packed = compress(bytes(5 * 2**20))
    with pytest.raises(DecompressionLimitError, match=codec):
        b"".join(iter_decompressed([packed], max_size=2**20))
    assert len(b"".join(iter_decompressed([packed]))) == 5 * 2**20


def test_incremental_reading_gives_the_same_bytes_for_any_chunking():
    data = docs(500)
    for packed in (gzip.compress(data), bz2.compress(data), lzma.compress(data)):
        pieces = [packed[i : i + 777] for i in range(0, len(packed), 777)]
        assert b"".join(iter_decompressed(pieces)) == data
    assert b"".join(iter_decompressed([data[:3], data[3:]])) == data  # not compressed: passed through


def test_a_session_log_whose_last_line_is_still_being_written_says_what_to_do(tmp_path):
    """A harness's session file read while the harness writes its last line: the load stops on that line, saying
    why a line ends early and what to do (load again later, or skip it: the rest is read)."""
    real = (
        Path(__file__).resolve().parents[2] / "tests" / "data" / "claude_code" / "daaain_dag_compact_after_rewind.jsonl"
    )
    project = tmp_path / "projects" / "-home-me-app"
    project.mkdir(parents=True)
    text = real.read_bytes()
    (project / "session.jsonl").write_bytes(text[: len(text) - 40])  # the last line cut, no newline after it
    lines = text.count(b"\n")
    with pytest.raises(BadRecordError, match=r"line \d+ \(a line that stops before its JSON ends") as info:
        datasets.load_dataset("pchronicle", "auto", data_dir=str(tmp_path / "projects"), cache_dir=str(tmp_path / "c"))
    assert info.value.line == lines and "load again once it has finished" in str(info.value)
    assert str(info.value).endswith('pass on_bad_records="skip"')
    ds = datasets.load_dataset(
        "pchronicle", "auto", data_dir=str(tmp_path / "projects"), cache_dir=str(tmp_path / "c2"), on_bad_records="skip"
    )
    assert ds["train"].num_rows == 1
