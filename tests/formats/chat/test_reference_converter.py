"""``to_sharegpt`` on the public chat files equals the reference agent's converter (hermes-agent 0.19.0, the
agent the ShareGPT seed describes) on the same messages and tools. The reference is not installed here: its
outputs are golden files (``tests/data/chat/reference/``, written by
``scripts/reference_sharegpt_for_chat_corpus.py``). The one difference on these files is documented in
``docs/formats/chat.md`` ("Versus the reference ShareGPT converter") and pinned below."""

from __future__ import annotations

import json
import re
from pathlib import Path

import orjson
import pytest

import pchronicle_datasets as pc

from .common import CORPUS, DATA, source_records

REFERENCE = DATA / "reference"
FILES = sorted(CORPUS.glob("*.json"))
# The files whose conversation uses the legacy `function_call` / `role: "function"` form, which the reference
# does not read (it knows `tool_calls` and `role: "tool"` only).
LEGACY = {"adp_toucan_1_5m_sample_raw"}
CALL_BLOCK = re.compile(r"\n<tool_call>\n(.*?)\n</tool_call>", re.S)


def reference(path: Path) -> list[dict]:
    record = orjson.loads((REFERENCE / f"{path.stem}.reference.json").read_bytes())
    assert record["source"] == f"corpus/{path.name}"
    return record["conversations"]


def ours(path: Path) -> list[dict]:
    [story] = pc.into_storyline("chat", path.read_bytes(), document_id=path.name)
    return pc.to_sharegpt(story)["conversations"]


def test_every_corpus_file_has_its_reference_output() -> None:
    made = {p.name.removesuffix(".reference.json") for p in REFERENCE.glob("*.reference.json")}
    assert made == {p.stem for p in FILES}


@pytest.mark.parametrize("path", [p for p in FILES if p.stem not in LEGACY], ids=lambda p: p.stem)
def test_to_sharegpt_equals_the_reference(path: Path) -> None:
    assert ours(path) == reference(path)


@pytest.mark.parametrize("path", [p for p in FILES if p.stem in LEGACY], ids=lambda p: p.stem)
def test_legacy_function_calls_are_written_where_the_reference_drops_them(path: Path) -> None:
    """The reference writes an assistant message with only a legacy ``function_call`` as an empty turn and
    leaves out the ``function`` result; ``to_sharegpt`` writes the call and its result like any other. Without
    them, the two outputs are the same."""
    got = ours(path)
    [record] = source_records(path)
    legacy = [m for m in record["messages"] if m.get("function_call")]
    results = [m for m in record["messages"] if m["role"] == "function"]
    calls = [json.loads(block) for e in got if e["from"] == "gpt" for block in CALL_BLOCK.findall(e["value"])]
    assert [c["name"] for c in calls] == [r["name"] for r in results] and len(calls) == len(legacy)
    tool_turns = [e for e in got if e["from"] == "tool"]
    assert len(tool_turns) == len(results)
    stripped = [{**e, "value": CALL_BLOCK.sub("", e["value"])} if e["from"] == "gpt" else e for e in got]
    stripped = [e for e in stripped if e["from"] != "tool"]
    assert stripped == reference(path)
