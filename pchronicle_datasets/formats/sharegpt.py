"""The ``sharegpt`` format (alias ``agent-jsonl``): the agent's ShareGPT trajectory JSON Lines.

The seed ``trajectory-format-sharegpt.md`` describes it; the reference agent's own converter (hermes-agent)
decides every byte the seed leaves open, except the deliberate differences in ``docs/formats/sharegpt.md``.

Writing (``conversation``) renders a Storyline document as ``[{"from", "value"}]``: a system turn generated
from ``/agent/tools`` with the function-calling template, ``human`` for user turns, ``gpt`` for agent turns
(``<think>`` block, content, ``<tool_call>`` blocks) and one ``tool`` turn of ``<tool_response>`` blocks after
each gpt turn that made calls. Reading parses those elements back; an element that the writer would not
give back byte for byte keeps its exact value as residual, so same-source export is exact.

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
...     {"id": 1, "src": "user", "msg": "Say hello."}, {"id": 2, "src": "agent", "msg": "Hello!"}]}
>>> [(c["from"], c["value"][:40]) for c in conversation(story)][1:]
[('human', 'Say hello.'), ('gpt', '<think>\\n</think>\\nHello!')]
"""

from __future__ import annotations

import functools
import json
import logging
from collections import Counter
from collections.abc import Iterator
from typing import Any

import orjson

from ..errors import FormatError, PchronicleError
from ..jsonio import dumps, loads
from ..pointer import join, parse
from ..storyline import compute_unknown_key_counts, is_time, validate
from .base import Record, as_bytes, documents, parse_file
from .markup import blocks, without

NAME = "sharegpt"
ALIASES = ("agent-jsonl",)
HINTS = "sharegpt"
log = logging.getLogger("pchronicle_datasets.sharegpt")

#: Counts of lossy writes (e.g. ``invalid_arguments``: a string ``args`` written as ``{}``), for reports.
WARNINGS: Counter[str] = Counter()

SYSTEM_TEMPLATE = (
    "You are a function calling AI model. You are provided with function signatures within <tools> </tools> XML "
    "tags. You may call one or more functions to assist with the user query. If available tools are not relevant "
    "in assisting with user query, just respond in natural conversational language. Don't make assumptions about "
    "what values to plug into functions. After calling & executing the functions, you will be provided with "
    "function results within <tool_response> </tool_response> XML tags. Here are the available tools:\n"
    "<tools>\n{tools}\n</tools>\n"
    "For each function call return a JSON object, with the following pydantic model json schema for each:\n"
    "{{'title': 'FunctionCall', 'type': 'object', 'properties': {{'name': {{'title': 'Name', 'type': 'string'}}, "
    "'arguments': {{'title': 'Arguments', 'type': 'object'}}}}, 'required': ['name', 'arguments']}}\n"
    "Each function call should be enclosed within <tool_call> </tool_call> XML tags.\n"
    "Example:\n<tool_call>\n{{'name': <function-name>,'arguments': <args-dict>}}\n</tool_call>"
)
ROLE_FROM = {"system": "system", "user": "human", "agent": "gpt"}
TEXT_PART_TYPES = ("text", "input_text", "output_text")


_ENCODER = json.JSONEncoder(ensure_ascii=False)  # made once: json.dumps builds one per call otherwise


def jdumps(value: Any) -> str:
    """JSON as the reference writes it: ``json.dumps(…, ensure_ascii=False)`` with default separators."""
    return _ENCODER.encode(value)


# ---------------------------------------------------------------------------------------------- writer


def text_of(value: Any) -> str:
    """A message as text: strings as they are, content parts joined, anything else as JSON.

    Every ShareGPT ``value`` is a string (the reference passes lists through, and ``datasets`` then turns
    strings like "42" in the same batch into numbers).
    """
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, list) and all(isinstance(p, dict) for p in value):
        parts = []
        for part in value:
            if part.get("type") in TEXT_PART_TYPES and isinstance(part.get("text"), str):
                parts.append(part["text"])
            else:
                parts.append(jdumps(part))
        return "".join(parts)
    return jdumps(value)


def tool_schema(tool: Any) -> dict[str, Any] | None:
    """The function schema of a tool definition, in OpenAI ``{"type": "function", "function": …}`` form or bare."""
    if isinstance(tool, dict):
        fn = tool.get("function") if tool.get("type") == "function" else tool
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            return fn
    return None


