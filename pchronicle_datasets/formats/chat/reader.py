"""Reading whole conversations: one chat record (or bare message list) → one Storyline document.

``docs/formats/chat.md`` is the mapping table; this module implements it row by row. Everything the mapping
does not consume is kept as residual under its source pointer, and the export hints in ``/meta/chat`` say
where every message sat and how it was spelled, so the writer gives the same record back.

>>> [story] = decode('{"id": "c1", "messages": [{"role": "user", "content": "hi"}]}', "a.jsonl")
>>> story["session"], story["turns"]
('c1', [{'id': 1, 'src': 'user', 'msg': 'hi'}])
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from ...errors import FormatError, PchronicleError
from ...jsonio import dumps, json_shape, json_type, short, try_loads
from ...linking import SOURCE_CALL_IDS
from ...pointer import join, parse
from ..base import Record, documents, read_records
from ..messages import SHAPES, TurnBuilder, read_message, shape_of, tools_to_openai
from ..messages.anthropic import read_system
from ..residual import ENVELOPE_KEY, Residual, origin
from .forms import CONTENT_LIKE_KEYS, ID_KEYS, REASON_KEYS, ROLE_SRC, TOOLS_KEYS, read_arguments
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
    """A message of one of the shapes the shared model knows (``formats/messages``): an OpenAI-style message
    (an object with a string ``role``), an Anthropic message, a Gemini Content, a Responses item."""
    return shape_of(value) is not None


def _messages_key(value: dict) -> str | None:
    """The key holding the conversation: ``messages`` (an array), else a ``conversations`` array that holds
    ``role`` messages and no ShareGPT ``from`` element (Harbor's exported traces), else ``contents`` of Gemini
    Content or ``input`` of Responses items (or the ``output`` of a Responses response object)."""
    if isinstance(value.get("messages"), list):
        return "messages"
    conv = value.get("conversations")
    if isinstance(conv, list) and conv and all(is_message(m) and "from" not in m for m in conv):
        return "conversations"
    # Gemini Content: an API request's contents, a chat history (Gemini CLI's eval scenarios, SDK chat
    # histories); a Responses API request's input items (at least one of its own types).
    for key in GEMINI_KEYS:
        contents = value.get(key)
        if isinstance(contents, list) and contents and all(shape_of(m) == "gemini" for m in contents):
            return key
    for key in RESPONSES_KEYS:
        items = value.get(key)
        if key == "output" and value.get("object") != "response":
            continue  # a response object's output items; any other "output" is not a conversation
        if isinstance(items, list) and items:
            shapes = [shape_of(m) for m in items]
            if "responses" in shapes and all(sh in ("responses", OPENAI) for sh in shapes):
                return key
    for key, tail in PAIRED.items():
        head, rest = value.get(key), value.get(tail)
        if isinstance(head, list) and isinstance(rest, list) and head and all(is_message(m) for m in head + rest):
            return key
    return None


def single_message(value: Any) -> str | None:
    """The pointer of the one message of a provider response that is a conversation of its own: an Anthropic
    response object (the record itself, ``""``), a Gemini ``GenerateContentResponse``
    (``/candidates/0/content``); None for anything else."""
    if not isinstance(value, dict):
        return None
    if value.get("type") == "message" and "stop_reason" in value and shape_of(value) == "anthropic":
        return ""
    candidates = value.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    if isinstance(first, dict) and shape_of(first.get("content")) == "gemini":
        return "/candidates/0/content"
    return None


def is_record(value: Any) -> bool:
    """A chat record: an object with a conversation (``_messages_key``) that is not an RFC-0009 gateway row
    (``session_id`` with ``step_id``), or a provider response of one message (``single_message``)."""
    if not isinstance(value, dict) or ("session_id" in value and "step_id" in value):
        return False
    return _messages_key(value) is not None or single_message(value) is not None


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
    >>> sniff({"messages": [], "trajectory_format": "mini-swe-agent-1.1"})  # the mini-swe-agent format's
    False
    """
    if isinstance(sample, dict):
        # A record that names its trajectory_format is a harness trajectory (mini-swe-agent): not claimed here. A
        # legacy Gemini CLI session and an opencode export hold ``messages`` too (not role messages): theirs.
        gemini = type(sample.get("sessionId")) is str and "projectHash" in sample
        # a session of Cline's SDK ({version, sessionId, updated_at, messages}): the cline format's
        cline = type(sample.get("version")) is int and type(sample.get("sessionId")) is str and "updated_at" in sample
        first = sample["messages"][0] if isinstance(sample.get("messages"), list) and sample["messages"] else None
        opencode = (
            isinstance(sample.get("info"), dict) and isinstance(first, dict) and {"info", "parts"} <= first.keys()
        )
        return (
            is_record(sample)
            and not isinstance(sample.get("trajectory_format"), str)
            and not gemini
            and not opencode
            and not cline
        )
    if isinstance(sample, list) and sample:
        if all(is_message(m) and "from" not in m for m in sample):
            # Cline's task history stamps every message with an integer ``ts`` (ms), and holds only user and
            # assistant messages (and, from some Roo Code builds, reasoning items of their own, stamped too): the
            # cline format's (its ``stamped``, ``is_reasoning_item``)
            return not (
                any(m.get("role") in ("user", "assistant") for m in sample)
                and all(
                    type(m.get("ts")) is int
                    and (m.get("role") in ("user", "assistant") or (m.get("type") == "reasoning" and "role" not in m))
                    for m in sample
                )
            )
        return is_record(sample[0])
    return False


def _placed(base: str, messages: list) -> Iterator[tuple[str, Any]]:
    """``(pointer, message)`` of each message, made as the reader gets to it (a refused message ends it)."""
    return ((f"{base}/{m}", msg) for m, msg in enumerate(messages))


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
#: The messages key → the record key of its top-level system prompt (Anthropic's request beside ``messages``,
#: Gemini's beside ``contents``, the Responses API's beside ``input``).
SYSTEM_KEYS = {"messages": "system", "contents": "systemInstruction", "input": "instructions", "output": "instructions"}
#: A conversation split in two arrays: the first key's messages, then the second's (Azure AI Evaluation's agent
#: records: ``{"query": [messages], "response": [messages], "tool_definitions": [...]}``).
PAIRED = {"query": "response"}
#: Record keys that hold Responses items: a request's input, a response object's (``"object": "response"``) output.
RESPONSES_KEYS = ("input", "output")
#: Record keys that hold a conversation when every element is a Gemini Content.
GEMINI_KEYS = ("contents", "history")
OPENAI = "openai"


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
        # The turns and call state are the shared model's builder's: a file may mix OpenAI messages (read here,
        # with this format's own hints) with the other shapes (read by formats/messages).
        self.b = TurnBuilder()
        self.turns = self.b.turns
        self.hints: dict[str, Any] = {}  # per message: how it was spelled
        self.by_id = self.b.by_id  # source call id → [(turn index, call)]
        self.answered = self.b.answered  # tcids that have a result
        self.source_ids = self.b.source_ids  # renamed call ids → the source's (/meta/source_call_ids)
        self.legacy: list[tuple[int, dict]] = []  # legacy function_call calls (turn index, call), in order
        self.shapes: dict[str, int] = {}  # messages per shape other than OpenAI's (/meta/chat/shapes)

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
            placed: Iterable[tuple[str, Any]] = _placed("", value)
        elif isinstance(value, dict) and _messages_key(value) is None and single_message(value) is not None:
            return self._finish(story, agent, hints, self._single(value, single_message(value), hints))
        elif isinstance(value, dict):
            key = _messages_key(value)
            if key is None:
                raise self.error(
                    "/messages",
                    f"a chat record needs a messages array, got {json_type(value.get('messages'))}"
                    if "messages" in value
                    else "a chat record is an object with a messages array (or a conversations array of role messages)",
                )
            placed = _placed(f"/{key}", value[key])
            keys = self._record_fields(value, key, story, agent)
            if key in PAIRED:  # the conversation goes on in the second array
                tail = value[PAIRED[key]]
                placed = itertools.chain(placed, _placed(f"/{PAIRED[key]}", tail))
                keys["tail"] = len(tail)
            hints["keys"] = keys
            system_key = SYSTEM_KEYS.get(key)
            if system_key is not None and system_key in value:
                keys["system"] = self._system(system_key, value[system_key])
        else:
            raise self.error("", f"a chat record is a JSON object or an array of messages, got {json_type(value)}")
        layout = [self._message(ptr, msg, m) for m, (ptr, msg) in enumerate(placed)]
        if isinstance(value, dict) and "response" in value and hints["keys"]["messages"] not in PAIRED:
            self._response(value["response"], hints)
        if isinstance(value, dict) and hints["keys"]["messages"] == "output":
            self._response_usage(value, hints["keys"])
        return self._finish(story, agent, hints, layout)

    def _finish(self, story: dict, agent: dict, hints: dict, layout: list) -> dict[str, Any]:
        hints["layout"] = layout
        if self.hints:
            hints["m"] = self.hints
        if self.shapes:
            hints["shapes"] = self.shapes
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
            tools, spelled = tools_to_openai(tools)
            if spelled is not None:  # Anthropic / Gemini / Responses definitions: as OpenAI function tools
                keys["tools_spelled"] = spelled
            agent["tools"] = tools
            keys["tools"] = tools_key
        model = record.get("model")
        if isinstance(model, str) and model:
            agent["id"] = agent["model"] = model
            keys["model"] = True
        consumed = {messages_key, id_key, tools_key, "model" if keys.get("model") else None, "response"}
        consumed.update((SYSTEM_KEYS.get(messages_key), PAIRED.get(messages_key)))
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

    def _single(self, value: dict, pointer: str, hints: dict) -> list:
        """A provider response of one message (``single_message``): its message is the conversation, the
        response's other keys residual (a Gemini response's ``usageMetadata``: the answer turn's metrics)."""
        hints["single"] = pointer
        if pointer == "":
            return [self._message("", value, 0)]
        layout = [self._message(pointer, value["candidates"][0]["content"], 0)]
        for key, val in value.items():
            if key == "candidates":
                for ck, cv in val[0].items():  # the first candidate's finishReason, index, safetyRatings…
                    if ck != "content":
                        self.kept.keep(join("/candidates/0", ck), cv)
                for c, cand in enumerate(val[1:], start=1):  # other candidates: kept whole
                    self.kept.keep(f"/candidates/{c}", cand)
            elif key == "usageMetadata" and isinstance(val, dict) and self.b.last_agent is not None:
                self.turns[self.b.last_agent].setdefault("metrics", val)
                hints["usage"] = ["usageMetadata", self.b.last_agent]
            else:
                self.kept.keep(join("", key), val)
        return layout

    def _response_usage(self, record: dict, keys: dict) -> None:
        """A Responses response object's ``usage`` is its answer's: the metrics of the last agent turn."""
        t = self.b.last_agent
        usage = record.get("usage")
        if isinstance(usage, dict) and t is not None and "metrics" not in self.turns[t]:
            self.turns[t]["metrics"] = usage
            self.kept.fields.pop("/usage", None)  # _record_fields kept it before the turns were made
            keys["usage"] = t

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
        shape = shape_of(msg)
        if shape is None:
            raise self.error(ptr, f"a message is an object with a string role, got {json_shape(msg)}")
        if shape in SHAPES and shape != OPENAI:
            return self._shaped(ptr, msg, where, shape)
        self.b.interrupt()
        role = msg["role"]
        if not role.strip():
            # An empty role names no one: no turn source can be made of it (it used to reach ROLE_SRC[""]).
            raise self.error(
                join(ptr, "role"),
                "a message's role is empty: name who speaks (user, assistant, system, tool…) or remove the message",
            )
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
        turn: dict[str, Any] = {"id": len(self.turns) + 1, "src": src if src is not None else ROLE_SRC[role]}
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
        if (
            "content" not in msg
            and turn.get("reason") is None
            and "tool_calls" not in turn
            and "refusal" not in consumed
        ):
            self._refuse_unread_content(ptr, msg)
        for key, val in msg.items():
            if key not in consumed:
                self.kept.keep(join(ptr, key), val)
        self.turns.append(turn)
        if role == "assistant":
            self.b.last_agent = len(self.turns) - 1
        return len(self.turns) - 1

    def _refuse_unread_content(self, ptr: str, msg: dict) -> None:
        """No silent emptiness: a message without ``content`` whose text sits under a key no shape reads is
        refused with that key's pointer, not read as an empty turn with its text kept aside."""
        key = next((k for k in msg if k in CONTENT_LIKE_KEYS and msg[k] not in (None, "", [], {})), None)
        if key is not None:
            raise self.error(
                join(ptr, key),
                f"the message has no content but a {key!r} key, which no shape read here holds: "
                "rename it to 'content' (or convert the file to a chat record) to read it",
            )

    def _shaped(self, ptr: str, msg: dict, where: int | str, shape: str) -> dict[str, Any]:
        """A message of another shape (Anthropic, Responses, Gemini, typed parts), read by the shared model;
        its layout entry is the builder's export hint."""
        m = read_message(msg, shape)
        if not m.mapped:
            empty = m.first_unread()
            if empty is not None:
                raise self.error(
                    join(ptr, *parse(empty)),
                    f"all of this {shape} message's content is of a kind no reader maps (it would be an empty turn): "
                    f"{short(m.leftovers[empty])}",
                )
        self.shapes[shape] = self.shapes.get(shape, 0) + 1
        return self.b.add(m, ptr, self.kept.keep, where)

    def _system(self, key: str, value: Any) -> Any:
        """A record's top-level system prompt (Anthropic ``system``, Gemini ``systemInstruction``, Responses
        ``instructions``): a system turn before the messages; returns its export hint."""
        m = read_system(value) if key != "systemInstruction" else read_message(value, "gemini")
        m.role = "system"
        if not m.mapped and m.first_unread() is not None:
            self.kept.keep(join("", key), value)
            return None
        return self.b.add(m, join("", key), self.kept.keep, key)

    def _tcid(self, wanted: Any, generated: str) -> tuple[str, bool]:
        """The call's tcid (the shared builder's rule: one set of ids in the document)."""
        return self.b.tcid(wanted, generated)

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
        self.b.register(len(self.turns), entry, call.get("id"))
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
        # The result is held by the latest assistant turn, the one it came after: with its call's turn when they
        # alternate, and after the last of several assistant messages whose calls it answers (linking.py shows it
        # there: the order the agent used).
        t, call = self.b.last_agent, (answered[1] if answered is not None else None)
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
            self._refuse_unread_content(ptr, msg)
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
