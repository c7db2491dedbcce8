"""Reading whole conversations: one chat record (or bare message list) → one Storyline document.

``docs/formats/chat.md`` is the mapping table; this module implements it row by row. Everything the mapping
does not consume is kept as residual under its source pointer, and the export hints in ``/meta/chat`` say
where every message sat and how it was spelled, so the writer gives the same record back.

>>> [story] = decode('{"id": "c1", "messages": [{"role": "user", "content": "hi"}]}', "a.jsonl")
>>> story["session"], story["turns"]
('c1', [{'id': 1, 'src': 'user', 'msg': 'hi'}])
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import FormatError, PchronicleError
from ...jsonio import dumps, json_type, try_loads
from ...linking import SOURCE_CALL_IDS
from ...pointer import join
from ..base import Record, documents, read_records
from ..residual import ENVELOPE_KEY, Residual, origin
from .forms import ID_KEYS, REASON_KEYS, ROLE_SRC, TOOLS_KEYS, read_arguments
from .typed_parts import read_parts

__all__ = [
    "HINTS",
    "NAME",
    "decode",
    "is_message",
    "is_record",
    "iter_records",
    "read_conversation",
    "read_line",
    "sniff",
]

NAME = "chat"
HINTS = "chat"  # the /meta key of the export hints


def is_message(value: Any) -> bool:
    """An OpenAI-style message: an object with a string ``role``."""
    return isinstance(value, dict) and isinstance(value.get("role"), str)


def _messages_key(value: dict) -> str | None:
    """The key holding the conversation: ``messages`` (an array), else a ``conversations`` array that holds
    ``role`` messages and no ShareGPT ``from`` element (Harbor's exported traces)."""
    if isinstance(value.get("messages"), list):
        return "messages"
    conv = value.get("conversations")
    if isinstance(conv, list) and conv and all(is_message(m) and "from" not in m for m in conv):
        return "conversations"
    return None


def is_record(value: Any) -> bool:
    """A chat record: an object with a conversation (``_messages_key``) that is not an RFC-0009 gateway row
    (``session_id`` with ``step_id``)."""
    if not isinstance(value, dict) or ("session_id" in value and "step_id" in value):
        return False
    return _messages_key(value) is not None


def sniff(sample: Any) -> bool:
    """Whether the parsed first record of a file is unmistakably a whole conversation: a chat record, a JSON
    array of chat records, or a non-empty array of messages (objects with ``role``, none with ShareGPT's
    ``from``/``value``).

    >>> sniff({"messages": [{"role": "user", "content": "hi"}], "tools": []})
    True
    >>> sniff({"session_id": "s", "step_id": 1, "messages": []})  # an RFC-0009 gateway row
    False
    >>> sniff({"conversations": [{"from": "human", "value": "hi"}]})  # ShareGPT
    False
    """
    if isinstance(sample, dict):
        # A legacy Gemini CLI session and an opencode export hold ``messages`` too (not role messages): theirs.
        gemini = type(sample.get("sessionId")) is str and "projectHash" in sample
        first = sample["messages"][0] if isinstance(sample.get("messages"), list) and sample["messages"] else None
        opencode = (
            isinstance(sample.get("info"), dict) and isinstance(first, dict) and {"info", "parts"} <= first.keys()
        )
        return is_record(sample) and not gemini and not opencode
    if isinstance(sample, list) and sample:
        if all(is_message(m) and "from" not in m for m in sample):
            return True
        return is_record(sample[0])
    return False


def _is_array_of_records(whole: list) -> bool:
    """A whole-file array holds records (not one bare conversation) when no element is a message and one
    element is a record; its other elements are then records refused one by one."""
    return any(is_record(v) for v in whole) and not any(is_message(v) for v in whole)


def iter_records(data: str | bytes, document_id: str | None = None) -> Iterator[Record]:
    """One Record per conversation, in file order: JSON Lines (one conversation per line), a JSON array of
    records, one record as the whole file, or a bare array of messages (one conversation)."""
    return read_records(
        data,
        document_id,
        read_line,
        lambda value, text: _whole(value, text, document_id),
    )


def _whole(whole: Any, text: bytes, document_id: str | None) -> Iterator[Record]:
    """The records of a file that is one JSON value: a JSON array of records, else one conversation."""
    if isinstance(whole, list) and (not whole or _is_array_of_records(whole)):
        for i, value in enumerate(whole):  # an empty array: no conversations
            yield _record(value, dumps(value), document_id, None, i + 1, f"/{i}")
        return
    yield _record(whole, text, document_id, None, 1, "")


def read_line(value: Any, raw: bytes, document_id: str | None, line: int, index: int) -> list[Record]:
    """The records of line ``line`` of a JSON Lines file, its ``index``-th non-blank line (0-based), already
    parsed (``value``; ``raw`` its bytes): what the file's reading loop gives for it, so a part of a split file
    is read line by line with the same result (``spark``: the Data Source's line parts).
    A record without an id is named by its place (``{file}#{index + 1}``).

    >>> [rec.story["session"] for rec in read_line([{"role": "user", "content": "hi"}], b"[...]", "c.jsonl", 7, 4)]
    ['c.jsonl#5']
    """
    return [_record(value, raw, document_id, line, index + 1, "")]


def _record(value: Any, raw: bytes, document_id: str | None, line: int | None, index: int, where: str) -> Record:
    try:
        story = _Reader(value, document_id, line, index, where).build()
    except PchronicleError as exc:
        return Record(line, raw, error=exc.with_context(document_id=document_id, line=line), value=value)
    return Record(line, raw, story=story, value=value)


#: Record keys that say whether the conversation completed: booleans, read into ``/task/result``.
RESULT_KEYS = ("completed", "partial")


def read_conversation(value: Any, *, document_id: str | None = None, session: str | None = None) -> dict[str, Any]:
    """The Storyline document of one parsed conversation (a record or a bare array of messages); raises
    ``FormatError``. ``session`` is used when the record has no id (else ``{document_id}#1``).

    >>> read_conversation([{"role": "user", "content": "hi"}], session="s1")["session"]
    's1'
    """
    return _Reader(value, document_id, None, 1, session=session).build()


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    """All Storyline documents of a chat file (one per conversation); raises the first error."""
    return documents(iter_records(data, document_id))


class _Reader:
    """One conversation → one Storyline document (``docs/formats/chat.md``)."""

    def __init__(
        self,
        value: Any,
        document_id: str | None,
        line: int | None,
        index: int,
        where: str = "",
        session: str | None = None,
    ) -> None:
        self.value = value
        self.session = session
        self.document_id = document_id
        self.line = line
        self.index = index
        self.where = where  # the record's pointer in a whole-file array, for errors only
        self.kept = Residual(NAME, document_id)
        self.turns: list[dict[str, Any]] = []
        self.hints: dict[str, Any] = {}  # per message: how it was spelled
        self.used: set[str] = set()  # tcids so far (unique in the document)
        self.by_id: dict[str, list[tuple[int, dict]]] = {}  # source call id → [(turn index, call)]
        self.answered: set[str] = set()  # tcids that have a result
        self.source_ids: dict[str, str] = {}  # renamed call ids → the source's (/meta/source_call_ids)
        self.legacy: list[tuple[int, dict]] = []  # legacy function_call calls (turn index, call), in order
        self.last_agent: int | None = None  # the index of the latest assistant turn

    def error(self, pointer: str, reason: str) -> FormatError:
        return FormatError(reason, pointer=self.where + pointer, document_id=self.document_id, line=self.line)

    def build(self) -> dict[str, Any]:
        value = self.value
        hints: dict[str, Any] = {"version": 1}
        story: dict[str, Any] = {"schema_version": "storyline/v1"}
        story["origin"] = origin(NAME, self.document_id)
        story["session"] = self.session or f"{self.document_id or NAME}#{self.index}"
        agent: dict[str, Any] = {"id": NAME}
        if isinstance(value, list):
            hints["bare"] = True
            messages, base = value, ""
        elif isinstance(value, dict):
            key = _messages_key(value)
            if key is None:
                raise self.error(
                    "/messages",
                    f"a chat record needs a messages array, got {json_type(value.get('messages'))}"
                    if "messages" in value
                    else "a chat record is an object with a messages array (or a conversations array of role messages)",
                )
            messages, base = value[key], f"/{key}"
            keys = self._record_fields(value, key, story, agent)
            hints["keys"] = keys
        else:
            raise self.error("", f"a chat record is a JSON object or an array of messages, got {json_type(value)}")
        layout = [self._message(join(base, m), msg, m) for m, msg in enumerate(messages)]
        hints["layout"] = layout
        if isinstance(value, dict) and "response" in value:
            self._response(value["response"], hints)
        if self.hints:
            hints["m"] = self.hints
        agent["name"] = agent["id"]
        story["agent"] = agent
        story["turns"] = self.turns
        story["meta"] = {HINTS: hints}
        if self.source_ids:
            story["meta"][SOURCE_CALL_IDS] = self.source_ids
        try:
            return self.kept.finish(story)
        except PchronicleError as exc:
            raise self.error("", f"the conversation gives no valid Storyline: {exc.reason} at {exc.pointer}") from None

    # ------------------------------------------------------------------------------------- record fields

    def _record_fields(self, record: dict, messages_key: str, story: dict, agent: dict) -> dict[str, Any]:
        """Map the record's keys beside the messages; returns the export hint of what was consumed."""
        keys: dict[str, Any] = {"messages": messages_key}
        id_key = next((k for k in ID_KEYS if isinstance(record.get(k), str) and record[k]), None)
        if id_key is not None:
            story["session"] = record[id_key]
            keys["id"] = id_key
        tools_key = next((k for k in TOOLS_KEYS if record.get(k) is not None), None)
        if tools_key is not None:
            tools = record[tools_key]
            ok, listed = try_loads(tools) if isinstance(tools, str) else (False, None)
            if ok and isinstance(listed, list):
                # tools as a JSON string (LLaMA-Factory, TRL): the schemas, and the exact string as residual
                self.kept.keep(join("", tools_key), tools)
                tools = listed
            agent["tools"] = tools
            keys["tools"] = tools_key
        model = record.get("model")
        if isinstance(model, str) and model:
            agent["id"] = agent["model"] = model
            keys["model"] = True
        consumed = {messages_key, id_key, tools_key, "model" if keys.get("model") else None, "response"}
        # Whether the conversation completed, as agents that log role/content conversations write it (the
        # ShareGPT reader's rule): the writers sort and label trajectories by /task/result.
        result = {k: record[k] for k in RESULT_KEYS if isinstance(record.get(k), bool)}
        if result:
            story["task"] = {"result": result}
            keys["result"] = list(result)
            consumed.update(result)
        for key, val in record.items():
            if key in consumed:
                continue
            if key == ENVELOPE_KEY and self.kept.take_envelope(val):
                keys["carried"] = True  # other formats' residual, carried by one of our writers
            else:
                self.kept.keep(join("", key), val)
        return keys

    def _response(self, response: Any, hints: dict) -> None:
        """A Chat Completions response: ``choices[0].message`` is the conversation's last assistant turn; the
        rest of the response (id, usage, finish_reason, other choices…) is residual under its pointer."""
        choices = response.get("choices") if isinstance(response, dict) else None
        first = choices[0] if isinstance(choices, list) and choices else None
        message = first.get("message") if isinstance(first, dict) else None
        if not (is_message(message) and message["role"] == "assistant"):
            self.kept.keep("/response", response)
            return
        for key, val in response.items():
            if key != "choices":
                self.kept.keep(join("/response", key), val)
        for c, choice in enumerate(choices[1:], start=1):
            self.kept.keep(f"/response/choices/{c}", choice)
        for key, val in first.items():
            if key != "message":
                self.kept.keep(join("/response/choices/0", key), val)
        hints["response"] = self._message("/response/choices/0/message", message, "response")

    # ------------------------------------------------------------------------------------------ messages

    def _message(self, ptr: str, msg: Any, where: int | str) -> Any:
        """Map one message; returns its layout entry: a turn index, ``[turn index, result index]`` for a tool
        result, or None when the message is kept whole as residual."""
        if not is_message(msg):
            raise self.error(ptr, f"a message is an object with a string role, got {json_type(msg)}")
        role = msg["role"]
        if role in ROLE_SRC:
            return self._turn(ptr, msg, where)
        if role in ("tool", "function"):
            return self._result(ptr, msg, where)
        # A role of its own (ipython, environment…): a turn of that source, never a residual-only message.
        return self._turn(ptr, msg, where, src=role)

    def _hint(self, where: int | str, key: str, value: Any) -> None:
        self.hints.setdefault(str(where), {})[key] = value

    def _turn(self, ptr: str, msg: dict, where: int | str, src: str | None = None) -> int:
        role = msg["role"]
        turn: dict[str, Any] = {"id": len(self.turns) + 1, "src": src or ROLE_SRC[role]}
        consumed = {"role", "content"}
        parts = read_parts(msg.get("content"))
        if parts is not None:
            # LLaMA-Factory's typed parts: their text, reasoning and calls; the content comes back from the residual
            self.kept.keep(join(ptr, "content"), msg["content"])
            turn["msg"] = parts[0]
        elif "content" in msg:
            turn["msg"] = msg["content"]
        else:
            turn["msg"] = None
            self._hint(where, "content", "absent")
        if parts is not None and role == "assistant" and (parts[1] is not None or parts[2]):
            if parts[1] is not None:
                turn["reason"] = parts[1]
                self._hint(where, "reason", "parts")  # not a message key: the writer writes none
            calls = [
                {"tcid": self._tcid(None, f"call-{where}-p{c}")[0], "fn": name, "args": args}
                for c, (name, args) in enumerate(parts[2])
            ]
            if calls:
                turn["tool_calls"] = calls
                self.legacy.extend((len(self.turns), call) for call in calls)
        elif role == "assistant":
            refusal = msg.get("refusal")
            if isinstance(refusal, str) and refusal and turn["msg"] in (None, ""):
                # RFC-0009's rule: a refusal is the message when there is no content.
                form = "absent" if "content" not in msg else ("null" if msg["content"] is None else "empty")
                self._hint(where, "content", form)
                self._hint(where, "refusal", True)
                turn["msg"] = refusal
                consumed.add("refusal")
            reason_key = next((k for k in REASON_KEYS if isinstance(msg.get(k), str)), None)
            if reason_key is not None:
                turn["reason"] = msg[reason_key]
                consumed.add(reason_key)
                if reason_key != "reasoning_content":
                    self._hint(where, "reason", reason_key)
            calls: list[dict[str, Any]] = []
            if isinstance(msg.get("tool_calls"), list):
                consumed.add("tool_calls")
                self._hint(
                    where,
                    "a",
                    [
                        self._call(join(ptr, "tool_calls", c), call, where, c, calls)
                        for c, call in enumerate(msg["tool_calls"])
                    ],
                )
            fc = msg.get("function_call")
            if isinstance(fc, dict) and isinstance(fc.get("name"), str) and fc["name"]:
                consumed.add("function_call")
                self._hint(where, "fc", self._legacy_call(join(ptr, "function_call"), fc, where, calls))
            if calls:
                turn["tool_calls"] = calls
        for key, val in msg.items():
            if key not in consumed:
                self.kept.keep(join(ptr, key), val)
        self.turns.append(turn)
        if role == "assistant":
            self.last_agent = len(self.turns) - 1
        return len(self.turns) - 1

    def _tcid(self, wanted: Any, generated: str) -> tuple[str, bool]:
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

    def _arguments(self, ptr: str, fn: dict) -> tuple[Any, str]:
        if "arguments" not in fn:
            return {}, "-"
        args, form = read_arguments(fn["arguments"])
        if form == "x":
            self.kept.keep(join(ptr, "arguments"), fn["arguments"])  # the exact string, besides its value
        return args, form

    def _call(self, ptr: str, call: Any, where: int | str, c: int, calls: list) -> str | None:
        """Map one ``tool_calls`` entry; returns its hint (argument form + ``g`` for a generated id + ``n`` for a
        missing ``type``), or None when the entry is kept whole (not a call with a function name)."""
        fn = call.get("function") if isinstance(call, dict) else None
        if not (isinstance(fn, dict) and isinstance(fn.get("name"), str) and fn["name"]):
            self.kept.keep(ptr, call)
            return None
        args, form = self._arguments(join(ptr, "function"), fn)
        tcid, generated = self._tcid(call.get("id"), f"call-{where}-{c}")
        hint = form
        if generated:
            hint += "g"
            if "id" in call:
                self.kept.keep(join(ptr, "id"), call["id"])
        if "type" not in call:
            hint += "n"
        for key, val in call.items():
            if key not in ("id", "function", "type") or (key == "type" and val != "function"):
                self.kept.keep(join(ptr, key), val)
        for key, val in fn.items():
            if key not in ("name", "arguments"):
                self.kept.keep(join(ptr, "function", key), val)
        entry = {"tcid": tcid, "fn": fn["name"], "args": args}
        calls.append(entry)
        if isinstance(call.get("id"), str):
            self.by_id.setdefault(call["id"], []).append((len(self.turns), entry))
        return hint

    def _legacy_call(self, ptr: str, fc: dict, where: int | str, calls: list) -> str:
        """The legacy ``function_call`` (no id): a call with a generated tcid, answered by a later
        ``role: "function"`` message."""
        args, form = self._arguments(ptr, fc)
        tcid, _ = self._tcid(None, f"call-{where}-fc")
        for key, val in fc.items():
            if key not in ("name", "arguments"):
                self.kept.keep(join(ptr, key), val)
        entry = {"tcid": tcid, "fn": fc["name"], "args": args}
        calls.append(entry)
        self.legacy.append((len(self.turns), entry))
        return form

    def _answers(self, msg: dict) -> tuple[int, dict] | None:
        """The call a tool or function message answers: by ``tool_call_id`` (the first unanswered call with
        that source id, else the latest), or for ``role: "function"`` the latest unanswered legacy call of
        that name (else the latest unanswered legacy call)."""
        if msg["role"] == "tool":
            found = self.by_id.get(msg.get("tool_call_id")) if isinstance(msg.get("tool_call_id"), str) else None
            if not found:
                return None
            return next((tc for tc in found if tc[1]["tcid"] not in self.answered), found[-1])
        open_calls = [tc for tc in self.legacy if tc[1]["tcid"] not in self.answered]
        named = [tc for tc in open_calls if tc[1]["fn"] == msg.get("name")]
        return (named or open_calls or [None])[-1]

    def _result(self, ptr: str, msg: dict, where: int | str) -> Any:
        answered = self._answers(msg)
        t, call = answered if answered is not None else (self.last_agent, None)
        if t is None:
            return self._turn(ptr, msg, where, src="tool")  # a result before any assistant message: its own turn
        consumed = {"role", "content"}
        result: dict[str, Any] = {}
        parts = read_parts(msg.get("content"))
        if parts is not None and not parts[2] and parts[1] is None:
            self.kept.keep(join(ptr, "content"), msg["content"])  # typed text parts: their text, exact as residual
            result["content"] = parts[0]
        elif "content" in msg:
            result["content"] = msg["content"]
        else:
            self._hint(where, "content", "absent")
        if msg["role"] == "function":
            self._hint(where, "role", "function")
        cid = msg.get("tool_call_id")
        if call is not None:
            result["source_call_id"] = call["tcid"]
            self.answered.add(call["tcid"])
            if msg["role"] == "tool":
                consumed.add("tool_call_id")
                if cid != call["tcid"]:
                    self.kept.keep(join(ptr, "tool_call_id"), cid)  # the call was renamed: its source id
            if msg.get("name") == call["fn"]:
                consumed.add("name")
                self._hint(where, "name", True)
        elif msg["role"] == "tool" and isinstance(cid, str):
            result["source_call_id"] = cid  # answers no call: kept as a result without a call
            consumed.add("tool_call_id")
        for key, val in msg.items():
            if key not in consumed:
                self.kept.keep(join(ptr, key), val)
        results = self.turns[t].setdefault("observation", {"results": []})["results"]
        results.append(result)
        return [t, len(results) - 1]
