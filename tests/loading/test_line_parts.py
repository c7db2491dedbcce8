"""A big file of standalone lines read in parts (``loading.line_parts``) gives the whole file's records, and the
builder's workers read it so (``builder._split_big_files``, kind ``"lines"``)."""

from __future__ import annotations

import io
import itertools
import json
from pathlib import Path

import datasets
import orjson
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pchronicle_datasets import builder
from pchronicle_datasets.formats import get_format, iter_records
from pchronicle_datasets.loading import line_parts
from pchronicle_datasets.loading.line_parts import count_before, part_records
from pchronicle_datasets.loading.ranges import byte_range, count_lines
from pchronicle_datasets.loading.split import split_kind

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
SAMPLES = ROOT / "pchronicle_datasets" / "samples"


def _atif_lines() -> bytes:
    """The real ATIF trajectories of tests/data/atif, one per line (the format's JSON Lines form)."""
    files = sorted((DATA / "atif").glob("harbor_golden_*.trajectory.json"))
    return b"".join(orjson.dumps(json.loads(f.read_bytes())) + b"\n" for f in files)


# Real files of each format that reads standalone lines (provenance: each folder's README.md).
REAL = {
    "sharegpt": b"".join(
        path.read_bytes()
        for path in (
            DATA / "sharegpt" / "hermeswith_trajectory_samples.jsonl",
            DATA / "sharegpt" / "cymru_trajectory_samples.jsonl",
            SAMPLES / "sharegpt" / "trajectory_samples.jsonl",
        )
    ),
    "storyline": (SAMPLES / "storyline" / "harbor_goldens.storyline.jsonl").read_bytes(),
    "chat": (DATA / "sharegpt" / "llamafactory_reason_tool_use_demo_50.jsonl").read_bytes()  # OpenAI messages
    + (DATA / "chat" / "anthropic_blocks.input.jsonl").read_bytes()
    + (DATA / "chat" / "gemini_contents.input.jsonl").read_bytes(),
    "atif": _atif_lines(),
}
# What a file may hold between and inside its lines: blank and whitespace lines, a broken line, a line starting
# with a byte-order mark (not JSON there: refused, as by the whole-file reader), a line past max_record_size.
LIMIT = 64 << 10  # max_record_size in these tests: past every real line, not past the noise's long line
NOISE = [b"", b"   ", b"\t\r", b"{broken", b"\xef\xbb\xbf{}", b'{"x": "' + b"y" * LIMIT + b'"}']


def signature(records) -> list[tuple]:
    return [(r.line, r.raw, r.story, None if r.error is None else str(r.error)) for r in records]


def in_parts(data: bytes, fmt: str, n: int) -> list:
    f = io.BytesIO(data)
    module = get_format(fmt)
    out = []
    for k in range(n):
        part = byte_range(f, len(data), k, n)
        out += part_records(f, "f.jsonl", module, part, max_record_size=LIMIT)
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(sorted(REAL)),
    st.lists(st.tuples(st.integers(0, 200), st.integers(0, len(NOISE) - 1)), max_size=6),
    st.booleans(),
    st.integers(1, 7),
    st.sampled_from([7, 64, 1 << 20]),
)
def test_the_parts_of_a_file_give_the_whole_files_records(fmt, noise, bom, n, chunk):
    lines = REAL[fmt].splitlines()
    for at, extra in noise:
        lines.insert(at % (len(lines) + 1), NOISE[extra])
    data = (b"\xef\xbb\xbf" if bom else b"") + b"\n".join(lines) + b"\n"
    # A file the builder splits: the rule says so from its first lines, which are not past max_record_size.
    assume(split_kind(data, fmt) == ("lines", fmt) and len(data.lstrip().split(b"\n", 1)[0]) <= LIMIT)
    whole = list(iter_records(fmt, data, "f.jsonl", max_record_size=LIMIT))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(line_parts, "CHUNK", chunk)  # lines across the counting pass's chunks
        assert signature(in_parts(data, fmt, n)) == signature(whole)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([b"\n", b" ", b"\t", b"{", b"a", b"\r", b"\x0b"]), max_size=80),
    st.booleans(),
    st.sampled_from([1, 2, 3, 5, 64]),
    st.data(),
)
def test_counting_the_lines_before_a_part_in_chunks_is_counting_them_whole(pieces, bom, chunk, data):
    text = (b"\xef\xbb\xbf" if bom else b"") + b"".join(pieces)
    starts = [0] + [i + 1 for i, byte in enumerate(text) if byte == ord("\n")]
    start = data.draw(st.sampled_from(starts))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(line_parts, "CHUNK", chunk)
        got = count_before(io.BytesIO(text), start)
    assert got == count_lines(text[:start].removeprefix(b"\xef\xbb\xbf"))


_loads = itertools.count()


def test_the_builder_reads_a_big_line_file_on_every_worker_with_the_same_rows(tmp_path, monkeypatch):
    """The issue's case: one big ShareGPT file (here the real samples, many times over, with a broken line
    and blank lines) read by two workers, each its half, gives the rows of one process in the same order."""
    monkeypatch.setattr(builder, "LINES_SPLIT_MIN", 50_000)  # the forked workers inherit it
    lines = REAL["sharegpt"].splitlines() * 8
    lines[len(lines) // 2 : len(lines) // 2] = [b"", b"{broken", b"  "]
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    split = builder._split_big_files({"files": [str(path)], "names": ["big.jsonl"], "parts": [(0, 1)]}, 2, "auto")
    assert split["parts"] == [(0, 2), (1, 2)]

    def load(**kwargs):
        cache = tmp_path / "cache" / str(next(_loads))
        return datasets.load_dataset(
            "pchronicle", "sharegpt", data_files=str(path), split="train", cache_dir=str(cache),
            on_bad_records="skip", **kwargs,
        )  # fmt: skip

    one, two = load(num_proc=1), load(num_proc=2)
    assert two.num_rows == one.num_rows == len(lines) - 3
    assert list(two) == list(one)
    assert one[len(lines) - 4]["session"] == f"big.jsonl#{len(lines) - 2}"  # named by its place in the whole file
