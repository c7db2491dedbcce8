"""The Storyline file format's shapes: one document per file (pretty or compact), JSON Lines of documents,
whole-file failures, and a UTF-8 BOM."""

from __future__ import annotations

import json

import pytest

from pchronicle_datasets import (
    FormatError,
    StorylineError,
)
from pchronicle_datasets.formats import storyline_file as fmt
from tests.formats.storyline.helpers import (
    BOM,
    FULL,
    FULL_TEXT,
    jsonl,
    line,
    raises_format_error,
    story,
)


def test_pretty_printed_single_document():
    assert "\n" in FULL_TEXT
    assert fmt.decode(FULL_TEXT, "full.storyline.json") == [FULL]


@pytest.mark.parametrize(
    "convert_input",
    [str, lambda t: t.encode("utf-8"), lambda t: bytearray(t.encode("utf-8")), lambda t: memoryview(t.encode())],
    ids=["str", "bytes", "bytearray", "memoryview"],
)
def test_single_document_from_any_text_type(convert_input):
    assert fmt.decode(convert_input(FULL_TEXT), "full.storyline.json") == [FULL]


def test_compact_single_document_with_trailing_newline():
    assert fmt.decode(line(story()) + "\n") == [story()]


def test_single_document_invalid_storyline_raises_storyline_error_without_line():
    with pytest.raises(StorylineError) as info:
        fmt.decode(json.dumps(story(session=""), indent=2), "logs/a.json")
    err = info.value
    assert err.pointer == "/session"
    assert err.line is None
    assert err.document_id == "logs/a.json"
    assert "in logs/a.json" in str(err)


def test_decode_keeps_the_document_exactly():
    [decoded] = fmt.decode(FULL_TEXT)
    assert decoded == FULL
    assert decoded["task"]["result"]["retry_counts"] == {"shell": 1}
    assert decoded["turns"][1]["metrics"]["cost_usd"] == 0.0012345678901234567
    assert [t["id"] for t in decoded["turns"]] == [10, 11, 3]


# -------------------------------------------------------------------------------------------- JSON Lines


def test_jsonl_of_documents():
    docs = [story("s1"), story("s2"), story("s3")]
    assert fmt.decode(jsonl(*docs), "logs/a.jsonl") == docs


def test_jsonl_blank_lines_are_skipped():
    text = "\n" + line(story("s1")) + "\n\n   \n\t\n" + line(story("s2")) + "\n\n"
    assert [s["session"] for s in fmt.decode(text)] == ["s1", "s2"]


def test_jsonl_without_trailing_newline():
    text = line(story("s1")) + "\n" + line(story("s2"))
    assert [s["session"] for s in fmt.decode(text)] == ["s1", "s2"]


def test_jsonl_with_crlf_line_endings():
    text = line(story("s1")) + "\r\n" + line(story("s2")) + "\r\n"
    assert [s["session"] for s in fmt.decode(text)] == ["s1", "s2"]


@pytest.mark.parametrize(
    ("lines", "bad_line"),
    [
        ([line(story("s1")), line(story("s2")), "{not json", line(story("s4"))], 3),
        ([line(story("s1")), "", "", '{"schema_version": "storyline/v1",'], 4),
        ([line(story("s1")), '{"a": 1,}'], 2),
        ([line(story("s1")), line(story("s2")) + " trailing"], 2),
        (["{not json", line(story("s2")), line(story("s3"))], 1),
    ],
    ids=["middle", "after-blank-lines", "trailing-comma", "trailing-garbage", "first-line"],
)
def test_jsonl_bad_line_names_its_line(lines, bad_line):
    err = raises_format_error("\n".join(lines) + "\n")
    assert err.line == bad_line
    assert f"line {bad_line}" in str(err)
    assert "in logs/a.jsonl" in str(err)


@pytest.mark.parametrize(
    "value", [[story()], [], 42, "s", None, True], ids=["array", "empty-array", "int", "str", "null", "bool"]
)
def test_jsonl_line_that_is_not_an_object(value):
    err = raises_format_error(jsonl(story("s1"), value, story("s3")))
    assert err.line == 2


