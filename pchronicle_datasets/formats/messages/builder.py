"""Neutral messages → Storyline turns, and back: the one place where shapes meet Storyline.

``TurnBuilder.add(message, pointer, keep)`` places one ``Message`` (its source pointer ``pointer``):

- its text pieces, joined, are a turn's ``msg`` (``""`` when there are none); its reasoning texts, joined by a
  newline, are ``reason``; signatures and encrypted payloads go to the turn's ``extra.reasoning`` (one object
  per piece that has them: ``{"signature"}``, ``{"encrypted_content"}``); media parts to ``extra.media`` as
  written; usage to ``metrics``;
- its calls are ``tool_calls`` (``tcid`` the source id when it is a non-empty string not used yet in the
  document, else ``call-{where}-{c}``; ``args`` the arguments, a JSON string decoded as RFC-0009 does — a
  custom tool's raw input stays the string; a ``kind`` other than ``function`` is the call's ``kind``);
- its results are ``observation.results`` entries (``content``, ``source_call_id``, ``is_error``) on the turn of
  the call they answer: by id (the first unanswered call with that id), else — the shape has no id, as Gemini —
  the first unanswered call of that name; a result that answers no call is kept on the latest agent turn
  (with its id, if it had one), or is a turn of source ``tool`` when no agent turn came before;
- a message that ``continues`` (Responses items) joins the previous turn when that one was made by a
  continuing message with nothing in between; a message of results only makes no turn.

Each leftover is given to ``keep(pointer, value)`` (the reader's residual). ``add`` returns the export hint of
the message: ``{"s": shape, "k": skeleton, "v": [[source pointer, Storyline pointer, spec…]]}``;
``write_message(story, hint)`` gives the source message back from it (``docs/formats/messages.md``).

>>> from .anthropic import read
>>> b = TurnBuilder()
>>> kept = {}
>>> h1 = b.add(read({"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]}),
...            "/messages/0", kept.__setitem__)
>>> h2 = b.add(read({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]}),
...            "/messages/1", kept.__setitem__)
>>> b.turns
[{'id': 1, 'src': 'agent', 'msg': '', 'tool_calls': [{'tcid': 't1', 'fn': 'ls', 'args': {}}], \
'observation': {'results': [{'content': 'a', 'source_call_id': 't1'}]}}]
>>> write_message({"turns": b.turns}, h2)
{'role': 'user', 'content': [{'type': 'tool_result', 'tool_use_id': 't1', 'content': 'a'}]}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...pointer import get, join, parse
from .model import Message, rebuild
from .openai_chat import read_arguments, write_arguments

__all__ = ["ROLE_SRC", "TurnBuilder", "write_message"]

#: Neutral roles → turn ``src`` (any other role is its own source).
ROLE_SRC = {"system": "system", "developer": "developer", "user": "user", "assistant": "agent", "tool": "tool"}


class TurnBuilder:
    """The turns of one document, built message by message (shared with the ``chat`` reader's own messages:
    the call ids, the calls by id and the latest agent turn are one state)."""

    def __init__(self) -> None:
        self.turns: list[dict[str, Any]] = []
        self.used: set[str] = set()  # tcids so far (unique in the document)
        self.by_id: dict[str, list[tuple[int, dict]]] = {}  # source call id → [(turn index, call)]
        self.in_order: list[tuple[int, dict]] = []  # every call, for results linked by name and order
        self.answered: set[str] = set()  # tcids that have a result
        self.source_ids: dict[str, str] = {}  # renamed call ids → the source's (/meta/source_call_ids)
        self.last_agent: int | None = None  # the index of the latest agent turn
        self._continuing: int | None = None  # the turn a continuing message joins

    def tcid(self, wanted: Any, generated: str) -> tuple[str, bool]:
        """The call's tcid: its own id when a non-empty string not used yet in the document, else a generated
        one; and whether it was generated."""
        if isinstance(wanted, str) and wanted and wanted not in self.used:
            self.used.add(wanted)
            return wanted, False
        tcid, n = generated, 1
        while tcid in self.used:
            n += 1
            tcid = f"{generated}-{n}"
        self.used.add(tcid)
        if isinstance(wanted, str) and wanted:
            self.source_ids[tcid] = wanted  # a reused id: training outputs show the one the source wrote
        return tcid, True

    def register(self, t: int, call: dict, source_id: Any) -> None:
        """Record a call of turn ``t`` for the results that follow."""
        if isinstance(source_id, str):
            self.by_id.setdefault(source_id, []).append((t, call))
        self.in_order.append((t, call))

    def interrupt(self) -> None:
        """A message the builder did not place (the ``chat`` reader's own) came in between."""
        self._continuing = None

    def answers(self, call_id: Any, name: Any) -> tuple[int, dict] | None:
        """The call a result answers: by id (the first unanswered call with it, else the latest), else by name
        (the first unanswered call of that name)."""
        if isinstance(call_id, str):
            found = self.by_id.get(call_id)
            if not found:
                return None
            return next((tc for tc in found if tc[1]["tcid"] not in self.answered), found[-1])
        if isinstance(name, str):
            return next(
                (tc for tc in self.in_order if tc[1]["fn"] == name and tc[1]["tcid"] not in self.answered), None
            )
        return None

    # ---------------------------------------------------------------------------------------------- add

    def add(self, m: Message, pointer: str, keep: Callable[[str, Any], None], where: int | str = "") -> dict:
        """Place message ``m`` (source pointer ``pointer``; ``where`` names it in generated call ids, its
        index by default); returns its export hint."""
        where = where if where != "" else pointer.rsplit("/", 1)[-1]
        for rel, value in m.leftovers.items():
            keep(join(pointer, *_tokens(rel)), value)
        values: list[list[Any]] = []
        slot_of: dict[tuple, str] = {}
        spec: dict[tuple, list] = {}
        for o, res in enumerate(m.results):
            self._result(m, o, res, slot_of, spec, pointer, keep)
        needs_turn = bool(m.texts or m.reasoning or m.calls or m.media or m.usage is not None) or not m.results
        if needs_turn:
            self._turn(m, slot_of, spec, pointer, keep, where)
        else:
            self._continuing = None
        for rel, address in m.slots:
            if address[0] == "const":
                values.append([rel, None, address[1]])
            elif address in slot_of:
                values.append([rel, slot_of[address], *spec.get(address, [])])
            else:  # a value with no Storyline place (a renamed call's id): residual
                keep(join(pointer, *_tokens(rel)), _value_of(m, address))
        return {"s": m.shape, "k": m.skeleton, "v": values}

    def _result(self, m, o, res, slot_of, spec, pointer, keep) -> None:
        found = self.answers(res.call_id, res.name)
        if found is None and self.last_agent is None:
            # a result before any agent turn: a turn of its own (its content is the turn's text)
            turn = {"id": len(self.turns) + 1, "src": "tool", "msg": res.content}
            self.turns.append(turn)
            slot_of[("results", o, "content")] = f"/turns/{len(self.turns) - 1}/msg"
            return
        t, call = found if found is not None else (self.last_agent, None)
        results = self.turns[t].setdefault("observation", {"results": []})["results"]
        base = f"/turns/{t}/observation/results/{len(results)}"
        entry: dict[str, Any] = {"content": res.content}
        slot_of[("results", o, "content")] = join(base, "content")
        if call is not None:
            entry["source_call_id"] = call["tcid"]
            self.answered.add(call["tcid"])
            if res.call_id == call["tcid"]:
                slot_of[("results", o, "call_id")] = join(base, "source_call_id")
            if res.name == call["fn"]:
                slot_of[("results", o, "name")] = self._call_pointer(t, call, "fn")
        elif isinstance(res.call_id, str):
            entry["source_call_id"] = res.call_id
            slot_of[("results", o, "call_id")] = join(base, "source_call_id")
        if res.is_error is not None:
            entry["is_error"] = res.is_error
            slot_of[("results", o, "is_error")] = join(base, "is_error")
        results.append(entry)

    def _call_pointer(self, t: int, call: dict, key: str) -> str:
        c = next(i for i, x in enumerate(self.turns[t]["tool_calls"]) if x is call)
        return f"/turns/{t}/tool_calls/{c}/{key}"

    def _turn(self, m, slot_of, spec, pointer, keep, where) -> None:
        src = ROLE_SRC.get(m.role, m.role)
        if m.continues and self._continuing is not None and self.turns[self._continuing]["src"] == src:
            t = self._continuing
            turn = self.turns[t]
        else:
            t = len(self.turns)
            turn = {"id": t + 1, "src": src, "msg": ""}
            self.turns.append(turn)
        self._continuing = t if m.continues else None
        base = f"/turns/{t}"
        for i, text in enumerate(m.texts):
            start = len(turn["msg"])
            turn["msg"] += text
            slot_of[("texts", i)] = join(base, "msg")
            spec[("texts", i)] = [start, start + len(text)]
        for r, piece in enumerate(m.reasoning):
            if piece.text is not None:
                prior = turn.get("reason")
                start = 0 if prior is None else len(prior) + 1
                turn["reason"] = piece.text if prior is None else prior + "\n" + piece.text
                slot_of[("reasoning", r, "text")] = join(base, "reason")
                spec[("reasoning", r, "text")] = [start, start + len(piece.text)]
            opaque = {}
            if piece.signature is not None:
                opaque["signature"] = piece.signature
            if piece.encrypted is not None:
                opaque["encrypted_content"] = piece.encrypted
            if opaque:
                kept = turn.setdefault("extra", {}).setdefault("reasoning", [])
                for key, name in (("signature", "signature"), ("encrypted", "encrypted_content")):
                    if name in opaque:
                        slot_of[("reasoning", r, key)] = join(base, "extra", "reasoning", len(kept), name)
                kept.append(opaque)
        for c, call in enumerate(m.calls):
            calls = turn.setdefault("tool_calls", [])
            tcid, generated = self.tcid(call.id, f"call-{where}-{c}")
            args, form = call.arguments, None
            if call.kind == "function":
                # a JSON string is decoded, as RFC-0009 does (its spelling kept in the hint); an object stays
                args, form = read_arguments(call.arguments)
            entry: dict[str, Any] = {"tcid": tcid, "fn": call.name, "args": args}
            if call.kind != "function":
                entry["kind"] = call.kind
            cbase = join(base, "tool_calls", len(calls))
            slot_of[("calls", c, "name")] = join(cbase, "fn")
            if form != "x":  # a spelling no encoder gives: the exact string is residual (add keeps it)
                slot_of[("calls", c, "arguments")] = join(cbase, "args")
                if form is not None:
                    spec[("calls", c, "arguments")] = [form]
            if not generated:
                slot_of[("calls", c, "id")] = join(cbase, "tcid")
            calls.append(entry)
            self.register(t, entry, call.id)
        for k, part in enumerate(m.media):
            media = turn.setdefault("extra", {}).setdefault("media", [])
            slot_of[("media", k)] = join(base, "extra", "media", len(media))
            media.append(part)
        if m.usage is not None:
            if isinstance(m.usage, dict) and "metrics" not in turn:
                turn["metrics"] = m.usage
                slot_of[("usage",)] = join(base, "metrics")
            # else: kept as residual by add (no slot)
        if src == "agent":
            self.last_agent = t


def _tokens(rel: str) -> list[str]:
    return parse(rel)


def _value_of(m: Message, address: tuple) -> Any:
    kind = address[0]
    if kind == "texts":
        return m.texts[address[1]]
    if kind == "media":
        return m.media[address[1]]
    if kind == "usage":
        return m.usage
    item = getattr(m, kind)[address[1]]
    key = address[2]
    if kind == "calls" and key == "arguments":
        return item.arguments
    if kind == "reasoning" and key == "encrypted":
        return item.encrypted
    return getattr(item, key)


def write_message(story: dict[str, Any], hint: dict[str, Any]) -> Any:
    """The source message of an export hint ``add`` gave, from the document's values (residual not included:
    the caller puts it back at its pointers)."""
    values = []
    for entry in hint["v"]:
        rel, target, *rest = entry
        if target is None:
            values.append((rel, rest[0]))
            continue
        value = get(story, target)
        if len(rest) == 2:
            value = value[rest[0] : rest[1]]
        elif len(rest) == 1:
            value = write_arguments(value, rest[0])
        values.append((rel, value))
    return rebuild(hint["k"], values)
