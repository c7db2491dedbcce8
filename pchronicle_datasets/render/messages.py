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

from ..jsonio import dumps_text
from ..linking import place_results, shown_call_ids
from ..losses import report_loss
from ..notices import is_notice
from .sharegpt import message_text, tool_schema, written_arguments

__all__ = ["render_messages", "tool_functions"]

# A turn of source "tool" is tool output that answered no call (ShareGPT's orphan tool elements): like a result
# that answers no call, it is the next user message.
_ROLE = {"user": "user", "agent": "assistant", "developer": "developer", "tool": "user"}


def tool_functions(story: dict[str, Any]) -> list[dict[str, Any]]:
    """``/agent/tools`` as OpenAI function schemas ``{"type": "function", "function": …}`` (bare schemas wrapped,
    the ``"required": null`` artifact of the ShareGPT template dropped, anything that is not a tool left out)."""
    tools = story["agent"].get("tools")
    out = []
    for k, tool in enumerate(tools if isinstance(tools, list) else []):
        fn = tool_schema(tool)
        if fn is None:
            report_loss("tool_definition_dropped", pointer=f"/agent/tools/{k}")
        else:
            out.append(
                {"type": "function", "function": {k: v for k, v in fn.items() if not (k == "required" and v is None)}}
            )
    return out


def render_messages(
    story: dict[str, Any],
    *,
    drop_copied: bool = False,
    keep_invalid_args: bool = False,
    arguments: str = "object",
    developer: str = "developer",
    drop_notices: bool = False,
) -> dict[str, Any]:
    """``{"messages": [...], "tools": [...]}`` for a Storyline document (see ``pc.to_messages``).

    Roles ``system``/``developer``/``user``/``assistant``/``tool``: a turn of any other ``src`` is ``system``
    (a counted loss, ``source_renamed``); ``developer="system"`` folds the developer turns into the system
    message instead (appended to the leading one, or made the first message). Every ``content`` is a string
    (``text_of``; non-text parts are a counted loss). Arguments are objects, or their JSON text with
    ``arguments="string"`` (a source string, JSON or not, is written as it is; in the object form a string that is
    not JSON is ``{}``, a counted loss: ``written_arguments``). A
    result that answers a call is a ``tool`` message after the turn with the call; one that answers no call is
    the next ``user`` message. Renamed call ids are shown as the source wrote them (``/meta/source_call_ids``).
    ``drop_notices``: leave out the turns no model saw (``notices.is_notice``), as every training output does.

    >>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
    ...     {"id": 1, "src": "system", "msg": "Be brief."}, {"id": 2, "src": "developer", "msg": "No tools."},
    ...     {"id": 3, "src": "user", "msg": "hi"}]}
    >>> [m["role"] for m in render_messages(story)["messages"]]
    ['system', 'developer', 'user']
    >>> render_messages(story, developer="system")["messages"][0]
    {'role': 'system', 'content': 'Be brief.\\n\\nNo tools.'}
    """
    if arguments not in ("object", "string"):
        raise ValueError(f'arguments is "object" or "string", got {arguments!r}')
    if developer not in ("developer", "system"):
        raise ValueError(f'developer is "developer" or "system", got {developer!r}')
    placed, loose = place_results(story)
    shown = shown_call_ids(story)
    messages: list[dict[str, Any]] = []
    folded: list[str] = []
    for t, turn in enumerate(story["turns"]):
        if (drop_copied and turn.get("copied")) or (drop_notices and is_notice(turn)):
            continue
        src, ptr = turn["src"], f"/turns/{t}"
        text = message_text(turn["msg"], f"{ptr}/msg")
        if src not in _ROLE and src != "system":
            report_loss("source_renamed", pointer=f"{ptr}/src")
        if src != "agent" and isinstance(turn.get("reason"), str) and turn["reason"]:
            report_loss("reasoning_dropped", pointer=f"{ptr}/reason")
        if src != "agent" and turn.get("tool_calls"):
            report_loss("tool_calls_dropped", pointer=f"{ptr}/tool_calls")
        if src == "developer" and developer == "system":
            folded.append(text)
        else:
            msg: dict[str, Any] = {"role": _ROLE.get(src, "system"), "content": text}
            if src == "agent":
                if isinstance(turn.get("reason"), str):
                    msg["reasoning_content"] = turn["reason"]
                calls = turn.get("tool_calls") or []
                if calls:
                    msg["tool_calls"] = [
                        _call(c, shown, f"{ptr}/tool_calls/{k}", arguments=arguments, keep_invalid=keep_invalid_args)
                        for k, c in enumerate(calls)
                    ]
            messages.append(msg)
        if src != "agent" and placed.get(t):
            # Their calls are not written (above): results answering them would answer nothing.
            report_loss("results_dropped", pointer=f"{ptr}/tool_calls", count=len(placed[t]))
        else:
            for cid, name, content in placed.get(t, []):
                result = message_text(content, f"{ptr}/observation")
                messages.append({"role": "tool", "name": name, "tool_call_id": shown.get(cid, cid), "content": result})
        for k, content in loose.get(t, ()):
            if content is None or content == "":  # nothing to show (a subagent reference, say)
                if content is None:
                    report_loss("result_without_content", pointer=f"{ptr}/observation/results/{k}")
                continue
            messages.append({"role": "user", "content": message_text(content, f"{ptr}/observation/results/{k}")})
    if folded:
        if messages and messages[0]["role"] == "system":
            messages[0]["content"] = "\n\n".join([messages[0]["content"], *folded])
        else:
            messages.insert(0, {"role": "system", "content": "\n\n".join(folded)})
    return {"messages": messages, "tools": tool_functions(story)}


def _call(call: dict[str, Any], shown: dict[str, str], ptr: str, *, arguments: str, keep_invalid: bool) -> dict:
    source = call["args"]
    if arguments == "string" and isinstance(source, str):
        # A string source is text the parser did not read as JSON (NaN, big integers, or no JSON at all): the
        # string form holds it exactly, so nothing is lost and nothing is counted.
        args = source
    else:
        args = written_arguments(source, keep_invalid=keep_invalid, pointer=f"{ptr}/args")
        if arguments == "string" and not isinstance(args, str):
            args = dumps_text(args)  # orjson: every digit of 2.5e-05 kept
    return {
        "id": shown.get(call["tcid"], call["tcid"]),
        "type": "function",
        "function": {"name": call["fn"], "arguments": args},
    }
