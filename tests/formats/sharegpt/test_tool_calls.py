"""Seed, "Нормализация вызовов инструментов" (tool call normalisation): one ``<tool_call>`` block per call,
arguments as objects, a counted and logged warning for arguments that are not JSON."""

from __future__ import annotations

import logging

import pytest

import pchronicle_datasets as pc
from tests.formats.sharegpt.helpers import (
    EMPTY,
    call_block,
    doc,
    values,
)


@pytest.mark.parametrize(
    ("msg", "want"),
    [
        ("Let me look.", EMPTY + "Let me look.\n" + call_block("ls", {"p": "."})),
        ("", EMPTY + call_block("ls", {"p": "."})),
        ("  \n ", EMPTY + call_block("ls", {"p": "."})),
        (None, EMPTY + call_block("ls", {"p": "."})),
        ("two\nlines  ", EMPTY + "two\nlines  \n" + call_block("ls", {"p": "."})),
    ],
)
def test_content_in_a_turn_with_calls_only_when_non_blank(msg, want):
    story = doc([{"src": "agent", "msg": msg, "tool_calls": [{"tcid": "c1", "fn": "ls", "args": {"p": "."}}]}])
    assert values(story)[1] == ("gpt", want)


def test_one_tool_call_block_per_call():
    calls = [
        {"tcid": "c1", "fn": "web_search", "args": {"query": "weather Zürich"}},
        {"tcid": "c2", "fn": "read_file", "args": {"path": "notes.txt", "offset": 0}},
        {"tcid": "c3", "fn": "noop", "args": {}},
    ]
    got = values(doc([{"src": "agent", "msg": "x", "reason": "r", "tool_calls": calls}]))[1][1]
    assert got == (
        "<think>\nr\n</think>\nx\n"
        '<tool_call>\n{"name": "web_search", "arguments": {"query": "weather Zürich"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt", "offset": 0}}\n</tool_call>\n'
        '<tool_call>\n{"name": "noop", "arguments": {}}\n</tool_call>'
    )
    assert got.count("<tool_call>") == 3


def test_string_arguments_become_an_empty_object_with_a_counted_logged_warning(caplog):
    story = doc([{"src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "ls", "args": "{not json"}]}])
    with pc.collect_losses() as report:
        got = values(story)[1][1]
    assert got == EMPTY + '<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>'
    assert report.counts["invalid_arguments"] == 1
    # outside a loss report, each loss is a logged warning
    with caplog.at_level(logging.WARNING):
        values(story)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings and all(r.name.startswith("pchronicle_datasets") for r in warnings)
    # keep_invalid_args keeps the raw string, with no loss and no warning
    caplog.clear()
    with pc.collect_losses() as report:
        kept = values(story, keep_invalid_args=True)[1][1]
    assert kept == EMPTY + '<tool_call>\n{"name": "ls", "arguments": "{not json"}\n</tool_call>'
    assert not report
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_right_strip_with_calls_strip_without():
    calls = [{"tcid": "c1", "fn": "ls", "args": {}}]
    with_calls = doc([{"src": "agent", "msg": "  lead", "tool_calls": calls}])
    assert (
        values(with_calls, empty_think=False)[1][1]
        == '  lead\n<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>'
    )
    without = doc([{"src": "agent", "msg": "\n  x  \n"}])
    assert values(without, empty_think=False)[1][1] == "x"
    assert values(without)[1][1] == EMPTY + "\n  x"  # the think block is added first, then stripped
    assert values(doc([{"src": "agent", "msg": "  "}]))[1][1] == EMPTY.strip()
