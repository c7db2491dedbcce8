"""The OpenAI message shapes the writers build."""

from __future__ import annotations

from typing import Any

from ...jsonio import dumps
from .history import COMPARED

__all__ = ["call_message", "project"]


def call_message(call: dict, *, encode_args: bool = False) -> dict:
    """An OpenAI tool call; ``encode_args`` writes ``arguments`` as the JSON string the wire format uses."""
    args = dumps(call["args"]).decode("utf-8") if encode_args else call["args"]
    return {"id": call["tcid"], "type": "function", "function": {"name": call["fn"], "arguments": args}}


def project(msg: dict[str, Any]) -> dict[str, Any]:
    """The compared fields of a message: what a history copy is rebuilt from."""
    return {k: msg[k] for k in COMPARED if k in msg}
