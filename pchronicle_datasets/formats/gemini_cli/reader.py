"""Reading a Gemini CLI session file into one Storyline document (docs/formats/gemini-cli.md).

A JSONL session is replayed as the CLI's loader replays it (``loadConversationRecord``): the metadata record, then
message records by ``id`` (a re-appended id replaces the earlier record in its place: last wins), ``$set``
patches of the metadata (``$set.messages`` replaces the whole message list) and ``$rewindTo`` records (every
message from that id on is cut; an unknown id cuts all). What the replay sets aside — earlier versions of a
message, cut messages, the control records themselves — is residual, whole, under its record's pointer, so the
same-source writer gives every line back. A legacy session is one JSON object holding ``messages``.

Pointers: a JSONL record is ``/{i}`` (``i`` the 0-based index among the non-blank lines), so a message's text is
``/3/content``; a legacy file's messages are ``/messages/{k}``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any

import orjson

from ...errors import FormatError, NoConversationError, PchronicleError
from ...linking import SOURCE_CALL_IDS
from ...schema import is_time
from ..base import Record, open_file
from ..residual import Residual, origin
from .fields import (
    AGENT_ID,
    API_ERROR_KIND,
    API_ERROR_PREFIX,
    CALL_KEYS,
    CONTEXT_KIND,
    CONTEXT_MARKERS,
    HINTS_VERSION,
    IGNORED_STARTS,
    MESSAGE_KEYS,
    META_DIRECTORIES,
    META_KIND,
    META_PROJECT,
    META_SESSION,
    META_STARTED,
    META_SUMMARY,
    META_UPDATED,
    NAME,
    SUBAGENT_REL,
    TEXT_PART_EXTRA,
    THOUGHT_KEYS,
    TOKENS,
    TOKENS_EXTRA,
    TYPES,
    Hints,
    reason_of,
    split_reason,
)

__all__ = ["is_metadata", "iter_records", "read_session"]

ENVELOPE_KEY = "_storyline"


def is_metadata(value: Any) -> bool:
    """The CLI's own test for a metadata record (``isPartialMetadataRecord``): string ``sessionId`` and
    ``projectHash``. A legacy file's root passes it too."""
    return isinstance(value, dict) and type(value.get("sessionId")) is str and type(value.get("projectHash")) is str


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON, types included (``1`` is not ``true``)."""
    return orjson.dumps(a) == orjson.dumps(b)


class _Session:
    """One file being replayed: the merged metadata, the conversation so far, and what was set aside."""

    def __init__(self, document_id: str | None) -> None:
        self.document_id = document_id
        self.kept = Residual(NAME, document_id)
        self.meta: dict[str, Any] = {}
        self.header: tuple[str, dict[str, Any]] | None = None
        # message id → (pointer, record), in the order the CLI's Map keeps them (a replaced id keeps its place)
        self.messages: dict[str, tuple[str, dict[str, Any]]] = {}
        self.legacy: list[tuple[str, dict[str, Any]]] | None = None
        self.sets: dict[str, int] = {}
        self.counts = {"superseded": 0, "rewound": 0, "replaced": 0, "echoes": 0}
        self.lines = 0

    # ------------------------------------------------------------------------------------------ replay

    def record(self, i: int, value: Any) -> None:
        """Replay record ``i`` of a JSONL session, in the CLI loader's order of tests."""
        ptr = f"/{i}"
        self.lines = i + 1
        if not isinstance(value, dict):
            self.kept.keep(ptr, value)
        elif type(value.get("$rewindTo")) is str:
            self.kept.keep(ptr, value)
            self._rewind(value["$rewindTo"])
        elif type(value.get("id")) is str:
            self._message(ptr, value)
        elif isinstance(value.get("$set"), dict):
            self._set(i, ptr, value)
        elif is_metadata(value) and self.header is None:
            self.header = (ptr, value)
            self.meta.update((k, v) for k, v in value.items() if k != "messages")
        else:
            self.kept.keep(ptr, value)  # another metadata record (a resumed legacy file's) or an unknown record
            if is_metadata(value):
                self.meta.update((k, v) for k, v in value.items() if k != "messages")

    def _message(self, ptr: str, record: dict[str, Any]) -> None:
        old = self.messages.get(record["id"])
        if old is not None:
            self.kept.keep(*old)
            self.counts["superseded"] += 1
        self.messages[record["id"]] = (ptr, record)

    def _cut(self, ids: list[str], count: str) -> None:
        for mid in ids:
            self.kept.keep(*self.messages.pop(mid))
        self.counts[count] += len(ids)

    def _rewind(self, mid: str) -> None:
        ids = list(self.messages)
        self._cut(ids[ids.index(mid) :] if mid in self.messages else ids, "rewound")

    def _set(self, i: int, ptr: str, value: dict[str, Any]) -> None:
        patch = value["$set"]
        self.meta.update((k, v) for k, v in patch.items() if k != "messages")
        messages = patch.get("messages")
        if not isinstance(messages, list):
            self.kept.keep(ptr, value)
            return
        for key, v in value.items():
            if key != "$set":
                self.kept.keep(f"{ptr}/{key}", v)
        for key, v in patch.items():
            if key != "messages":
                self.kept.keep(f"{ptr}/$set/{key}", v)
        self._cut(list(self.messages), "replaced")
        self.sets[str(i)] = len(messages)
        for k, m in enumerate(messages):
            mptr = f"{ptr}/$set/messages/{k}"
            if isinstance(m, dict) and type(m.get("id")) is str:
                self._message(mptr, m)
            else:
                self.kept.keep(mptr, m)

    def whole(self, value: dict[str, Any]) -> None:
        """A legacy session: the object is the metadata, its ``messages`` the conversation as it stands."""
        self.header = ("", value)
        self.meta.update((k, v) for k, v in value.items() if k != "messages")
        self.legacy = []
        for k, m in enumerate(value["messages"]):
            mptr = f"/messages/{k}"
            if isinstance(m, dict) and type(m.get("id")) is str:
                self.legacy.append((mptr, m))
            else:
                self.kept.keep(mptr, m)

    # ------------------------------------------------------------------------------------------ mapping

    def story(self) -> dict[str, Any]:
        if self.header is None:
            raise FormatError(
                "a Gemini CLI session starts with its metadata record (string sessionId and projectHash); "
                "this file has none",
                pointer="",
                document_id=self.document_id,
            )
        hptr, header = self.header
        session = self.meta.get(META_SESSION)
        if type(session) is not str or not session:
            raise FormatError(
                "the session's sessionId is empty", pointer=f"{hptr}/{META_SESSION}", document_id=self.document_id
            )
        story: dict[str, Any] = {
            "schema_version": "storyline/v1",
            "origin": origin(NAME, self.document_id),
            "session": session,
            "agent": {"id": AGENT_ID},
            "turns": [],
        }
        mapped = self._metadata(story)
        keys = []
        for key, v in header.items():
            if key == "messages" and self.legacy is not None:
                keys.append(key)
            elif key == ENVELOPE_KEY and self.kept.take_envelope(v):
                continue
            else:
                keys.append(key)
                if not (key in mapped and _same(v, mapped[key])):
                    self.kept.keep(f"{hptr}/{key}", v)
        hints: Hints = {"version": HINTS_VERSION, "header": [hptr, keys]}
        if self.legacy is not None:
            hints["legacy"] = True
        else:
            hints["lines"] = self.lines
        records = self.legacy if self.legacy is not None else list(self.messages.values())
        calls = _Calls()
        refs: list[list[str]] = []
        for ptr, record in records:
            turn = self._turn(len(story["turns"]) + 1, ptr, record, calls)
            if turn is not None:
                story["turns"].append(turn)
                refs.append([ptr, record["id"]])
        if not story["turns"]:
            if records:  # every message fell into residual: refused, not left out (nothing is lost silently)
                raise FormatError(
                    "no message of a type this reader knows: nothing to read as turns", document_id=self.document_id
                )
            raise NoConversationError("the session holds no message: only its header", document_id=self.document_id)
        if not any(_resumable(t) for t in story["turns"]):
            # what ``gemini --resume`` leaves behind: a new file with the header and the <session_context> the CLI
            # writes at start, under the sessionId of the session it resumes (real 0.44.1 files), which the CLI
            # itself skips (``hasResumableContent``) and deletes (``deleteCurrentSessionIfNotResumableAsync``)
            raise NoConversationError(
                "the session holds no prompt, reply or tool call: only what the CLI writes at start (its session "
                "context, notices), as a resumed session's abandoned first file",
                document_id=self.document_id,
            )
        hints["turns"] = refs
        if self.sets:
            hints["sets"] = self.sets
        if calls.raw:
            hints["raw_results"] = calls.raw
        hints.update({k: n for k, n in self.counts.items() if n})  # type: ignore[typeddict-item]
        story["meta"] = {NAME: hints}
        if calls.renamed:
            story["meta"][SOURCE_CALL_IDS] = calls.renamed
        if calls.agents:
            story["children"] = calls.agents
        parent = self._parent()
        if parent is not None:
            story["parent"] = parent
        return self.kept.finish(story)

    def _metadata(self, story: dict[str, Any]) -> dict[str, Any]:
        """Map the merged metadata; returns the values mapped, by key (a header value equal to one is not kept)."""
        meta, mapped = self.meta, {META_SESSION: self.meta[META_SESSION]}
        if is_time(meta.get(META_STARTED)):
            story["started_at"] = mapped[META_STARTED] = meta[META_STARTED]
        if is_time(meta.get(META_UPDATED)):
            story["finished_at"] = mapped[META_UPDATED] = meta[META_UPDATED]
        if type(meta.get(META_SUMMARY)) is str:
            story["notes"] = mapped[META_SUMMARY] = meta[META_SUMMARY]
        env: dict[str, Any] = {}
        if type(meta.get(META_PROJECT)) is str and meta[META_PROJECT]:
            env["id"] = mapped[META_PROJECT] = meta[META_PROJECT]
        state = {}
        for key in (META_KIND, META_DIRECTORIES):
            if key in meta and meta[key] is not None:
                state[key] = mapped[key] = meta[key]
        if state:
            env["state"] = state
        if env:
            story["task"] = {"env": env}
        return mapped

    def _parent(self) -> dict[str, Any] | None:
        """A subagent's parent: the session folder it lies in (``chats/<parentSessionId>/<sessionId>.jsonl``)."""
        if self.meta.get(META_KIND) != "subagent" or not self.document_id:
            return None
        parts = PurePosixPath(self.document_id.replace("\\", "/")).parts
        if len(parts) < 2 or parts[-2] in ("chats", "", "/", ".", ".."):
            return None
        return {"psid": parts[-2], "rel": SUBAGENT_REL}

    def _turn(self, tid: int, ptr: str, record: dict[str, Any], calls: _Calls) -> dict[str, Any] | None:
        kept = self.kept
        kind = TYPES.get(record.get("type")) if type(record.get("type")) is str else None
        if kind is None:
            kept.keep(ptr, record)  # a message type this mapping does not know: the whole record stays
            return None
        if _echoes_results(record, calls.answered):
            kept.keep(ptr, record)  # the results again, as the CLI sent them back: they are on their calls already
            self.counts["echoes"] += 1
            return None
        src, turn_kind = kind
        turn: dict[str, Any] = {"id": tid, "src": src, "msg": None}
        if turn_kind is not None:
            turn["kind"] = turn_kind
        if "content" in record:
            turn["msg"] = _content(record["content"], f"{ptr}/content", kept)
            context = _context_of(turn["msg"]) if src == "user" else None
            if context is not None:
                turn.update(copied=True, kind=CONTEXT_KIND, extra={NAME: {"context": context}})
            elif turn_kind == API_ERROR_KIND and str(turn["msg"]).startswith(API_ERROR_PREFIX):
                turn["extra"] = {NAME: {"api_error": True}}  # derived: the API failed the turn (fields)
        ts = record.get("timestamp")
        if is_time(ts):
            turn["ts"] = ts
        elif "timestamp" in record:
            kept.keep(f"{ptr}/timestamp", ts)
        if type(record.get("model")) is str:
            turn["model"] = record["model"]
        elif "model" in record:
            kept.keep(f"{ptr}/model", record["model"])
        if "thoughts" in record:
            reason = _thoughts(record["thoughts"], f"{ptr}/thoughts", kept)
            if reason is not None:
                turn["reason"] = reason
        if "tokens" in record:
            metrics = _tokens(record["tokens"])
            if metrics is None:
                kept.keep(f"{ptr}/tokens", record["tokens"])
            else:
                turn["metrics"] = metrics
        if "toolCalls" in record:
            if isinstance(record["toolCalls"], list):
                turn["tool_calls"] = calls.read(record["toolCalls"], f"{ptr}/toolCalls", kept)
            else:
                kept.keep(f"{ptr}/toolCalls", record["toolCalls"])
        for key, v in record.items():
            if key not in MESSAGE_KEYS:
                kept.keep(f"{ptr}/{key}", v)
        return turn


