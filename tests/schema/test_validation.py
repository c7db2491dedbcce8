"""RFC-0001 validation: every MUST-reject rule with the exact JSON Pointer of the error.

The rejection tables are ``(test id, mutation, expected pointers)``. A mutation is a tuple of
``(pointer, value)`` pairs applied to a deep copy of the hand-written fixture
``tests/data/validation/every_optional_field.storyline.json`` (which uses every optional field at every
level); ``DELETE`` removes the key. The expected pointers are the *set* of pointers ``iter_errors``
reports, so an unexpected extra error fails the test as surely as a missing one.
"""

from __future__ import annotations

import copy
import datetime
import decimal
import json
import math
from pathlib import Path
from typing import Any

import pytest

from pchronicle_datasets import (
    StorylineError,
    compute_unknown_key_counts,
    derive_kind,
    effective_env,
    effective_prompt,
    iter_errors,
    turn_kind,
    validate,
)
from pchronicle_datasets.formats import storyline_file as storyline_format
from pchronicle_datasets.schema import is_time
from tests import goldens

HERE = Path(__file__).resolve().parent
FULL_PATH = goldens.DATA / "validation" / "every_optional_field.storyline.json"
FULL: dict[str, Any] = json.loads(FULL_PATH.read_text(encoding="utf-8"))
FULL_DOC_ID = FULL["origin"]["document_id"]
SAMPLES = sorted((HERE.parents[1] / "pchronicle_datasets" / "samples" / "storyline").glob("*.storyline.json*"))

MINIMAL: dict[str, Any] = {
    "schema_version": "storyline/v1",
    "session": "s1",
    "agent": {"id": "a"},
    "turns": [{"id": 1, "src": "user", "msg": "hi"}],
}

DELETE = object()


# ------------------------------------------------------------------------------------------- helpers


def _tokens(pointer: str) -> list[str]:
    if pointer == "":
        return []
    assert pointer.startswith("/"), pointer
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _step(node: Any, token: str) -> Any:
    return node[int(token)] if isinstance(node, list) else node[token]


def set_at(doc: Any, pointer: str, value: Any) -> None:
    """Set (or with ``DELETE`` remove) the value at ``pointer``; the parent must exist."""
    *parents, last = _tokens(pointer)
    node = doc
    for token in parents:
        node = _step(node, token)
    if isinstance(node, list):
        if value is DELETE:
            del node[int(last)]
        else:
            node[int(last)] = value
    elif value is DELETE:
        del node[last]
    else:
        node[last] = value


def get_at(doc: Any, pointer: str) -> Any:
    node = doc
    for token in _tokens(pointer):
        node = _step(node, token)
    return node


def mutated(ops: tuple[tuple[str, Any], ...], base: dict[str, Any] = FULL) -> dict[str, Any]:
    doc = copy.deepcopy(base)
    for pointer, value in ops:
        set_at(doc, pointer, value)
    return doc


def errors_of(doc: Any, **kwargs: Any) -> list[StorylineError]:
    """All errors of ``doc``, checking on the way that ``iter_errors`` left the document unchanged."""
    before = copy.deepcopy(doc)
    errors = list(iter_errors(doc, **kwargs))
    assert doc == before, "iter_errors changed the document"
    assert all(isinstance(e, StorylineError) for e in errors)
    return errors


def assert_rejected(doc: Any, expected: str | tuple[str, ...]) -> list[StorylineError]:
    expected_set = {expected} if isinstance(expected, str) else set(expected)
    errors = errors_of(doc)
    assert {e.pointer for e in errors} == expected_set, [str(e) for e in errors]
    before = copy.deepcopy(doc)
    with pytest.raises(StorylineError) as info:
        validate(doc)
    assert doc == before, "validate changed the document"
    assert info.value.pointer == errors[0].pointer
    assert info.value.pointer in expected_set
    return errors


def assert_valid(doc: Any) -> None:
    before = copy.deepcopy(doc)
    errors = errors_of(doc)
    assert errors == [], [str(e) for e in errors]
    assert validate(doc) is None
    assert doc == before, "validate changed the document"


def _case(case_id: str, ops: tuple[tuple[str, Any], ...], expected: str | tuple[str, ...]):
    return pytest.param(ops, expected, id=case_id)


# ------------------------------------------------------------------------------- the valid fixtures


def test_every_optional_field_fixture_validates():
    assert_valid(FULL)


def test_minimal_document_validates():
    assert_valid(MINIMAL)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_shipped_samples_validate(path: Path):
    stories = storyline_format.decode(path.read_bytes(), path.name)
    assert stories
    for story in stories:
        assert_valid(story)


# RFC-0001's field tables, transcribed from the RFC (name → required). Every field is used by the fixture
# at the listed owner, so the fixture really is "every optional field at every level".
RFC_FIELDS: dict[str, dict[str, bool]] = {
    "": {
        "schema_version": True,
        "origin": False,
        "session": True,
        "agent": True,
        "turns": True,
        "run": False,
        "trajectory": False,
        "attempt_id": False,
        "notes": False,
        "task": False,
        "prompt": False,
        "started_at": False,
        "finished_at": False,
        "final_metrics": False,
        "continued_trajectory_ref": False,
        "extra": False,
        "meta": False,
        "unknown_fields": False,
        "unknown_key_counts": False,
        "children": False,
        "parent": False,
    },
    "/origin": {"format": True, "schema_version": False, "document_id": False},
    "/agent": {"id": True, "name": False, "ver": False, "model": False, "tools": False, "extra": False},
    "/parent": {"psid": True, "scid": False, "ptid": False, "rel": False},
    "/task": {"env": False, "llm": False, "result": False},
    "/task/env": {
        "name": False,
        "endpoint": False,
        "id": False,
        "event_type": False,
        "request_id": False,
        "state": False,
    },
    "/task/llm": {"k": False},
    "/task/result": {
        "correct": False,
        "final_answer": False,
        "ground_truth": False,
        "status": False,
        "score": False,
        "max_score": False,
        "error": False,
        "artifacts": False,
    },
    "/prompt": {"system": False, "user": False},
    "/turns/1": {
        "id": True,
        "src": True,
        "msg": True,
        "ts": False,
        "model": False,
        "effort": False,
        "reason": False,
        "tool_calls": False,
        "observation": False,
        "metrics": False,
        "nllm": False,
        "copied": False,
        "extra": False,
        "kind": False,
        "latency_ms": False,
        "ttft_ms": False,
        "env": False,
        "prompt": False,
        "finished_at": False,
    },
    "/turns/1/env": {
        "name": False,
        "endpoint": False,
        "id": False,
        "event_type": False,
        "request_id": False,
        "state": False,
    },
    "/turns/1/prompt": {"system": False, "user": False},
    "/turns/1/tool_calls/0": {
        "tcid": True,
        "fn": True,
        "args": True,
        "result": False,
        "duration_ms": False,
        "extra": False,
        "kind": False,
        "response": False,
    },
    "/turns/1/tool_calls/0/response": {"status": False, "exit_code": False},
}
ALL_FIELDS = [(owner, name) for owner, fields in RFC_FIELDS.items() for name in fields]
OPTIONAL_FIELDS = [(o, n) for o, n in ALL_FIELDS if not RFC_FIELDS[o][n]]
REQUIRED_FIELDS = [(o, n) for o, n in ALL_FIELDS if RFC_FIELDS[o][n]]


def _field_id(item: tuple[str, str]) -> str:
    owner, name = item
    return f"{owner or '(root)'}/{name}"


