"""What openai-msg rows cannot hold of a document from another format, counted in the loss report.

The synthesized writer (``synthesize``) gives such a document as one row per agent turn that is a valid output:
``session_id``, ``job_id`` (``/run``), ``agent_id``, ``agent_model``, ``created_at`` (the turn's ``ts``), the
metrics RFC-0009 lists, ``tools`` (``/agent/tools``), ``messages`` (roles and contents, reasoning and tool calls
of assistant messages, tool messages for the results that answer a call) and ``response``. Every other Storyline
value has no key in a row (a turn's ``extra``, ``effort``, ``prompt``, ``env``, the document's ``/task``,
``/started_at``…), and some have one only where the reader gives them back: a turn's ``ts`` is its row's
``created_at``, turn ids and kinds are what the reader numbers and derives from the rows. ``unwritten`` lists
each value the rows do not hold with its pointer; ``unwritten_losses`` counts them through
``losses.report_loss``, one report per kind and written file, the kind naming the field:
``not in openai-msg: /turns/*/extra`` (no key for it).

Not counted: what the reader derives again (``/schema_version``, ``/origin``, ``/unknown_key_counts``), other
formats' residual (it rides in the ``_storyline`` envelope of the first row), the session id (a renamed one is a
``session_renamed`` loss), and what the synthesized writer counts itself: the turns after the last output
(``turns_after_last_output``) and a document with no row (``no_agent_turn``).

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a", "ver": "1.2"}, "turns": [
...     {"id": 1, "src": "user", "msg": "hi", "ts": "2026-03-01T10:00:00Z", "tool_calls": [
...         {"tcid": "c0", "fn": "ls", "args": {}}]},
...     {"id": 2, "src": "agent", "msg": "hello", "extra": {"note": "x"}, "metrics": {"reward": 1, "cost": 2}}]}
>>> [(kind, pointer) for kind, pointer in unwritten(story)]  # doctest: +NORMALIZE_WHITESPACE
[('not in openai-msg: /agent/ver', '/agent/ver'), ('not in openai-msg: /turns/*/ts', '/turns/0/ts'),
 ('not in openai-msg: /turns/*/tool_calls', '/turns/0/tool_calls'),
 ('not in openai-msg: /turns/*/extra', '/turns/1/extra'),
 ('not in openai-msg: /turns/*/metrics/*', '/turns/1/metrics/cost')]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ...linking import observation_results
from ...losses import ListedLosses
from ...pointer import join
from .tables import (
    CONTEXT_KIND,
    ENV_STATE_METRICS,
    NAME,
    ROW_METRICS,
    empty,
    first_more_id,
    request_id,
    response_id,
    same_json,
    valid_output,
)
from .turns import marker_calls

__all__ = ["is_output", "unwritten", "unwritten_losses"]

_NOT_IN = f"not in {NAME}"
# Root keys a row holds (``/run`` is ``job_id``) or the reader derives again; ``/final_metrics`` and the agent's
# keys are held only when the reader gives them back (``_root``, ``_agent``).
_ROOT_HELD = {"schema_version", "origin", "session", "run", "agent", "turns", "unknown_fields", "unknown_key_counts"}
_CALL_HELD = {"tcid", "fn", "args"}
_RESULT_HELD = {"source_call_id", "content"}
# A turn's src as the reader gives it back from the role it is written under (other sources are system messages;
# a developer turn is written as a developer message).
_SRC_KEPT = {"user", "agent", "system", "developer"}
_ROLE = {"user": "user", "agent": "assistant"}
_WRITTEN_METRICS = {*ROW_METRICS, *ENV_STATE_METRICS}
# Metrics the reader copies to a turn field: turn field → metric.
_METRIC_FIELDS = {"latency_ms": "total_latency_ms", "ttft_ms": "ttft_ms"}


@dataclass(frozen=True)
class _Place:
    """Where a turn's message lands when the rows are read back: a row's ``output``, a ``context`` turn (first
    row only), a ``request`` turn, or ``more`` (a message RFC-0009 leaves out, a turn of its own), with
    the id, kind and ``copied`` the reader gives it and the ``ts`` of its row."""

    where: str
    id: int | None = None
    kind: str | None = None
    copied: bool | None = None
    ts: Any = None


def is_output(turn: dict[str, Any]) -> bool:
    """Whether the synthesized writer makes ``turn`` a row's output (an agent turn, not copied, with a valid
    output: non-empty content or tool calls).

    >>> is_output({"src": "agent", "msg": ""}), is_output({"src": "agent", "msg": "", "tool_calls": [{}]})
    (False, True)
    """
    output = {"content": turn["msg"], "tool_calls": turn.get("tool_calls")}
    return turn["src"] == "agent" and not turn.get("copied") and valid_output(output)


def unwritten(story: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """``(kind, pointer)`` for every value of ``story`` that its synthesized rows do not hold (see the module
    docs), in document order; nothing for a document with no row (a ``no_agent_turn`` loss)."""
    turns = story["turns"]
    places = _places(turns)
    if places is None:
        return
    outputs = [t for t, place in enumerate(places) if place is not None and place.where == "output"]
    yield from _root(story, turns[outputs[-1]])
    yield from _agent(story["agent"], turns[outputs[0]])
    written = _written_results(turns, places, outputs[-1])
    for t, (turn, place) in enumerate(zip(turns, places, strict=True)):
        if place is not None:  # None: after the last output, a turns_after_last_output loss already
            yield from _turn(turn, place, f"/turns/{t}")
            yield from _observation(turn, t, written, after=t == outputs[-1])


def unwritten_losses() -> ListedLosses:
    """The count of ``unwritten`` in the loss report, fed one document at a time (``add``; the writer does not
    hold its documents) and reported once (``report``): one ``report_loss`` per kind for all of them (a file of
    many documents logs one line per kind outside ``collect_losses``), with the first pointer and the session it
    is in.

    >>> from pchronicle_datasets.losses import collect_losses
    >>> turns = [{"id": 1, "src": "user", "msg": "hi", "ts": 1}, {"id": 2, "src": "agent", "msg": "hello"}]
    >>> listed = unwritten_losses()
    >>> for story in [{"session": s, "agent": {"id": "a"}, "turns": turns} for s in ("a", "b")]:
    ...     listed.add(story)
    >>> with collect_losses() as report:
    ...     listed.report()
    >>> report.summary()
    '1 kind of loss: not in openai-msg: /turns/*/ts 2 (first at /turns/0/ts)'
    """
    return ListedLosses(unwritten)


def _places(turns: list[dict[str, Any]]) -> list[_Place | None] | None:
    """Each turn's ``_Place`` (None after the last output), or None when no turn is an output.

    The synthesized writer puts every turn that is no output in the history of the next row; reading the rows
    back, the first row's system/user/assistant messages before its last user message give RFC-0009's context
    turns (ids ``1…k``), each row's last new user message its request turn (id ``k + 2·step - 1``) and its
    output the response turn (``k + 2·step``); any other message (a developer one, a second new user…) is a
    turn of its own with an id after every derived one, in document order (``turns.RowTurns``, ``MORE``)."""
    outputs = [t for t, turn in enumerate(turns) if is_output(turn)]
    if not outputs:
        return None
    places: list[_Place | None] = [None] * len(turns)
    more: list[int] = []
    start = k = 0
    for step, t in enumerate(outputs, 1):
        pending = range(start, t)  # the turns written in this row's history since the previous row
        start = t + 1
        users = [p for p in pending if turns[p]["src"] == "user"]
        request = users[-1] if users else None
        context = range(0, t if request is None else request) if step == 1 else range(0)
        for p in pending:
            if p == request:
                continue
            if p in context and turns[p]["src"] != "developer":  # written as system/user/assistant
                k += 1
                places[p] = _Place("context", k, _context_kind(turns[p]), True)
            else:
                places[p] = _Place("more", None, _context_kind(turns[p]), True if p in context else None)
                more.append(p)
        ts = turns[t].get("ts")
        if request is not None:
            places[request] = _Place("request", request_id(k, step), "llm.request", ts=ts)
        msg = turns[t]["msg"]  # a response without calls gets those its text spells (turns.marker_calls)
        calls = turns[t].get("tool_calls") or (type(msg) is str and marker_calls(msg))
        kind = "autonomous" if calls else "llm.response"
        places[t] = _Place("output", response_id(k, step), kind, ts=ts)
    first = first_more_id(k, len(outputs))  # the synthesized rows' step_ids are 1…n
    for n, p in enumerate(more):
        place = places[p]
        places[p] = _Place(place.where, first + n, place.kind, place.copied)
    return places


def _context_kind(turn: dict[str, Any]) -> str:
    role = _ROLE.get(turn["src"], "system")
    return "autonomous" if role == "assistant" and turn.get("tool_calls") else CONTEXT_KIND[role]


def _root(story: dict[str, Any], last: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for key in story:
        if key in _ROOT_HELD:
            continue
        written = _written_metrics(last)
        if key == "final_metrics" and written and same_json(story[key], written):
            continue  # the reader makes the last output's metrics the document's final metrics
        yield f"{_NOT_IN}: /{key}", join("", key)


def _agent(agent: dict[str, Any], first: dict[str, Any]) -> Iterator[tuple[str, str]]:
    model = first.get("model") or agent.get("model")  # each row's agent_model; the reader takes the first
    for key, value in agent.items():
        if key == "id":
            continue
        if key == "name" and value == agent["id"]:
            continue  # the reader names the agent after its id
        if key == "model" and value and value == model:
            continue
        if key == "tools" and not empty(value):
            continue  # every row's tools (a value that is no list of tools comes back as residual)
        yield f"{_NOT_IN}: /agent/{key}", join("/agent", key)


def _written_metrics(turn: dict[str, Any]) -> dict[str, Any]:
    """The metrics a row holds of its output turn: RFC-0009's row and ``env_state`` metrics."""
    metrics = turn.get("metrics")
    return {k: v for k, v in metrics.items() if k in _WRITTEN_METRICS} if isinstance(metrics, dict) else {}