def test_jsonl_storyline_error_carries_line_and_file():
    with pytest.raises(StorylineError) as info:
        fmt.decode(jsonl(story("s1"), story("s2"), story("s3", turns=[{"id": 1, "src": "", "msg": 1}])), "logs/a.jsonl")
    err = info.value
    assert err.line == 3
    assert err.pointer == "/turns/0/src"
    assert err.document_id == "logs/a.jsonl"
    assert str(err) == "/turns/0/src: must be a non-empty string in logs/a.jsonl line 3"


def test_jsonl_storyline_error_line_counts_blank_lines():
    text = line(story("s1")) + "\n\n\n" + line(story("")) + "\n"
    with pytest.raises(StorylineError) as info:
        fmt.decode(text, "logs/a.jsonl")
    assert info.value.line == 4
    assert info.value.pointer == "/session"


def test_jsonl_storyline_error_uses_origin_document_id_when_no_file_is_named():
    doc = story("", origin={"format": "atif", "document_id": "src/a.json"})
    with pytest.raises(StorylineError) as info:
        fmt.decode(jsonl(story("s1"), doc))
    assert info.value.document_id == "src/a.json"
    assert info.value.line == 2


def test_iter_records_reports_every_record():
    text = jsonl(story("s1"), story(""), story("s3")) + "{bad\n" + line([1]) + "\n"
    records = list(fmt.iter_records(text, "logs/a.jsonl"))
    assert [r.line for r in records] == [1, 2, 3, 4, 5]
    assert [r.story["session"] if r.story else None for r in records] == ["s1", None, "s3", None, None]
    assert isinstance(records[1].error, StorylineError)
    assert records[1].error.pointer == "/session"
    assert records[1].value == story("")
    assert isinstance(records[3].error, FormatError)
    assert isinstance(records[4].error, FormatError)
    assert records[4].value == [1]
    assert records[3].raw == b"{bad"
    for rec in records:
        assert (rec.story is None) != (rec.error is None)


# -------------------------------------------------------------------------------- whole-file failures


@pytest.mark.parametrize(
    "data",
    [
        "{not json",
        '{"schema_version": "storyline/v1"',
        FULL_TEXT[:-5],
        "{'session': 's'}",
        '{"a": NaN}',
        '{"a": Infinity}',
        '{"a": 1e400}',
        "[" * 5000 + "]" * 5000,
        b"\xff\xfe\x00",
        b'{"session": "\xc3"}',
        '"\\ud800"',
        "x\ud800",
        '{"a": 1} {"b": 2}',
    ],
    ids=[
        "garbage",
        "truncated",
        "truncated-pretty",
        "single-quotes",
        "nan",
        "infinity",
        "float-overflow",
        "deep-nesting",
        "not-utf8",
        "truncated-utf8",
        "escaped-lone-surrogate",
        "str-lone-surrogate",
        "two-values-one-line",
    ],
)
def test_invalid_json_is_a_format_error(data):
    err = raises_format_error(data)
    assert "in logs/a.jsonl" in str(err)


@pytest.mark.parametrize(
    "data", ["", "   \n\n", "\ufeff", b"\xef\xbb\xbf\n"], ids=["empty", "whitespace", "bom-only", "bom-nl"]
)
def test_empty_file_holds_no_documents(data):
    """Decision (docs/storyline.md): an empty file is zero documents, so encode([]) round-trips."""
    assert fmt.decode(data, "logs/a.jsonl") == []
    assert fmt.decode(fmt.encode([]), "logs/a.jsonl") == []


@pytest.mark.parametrize(
    "text",
    [
        json.dumps([story()]),
        json.dumps([story(), story("s2")], indent=2),
        "[]",
        "42",
        '"storyline/v1"',
        "null",
        "true",
        "1.5",
    ],
    ids=["array", "pretty-array", "empty-array", "int", "string", "null", "true", "float"],
)
def test_top_level_array_or_scalar_is_a_format_error(text):
    err = raises_format_error(text, "logs/a.json")
    assert err.line is None


# ------------------------------------------------------------------------------------------------ BOM


def test_utf8_bom_accepted_in_bytes():
    assert fmt.decode(BOM + FULL_TEXT.encode("utf-8")) == [FULL]


def test_utf8_bom_accepted_in_str():
    assert fmt.decode("\ufeff" + FULL_TEXT) == [FULL]


def test_utf8_bom_accepted_before_jsonl():
    assert [s["session"] for s in fmt.decode(BOM + jsonl(story("s1"), story("s2")).encode())] == ["s1", "s2"]