@pytest.mark.parametrize("field", ALL_FIELDS, ids=_field_id)
def test_fixture_uses_every_rfc_field(field: tuple[str, str]):
    owner, name = field
    assert name in get_at(FULL, owner)


@pytest.mark.parametrize("field", OPTIONAL_FIELDS, ids=_field_id)
def test_each_optional_field_can_be_omitted(field: tuple[str, str]):
    owner, name = field
    ops: list[tuple[str, Any]] = [(f"{owner}/{name}", DELETE)]
    if (owner, name) == ("", "unknown_fields"):
        ops.append(("/unknown_key_counts", DELETE))  # the counts of nothing would no longer match
    assert_valid(mutated(tuple(ops)))


@pytest.mark.parametrize("field", REQUIRED_FIELDS, ids=_field_id)
def test_each_required_field_missing_is_refused_at_its_pointer(field: tuple[str, str]):
    owner, name = field
    assert_rejected(mutated(((f"{owner}/{name}", DELETE),)), f"{owner}/{name}")


# ------------------------------------------------------------------------------------ schema_version

SCHEMA_VERSION_CASES = [
    _case("missing", (("/schema_version", DELETE),), "/schema_version"),
    _case("v2", (("/schema_version", "storyline/v2"),), "/schema_version"),
    _case("v0", (("/schema_version", "storyline/v0"),), "/schema_version"),
    _case("empty", (("/schema_version", ""),), "/schema_version"),
    _case("null", (("/schema_version", None),), "/schema_version"),
    _case("integer", (("/schema_version", 1),), "/schema_version"),
    _case("uppercase", (("/schema_version", "Storyline/v1"),), "/schema_version"),
    _case("trailing-space", (("/schema_version", "storyline/v1 "),), "/schema_version"),
    _case("bare-v1", (("/schema_version", "v1"),), "/schema_version"),
    _case("atif-version", (("/schema_version", "ATIF-v1.7"),), "/schema_version"),
]


@pytest.mark.parametrize(("ops", "expected"), SCHEMA_VERSION_CASES)
def test_schema_version_refused(ops, expected):
    assert_rejected(mutated(ops), expected)


@pytest.mark.parametrize("version", [DELETE, "storyline/v2", None, ""], ids=["missing", "v2", "null", "empty"])
def test_wrong_schema_version_fails_closed_with_one_error(version):
    # Plenty of other problems, but a document of an unknown version is not interpreted any further.
    doc = mutated(
        (
            ("/schema_version", version),
            ("/session", ""),
            ("/agent", 5),
            ("/bogus", 1),
            ("/turns/1/id", True),
        )
    )
    errors = errors_of(doc)
    assert [e.pointer for e in errors] == ["/schema_version"]


@pytest.mark.parametrize("value", [[], None, "storyline/v1", 1, True], ids=["array", "null", "string", "int", "bool"])
def test_a_document_must_be_an_object(value):
    errors = errors_of(value)
    assert [e.pointer for e in errors] == [""]
    with pytest.raises(StorylineError):
        validate(value)


# ------------------------------------------------------------------------------- required / non-empty

REQUIRED_CASES = [
    _case("session-empty", (("/session", ""),), "/session"),
    _case("session-null", (("/session", None),), "/session"),
    _case("session-integer", (("/session", 7),), "/session"),
    _case("session-list", (("/session", ["s"]),), "/session"),
    _case("agent-null", (("/agent", None),), "/agent"),
    _case("agent-string", (("/agent", "agent-1"),), "/agent"),
    _case("agent-list", (("/agent", [{"id": "a"}]),), "/agent"),
    _case("agent-empty-object", (("/agent", {}),), "/agent/id"),
    _case("agent-id-empty", (("/agent/id", ""),), "/agent/id"),
    _case("agent-id-null", (("/agent/id", None),), "/agent/id"),
    _case("agent-id-integer", (("/agent/id", 1),), "/agent/id"),
    _case("agent-name-integer", (("/agent/name", 1),), "/agent/name"),
    _case("agent-ver-integer", (("/agent/ver", 1),), "/agent/ver"),
    _case("agent-model-null", (("/agent/model", None),), "/agent/model"),
    _case("turns-object", (("/turns", {}),), "/turns"),
    _case("turns-null", (("/turns", None),), "/turns"),
    _case("turns-string", (("/turns", "[]"),), "/turns"),
    _case("turn-not-object", (("/turns/2", "turn"),), "/turns/2"),
    _case("turn-null", (("/turns/2", None),), "/turns/2"),
    _case("trajectory-empty", (("/trajectory", ""),), "/trajectory"),
    _case("trajectory-integer", (("/trajectory", 1),), "/trajectory"),
    _case("run-integer", (("/run", 1),), "/run"),
    _case("attempt-id-integer", (("/attempt_id", 2),), "/attempt_id"),
    _case("notes-list", (("/notes", ["n"]),), "/notes"),
    _case("continued-ref-integer", (("/continued_trajectory_ref", 1),), "/continued_trajectory_ref"),
    _case("origin-string", (("/origin", "atif"),), "/origin"),
    _case("origin-null", (("/origin", None),), "/origin"),
    _case("origin-empty-object", (("/origin", {}),), "/origin/format"),
    _case("origin-format-empty", (("/origin/format", ""),), "/origin/format"),
    _case("origin-format-integer", (("/origin/format", 1),), "/origin/format"),
    _case("origin-schema-version-empty", (("/origin/schema_version", ""),), "/origin/schema_version"),
    _case("origin-document-id-empty", (("/origin/document_id", ""),), "/origin/document_id"),
    _case("parent-string", (("/parent", "p"),), "/parent"),
    _case("parent-empty-object", (("/parent", {}),), "/parent/psid"),
    _case("parent-psid-empty", (("/parent/psid", ""),), "/parent/psid"),
    _case("parent-psid-null", (("/parent/psid", None),), "/parent/psid"),
    _case("parent-ptid-string", (("/parent/ptid", "4"),), "/parent/ptid"),
    _case("parent-ptid-bool", (("/parent/ptid", True),), "/parent/ptid"),
    _case("parent-ptid-float", (("/parent/ptid", 4.0),), "/parent/ptid"),
    _case("parent-scid-integer", (("/parent/scid", 9),), "/parent/scid"),
    _case("parent-rel-integer", (("/parent/rel", 1),), "/parent/rel"),
    _case("children-string", (("/children", "child"),), "/children"),
    _case("children-item-integer", (("/children", ["c", 1]),), "/children/1"),
    _case("children-item-null", (("/children", [None]),), "/children/0"),
    _case("agent-extra-set", (("/agent/extra", {1, 2}),), "/agent/extra"),
]


@pytest.mark.parametrize(("ops", "expected"), REQUIRED_CASES)
def test_required_and_typed_root_fields_refused(ops, expected):
    assert_rejected(mutated(ops), expected)


# --------------------------------------------------------------------------------------------- turns

