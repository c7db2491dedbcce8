"""Reading in bounded memory (issue 13): every reader takes a stream and gives the records it gives for the
whole bytes; openai-msg's sessions spilled to disk, and the parts of a split file, give the file's records;
decompression bombs stop at the size limit, and whitespace bombs cost no memory; the tag scanners are linear.

No timed assertion here: memory is measured with ``tracemalloc`` (allocations, not time), and the scanners run
under a hard wall-clock bound many times what they need (``tests/guards.py``).
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pchronicle_datasets import FormatError, into_storyline
from pchronicle_datasets.cli import main as cli_main
from pchronicle_datasets.compression import DecompressionLimitError
from pchronicle_datasets.formats import iter_records, markup, openai_msg
from pchronicle_datasets.formats.base import parse_file
from pchronicle_datasets.formats.source import WHITESPACE_KEPT, as_source
from tests.guards import hard_timeout
from tests.strategies import corpora

DATA = Path(__file__).resolve().parent / "data"
SAMPLES = Path(__file__).resolve().parents[1] / "pchronicle_datasets" / "samples"
INPUTS = sorted(p for p in [*DATA.rglob("*.input.*"), *SAMPLES.rglob("*.json*")] if p.is_file())
INPUT_IDS = [str(p.relative_to(p.parents[2])) for p in INPUTS]


def signature(records: Any) -> list[tuple]:
    return [(r.line, r.raw, r.story, None if r.error is None else str(r.error), r.value) for r in records]


def chunked(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)] or [b""]


# ------------------------------------------------------------------------------------------ the Source


@given(
    st.lists(st.sampled_from([b"\n", b" ", b"\t", b"{", b"}", b"a", b"\r", b"\xef\xbb\xbf"]), max_size=60),
    st.integers(1, 9),
)
def test_source_lines_are_the_non_blank_lines_with_their_offsets(pieces, size):
    data = b"".join(pieces)
    text = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    skip = len(data) - len(text)
    want, offset = [], skip
    for number, raw in enumerate(text.split(b"\n"), 1):
        if raw and not raw.isspace():
            want.append((number, offset, raw))
        offset += len(raw) + 1
    assert list(as_source(chunked(data, size)).lines()) == want


_LINES = st.sampled_from(
    [
        b'{"a": 1}',
        b"[1, 2]",
        b"42",
        b'"x"',
        b"null",
        b"{bad",
        b'{"a":',
        b"1}",
        b"[",
        b"]",
        b"  ",
        b"",
        b'{"n": 18446744073709551616}',
        b"\xff",
    ]
)


@settings(max_examples=300)
@given(st.lists(_LINES, max_size=8), st.integers(1, 16))
def test_a_stream_is_read_as_its_whole_text(lines, size):
    """Whole value, JSON Lines or neither: the same decision, values, lines and errors as on the bytes."""
    data = b"\n".join(lines)

    def outcome(value: Any) -> Any:
        try:
            whole, parsed = parse_file(value, "f")
        except FormatError as exc:
            return "error", str(exc)
        if whole:
            return "whole", parsed
        return "lines", [(i, n, raw, str(v) if isinstance(v, FormatError) else v) for i, n, raw, v in parsed]

    if not data.strip():
        return  # readers return before parsing a blank file
    assert outcome(as_source(chunked(data, size))) == outcome(data)


@pytest.mark.parametrize("path", INPUTS, ids=INPUT_IDS)
def test_every_format_reads_a_file_object_and_chunks_as_its_bytes(path):
    data = path.read_bytes()
    name = path.name
    want = signature(iter_records("auto", data, name))
    assert signature(iter_records("auto", io.BytesIO(data), name)) == want
    assert signature(iter_records("auto", iter(chunked(data, 4093)), name)) == want


@pytest.mark.parametrize("codec", [gzip.compress, bz2.compress, lzma.compress, lambda d: zlib.compress(d)])
def test_compressed_streams_read_as_their_bytes(codec):
    data = (SAMPLES / "openai_msg" / "gateway_capture.jsonl").read_bytes()
    want = signature(iter_records("auto", data, "cap.jsonl"))
    packed = codec(data)
    got = signature(iter_records("auto", io.BytesIO(packed), "cap.jsonl"))
    if packed.startswith(b"\x78"):  # zlib without a gzip header is not a codec the readers know: plain bytes
        assert got[0][3] is not None
    else:
        assert got == want


# ------------------------------------------------------------------------------------------ openai-msg


@pytest.mark.parametrize("path", [p for p in INPUTS if "openai_msg" in str(p)], ids=lambda p: p.name)
def test_openai_msg_spilled_sessions_give_the_same_records(path):
    """Spilled to a temporary file (a stream of chunks) or re-read from the source (bytes, a local file)."""
    data = path.read_bytes()
    want = signature(openai_msg.iter_records(data, path.name, budget=1 << 40))
    assert signature(openai_msg.iter_records(iter([data]), path.name, budget=0)) == want
    assert signature(openai_msg.iter_records(data, path.name, budget=0)) == want
    with path.open("rb") as f:
        assert signature(openai_msg.iter_records(f, path.name, budget=0)) == want


@pytest.mark.parametrize("path", [p for p in INPUTS if "openai_msg" in str(p)], ids=lambda p: p.name)
def test_openai_msg_reads_a_file_from_its_position(path):
    """A file handed over after its first line was read reads as the bytes after that line, its spilled rows
    too: they are read again by offset from where the stream started, not from the file's first byte."""
    data = path.read_bytes()
    rest = data[data.index(b"\n") + 1 :] if b"\n" in data.rstrip() else b""
    want = signature(openai_msg.iter_records(rest, path.name, budget=1 << 40))
    with path.open("rb") as f:
        f.readline()
        assert signature(openai_msg.iter_records(f, path.name, budget=0)) == want


