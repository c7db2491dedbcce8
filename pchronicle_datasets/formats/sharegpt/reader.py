"""Reading ShareGPT trajectory records into Storyline documents.

Each element the writer would not give back byte for byte keeps its exact value as residual, so
same-source export is exact (see ``writer``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import FormatError, PchronicleError
from ...jsonio import dumps, json_type, try_loads
from ...pointer import join
from ...schema import is_time
from ..base import Record, as_source, documents, parse_file
from ..markup import blocks, without
from ..residual import ENVELOPE_KEY, Residual, origin
from .hints import HINTS, NAME, make_hints
from .render import gpt_value, system_prompt, text_of, tool_value

__all__ = ["decode", "iter_records", "sniff"]


def iter_records(data: str | bytes, document_id: str | None = None) -> Iterator[Record]:
    """One Record per JSON Lines record (or per element of a JSON array of records), in file order."""
    src = as_source(data, document_id)
    if src.is_blank():
        return
    try:
        is_whole, parsed = parse_file(src, document_id)
    except FormatError as exc:
        yield Record(exc.line, src.text, error=exc)
        return
    if not is_whole:
        for index, number, raw, value in parsed:
            yield (
                Record(number, raw, error=value)
                if isinstance(value, FormatError)
                else _record(value, raw, document_id, number, index + 1)
            )
        return
    whole, data = parsed, src.text
    if isinstance(whole, list) and _array_of_records(whole, data):
        # A JSON array of records (as LLaMA-Factory ships them): each is a record of its index.
        for i, value in enumerate(whole):
            yield _record(value, dumps(value), document_id, i + 1, i + 1)
        return
    yield _record(whole, data, document_id, 1, 1)


def _array_of_records(whole: list, data: bytes) -> bool:
    """A file that is one JSON array holds records (not one bare conversation) when it spans several lines
    (a pretty-printed file of records) and has a record in it, or when every element is a record. A one-line
    array that is not all records is a bare conversation: that is how the writer writes one, so a bare
    conversation with odd elements reads back the same."""
    records = [isinstance(r, dict) and "conversations" in r for r in whole]
    if all(isinstance(r, dict) and isinstance(r.get("conversations"), list) for r in whole) and whole:
        return True
    return any(records) and b"\n" in data.strip()


def _record(value: Any, raw: bytes, document_id: str | None, line: int, index: int) -> Record:
    """``index``: the record's 1-based place among the file's records (it names the session; blank lines are
    not records, so export, which writes none, gives back the same name)."""
    try:
        story = _Reader(value, document_id, line, index).build()
    except PchronicleError as exc:
        return Record(line, raw, error=exc.with_context(document_id=document_id, line=line), value=value)
    return Record(line, raw, story=story, value=value)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    """All Storyline documents of a trajectory file (one per record); raises the first error."""
    return documents(iter_records(data, document_id))


def sniff(sample: Any) -> bool:
    """A record (or a JSON array of records) whose ``conversations`` holds ``{"from", "value"}`` turns, or a bare
    conversation: an array of such turns."""
    if isinstance(sample, list) and sample and isinstance(sample[0], dict) and "conversations" in sample[0]:
        sample = sample[0]
    if isinstance(sample, dict):
        conv = sample.get("conversations")
        if not isinstance(conv, list):
            return False
        # An empty conversation says nothing of its elements: it is ours unless the record has chat messages.
        return _is_element(conv[0]) if conv else "messages" not in sample
    return isinstance(sample, list) and bool(sample) and _is_element(sample[0])


def _is_element(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("from"), str) and "value" in value


class _Reader:
    """One record (or bare conversation) → one Storyline document."""

    def __init__(self, value: Any, document_id: str | None, line: int, index: int) -> None:
        self.value = value
        self.document_id = document_id
        self.line = line  # the physical line, for errors
        self.index = index  # the record's place among the file's records, for the session id
        self.kept = Residual(NAME, document_id)
        self.envelope = False  # the record carried our _storyline envelope
        self.keys: list[str] = []
        self.used: set[str] = set()
        self.tool_elements: list[str] = []
        self.system = "none"

    def error(self, pointer: str, reason: str) -> FormatError:
        return FormatError(reason, pointer=pointer, document_id=self.document_id, line=self.line)

    def build(self) -> dict[str, Any]:
        value = self.value
        bare = isinstance(value, list)
        if bare:
            record: dict[str, Any] = {"conversations": value}
            base = ""
        elif isinstance(value, dict):
            record = value
            base = "/conversations"
        else:
            raise self.error(
                "", f"a trajectory record is a JSON object or a conversation array, got {json_type(value)}"
            )
        conv = record.get("conversations")
        if not isinstance(conv, list):
            raise self.error(base or "", f"conversations must be an array of turns, got {json_type(conv)}")
        story: dict[str, Any] = {"schema_version": "storyline/v1"}
        story["origin"] = origin(NAME, self.document_id)
        story["session"] = f"{self.document_id or NAME}#{self.index}"
        agent: dict[str, Any] = {"id": NAME}
        turns, tools = self._turns(conv, base)
        if not bare:
            self._record_fields(record, story, agent)
        if tools is not None:
            agent["tools"] = tools
        agent["name"] = agent["id"]
        story["agent"] = agent
        story["turns"] = turns
        if self.envelope:
            self.keys.append(ENVELOPE_KEY)
        story["meta"] = {HINTS: make_hints(bare=bare, system=self.system, keys=self.keys)}
        try:
            return self.kept.finish(story)
        except PchronicleError as exc:
            raise self.error(
                base or "", f"the record gives no valid Storyline: {exc.reason} at {exc.pointer}"
            ) from None

    # ------------------------------------------------------------------------------ conversation elements

    def _turns(self, conv: list, base: str) -> tuple[list[dict], Any]:
        turns: list[dict[str, Any]] = []
        tools = None
        last_agent: dict[str, Any] | None = None
        pending: list[tuple[dict, str, str, list]] = []  # tool turns, linked once every call has its id
        self.system = "none"
        for i, element in enumerate(conv):
            ptr = f"{base}/{i}"
            if not isinstance(element, dict) or not isinstance(element.get("from"), str) or "value" not in element:
                self.kept.keep(ptr, element)  # not a {"from", "value"} turn: kept whole, in its place
                continue
            for key in element:
                if key not in ("from", "value"):
                    self.kept.keep(join(ptr, key), element[key])
            role, value = element["from"], element["value"]
            tid = len(turns) + 1
            if role == "system" and i == 0 and (parsed := self._generated_tools(value)) is not None:
                tools = parsed or None  # the generated prompt: its <tools> list goes back to /agent/tools
                self.system = "generated"
            elif role == "system":
                turns.append({"id": tid, "src": "system", "msg": value, "kind": "context"})
                self._exact(ptr, value, text_of(value))
                last_agent = None
            elif role == "human":
                turns.append({"id": tid, "src": "user", "msg": value})
                self._exact(ptr, value, text_of(value))
                last_agent = None  # a tool element after this answers nothing the writer would put here
            elif role == "gpt":
                turn = self._gpt_turn(tid, value, i)
                turns.append(turn)
                last_agent = turn
                self._exact(ptr, value, gpt_value(turn, keep_invalid_args=True))
            elif (
                role == "tool"
                and last_agent is not None
                and last_agent.get("tool_calls")
                and "observation" not in last_agent
                and isinstance(value, str)
                and (links := self._responses(last_agent, value))
            ):
                # The one tool turn the writer puts after a gpt turn with calls.
                last_agent["observation"] = {"results": []}
                pending.append((last_agent, ptr, value, links))
            else:
                self.kept.keep(ptr, element)  # a role this dialect does not know: kept whole
                last_agent = None
        self._assign_ids(turns, pending)
        return turns, tools

    def _responses(self, agent: dict[str, Any], value: str) -> list[tuple[int | None, str, Any]]:
        """``(index of the answered call, tool_call_id, content)`` for every ``<tool_response>`` block."""
        calls = agent.get("tool_calls") or []
        unmatched = list(range(len(calls)))
        out = []
        for k, (_, _, raw) in enumerate(blocks(value, "<tool_response>", "</tool_response>")):
            block = raw.strip()
            ok, payload = try_loads(block)
            if not ok or not isinstance(payload, dict):
                payload = {"content": block}
            name = payload.get("name")
            # The answered call: same position and name, else the first unanswered call of that name,
            # else the same position (the reference's rule).
            if k in unmatched and calls[k]["fn"] == name:
                pick: int | None = k
            else:
                pick = next((c for c in unmatched if calls[c]["fn"] == name), k if k in unmatched else None)
            if pick is not None:
                unmatched.remove(pick)
            cid = payload.get("tool_call_id")
            out.append((pick, cid if isinstance(cid, str) else "", payload.get("content")))
        return out

    def _assign_ids(self, turns: list[dict], pending: list) -> None:
        """Call ids from the responses that answer them (deterministic otherwise), then the results."""
        for agent, _, _, links in pending:
            calls = agent.get("tool_calls", [])
            for pick, cid, _ in links:
                if pick is not None and cid and cid not in self.used:
                    calls[pick]["tcid"] = cid
                    self.used.add(cid)
        seen: set[str] = set()
        for turn in turns:
            for call in turn.get("tool_calls") or []:
                tcid, n = call["tcid"], 1
                while tcid in seen:
                    n += 1
                    tcid = f"{call['tcid']}-{n}"
                call["tcid"] = tcid
                seen.add(tcid)
        for agent, ptr, value, links in pending:
            calls = agent.get("tool_calls") or []
            results = agent["observation"]["results"]
            triples = []
            unlinked = 0
            for pick, _cid, content in links:
                if pick is not None:
                    sid = calls[pick]["tcid"]
                    results.append({"source_call_id": sid, "content": content})
                    triples.append((sid, calls[pick]["fn"], content))
                else:
                    # It answers no call of its turn: no link (the writer then names it by position, like
                    # the reference); its own tool_call_id stays in the element's exact value.
                    results.append({"content": content})
                    name = calls[unlinked]["fn"] if unlinked < len(calls) else "unknown"
                    triples.append(("", name, content))
                    unlinked += 1
            if tool_value(triples) != value:
                self.kept.keep(f"{ptr}/value", value)
            self.tool_elements.append(ptr)

    def _exact(self, ptr: str, value: Any, regenerated: str) -> None:
        """Keep the source value as residual when the writer would not give it back byte for byte."""
        if value != regenerated:
            self.kept.keep(f"{ptr}/value", value)

    @staticmethod
    def _generated_tools(value: Any) -> Any:
        """The tools of a system prompt that is exactly the generated template, else None."""
        if not isinstance(value, str):
            return None
        start, end = value.find("\n<tools>\n"), value.rfind("\n</tools>\n")
        if start < 0 or end < start + len("\n<tools>\n"):
            return None
        ok, listed = try_loads(value[start + len("\n<tools>\n") : end])
        if not ok:
            return None
        if not isinstance(listed, list) or not all(
            isinstance(t, dict) and isinstance(t.get("name"), str) for t in listed
        ):
            return None
        tools = [
            {"type": "function", "function": {k: v for k, v in t.items() if not (k == "required" and v is None)}}
            for t in listed
        ]
        return tools if system_prompt(tools) == value else None

    def _gpt_turn(self, tid: int, value: Any, i: int) -> dict[str, Any]:
        turn: dict[str, Any] = {"id": tid, "src": "agent"}
        if not isinstance(value, str):
            turn["msg"] = value
            return turn
        thinks = blocks(value, "<think>", "</think>")
        reasons = [inner.removeprefix("\n").removesuffix("\n") for _, _, inner in thinks]
        rest = without(value, thinks)
        calls = []
        call_blocks = blocks(rest, "<tool_call>", "</tool_call>")
        for c, (_, _, raw) in enumerate(call_blocks):
            block = raw.strip()
            ok, payload = try_loads(block)
            if not ok:
                continue
            if isinstance(payload, dict) and isinstance(payload.get("name"), str) and payload["name"]:
                calls.append({"tcid": f"call-{i}-{c}", "fn": payload["name"], "args": payload.get("arguments", {})})
        if calls:
            rest = without(rest, [b for b in call_blocks if self._is_call(b[2].strip())])
        turn["msg"] = rest.strip()
        reason = "\n".join(r for r in reasons if r.strip())
        if reason:
            turn["reason"] = reason
        if calls:
            turn["tool_calls"] = calls
        return turn

    @staticmethod
    def _is_call(block: str) -> bool:
        ok, payload = try_loads(block)
        return ok and isinstance(payload, dict) and isinstance(payload.get("name"), str) and bool(payload["name"])

    # -------------------------------------------------------------------------------------- record fields

    def _record_fields(self, record: dict, story: dict, agent: dict) -> None:
        result: dict[str, Any] = {}
        metrics: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        model = record.get("model")
        meta = record.get("metadata") if isinstance(record.get("metadata"), dict) else None
        if not (isinstance(model, str) and model) and meta is not None:
            model = meta.get("model")
        if isinstance(model, str) and model:
            agent["id"] = model
            agent["model"] = model
        for key, value in record.items():
            ptr = join("", key)
            if key == "conversations":
                self.keys.append(key)
            elif key == "model" and value == agent.get("model"):
                self.keys.append(key)
            elif key == "timestamp" and isinstance(value, str) and is_time(value) and "finished_at" not in story:
                story["finished_at"] = value
                self.keys.append(key)
            elif key in ("completed", "partial") and isinstance(value, bool):
                result[key] = value
                self.keys.append(key)
            elif key == "api_calls" and type(value) is int:
                metrics[key] = value
                self.keys.append(key)
            elif key == "toolsets_used" and isinstance(value, list):
                extra[key] = value
                self.keys.append(key)
            elif key == "metadata" and meta is not None:
                self.keys.append(key)
                for mkey, mvalue in meta.items():
                    mptr = join("/metadata", mkey)
                    if mkey == "model" and mvalue == agent.get("model"):
                        self.keys.append(f"metadata/{mkey}")
                    elif (
                        mkey == "timestamp"
                        and isinstance(mvalue, str)
                        and is_time(mvalue)
                        and ("finished_at" not in story)
                    ):
                        story["finished_at"] = mvalue
                        self.keys.append(f"metadata/{mkey}")
                    else:
                        self.kept.keep(mptr, mvalue)
            elif key == ENVELOPE_KEY and self.kept.take_envelope(value):
                self.envelope = True  # other formats' residual, carried by one of our writers
            else:
                self.kept.keep(ptr, value)
        if result:
            story["task"] = {"result": result}
        if metrics:
            story["final_metrics"] = metrics
        if extra:
            agent["extra"] = extra