TURN_CASES = [
    _case("src-missing", (("/turns/1/src", DELETE),), "/turns/1/src"),
    _case("src-empty", (("/turns/1/src", ""),), "/turns/1/src"),
    _case("src-null", (("/turns/1/src", None),), "/turns/1/src"),
    _case("src-integer", (("/turns/1/src", 1),), "/turns/1/src"),
    _case("msg-missing", (("/turns/2/msg", DELETE),), "/turns/2/msg"),
    _case("id-missing", (("/turns/1/id", DELETE),), "/turns/1/id"),
    _case("id-string", (("/turns/1/id", "11"),), "/turns/1/id"),
    _case("id-float", (("/turns/1/id", 11.0),), "/turns/1/id"),
    _case("id-true", (("/turns/1/id", True),), "/turns/1/id"),
    _case("id-false", (("/turns/1/id", False),), "/turns/1/id"),
    _case("id-null", (("/turns/1/id", None),), "/turns/1/id"),
    _case("id-above-int64", (("/turns/1/id", 2**63),), "/turns/1/id"),
    _case("id-below-int64", (("/turns/1/id", -(2**63) - 1),), "/turns/1/id"),
    _case("id-duplicate", (("/turns/2/id", 10),), "/turns/2/id"),
    _case("id-duplicate-of-previous", (("/turns/2/id", 11),), "/turns/2/id"),
    _case("id-duplicate-all-three", (("/turns/1/id", 3), ("/turns/0/id", 3)), ("/turns/1/id", "/turns/2/id")),
    _case("model-integer", (("/turns/1/model", 1),), "/turns/1/model"),
    _case("reason-object", (("/turns/1/reason", {}),), "/turns/1/reason"),
    _case("nllm-string", (("/turns/1/nllm", "2"),), "/turns/1/nllm"),
    _case("nllm-bool", (("/turns/1/nllm", True),), "/turns/1/nllm"),
    _case("nllm-float", (("/turns/1/nllm", 2.0),), "/turns/1/nllm"),
    _case("copied-string", (("/turns/1/copied", "false"),), "/turns/1/copied"),
    _case("copied-integer", (("/turns/1/copied", 0),), "/turns/1/copied"),
    _case("kind-integer", (("/turns/1/kind", 1),), "/turns/1/kind"),
    _case("latency-float", (("/turns/1/latency_ms", 1.5),), "/turns/1/latency_ms"),
    _case("latency-bool", (("/turns/1/latency_ms", True),), "/turns/1/latency_ms"),
    _case("latency-above-int64", (("/turns/1/latency_ms", 2**63),), "/turns/1/latency_ms"),
    _case("ttft-string", (("/turns/1/ttft_ms", "300"),), "/turns/1/ttft_ms"),
    _case("tool-calls-object", (("/turns/1/tool_calls", {}),), "/turns/1/tool_calls"),
    _case("tool-calls-null", (("/turns/1/tool_calls", None),), "/turns/1/tool_calls"),
    _case("tool-call-not-object", (("/turns/1/tool_calls/1", "call"),), "/turns/1/tool_calls/1"),
    _case("env-string", (("/turns/1/env", "swe"),), "/turns/1/env"),
    _case("env-list", (("/turns/1/env", []),), "/turns/1/env"),
    _case("env-name-integer", (("/turns/1/env/name", 1),), "/turns/1/env/name"),
    _case("env-endpoint-list", (("/turns/1/env/endpoint", ["u"]),), "/turns/1/env/endpoint"),
    _case("env-state-list", (("/turns/1/env/state", [1]),), "/turns/1/env/state"),
    _case("env-state-string", (("/turns/1/env/state", "s"),), "/turns/1/env/state"),
    _case("prompt-string", (("/turns/1/prompt", "p"),), "/turns/1/prompt"),
    _case("prompt-system-integer", (("/turns/1/prompt/system", 1),), "/turns/1/prompt/system"),
]


@pytest.mark.parametrize(("ops", "expected"), TURN_CASES)
def test_turn_rules(ops, expected):
    assert_rejected(mutated(ops), expected)


@pytest.mark.parametrize(
    "turn_id", [0, -1, 2**63 - 1, -(2**63), 1_000_000], ids=["zero", "negative", "int64-max", "int64-min", "large"]
)
def test_turn_id_accepted(turn_id):
    assert_valid(mutated((("/turns/1/id", turn_id),)))


def test_duplicate_turn_id_message_names_the_first():
    errors = assert_rejected(mutated((("/turns/2/id", 10),)), "/turns/2/id")
    assert "duplicate turn id" in errors[0].reason
    assert "/turns/0/id" in errors[0].reason


# ---------------------------------------------------------------------------------------- tool calls

TC = "/turns/1/tool_calls"

TOOL_CALL_CASES = [
    _case("tcid-missing", ((f"{TC}/0/tcid", DELETE),), f"{TC}/0/tcid"),
    _case("tcid-empty", ((f"{TC}/0/tcid", ""),), f"{TC}/0/tcid"),
    _case("tcid-null", ((f"{TC}/0/tcid", None),), f"{TC}/0/tcid"),
    _case("tcid-integer", ((f"{TC}/0/tcid", 1),), f"{TC}/0/tcid"),
    _case("tcid-two-empty", ((f"{TC}/0/tcid", ""), (f"{TC}/1/tcid", "")), (f"{TC}/0/tcid", f"{TC}/1/tcid")),
    _case("tcid-duplicate-same-turn", ((f"{TC}/2/tcid", "call-1"),), f"{TC}/2/tcid"),
    _case(
        "tcid-duplicate-across-turns",
        (("/turns/2/tool_calls", [{"tcid": "call-2", "fn": "shell", "args": {}}]),),
        "/turns/2/tool_calls/0/tcid",
    ),
    _case(
        "tcid-duplicate-in-earlier-copied-turn",
        (("/turns/0/tool_calls", [{"tcid": "call-3", "fn": "shell", "args": {}}]),),
        f"{TC}/2/tcid",
    ),
    _case("fn-missing", ((f"{TC}/0/fn", DELETE),), f"{TC}/0/fn"),
    _case("fn-empty", ((f"{TC}/0/fn", ""),), f"{TC}/0/fn"),
    _case("fn-null", ((f"{TC}/0/fn", None),), f"{TC}/0/fn"),
    _case("fn-integer", ((f"{TC}/0/fn", 3),), f"{TC}/0/fn"),
    _case("args-missing", ((f"{TC}/0/args", DELETE),), f"{TC}/0/args"),
    _case("args-missing-when-null-elsewhere", ((f"{TC}/1/args", DELETE),), f"{TC}/1/args"),
    _case("duration-string", ((f"{TC}/0/duration_ms", "42"),), f"{TC}/0/duration_ms"),
    _case("duration-float", ((f"{TC}/0/duration_ms", 4.2),), f"{TC}/0/duration_ms"),
    _case("duration-bool", ((f"{TC}/0/duration_ms", False),), f"{TC}/0/duration_ms"),
    _case("kind-integer", ((f"{TC}/0/kind", 1),), f"{TC}/0/kind"),
    _case("kind-null", ((f"{TC}/0/kind", None),), f"{TC}/0/kind"),
    _case("response-empty-object", ((f"{TC}/0/response", {}),), f"{TC}/0/response"),
    _case("response-null", ((f"{TC}/0/response", None),), f"{TC}/0/response"),
    _case("response-string", ((f"{TC}/0/response", "ok"),), f"{TC}/0/response"),
    _case("response-status-integer", ((f"{TC}/0/response/status", 0),), f"{TC}/0/response/status"),
    _case("response-status-null", ((f"{TC}/0/response/status", None),), f"{TC}/0/response/status"),
    _case("response-exit-code-string", ((f"{TC}/0/response/exit_code", "0"),), f"{TC}/0/response/exit_code"),
    _case("response-exit-code-bool", ((f"{TC}/0/response/exit_code", True),), f"{TC}/0/response/exit_code"),
    _case("response-exit-code-float", ((f"{TC}/0/response/exit_code", 0.0),), f"{TC}/0/response/exit_code"),
    _case("response-exit-code-above-int64", ((f"{TC}/0/response/exit_code", 2**63),), f"{TC}/0/response/exit_code"),
]