def _echoes_results(record: dict[str, Any], answered: set[str]) -> bool:
    """A user record whose content is only ``functionResponse`` parts of calls that hold their result already:
    the CLI records the responses it sent back to the model (Gemini CLI 0.5x-0.6x) after the call records that
    hold them, so such a record repeats what the document has (a training text would show the results twice)."""
    content = record.get("content")
    return (
        record.get("type") == "user"
        and isinstance(content, list)
        and bool(content)
        and all(
            isinstance(part, dict)
            and part.keys() == {"functionResponse"}
            and isinstance(part["functionResponse"], dict)
            and part["functionResponse"].get("id") in answered
            for part in content
        )
    )


def _text_of(msg: Any) -> str:
    """A turn's text: ``msg`` itself, or its text parts joined (the CLI's ``partListUnionToString`` of them)."""
    if isinstance(msg, str):
        return msg
    return "".join(p["text"] for p in msg or () if isinstance(p, dict) and isinstance(p.get("text"), str))


def _context_of(msg: Any) -> str | None:
    """The context name (``fields.CONTEXT_MARKERS``) of a user message the CLI writes itself, or None."""
    text = _text_of(msg).lstrip()
    return next((name for marker, name in CONTEXT_MARKERS.items() if text.startswith(marker)), None)