def system_prompt(tools: Any) -> str:
    """The seed's function-calling system prompt for these tool definitions."""
    if not tools:
        return _system_prompt(b"[]")
    try:
        key = orjson.dumps(tools)
    except (TypeError, orjson.JSONEncodeError):
        return _build_system_prompt(tools)
    return _system_prompt(key)


@functools.lru_cache(maxsize=256)
def _system_prompt(tools_json: bytes) -> str:
    # A corpus has few tool sets: the prompt is built once per set (a json.dumps of every schema).
    return _build_system_prompt(orjson.loads(tools_json))


def _build_system_prompt(tools: Any) -> str:
    formatted = []
    for tool in tools if isinstance(tools, list) else []:
        fn = tool_schema(tool)
        if fn is not None:
            formatted.append(
                {
                    "name": fn["name"],
                    "description": fn.get("description", ""),
                    "parameters": fn.get("parameters", {}),
                    "required": None,
                }
            )
    return SYSTEM_TEMPLATE.format(tools=jdumps(formatted) if formatted else "[]")


def _scratchpad_to_think(text: str) -> str:
    return text.replace("<REASONING_SCRATCHPAD>", "<think>").replace("</REASONING_SCRATCHPAD>", "</think>")


def _arguments(args: Any, *, keep_invalid: bool) -> Any:
    if isinstance(args, str) and not keep_invalid:
        # Storyline args are parsed already: a string is a source that was not valid JSON.
        WARNINGS["invalid_arguments"] += 1
        log.warning("tool call arguments are not JSON (%r…); written as {} as the seed says", args[:100])
        return {}
    return args


def gpt_value(turn: dict[str, Any], *, empty_think: bool = True, keep_invalid_args: bool = False) -> str:
    """A gpt turn's value, byte for byte as the reference converter writes it."""
    reason = turn.get("reason")
    content = f"<think>\n{reason}\n</think>\n" if isinstance(reason, str) and reason.strip() else ""
    msg = text_of(turn.get("msg"))
    calls = turn.get("tool_calls") or []
    if calls:
        if msg.strip():
            content += _scratchpad_to_think(msg) + "\n"
        for call in calls:
            payload = {"name": call["fn"], "arguments": _arguments(call.get("args"), keep_invalid=keep_invalid_args)}
            content += f"<tool_call>\n{jdumps(payload)}\n</tool_call>\n"
        if empty_think and "<think>" not in content:
            content = "<think>\n</think>\n" + content
        return content.rstrip()
    content += _scratchpad_to_think(msg)
    if empty_think and "<think>" not in content:
        content = "<think>\n</think>\n" + content
    return content.strip()


def _response_content(content: Any) -> Any:
    """Tool output as the reference puts it in ``content``: parsed when its stripped text starts with { or [."""
    if isinstance(content, str) and content.strip().startswith(("{", "[")):
        try:
            return json.loads(content)
        except (ValueError, RecursionError):
            return content
    return content


def tool_value(results: list[tuple[str, str, Any]]) -> str:
    """The tool turn: one ``<tool_response>`` per ``(tool_call_id, name, content)``, joined by newlines."""
    return "\n".join(
        f"<tool_response>\n{jdumps({'tool_call_id': cid, 'name': name, 'content': _response_content(content)})}"
        "\n</tool_response>"
        for cid, name, content in results
    )


