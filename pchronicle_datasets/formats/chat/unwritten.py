"""What a chat record cannot hold of a document from another format, counted in the loss report.

The chat writer gives such a document as ``{"id", "messages", "tools", "model"}`` with the messages of
``render_messages`` (the shape of ``pc.to_messages``): roles, string contents, reasoning, tool calls and their
results. Every other Storyline value has no key in a chat record (a turn's ``ts``, ``model``, ``metrics``,
``env``, the document's ``/run``, ``/task``, ``/final_metrics``…), and a few are written changed (a
non-string ``msg`` as text). ``unwritten`` lists each such value with its pointer; ``report_unwritten`` counts
them through ``losses.report_loss``, one report per kind and written file, the kind naming the field:
``not in chat: /turns/*/ts`` (no key for it) or ``text in chat: /turns/*/msg`` (written as text).

Not counted: what the chat reader derives again (``/schema_version``, ``/origin`` — a read file is its own
origin —, ``/unknown_key_counts``, turn ids ``1…n``, an agent id equal to the model or ``"chat"``), and other
formats' residual, which rides in the ``_storyline`` envelope (or is counted by the writer when left out).

>>> story = {"schema_version": "storyline/v1", "session": "s", "run": "r1", "agent": {"id": "chat"}, "turns": [
...     {"id": 1, "src": "user", "msg": "hi", "ts": "2026-03-01T10:00:00Z"},
...     {"id": 2, "src": "agent", "msg": ["hello"], "ts": "2026-03-01T10:00:01Z", "metrics": {"reward": 1}}]}
>>> [(kind, pointer) for kind, pointer in unwritten(story)]  # doctest: +NORMALIZE_WHITESPACE
[('not in chat: /run', '/run'), ('not in chat: /turns/*/ts', '/turns/0/ts'),
 ('text in chat: /turns/*/msg', '/turns/1/msg'), ('not in chat: /turns/*/ts', '/turns/1/ts'),
 ('not in chat: /turns/*/metrics', '/turns/1/metrics')]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ...losses import report_listed
from ...pointer import join
from ...render.sharegpt import tool_schema
from .forms import SRC_ROLE

__all__ = ["report_unwritten", "unwritten"]

# What a chat record holds of a document (writer._fresh): the rest of each object is counted.
_ROOT_HELD = {"schema_version", "origin", "session", "agent", "turns", "unknown_fields", "unknown_key_counts"}
_AGENT_HELD = {"id", "name", "model", "tools"}
_TURN_HELD = {"id", "src", "msg", "reason", "tool_calls", "observation"}
_CALL_HELD = {"tcid", "fn", "args", "result"}
_RESULT_HELD = {"source_call_id", "content"}


def unwritten(story: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """``(kind, pointer)`` for every value of ``story`` that the chat record written for it does not hold as
    it is (see the module docs), in document order."""
    for key in story:
        if key not in _ROOT_HELD:
            yield f"not in chat: /{key}", join("", key)
    yield from _agent(story["agent"])
    for t, turn in enumerate(story["turns"]):
        yield from _turn(turn, f"/turns/{t}", t)


def report_unwritten(stories: Iterable[dict[str, Any]]) -> None:
    """Count ``unwritten`` of each document in the loss report: one ``report_loss`` per kind for all of them
    (a file of many documents logs one line per kind outside ``collect_losses``), with the first pointer and
    the session it is in.

    >>> from pchronicle_datasets.losses import collect_losses
    >>> turn = {"id": 1, "src": "user", "msg": "hi", "ts": "2026-03-01T10:00:00Z"}
    >>> stories = [{"session": s, "agent": {"id": "chat"}, "turns": [turn]} for s in ("a", "b")]
    >>> with collect_losses() as report:
    ...     report_unwritten(stories)
    >>> report.summary()
    '1 kind of loss: not in chat: /turns/*/ts 2 (first at /turns/0/ts)'
    """
    report_listed(stories, unwritten)


def _agent(agent: dict[str, Any]) -> Iterator[tuple[str, str]]:
    derived = agent.get("model") or "chat"  # what the chat reader makes /agent/id and /agent/name of
    for key in agent:
        if key not in _AGENT_HELD or (key in ("id", "name") and agent[key] != derived):
            yield f"not in chat: /agent/{key}", f"/agent/{key}"
    tools = agent.get("tools")
    if "tools" in agent and not isinstance(tools, list):
        yield "not in chat: /agent/tools", "/agent/tools"  # only a list of tool definitions is written
    for i, tool in enumerate(tools if isinstance(tools, list) else ()):
        if tool_schema(tool) is None:
            yield "not in chat: /agent/tools/*", f"/agent/tools/{i}"
        elif tool.get("type") == "function":  # written as {"type": "function", "function": …}: other keys go
            for key in tool:
                if key not in ("type", "function"):
                    yield f"not in chat: /agent/tools/*/{key}", f"/agent/tools/{i}/{join('', key)[1:]}"


def _turn(turn: dict[str, Any], base: str, t: int) -> Iterator[tuple[str, str]]:
    src = turn["src"]
    for key in turn:
        if key == "id" and turn["id"] != t + 1:
            yield "not in chat: /turns/*/id", f"{base}/id"  # the reader numbers turns 1…n
        elif key == "src" and src not in SRC_ROLE:
            yield "not in chat: /turns/*/src", f"{base}/src"  # written as a system message
        elif key == "msg" and not isinstance(turn["msg"], str):
            yield "text in chat: /turns/*/msg", f"{base}/msg"
        elif key in ("reason", "tool_calls") and src != "agent" and turn[key] != []:
            yield f"not in chat: /turns/*/{key}", f"{base}/{key}"  # only assistant messages carry them
        elif key not in _TURN_HELD:
            yield f"not in chat: /turns/*/{key}", join(base, key)
    for c, call in enumerate(turn.get("tool_calls") or () if src == "agent" else ()):
        for key in call:
            if key not in _CALL_HELD:
                yield f"not in chat: /turns/*/tool_calls/*/{key}", join(f"{base}/tool_calls/{c}", key)
        if "result" in call and not isinstance(call["result"], str):
            yield "text in chat: /turns/*/tool_calls/*/result", f"{base}/tool_calls/{c}/result"
    if "observation" in turn:
        yield from _observation(turn["observation"], f"{base}/observation")


def _observation(obs: Any, base: str) -> Iterator[tuple[str, str]]:
    if not isinstance(obs, dict):
        yield "not in chat: /turns/*/observation", base
        return
    for key in obs:
        if key != "results":
            yield f"not in chat: /turns/*/observation/{key}", join(base, key)
    results = obs.get("results")
    if "results" in obs and not isinstance(results, list):
        yield "not in chat: /turns/*/observation/results", f"{base}/results"
        return
    for o, res in enumerate(results or ()):
        where = f"{base}/results/{o}"
        if not isinstance(res, dict):
            yield "not in chat: /turns/*/observation/results/*", where
            continue
        for key in res:
            if key not in _RESULT_HELD:
                yield f"not in chat: /turns/*/observation/results/*/{key}", join(where, key)
        if "source_call_id" in res and not isinstance(res["source_call_id"], str):
            yield "not in chat: /turns/*/observation/results/*/source_call_id", f"{where}/source_call_id"
        if "content" in res and not isinstance(res["content"], str):
            yield "text in chat: /turns/*/observation/results/*/content", f"{where}/content"
