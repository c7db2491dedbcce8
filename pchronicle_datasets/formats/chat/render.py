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

import logging
from typing import Any

from ..sharegpt import WARNINGS, text_of, tool_schema

__all__ = ["arguments", "place_results", "render_messages", "tool_functions"]

# The lossy-write counter and logger are the ShareGPT writer's: to_messages and to_sharegpt count the same
# events (a string ``args`` written as ``{}``) in one place.
log = logging.getLogger("pchronicle_datasets.sharegpt")

_ROLE = {"user": "user", "agent": "assistant", "developer": "developer"}


def arguments(args: Any, *, keep_invalid: bool) -> Any:
    """A call's ``arguments`` object: Storyline ``args`` are parsed already, so a string is a source whose
    arguments were not JSON; it becomes ``{}`` (counted in ``WARNINGS["invalid_arguments"]``, logged) unless
    ``keep_invalid``.

    >>> arguments({"p": "."}, keep_invalid=False)
    {'p': '.'}
    """
    if isinstance(args, str) and not keep_invalid:
        WARNINGS["invalid_arguments"] += 1
        log.warning("tool call arguments are not JSON (%r…); written as {} as the seed says", args[:100])
        return {}
    return args


def place_results(story: dict[str, Any]) -> dict[int, list[tuple[str, str, Any]]]:
    """``{turn index: [(tool_call_id, name, content), …]}``: every tool result after the turn whose call it
    answers, wherever the document holds it.

    Linked by call id: ``tool_calls[].result`` on the call (ATIF style) or ``observation.results[]`` with a
    ``source_call_id`` on any turn (RFC-0009 puts them on the next turn, the chat reader on the calling turn).
    A result without a known id goes to the calls of its own turn, or else of the latest earlier turn with
    calls, by position (its name is that call's, ``"unknown"`` past the end); when no turn so far has calls,
    it stays on its own turn as ``"unknown"`` (a result answering no call is never dropped).

    >>> story = {"turns": [{"src": "agent", "msg": "", "observation": {"results": [{"content": "x"}]}}]}
    >>> place_results(story)
    {0: [('', 'unknown', 'x')]}
    """
    turns = story["turns"]
    owner: dict[str, tuple[int, str]] = {}
    placed: dict[int, list[tuple[str, str, Any]]] = {}
    last_with_calls: int | None = None
    for t, turn in enumerate(turns):
        calls = turn.get("tool_calls") or []
        for call in calls:
            owner.setdefault(call["tcid"], (t, call["fn"]))
            if "result" in call:
                placed.setdefault(t, []).append((call["tcid"], call["fn"], call["result"]))
        if calls:
            last_with_calls = t
        obs = turn.get("observation")
        results = obs.get("results") if isinstance(obs, dict) else None
        if not isinstance(results, list):
            continue
        home = t if calls else last_with_calls
        unlinked = 0
        for res in results:
            if not isinstance(res, dict):
                continue
            sid = res.get("source_call_id")
            content = res.get("content", "")
            if isinstance(sid, str) and sid in owner:
                t_owner, fn = owner[sid]
                placed.setdefault(t_owner, []).append((sid, fn, content))
                continue
            home_calls = turns[home].get("tool_calls") or [] if home is not None else []
            name = home_calls[unlinked]["fn"] if unlinked < len(home_calls) else "unknown"
            placed.setdefault(t if home is None else home, []).append(
                (sid if isinstance(sid, str) else "", name, content)
            )
            unlinked += 1
    return placed


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
    ``content`` is a string (``text_of``); arguments are objects (``arguments``).
    """
    placed = place_results(story)
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
                            "arguments": arguments(c["args"], keep_invalid=keep_invalid_args),
                        },
                    }
                    for c in calls
                ]
        messages.append(msg)
        for cid, name, content in placed.get(t, []):
            messages.append({"role": "tool", "name": name, "tool_call_id": cid, "content": text_of(content)})
    return {"messages": messages, "tools": tool_functions(story)}
