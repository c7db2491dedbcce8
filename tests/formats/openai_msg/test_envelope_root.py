"""Envelope root fields (docs/formats/openai-msg.md, reading 6): the fields beside ``session_steps`` are
residual of the file's first document only, and written back exactly once."""

from __future__ import annotations

import json

from pchronicle_datasets import from_storyline
from tests.formats.openai_msg.helpers import NAME, case, fields, read, root_of, rows_of


def test_envelope_root_fields_are_residual_of_the_first_document_only() -> None:
    golden = case("envelope_root")
    alpha, beta = read(golden)
    assert fields(alpha) == golden.expected["first_fields"]
    assert fields(beta) == golden.expected["second_fields"]


def test_envelope_root_fields_are_written_back_exactly_once() -> None:
    golden = case("envelope_root")
    rows, root = rows_of(golden), root_of(golden)
    alpha, beta = read(golden)
    text = from_storyline(NAME, [alpha, beta])
    assert json.loads(text) == {**root, "session_steps": rows}
    assert json.loads(from_storyline(NAME, [alpha])) == {**root, "session_steps": [rows[0], rows[2]]}
    # Without root fields the export is JSON Lines.
    assert [json.loads(line) for line in from_storyline(NAME, [beta]).splitlines()] == [rows[1]]
