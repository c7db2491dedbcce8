"""Shared by the ShareGPT tests: the reference converter's examples in ``tests/data/sharegpt/``, element
builders, and readers and writers through the hub API that check every document they produce."""

from __future__ import annotations

import json
from typing import Any

import pchronicle_datasets as pc
from pchronicle_datasets import formats as pc_formats
from pchronicle_datasets.formats import sharegpt as fmt
from tests import goldens

DATA = goldens.DATA / "sharegpt"
EXAMPLES = ("ex1_reasoning", "ex2_parallel_tools", "ex3_plain")
EMPTY = "<think>\n</think>\n"
PREAMBLE = "You are a function calling AI model."


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


SYSTEM_NO_TOOLS = load("ex3_plain.conversations.json")[0]["value"]  # the reference's prompt for no tools
EX2_TOOLS = load("ex2_parallel_tools.input.json")["tools"]


def assert_same(got: Any, want: Any, path: str = "") -> None:
    """Type-strict JSON equality (``True`` ≠ ``1``, ``1.0`` ≠ ``1``), naming the first difference."""
    assert type(got) is type(want), f"{path or '(root)'}: {type(got).__name__} {got!r} != {type(want).__name__}"
    if isinstance(want, dict):
        assert set(got) == set(want), f"{path}: keys {sorted(got)} != {sorted(want)}"
        for key in want:
            assert_same(got[key], want[key], f"{path}/{key}")
    elif isinstance(want, list):
        assert len(got) == len(want), f"{path}: length {len(got)} != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, f"{path}/{i}")
    else:
        assert got == want, f"{path or '(root)'}: {got!r} != {want!r}"


def jline(record: Any) -> str:
    return json.dumps(record, ensure_ascii=False)


def read(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    stories = pc.into_storyline("sharegpt", data, document_id=document_id)
    for story in stories:
        pc.validate(story)
        assert story["unknown_key_counts"] == pc.compute_unknown_key_counts(story["unknown_fields"])
    return stories


def same_source(record: Any) -> Any:
    """``from_storyline("sharegpt", into_storyline("sharegpt", line))`` as a JSON value."""
    stories = read(jline(record), "same.jsonl")
    assert len(stories) == 1
    out = pc.from_storyline("sharegpt", stories)
    assert out.endswith("\n") and out.count("\n") == 1
    return json.loads(out)


def doc(turns: list[dict[str, Any]], tools: Any = None, **fields: Any) -> dict[str, Any]:
    agent: dict[str, Any] = {"id": "a"}
    if tools is not None:
        agent["tools"] = tools
    story = {"schema_version": "storyline/v1", "session": "s", "agent": agent, **fields}
    story["turns"] = [{"id": i + 1, **turn} for i, turn in enumerate(turns)]
    pc.validate(story)
    return story


def conv(story: dict[str, Any], **options: Any) -> list[dict[str, str]]:
    out = pc.to_sharegpt(story, **options)
    assert list(out) == ["conversations"]
    return out["conversations"]


def values(story: dict[str, Any], **options: Any) -> list[tuple[str, str]]:
    return [(c["from"], c["value"]) for c in conv(story, **options)]


def H(value: Any) -> dict[str, Any]:
    return {"from": "human", "value": value}


def G(value: Any) -> dict[str, Any]:
    return {"from": "gpt", "value": value}


def T(value: Any) -> dict[str, Any]:
    return {"from": "tool", "value": value}


def call_block(name: str, arguments: Any) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments}, ensure_ascii=False)}\n</tool_call>"


def response_block(cid: Any, name: str, content: Any) -> str:
    payload = {"tool_call_id": cid, "name": name, "content": content}
    return f"<tool_response>\n{json.dumps(payload, ensure_ascii=False)}\n</tool_response>"


def residual(story: dict[str, Any]) -> dict[str, Any]:
    return story["unknown_fields"]["sources"]["sharegpt"]["fields"]


def records_of(data: str | bytes, document_id: str) -> list[Any]:
    """Every record of a file with its document or its error (the hub's reader when it has one)."""
    hub = getattr(pc_formats, "iter_records", None)
    if hub is not None:
        return list(hub("sharegpt", data, document_id))
    return list(fmt.iter_records(data, document_id))
