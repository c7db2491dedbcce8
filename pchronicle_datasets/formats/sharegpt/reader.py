"""Reading ShareGPT trajectory records into Storyline documents.

Each element the writer would not give back byte for byte keeps its exact value as residual, so
same-source export is exact (see ``writer``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import FormatError, PchronicleError
from ...jsonio import dumps, json_type, may_hold_big_int, short, try_loads
from ...linking import SOURCE_CALL_IDS
from ...losses import ignore_losses
from ...markup_tags import THINK, TOOL_CALL, TOOL_RESPONSE
from ...pointer import join
from ...render.sharegpt import elements, jdumps, system_prompt, tool_value
from ..base import Record, documents, read_records
from ..markup import blocks, without
from ..residual import ENVELOPE_KEY, Residual, origin
from .fields import METADATA_FIELDS, RECORD_FIELDS
from .hints import HINTS, NAME, make_hints
from .llamafactory import DIALECT, calls_of, is_dialect
from .llamafactory import elements as lf_elements

#: The roles the reader reads (``from``), each with the one it stands for: the reference agent's, the aliases
#: other ShareGPT writers use, and LLaMA-Factory's (``llamafactory``).
_ROLES = {
    "system": "system",
    "human": "human",
    "user": "human",
    "gpt": "gpt",
    "assistant": "gpt",
    "tool": "tool",
    "function_call": "function_call",
    "observation": "observation",
}

__all__ = ["decode", "iter_records", "read_line", "sniff"]


def iter_records(data: str | bytes, document_id: str | None = None) -> Iterator[Record]:
    """One Record per JSON Lines record (or per element of a JSON array of records), in file order."""
    return read_records(
        data,
        document_id,
        read_line,
        lambda value, text: _whole(value, text, document_id),
    )


def _whole(whole: Any, data: bytes, document_id: str | None) -> Iterator[Record]:
    """The records of a file that is one JSON value: a JSON array of records, else one record."""
    if isinstance(whole, list) and _array_of_records(whole, data):
        # A JSON array of records (as LLaMA-Factory ships them): each is a record of its index.
        # Errors name the record by its pointer in the file (/3/conversations/0): a whole file has no record lines.
        for i, value in enumerate(whole):
            yield _record(value, dumps(value), document_id, None, i + 1, prefix=f"/{i}")
        return
    yield _record(whole, data, document_id, None if b"\n" in data.strip() else 1, 1)


def _array_of_records(whole: list, data: bytes) -> bool:
    """A file that is one JSON array holds records (not one bare conversation) when it spans several lines
    (a pretty-printed file of records) and has a record in it, or when every element is a record. A one-line
    array that is not all records is a bare conversation: that is how the writer writes one, so a bare
    conversation with odd elements reads back the same."""
    records = [isinstance(r, dict) and "conversations" in r for r in whole]
    if all(isinstance(r, dict) and isinstance(r.get("conversations"), list) for r in whole) and whole:
        return True
    return any(records) and b"\n" in data.strip()


def read_line(value: Any, raw: bytes, document_id: str | None, line: int, index: int) -> list[Record]:
    """The records of line ``line`` of a JSON Lines file, its ``index``-th non-blank line (0-based), already
    parsed (``value``; ``raw`` its bytes): what the file's reading loop gives for it, so a part of a split file
    is read line by line with the same result (``spark``: the Data Source's line parts).
    A record is named by its place (``{file}#{index + 1}``) unless it has an id.

    >>> record = {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]}
    >>> [rec.story["session"] for rec in read_line(record, b"{...}", "t.jsonl", 7, 4)]
    ['t.jsonl#5']
    """
    return [_record(value, raw, document_id, line, index + 1)]


def _record(value: Any, raw: bytes, document_id: str | None, line: int | None, index: int, prefix: str = "") -> Record:
    """``index``: the record's 1-based place among the file's records (it names the session; blank lines are
    not records, so export, which writes none, gives back the same name); ``prefix``: the record's pointer in
    a whole file (``/3``), before the pointers of its errors."""
    try:
        story = _Reader(value, document_id, line, index, may_hold_big_int(raw)).build()
    except PchronicleError as exc:
        if prefix:
            exc = type(exc)(exc.reason, pointer=prefix + exc.pointer, document_id=document_id, line=None)
        return Record(line, raw, error=exc.with_context(document_id=document_id, line=line), value=value)
    return Record(line, raw, story=story, value=value)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    """All Storyline documents of a trajectory file (one per record); raises the first error."""
    return documents(iter_records(data, document_id))


def sniff(sample: Any) -> bool:
    """A record (or a JSON array of records) whose ``conversations`` holds ``{"from", "value"}`` turns, or a bare
    conversation: an array of such turns. One such turn is enough (the others may be malformed: the reader
    refuses them with their pointer); an empty conversation says nothing, unless it is a record's.

    >>> sniff({"conversations": [{"from": 1}, {"from": "human", "value": "hi"}]}), sniff([])
    (True, False)
    """
    if isinstance(sample, list) and sample and isinstance(sample[0], dict) and "conversations" in sample[0]:
        sample = sample[0]
    if isinstance(sample, dict):
        conv = sample.get("conversations")
        if not isinstance(conv, list):
            return False
        # An empty conversation says nothing of its elements: it is ours unless the record has chat messages.
        return any(_is_element(e) for e in conv) if conv else "messages" not in sample
    return isinstance(sample, list) and any(_is_element(e) for e in sample)


def _is_element(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("from"), str) and "value" in value


class _Reader:
    """One record (or bare conversation) → one Storyline document."""

    def __init__(self, value: Any, document_id: str | None, line: int, index: int, scan: bool = True) -> None:
        self.value = value
        # Whether the record's source text may hold an integer beyond 64 bits (``jsonio.may_hold_big_int``): the
        # JSON texts inside its values (call and response blocks, tool lists) are then scanned one by one; a
        # record without one (nearly all) is scanned once here, not once per block.
        self.scan = scan
        self.document_id = document_id
        self.line = line  # the physical line, for errors
        self.index = index  # the record's place among the file's records, for the session id
        self.kept = Residual(NAME, document_id)
        self.envelope = False  # the record carried our _storyline envelope
        self.keys: list[str] = []
        self.used: set[str] = set()
        self.tool_elements: list[str] = []
        self.system = "none"
        self.source_ids: dict[str, str] = {}  # renamed call ids → the source's (/meta/source_call_ids)

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
        dialect = DIALECT if is_dialect(record, conv) else "reference"
        turns: list[dict[str, Any]] = []
        if dialect == DIALECT and isinstance(record.get("system"), str):
            turns.append({"id": 1, "src": "system", "msg": record["system"], "kind": "context"})
            self.system = "column"
        tools = self._turns(conv, base, dialect, turns)
        if not bare:
            tools = self._record_fields(record, story, agent, dialect) or tools
        if tools is not None:
            agent["tools"] = tools
        agent["name"] = agent["id"]
        story["agent"] = agent
        story["turns"] = turns
        if self.envelope:
            self.keys.append(ENVELOPE_KEY)
        story["meta"] = {HINTS: make_hints(bare=bare, system=self.system, keys=self.keys, dialect=dialect)}
        if self.source_ids:
            story["meta"][SOURCE_CALL_IDS] = self.source_ids
        self._keep_exact(story, conv, base, dialect)
        try:
            return self.kept.finish(story)
        except PchronicleError as exc:
            raise self.error(
                base or "", f"the record gives no valid Storyline: {exc.reason} at {exc.pointer}"
            ) from None

    # ------------------------------------------------------------------------------ conversation elements

    def _keep_exact(self, story: dict[str, Any], conv: list, base: str, dialect: str) -> None:
        """Keep each source value the writer would not give back byte for byte as residual, beside its meaning."""
        if dialect == DIALECT:
            regenerated = lf_elements(story, column_system=self.system == "column")
        else:
            with ignore_losses():
                regenerated = elements(
                    story, generated=self.system == "generated", inline_system=True, keep_invalid_args=True, loose=False
                )
        if len(regenerated) != len(conv):  # cannot happen: every element is one element of the rendering
            raise self.error(base or "", "the conversation cannot be written back element for element")
        for i, (source, again) in enumerate(zip(conv, regenerated, strict=True)):
            if source["value"] != again["value"] and f"{base}/{i}/value" not in self.kept.fields:
                self.kept.keep(f"{base}/{i}/value", source["value"])
            if _ROLES[source["from"]] != again["from"] and source["from"] == _ROLES[source["from"]]:
                self.kept.keep(f"{base}/{i}/from", source["from"])

    def _element(self, ptr: str, element: Any) -> tuple[str, Any]:
        """``(role, value)`` of a conversation element; a value that is not a turn of the format is refused: a
        turn is never kept as residual only."""
        if not (isinstance(element, dict) and isinstance(element.get("from"), str) and "value" in element):
            if isinstance(element, dict) and "role" in element and ("content" in element or "tool_calls" in element):
                hint = "; it is a chat message (role/content): read the file with --from chat"
            else:
                hint = ""
            got = f"an object with keys {', '.join(map(str, list(element)[:6]))}" if isinstance(element, dict) else None
            raise self.error(
                ptr,
                "a conversation element is a turn (an object with from and value), "
                f"got {got or json_type(element)}{hint}",
            )
        role = element["from"]
        if role not in _ROLES:
            known = ", ".join(sorted(_ROLES))
            raise self.error(
                f"{ptr}/from", f"the ShareGPT reader does not know the role {short(role, 40)} (it reads {known})"
            )
        for key in element:
            if key not in ("from", "value"):
                self.kept.keep(join(ptr, key), element[key])
        if _ROLES[role] != role:
            self.kept.keep(f"{ptr}/from", role)  # an alias (user, assistant): written back as the source spelled it
        return _ROLES[role], element["value"]

    def _turns(self, conv: list, base: str, dialect: str, turns: list[dict[str, Any]]) -> Any:
        tools = None
        last_agent: dict[str, Any] | None = None
        pending: list[tuple[dict, str, str, list]] = []  # tool turns, linked once every call has its id
        lf = dialect == DIALECT
        for i, element in enumerate(conv):
            ptr = f"{base}/{i}"
            role, value = self._element(ptr, element)
            tid = len(turns) + 1
            if role == "system" and i == 0 and not lf and (parsed := self._generated_tools(value)) is not None:
                tools = parsed or None  # the generated prompt: its <tools> list goes back to /agent/tools
                self.system = "generated"
            elif role == "system":
                turns.append({"id": tid, "src": "system", "msg": value, "kind": "context"})
                last_agent = None
            elif role == "human":
                turns.append({"id": tid, "src": "user", "msg": value})
                last_agent = None  # a tool element after this answers nothing the writer would put here
            elif role == "gpt" and lf:
                turns.append({"id": tid, "src": "agent", "msg": value})
                last_agent = None
            elif role == "gpt":
                turn = self._gpt_turn(tid, value, i)
                turns.append(turn)
                last_agent = turn
            elif role == "function_call":
                calls = calls_of(value)
                turn = {"id": tid, "src": "agent", "msg": "" if calls else value}
                if calls:
                    turn["tool_calls"] = [
                        {"tcid": f"call-{i}-{c}", "fn": call["name"], "args": call.get("arguments", {})}
                        for c, call in enumerate(calls)
                    ]
                    turn["observation"] = {"results": []}
                turns.append(turn)
                last_agent = turn if calls else None
            elif role == "observation" and last_agent is not None and self._answers(last_agent):
                results = last_agent["observation"]["results"]
                results.append({"source_call_id": last_agent["tool_calls"][len(results)]["tcid"], "content": value})
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
                # Tool output that answers no call of the turn before it: a turn of its own (source "tool").
                turns.append({"id": tid, "src": "tool", "msg": value})
                last_agent = None
        self._assign_ids(turns, pending)
        for turn in turns:
            if turn.get("observation") == {"results": []}:
                del turn["observation"]  # a function_call no observation answered
        return tools

    @staticmethod
    def _answers(agent: dict[str, Any]) -> bool:
        obs = agent.get("observation")
        return isinstance(obs, dict) and len(obs["results"]) < len(agent.get("tool_calls") or ())

    def _responses(self, agent: dict[str, Any], value: str) -> list[tuple[int | None, str, Any]]:
        """``(index of the answered call, tool_call_id, content)`` for every ``<tool_response>`` block."""
        calls = agent.get("tool_calls") or []
        unmatched = list(range(len(calls)))
        out = []
        for k, (_, _, raw) in enumerate(blocks(value, *TOOL_RESPONSE)):
            block = raw.strip()
            ok, payload = try_loads(block, scan=self.scan)
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
        wanted: dict[int, str] = {}  # id(call) → the source id it could not keep (already used in the document)
        for agent, _, _, links in pending:
            calls = agent.get("tool_calls", [])
            for pick, cid, _ in links:
                if pick is not None and cid and cid not in self.used:
                    calls[pick]["tcid"] = cid
                    self.used.add(cid)
                elif pick is not None and cid and calls[pick]["tcid"] != cid:
                    wanted[id(calls[pick])] = cid
        seen: set[str] = set()
        for turn in turns:
            for call in turn.get("tool_calls") or []:
                tcid, n = call["tcid"], 1
                while tcid in seen:
                    wanted.setdefault(id(call), call["tcid"])
                    n += 1
                    tcid = f"{call['tcid']}-{n}"
                call["tcid"] = tcid
                seen.add(tcid)
                if id(call) in wanted:
                    self.source_ids[tcid] = wanted[id(call)]  # training outputs show the id the source wrote
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

    def _generated_tools(self, value: Any) -> Any:
        """The tools of a system prompt that is exactly the generated template, else None."""
        if not isinstance(value, str):
            return None
        start, end = value.find("\n<tools>\n"), value.rfind("\n</tools>\n")
        if start < 0 or end < start + len("\n<tools>\n"):
            return None
        ok, listed = try_loads(value[start + len("\n<tools>\n") : end], scan=self.scan)
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
        thinks = blocks(value, *THINK)
        reasons = [inner.removeprefix("\n").removesuffix("\n") for _, _, inner in thinks]
        rest = without(value, thinks)
        calls = []
        taken = []  # the blocks that are calls: removed from the text (each block is parsed once)
        for c, found in enumerate(blocks(rest, *TOOL_CALL)):
            ok, payload = try_loads(found[2].strip(), scan=self.scan)
            if ok and isinstance(payload, dict) and isinstance(payload.get("name"), str) and payload["name"]:
                calls.append({"tcid": f"call-{i}-{c}", "fn": payload["name"], "args": payload.get("arguments", {})})
                taken.append(found)
        if calls:
            rest = without(rest, taken)
        turn["msg"] = rest.strip()
        reason = "\n".join(r for r in reasons if r.strip())
        if reason:
            turn["reason"] = reason
        if calls:
            turn["tool_calls"] = calls
        return turn

    # -------------------------------------------------------------------------------------- record fields

    def _record_fields(self, record: dict, story: dict, agent: dict, dialect: str) -> Any:
        """Map the record's keys (residual for the others); the tools of LLaMA-Factory's ``tools`` key, if any."""
        tools = None
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
        buckets = {"story": story, "result": result, "metrics": metrics, "extra": extra}

        def mapped(table: dict, key: str, value: Any) -> bool:
            """Whether ``key`` is one of the table's (``fields``) and its value goes to its place (then put)."""
            field = table.get(key)
            if field is None or not field[0](value) or field[2] in buckets[field[1]]:
                return False
            buckets[field[1]][field[2]] = value
            return True

        for key, value in record.items():
            ptr = join("", key)
            if key == "conversations":
                self.keys.append(key)
            elif key == "model" and value == agent.get("model"):
                self.keys.append(key)
            elif mapped(RECORD_FIELDS, key, value):
                self.keys.append(key)
            elif key == "metadata" and meta is not None:
                self.keys.append(key)
                for mkey, mvalue in meta.items():
                    if mkey == "model" and mvalue == agent.get("model"):
                        self.keys.append(f"metadata/{mkey}")
                    elif mapped(METADATA_FIELDS, mkey, mvalue):
                        self.keys.append(f"metadata/{mkey}")
                    else:
                        self.kept.keep(join("/metadata", mkey), mvalue)
            elif key == "system" and dialect == DIALECT and self.system == "column":
                self.keys.append(key)  # the first turn
            elif (
                key == "tools"
                and dialect == DIALECT
                and isinstance(value, str)
                and (listed := _tool_list(value, self.scan))
            ):
                tools = listed
                self.keys.append(key)
                if jdumps(listed) != value:
                    self.kept.keep(ptr, value)  # the exact text of the JSON string
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
        return tools


def _tool_list(text: str, scan: bool) -> list | None:
    """LLaMA-Factory's ``tools`` string as a list of function schemas, or None when it is not one."""
    ok, listed = try_loads(text, scan=scan)
    if ok and isinstance(listed, list) and listed and all(isinstance(t, dict) for t in listed):
        return listed
    return None
