"""Shared by the openai-msg tests: row builders, the golden cases of ``tests/data/openai_msg/``, and readers
that decode through the hub API and check the invariants every openai-msg document has."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pchronicle_datasets import FormatError, compute_unknown_key_counts, into_storyline, validate
from tests import goldens

NAME = "openai-msg"
AREA = "openai_msg"
DOC = "captures/gw-2026-03-01.jsonl"
T0 = "2026-03-01T10:00:00Z"
T1 = "2026-03-01T10:00:05Z"
T2 = "2026-03-01T10:00:09Z"

ROW_METRICS = ("reward", "step_reward", "is_terminal", "is_truncated", "is_session_completed", "is_trainable")
EMPTY_ROW_KEYS = ("blob_manifest", "chosen_response", "rejected_response", "ground_truth_answer", "reference_answer")
EMPTY_MSG_KEYS = ("name", "refusal", "tool_call_id", "tool_calls")
REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")


# ------------------------------------------------------------------------------------------ golden cases


def case(name: str) -> goldens.Golden:
    """A golden case of ``tests/data/openai_msg/`` (README there: the layout and the expected keys)."""
    return goldens.load(AREA, name)


def family(name: str) -> list[str]:
    """The member names of a family of golden cases (a folder of ``tests/data/openai_msg/``)."""
    return goldens.members(AREA, name)


def rows_of(golden: goldens.Golden) -> list:
    """The rows of a golden input (JSON Lines, an array, or the ``session_steps`` of an envelope)."""
    return source_rows(golden.text)[0]


def root_of(golden: goldens.Golden) -> dict:
    """The root fields of a golden envelope input (``{}`` for JSON Lines and arrays)."""
    return source_rows(golden.text)[1]


def source_rows(data: str) -> tuple[list, dict]:
    """Rows and root fields of an input text (an envelope, an array, or JSON Lines of rows)."""
    try:
        whole = json.loads(data)
    except ValueError:
        return [json.loads(line) for line in data.splitlines() if line.strip()], {}
    if isinstance(whole, list):
        return whole, {}
    if "session_steps" in whole:
        return whole["session_steps"], {k: v for k, v in whole.items() if k != "session_steps"}
    return [whole], {}


# ------------------------------------------------------------------------------------------ builders


def system(content: Any, **extra: Any) -> dict:
    return {"role": "system", "content": content, **extra}


def user(content: Any, **extra: Any) -> dict:
    return {"role": "user", "content": content, **extra}


def assistant(content: Any = None, **extra: Any) -> dict:
    return {"role": "assistant", "content": content, **extra}


def tool(call_id: Any, content: Any, **extra: Any) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content, **extra}


def call(call_id: Any, name: str, arguments: Any = "{}", **extra: Any) -> dict:
    """An OpenAI tool call; ``arguments`` is written as given (usually a JSON string)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}, **extra}


def row(step: Any, messages: Any, response: Any = None, *, session: Any = "s1", **extra: Any) -> dict:
    out: dict[str, Any] = {"session_id": session, "step_id": step, "messages": messages}
    if response is not None:
        out["response"] = response
    out.update(extra)
    return out


def jsonl(rows: list) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def array(rows: list) -> str:
    return json.dumps(rows, indent=1)


# ------------------------------------------------------------------------------------------ readers


def read(data: str | goldens.Golden, doc: str | None = DOC) -> list[dict]:
    """Decode a text (or a golden case's input) through the hub API and check the invariants."""
    text = data.text if isinstance(data, goldens.Golden) else data
    stories = into_storyline(NAME, text, document_id=doc)
    for story in stories:
        check_invariants(story, doc)
    return stories


def one(data: str | goldens.Golden, doc: str | None = DOC) -> dict:
    stories = read(data, doc=doc)
    assert len(stories) == 1, [s["session"] for s in stories]
    return stories[0]


def check_invariants(story: dict, doc: str | None) -> None:
    validate(story)
    assert story["schema_version"] == "storyline/v1"
    assert story["origin"] == ({"format": NAME, "document_id": doc} if doc else {"format": NAME})
    assert "schema_version" not in story["origin"]
    source = story["unknown_fields"]["sources"][NAME]
    assert source["source_document_id"] == (doc or "")
    assert story["unknown_key_counts"] == compute_unknown_key_counts(story["unknown_fields"])
    assert story["meta"][NAME]["version"] == 1
    assert story["agent"]["name"] == story["agent"]["id"]


def fields(story: dict) -> dict:
    return story["unknown_fields"]["sources"][NAME]["fields"]


def turn(story: dict, tid: int) -> dict:
    found = [t for t in story["turns"] if t["id"] == tid]
    assert len(found) == 1, (tid, [t["id"] for t in story["turns"]])
    return found[0]


def ids(story: dict) -> list[int]:
    return [t["id"] for t in story["turns"]]


def refused(data: str, doc: str | None = DOC) -> FormatError:
    with pytest.raises(FormatError) as info:
        into_storyline(NAME, data, document_id=doc)
    err = info.value
    assert err.document_id == doc
    if doc:
        assert doc in str(err)
    assert err.pointer in str(err) or err.pointer == ""
    return err
