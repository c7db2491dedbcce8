"""The ``storyline`` file format (one document, or JSON Lines of documents) and the hub API around it."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from typing import Any

import orjson
import pytest

from pchronicle_datasets import (
    FormatError,
    PchronicleError,
    StorylineError,
    convert,
    format_names,
    from_storyline,
    into_storyline,
)
from pchronicle_datasets.formats import storyline_file as fmt
from pchronicle_datasets.formats.base import first_value

HERE = Path(__file__).resolve().parent
FULL_PATH = HERE / "data" / "validation" / "every_optional_field.storyline.json"
FULL_TEXT = FULL_PATH.read_text(encoding="utf-8")
FULL: dict[str, Any] = json.loads(FULL_TEXT)
SAMPLES = sorted((HERE.parent / "pchronicle_datasets" / "samples" / "storyline").glob("*.storyline.json*"))
BOM = b"\xef\xbb\xbf"


def story(session: str = "s1", **extra: Any) -> dict[str, Any]:
    doc = {
        "schema_version": "storyline/v1",
        "session": session,
        "agent": {"id": "a"},
        "turns": [{"id": 1, "src": "user", "msg": "hi"}, {"id": 0, "src": "agent", "msg": None}],
    }
    doc.update(extra)
    return doc


def line(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False)


def jsonl(*docs: Any) -> str:
    return "".join(line(d) + "\n" for d in docs)


def raises_format_error(data: Any, document_id: str | None = "logs/a.jsonl") -> FormatError:
    with pytest.raises(PchronicleError) as info:
        fmt.decode(data, document_id)
    err = info.value
    assert type(err) is FormatError, f"{type(err).__name__}: {err}"
    assert not isinstance(err, orjson.JSONDecodeError)
    assert err.document_id == document_id
    return err


# -------------------------------------------------------------------------------- one document per file


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


# ------------------------------------------------------------------------------------ 64-bit integers

BIG_INTS = ["123456789012345678901234", "-9223372036854775809", "18446744073709551616", "-" + "9" * 300]


def _with_msg(raw_value: str, *, indent: bool = False) -> str:
    text = json.dumps(story(turns=[{"id": 1, "src": "user", "msg": {"x": "@@"}}]), indent=2 if indent else None)
    return text.replace('"@@"', raw_value)


@pytest.mark.parametrize("raw", BIG_INTS)
@pytest.mark.parametrize("indent", [False, True], ids=["compact", "pretty"])
def test_big_int_single_document_refused_with_pointer(raw, indent):
    err = raises_format_error(_with_msg(raw, indent=indent), "logs/a.json")
    assert err.pointer == "/turns/0/msg/x"
    assert raw in str(err)


@pytest.mark.parametrize("raw", BIG_INTS)
def test_big_int_in_later_jsonl_line_refused_with_pointer_and_line(raw):
    text = line(story("s1")) + "\n" + _with_msg(raw) + "\n"
    err = raises_format_error(text)
    assert err.pointer == "/turns/0/msg/x"
    assert err.line == 2


@pytest.mark.parametrize("raw", BIG_INTS)
def test_big_int_in_first_jsonl_line_refused_with_pointer_and_line(raw):
    text = _with_msg(raw) + "\n" + line(story("s2")) + "\n"
    err = raises_format_error(text)
    assert err.pointer == "/turns/0/msg/x"
    assert err.line == 1


@pytest.mark.parametrize(
    "pointer_and_text",
    [
        (
            "/turns/0/id",
            '{"schema_version":"storyline/v1","session":"s","agent":{"id":"a"},'
            '"turns":[{"id":99999999999999999999,"src":"u","msg":null}]}',
        ),
        (
            "/extra/a~1b/0",
            '{"schema_version":"storyline/v1","session":"s","agent":{"id":"a"},"turns":[],'
            '"extra":{"a/b":[-99999999999999999999]}}',
        ),
    ],
    ids=["turn-id", "escaped-key-in-array"],
)
def test_big_int_pointer_anywhere(pointer_and_text):
    pointer, text = pointer_and_text
    assert raises_format_error(text).pointer == pointer


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("9223372036854775807", 2**63 - 1),
        ("-9223372036854775808", -(2**63)),
        ("18446744073709551615", 2**64 - 1),
        ("1234567890123456789", 1234567890123456789),
    ],
    ids=["int64-max", "int64-min", "uint64-max", "nineteen-digits"],
)
def test_64_bit_integers_stay_exact_integers(raw, expected):
    [doc] = fmt.decode(_with_msg(raw))
    value = doc["turns"][0]["msg"]["x"]
    assert type(value) is int
    assert value == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("0.0012345678901234567", 0.0012345678901234567),
        ("12345678901234567890.5", 12345678901234567890.5),
        ("1.5e19", 1.5e19),
        ("12345678901234567890e0", 12345678901234567890e0),
        ("1e-1234567890123456789", 0.0),
    ],
    ids=["long-fraction", "long-integer-part", "exponent", "long-mantissa-exponent", "long-negative-exponent"],
)
def test_long_digit_runs_in_floats_are_not_big_ints(raw, expected):
    [doc] = fmt.decode(_with_msg(raw))
    value = doc["turns"][0]["msg"]["x"]
    assert type(value) is float
    assert value == expected


def test_long_digit_run_in_a_string_is_fine():
    [doc] = fmt.decode(_with_msg('"123456789012345678901234567890"'))
    assert doc["turns"][0]["msg"]["x"] == "123456789012345678901234567890"


# ---------------------------------------------------------------------------------------------- encode


@pytest.mark.parametrize(
    "docs",
    [
        [FULL],
        [story()],
        [story("s1"), FULL, story("s3")],
        [story(turns=[{"id": 1, "src": "user", "msg": 'héllo 🌍 "q" \\ \n \u2028 \u0000'}])],
        [story(extra={"f": [0.1, 1e-300, 1.7976931348623157e308, -0.0, 2**64 - 1, -(2**63)]})],
    ],
    ids=["full", "minimal", "several", "unicode", "numbers"],
)
def test_encode_then_decode_round_trips(docs):
    before = copy.deepcopy(docs)
    text = fmt.encode(docs)
    assert docs == before
    assert isinstance(text, str)
    assert text.endswith("\n")
    assert text.count("\n") == len(docs)  # JSON Lines split on \n only (not on U+2028)
    assert fmt.decode(text, "round.jsonl") == docs
    assert fmt.decode(text.encode("utf-8")) == docs


def test_encode_single_document_is_a_valid_single_document_file():
    text = fmt.encode([FULL])
    assert json.loads(text) == FULL
    assert fmt.decode(text) == [FULL]


def test_encode_preserves_turn_order():
    [decoded] = fmt.decode(fmt.encode([FULL]))
    assert [t["id"] for t in decoded["turns"]] == [10, 11, 3]


def test_encode_validates():
    with pytest.raises(StorylineError) as info:
        fmt.encode([story(), story(session="")])
    assert info.value.pointer == "/session"


def test_encode_refuses_non_json_values():
    with pytest.raises(StorylineError) as info:
        fmt.encode([story(extra={"s": {1, 2}})])
    assert info.value.pointer == "/extra/s"


# ----------------------------------------------------------------------------------------------- sniff


@pytest.mark.parametrize(
    "head",
    [
        FULL_TEXT.encode(),
        fmt.encode([story()]).encode(),
        BOM + FULL_TEXT.encode(),
        json.dumps(story(), indent=4).encode(),
    ],
    ids=["pretty", "compact", "bom", "indent-4"],
)
def test_sniff_true_for_storyline(head):
    assert fmt.sniff(first_value(head)) is True


@pytest.mark.parametrize(
    "head",
    [
        b"",
        b'{"session": "s", "turns": []}',
        b'{"schema_version": "storyline/v2", "session": "s"}',
        b'{"schema_version": "ATIF-v1.7", "steps": []}',
        b"session,turns\n",
    ],
    ids=["empty", "no-version", "v2", "atif", "csv"],
)
def test_sniff_false_for_other_text(head):
    assert fmt.sniff(first_value(head)) is False


# ---------------------------------------------------------------------------------------------- samples


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples_decode_and_sniff(path: Path):
    data = path.read_bytes()
    assert fmt.sniff(first_value(data))
    stories = fmt.decode(data, path.name)
    nonblank = [ln for ln in data.splitlines() if ln.strip()]
    expected = len(nonblank) if path.suffix == ".jsonl" else 1
    assert len(stories) == expected
    assert fmt.decode(fmt.encode(stories)) == stories
    assert all(r.error is None for r in fmt.iter_records(data, path.name))


# ------------------------------------------------------------------------------------------------- hub


def test_into_storyline():
    assert into_storyline("storyline", FULL_TEXT, document_id="full.storyline.json") == [FULL]
    assert into_storyline("storyline", FULL_TEXT.encode()) == [FULL]


def test_into_storyline_error_names_the_document():
    with pytest.raises(StorylineError) as info:
        into_storyline("storyline", line(story("")), document_id="logs/a.json")
    assert "in logs/a.json" in str(info.value)


def test_into_storyline_unknown_format_lists_names():
    with pytest.raises(ValueError) as info:
        into_storyline("nope", FULL_TEXT)
    assert "storyline" in str(info.value)
    assert "nope" in str(info.value)
    assert not isinstance(info.value, PchronicleError)


def test_into_storyline_refuses_non_text():
    with pytest.raises(TypeError):
        into_storyline("storyline", FULL)  # type: ignore[arg-type]


def test_from_storyline():
    assert fmt.decode(from_storyline("storyline", FULL)) == [FULL]
    assert fmt.decode(from_storyline("storyline", [FULL, story()])) == [FULL, story()]


def test_from_storyline_unknown_format_lists_names():
    with pytest.raises(ValueError, match="storyline"):
        from_storyline("nope", FULL)


def test_convert_storyline_to_storyline():
    text = jsonl(story("s1"), story("s2"))
    out = convert("storyline", "storyline", text, document_id="logs/a.jsonl")
    assert out == from_storyline("storyline", into_storyline("storyline", text))
    assert fmt.decode(out) == [story("s1"), story("s2")]
    assert fmt.decode(convert("storyline", "storyline", FULL_TEXT)) == [FULL]


def test_convert_unknown_target_fails_before_decoding():
    with pytest.raises(ValueError, match="storyline") as info:
        convert("storyline", "nope", "{not json")
    assert not isinstance(info.value, FormatError)


def test_convert_unknown_source():
    with pytest.raises(ValueError, match="storyline"):
        convert("nope", "storyline", FULL_TEXT)


def test_format_names():
    assert "storyline" in format_names()


# ---------------------------------------------------------------------------------------------- errors


def test_errors_survive_pickling():
    with pytest.raises(StorylineError) as info:
        fmt.decode(jsonl(story("s1"), story("")), "logs/a.jsonl")
    err = pickle.loads(pickle.dumps(info.value))
    assert type(err) is StorylineError
    assert (err.pointer, err.document_id, err.line, str(err)) == (
        "/session",
        "logs/a.jsonl",
        2,
        str(info.value),
    )