def _turn(turn: dict[str, Any], place: _Place, base: str) -> Iterator[tuple[str, str]]:
    output = place.where == "output"
    for key, value in turn.items():
        if _held(turn, place, key, value):
            continue
        if key == "msg":
            yield f"json in {NAME}: /turns/*/msg", f"{base}/msg"
        elif key == "metrics" and output and isinstance(value, dict) and value:
            for name in value:
                if name not in _WRITTEN_METRICS:
                    yield f"{_NOT_IN}: /turns/*/metrics/*", join(f"{base}/metrics", name)
        else:
            yield f"{_NOT_IN}: /turns/*/{key}", join(base, key)
    if turn["src"] == "agent":  # only assistant messages carry tool calls
        for c, call in enumerate(turn.get("tool_calls") or ()):
            for key in call:
                if key not in _CALL_HELD:
                    yield f"{_NOT_IN}: /turns/*/tool_calls/*/{key}", join(f"{base}/tool_calls/{c}", key)


def _held(turn: dict[str, Any], place: _Place, key: str, value: Any) -> bool:
    """Whether the value of ``turn[key]`` comes back when the rows are read (in a field or as residual)."""
    output = place.where == "output"
    if key in ("id", "kind", "copied"):
        return value == getattr(place, key)
    if key == "src":
        return value in _SRC_KEPT
    if key == "msg":  # written as content, read back as it is (a string stays a string)
        return True
    if key == "reason":
        return turn["src"] == "agent" and not turn.get("copied")
    if key == "tool_calls":
        return turn["src"] == "agent" and bool(value)  # an empty list is written as no tool_calls key
    if key == "observation":
        return True  # its results one by one: _observation
    if key == "ts":  # the row's created_at, which the reader gives its output and request turns
        return output or (place.where == "request" and same_json(value, place.ts))
    if key == "model":
        return output and bool(value)
    if key == "metrics":
        return output and isinstance(value, dict) and bool(value) and value.keys() <= _WRITTEN_METRICS
    if key in _METRIC_FIELDS:
        metric = turn.get("metrics", {}).get(_METRIC_FIELDS[key]) if isinstance(turn.get("metrics"), dict) else None
        return output and type(metric) is int and metric == value
    if key == "nllm":
        return output and value == 1
    return False  # effort, extra, prompt, finished_at, env: no row has a place for them


