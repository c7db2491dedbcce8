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

__all__ = [
    "SOURCE_CALL_IDS",
    "linked_results",
    "loose_results",
    "observation_results",
    "place_results",
    "results_by_turn",
    "shown_call_ids",
    "tool_results",
]


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
    for _call, content in linked_results(story):
        yield _call["fn"], content


def linked_results(story: Mapping[str, Any]) -> Iterator[tuple[Mapping[str, Any], Any]]:
    """``(call, content)`` for every result ``tool_results`` yields, with the call it answers (its
    ``response`` says whether the harness marked it failed)."""
    turns = story.get("turns") or []
    by_id: dict[str, Mapping[str, Any]] = {}
    for turn in turns:
        for call in turn.get("tool_calls") or []:
            by_id[call["tcid"]] = call
            if "result" in call:
                yield call, call["result"]
    for turn in turns:
        for res in observation_results(turn):
            sid = res.get("source_call_id") if isinstance(res, dict) else None
            call = by_id.get(sid) if isinstance(sid, str) else None
            if call is not None:
                yield call, res.get("content", "")


def results_by_turn(story: Mapping[str, Any]) -> dict[int, list[tuple[str, str, Any]]]:
    """``{turn index: [(tool_call_id, name, content)]}``: every result that answers a tool call, placed after the
    turn whose call it answers, as training outputs show them.

    A result links to a call made at or before its own turn, by id. A result without a known id belongs to the
    calls of its own turn by position (ATIF steps hold their calls and their observation), or, on a turn
    without calls, to the latest earlier turn with calls when that turn still has a call without a result
    (RFC-0009 puts results on the turn after the call); its name is that call's, or ``"unknown"`` past the end.
    A result that names an id no call has stays on its own turn as ``"unknown"``. A result with no id on a turn
    without calls, when no call is waiting for it, answers no call (a text-command harness such as Harbor's
    terminus-2 sends the output as the next user message): it is in ``loose_results``, not here.

    >>> results_by_turn({"turns": [{"src": "agent", "msg": "", "tool_calls": [{"tcid": "c", "fn": "ls", "args": {}}],
    ...     "observation": {"results": [{"content": "x"}, {"content": "y"}]}}]})
    {0: [('', 'ls', 'x'), ('', 'unknown', 'y')]}
    """
    return place_results(story)[0]


def loose_results(story: Mapping[str, Any]) -> dict[int, list[tuple[int, Any]]]:
    """``{turn index: [(index in observation.results, content)]}``: the results that answer no tool call (no
    known call id, on a turn without calls), in order; training outputs show each as the next user message.

    >>> loose_results({"turns": [{"src": "agent", "msg": "", "observation": {"results": [{"content": "x"}]}}]})
    {0: [(0, 'x')]}
    """
    return place_results(story)[1]


def _waiting(t: int, turns: list, placed: dict) -> bool:
    """Whether turn ``t`` still has a call without a placed result."""
    return len(placed.get(t, ())) < len(turns[t].get("tool_calls") or ())


def _place_turn(t: int, turns: list, results: list, owner: dict, placed: dict, loose: dict, last: int | None) -> None:
    calls = turns[t].get("tool_calls") or []
    home = t if calls else (last if last is not None and _waiting(last, turns, placed) else None)
    home_calls = (turns[home].get("tool_calls") or []) if home is not None else []
    unlinked = len(placed.get(home, ())) if home is not None and home != t else 0
    for k, res in enumerate(results):
        if not isinstance(res, dict):
            continue
        sid = res.get("source_call_id")
        content = res.get("content", "")
        if isinstance(sid, str) and sid in owner:
            t_owner, fn = owner[sid]
            placed.setdefault(t_owner, []).append((sid, fn, content))
            continue
        if home is None:
            if isinstance(sid, str):
                placed.setdefault(t, []).append((sid, "unknown", content))  # an id that names no call
            else:
                loose.setdefault(t, []).append((k, content))
            continue
        name = home_calls[unlinked]["fn"] if unlinked < len(home_calls) else "unknown"
        placed.setdefault(home, []).append((sid if isinstance(sid, str) else "", name, content))
        unlinked += 1


def place_results(
    story: Mapping[str, Any],
) -> tuple[dict[int, list[tuple[str, str, Any]]], dict[int, list[tuple[int, Any]]]]:
    """``(results_by_turn(story), loose_results(story))`` in one pass over the document.

    >>> place_results({"turns": [{"src": "user", "msg": "hi"}]})
    ({}, {})
    """
    turns = story["turns"]
    owner: dict[str, tuple[int, str]] = {}
    placed: dict[int, list[tuple[str, str, Any]]] = {}
    loose: dict[int, list[tuple[int, Any]]] = {}
    last_with_calls: int | None = None
    for t, turn in enumerate(turns):
        calls = turn.get("tool_calls") or []
        for call in calls:
            owner.setdefault(call["tcid"], (t, call["fn"]))
            if "result" in call:
                placed.setdefault(t, []).append((call["tcid"], call["fn"], call["result"]))
        obs = turn.get("observation")
        results = obs.get("results") if isinstance(obs, dict) else None
        if isinstance(results, list):
            _place_turn(t, turns, results, owner, placed, loose, last_with_calls)
        if calls:
            last_with_calls = t
    return placed, loose


#: ``/meta/source_call_ids``: ``{tcid: the id as the source wrote it}`` for the calls a reader had to rename to
#: keep Storyline's ids unique (a source that reuses ``qwen_tc_0`` in every turn). Training outputs show these.
SOURCE_CALL_IDS = "source_call_ids"


def shown_call_ids(story: Mapping[str, Any]) -> dict[str, str]:
    """``{tcid: id}`` of the renamed calls whose source id training outputs show instead (``SOURCE_CALL_IDS``).

    >>> shown_call_ids({"meta": {"source_call_ids": {"call-5-0": "qwen_tc_0"}}})
    {'call-5-0': 'qwen_tc_0'}
    """
    meta = story.get("meta")
    ids = meta.get(SOURCE_CALL_IDS) if isinstance(meta, Mapping) else None
    if not isinstance(ids, Mapping):
        return {}
    return {k: v for k, v in ids.items() if isinstance(k, str) and isinstance(v, str)}
