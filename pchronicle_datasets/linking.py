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
    "SERVER_SIDE_KINDS",
    "SOURCE_CALL_IDS",
    "answered_by_provider",
    "loose_results",
    "observation_results",
    "place_results",
    "results_by_turn",
    "shown_call_ids",
    "tool_outcomes",
    "tool_outcomes_by_id",
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
    """``(fn, content)`` for every result that answers a call of the document, as ``place_results`` links it
    (by id, or by position where the result has no id): the results training outputs show after their call,
    counted by ``tool_stats`` (a result without ``content`` is ``""``, as the reference batch runner reads it).
    Results that answer no call (``"unknown"``, loose) are not yielded.

    >>> list(tool_results({"turns": [{"src": "agent", "msg": "", "tool_calls": [{"tcid": "c", "fn": "ls", "args": {}}],
    ...     "observation": {"results": [{"content": "x"}]}}]}))
    [('ls', 'x')]
    """
    for fn, content, _, _ in tool_outcomes(story):
        yield fn, content


def tool_outcomes(story: Mapping[str, Any]) -> Iterator[tuple[str, Any, bool, Mapping[str, Any] | None]]:
    """``(fn, content, marked_failed, call)`` for every result ``tool_results`` yields (the one linking rule,
    ``place_results``): ``marked_failed`` when the source said the call failed — an observation result's
    ``is_error: true`` (Anthropic ``tool_result.is_error``), or a call whose ``response.status`` is ``"error"`` —
    whatever its content says; ``call`` is the call a result names by id (None for one linked by position).

    >>> story = {"turns": [{"src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "Bash", "args": {}}],
    ...     "observation": {"results": [{"source_call_id": "c1", "content": "Exit code 1", "is_error": True}]}}]}
    >>> list(tool_outcomes(story))
    [('Bash', 'Exit code 1', True, {'tcid': 'c1', 'fn': 'Bash', 'args': {}})]
    """
    if not story.get("turns"):
        return
    calls = {c["tcid"]: c for turn in story["turns"] for c in turn.get("tool_calls") or ()}
    called = {c["fn"] for c in calls.values()}
    marks: dict[int, list[bool]] = {}
    for t, results in place_results(story, marks)[0].items():
        for (sid, fn, content), failed in zip(results, marks[t], strict=True):
            if fn != "unknown" or "unknown" in called:
                yield fn, content, failed, calls.get(sid)


def tool_outcomes_by_id(story: Mapping[str, Any]) -> list[tuple[str, Any, bool, Mapping[str, Any]]] | None:
    """``tool_outcomes(story)`` (in another order) when every result names, by id, a call made at or before its
    turn — where a result goes after the call, which ``place_results`` decides, does not change what it
    answers — else None (a result linked by position, or by an id no earlier call has: the one rule decides).
    Most documents are so, and this costs a third of the placing (``features.compute_tool_stats`` uses it).

    >>> story = {"turns": [{"src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "ls", "args": {}}],
    ...     "observation": {"results": [{"source_call_id": "c1", "content": "x"}]}}]}
    >>> [(fn, content) for fn, content, _, _ in tool_outcomes_by_id(story)]
    [('ls', 'x')]
    """
    owner: dict[str, Mapping[str, Any]] = {}
    out = []
    for turn in story.get("turns") or ():
        for call in turn.get("tool_calls") or ():
            owner.setdefault(call["tcid"], call)
            if "result" in call:
                out.append((call["fn"], call["result"], _call_marked_failed(call), call))
        obs = turn.get("observation")
        results = obs.get("results") if isinstance(obs, dict) else None
        if type(results) is list:
            for res in results:
                if type(res) is not dict:
                    continue
                sid = res.get("source_call_id")
                call = owner.get(sid) if type(sid) is str else None
                if call is None:
                    return None
                out.append((call["fn"], res.get("content", ""), _result_marked_failed(res), call))
    return out


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


def _result_marked_failed(result: Mapping[str, Any]) -> bool:
    """Whether the source marked an observation result failed (Anthropic's ``tool_result.is_error``, as the
    harness readers keep it)."""
    return result.get("is_error") is True


def _call_marked_failed(call: Mapping[str, Any]) -> bool:
    """Whether the source marked a call that holds its own ``result`` failed (``response.status == "error"``)."""
    response = call.get("response")
    return isinstance(response, dict) and response.get("status") == "error"


def _waiting(t: int, turns: list, placed: dict) -> bool:
    """Whether turn ``t`` still has a call without a placed result."""
    return len(placed.get(t, ())) < len(turns[t].get("tool_calls") or ())


