"""The reference's JSON text, exactly: the ShareGPT rendering writes every JSON value as
``json.dumps(value, ensure_ascii=False)`` and reads tool output as ``json.loads`` does (the reference converter's
own calls), whatever faster route ``render`` takes to the same bytes (a C encoder made once, objects spelled out,
orjson where it reads the same values)."""

from __future__ import annotations

import json
import math

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pchronicle_datasets.render.sharegpt import gpt_value, jdumps, response_content, tool_value
from tests.strategies import json_values, texts

# Values whose text is easy to get wrong: floats (repr, not orjson's spelling), integers beyond 64 bits
# (orjson cannot write them and reads them as floats), NaN and infinities (json writes NaN, Infinity), -0.0,
# escapes (control characters, quotes, backslashes), non-ASCII kept as is (ensure_ascii=False), U+2028, and a
# lone surrogate (a Python string may hold one; json writes it raw).
AWKWARD = [
    1e16,
    1e-05,
    2.5e-05,
    -0.0,
    1.0,
    5e-324,
    1.7976931348623157e308,
    2**64,
    -(2**63) - 1,
    10**40,
    math.nan,
    math.inf,
    -math.inf,
    'é\u2028\x00\x1f\x7f"\\/\t\n',
    "\ud800",
    "日本語 🎉",
    {"nested": [{"a": None, "b": True, "c": [1, 2.0]}], "": {}},
    [],
    {},
]


@pytest.mark.parametrize("value", AWKWARD, ids=repr)
def test_jdumps_is_json_dumps_for_awkward_values(value):
    assert jdumps(value) == json.dumps(value, ensure_ascii=False)


@given(json_values)
def test_jdumps_is_json_dumps(value):
    assert jdumps(value) == json.dumps(value, ensure_ascii=False)


def _reference_tool_value(results):
    # The reference converter's tool turn, as hermes-agent writes it.
    out = []
    for cid, name, content in results:
        try:
            if content.strip().startswith(("{", "[")):
                content = json.loads(content)
        except (json.JSONDecodeError, AttributeError):
            pass
        body = json.dumps({"tool_call_id": cid, "name": name, "content": content}, ensure_ascii=False)
        out.append(f"<tool_response>\n{body}\n</tool_response>")
    return "\n".join(out)


@given(st.lists(st.tuples(texts, texts, st.one_of(texts, json_values.map(json.dumps))), min_size=1, max_size=3))
def test_tool_value_is_the_references(results):
    assert tool_value(results) == _reference_tool_value(results)


@given(st.dictionaries(texts, json_values, max_size=3), texts, texts)
def test_a_tool_call_block_is_json_dumps_of_name_and_arguments(args, fn, msg):
    value = gpt_value({"src": "agent", "msg": msg, "tool_calls": [{"tcid": "c", "fn": fn, "args": args}]})
    block = json.dumps({"name": fn, "arguments": args}, ensure_ascii=False)
    assert value.endswith(f"<tool_call>\n{block}\n</tool_call>")


# Texts where orjson and json.loads part: json alone reads these (NaN, Infinity, 1e400, a lone surrogate escape,
# integers beyond 64 bits, which orjson would read as floats), or reads them differently from orjson.
READ_AWKWARD = [
    '{"n": NaN, "i": Infinity, "m": -Infinity}',
    "[1e400, -1e400]",
    '["\\ud800"]',
    '{"big": 18446744073709551616, "neg": -9223372036854775809, "in_text": "18446744073709551616"}',
    "[123456789012345678901234567890]",
    '{"a": 1, "a": 2}',
    "[1.0, -0.0, -0, 2.5e-05, 1E+2]",
    '  {"padded": true}  ',
    "[1, 2",
    "{not json",
    "[" * 300 + "]" * 300,
    "[" * 2000 + "]" * 2000,
]


def _json_loads_or_text(text):
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


@pytest.mark.parametrize("text", READ_AWKWARD, ids=lambda t: t[:40])
def test_tool_output_is_read_as_json_loads_reads_it(text):
    got = response_content(text)
    # Compared as JSON text (json.dumps): 1 and 1.0, 0 and -0.0 and nan != nan all tell apart there.
    assert json.dumps(got) == json.dumps(_json_loads_or_text(text))


@given(json_values.filter(lambda v: isinstance(v, (dict, list))), st.booleans())
def test_tool_output_is_read_as_json_loads_reads_it_any_value(value, compact):
    text = orjson.dumps(value).decode() if compact else json.dumps(value)
    assert json.dumps(response_content(text)) == json.dumps(json.loads(text))
