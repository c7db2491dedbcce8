"""The one rendering of a Storyline document as OpenAI-style ``messages`` + ``tools``.

``pc.to_messages`` (the training map function) and the chat writer (for documents that were not read from
a chat file) both call ``render_messages``, so a file written with ``from_storyline("chat", …)`` and a
dataset mapped with ``to_messages`` hold the same messages.

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
...     {"id": 1, "src": "user", "msg": "ls?"},
...     {"id": 2, "src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "ls", "args": {}}],
...      "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]}}]}
>>> [m["role"] for m in render_messages(story)["messages"]]
['user', 'assistant', 'tool']
"""

from __future__ import annotations

from typing import Any

from ...linking import results_by_turn
from ..sharegpt.render import text_of, tool_schema, written_arguments

__all__ = ["render_messages", "tool_functions"]

_ROLE = {"user": "user", "agent": "assistant", "developer": "developer"}


def tool_functions(story: dict[str, Any]) -> list[dict[str, Any]]:
    """``/agent/tools`` as OpenAI function schemas ``{"type": "function", "function": …}`` (bare schemas wrapped,
    the ``"required": null`` artifact of the ShareGPT template dropped, anything that is not a tool left out)."""
    tools = story["agent"].get("tools")
    out = []
    for tool in tools if isinstance(tools, list) else []:
        fn = tool_schema(tool)
        if fn is not None:
            out.append(
                {"type": "function", "function": {k: v for k, v in fn.items() if not (k == "required" and v is None)}}
            )
    return out


def render_messages(
    story: dict[str, Any], *, drop_copied: bool = False, keep_invalid_args: bool = False
) -> dict[str, Any]:
    """``{"messages": [...], "tools": [...]}`` for a Storyline document (see ``pc.to_messages``).

    Roles ``system``/``developer``/``user``/``assistant``/``tool`` (any other ``src`` is ``system``); every
    ``content`` is a string (``text_of``); arguments are objects (``written_arguments``: a string that is not
    JSON is ``{}``, a counted loss).
    """
    placed = results_by_turn(story)
    messages: list[dict[str, Any]] = []
    for t, turn in enumerate(story["turns"]):
        if drop_copied and turn.get("copied"):
            continue
        src = turn["src"]
        msg: dict[str, Any] = {"role": _ROLE.get(src, "system"), "content": text_of(turn["msg"])}
        if src == "agent":
            if isinstance(turn.get("reason"), str):
                msg["reasoning_content"] = turn["reason"]
            calls = turn.get("tool_calls") or []
            if calls:
                msg["tool_calls"] = [
                    {
                        "id": c["tcid"],
                        "type": "function",
                        "function": {
                            "name": c["fn"],
                            "arguments": written_arguments(c["args"], keep_invalid=keep_invalid_args),
                        },
                    }
                    for c in calls
                ]
        messages.append(msg)
        for cid, name, content in placed.get(t, []):
            messages.append({"role": "tool", "name": name, "tool_call_id": cid, "content": text_of(content)})
    return {"messages": messages, "tools": tool_functions(story)}