def _answers_own_call(turn: Mapping[str, Any], results: list) -> bool:
    """Whether a turn holds a result of one of its own calls (its observation then follows its calls, ATIF's
    step)."""
    own = {c["tcid"] for c in turn.get("tool_calls") or ()}
    if not own:
        return False
    if any("result" in c for c in turn["tool_calls"]):
        return True
    return any(isinstance(r, dict) and r.get("source_call_id") in own for r in results)


def _put(placed: dict, marks: dict | None, t: int, entry: tuple, failed: bool) -> None:
    """Place ``entry`` after turn ``t``; ``marks`` (when kept) gets whether the source marked that result failed."""
    placed.setdefault(t, []).append(entry)
    if marks is not None:
        marks.setdefault(t, []).append(failed)


def _place_turn(
    t: int, turns: list, results: list, owner: dict, placed: dict, loose: dict, last: int | None, marks: dict | None
) -> None:
    calls = turns[t].get("tool_calls") or []
    home = t if calls else (last if last is not None and _waiting(last, turns, placed) else None)
    home_calls = (turns[home].get("tool_calls") or []) if home is not None else []
    unlinked = len(placed.get(home, ())) if home is not None and home != t else 0
    # A turn that holds results of its own calls holds what came back after it: results of earlier calls among
    # them came back after it too (parallel calls written as one assistant message each, then their results).
    # Otherwise results of earlier calls are shown after their call (RFC-0009 puts them on the next response).
    after_own = _answers_own_call(turns[t], results)
    by_id = {r["source_call_id"] for r in results if isinstance(r, dict) and isinstance(r.get("source_call_id"), str)}
    for k, res in enumerate(results):
        if not isinstance(res, dict):
            continue
        sid = res.get("source_call_id")
        content = res.get("content", "")
        failed = _result_marked_failed(res)
        if isinstance(sid, str) and sid in owner:
            t_owner, fn = owner[sid]
            _put(placed, marks, t if after_own else t_owner, (sid, fn, content), failed)
            continue
        if isinstance(sid, str) and sid:
            # An id that names no call answers no call: "unknown", never the name of a call it does not answer.
            _put(placed, marks, home if home is not None else t, (sid, "unknown", content), failed)
            continue
        if home is None:
            loose.setdefault(t, []).append((k, content))
            continue
        # By position: the next of the home turn's calls that no result answers by id.
        while unlinked < len(home_calls) and home_calls[unlinked]["tcid"] in by_id:
            unlinked += 1
        name = home_calls[unlinked]["fn"] if unlinked < len(home_calls) else "unknown"
        _put(placed, marks, home, (sid if isinstance(sid, str) else "", name, content), failed)
        unlinked += 1


def place_results(
    story: Mapping[str, Any], marks: dict[int, list[bool]] | None = None
) -> tuple[dict[int, list[tuple[str, str, Any]]], dict[int, list[tuple[int, Any]]]]:
    """``(results_by_turn(story), loose_results(story))`` in one pass over the document; ``marks``, when given,
    is filled in step with the placed results: whether the source marked each failed (``is_error: true`` on an
    observation result, ``response.status == "error"`` on a call holding its result).

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
                _put(placed, marks, t, (call["tcid"], call["fn"], call["result"]), _call_marked_failed(call))
        obs = turn.get("observation")
        results = obs.get("results") if isinstance(obs, dict) else None
        if isinstance(results, list):
            _place_turn(t, turns, results, owner, placed, loose, last_with_calls, marks)
        if calls:
            last_with_calls = t
    return placed, loose


#: Call kinds the model provider runs itself, inside the response that made the call: OpenAI's hosted web search
#: (a Responses ``web_search_call``, a ``codex exec --json`` ``web_search`` item) and image generation (an
#: ``image_generation_call``, its image in the item itself) and Anthropic's server tools (``server_tool_use``).
#: The provider answered them in that response; no later record brings a result back (Codex's ``web_search_end``
#: event repeats the call's ``action``, no results), so such a call never waits for one (``pc.flags``'
#: ``tool_call_unanswered`` leaves it out; docs/formats/codex.md, "Web search").
SERVER_SIDE_KINDS = frozenset({"web_search", "image_generation", "server"})


def answered_by_provider(call: Mapping[str, Any]) -> bool:
    """Whether the provider ran ``call`` inside the model's response (``SERVER_SIDE_KINDS``): no result follows it.

    >>> answered_by_provider({"tcid": "ws_1", "fn": "web_search", "args": {}, "kind": "web_search"})
    True
    >>> answered_by_provider({"tcid": "c1", "fn": "web_search", "args": {}})
    False
    """
    return call.get("kind") in SERVER_SIDE_KINDS


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