@pytest.mark.parametrize(("ops", "expected"), TOOL_CALL_CASES)
def test_tool_call_rules(ops, expected):
    assert_rejected(mutated(ops), expected)


def test_duplicate_tcid_message_is_exact():
    turns = [{"id": i, "src": "agent", "msg": None} for i in range(4)]
    turns[1]["tool_calls"] = [{"tcid": "c1", "fn": "ls", "args": {}}]
    turns[3]["tool_calls"] = [{"tcid": "c1", "fn": "ls", "args": {}}]
    doc = {**MINIMAL, "turns": turns}
    with pytest.raises(StorylineError) as info:
        validate(doc, document_id="logs/a.json")
    err = info.value
    assert err.pointer == "/turns/3/tool_calls/0/tcid"
    assert err.document_id == "logs/a.json"
    assert err.line is None
    assert err.reason == 'duplicate tool call id "c1" (also at /turns/1/tool_calls/0/tcid)'
    assert str(err) == (
        '/turns/3/tool_calls/0/tcid: duplicate tool call id "c1" (also at /turns/1/tool_calls/0/tcid) in logs/a.json'
    )


TOOL_CALL_ACCEPTED = [
    pytest.param(((f"{TC}/0/args", None),), id="args-null"),
    pytest.param(((f"{TC}/0/kind", ""),), id="kind-empty-is-absent"),
    pytest.param(((f"{TC}/0/response", {"status": "ok"}),), id="response-status-only"),
    pytest.param(((f"{TC}/0/response", {"exit_code": 137}),), id="response-exit-code-only"),
    pytest.param(((f"{TC}/0/response", {"status": "", "exit_code": -2}),), id="response-empty-status"),
    pytest.param(((f"{TC}/0/result", None),), id="result-null"),
    pytest.param(((f"{TC}/0/tcid", "call-1 "),), id="tcid-differs-by-space"),
    pytest.param(((TC, []),), id="no-tool-calls"),
]


@pytest.mark.parametrize("ops", TOOL_CALL_ACCEPTED)
def test_tool_call_accepted(ops):
    assert_valid(mutated(ops))


# ---------------------------------------------------------------------------------------------- task

TASK_CASES = [
    _case("task-null", (("/task", None),), "/task"),
    _case("task-empty-string", (("/task", ""),), "/task"),
    _case("task-list", (("/task", []),), "/task"),
    _case("task-empty-object", (("/task", {}),), "/task"),
    _case("task-all-parts-absent", (("/task", {"env": {}, "llm": None, "result": ""}),), "/task"),
    _case(
        "task-parts-hold-only-empties", (("/task", {"env": {"name": "", "state": {}}, "llm": {"k": None}}),), "/task"
    ),
    _case("task-result-only-null-error", (("/task", {"result": {"error": None}}),), "/task"),
    _case("env-string", (("/task/env", "swe"),), "/task/env"),
    _case("env-list", (("/task/env", []),), "/task/env"),
    _case("env-name-integer", (("/task/env/name", 1),), "/task/env/name"),
    _case("env-request-id-bool", (("/task/env/request_id", True),), "/task/env/request_id"),
    _case("env-state-list", (("/task/env/state", []),), "/task/env/state"),
    _case("env-state-string", (("/task/env/state", "s"),), "/task/env/state"),
    _case("llm-string", (("/task/llm", "k=3"),), "/task/llm"),
    _case("llm-k-zero", (("/task/llm/k", 0),), "/task/llm/k"),
    _case("llm-k-negative", (("/task/llm/k", -1),), "/task/llm/k"),
    _case("llm-k-true", (("/task/llm/k", True),), "/task/llm/k"),
    _case("llm-k-float", (("/task/llm/k", 1.5),), "/task/llm/k"),
    _case("llm-k-whole-float", (("/task/llm/k", 3.0),), "/task/llm/k"),
    _case("llm-k-string", (("/task/llm/k", "3"),), "/task/llm/k"),
    _case("llm-k-above-int64", (("/task/llm/k", 2**63),), "/task/llm/k"),
    _case("result-string", (("/task/result", "solved"),), "/task/result"),
    _case("result-correct-string", (("/task/result/correct", "yes"),), "/task/result/correct"),
    _case("result-correct-integer", (("/task/result/correct", 1),), "/task/result/correct"),
    _case("result-status-integer", (("/task/result/status", 1),), "/task/result/status"),
    _case("result-score-string", (("/task/result/score", "1"),), "/task/result/score"),
    _case("result-score-bool", (("/task/result/score", True),), "/task/result/score"),
    _case("result-max-score-list", (("/task/result/max_score", [1]),), "/task/result/max_score"),
]


@pytest.mark.parametrize(("ops", "expected"), TASK_CASES)
def test_task_rules(ops, expected):
    assert_rejected(mutated(ops), expected)


TASK_ACCEPTED = [
    pytest.param((("/task", {"llm": {"k": 1}}),), id="llm-only"),
    pytest.param((("/task", {"env": {"name": "x"}}),), id="env-only"),
    pytest.param((("/task", {"result": {"correct": False}}),), id="result-correct-false"),
    pytest.param((("/task", {"result": {"score": 0}}),), id="result-score-zero"),
    pytest.param((("/task", {"env": {"state": {"a": 1}}}),), id="env-state-only"),
    pytest.param((("/task", {"env": {"name": "x"}, "llm": None, "result": ""}),), id="null-and-empty-parts"),
    pytest.param((("/task", {"env": {"name": "x"}, "llm": {}, "result": {}}),), id="empty-object-parts"),
    pytest.param((("/task/llm/k", None),), id="k-null"),
    pytest.param((("/task/llm/k", 2**63 - 1),), id="k-int64-max"),
    pytest.param((("/task/env/name", ""),), id="env-name-empty"),
    pytest.param((("/task/env/name", None),), id="env-name-null"),
    pytest.param((("/task/env/state", {}),), id="env-state-empty-object"),
    pytest.param((("/task/env/state", None),), id="env-state-null"),
    pytest.param((("/task/env/state", ""),), id="env-state-empty-string"),
    pytest.param((("/task/result/correct", None),), id="result-correct-null"),
    pytest.param((("/task/result/correct", ""),), id="result-correct-empty-string"),
    pytest.param((("/task/result/status", None),), id="result-status-null"),
    pytest.param((("/task/result/score", ""),), id="result-score-empty-string"),
    pytest.param((("/task/result/score", 0.75),), id="result-score-float"),
    pytest.param((("/task/result/max_score", {}),), id="result-max-score-empty-object"),
    pytest.param((("/task", {"result": {"task_correct": False}}),), id="result-only-actf-extra"),
]


@pytest.mark.parametrize("ops", TASK_ACCEPTED)
def test_task_absent_values_accepted(ops):
    assert_valid(mutated(ops))


@pytest.mark.parametrize(
    "value",
    [{}, {"name": "", "state": None}, {"state": {}}, {"endpoint": None, "id": "", "request_id": {}}],
    ids=["empty-object", "empty-fields", "empty-state", "null-and-empty-fields"],
)
def test_turn_env_absent_values_accepted(value):
    # turns[].env has the shape of task.env: inside it null, "" and {} count as absent.
    assert_valid(mutated((("/turns/1/env", value),)))


@pytest.mark.parametrize("value", [None, ""], ids=["null", "empty-string"])
def test_turn_env_itself_must_be_an_object(value):
    # docs/storyline.md decision 1: `task` itself and a turn's `env` must be objects when present.
    assert_rejected(mutated((("/turns/1/env", value),)), "/turns/1/env")