def _resumable(turn: dict[str, Any]) -> bool:
    """A turn the CLI counts as conversation (``isResumableMessageRecord``): a user message whose text is not
    empty, a slash command or the CLI's own context; a reply with text, tool calls or thoughts."""
    if turn["src"] == "user":
        text = _text_of(turn["msg"]).strip()
        return bool(text) and not text.startswith(IGNORED_STARTS)
    if turn["src"] == "agent":
        return bool(_text_of(turn["msg"]).strip() or turn.get("tool_calls") or turn.get("reason"))
    return False


def _content(content: Any, ptr: str, kept: Residual) -> Any:
    """``msg`` of a message's ``content``: a string as it is; a part list as OpenAI text parts, each text part in
    order (a ``{"text"}`` part, or one with a ``thoughtSignature`` too, kept residual at its pointer), every other
    part (inline data, files, function calls and responses, the model's ``thought`` parts) residual at its index.
    Anything else is residual and the message is null."""
    if type(content) is str:
        return content
    if not isinstance(content, list):
        kept.keep(ptr, content)
        return None
    parts = []
    for k, part in enumerate(content):
        if isinstance(part, dict) and type(part.get("text")) is str and part.keys() - {"text"} <= TEXT_PART_EXTRA:
            parts.append({"type": "text", "text": part["text"]})
            for key in part.keys() - {"text"}:
                kept.keep(f"{ptr}/{k}/{key}", part[key])
        else:
            kept.keep(f"{ptr}/{k}", part)
    return parts


