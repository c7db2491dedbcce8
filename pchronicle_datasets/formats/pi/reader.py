"""One Pi session (its parsed lines) → one Storyline document (the table in docs/formats/pi.md).

Every line is planned (``/meta/pi/lines``): the turn or call it became, or kept whole as residual under ``/{i}``.

>>> lines = [{"type": "session", "id": "s1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"},
...     {"type": "message", "timestamp": "2026-01-01T00:00:01Z", "message": {"role": "user", "content": "hi"}},
...     {"type": "message", "timestamp": "2026-01-01T00:00:02Z", "message": {"role": "assistant", "content": [
...         {"type": "toolCall", "id": "c1", "name": "ls", "arguments": {}}]}}]
>>> story = read_session(lines, "s.jsonl")
>>> [t["src"] for t in story["turns"]], story["meta"]["pi"]["unanswered_calls"]
(['user', 'agent'], 1)
"""

from __future__ import annotations

from typing import Any

from ...errors import FormatError, NoConversationError, PchronicleError
from ...linking import SOURCE_CALL_IDS
from ...pointer import join
from ...schema import is_time
from ..base import INTERRUPTED
from ..moments import ms_of
from ..residual import Residual, origin
from .fields import (
    AGENT_ID,
    CONTEXT_FORK,
    CUSTOM_MESSAGE,
    EXTRA,
    HINTS,
    NAME,
    PARENT_KEYS,
    REL_FORK,
    ROLES,
    SELF_PROVIDER,
    STOP_ABORTED,
    STOP_ERROR,
    SUMMARIES,
    USAGE,
    USAGE_EXTRA,
)

__all__ = ["is_header", "read_session", "single_text"]


def is_header(value: Any) -> bool:
    """Whether a parsed line is a Pi session header.

    >>> is_header({"type": "session", "id": "x", "timestamp": "t"}), is_header({"type": "session"})
    (True, False)
    """
    return (
        isinstance(value, dict)
        and value.get("type") == "session"
        and isinstance(value.get("id"), str)
        and isinstance(value.get("timestamp"), str)
        and "payload" not in value
    )


def single_text(content: Any) -> Any:
    """A string, or the text of a content list that is one plain text block; else the content as it is.

    >>> single_text([{"type": "text", "text": "hi"}]), single_text("hi"), single_text([])
    ('hi', 'hi', [])
    """
    if (
        isinstance(content, list)
        and len(content) == 1
        and isinstance(content[0], dict)
        and set(content[0]) == {"type", "text"}
        and content[0]["type"] == "text"
        and isinstance(content[0]["text"], str)
    ):
        return content[0]["text"]
    return content


def _form(message: dict) -> str | None:
    """How a message holds its content: ``"s"`` a string, ``"l"`` anything else, None absent (for the writer)."""
    if "content" not in message:
        return None
    return "s" if isinstance(message["content"], str) else "l"


def _metrics(usage: Any) -> dict[str, Any] | None:
    if not isinstance(usage, dict):
        return None
    metrics: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in usage.items():
        if key in USAGE:
            metrics[USAGE[key]] = value
        elif key in USAGE_EXTRA:
            extra[USAGE_EXTRA[key]] = value
        elif key == "cost" and isinstance(value, dict):
            if isinstance(value.get("total"), (int, float)) and not isinstance(value.get("total"), bool):
                metrics["cost_usd"] = value["total"]
            extra["cost"] = value
        else:
            extra[key] = value
    if extra:
        metrics["extra"] = extra
    return metrics


def _chain(items: list[tuple[int, Any]]) -> set[int] | None:
    """The line numbers on the chain from the last entry with an ``id`` to the root (None: a linear v1 file)."""
    ids = {
        v["id"]: n
        for n, v in items
        if isinstance(v, dict) and isinstance(v.get("id"), str) and v.get("type") != "session"
    }
    if not ids:
        return None
    parents = {n: v.get("parentId") for n, v in items if isinstance(v, dict) and isinstance(v.get("id"), str)}
    leaf = max(ids.values())
    chain: set[int] = set()
    at: int | None = leaf
    while at is not None and at not in chain:
        chain.add(at)
        parent = parents.get(at)
        at = ids.get(parent) if isinstance(parent, str) else None
    return chain


