"""Hostile session files: the real and fixture files of tests/data/claude_code cut, shuffled, duplicated and
bit-flipped. The reader gives records that each hold a valid document or a ``PchronicleError`` (never another
exception), and every document it gives is written back and read again to the same turns."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pchronicle_datasets as pc
from pchronicle_datasets import PchronicleError
from pchronicle_datasets.formats import claude_code

DATA = Path(__file__).resolve().parents[2] / "data" / "claude_code"
SEEDS = [p.read_bytes() for p in sorted(DATA.rglob("*.jsonl"))]


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = draw(st.sampled_from(SEEDS))
    lines = data.split(b"\n")
    op = draw(st.sampled_from(["cut", "drop_lines", "shuffle", "duplicate", "flip", "retype"]))
    if op == "cut":
        return data[: draw(st.integers(0, len(data)))]
    if op == "drop_lines":
        return b"\n".join(line for line in lines if draw(st.booleans()))
    if op == "shuffle":
        return b"\n".join(draw(st.permutations(lines)))
    if op == "duplicate":
        k = draw(st.integers(0, len(lines) - 1))
        return b"\n".join([*lines[: k + 1], lines[k], *lines[k + 1 :]])
    if op == "flip":
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        return data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1 :] if data else data
    # retype: one value of one line replaced by a value of another JSON type
    values = [v for x in lines if x.strip() for v in _records(x.decode())]
    k = draw(st.integers(0, len(values) - 1))
    key = draw(st.sampled_from(sorted(values[k]) or ["type"]))
    values[k][key] = draw(st.sampled_from([None, 1, "x", [], {}, True, [{"type": "tool_use"}]]))
    return b"".join(json.dumps(v).encode() + b"\n" for v in values)


def _records(text: str) -> list:
    """The JSON values of one line: one, or several written one after another (a real file has such a line)."""
    out, decoder, text = [], json.JSONDecoder(), text.strip()
    while text:
        value, end = decoder.raw_decode(text)
        out.append(value)
        text = text[end:].lstrip()
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_hostile_files_give_documents_or_errors_and_documents_round_trip(data):
    for rec in claude_code.iter_records(data, "s.jsonl"):
        assert (rec.story is None) != (rec.error is None)
        if rec.error is not None:
            assert isinstance(rec.error, PchronicleError)
            continue
        pc.validate(rec.story)
        pc.story_to_row(rec.story)
        written = claude_code.encode([rec.story])
        (back,) = claude_code.decode(written, "s.jsonl")
        assert back["turns"] == rec.story["turns"]