def _results_by_turn(story: dict[str, Any]) -> dict[int, list[tuple[str, str, Any]]]:
    """Place every tool result after the turn whose call it answers, wherever the hub holds it.

    Linked by call id: ``tool_calls[].result`` on the call (ATIF style) or ``observation.results[]`` with a
    ``source_call_id`` on any turn (RFC-0009 puts them on the next turn). A result without a known id goes
    to the calls of its own turn, or else of the latest earlier turn with calls, by position; its name is
    that call's, or ``"unknown"`` past the end.
    """
    turns = story["turns"]
    owner: dict[str, tuple[int, str]] = {}
    placed: dict[int, list[tuple[str, str, Any]]] = {}
    last_with_calls: int | None = None
    for t, turn in enumerate(turns):
        calls = turn.get("tool_calls") or []
        for call in calls:
            owner.setdefault(call["tcid"], (t, call["fn"]))
            if "result" in call:
                placed.setdefault(t, []).append((call["tcid"], call["fn"], call["result"]))
        if calls:
            last_with_calls = t
        obs = turn.get("observation")
        results = obs.get("results") if isinstance(obs, dict) else None
        if not isinstance(results, list):
            continue
        home = t if calls else last_with_calls
        unlinked = 0
        for res in results:
            if not isinstance(res, dict):
                continue
            sid = res.get("source_call_id")
            content = res.get("content", "")
            if isinstance(sid, str) and sid in owner:
                t_owner, fn = owner[sid]
                placed.setdefault(t_owner, []).append((sid, fn, content))
            elif home is not None:
                home_calls = turns[home].get("tool_calls") or []
                name = home_calls[unlinked]["fn"] if unlinked < len(home_calls) else "unknown"
                placed.setdefault(home, []).append((sid if isinstance(sid, str) else "", name, content))
                unlinked += 1
    return placed


def conversation(
    story: dict[str, Any],
    *,
    keep_system_prompt: bool = False,
    empty_think: bool = True,
    drop_copied: bool = False,
    keep_invalid_args: bool = False,
) -> list[dict[str, str]]:
    """The ShareGPT ``[{"from", "value"}]`` of a Storyline document (see the module docs).

    By default the system prompt is generated from ``/agent/tools`` and the document's system turns are not
    used; ``keep_system_prompt=True`` writes the system turns instead, where they stand (the generated prompt
    only when there is none).
    """
    has_system = any(t["src"] == "system" and not (drop_copied and t.get("copied")) for t in story["turns"])
    generated = not (keep_system_prompt and has_system)
    return _elements(
        story,
        generated=generated,
        inline_system=keep_system_prompt,
        empty_think=empty_think,
        drop_copied=drop_copied,
        keep_invalid_args=keep_invalid_args,
    )


def _elements(
    story: dict[str, Any],
    *,
    generated: bool,
    inline_system: bool,
    empty_think: bool = True,
    drop_copied: bool = False,
    keep_invalid_args: bool = False,
) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    if generated:
        out.append({"from": "system", "value": system_prompt(story["agent"].get("tools"))})
    placed = _results_by_turn(story)
    for t, turn in enumerate(story["turns"]):
        if drop_copied and turn.get("copied"):
            continue
        src = turn["src"]
        if src == "user":
            out.append({"from": "human", "value": text_of(turn["msg"])})
        elif src == "agent":
            value = gpt_value(turn, empty_think=empty_think, keep_invalid_args=keep_invalid_args)
            out.append({"from": "gpt", "value": value})
            if turn.get("tool_calls") and placed.get(t):
                out.append({"from": "tool", "value": tool_value(placed[t])})
        elif src == "system" and inline_system:
            out.append({"from": "system", "value": text_of(turn["msg"])})
    return out


# ---------------------------------------------------------------------------------------------- reader


def iter_records(data: str | bytes, document_id: str | None = None) -> Iterator[Record]:
    """One Record per JSON Lines record (or per element of a JSON array of records), in file order."""
    yield from _text_records(as_bytes(data, document_id), document_id)


def _text_records(data: bytes, document_id: str | None) -> Iterator[Record]:
    if not data or data.isspace():
        return
    try:
        is_whole, parsed = parse_file(data, document_id)
    except FormatError as exc:
        yield Record(exc.line, data, error=exc)
        return
    if not is_whole:
        for index, number, raw, value in parsed:
            yield (
                Record(number, raw, error=value)
                if isinstance(value, FormatError)
                else _record(value, raw, document_id, number, index + 1)
            )
        return
    whole = parsed
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


def sniff(head: bytes) -> bool:
    """Records carry ``conversations`` of ``{"from", "value"}`` turns (gzip is left to the caller)."""
    return b'"conversations"' in head or (b'"from"' in head and b'"value"' in head)