def parent_session(path: Any) -> str | None:
    r"""The session id in the file path a header's ``parentSession``/``branchedFrom`` names: the part of the file's
    name after its last ``_`` (Pi: ``<timestamp>_<id>.jsonl``; OpenClaw: ``<id>.jsonl``, the whole name).

    >>> parent_session("/h/.pi/agent/sessions/--w--/2025-12-09T00-52-54-397Z_d97339c6-6c10.jsonl")
    'd97339c6-6c10'
    >>> parent_session("C:\\oc\\sessions\\2db7f8ba-f951.jsonl"), parent_session(""), parent_session(3)
    ('2db7f8ba-f951', None, None)
    """
    if not isinstance(path, str):
        return None
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    name = name[: -len(".jsonl")] if name.endswith(".jsonl") else name
    return name.rsplit("_", 1)[-1] or None


def _own_from(items: list[tuple[int, Any]]) -> int:
    """The index of a branched session's first own entry: the first entry stamped at or after its header (the
    entries before it are the parent's, copied with their own times: fields.CONTEXT_FORK). 1 (nothing copied) when
    the header's time or every entry's is unreadable."""
    start = ms_of(items[0][1].get("timestamp"))
    if start is None:
        return 1
    for i, (_, value) in enumerate(items[1:], 1):
        at = ms_of(value.get("timestamp")) if isinstance(value, dict) else None
        if at is not None and at >= start:
            return i
    return len(items)


def _answered(turn: dict[str, Any]) -> bool:
    """An agent turn with a model that is no message OpenClaw wrote itself (``fields.SELF_PROVIDER``)."""
    return isinstance(turn.get("model"), str) and "context" not in (turn.get("extra") or {}).get(EXTRA, {})


