"""A source record as a pointer map: what the research-agent readers (``swe-agent``, ``mini-swe-agent``,
``openhands``, ``role-text``) keep so that their same-source writers give the record back as equal JSON.

A reader walks its source record and, for each value, either maps it to a Storyline pointer
(``Layout.map``: the value must come back exactly from the document, through an optional named inverse
transform, or it is kept as residual instead) or keeps it as residual under its source pointer
(``Layout.keep``). Several source values may map to one Storyline value (the duplicates research agents
write: OpenHands' ``message`` beside ``args.content``, SWE-agent's ``trajectory`` beside ``history``), so
nothing is written twice in the document and nothing is lost. The map goes to ``/meta/<format>`` as the
export hints (``hints``); ``rebuild`` gives the source record back from the residual and the map.

>>> lay = Layout("demo", "f.json", {"role": {"agent": "assistant"}})
>>> story = {"turns": [{"id": 1, "src": "agent", "msg": "hi"}]}
>>> lay.map("/m/0/role", "assistant", "/turns/0/src", "agent", "role"), lay.map("/m/0/text", "hi", "/turns/0/msg", "hi")
(True, True)
>>> lay.keep("/m/0/mask", True)
>>> story["meta"] = {"demo": lay.hints("object")}
>>> rebuild(story, lay.kept.fields, {"role": {"agent": "assistant"}}, "demo")
{'m': [{'mask': True, 'role': 'assistant', 'text': 'hi'}]}
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from ..jsonio import try_loads
from ..losses import report_loss
from ..pointer import get, join, normalize, parse
from .residual import ENVELOPE_KEY, Residual, source_fields

__all__ = ["ARGUMENT_SPELLINGS", "Layout", "LayoutError", "rebuild", "report_unwritten", "same", "walkable"]

#: How tools spell tool-call arguments as JSON text: the writer's inverse transforms, tried in this order.
ARGUMENT_SPELLINGS = {
    "json": lambda v: json.dumps(v),  # Python's default (", ", ": ", ASCII): litellm, OpenHands
    "json_compact": lambda v: orjson.dumps(v).decode(),  # compact UTF-8: OpenAI's API, SWE-agent
    "json_utf8": lambda v: json.dumps(v, ensure_ascii=False),
}

_COMPACT = ARGUMENT_SPELLINGS["json_compact"]

#: The inverse of a call id the reader renamed because the document already had it (``{id}#{n}``, the rule of
#: the session-log readers): the source id back.
ID_TRANSFORMS = {"renamed_id": lambda tcid: tcid.rsplit("#", 1)[0]}
HINTS_VERSION = 1


class LayoutError(ValueError):
    """The document no longer fits its source layout (it was edited): write it from its Storyline fields."""


def _inverse(tables: Mapping[str, Any], name: str | None, value: Any) -> Any:
    if name is None:
        return value
    table = tables[name]
    if callable(table):
        return table(value)
    if not isinstance(value, str) or value not in table:
        raise LayoutError(f"no {name} for {value!r}")
    return table[value]


class Layout:
    """What one reader keeps of one source record: its residual and its pointer map."""

    def __init__(self, fmt: str, document_id: str | None, inverse: Mapping[str, Any] | None = None) -> None:
        self.fmt = fmt
        self.kept = Residual(fmt, document_id)
        self.inverse = {**ARGUMENT_SPELLINGS, **ID_TRANSFORMS, **(inverse or {})}
        self.entries: list[list[str]] = []

    def keep(self, pointer: str, value: Any) -> None:
        """Keep a source value as residual under its source pointer."""
        self.kept.keep(pointer, value)

    def map(self, source: str, value: Any, target: str, mapped: Any, transform: str | None = None) -> bool:
        """Map the source value at ``source`` to the Storyline value ``mapped`` at ``target`` when the inverse
        ``transform`` gives the source value back exactly (same JSON type too); else keep it as residual.
        Returns whether it was mapped."""
        try:
            back = _inverse(self.inverse, transform, mapped)
        except (LayoutError, TypeError, ValueError):
            back = _MISSING
        if back is not _MISSING and same(back, value):
            self.entries.append([source, target] if transform is None else [source, target, transform])
            return True
        self.keep(source, value)
        return False

    def rest(self, obj: dict[str, Any], base: str, used: set[str] | tuple[str, ...]) -> None:
        """Keep every key of ``obj`` (at ``base``) that the reader did not use; an empty object is kept whole
        (``rebuild`` makes containers only for the values inside them)."""
        if not obj:
            self.keep(base, obj)
        for key, value in obj.items():
            if key not in used:
                self.keep(join(base, key), value)

    def keep_record(self, ptr: str, rec: Any) -> None:
        """A whole record as residual (its ``_storyline`` envelope, from a document of another format, taken)."""
        if isinstance(rec, dict) and ENVELOPE_KEY in rec and self.kept.take_envelope(rec[ENVELOPE_KEY]):
            self.rest(rec, ptr, (ENVELOPE_KEY,))
        else:
            self.keep(ptr, rec)

    def record_rest(self, ptr: str, rec: dict[str, Any], used: tuple[str, ...]) -> None:
        """``rest`` of a record, its ``_storyline`` envelope (a document of another format written here) taken."""
        for key, value in rec.items():
            if key in used:
                continue
            if key == ENVELOPE_KEY and self.kept.take_envelope(value):
                continue
            self.keep(join(ptr, key), value)

    def record_keys(
        self, record: Mapping[str, Any] | None, table: Mapping[str, tuple[str, type]], story: dict[str, Any], skip=()
    ) -> None:
        """The keys of a record around the conversation (an evaluation record's ``instance_id``, ``metrics``):
        ``table`` maps a key to a top-level Storyline field and the JSON type it must have; a value of another type,
        an empty one and every other key (but ``skip``, read by the caller) stay residual."""
        for key, val in (record or {}).items():
            if key in skip:
                continue
            target, kind = table.get(key, (None, None))
            if target is not None and isinstance(val, kind) and val:
                story[target[1:]] = val
                self.map(f"/{key}", val, target, val)
            else:
                self.keep(join("", key), val)

    def map_arguments(self, source: str, value: Any, target: str) -> Any:
        """A call's arguments: a JSON string is decoded (mapped when one of ``ARGUMENT_SPELLINGS`` spells it
        back exactly, else also kept as residual, so the exact text survives); any other value is mapped as it
        is. Returns the Storyline ``args``."""
        if not isinstance(value, str):
            self.map(source, value, target, value)
            return value
        ok, parsed = try_loads(value)
        if not ok:
            self.map(source, value, target, value)
            return value
        if type(parsed) is dict and parsed:
            # An object with keys: "json" writes ": " after each and compact text never does, so when the compact
            # spelling gives the text back it is the first that does (json.dumps is the slowest to try).
            try:
                compact = same(_COMPACT(parsed), value)
            except (TypeError, orjson.JSONEncodeError):
                compact = False
            if compact:
                self.map(source, value, target, parsed, "json_compact")
                return parsed
        for name in ARGUMENT_SPELLINGS:
            if same(ARGUMENT_SPELLINGS[name](parsed), value):
                self.map(source, value, target, parsed, name)
                return parsed
        self.keep(source, value)
        return parsed

    def result_message(self, ptr: str, msg: dict[str, Any], turn: dict[str, Any], t: int, tcid: str, rule: str) -> str:
        """The message at ``ptr`` as the result of the call ``tcid`` of turn ``t`` (appended to ``turn``'s
        observation): its ``content`` the result's, its ``role`` given back by the inverse rule ``rule`` (the role
        a same-source writer writes: ``tool``, or ``user`` for the text protocol's shown output). Returns the
        result's pointer; the caller maps or keeps the message's other keys."""
        results = turn.setdefault("observation", {"results": []})["results"]
        at = f"/turns/{t}/observation/results/{len(results)}"
        result: dict[str, Any] = {}
        if "content" in msg:
            result["content"] = msg["content"]
            self.map(f"{ptr}/content", msg["content"], f"{at}/content", msg["content"])
        result["source_call_id"] = tcid
        self.map(f"{ptr}/role", msg["role"], f"{at}/source_call_id", tcid, rule)
        results.append(result)
        return at

    def openai_call(self, ptr: str, call: Any, target: str, used_ids: set[str]) -> dict[str, Any] | None:
        """One OpenAI ``tool_calls`` entry (``{"id", "type": "function", "function": {"name", "arguments"}}``)
        at ``ptr`` as the Storyline call at ``target``, or None (kept whole as residual) when it has no function
        name or no string id. An id the document already has (agents reuse them: SWE-agent's own demonstration
        trajectories do) becomes ``{id}#{n}``, as the session-log readers rename them; the source id comes back
        through the ``renamed_id`` transform. (The shared message model, formats/messages/, is the future home
        of this rule.)"""
        fn = call.get("function") if isinstance(call, dict) else None
        cid = call.get("id") if isinstance(call, dict) else None
        if not (walkable(call) and walkable(fn) and isinstance(fn.get("name"), str) and fn["name"]):
            self.keep(ptr, call)
            return None
        if not (isinstance(cid, str) and cid):
            self.keep(ptr, call)
            return None
        tcid, n = cid, 2
        while tcid in used_ids:
            tcid, n = f"{cid}#{n}", n + 1
        used_ids.add(tcid)
        entry: dict[str, Any] = {"tcid": tcid, "fn": fn["name"], "args": {}}
        # The keys here need no escaping: pointers by f-string (join escapes each token, a call's third of it).
        self.map(f"{ptr}/id", cid, f"{target}/tcid", tcid, None if tcid == cid else "renamed_id")
        self.map(f"{ptr}/function/name", fn["name"], f"{target}/fn", fn["name"])
        if "arguments" in fn:
            entry["args"] = self.map_arguments(f"{ptr}/function/arguments", fn["arguments"], f"{target}/args")
        self.rest(call, ptr, ("id", "function"))
        self.rest(fn, f"{ptr}/function", ("name", "arguments"))
        return entry

    def info(
        self,
        info: dict[str, Any],
        story: dict[str, Any],
        task: dict[str, Any],
        results: Mapping[str, str],
        stats: str,
        version: str | None = None,
    ) -> None:
        """A SWE-agent-style ``info`` object (``/info``): the keys of ``results`` (non-empty strings) go to
        ``/task/result/<name>``, ``stats`` to ``/final_metrics``, ``version`` (a string) to ``/agent/ver``; the
        rest, and an empty ``info``, stay residual. SWE-agent and mini-SWE-agent write the same object."""
        if not info:
            self.keep("/info", info)
        for key, val in info.items():
            ptr = f"/info/{key}"
            if key in results and isinstance(val, str) and val:
                task.setdefault("result", {})[results[key]] = val
                self.map(ptr, val, f"/task/result/{results[key]}", val)
            elif key == stats:
                story["final_metrics"] = val
                self.map(ptr, val, "/final_metrics", val)
            elif version is not None and key == version and isinstance(val, str):
                story["agent"]["ver"] = val
                self.map(ptr, val, "/agent/ver", val)
            else:
                self.keep(ptr, val)

    def hints(self, root: str) -> dict[str, Any]:
        """``/meta/<format>``: the map, and whether the record is an ``"object"`` or an ``"array"``."""
        return {"version": HINTS_VERSION, "root": root, "map": self.entries}


_MISSING = object()


def openai_messages(
    story: Mapping[str, Any], src_role: Mapping[str, str], result_id: Callable[[str], dict[str, Any]]
) -> list[dict[str, Any]]:
    """A document's turns as OpenAI-style messages (what SWE-agent's ``history`` and mini-SWE-agent's
    ``messages`` hold): each turn a message of its role (``src_role``, else the src itself) with its calls
    (arguments as JSON text), then a ``tool`` message per result, linked by ``result_id(call id)`` (the keys each
    format spells the link with)."""
    messages: list[dict[str, Any]] = []
    for turn in story["turns"]:
        msg: dict[str, Any] = {"role": src_role.get(turn["src"], turn["src"]), "content": turn["msg"]}
        calls = turn.get("tool_calls") or []
        if calls:
            msg["tool_calls"] = [
                {"id": c["tcid"], "type": "function", "function": {"name": c["fn"], "arguments": _arguments(c["args"])}}
                for c in calls
            ]
        messages.append(msg)
        obs = turn.get("observation")
        results = obs.get("results") if isinstance(obs, dict) else None
        for result in results if isinstance(results, list) else ():
            if isinstance(result, dict):
                out: dict[str, Any] = {"role": "tool", "content": result.get("content")}
                if isinstance(result.get("source_call_id"), str):
                    out.update(result_id(result["source_call_id"]))
                messages.append(out)
    return messages


def _arguments(args: Any) -> str:
    return args if isinstance(args, str) else orjson.dumps(args).decode()


def same(a: Any, b: Any) -> bool:
    """Equal as JSON values, types included (``1 == 1.0 == True`` in Python, not in JSON)."""
    if a is b and type(a) is not float:
        return True  # a reader maps most values as they are: one object, no walk (a float may be NaN, not itself)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def walkable(value: Any) -> bool:
    """Whether a reader may map values inside ``value`` one by one: an object none of whose keys looks like
    an array index (``rebuild`` would take it for an array), or any array. Else it is kept whole.

    >>> walkable({"a": 1}), walkable({"0": 1}), walkable([1])
    (True, False, True)
    """
    if isinstance(value, list):
        return True
    if not isinstance(value, dict):
        return False
    try:
        return not any(map(str.isdigit, value))  # keys of parsed JSON are strings: one C loop
    except TypeError:  # a key that is no string (a document built in Python): as it always was
        return not any(k.isdigit() for k in value)


def _order(pointer: str) -> tuple:
    return tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in parse(pointer))


def source_records(story: Mapping[str, Any], fmt: str, inverse: Mapping[str, Any]) -> list[Any] | None:
    """The records (lines) of a JSON Lines file ``fmt`` read as one document, given back from its layout
    (``rebuild``), or None for a document of another format or one edited since (the writer then writes it from its
    fields)."""
    if (story.get("origin") or {}).get("format") != fmt:
        return None
    try:
        root = rebuild(story, (source_fields(story, fmt) or {}).get("fields") or {}, inverse, fmt)
    except LayoutError:
        return None
    if isinstance(root, dict) and all(k.isdigit() for k in root):
        return [root[k] for k in sorted(root, key=int)]
    return None


def rebuild(story: Mapping[str, Any], fields: Mapping[str, Any], inverse: Mapping[str, Any], fmt: str) -> Any:
    """The source record of a document read by ``fmt``: its residual ``fields`` and the values its hints map
    (``/meta/<fmt>``). ``LayoutError`` when the document does not fit them any more (an edited document)."""
    hints = (story.get("meta") or {}).get(fmt) if isinstance(story.get("meta"), dict) else None
    if not (isinstance(hints, dict) and hints.get("version") == HINTS_VERSION and isinstance(hints.get("map"), list)):
        raise LayoutError(f"no {fmt} layout hints")
    inverse = {**ARGUMENT_SPELLINGS, **ID_TRANSFORMS, **inverse}
    values: list[tuple[str, Any]] = list(fields.items())
    for entry in hints["map"]:
        if not (isinstance(entry, list) and 2 <= len(entry) <= 3 and all(isinstance(e, str) for e in entry)):
            raise LayoutError("a layout entry is [source, target, transform?]")
        try:
            value = get(story, entry[1])
        except KeyError:
            raise LayoutError(f"the document has no {entry[1]}") from None
        try:
            values.append((entry[0], _inverse(inverse, entry[2] if len(entry) == 3 else None, value)))
        except (KeyError, TypeError, ValueError) as exc:
            raise LayoutError(str(exc)) from None
    root: Any = [] if hints.get("root") == "array" else {}
    try:
        for pointer, value in sorted(values, key=lambda pv: _order(pv[0])):
            _put(root, parse(pointer), value)
    except (ValueError, IndexError, TypeError) as exc:
        raise LayoutError(f"the residual does not fit the layout: {exc}") from None
    return root


def _put(node: Any, tokens: list[str], value: Any) -> None:
    if not tokens:
        raise ValueError("a layout pointer names a value inside the record")
    *path, last = tokens
    for i, token in enumerate(path):
        following = path[i + 1] if i + 1 < len(path) else last
        node = _child(node, token, [] if following.isdigit() else {})
    _set(node, last, value)


def _child(node: Any, token: str, empty: Any) -> Any:
    if isinstance(node, list):
        index = int(token)
        if index == len(node):
            node.append(empty)
        return node[index]
    return node.setdefault(token, empty)


def _set(node: Any, token: str, value: Any) -> None:
    if isinstance(node, list):
        index = int(token)
        if index == len(node):
            node.append(value)
        elif index < len(node):
            node[index] = value
        else:
            raise IndexError(f"index {index} past the end")
    else:
        node[token] = value


def report_unwritten(story: Mapping[str, Any], fmt: str, written: Mapping[str, Any]) -> None:
    """Count, as ``not in <fmt>: <pointer>`` losses, every value of a document that a writer for other
    documents has no place for. ``written`` says what it writes: ``{"": root keys, "turn": turn keys,
    "call": call keys, "result": result keys}``; residual of ``fmt`` itself is never a loss (it is regenerated).
    """
    counts: dict[str, list[Any]] = {}

    def lost(pointer: str) -> None:
        entry = counts.setdefault(normalize(pointer), [pointer, 0])
        entry[1] += 1

    for key in story.get("agent") or {}:
        if key not in written.get("agent", ("id", "name")):
            lost(f"/agent/{key}")
    task = story.get("task") if isinstance(story.get("task"), dict) else {}
    for part, values in task.items():
        for key in values if isinstance(values, dict) else ("",):
            pointer = f"/task/{part}/{key}".rstrip("/")
            if pointer not in written.get("task", ()):
                lost(pointer)
    for key in story:
        if key in ("agent", "task"):
            continue
        if key not in written.get("", ()) and key not in ("schema_version", "origin", "unknown_key_counts", "meta"):
            if key == "unknown_fields":
                sources = (story[key] or {}).get("sources") or {}
                if any(name != fmt for name in sources) and "unknown_fields" not in written.get("", ()):
                    lost("/unknown_fields")
                continue
            lost(f"/{key}")
    for t, turn in enumerate(story.get("turns") or ()):
        for key in turn:
            if key not in written.get("turn", ()):
                lost(f"/turns/{t}/{key}")
        for c, call in enumerate(turn.get("tool_calls") or ()):
            for key in call:
                if key not in written.get("call", ()):
                    lost(f"/turns/{t}/tool_calls/{c}/{key}")
        obs = turn.get("observation")
        results = obs.get("results") if isinstance(obs, dict) else None
        if obs is not None and not isinstance(results, list):
            lost(f"/turns/{t}/observation")
        for o, result in enumerate(results if isinstance(results, list) else ()):  # (else counted whole, above)
            for key in result if isinstance(result, dict) else ("",):
                if key not in written.get("result", ()):
                    lost(f"/turns/{t}/observation/results/{o}/{key}".rstrip("/"))
        if isinstance(obs, dict):
            for key in obs:
                if key != "results":
                    lost(f"/turns/{t}/observation/{key}")
    for pattern, (first, count) in counts.items():
        report_loss(f"not in {fmt}: {pattern}", pointer=first, count=count)
