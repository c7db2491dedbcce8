"""Generated gateway corpora: rows → Storyline → rows → Storyline is stable, and same-source export gives
the input back within RFC-0009's fidelity boundary.

The generator (``corpora`` in ``tests/strategies.py``) writes rows the way gateways do — each row's
`messages` is the whole history so far (exact copies), then the new messages — with the awkward parts
mixed in. Copies are generated in the canonical form export rebuilds (the fidelity boundary normalises
them), and JSON strings are written compactly by orjson, so export must equal the input exactly.
"""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings

import pchronicle_datasets as pc
from tests.strategies import corpora

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(corpora())
def test_rows_storyline_rows_storyline_is_stable(rows):
    data = b"".join(orjson.dumps(r) + b"\n" for r in rows)
    stories = pc.into_storyline("openai-msg", data, document_id="gen/cap.jsonl")
    for story in stories:
        pc.validate(story)
    exported = pc.from_storyline("openai-msg", stories)
    again = pc.into_storyline("openai-msg", exported, document_id="gen/cap.jsonl")
    assert orjson.dumps(again) == orjson.dumps(stories)


@SETTINGS
@given(corpora())
def test_same_source_export_equals_the_input(rows):
    data = b"".join(orjson.dumps(r) + b"\n" for r in rows)
    stories = pc.into_storyline("openai-msg", data, document_id="gen/cap.jsonl")
    exported = [orjson.loads(line) for line in pc.from_storyline("openai-msg", stories).split("\n") if line]
    assert len(exported) == len(rows)
    for got, want in zip(exported, rows, strict=True):
        assert _tag(got) == _tag(want)


def _tag(value):
    """Type-strict comparison form: dict key order ignored, 1 / 1.0 / True told apart."""
    if isinstance(value, dict):
        return {k: _tag(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tag(v) for v in value]
    return (type(value).__name__, value)


@settings(max_examples=25, deadline=None)
@given(corpora())
def test_synthesized_rows_read_back_to_the_same_turns(rows):
    """Without openai-msg residual, export synthesizes rows whose reading gives the same conversation."""
    data = b"".join(orjson.dumps(r) + b"\n" for r in rows)
    stories = pc.into_storyline("openai-msg", data, document_id="gen/cap.jsonl")
    for story in stories:
        bare = {k: v for k, v in story.items() if k not in ("unknown_fields", "unknown_key_counts", "meta")}
        back = pc.into_storyline("openai-msg", pc.from_storyline("openai-msg", bare), document_id="x")
        assert len(back) == 1
        got = [(t["src"], t["msg"], [(c["fn"], c["args"]) for c in t.get("tool_calls", [])]) for t in back[0]["turns"]]
        want = [(t["src"], t["msg"], [(c["fn"], c["args"]) for c in t.get("tool_calls", [])]) for t in story["turns"]]
        assert _tag(got) == _tag(want)
        assert _tag(back[0]["agent"].get("tools")) == _tag(story["agent"].get("tools"))
