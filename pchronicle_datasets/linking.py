"""Linking tool results to the tool calls they answer, in a Storyline document: the one place for the rule.

A result is linked by call id wherever the document holds it: ``tool_calls[].result`` on the call itself
(ATIF style), or an ``observation.results[]`` entry whose ``source_call_id`` is a call's ``tcid`` (on any
turn: RFC-0009 puts them on the turn after the call).

>>> story = {"turns": [
...     {"id": 1, "src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "ls", "args": {}}]},
...     {"id": 2, "src": "agent", "msg": "", "observation": {"results": [{"source_call_id": "c1", "content": "a"}]}}]}
>>> results_by_turn(story)
{0: [('c1', 'ls', 'a')]}
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["observation_results", "results_by_turn", "tool_results"]


def observation_results(turn: Mapping[str, Any]) -> list:
    """The ``observation.results`` list of a turn (``[]`` when it has none)."""
    obs = turn.get("observation")
    if isinstance(obs, dict):
        results = obs.get("results")
        if isinstance(results, list):
            return results
    return []


def tool_results(story: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """``(fn, content)`` for every result linked to a call of the document, by id, anywhere in it: a call's
    own ``result`` first, then observation results (a result without ``content`` is ``""``, as the reference
    batch runner reads it). Unlinked results are not yielded."""
    turns = story.get("turns") or []
    by_id: dict[str, str] = {}
    for turn in turns:
        for call in turn.get("tool_calls") or []:
            by_id[call["tcid"]] = call["fn"]
            if "result" in call:
                yield call["fn"], call["result"]
    for turn in turns:
        for res in observation_results(turn):
            sid = res.get("source_call_id") if isinstance(res, dict) else None
            fn = by_id.get(sid) if isinstance(sid, str) else None
            if fn is not None:
                yield fn, res.get("content", "")


def results_by_turn(story: Mapping[str, Any]) -> dict[int, list[tuple[str, str, Any]]]:
    """``{turn index: [(tool_call_id, name, content)]}``: every result placed after the turn whose call it
    answers, as training outputs show them.

    A result links to a call made at or before its own turn. A result without a known id goes to the calls
    of its own turn, or else of the latest earlier turn with calls, by position; its name is that call's, or
    ``"unknown"`` past the end. When no turn so far made a call, it stays on its own turn as ``"unknown"``: a
    result that answers no call is never dropped (the ShareGPT writer shows results only after turns with
    calls, and counts the others).

    >>> results_by_turn({"turns": [{"src": "agent", "msg": "", "observation": {"results": [{"content": "x"}]}}]})
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
            home_calls = (turns[home].get("tool_calls") or []) if home is not None else []
            name = home_calls[unlinked]["fn"] if unlinked < len(home_calls) else "unknown"
            placed.setdefault(t if home is None else home, []).append(
                (sid if isinstance(sid, str) else "", name, content)
            )
            unlinked += 1
    return placed