def _thoughts(thoughts: Any, ptr: str, kept: Residual) -> str | None:
    """``reason``: the thoughts' descriptions under their subjects (``fields.reason_of``); each thought's
    ``subject`` and ``timestamp`` stay residual. Thoughts of another shape, or whose text would not split back
    exactly, stay residual whole (and there is no reason)."""
    ok = (
        isinstance(thoughts, list)
        and thoughts
        and all(
            isinstance(t, dict)
            and "description" in t
            and t.keys() <= THOUGHT_KEYS
            and all(type(v) is str for v in t.values())
            for t in thoughts
        )
    )
    if ok:
        subjects = [t.get("subject", "") for t in thoughts]
        descriptions = [t["description"] for t in thoughts]
        reason = reason_of(subjects, descriptions)
        if all("subject" in t for t in thoughts) and split_reason(reason, subjects) == descriptions:
            for k, t in enumerate(thoughts):
                for key in ("subject", "timestamp"):
                    if key in t:
                        kept.keep(f"{ptr}/{k}/{key}", t[key])
            return reason
    kept.keep(ptr, thoughts)
    return None


def _tokens(tokens: Any) -> dict[str, Any] | None:
    """``metrics`` of a message's ``tokens`` (every count an integer, no other key), else None."""
    if not (
        isinstance(tokens, dict)
        and tokens
        and tokens.keys() <= {*TOKENS, *TOKENS_EXTRA}
        and all(type(v) is int for v in tokens.values())
    ):
        return None
    metrics: dict[str, Any] = {TOKENS[k]: tokens[k] for k in TOKENS if k in tokens}
    extra = {k: tokens[k] for k in TOKENS_EXTRA if k in tokens}
    if extra:
        metrics["extra"] = extra
    return metrics