ACTF_RESULT_EXTRAS = {
    "task_correct": True,
    "category": "math",
    "attempts_tried": 3,
    "solved_at": "2026-08-22T10:05:00Z",
    "retry_count": 2,
    "retry_counts": {"shell": 2, "read_file": 0},
}


@pytest.mark.parametrize(("key", "value"), list(ACTF_RESULT_EXTRAS.items()), ids=list(ACTF_RESULT_EXTRAS))
def test_task_result_accepts_actf_extras_and_keeps_them(key, value):
    doc = mutated((("/task", {"result": {"correct": True, key: value}}),))
    assert_valid(doc)
    assert doc["task"]["result"][key] == value
    [decoded] = storyline_format.decode(storyline_format.encode([doc]))
    assert decoded["task"]["result"] == {"correct": True, key: value}


def test_task_result_accepts_any_extra_key():
    doc = mutated((("/task/result/some_vendor_field", {"nested": [1, None]}),))
    assert_valid(doc)


def test_task_result_extra_values_must_be_json():
    assert_rejected(mutated((("/task/result/category", {"a", "b"}),)), "/task/result/category")


def test_effective_env_is_a_shallow_merge_over_task_env():
    env = effective_env(FULL, FULL["turns"][2])
    assert env["name"] == "swe-env"
    assert env["state"] == {"cwd": "/", "files": 4}
    env1 = effective_env(FULL, FULL["turns"][1])
    assert env1["id"] == "env-2"
    assert env1["state"] == {"cwd": "/work", "files": 3}
    # Never relative to the previous turn.
    assert effective_env(FULL, FULL["turns"][0]) == FULL["task"]["env"]


# -------------------------------------------------------------------------------------------- prompts

PROMPT_CASES = [
    _case("doc-prompt-empty-object", (("/prompt", {}),), "/prompt"),
    _case("doc-prompt-empty-system", (("/prompt", {"system": ""}),), "/prompt"),
    _case("doc-prompt-empty-user", (("/prompt", {"user": ""}),), "/prompt"),
    _case("doc-prompt-both-empty", (("/prompt", {"system": "", "user": ""}),), "/prompt"),
    _case("doc-prompt-null", (("/prompt", None),), "/prompt"),
    _case("doc-prompt-string", (("/prompt", "system"),), "/prompt"),
    _case("doc-prompt-system-integer", (("/prompt", {"system": 1, "user": "u"}),), "/prompt/system"),
    _case("doc-prompt-system-null-only", (("/prompt", {"system": None}),), ("/prompt", "/prompt/system")),
    _case("copied-turn-with-prompt", (("/turns/0/prompt", {"system": "s"}),), "/turns/0/prompt"),
    _case("copied-turn-with-empty-prompt", (("/turns/0/prompt", {"system": "", "user": ""}),), "/turns/0/prompt"),
    _case("copied-turn-with-null-prompt", (("/turns/0/prompt", None),), "/turns/0/prompt"),
    _case(
        "copied-turn-with-prompt-full-turn",
        (("/turns/1/copied", True),),
        "/turns/1/prompt",
    ),
    _case("turn-prompt-empty-object", (("/turns/1/prompt", {}),), "/turns/1/prompt"),
    _case("turn-prompt-empty-system-only", (("/turns/1/prompt", {"system": ""}),), "/turns/1/prompt"),
    _case("turn-prompt-empty-user-only", (("/turns/1/prompt", {"user": ""}),), "/turns/1/prompt"),
    _case(
        "turn-prompt-empty-with-undeclared",
        (("/turns/2/prompt", {"system": "", "user": "", "x": ""}),),
        ("/turns/2/prompt", "/turns/2/prompt/x"),
    ),
]


@pytest.mark.parametrize(("ops", "expected"), PROMPT_CASES)
def test_prompt_rules(ops, expected):
    assert_rejected(mutated(ops), expected)


PROMPT_ACCEPTED = [
    pytest.param((("/prompt", {"system": "s"}),), id="doc-prompt-system-only"),
    pytest.param((("/prompt", {"user": "u"}),), id="doc-prompt-user-only"),
    pytest.param((("/prompt", {"system": "", "user": "u"}),), id="doc-prompt-one-empty"),
    pytest.param((("/turns/1/prompt", {"system": "s"}),), id="turn-prompt-system-only"),
    pytest.param((("/turns/1/prompt", {"system": "", "user": "u"}),), id="turn-prompt-one-empty"),
    pytest.param((("/turns/1/prompt", {"system": "", "user": ""}),), id="turn-prompt-explicit-clear"),
    pytest.param((("/prompt", DELETE),), id="turn-clear-without-doc-prompt"),
    pytest.param((("/turns/0/copied", False), ("/turns/0/prompt", {"user": "u"})), id="not-copied-turn-prompt"),
]


@pytest.mark.parametrize("ops", PROMPT_ACCEPTED)
def test_prompt_accepted(ops):
    assert_valid(mutated(ops))


def test_effective_prompt_replaces_the_document_prompt_as_a_whole():
    assert effective_prompt(FULL, FULL["turns"][0]) == FULL["prompt"]
    assert effective_prompt(FULL, FULL["turns"][2]) == {"system": "", "user": ""}
    turn = {"id": 1, "src": "user", "msg": None, "prompt": {"user": "only user"}}
    assert effective_prompt(FULL, turn) == {"system": "", "user": "only user"}


# --------------------------------------------------------------------------------------------- times

TIME_LOCATIONS = ["/turns/1/ts", "/started_at", "/finished_at", "/turns/1/finished_at"]

BAD_TIMES = [
    pytest.param("2026-07-30T12:00:00", id="no-offset"),
    pytest.param("2026-07-30T12:00:00.5", id="fraction-no-offset"),
    pytest.param("2026-02-30T12:00:00Z", id="feb-30"),
    pytest.param("2025-02-29T12:00:00Z", id="feb-29-non-leap"),
    pytest.param("2100-02-29T12:00:00Z", id="feb-29-century"),
    pytest.param("2026-04-31T12:00:00Z", id="apr-31"),
    pytest.param("2026-13-01T12:00:00Z", id="month-13"),
    pytest.param("2026-00-10T12:00:00Z", id="month-0"),
    pytest.param("2026-07-00T12:00:00Z", id="day-0"),
    pytest.param("2026-07-30 12:00:00Z", id="space-instead-of-T"),
    pytest.param("2026-07-30_12:00:00Z", id="underscore-instead-of-T"),
    pytest.param("2026-07-30T24:00:00Z", id="hour-24"),
    pytest.param("2026-07-30T12:60:00Z", id="minute-60"),
    pytest.param("2026-07-30T12:00:61Z", id="second-61"),
    pytest.param("2026-07-30T12:00:00+24:00", id="offset-hour-24"),
    pytest.param("2026-07-30T12:00:00+02:60", id="offset-minute-60"),
    pytest.param("2026-07-30T12:00:00+0200", id="offset-without-colon"),
    pytest.param("2026-07-30T12:00:00+02", id="offset-hours-only"),
    pytest.param("2026-07-30T12:00:00.Z", id="empty-fraction"),
    pytest.param("2026-07-30T12:00:00,5Z", id="comma-fraction"),
    pytest.param("2026-7-30T12:00:00Z", id="one-digit-month"),
    pytest.param("2026-07-30T12:00Z", id="no-seconds"),
    pytest.param("2026-07-30", id="date-only"),
    pytest.param("12:00:00Z", id="time-only"),
    pytest.param(" 2026-07-30T12:00:00Z", id="leading-space"),
    pytest.param("2026-07-30T12:00:00Z\n", id="trailing-newline"),
    pytest.param("٢٠٢٦-07-30T12:00:00Z", id="non-ascii-digits"),
    pytest.param("", id="empty-string"),
    pytest.param("now", id="word"),
    pytest.param("1700000000", id="epoch-as-string"),
    pytest.param(0.1234567891, id="ten-decimals"),
    pytest.param(1e-10, id="1e-10"),
    pytest.param(1.0000000001, id="sub-nanosecond"),
    pytest.param(9223372037, id="int-beyond-int64-ns"),
    pytest.param(-9223372037, id="negative-int-beyond-int64-ns"),
    pytest.param(9223372037.0, id="float-beyond-int64-ns"),
    pytest.param(1e300, id="huge-float"),
    pytest.param(2**70, id="huge-int"),
    pytest.param(math.nan, id="nan"),
    pytest.param(math.inf, id="inf"),
    pytest.param(-math.inf, id="minus-inf"),
    pytest.param(True, id="true"),
    pytest.param(False, id="false"),
    pytest.param(None, id="null"),
    pytest.param([], id="array"),
    pytest.param({}, id="object"),
    pytest.param(decimal.Decimal("1.5"), id="decimal"),
    pytest.param(datetime.datetime(2026, 7, 30, tzinfo=datetime.timezone.utc), id="datetime-object"),
]