def test_openai_msg_spills_little_more_than_the_excess():
    """Past the budget, sessions are spilled down to seven eighths of it, not half: each spilled row is parsed
    twice, so a file just past the budget reads few of its rows twice (docs/builder.md, "One big capture")."""
    from pchronicle_datasets.formats.openai_msg.grouping import ROW_COST, Grouping

    raw = b'{"session_id": "s", "step_id": 1, "pad": "' + b"x" * 600 + b'"}'
    each = len(raw) + ROW_COST
    groups = Grouping("cap.jsonl", budget=100 * each, reread=lambda offset, length: raw)
    for i in range(101):  # one session a row, one row past the budget
        groups.add_row(i, {"session_id": f"s{i}", "step_id": 1}, i + 1, raw, False, offset=0)
    assert groups.spilled_sessions == 14  # down to 87 rows held, under 7/8 of 100 (half would spill 51)
    assert groups.held == 87 * each
    assert [rec.line for rec in groups.records(lambda sid, rows, scan: {"session": sid})] == list(range(1, 102))


def _gateway_bytes(lines: list, bad: list[int]) -> bytes:
    out = [orjson.dumps(row) for row in lines]
    for i in sorted(bad, reverse=True):
        out.insert(min(i, len(out)), b"{not json" if i % 2 else b'{"session_id": 7, "step_id": 1}')
    return b"\n".join(out) + b"\n"


@settings(max_examples=60, deadline=None)
@given(corpora(), st.lists(st.integers(0, 30), max_size=3), st.integers(0, 3000))
def test_openai_msg_bounded_reading_gives_the_whole_file_records(lines, bad, budget):
    """Any budget (0: every session spilled) gives the records of the file read with everything in memory."""
    data = _gateway_bytes(lines, bad)
    want = signature(openai_msg.iter_records(data, "cap.jsonl", budget=1 << 40))
    assert signature(openai_msg.iter_records(iter(chunked(data, 97)), "cap.jsonl", budget=budget)) == want


@settings(max_examples=60, deadline=None)
@given(corpora(), st.lists(st.integers(0, 30), max_size=3), st.lists(st.floats(0, 1), max_size=3))
def test_openai_msg_parts_of_a_split_file_give_the_file_records(lines, bad, cuts):
    """Byte ranges cut anywhere between lines: their records, part after part, are the file's."""
    data = _gateway_bytes(lines, bad)
    starts = sorted({0, *(data.rfind(b"\n", 0, int(c * len(data))) + 1 for c in cuts)})
    ranges = [(a, b) for a, b in zip(starts, [*starts[1:], None], strict=True)]
    got = [rec for r in ranges for rec in openai_msg.iter_records(data, "cap.jsonl", byte_range=r, budget=500)]
    assert signature(got) == signature(openai_msg.iter_records(data, "cap.jsonl"))


