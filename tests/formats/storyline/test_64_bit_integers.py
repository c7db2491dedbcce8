"""Integers beyond 64 bits are refused with their pointer and line; 64-bit integers and long float digit runs
stay exact."""

from __future__ import annotations

import json

import pytest

from pchronicle_datasets.formats import storyline_file as fmt
from tests.formats.storyline.helpers import (
    line,
    raises_format_error,
    story,
)

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