class _Reader:
    def __init__(self, document_id: str | None) -> None:
        self.document_id = document_id
        self.kept = Residual(NAME, document_id)
        self.turns: list[dict[str, Any]] = []
        self.plan: list[list[Any]] = []
        self.calls: dict[str, tuple[int, int]] = {}
        self.answered: set[tuple[int, int]] = set()
        self.tcids: set[str] = set()
        self.renamed: dict[str, str] = {}
        self.effort: Any = None
        self.story: dict[str, Any] = {"schema_version": "storyline/v1", "origin": origin(NAME, document_id)}
        self.agent: dict[str, Any] = {"id": AGENT_ID}
        self.line: int | None = None
        self.interrupted = 0  # assistant messages the user stopped (fields.STOP_ABORTED)
        self.parent: str | None = None  # the session this one was branched or forked from (fields.PARENT_KEYS)
        self.own_from = 0  # entries before this index were copied from the parent (fields.CONTEXT_FORK)
        self.copied: list[int] = []  # the turns they gave

    def error(self, pointer: str, reason: str) -> FormatError:
        return FormatError(reason, pointer=pointer, document_id=self.document_id, line=self.line)

    def keep_line(self, i: int, value: Any) -> None:
        self.kept.keep(f"/{i}", value)
        self.plan.append(["k"])

    def keep_rest(self, base: str, obj: dict, used: tuple[str, ...]) -> None:
        for key, value in obj.items():
            if key not in used:
                self.kept.keep(join(base, key), value)

    def read(self, items: list[tuple[int, Any]]) -> dict[str, Any]:
        chain = _chain(items)
        abandoned = 0
        for i, (line, value) in enumerate(items):
            self.line = line
            if i == 0 and is_header(value):
                self.header(value)
                if self.parent is not None:
                    self.own_from = _own_from(items)
            elif (
                chain is not None
                and line not in chain
                and not (isinstance(value, dict) and value.get("type") == "session")
            ):
                abandoned += 1
                self.keep_line(i, value)
            else:
                self.entry(i, value)
        return self.finish(abandoned, chain is not None)

    def header(self, value: dict) -> None:
        for key, v in value.items():
            if key == "id" and v:
                self.story["session"] = v
                continue
            if key == "timestamp" and is_time(v):
                self.story["started_at"] = v
                continue
            if key == "type":
                continue
            self.kept.keep(join("/0", key), v)
        version = value.get("version")
        self.story["origin"]["schema_version"] = f"pi/v{version}" if type(version) is int else "pi/v1"
        if isinstance(value.get("modelId"), str):
            self.agent["model"] = value["modelId"]
        if value.get("thinkingLevel") is not None:
            self.effort = value["thinkingLevel"]
        self.parent = next((p for p in map(parent_session, map(value.get, PARENT_KEYS)) if p), None)
        self.plan.append(["h"])

    def new_turn(self, i: int, entry: dict, src: str, msg: Any) -> int:
        turn: dict[str, Any] = {"id": len(self.turns) + 1, "src": src, "msg": msg}
        ts = entry.get("timestamp")
        if isinstance(ts, str) and is_time(ts):
            turn["ts"] = ts
        elif "timestamp" in entry:
            self.kept.keep(f"/{i}/timestamp", ts)
        self.turns.append(turn)
        if i < self.own_from:
            self.copied.append(len(self.turns) - 1)
        return len(self.turns) - 1

    def entry(self, i: int, entry: Any) -> None:
        if not isinstance(entry, dict):
            return self.keep_line(i, entry)
        kind = entry.get("type")
        if kind == "thinking_level_change":
            self.effort = entry.get("thinkingLevel")
            return self.keep_line(i, entry)
        if isinstance(kind, str) and kind in SUMMARIES and isinstance(entry.get(SUMMARIES[kind]), str):
            t = self.new_turn(i, entry, "system", entry[SUMMARIES[kind]])
            rest = {k: v for k, v in entry.items() if k not in ("type", "timestamp", "id", "parentId", SUMMARIES[kind])}
            self.turns[t].update(kind="context", extra={kind: rest})
            self.keep_rest(f"/{i}", entry, ("type", "timestamp", SUMMARIES[kind], *rest))
            self.plan.append(["s", t, kind])
            return None
        if kind == CUSTOM_MESSAGE:  # the model saw it: the same context turn as a custom message's
            t = self.custom(i, entry, entry)
            self.keep_rest(f"/{i}", entry, ("type", "timestamp", "content", *self.custom_keys(t)))
            self.plan.append(["m", t, _form(entry)])
            return None
        message = entry.get("message")
        # a list or object role is unhashable: only a string one is looked up
        role = message.get("role") if kind == "message" and isinstance(message, dict) else None
        role = ROLES.get(role) if isinstance(role, str) else None
        if role is None:
            return self.keep_line(i, entry)
        self.keep_rest(f"/{i}", entry, ("type", "timestamp", "message"))
        base = f"/{i}/message"
        if role == "user":
            content = message.get("content", "")
            t = self.new_turn(i, entry, "user", single_text(content))
            layout = self.media(t, content, base) if isinstance(content, list) and len(content) > 1 else None
            self.keep_rest(base, message, ("role", "content"))
            self.plan.append(["u", t, _form(message), layout])
        elif role == "assistant":
            self.assistant(i, entry, message, base)
        elif role == "toolResult":
            self.result(i, entry, message, base)
        elif role == "bashExecution":
            command, output = message.get("command"), message.get("output")
            text = f"$ {command}\n{output}" if isinstance(command, str) and isinstance(output, str) else ""
            t = self.new_turn(i, entry, "user", text)
            self.turns[t].update(
                kind="context", extra={"bash_execution": {k: v for k, v in message.items() if k != "role"}}
            )
            self.plan.append(["b", t])
        else:  # custom / hookMessage
            t = self.custom(i, entry, message)
            self.keep_rest(base, message, ("role", "content", *self.custom_keys(t)))
            self.plan.append(["c", t, message["role"], _form(message)])
        return None

    def custom(self, i: int, entry: dict, holder: dict) -> int:
        """The context turn of an extension's message to the model (``holder``: a ``custom`` message, or a
        ``custom_message`` entry itself): ``msg`` its content, ``extra.custom_type`` its ``customType``."""
        t = self.new_turn(i, entry, "user", single_text(holder.get("content", "")))
        self.turns[t]["kind"] = "context"
        if isinstance(holder.get("customType"), str):
            self.turns[t]["extra"] = {"custom_type": holder["customType"]}
        return t

    def custom_keys(self, t: int) -> tuple[str, ...]:
        return ("customType",) if "extra" in self.turns[t] else ()

    def media(self, t: int, content: list, base: str) -> list[str] | None:
        """A user message of several blocks: its text blocks are ``msg`` (one: its text), its images
        ``extra.media`` (by reference, as written: never flattened into the text), anything else residual; the
        layout (``t`` text, ``m`` media, ``k`` kept) lets the writer put the blocks back in order. None when the
        blocks are all text (``msg`` is then the list as it is)."""
        if all(isinstance(b, dict) and b.get("type") == "text" for b in content):
            return None
        turn = self.turns[t]
        texts: list[Any] = []
        layout: list[str] = []
        for j, block in enumerate(content):
            btype = block.get("type") if isinstance(block, dict) else None
            if btype == "text" and isinstance(block.get("text"), str) and set(block) == {"type", "text"}:
                texts.append(block["text"])
                layout.append("t")
            elif btype == "image":
                turn.setdefault("extra", {}).setdefault("media", []).append(block)
                layout.append("m")
            else:
                self.kept.keep(join(base, "content", j), block)
                layout.append("k")
        turn["msg"] = texts[0] if len(texts) == 1 else [{"type": "text", "text": x} for x in texts] if texts else ""
        return layout

    def assistant(self, i: int, entry: dict, message: dict, base: str) -> None:
        content = message.get("content")
        blocks = content if isinstance(content, list) else []
        texts: list[str] = []
        thinking: list[str] = []
        calls: list[dict[str, Any]] = []
        layout: list[str] = []
        t = self.new_turn(i, entry, "agent", "")
        for j, block in enumerate(blocks):
            at = join(base, "content", j)
            btype = block.get("type") if isinstance(block, dict) else None
            if btype == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
                self.keep_rest(at, block, ("type", "text"))
                layout.append("t")
            elif btype == "thinking" and isinstance(block.get("thinking"), str):
                thinking.append(block["thinking"])
                self.keep_rest(at, block, ("type", "thinking"))
                layout.append("h")
            elif btype == "toolCall" and isinstance(block.get("id"), str) and block["id"]:
                source_id = block["id"]
                tcid = source_id if source_id not in self.tcids else f"{source_id}#{i}.{j}"
                if tcid != source_id:
                    self.renamed[tcid] = source_id
                self.tcids.add(tcid)
                name = block.get("name")
                call = {
                    "tcid": tcid,
                    "fn": name if isinstance(name, str) and name else "unknown",
                    "args": block.get("arguments"),
                }
                self.calls[source_id] = (t, len(calls))
                calls.append(call)
                used = (
                    "type",
                    "id",
                    *(("name",) if call["fn"] == name else ()),
                    *(("arguments",) if "arguments" in block else ()),
                )
                self.keep_rest(at, block, used)
                layout.append("c" + ("n" if call["fn"] == name else "") + ("a" if "arguments" in block else ""))
            else:
                self.kept.keep(at, block)
                layout.append("k")
        turn = self.turns[t]
        if len(texts) == 1:
            turn["msg"] = texts[0]
        elif texts:
            turn["msg"] = [{"type": "text", "text": x} for x in texts]
        if thinking:
            turn["reason"] = "\n\n".join(thinking)
            if len(thinking) > 1:  # each block's own text, for the writer
                k = 0
                for j, kind in enumerate(layout):
                    if kind == "h":
                        self.kept.keep(join(base, "content", j, "thinking"), thinking[k])
                        k += 1
        if calls:
            turn["tool_calls"] = calls
        if isinstance(message.get("model"), str):
            turn["model"] = message["model"]
        if self.effort is not None:
            turn["effort"] = self.effort
        metrics = _metrics(message.get("usage"))
        if metrics is not None:
            turn["metrics"] = metrics
        self.no_answer(turn, message)
        used = ("role", "content", *(("model",) if "model" in turn else ()))
        self.keep_rest(
            base, message, used if isinstance(content, list) else ("role", "model") if "model" in turn else ("role",)
        )
        self.plan.append(["a", t, layout if isinstance(content, list) else None])

    def no_answer(self, turn: dict[str, Any], message: dict) -> None:
        """Mark an agent turn no model answered with (``fields.EXTRA``): a failed provider call, the user's stop, a
        message OpenClaw wrote itself. The source keys stay residual (derived values)."""
        stop = message.get("stopReason")
        if stop == STOP_ERROR:
            error = message.get("errorMessage")
            turn.setdefault("extra", {})[EXTRA] = {"api_error": error if isinstance(error, str) and error else True}
        elif stop == STOP_ABORTED:
            self.interrupted += 1
        if message.get("provider") == SELF_PROVIDER:
            model = message.get("model")
            turn["copied"] = True
            turn["kind"] = "context"
            said = turn.setdefault("extra", {}).setdefault(EXTRA, {})
            said["context"] = model if isinstance(model, str) and model else SELF_PROVIDER

    def result(self, i: int, entry: dict, message: dict, base: str) -> None:
        source_id = message.get("toolCallId")
        where = self.calls.get(source_id) if isinstance(source_id, str) else None
        if where is not None and where not in self.answered and "content" in message:
            self.answered.add(where)
            call = self.turns[where[0]]["tool_calls"][where[1]]
            call["result"] = single_text(message["content"])
            if message.get("isError") is True:
                call["response"] = {"status": "error"}
            if "timestamp" in entry:
                self.kept.keep(f"/{i}/timestamp", entry["timestamp"])
            self.keep_rest(base, message, ("role", "toolCallId", "content"))
            self.plan.append(["r", where[0], where[1], _form(message)])
            return
        t = self.new_turn(i, entry, "tool", "")
        result: dict[str, Any] = {"content": single_text(message.get("content", ""))}
        if isinstance(source_id, str):
            result["source_call_id"] = source_id
        self.turns[t]["observation"] = {"results": [result]}
        self.keep_rest(base, message, ("role", "content", *(("toolCallId",) if isinstance(source_id, str) else ())))
        self.plan.append(["o", t, _form(message)])

    def fork(self) -> None:
        """A branched or forked session: ``/parent`` names the parent, and the turns of the entries copied from it
        are context turns (``copied``: never trained, left out by ``drop_copied``); a turn already context keeps
        its own reason. Derived: the header key and the entries stay as they are (the writer needs nothing)."""
        if self.parent is None:
            return
        self.story["parent"] = {"psid": self.parent, "rel": REL_FORK}
        for t in self.copied:
            turn = self.turns[t]
            turn["copied"] = True
            turn.setdefault("kind", "context")
            turn.setdefault("extra", {}).setdefault(EXTRA, {}).setdefault("context", CONTEXT_FORK)

    def finish(self, abandoned: int, tree: bool) -> dict[str, Any]:
        story = self.story
        if "session" not in story:
            if not self.document_id:
                raise self.error("/0", "the session has no header id and no file name to name it")
            story["session"] = self.document_id
        if "model" not in self.agent:  # a v2/v3 header names no model: the first agent turn's, not OpenClaw's own
            model = next((t["model"] for t in self.turns if t["src"] == "agent" and _answered(t)), None)
            if model is not None:
                self.agent["model"] = model
        story["agent"] = self.agent
        story["turns"] = self.turns
        self.fork()
        if not self.turns:
            raise NoConversationError(
                "the Pi session holds no message or summary: only its header", document_id=self.document_id
            )
        unanswered = [
            call["tcid"]
            for t, turn in enumerate(self.turns)
            for k, call in enumerate(turn.get("tool_calls") or ())
            if (t, k) not in self.answered
        ]
        hints: dict[str, Any] = {"version": 1, "lines": self.plan, "tree": tree, "unanswered_calls": len(unanswered)}
        if unanswered:
            hints["unanswered"] = unanswered
        if abandoned:
            hints["abandoned"] = abandoned
        if self.interrupted:
            hints[INTERRUPTED] = self.interrupted
        meta: dict[str, Any] = {HINTS: hints}
        if self.renamed:
            meta[SOURCE_CALL_IDS] = self.renamed
        story["meta"] = meta
        try:
            return self.kept.finish(story)
        except PchronicleError as exc:
            raise self.error(exc.pointer or "", f"the Pi session gives no valid Storyline: {exc.reason}") from None


def read_session(lines: list[Any], document_id: str | None = None, numbers: list[int] | None = None) -> dict:
    """The Storyline document of a Pi session's parsed lines (``numbers``: their 1-based line numbers)."""
    numbers = numbers or list(range(1, len(lines) + 1))
    return _Reader(document_id).read(list(zip(numbers, lines, strict=True)))