GOOD_TIMES = [
    pytest.param("2026-07-30T12:00:00Z", id="zulu"),
    pytest.param("2026-07-30T12:00:00.5+02:00", id="fraction-offset"),
    pytest.param("2026-07-30T12:00:00.123456789-05:30", id="nanoseconds-negative-offset"),
    pytest.param("2026-07-30T12:00:00.123456789012Z", id="long-fraction"),
    pytest.param("2026-07-30T12:00:00+00:00", id="plus-zero"),
    pytest.param("2026-07-30T12:00:00-00:00", id="minus-zero"),
    pytest.param("2026-07-30t12:00:00z", id="lowercase-t-z"),
    pytest.param("2016-12-31T23:59:60Z", id="leap-second"),
    pytest.param("2024-02-29T00:00:00Z", id="feb-29-leap-year"),
    pytest.param("2000-02-29T00:00:00Z", id="feb-29-400-year"),
    pytest.param("2026-12-31T23:59:59+14:00", id="offset-14"),
    pytest.param(0, id="zero"),
    pytest.param(1700000000, id="int-epoch"),
    pytest.param(-1700000000, id="negative-int-epoch"),
    pytest.param(1.5, id="one-and-a-half"),
    pytest.param(-1.5, id="negative-fraction"),
    pytest.param(1700000000.123456, id="microseconds"),
    pytest.param(0.123456789, id="nine-decimals"),
    pytest.param(1e-9, id="one-nanosecond"),
    pytest.param(0.0, id="float-zero"),
    pytest.param(9223372036, id="int64-ns-limit"),
    pytest.param(-9223372036, id="negative-int64-ns-limit"),
    pytest.param(9223372036.854775, id="float-near-limit"),
]


@pytest.mark.parametrize("value", BAD_TIMES)
@pytest.mark.parametrize("location", TIME_LOCATIONS)
def test_bad_time_refused(location, value):
    assert_rejected(mutated(((location, value),)), location)


@pytest.mark.parametrize("value", GOOD_TIMES)
@pytest.mark.parametrize("location", TIME_LOCATIONS)
def test_good_time_accepted(location, value):
    assert_valid(mutated(((location, value),)))


@pytest.mark.parametrize("value", GOOD_TIMES)
def test_is_time_true(value):
    assert is_time(value) is True


@pytest.mark.parametrize("value", BAD_TIMES)
def test_is_time_false(value):
    assert is_time(value) is False


# ------------------------------------------------------------------------------------ undeclared keys

OWNERS = [
    "",
    "/origin",
    "/agent",
    "/parent",
    "/task",
    "/task/env",
    "/task/llm",
    "/prompt",
    "/turns/0",
    "/turns/1",
    "/turns/2",
    "/turns/1/env",
    "/turns/2/env",
    "/turns/1/prompt",
    "/turns/1/tool_calls/0",
    "/turns/1/tool_calls/2",
    "/turns/1/tool_calls/0/response",
    "/turns/1/tool_calls/1/response",
]


@pytest.mark.parametrize("value", ["x", {"nested": 1}, 0], ids=["string", "object", "zero"])
@pytest.mark.parametrize("owner", OWNERS, ids=lambda o: o or "(root)")
def test_undeclared_key_refused_at_its_own_pointer(owner, value):
    assert_rejected(mutated(((f"{owner}/bogus", value),)), f"{owner}/bogus")


@pytest.mark.parametrize("owner", OWNERS, ids=lambda o: o or "(root)")
def test_undeclared_key_pointer_is_escaped(owner):
    assert_rejected(mutated(((f"{owner}/a~1b~0c", 1),)), f"{owner}/a~1b~0c")


LONG_NAMES = [
    ("", "session_id"),
    ("", "story_id"),
    ("", "run_id"),
    ("", "trajectory_id"),
    ("", "child_session_ids"),
    ("", "steps"),
    ("", "schema"),
    ("/agent", "model_name"),
    ("/agent", "version"),
    ("/agent", "tool_definitions"),
    ("/parent", "parent_session_id"),
    ("/parent", "spawn_call_id"),
    ("/parent", "spawn_id"),
    ("/parent", "relation"),
    ("/turns/1", "step_id"),
    ("/turns/1", "timestamp"),
    ("/turns/1", "source"),
    ("/turns/1", "message"),
    ("/turns/1", "model_name"),
    ("/turns/1", "reasoning_content"),
    ("/turns/1", "reasoning_effort"),
    ("/turns/1", "llm_call_count"),
    ("/turns/1", "is_copied_context"),
    ("/turns/1/tool_calls/0", "tool_call_id"),
    ("/turns/1/tool_calls/0", "function_name"),
    ("/turns/1/tool_calls/0", "arguments"),
    ("/task/llm", "n"),
    ("/task/env", "env_id"),
]


@pytest.mark.parametrize(("owner", "name"), LONG_NAMES, ids=[f"{o or '(root)'}/{n}" for o, n in LONG_NAMES])
def test_long_names_are_not_accepted(owner, name):
    assert_rejected(mutated(((f"{owner}/{name}", "x"),)), f"{owner}/{name}")


@pytest.mark.parametrize(
    ("long_name", "short_name"),
    [("session_id", "session"), ("trajectory_id", "trajectory")],
)
def test_long_name_instead_of_short_name(long_name, short_name):
    doc = mutated(((f"/{long_name}", FULL[short_name]), (f"/{short_name}", DELETE)))
    errors = errors_of(doc)
    pointers = {e.pointer for e in errors}
    assert f"/{long_name}" in pointers
    if RFC_FIELDS[""][short_name]:
        assert f"/{short_name}" in pointers


@pytest.mark.parametrize("owner", ["/extra", "/meta", "/agent/extra", "/turns/1/extra", "/turns/1/tool_calls/0/extra"])
def test_extensions_live_in_extra_and_meta(owner):
    assert_valid(mutated(((f"{owner}/session_id", "anything"), (f"{owner}/x", {"y": [1, None]}))))


# ----------------------------------------------------------------------------------- unknown_fields