def test_openai_msg_spill_file_is_removed(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # take TMPDIR again
    data = (SAMPLES / "openai_msg" / "gateway_capture.jsonl").read_bytes()
    records = openai_msg.iter_records(iter([data]), "cap.jsonl", budget=0)  # chunks: spilled to a file
    next(records)
    records.close()  # a reader stopped early still deletes its spill file
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------------------------------ bombs


def _gzip_stream(piece: bytes, count: int) -> bytes:
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    return b"".join(z.compress(piece) for _ in range(count)) + z.flush()


@pytest.mark.parametrize("piece", [b" " * (1 << 20), b"\n" * (1 << 20), b" \t\r\n" * (1 << 18)])
def test_a_whitespace_bomb_costs_no_memory(piece):
    bomb = _gzip_stream(piece, 256)  # 256 MiB of whitespace in a few hundred KB
    assert len(bomb) < 1 << 20
    tracemalloc.start()
    try:
        records = list(iter_records("auto", bomb, "bomb.jsonl.gz"))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert records == []  # whitespace only: no record, nothing refused
    assert peak < 32 * WHITESPACE_KEPT  # a chunk and the list of its lines, not 256 MiB


def test_a_bomb_stops_at_the_size_limit_naming_the_file_and_the_limit():
    bomb = _gzip_stream(b'{"schema_version": "storyline/v1"}\n' * 1000, 100)
    tracemalloc.start()
    try:
        records = list(iter_records("storyline", bomb, "b.jsonl.gz", max_size=1_000_000))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    last = records[-1]
    assert isinstance(last.error, DecompressionLimitError) and last.raw == b""
    assert "b.jsonl.gz" in str(last.error) and "1,000,000 bytes" in str(last.error)
    assert peak < 8 << 20
    with pytest.raises(DecompressionLimitError, match="max_size"):
        into_storyline("auto", bomb, document_id="b.jsonl.gz", max_size=1000)


def test_cli_max_decompressed_size(tmp_path, capsys):
    path = tmp_path / "b.jsonl.gz"
    path.write_bytes(_gzip_stream(b" " * 4096, 10))
    assert cli_main(["validate", str(path), "--max-decompressed-size", "4K"]) == 1
    err = capsys.readouterr()
    assert "more than 4,096 bytes" in err.out + err.err and str(path) in err.out + err.err
    assert cli_main(["validate", str(path), "--max-decompressed-size", "1M"]) == 0


def test_cli_refuses_a_size_that_is_not_one(capsys):
    with pytest.raises(SystemExit):
        cli_main(["validate", "x.jsonl", "--max-decompressed-size", "lots"])
    assert "positive size" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ linear scanners


def _reference_named_blocks(text: str, prefix: str, close_tag: str, close_optional: bool) -> list:
    """The scanner as it was (quadratic on many openings that never close), the definition of what it finds."""
    out, pos = [], 0
    while True:
        start = text.find(prefix, pos)
        if start < 0:
            return out
        name_start = start + len(prefix)
        gt = text.find(">", name_start)
        name = text[name_start:gt] if gt >= 0 else ""
        if not name or any(ch.isspace() for ch in name):
            pos = start + 1
            continue
        close = text.find(close_tag, gt + 1)
        if close < 0:
            if close_optional:
                out.append((name, text[gt + 1 :]))
            return out
        out.append((name, text[gt + 1 : close]))
        pos = close + len(close_tag)


_MARKUP = st.lists(st.sampled_from(["<function=", ">", " ", "a", "</function>", "\u2003", "<", "=", "\n", "é"]))


@settings(max_examples=500)
@given(_MARKUP.map("".join), st.booleans())
def test_named_blocks_finds_what_the_reference_finds(text, close_optional):
    assert markup.named_blocks(text, "<function=", "</function>", close_optional=close_optional) == (
        _reference_named_blocks(text, "<function=", "</function>", close_optional)
    )


ADVERSARIAL = {
    "openings, no >": "<function=" * 1_600_000,
    "openings, one far >": "<function= " * 1_500_000 + ">",
    "names with spaces": "<function=a b>" * 1_200_000,
    "unclosed blocks": "<function=ls>x" * 1_200_000,
    "think openings": "<think>" * 2_400_000,
    "tool_call openings": "<tool_call>" * 1_500_000,
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_scanners_are_linear_on_16_mb_of_hostile_markup(name):
    """16 MB took 132 s when every opening rescanned the rest; linear scanning takes well under a second."""
    text = ADVERSARIAL[name]
    assert len(text) >= 16_000_000
    with hard_timeout(20, f"markup scanners on {name}"):
        markup.named_blocks(text, "<function=", "</function>", close_optional=True)
        markup.named_blocks(text, "<function=", "</function>")
        markup.blocks(text, "<think>", "</think>")
        markup.blocks(text, "<tool_call>", "</tool_call>")


def test_an_openai_msg_reply_with_many_unclosed_function_openings_reads_within_the_bound():
    content = "<function=" * 400_000 + "<function=ls>" + "x" * 1000
    row = {"session_id": "s", "step_id": 1, "response": {"role": "assistant", "content": content}}
    with hard_timeout(30, "openai-msg on 4 MB of unclosed <function= openings"):
        stories = into_storyline("openai-msg", orjson.dumps(row) + b"\n", document_id="cap.jsonl")
    assert stories[0]["turns"][-1]["src"] == "agent"


_ROW_LINES = st.sampled_from(
    [
        b'{"session_id": "a", "step_id": 1}',
        b'{"session_id":"b","step_id":2,"meta":{"session_id":"x"}}',
        b'{"session_id": "a", "session_id": "c", "step_id": 1}',
        b'{"session\\u005fid": "d", "session_id": "a"}',
        b'{"step_id": 1, "session_id": "a"}',
        b'{"session_id": "a", "step_id": ',
        b'{"session_id": "", "step_id": 1}',
        b'{"session_id": "a\\"b", "step_id": 1}',
        b'  {"session_id" : "\xc3\xa9", "note": "say \\"session_id\\""}',
        b'{"session_id": "a", "x": "\\"session_id"}',
        b"[1]",
        b"{bad",
        b'{"messages": [], "session_id": "a", "step_id": 1, "m": "{\\"session_id\\": \\"b\\"}"}',
        b'{"messages": [], "session_id": "a", "step_id": 1, "u": {"n": 1}}',
        b'{"messages": [], "session_id": "a", "session\\u005fid": "d"}',
        b'{"session_id": "a", "m": [], "session_id": "b"}',
        b'{"session_id": "b", "m": {"session_id": "c"}, "n": 1}',
        b'{"meta": {"step_id": 1, "session_id": "a"}, "session_id": "b"}',
        b'{"meta": {"step_id": 1, "session_id": "a"}}',
        b'{"x": [{"session_id": "a"}]}',
        b'{"x": 1, "session_id": "a", "y": "}"} ',
        b'{"x": 1, "session_id": "a", "y": 1} }',
        b'{"x": 1, "session_id": "a", "step_id": 1',
    ]
)


@given(_ROW_LINES)
def test_the_fast_session_id_is_the_parsed_one_on_every_valid_line(raw):
    sid = openai_msg.parts.fast_session_id(raw)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return  # a broken line: the part confirms what it seemed to start (next test)
    assert sid is None or (isinstance(value, dict) and value.get("session_id") == sid)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet="abé", min_size=1, max_size=3)  # an id the bytes can give
    | st.text(alphabet='ab"\\}{:,é session_id', max_size=8),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["a", "session_id", "b"]), inner, max_size=3),
    max_leaves=8,
)  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(
    st.dictionaries(st.sampled_from(["messages", "step_id", "session_id", "meta", "m"]), _JSON, max_size=5),
    st.sampled_from([(",", ":"), (", ", ": "), (" , ", " : ")]),
)
def test_the_fast_session_id_of_any_written_row_is_its_parsed_one(row, separators):
    """Wherever a writer puts session_id (first, last, nested, twice in text), the id read from the bytes is the
    root's, or None."""
    raw = json.dumps(row, separators=separators, ensure_ascii=False).encode()
    sid = openai_msg.parts.fast_session_id(raw)
    assert sid is None or row.get("session_id") == sid


@settings(max_examples=100, deadline=None)
@given(st.lists(_ROW_LINES, min_size=1, max_size=10), st.floats(0, 1))
def test_parts_agree_with_the_whole_file_on_lines_that_only_look_like_rows(lines, cut):
    """A broken line that seems to start a session before a part's range does not take the session from it."""
    data = b"\n".join([*lines, b'{"session_id": "a", "step_id": 9}', b'{"session_id": "d", "step_id": 9}']) + b"\n"
    start = data.rfind(b"\n", 0, int(cut * len(data))) + 1
    got = [rec for r in ((0, start), (start, None)) for rec in openai_msg.iter_records(data, "f.jsonl", byte_range=r)]
    assert signature(got) == signature(openai_msg.iter_records(data, "f.jsonl"))
