"""Mutated real sessions: every value of a record replaced by another JSON value (or deleted), records repeated.
The reader gives a document or a ``PchronicleError`` (never a bare ``KeyError``/``TypeError``), and a document it
gives is written back as the mutated file, as equal JSON, with nothing lost: every value mapped or residual."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import pchronicle_datasets as pc
from pchronicle_datasets.errors import PchronicleError
from pchronicle_datasets.formats import from_storyline, iter_records
from tests.formats.qwen_code.cases import FILES, raw_records

#: Values a mutation puts in place: wrong types, empty containers, values that look like the format's own.
VALUES = [None, 0, -1, 2.5, True, "", "x", "2026-08-05T18:00:00Z", "0", [], {}, [1], {"a": 1}, {"0": 1}]
VALUES += [[{"text": "t"}], {"text": "t", "thought": True}, {"functionCall": {"id": "c", "name": "n"}}]
VALUES += [{"functionResponse": {"id": "call_y31gsjhj", "response": {}}}, {"id": "x"}]


def _paths(value: Any, at: tuple = ()) -> list[tuple]:
    out = [at]
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        out += _paths(child, (*at, key))
    return out


def _mutate(records: list, data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(records) - 1), label="record")
    at = data.draw(st.sampled_from(_paths(records[i])), label="path")
    action = data.draw(st.sampled_from(["set", "set", "set", "delete", "repeat"]), label="action")
    if action == "repeat":
        records.insert(data.draw(st.integers(0, len(records))), json.loads(json.dumps(records[i])))
        return
    if not at:
        records[i] = data.draw(st.sampled_from(VALUES)) if action == "set" else {}
        return
    parent = records[i]
    for key in at[:-1]:
        parent = parent[key]
    if action == "delete":
        parent.pop(at[-1])
    else:
        parent[at[-1]] = json.loads(json.dumps(data.draw(st.sampled_from(VALUES), label="value")))


@seed(20261204)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_sessions_read_or_refuse_and_come_back(data):
    records = raw_records(data.draw(st.sampled_from(FILES), label="file"))
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        _mutate(records, data)
    text = "".join(json.dumps(r) + "\n" for r in records)
    for rec in iter_records("qwen-code", text, "f.jsonl"):
        assert rec.error is None or isinstance(rec.error, PchronicleError)
        if rec.story is not None:
            with pc.collect_losses() as losses:
                out = from_storyline("qwen-code", [rec.story])
            assert not losses, losses.summary()
            assert [json.loads(line) for line in out.splitlines()] == records