class _Calls:
    """The tool calls of a document: ids kept unique, results read, subagents named."""

    def __init__(self) -> None:
        self.used: set[str] = set()
        self.renamed: dict[str, str] = {}
        self.raw: list[str] = []
        self.agents: list[str] = []
        self.answered: set[str] = set()  # source ids of the calls whose result is mapped

    def read(self, calls: list[Any], ptr: str, kept: Residual) -> list[dict[str, Any]]:
        out = []
        for c, call in enumerate(calls):
            cptr = f"{ptr}/{c}"
            if not (
                isinstance(call, dict)
                and type(call.get("id")) is str
                and call["id"]
                and type(call.get("name")) is str
                and call["name"]
                and "args" in call
            ):
                kept.keep(cptr, call)  # not a call Storyline can hold (no id, no name, no args): kept in its place
                continue
            out.append(self._call(call, cptr, kept))
        return out

    def _call(self, call: dict[str, Any], cptr: str, kept: Residual) -> dict[str, Any]:
        tcid = call["id"]
        if tcid in self.used:
            n = 2
            while f"{tcid}#{n}" in self.used:
                n += 1
            self.renamed[f"{tcid}#{n}"] = tcid
            tcid = f"{tcid}#{n}"
        self.used.add(tcid)
        out: dict[str, Any] = {"tcid": tcid, "fn": call["name"], "args": call["args"]}
        if "result" in call:
            result = call["result"]
            response = _function_response(result, call["id"], call["name"])
            if response is not None:
                out["result"] = response
                self.answered.add(call["id"])
            elif result is None:
                kept.keep(f"{cptr}/result", None)
            else:
                out["result"] = result
                self.raw.append(tcid)
        if type(call.get("status")) is str:
            out["response"] = {"status": call["status"]}
        elif "status" in call:
            kept.keep(f"{cptr}/status", call["status"])
        agent = call.get("agentId")
        if type(agent) is str and agent and agent not in self.agents:
            self.agents.append(agent)
        for key, v in call.items():
            if key not in CALL_KEYS:
                kept.keep(f"{cptr}/{key}", v)
        return out


def _function_response(result: Any, call_id: str, name: str) -> Any:
    """The ``response`` object of a result that is exactly one ``functionResponse`` of this call (its id and
    name), which the writer wraps again; None for any other result."""
    if not (isinstance(result, list) and len(result) == 1 and isinstance(result[0], dict)):
        return None
    part = result[0]
    fr = part.get("functionResponse") if part.keys() == {"functionResponse"} else None
    if not (isinstance(fr, dict) and fr.keys() == {"id", "name", "response"}):
        return None
    if fr["id"] != call_id or fr["name"] != name or not isinstance(fr["response"], dict):
        return None
    return fr["response"]


# ------------------------------------------------------------------------------------------------ records


def read_session(data: Any, document_id: str | None = None) -> Iterator[Record]:
    """The records of one session file: one error record per line that is not JSON (the CLI skips such a line
    too: the others still make the session), then the session's document, or the error that refused it."""
    opened = open_file(data, document_id)
    if not isinstance(opened, tuple):  # a blank file (None), or one no parser reads (its error record)
        yield from () if opened is None else (opened,)
        return
    src, whole, parsed = opened
    session = _Session(document_id)
    if whole:
        if not (is_metadata(parsed) and isinstance(parsed.get("messages"), list)):
            exc = FormatError(
                "a Gemini CLI session file is JSON Lines starting with its metadata record, or one JSON object "
                "with sessionId, projectHash and messages",
                pointer="",
                document_id=document_id,
            )
            yield Record(None, src.text, error=exc, value=parsed)
            return
        session.whole(parsed)
        raw: bytes = src.text
        first: int | None = None
    else:
        raws: list[bytes] = []
        first = None
        for index, line, line_raw, value in parsed:
            if isinstance(value, FormatError):
                yield Record(line, line_raw, error=value)
                continue
            first = line if first is None else first
            raws.append(line_raw)
            session.record(index, value)
        raw = b"\n".join(raws)
    try:
        story = session.story()
    except PchronicleError as exc:
        yield Record(first, raw, error=exc.with_context(document_id=document_id, line=first))
        return
    yield Record(first, raw, story=story)


iter_records = read_session
