"""RFC-0009's mapping tables as data: the keys each table names, and the small predicates the tables use.

Every reader and writer module of the package takes its key lists from here, so a table row is changed in one
place.
"""

from __future__ import annotations

from typing import Any

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
    "ROW_METRICS",
    "RUN_KEYS",
    "TURN_ENV_SOURCES",
    "empty",
    "env_ok",
    "nonempty_str",
    "restore_content",
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
CONTENT_PART_TYPES = frozenset(
    {"text", "image_url", "input_audio", "file", "refusal", "input_text", "output_text", "image", "audio"}
)
CONTEXT_SRC = {"system": "system", "user": "user", "assistant": "agent"}
CONTEXT_KIND = {"system": "context", "user": "llm.request", "assistant": "llm.response"}


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


def restore_content(content: Any, scan: bool = True) -> tuple[Any, bool]:
    """Content parts a producer re-encoded as a string, restored (RFC-0009); plain text stays as it is."""
    if type(content) is str and content[:1] in ("[", "{"):
        ok, value = try_loads(content, scan=scan)
        if ok and (isinstance(value, list) or (isinstance(value, dict) and value.get("type") in CONTENT_PART_TYPES)):
            return value, True
    return content, False


def env_ok(path: tuple, value: Any) -> bool:
    """A non-empty value that RFC-0001's env shape can hold at ``path`` (an ``ENV_SOURCES`` target)."""
    if value is None or value == "":
        return False
    return type(value) is str if len(path) == 1 else True
