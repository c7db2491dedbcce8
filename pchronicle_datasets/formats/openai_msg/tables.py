"""RFC-0009's mapping tables as data: the keys each table names, and the small predicates the tables use.

Every reader and writer module of the package takes its key lists from here, so a table row is changed in one
place.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...jsonio import try_loads

__all__ = [
    "CONTENT_PART_TYPES",
    "CONTEXT_KIND",
    "CONTEXT_SRC",
    "EMPTY_MSG_KEYS",
    "EMPTY_ROW_KEYS",
    "ENV_SOURCES",
    "ENV_STATE_METRICS",
    "NAME",
    "REASONING_KEYS",
    "RESULT_ROLES",
    "ROW_METRICS",
    "RUN_KEYS",
    "TOOLS_KEY",
    "TURN_ENV_SOURCES",
    "empty",
    "env_ok",
    "first_more_id",
    "message_role",
    "nonempty_str",
    "request_id",
    "response_id",
    "role_src",
    "same_json",
    "tools_value",
    "valid_output",
]

NAME = "openai-msg"

RUN_KEYS = ("run_id", "run_bucket", "job_id")
ROW_METRICS = ("reward", "step_reward", "is_terminal", "is_truncated", "is_session_completed", "is_trainable")
ENV_STATE_METRICS = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "request_bytes",
    "response_bytes",
    "output_bytes",
    "output_chunk_count",
    "finish_reason",
    "status_code",
    "retry_count",
    "upstream_latency_ms",
    "gateway_overhead_ms",
    "total_latency_ms",
    "ttft_ms",
    "truncate_reason",
    "error_type",
    "error_text",
    "client_cancelled",
    "upstream_cancelled",
    "synthetic_stop",
    "is_truncated",
    "is_session_completed",
    "max_steps",
    "is_stream",
    "payload_sampled",
    "created_at",
    "completed_at",
)
EMPTY_ROW_KEYS = ("blob_manifest", "chosen_response", "rejected_response", "ground_truth_answer", "reference_answer")
EMPTY_MSG_KEYS = ("name", "refusal", "tool_call_id", "tool_calls")
# Session-stable env keys: relative source pointer (from the row) → path under /task/env.
ENV_SOURCES = (
    ("env_name", ("name",)),
    ("meta_json/env_state/endpoint", ("endpoint",)),
    ("dataset_type", ("state", "dataset_type")),
    ("dt", ("state", "dt")),
    ("meta_json/group_id", ("state", "group_id")),
    ("meta_json/env_state/redaction_policy", ("state", "redaction_policy")),
    ("meta_json/env_state/upstream_base_url", ("state", "upstream_base_url")),
    ("meta_json/env_state/weight_version", ("state", "weight_version")),
)
TURN_ENV_SOURCES = (
    ("id", "id"),
    ("meta_json/env_state/event_type", "event_type"),
    ("meta_json/env_state/request_id", "request_id"),
)
REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")
# The request's tool definitions, which RFC-0009 does not map: the project reads them as session-stable, like
# /task/env (docs/formats/openai-msg.md, "Tool definitions").
TOOLS_KEY = "tools"
CONTENT_PART_TYPES = frozenset(
    {"text", "image_url", "input_audio", "file", "refusal", "input_text", "output_text", "image", "audio"}
)
# RFC-0009's context turns: the roles it admits, their src and kind.
CONTEXT_SRC = {"system": "system", "user": "user", "assistant": "agent"}
CONTEXT_KIND = {"system": "context", "user": "llm.request", "assistant": "llm.response"}
# Tool output: a message of these roles is an observation result, linked by its tool_call_id when it has one
# (docs/formats/openai-msg.md, "What may be residual").
RESULT_ROLES = ("tool", "function")


# RFC-0009's turn ids: context turns 1…k (k = context_count), then per row the request turn k + 2·step_id − 1
# and the response turn k + 2·step_id; the turns of messages the RFC leaves out come after every derived id.
def request_id(context_count: int, step: int) -> int:
    """The id of the request turn of row ``step_id`` (RFC-0009).

    >>> request_id(2, 1), response_id(2, 1), first_more_id(2, 3)
    (3, 4, 9)
    """
    return context_count + 2 * step - 1


def response_id(context_count: int, step: int) -> int:
    """The id of the response turn of row ``step_id`` (RFC-0009)."""
    return context_count + 2 * step


def first_more_id(context_count: int, last_step: int) -> int:
    """The first id of a turn RFC-0009 leaves out (a developer message…): after the last row's response."""
    return response_id(context_count, last_step) + 1


def role_src(role: str) -> str:
    """The ``src`` of a message that becomes a turn: RFC-0009's for its context roles, else the role itself
    (``developer``, a custom role) — RFC-0001 takes any non-empty string.

    >>> role_src("assistant"), role_src("developer"), role_src("ipython")
    ('agent', 'developer', 'ipython')
    """
    return CONTEXT_SRC.get(role, role)


def message_role(src: str) -> str:
    """The role a writer writes for a turn's ``src`` (the inverse of ``role_src``; a message whose role does not
    come back this way, such as ``agent``, keeps its role as residual).

    >>> message_role("agent"), message_role("developer")
    ('assistant', 'developer')
    """
    return "assistant" if src == "agent" else src


def empty(value: Any) -> bool:
    """Null, "" and empty containers: the RFC's "null 或空容器" that count as missing."""
    return value is None or value == "" or value == [] or value == {}


def nonempty_str(value: Any) -> bool:
    return type(value) is str and value != ""


def valid_output(msg: Any) -> bool:
    """An assistant output: non-empty content, refusal or tool calls."""
    return isinstance(msg, dict) and (
        not empty(msg.get("content")) or not empty(msg.get("refusal")) or not empty(msg.get("tool_calls"))
    )


def env_ok(path: tuple, value: Any) -> bool:
    """A non-empty value that RFC-0001's env shape can hold at ``path`` (an ``ENV_SOURCES`` target)."""
    if value is None or value == "":
        return False
    return type(value) is str if len(path) == 1 else True


def tools_value(value: Any, scan: bool = True) -> tuple[Any, bool]:
    """``(tools, was_string)``: a row's ``tools`` when it is a non-empty array, or a JSON string encoding one
    (as gateways may spell ``meta_json``); ``(None, False)`` for anything else, which stays residual.

    >>> tools_value([{"type": "function", "function": {"name": "ls"}}])
    ([{'type': 'function', 'function': {'name': 'ls'}}], False)
    >>> tools_value('[{"type": "function"}]')
    ([{'type': 'function'}], True)
    >>> tools_value([]), tools_value("auto"), tools_value({"type": "function"})
    ((None, False), (None, False), (None, False))
    """
    if isinstance(value, list):
        return (value, False) if value else (None, False)
    if type(value) is str and value[:1] == "[":
        ok, parsed = try_loads(value, scan=scan)
        if ok and isinstance(parsed, list) and parsed:
            return parsed, True
    return None, False


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values, types told apart (``1``, ``1.0`` and ``true`` differ), object key order aside.

    >>> same_json({"a": 1, "b": [1.0]}, {"b": [1.0], "a": 1}), same_json([1], [1.0]), same_json([1], [True])
    (True, False, False)
    """
    option = orjson.OPT_SORT_KEYS
    try:
        return orjson.dumps(a, option=option) == orjson.dumps(b, option=option)
    except orjson.JSONEncodeError:  # nested deeper than JSON writers go: Storyline refuses it later, with its pointer
        return False
