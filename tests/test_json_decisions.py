"""The decisions docs/reliability.md takes for hostile JSON, pinned for every reader."""

from __future__ import annotations

import json

import pytest

import pchronicle_datasets as pc

STORY = '{"schema_version": "storyline/v1", "session": "%s", "agent": {"id": "a"}, "turns": [%s]}'
TURN = '{"id": 1, "src": "user", "msg": %s}'
ROW = (
    '{"session_id": "s", "step_id": 1, "messages": [{"role": "user", "content": %s}], '
    '"response": {"role": "assistant", "content": "a"}}'
)
RECORD = '{"conversations": [{"from": "human", "value": %s}, {"from": "gpt", "value": "a"}]}'


def first_msg(fmt: str, text: str):
    [story] = pc.into_storyline(fmt, text, document_id="t")
    return next(t["msg"] for t in story["turns"] if t["src"] == "user")


def test_duplicate_keys_the_last_one_wins():
    """RFC 8259 leaves it open; orjson (and Python's json) keep the last value: so do all readers."""
    assert first_msg("storyline", STORY % ("s", '{"id": 1, "src": "user", "msg": "first", "msg": "last"}')) == "last"
    assert first_msg("openai-msg", ROW % '"first", "content": "last"') == "last"
    assert first_msg("sharegpt", RECORD % '"first", "value": "last"') == "last"
    [story] = pc.into_storyline(
        "storyline", (STORY % ("s", TURN % '"x"')).replace('"session": "s"', '"session": "a", "session": "b"')
    )
    assert story["session"] == "b"


@pytest.mark.parametrize(
    "fmt,template", [("storyline", STORY % ("s", TURN)), ("openai-msg", ROW), ("sharegpt", RECORD)]
)
def test_a_bom_is_skipped(fmt, template):
    text = template % '"hi"' if fmt != "storyline" else STORY % ("s", TURN % '"hi"')
    assert first_msg(fmt, "\ufeff" + text) == "hi"
    assert first_msg(fmt, b"\xef\xbb\xbf" + text.encode()) == "hi"


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e400"])
@pytest.mark.parametrize("fmt", ["storyline", "openai-msg", "sharegpt"])
def test_non_finite_numbers_are_refused(fmt, token):
    text = {"storyline": STORY % ("s", TURN % token), "openai-msg": ROW % token, "sharegpt": RECORD % token}[fmt]
    with pytest.raises(pc.FormatError, match="not valid JSON"):
        pc.into_storyline(fmt, text, document_id="t")


@pytest.mark.parametrize("fmt", ["storyline", "openai-msg", "sharegpt"])
def test_integers_beyond_64_bits_are_refused_and_64_bit_ones_kept_exactly(fmt):
    def text(value: str) -> str:
        return {
            "storyline": STORY % ("s", TURN % f'{{"n": {value}}}'),
            "openai-msg": ROW % f'{{"n": {value}}}',
            "sharegpt": RECORD % f'"{{\\"n\\": {value}}}"',
        }[fmt]

    if fmt != "sharegpt":  # in ShareGPT the number sits inside a string value, which stays text
        with pytest.raises(pc.FormatError, match="outside the 64-bit range") as err:
            pc.into_storyline(fmt, text("18446744073709551616"), document_id="t")
        assert err.value.pointer.endswith("/n")
        for exact in (2**64 - 1, -(2**63)):
            assert first_msg(fmt, text(str(exact))) == {"n": exact}


@pytest.mark.parametrize("fmt", ["storyline", "openai-msg", "sharegpt"])
def test_escaped_lone_surrogates_and_invalid_utf8_are_refused(fmt):
    template = {"storyline": STORY % ("s", TURN), "openai-msg": ROW, "sharegpt": RECORD}[fmt]
    with pytest.raises(pc.FormatError):
        pc.into_storyline(fmt, template % '"\\ud800"', document_id="t")
    with pytest.raises(pc.FormatError):
        pc.into_storyline(fmt, (template % '"ok"').encode().replace(b"ok", b"o\xff"), document_id="t")
    with pytest.raises(pc.FormatError):
        pc.into_storyline(fmt, template % '"ok"' + "\ud800", document_id="t")


def test_nesting_deeper_than_writers_can_write_is_refused_with_its_pointer():
    deep = "[" * 300 + "]" * 300
    with pytest.raises(pc.StorylineError, match="nested deeper than 254") as err:
        pc.into_storyline("storyline", STORY % ("s", TURN % deep), document_id="t")
    assert err.value.pointer.startswith("/turns/0/msg/0/0")
    with pytest.raises(pc.FormatError, match="not valid JSON"):  # past orjson's own limit of 1024
        pc.into_storyline("storyline", STORY % ("s", TURN % ("[" * 2000 + "]" * 2000)), document_id="t")


@pytest.mark.parametrize("fmt", ["storyline", "openai-msg", "sharegpt", "auto"])
@pytest.mark.parametrize("text", ["", "\n\n  \n", "\ufeff"])
def test_an_empty_file_holds_nothing(fmt, text):
    assert pc.into_storyline(fmt, text, document_id="t") == []


def test_numbers_as_strings_stay_strings_or_are_refused_where_a_number_is_required():
    assert first_msg("storyline", STORY % ("s", TURN % '"42"')) == "42"
    with pytest.raises(pc.FormatError, match="step_id must be a positive integer"):
        pc.into_storyline("openai-msg", ROW.replace('"step_id": 1', '"step_id": "1"') % '"q"', document_id="t")
    with pytest.raises(pc.StorylineError, match="expected an integer"):
        pc.into_storyline("storyline", STORY % ("s", '{"id": "1", "src": "user", "msg": 1}'), document_id="t")
    assert (
        json.loads(pc.from_storyline("storyline", [json.loads(STORY % ("s", TURN % '"42"'))]))["turns"][0]["msg"]
        == "42"
    )