def _written_results(turns: list[dict[str, Any]], places: list[_Place | None], last: int) -> set[tuple[int, int]]:
    """``(turn, result)`` of each observation result the rows hold as a tool message, as ``synthesize`` writes
    them: a result answering a call of its turn or an earlier one, the first answer to it. The results of the
    last output's own calls would follow it, in no row (a ``turns_after_last_output`` loss)."""
    calls: set[str] = set()
    answered: set[str] = set()
    written: set[tuple[int, int]] = set()

    def answer(t: int, allowed: set[str]) -> None:
        for o, res in enumerate(observation_results(turns[t])):
            sid = res.get("source_call_id") if isinstance(res, dict) else None
            if isinstance(sid, str) and sid in allowed and sid not in answered:
                answered.add(sid)
                written.add((t, o))

    for t, place in enumerate(places[: last + 1]):
        own = {c["tcid"] for c in turns[t].get("tool_calls") or ()}
        if place is not None and place.where == "output":
            answer(t, calls)  # results for earlier calls are in this row's messages
            if t != last:  # results for its own calls follow its output, in the next row's (none after the last)
                answer(t, own)
        else:
            answer(t, calls | own)
        calls |= own
    return written


def _observation(turn: dict[str, Any], t: int, written: set, *, after: bool) -> Iterator[tuple[str, str]]:
    """The observation of turn ``t``: every result is a tool message of a row, or counted. ``after``: ``t`` is
    the last output, whose own results are a ``turns_after_last_output`` loss already."""
    if "observation" not in turn:
        return
    obs, base = turn["observation"], f"/turns/{t}/observation"
    if not isinstance(obs, dict) or not obs:  # only results are written, as tool messages
        yield f"{_NOT_IN}: /turns/*/observation", base
        return
    for key in obs:
        if key != "results":
            yield f"{_NOT_IN}: /turns/*/observation/{key}", join(base, key)
    if "results" in obs and (not isinstance(obs["results"], list) or not obs["results"]):
        yield f"{_NOT_IN}: /turns/*/observation/results", f"{base}/results"
        return
    own = {c["tcid"] for c in turn.get("tool_calls") or ()} if after else set()
    for o, res in enumerate(observation_results(turn)):
        where = f"{base}/results/{o}"
        if (t, o) not in written:
            sid = res.get("source_call_id") if isinstance(res, dict) else None
            if not (isinstance(sid, str) and sid in own):
                yield f"{_NOT_IN}: /turns/*/observation/results/*", where  # answers no call written before it
            continue
        for key in res:
            if key not in _RESULT_HELD:
                yield f"{_NOT_IN}: /turns/*/observation/results/*/{key}", join(where, key)