class _Reader:
    """One record (or bare conversation) → one Storyline document."""

    def __init__(self, value: Any, document_id: str | None, line: int, index: int) -> None:
        self.value = value
        self.document_id = document_id
        self.line = line  # the physical line, for errors
        self.index = index  # the record's place among the file's records, for the session id
        self.residual: dict[str, Any] = {}
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
            raise self.error("", f"a trajectory record is a JSON object or a conversation array, got {_jt(value)}")
        conv = record.get("conversations")
        if not isinstance(conv, list):
            raise self.error(base or "", f"conversations must be an array of turns, got {_jt(conv)}")
        story: dict[str, Any] = {"schema_version": "storyline/v1"}
        story["origin"] = {"format": NAME, **({"document_id": self.document_id} if self.document_id else {})}
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
        story["meta"] = {HINTS: {"version": 1, "bare": bare, "system": self.system, "keys": self.keys}}
        uf = {
            "sources": {
                **self.carried(record),
                NAME: {"source_document_id": self.document_id or "", "fields": self.residual},
            }
        }
        story["unknown_fields"] = uf
        story["unknown_key_counts"] = compute_unknown_key_counts(uf)
        try:
            validate(story, document_id=self.document_id, parsed=True)
        except PchronicleError as exc:
            raise self.error(
                base or "", f"the record gives no valid Storyline: {exc.reason} at {exc.pointer}"
            ) from None
        return story

    def carried(self, record: dict) -> dict[str, Any]:
        env = record.get("_storyline") if isinstance(record, dict) else None
        if isinstance(env, dict) and env.get("version") == 1 and isinstance(env.get("unknown_fields"), dict):
            sources = env["unknown_fields"].get("sources")
            if isinstance(sources, dict) and NAME not in sources:
                self.keys.append("_storyline")
                self.residual.pop("/_storyline", None)
                return sources
        return {}

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
                self.residual[ptr] = element  # not a {"from", "value"} turn: kept whole, in its place
                continue
            for key in element:
                if key not in ("from", "value"):
                    self.residual[join(ptr, key)] = element[key]
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
                self.residual[ptr] = element  # a role this dialect does not know: kept whole
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
            ok, payload = _strict(block)
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
                self.residual[f"{ptr}/value"] = value
            self.tool_elements.append(ptr)

    def _exact(self, ptr: str, value: Any, regenerated: str) -> None:
        """Keep the source value as residual when the writer would not give it back byte for byte."""
        if value != regenerated:
            self.residual[f"{ptr}/value"] = value

    @staticmethod
    def _generated_tools(value: Any) -> Any:
        """The tools of a system prompt that is exactly the generated template, else None."""
        if not isinstance(value, str):
            return None
        start, end = value.find("\n<tools>\n"), value.rfind("\n</tools>\n")
        if start < 0 or end < start + len("\n<tools>\n"):
            return None
        ok, listed = _strict(value[start + len("\n<tools>\n") : end])
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
            ok, payload = _strict(block)
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
        ok, payload = _strict(block)
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
                        self.residual[mptr] = mvalue
            elif key == "_storyline":
                self.residual[ptr] = value  # taken back by carried() when it is our envelope
            else:
                self.residual[ptr] = value
        if result:
            story["task"] = {"result": result}
        if metrics:
            story["final_metrics"] = metrics
        if extra:
            agent["extra"] = extra


def _strict(text: str) -> tuple[bool, Any]:
    """Parse JSON the way Storyline can hold it (no NaN, no integer beyond 64 bits); a text it cannot hold
    stays text, and the element's exact value keeps it."""
    try:
        return True, loads(text)
    except FormatError:
        return False, None


def _jt(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), type(value).__name__
    )


# ------------------------------------------------------------------------------------------ file writer


def is_completed(story: dict[str, Any]) -> bool | None:
    """Whether the trajectory completed: ``/task/result/completed``, else the last agent turn's
    ``metrics.is_session_completed`` (RFC-0009), else None (the document does not say)."""
    result = (story.get("task") or {}).get("result") or {}
    if isinstance(result.get("completed"), bool):
        return result["completed"]
    for turn in reversed(story["turns"]):
        if turn["src"] == "agent":
            metrics = turn.get("metrics")
            value = metrics.get("is_session_completed") if isinstance(metrics, dict) else None
            return value if isinstance(value, bool) else None
    return None