UF = "/unknown_fields"
SRC = "/unknown_fields/sources/actf"
NO_COUNTS = ("/unknown_key_counts", DELETE)

UNKNOWN_FIELDS_CASES = [
    _case("not-object", ((UF, "x"), NO_COUNTS), UF),
    _case("empty-object", ((UF, {}), NO_COUNTS), f"{UF}/sources"),
    _case("undeclared-key", ((f"{UF}/bogus", 1), NO_COUNTS), f"{UF}/bogus"),
    _case("sources-list", ((f"{UF}/sources", []), NO_COUNTS), f"{UF}/sources"),
    _case("sources-null", ((f"{UF}/sources", None), NO_COUNTS), f"{UF}/sources"),
    _case("source-not-object", ((SRC, "x"), NO_COUNTS), SRC),
    _case("source-undeclared-key", ((f"{SRC}/bogus", 1), NO_COUNTS), f"{SRC}/bogus"),
    _case(
        "source-document-id-missing", ((f"{SRC}/source_document_id", DELETE), NO_COUNTS), f"{SRC}/source_document_id"
    ),
    _case("source-document-id-integer", ((f"{SRC}/source_document_id", 1), NO_COUNTS), f"{SRC}/source_document_id"),
    _case("fields-missing", ((f"{SRC}/fields", DELETE), NO_COUNTS), f"{SRC}/fields"),
    _case("fields-list", ((f"{SRC}/fields", ["/a"]), NO_COUNTS), f"{SRC}/fields"),
    _case("field-key-not-a-pointer", ((f"{SRC}/fields/vendor", 1), NO_COUNTS), f"{SRC}/fields/vendor"),
    _case("field-key-bad-tilde", ((f"{SRC}/fields/~1a~02b", 1), NO_COUNTS), f"{SRC}/fields/~1a~02b"),
    _case("field-key-trailing-tilde", ((f"{SRC}/fields/~1a~0", 1), NO_COUNTS), f"{SRC}/fields/~1a~0"),
    _case("field-value-set", ((f"{SRC}/fields/~1vendor", {1}), NO_COUNTS), f"{SRC}/fields/~1vendor"),
    _case(
        "field-value-nan-nested",
        ((f"{SRC}/fields/~1vendor", {"x": [math.nan]}), NO_COUNTS),
        f"{SRC}/fields/~1vendor/x/0",
    ),
    _case("counts-missing-a-pointer", (("/unknown_key_counts", {"actf": {"/vendor": 1}}),), "/unknown_key_counts"),
    _case("counts-empty", (("/unknown_key_counts", {}),), "/unknown_key_counts"),
    _case("counts-wrong-count", (("/unknown_key_counts/actf/~1vendor", 2),), "/unknown_key_counts"),
    _case(
        "counts-not-normalised",
        (
            (
                "/unknown_key_counts/actf",
                {"/a~1b": 1, "/steps/0/vendor_row": 1, "/steps/1/vendor_row": 1, "/vendor": 1},
            ),
        ),
        "/unknown_key_counts",
    ),
    _case("counts-extra-source", (("/unknown_key_counts/other", {"/x": 1}),), "/unknown_key_counts"),
    _case("counts-string-count", (("/unknown_key_counts/actf/~1vendor", "1"),), "/unknown_key_counts"),
    _case("counts-bool-count", (("/unknown_key_counts/actf/~1vendor", True),), "/unknown_key_counts"),
    _case("counts-without-fields", ((UF, DELETE),), "/unknown_key_counts"),
    _case("counts-not-object", (("/unknown_key_counts", [1]),), "/unknown_key_counts"),
    _case("counts-stale-after-new-field", ((f"{SRC}/fields/~1new", 1),), "/unknown_key_counts"),
]


@pytest.mark.parametrize(("ops", "expected"), UNKNOWN_FIELDS_CASES)
def test_unknown_fields_rules(ops, expected):
    assert_rejected(mutated(ops), expected)


UNKNOWN_FIELDS_ACCEPTED = [
    pytest.param((NO_COUNTS,), id="fields-without-counts"),
    pytest.param(((UF, DELETE), ("/unknown_key_counts", {})), id="empty-counts-without-fields"),
    pytest.param(((f"{SRC}/fields/", 1), NO_COUNTS), id="root-pointer-key"),
    pytest.param(((f"{SRC}/fields/~1-", 1), NO_COUNTS), id="dash-token"),
    pytest.param(((UF, {"sources": {}}), ("/unknown_key_counts", {})), id="no-sources"),
    pytest.param(
        (
            (UF, {"sources": {"a": {"source_document_id": "", "fields": {}}}}),
            ("/unknown_key_counts", {"a": {}}),
        ),
        id="empty-source",
    ),
]


@pytest.mark.parametrize("ops", UNKNOWN_FIELDS_ACCEPTED)
def test_unknown_fields_accepted(ops):
    assert_valid(mutated(ops))


def test_compute_unknown_key_counts():
    uf = {
        "sources": {
            "zeta": {"source_document_id": "z", "fields": {"/a/0/b": 1, "/a/12/b": 2, "/a/01/b": 3, "/a/-": 4}},
            "alpha": {"source_document_id": "a", "fields": {"/x": None}},
        }
    }
    before = copy.deepcopy(uf)
    counts = compute_unknown_key_counts(uf)
    assert uf == before
    assert counts == {"alpha": {"/x": 1}, "zeta": {"/a/*/b": 2, "/a/-": 1, "/a/01/b": 1}}
    assert list(counts) == ["alpha", "zeta"]
    assert compute_unknown_key_counts(None) == {}
    assert compute_unknown_key_counts(FULL["unknown_fields"]) == FULL["unknown_key_counts"]


def test_counts_mismatch_message_names_the_expectation():
    errors = assert_rejected(mutated((("/unknown_key_counts", {}),)), "/unknown_key_counts")
    assert "/steps/*/vendor_row" in errors[0].reason


# --------------------------------------------------------------------------------- `any` = JSON value


class _Obj:
    """Not a JSON value; compares equal to its deep copies so the unchanged-document check holds."""

    def __eq__(self, other: object) -> bool:
        return type(other) is _Obj

    __hash__ = object.__hash__


