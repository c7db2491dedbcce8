"""The tool calls an ACP server ran (``ACPToolCallEvent``, docs/formats/openhands-sdk.md): which events of a stream
are one call, its name and what its result shows. Pure functions over the events; the reader maps what they find.

>>> runs([{"kind": "ACPToolCallEvent", "tool_call_id": "t", "title": "ls", "status": "pending"},
...       {"kind": "ACPToolCallEvent", "tool_call_id": "t", "title": "ls", "status": "completed"}])
{0: [0, 1]}
>>> result_texts([{"type": "content", "content": {"type": "text", "text": "a"}}, {"type": "diff", "path": "x"}])
[('/0/content/text', 'a')]
"""

from __future__ import annotations

from typing import Any

from .fields import ACP, ACP_DONE, ACP_NAME, ACP_SESSION, MESSAGE


def name_key(event: dict) -> str | None:
    """The key of an ACP event that names its call (``title``, else ``tool_kind``), None when none is a string."""
    return next((k for k in ACP_NAME if isinstance(event.get(k), str) and event[k]), None)


def is_call(event: Any) -> bool:
    """An ACP tool-call event the reader maps: a ``tool_call_id`` string and a name, of the root session (an
    ``acp_session_id`` names a sub-agent's session, whose calls are no part of the conversation's turns: kept
    with the sub-agent's other events, residual)."""
    return (
        isinstance(event, dict)
        and event.get("kind") == ACP
        and isinstance(event.get("tool_call_id"), str)
        and bool(event["tool_call_id"])
        and name_key(event) is not None
        and event.get(ACP_SESSION) is None
    )


def done(event: dict) -> bool:
    return isinstance(event.get("status"), str) and event["status"] in ACP_DONE


def runs(events: list) -> dict[int, list[int]]:
    """The index of each ACP call's first event → the indices of all its events, in order. One ``tool_call_id``
    is one call until a terminal event ends it or a ``MessageEvent`` comes between (ACP servers restart their ids
    in a new session: the SDK's ``_terminal_tool_indices`` parts runs there too)."""
    out: dict[int, list[int]] = {}
    running: dict[str, int] = {}  # tool call id → the first index of its call, while it has not ended
    for i, event in enumerate(events):
        if isinstance(event, dict) and event.get("kind") == MESSAGE:
            running.clear()
        if not is_call(event):
            continue
        first = running.get(event["tool_call_id"])
        if first is None:
            first = running[event["tool_call_id"]] = i
            out[first] = []
        out[first].append(i)
        if done(event):
            running.pop(event["tool_call_id"])
    return out


def result_texts(blocks: Any) -> list[tuple[str, str]] | None:
    """(pointer under the blocks, text) of the text-bearing content blocks of an ACP call (``{"type": "text",
    "text"}``, or ``{"type": "content", "content": {"type": "text", "text"}}`` as ACP wraps a content block), None
    when ``blocks`` is no list. ``diff`` and ``terminal`` blocks hold no text the tool returned: left out."""
    if not isinstance(blocks, list):
        return None
    out = []
    for b, block in enumerate(blocks):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            out.append((f"/{b}/text", block["text"]))
        inner = block.get("content")
        if block.get("type") == "content" and isinstance(inner, dict):
            if inner.get("type") == "text" and isinstance(inner.get("text"), str):
                out.append((f"/{b}/content/text", inner["text"]))
    return out