def record(story: dict[str, Any], *, carry_residual: bool = False, **options: Any) -> Any:
    """The JSON value of one trajectory record for a Storyline document.

    A document read from this format comes back as its source record (same source: the residual and the
    export hints restore every byte the reader did not map); any other is written as a trajectory record
    with ``conversations`` and, when the document has them, ``timestamp``, ``model``, ``completed`` and
    ``partial``; ``carry_residual=True`` adds other formats' residual in a version-1 ``_storyline`` envelope.
    """
    validate(story)
    meta = story.get("meta")
    hints = meta.get(HINTS) if isinstance(meta, dict) else None
    source = ((story.get("unknown_fields") or {}).get("sources") or {}).get(NAME)
    if source is not None and isinstance(hints, dict) and hints.get("version") == 1:
        try:
            return _recover(story, hints, source.get("fields") or {})
        except (KeyError, IndexError, TypeError, AttributeError, ValueError, StopIteration) as exc:
            # Hints that do not fit the document (edited after it was read): write it as any other
            # document, carrying this format's residual too, so nothing is dropped.
            log.warning("export hints at /meta/%s do not fit the document (%r); written as a new record", HINTS, exc)
            return _fresh_record(story, carry_residual=True, **options)
    return _fresh_record(story, carry_residual=carry_residual, **options)


def _fresh_record(story: dict[str, Any], *, carry_residual: bool = False, **options: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"conversations": conversation(story, **options)}
    if isinstance(story.get("finished_at"), str):
        out["timestamp"] = story["finished_at"]
    if story["agent"].get("model"):
        out["model"] = story["agent"]["model"]
    result = (story.get("task") or {}).get("result") or {}
    for key in ("completed", "partial"):
        if isinstance(result.get(key), bool):
            out[key] = result[key]
    others = (story.get("unknown_fields") or {}).get("sources") or {}
    if carry_residual and others:
        out["_storyline"] = {"version": 1, "unknown_fields": {"sources": others}}
    return out


def _recover(story: dict, hints: dict, fields: dict) -> Any:
    bare = bool(hints.get("bare"))
    conv = _elements(story, generated=hints.get("system") == "generated", inline_system=True, keep_invalid_args=True)
    # Elements kept whole (residual) go back to their positions; the generated ones fill the others in order.
    kept = {int(parse(p)[0 if bare else 1]): v for p, v in fields.items() if _is_element(p, bare)}
    generated = iter(conv)
    elements = [kept[i] if i in kept else next(generated) for i in range(len(conv) + len(kept))]
    rec: dict[str, Any] = {}
    result = (story.get("task") or {}).get("result") or {}
    agent_extra = story["agent"].get("extra") or {}
    for key in hints.get("keys", []):
        if key == "conversations":
            rec["conversations"] = elements
        elif key in ("model", "metadata/model"):
            _put(rec, key, story["agent"].get("model"))
        elif key in ("timestamp", "metadata/timestamp"):
            _put(rec, key, story.get("finished_at"))
        elif key in ("completed", "partial"):
            rec[key] = result.get(key)
        elif key == "api_calls":
            rec[key] = (story.get("final_metrics") or {}).get(key)
        elif key == "toolsets_used":
            rec[key] = agent_extra.get(key)
        elif key == "metadata":
            rec.setdefault("metadata", {})
        elif key == "_storyline":
            others = {k: v for k, v in story["unknown_fields"]["sources"].items() if k != NAME}
            rec["_storyline"] = {"version": 1, "unknown_fields": {"sources": others}}
    if bare:
        rec["conversations"] = elements
    for pointer, value in fields.items():
        if _is_element(pointer, bare):
            continue
        tokens = parse(pointer)
        if bare:
            tokens = ["conversations", *tokens]
        node: Any = rec
        for token in tokens[:-1]:
            node = node[int(token)] if isinstance(node, list) else node.setdefault(token, {})
        if isinstance(node, list):
            node[int(tokens[-1])] = value
        else:
            node[tokens[-1]] = value
    return rec["conversations"] if bare else rec


def _put(rec: dict, key: str, value: Any) -> None:
    if key.startswith("metadata/"):
        rec.setdefault("metadata", {})[key.split("/", 1)[1]] = value
    else:
        rec[key] = value


def _is_element(pointer: str, bare: bool) -> bool:
    tokens = parse(pointer)
    if bare:
        return len(tokens) == 1
    return len(tokens) == 2 and tokens[0] == "conversations"


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """One JSON Lines record per document, written as the reference writes JSON (``ensure_ascii=False``)."""
    return "".join(jdumps(record(story, **options)) + "\n" for story in stories)
