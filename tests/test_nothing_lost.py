"""Nothing-lost accounting: every leaf value of a generated valid source is found in its Storyline result —
in an authoritative field or in `unknown_fields` — unless the format's doc lists it as normalised away.

A leaf is a JSON scalar with its type (the string "42" is not the number 42). A string that holds JSON
(`arguments`, `meta_json`, `env_state` written as strings) counts as the leaves it encodes, since Storyline
keeps the parsed value. What each format's doc lists as normalised away is excluded by name below.
"""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings

import pchronicle_datasets as pc
from tests.strategies import corpora, sharegpt_records, storylines

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def leaves(value: Any, *, skip_keys: frozenset = frozenset()) -> set[tuple[str, Any]]:
    """Every scalar leaf as (type, value); JSON held in strings counts as its own leaves too."""
    out: set[tuple[str, Any]] = set()
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(v for k, v in node.items() if k not in skip_keys)
        elif isinstance(node, list):
            stack.extend(node)
        else:
            if isinstance(node, str) and node[:1] in ("{", "["):
                try:
                    stack.append(orjson.loads(node))  # the JSON it holds stands for the string
                    continue
                except orjson.JSONDecodeError:
                    pass
            out.add((type(node).__name__, node))
    return out


def lost(source: Any, story: dict, *, skip_keys: frozenset, normalised: set) -> set:
    found = leaves(story)
    return {leaf for leaf in leaves(source, skip_keys=skip_keys) if leaf not in found and leaf not in normalised}


# docs/formats/openai-msg.md, "What is normalised away": the message `role` (it selects turns and is
# restated by src/kind), `type: "function"`, `step_id` (it becomes turn ids by a formula), and null / empty
# values the RFC counts as missing.
OPENAI_SKIP = frozenset({"role", "step_id"})
OPENAI_NORMALISED = {("str", "function"), ("NoneType", None), ("str", "")}


@SETTINGS
@given(corpora())
def test_openai_msg_keeps_every_source_leaf(rows):
    data = b"".join(orjson.dumps(r) + b"\n" for r in rows)
    stories = pc.into_storyline("openai-msg", data, document_id="gen/cap.jsonl")
    for sid in {r["session_id"] for r in rows}:
        story = next(s for s in stories if s["session"] == sid)
        source = [r for r in rows if r["session_id"] == sid]
        assert lost(source, story, skip_keys=OPENAI_SKIP, normalised=OPENAI_NORMALISED) == set()


@SETTINGS
@given(sharegpt_records)
def test_sharegpt_keeps_every_source_leaf(record):
    """Elements are decomposed (think, content, calls), so an element's value is accounted for when
    same-source export writes it back from the document; every other leaf must be found as is."""
    line = orjson.dumps(record).decode()
    [story] = pc.into_storyline("sharegpt", line, document_id="gen/t.jsonl")
    rest = {k: v for k, v in record.items() if k != "conversations"} if isinstance(record, dict) else {}
    assert lost(rest, story, skip_keys=frozenset(), normalised={("NoneType", None)}) == set()
    written = orjson.loads(pc.from_storyline("sharegpt", [story]))
    elements = record["conversations"] if isinstance(record, dict) else record
    assert (written["conversations"] if isinstance(written, dict) else written) == elements


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(storylines())
def test_storyline_keeps_the_document_itself(story):
    text = pc.from_storyline("storyline", [story])
    [back] = pc.into_storyline("storyline", text)
    assert orjson.dumps(back, option=orjson.OPT_SORT_KEYS) == orjson.dumps(story, option=orjson.OPT_SORT_KEYS)
    assert lost(story, back, skip_keys=frozenset(), normalised=set()) == set()


def test_the_accounting_notices_a_dropped_value():
    """The check can fail: a residual value removed from the document is reported as lost."""
    row = {
        "session_id": "s",
        "step_id": 1,
        "vendor_flag": "keep-me",
        "messages": [{"role": "user", "content": "q"}],
        "response": {"role": "assistant", "content": "a"},
    }
    [story] = pc.into_storyline("openai-msg", orjson.dumps([row]))
    assert lost([row], story, skip_keys=OPENAI_SKIP, normalised=OPENAI_NORMALISED) == set()
    story["unknown_fields"]["sources"]["openai-msg"]["fields"].pop("/session_steps/0/vendor_flag")
    assert lost([row], story, skip_keys=OPENAI_SKIP, normalised=OPENAI_NORMALISED) == {("str", "keep-me")}