JSON_VALUE_CASES = [
    _case("set-as-msg", (("/turns/1/msg", {1, 2}),), "/turns/1/msg"),
    _case("frozenset-in-extra", (("/extra", {"a": {"b": frozenset([1])}}),), "/extra/a/b"),
    _case("nan-as-msg", (("/turns/1/msg", math.nan),), "/turns/1/msg"),
    _case("nan-in-metrics-list", (("/turns/1/metrics", {"x": [1, math.nan]}),), "/turns/1/metrics/x/1"),
    _case("inf-in-meta", (("/meta", {"t": math.inf}),), "/meta/t"),
    _case("minus-inf-final-metrics", (("/final_metrics", -math.inf),), "/final_metrics"),
    _case("tuple-as-args", ((f"{TC}/0/args", (1, 2)),), f"{TC}/0/args"),
    _case("tuple-nested-in-args", ((f"{TC}/0/args", {"a": [0, (1,)]}),), f"{TC}/0/args/a/1"),
    _case("non-str-key-in-meta", (("/meta", {1: "x"}),), "/meta"),
    _case("non-str-key-nested", (("/extra", {"a": {None: "y"}}),), "/extra/a"),
    _case("big-int-in-extra", (("/extra", {"n": 2**64}),), "/extra/n"),
    _case("small-int-in-meta", (("/meta", {"n": -(2**63) - 1}),), "/meta/n"),
    _case("big-int-as-msg", (("/turns/1/msg", 2**70),), "/turns/1/msg"),
    _case("big-int-in-observation-list", (("/turns/1/observation", [0, 2**80]),), "/turns/1/observation/1"),
    _case("bytes-in-extra", (("/extra", {"b": b"raw"}),), "/extra/b"),
    _case("object-in-result", ((f"{TC}/0/result", _Obj()),), f"{TC}/0/result"),
    _case("decimal-in-metrics", (("/turns/1/metrics", {"c": decimal.Decimal("0.1")}),), "/turns/1/metrics/c"),
    _case("datetime-in-meta", (("/meta", {"at": datetime.datetime(2026, 1, 1)}),), "/meta/at"),
    _case("lone-surrogate-msg", (("/turns/1/msg", "a\ud800b"),), "/turns/1/msg"),
    _case("lone-surrogate-nested", (("/extra", {"k": ["\udfff"]}),), "/extra/k/0"),
    _case("nan-in-agent-tools", (("/agent/tools", [{"w": math.nan}]),), "/agent/tools/0/w"),
    _case("set-in-effort", (("/turns/1/effort", {"high"}),), "/turns/1/effort"),
    _case("set-in-env-state", (("/task/env/state", {"s": {1}}),), "/task/env/state/s"),
    _case("tuple-in-ground-truth", (("/task/result/ground_truth", ("a",)),), "/task/result/ground_truth"),
    _case("nan-score", (("/task/result/score", math.nan),), "/task/result/score"),
    _case("inf-max-score", (("/task/result/max_score", math.inf),), "/task/result/max_score"),
]


@pytest.mark.parametrize(("ops", "expected"), JSON_VALUE_CASES)
def test_any_values_must_be_json(ops, expected):
    assert_rejected(mutated(ops), expected)


JSON_VALUE_ACCEPTED = [
    pytest.param((("/turns/1/msg", 2**64 - 1),), id="uint64-max"),
    pytest.param((("/turns/1/msg", -(2**63)),), id="int64-min"),
    pytest.param((("/extra", {"deep": [[[{"a": None}]]], "b": False, "f": -0.0}),), id="nested"),
    pytest.param((("/meta", None),), id="meta-null"),
    pytest.param((("/turns/1/msg", "héllo 🌍 \u0000"),), id="unicode-and-nul"),
    pytest.param((("/turns/1/msg", ""),), id="empty-string"),
    pytest.param((("/turns/1/msg", []),), id="empty-list"),
]


@pytest.mark.parametrize("ops", JSON_VALUE_ACCEPTED)
def test_any_json_values_accepted(ops):
    assert_valid(mutated(ops))


# ------------------------------------------------------------------------------- all errors, messages


def test_iter_errors_yields_every_error():
    doc = mutated(
        (
            ("/session", ""),
            ("/agent/id", None),
            ("/bogus", 1),
            ("/turns/0/id", True),
            ("/turns/1/src", ""),
            (f"{TC}/0/fn", ""),
            (f"{TC}/2/tcid", "call-1"),
            ("/turns/2/id", 11),
            ("/turns/2/ts", "2026-07-30 12:00:00Z"),
            ("/task/llm/k", 0),
            ("/prompt", {}),
            ("/unknown_key_counts", {}),
            ("/parent/psid", DELETE),
            ("/turns/1/tool_calls/1/response", {}),
        )
    )
    errors = errors_of(doc)
    assert {e.pointer for e in errors} == {
        "/session",
        "/agent/id",
        "/bogus",
        "/turns/0/id",
        "/turns/1/src",
        f"{TC}/0/fn",
        f"{TC}/2/tcid",
        "/turns/2/id",
        "/turns/2/ts",
        "/task/llm/k",
        "/prompt",
        "/unknown_key_counts",
        "/parent/psid",
        "/turns/1/tool_calls/1/response",
    }
    assert len(errors) == 14
    with pytest.raises(StorylineError) as info:
        validate(doc)
    assert info.value.pointer == errors[0].pointer


def test_iter_errors_of_a_valid_document_is_empty():
    assert list(iter_errors(FULL)) == []


def test_error_names_the_file_given():
    with pytest.raises(StorylineError) as info:
        validate({**MINIMAL, "session": ""}, document_id="logs/a.json")
    assert info.value.document_id == "logs/a.json"
    assert "in logs/a.json" in str(info.value)
    assert str(info.value).startswith("/session: ")


def test_error_document_id_defaults_to_origin_document_id():
    doc = mutated((("/session", ""),))
    [err] = errors_of(doc)
    assert err.document_id == FULL_DOC_ID
    assert str(err).endswith(f" in {FULL_DOC_ID}")


def test_explicit_document_id_wins_over_origin():
    doc = mutated((("/session", ""),))
    [err] = errors_of(doc, document_id="logs/b.json")
    assert err.document_id == "logs/b.json"
    assert "in logs/b.json" in str(err)
    assert FULL_DOC_ID not in str(err)


def test_error_without_any_document_id():
    [err] = errors_of({**MINIMAL, "session": ""})
    assert err.document_id is None
    assert " in " not in str(err)
    assert err.line is None


def test_root_error_renders_root():
    [err] = errors_of([])
    assert err.pointer == ""
    assert str(err).startswith("(root): ")


def test_storyline_error_is_a_value_error():
    with pytest.raises(ValueError):
        validate({**MINIMAL, "turns": None})


# -------------------------------------------------------------------------------- order and kinds


def test_turn_order_is_preserved_and_ids_are_not_sorted():
    doc = copy.deepcopy(FULL)
    validate(doc)
    list(iter_errors(doc))
    assert [t["id"] for t in doc["turns"]] == [10, 11, 3]
    assert doc == FULL


def test_validation_never_writes_derived_kind():
    doc = copy.deepcopy(MINIMAL)
    validate(doc)
    assert "kind" not in doc["turns"][0]
    assert doc == MINIMAL


KIND_CASES = [
    pytest.param({"src": "agent"}, "llm.response", id="agent"),
    pytest.param({"src": "user"}, "llm.request", id="user"),
    pytest.param({"src": "system"}, "context", id="system"),
    pytest.param({"src": "environment"}, "context", id="environment"),
    pytest.param({"src": "agent", "tool_calls": []}, "llm.response", id="agent-empty-tool-calls"),
    pytest.param(
        {"src": "agent", "tool_calls": [{"tcid": "c", "fn": "ls", "args": {}}]}, "autonomous", id="agent-tools"
    ),
    pytest.param({"src": "user", "tool_calls": [{"tcid": "c", "fn": "ls", "args": {}}]}, "autonomous", id="user-tools"),
    pytest.param(
        {"src": "agent", "tool_calls": [{"tcid": "c", "fn": "ls", "args": {}, "kind": "llm.request"}]},
        "autonomous",
        id="tool-kind-not-read",
    ),
]


@pytest.mark.parametrize(("turn", "expected"), KIND_CASES)
def test_derive_kind(turn, expected):
    before = copy.deepcopy(turn)
    assert derive_kind(turn) == expected
    assert turn_kind(turn) == expected
    assert turn == before
    assert "kind" not in turn


def test_turn_kind_prefers_the_given_kind():
    turn = {"id": 1, "src": "agent", "msg": None, "kind": "custom.kind"}
    assert turn_kind(turn) == "custom.kind"
    assert derive_kind(turn) == "llm.response"
    assert turn_kind({**turn, "kind": ""}) == "llm.response"
    assert turn_kind(FULL["turns"][0]) == "context"
    assert derive_kind(FULL["turns"][1]) == "autonomous"
