"""One Codex rollout (its parsed lines) → one Storyline document (the table in docs/formats/codex.md).

Every line is planned: the turn or call it became (``/meta/codex/lines``), or kept whole as residual under
``/{i}`` (``i``: the line's index among the file's non-blank lines). What a mapped line holds beyond the table
stays residual under its own pointer, so the writer gives every line back.

>>> lines = [
...     {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s1", "cli_version": "0.1"}},
...     {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
...      "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}},
...     {"timestamp": "2026-01-01T00:00:02Z", "type": "response_item",
...      "payload": {"type": "function_call", "name": "ls", "arguments": "{}", "call_id": "c1"}},
...     {"timestamp": "2026-01-01T00:00:03Z", "type": "response_item",
...      "payload": {"type": "function_call_output", "call_id": "c1", "output": "a.txt"}}]
>>> story = read_rollout(lines, "r.jsonl")
>>> [(t["src"], t["msg"]) for t in story["turns"]], story["turns"][1]["tool_calls"][0]["result"]
([('user', 'hi'), ('agent', '')], 'a.txt')
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from ...errors import FormatError, PchronicleError
from ...jsonio import try_loads
from ...linking import SOURCE_CALL_IDS
from ...pointer import join
from ...schema import is_time
from ..residual import Residual, origin
from .fields import (
    AGENT_ID,
    CALL_ITEMS,
    HINTS,
    HOSTED_FN,
    MESSAGE_ROLES,
    NAME,
    OUTPUT_ITEMS,
    PRE_WRAPPER_HEADER,
    TEXT_PART,
    USAGE,
    WRAPPER_TYPES,
)

__all__ = ["layout_of", "parent_thread", "read_rollout", "text_content"]

_EXIT = re.compile(r"(?:Process exited with code|Exit code:)\s*(-?\d+)")


def layout_of(first: Any) -> str | None:
    """``"wrapper"`` or ``"bare"`` (pre-wrapper) for a rollout's first line, None when it is neither.

    >>> layout_of({"timestamp": "t", "type": "session_meta", "payload": {}}), layout_of({"id": "x", "timestamp": "t",
    ...     "instructions": None}), layout_of({"type": "message"})
    ('wrapper', 'bare', None)
    """
    if not isinstance(first, dict):
        return None
    if first.get("type") in WRAPPER_TYPES and isinstance(first.get("payload"), dict):
        return "wrapper"
    if "type" not in first and {"id", "timestamp", "instructions"} <= set(first) <= PRE_WRAPPER_HEADER:
        return "bare"
    return None


def parent_thread(meta: Any) -> str | None:
    """The parent thread a ``session_meta`` payload names (``parent_thread_id``, or the subagent source's).

    >>> parent_thread({"source": {"subagent": {"thread_spawn": {"parent_thread_id": "p"}}}})
    'p'
    """
    if not isinstance(meta, dict):
        return None
    value = meta.get("parent_thread_id")
    if not (isinstance(value, str) and value):
        spawn = meta.get("source")
        for key in ("subagent", "thread_spawn"):
            spawn = spawn.get(key) if isinstance(spawn, dict) else None
        value = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
    return value if isinstance(value, str) and value else None


def text_content(content: Any, role: str) -> Any:
    """``msg`` of a message's ``content``: the text of a single plain text part of the role's part type, else the
    content as it is (several parts, images: nothing is flattened).

    >>> text_content([{"type": "input_text", "text": "hi"}], "user"), text_content([], "user")
    ('hi', [])
    """
    part = TEXT_PART.get(role, "input_text")
    if (
        isinstance(content, list)
        and len(content) == 1
        and isinstance(content[0], dict)
        and set(content[0]) == {"type", "text"}
        and content[0]["type"] == part
        and isinstance(content[0]["text"], str)
    ):
        return content[0]["text"]
    return content


def exit_code(output: Any) -> int | None:
    """The exit code an exec output reports: ``metadata.exit_code`` of JSON output, or the text's
    ``Process exited with code N`` / ``Exit code: N``.

    >>> exit_code('{"output": "x", "metadata": {"exit_code": 2}}'), exit_code("Process exited with code 0\\n")
    (2, 0)
    """
    if not isinstance(output, str):
        return None
    if output.startswith("{"):
        ok, value = try_loads(output)
        meta = value.get("metadata") if ok and isinstance(value, dict) else None
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return code if type(code) is int and -(2**63) <= code < 2**63 else None
    m = _EXIT.search(output[:4096])
    return int(m.group(1)) if m else None


def _rolled_back(items: list[tuple[int, Any]]) -> tuple[set[int], int]:
    """The line indexes a ``thread_rolled_back`` event drops, and how many user turns it dropped."""
    has_tasks = any(_event(v) == "task_started" for _, v in items)
    starts: list[int] = []
    dropped: set[int] = set()
    turns = 0
    for i, value in items:
        if i in dropped:
            continue
        event = _event(value)
        if (has_tasks and event == "task_started") or (not has_tasks and _user_message(value)):
            starts.append(i)
        elif event == "thread_rolled_back":
            n = value["payload"].get("num_turns")
            n = n if type(n) is int and n > 0 else 0
            if n and starts:
                first = starts[-min(n, len(starts))]
                turns += min(n, len(starts))
                del starts[-min(n, len(starts)) :]
                dropped.update(j for j, _ in items if first <= j < i)
    return dropped, turns


def _event(value: Any) -> str | None:
    if isinstance(value, dict) and value.get("type") == "event_msg" and isinstance(value.get("payload"), dict):
        event = value["payload"].get("type")
        return event if isinstance(event, str) else None
    return None


def _user_message(value: Any) -> bool:
    item = value.get("payload") if isinstance(value, dict) and value.get("type") == "response_item" else value
    return isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user"


def _usage_metrics(usage: dict) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in usage.items():
        if key in USAGE:
            metrics[USAGE[key]] = value
        else:
            extra[key] = value
    if extra:
        metrics["extra"] = extra
    return metrics


class _Reader:
    def __init__(self, document_id: str | None, layout: str) -> None:
        self.document_id = document_id
        self.layout = layout
        self.kept = Residual(NAME, document_id)
        self.turns: list[dict[str, Any]] = []
        self.plan: list[list[Any]] = []
        self.calls: dict[str, tuple[int, int]] = {}  # source call id → (turn, call) of its latest call
        self.tcids: set[str] = set()
        self.renamed: dict[str, str] = {}
        self.open: int | None = None  # the agent turn model-side items still join
        self.stage = 0  # what the open turn holds: 1 reasoning, 2 message, 3 calls
        self.model: Any = None
        self.effort: Any = None
        self.agent_model: str | None = None
        self.story: dict[str, Any] = {"schema_version": "storyline/v1", "origin": origin(NAME, document_id)}
        self.agent: dict[str, Any] = {"id": AGENT_ID}
        self.prev_total: Any = None
        self.unattributed: dict[str, int] = {}
        self.usage_lines = 0
        self.line: int | None = None

    def error(self, pointer: str, reason: str) -> FormatError:
        return FormatError(reason, pointer=pointer, document_id=self.document_id, line=self.line)

    # ------------------------------------------------------------------------------------------ lines

    def keep_line(self, i: int, value: Any) -> None:
        self.kept.keep(f"/{i}", value)
        self.plan.append(["k"])

    def keep_rest(self, base: str, obj: dict, used: tuple[str, ...]) -> None:
        for key, value in obj.items():
            if key not in used:
                self.kept.keep(join(base, key), value)

    def read(self, items: list[tuple[int, Any]]) -> dict[str, Any]:
        dropped, dropped_turns = _rolled_back(items) if self.layout == "wrapper" else (set(), 0)
        for i, (line, value) in enumerate(items):
            self.line = line
            if line in dropped:
                self.keep_line(i, value)
                continue
            self.one(i, value)
        return self.finish(len(dropped), dropped_turns)

    def one(self, i: int, value: Any) -> None:
        if self.layout == "bare":
            if i == 0:
                return self.header(i, value)
            if not isinstance(value, dict) or "record_type" in value or not isinstance(value.get("type"), str):
                return self.keep_line(i, value)
            return self.item(i, value, f"/{i}", None, bare=True)
        if not (isinstance(value, dict) and isinstance(value.get("payload"), dict)):
            return self.keep_line(i, value)
        kind, payload = value.get("type"), value["payload"]
        if kind == "response_item":
            ts = value.get("timestamp")
            self.keep_rest(f"/{i}", value, ("type", "payload", "timestamp"))
            return self.item(i, payload, f"/{i}/payload", (f"/{i}/timestamp", ts) if "timestamp" in value else None)
        if kind == "session_meta" and "session" not in self.story:
            return self.session_meta(i, value, payload)
        if kind == "compacted":
            self.keep_rest(f"/{i}", value, ("type", "payload", "timestamp"))
            return self.compacted(
                i, payload, (f"/{i}/timestamp", value.get("timestamp")) if "timestamp" in value else None
            )
        if kind == "turn_context":
            self.model = payload.get("model") if isinstance(payload.get("model"), str) else None
            self.effort = payload.get("effort")
            if self.agent_model is None and self.model is not None:
                self.agent_model = self.model
        elif kind == "event_msg" and payload.get("type") == "token_count":
            self.token_count(payload.get("info"))
        self.keep_line(i, value)

    def header(self, i: int, value: dict) -> None:
        self.session_fields(f"/{i}", value)
        self.plan.append(["h"])

    def session_meta(self, i: int, value: dict, payload: dict) -> None:
        self.keep_rest(f"/{i}", value, ("type", "payload"))
        self.session_fields(f"/{i}/payload", payload)
        parent = parent_thread(payload)
        if parent is not None:
            self.story["parent"] = {"psid": parent, "rel": "spawn"}
        self.plan.append(["s"])

    def session_fields(self, base: str, obj: dict) -> None:
        for key, value in obj.items():
            if key == "id" and isinstance(value, str) and value:
                self.story["session"] = value
            elif key == "timestamp" and isinstance(value, str) and is_time(value):
                self.story["started_at"] = value
            elif key == "cli_version" and isinstance(value, str):
                self.agent["ver"] = value
            elif key == "originator" and isinstance(value, str):
                self.agent["name"] = value
            else:
                self.kept.keep(join(base, key), value)

    # ------------------------------------------------------------------------------------------ turns

    def new_turn(self, src: str, msg: Any, ts: tuple[str, Any] | None) -> int:
        turn: dict[str, Any] = {"id": len(self.turns) + 1, "src": src, "msg": msg}
        if ts is not None:
            if isinstance(ts[1], str) and is_time(ts[1]):
                turn["ts"] = ts[1]
            else:
                self.kept.keep(*ts)
        self.turns.append(turn)
        return len(self.turns) - 1

    def agent_turn(self, stage: int, ts: tuple[str, Any] | None) -> int:
        """The agent turn an item of ``stage`` joins (a new one when the open turn is past that stage)."""
        if self.open is None or (self.stage >= stage and not (stage == 3 and self.stage == 3)):
            self.open = self.new_turn("agent", "", ts)
            turn = self.turns[self.open]
            if self.model is not None:
                turn["model"] = self.model
            if self.effort is not None:
                turn["effort"] = self.effort
        elif ts is not None:
            self.kept.keep(*ts)
        self.stage = stage
        return self.open

    def close(self) -> None:
        self.open = None
        self.stage = 0

    def item(self, i: int, item: dict, base: str, ts: tuple[str, Any] | None, bare: bool = False) -> None:
        kind = item.get("type")
        if kind == "message" and item.get("role") in MESSAGE_ROLES:
            self.close()
            t = self.new_turn(item["role"], text_content(item.get("content"), item["role"]), ts)
            self.keep_rest(base, item, ("type", "role", "content"))
            self.plan.append(["m", t, "content" in item])
        elif kind == "message" and item.get("role") == "assistant":
            t = self.agent_turn(2, ts)
            self.turns[t]["msg"] = text_content(item.get("content"), "assistant")
            phase = item.get("phase")
            if isinstance(phase, str):
                self.turns[t]["extra"] = {"phase": phase}
            self.keep_rest(
                base,
                item,
                ("type", "role", "content", "phase") if isinstance(phase, str) else ("type", "role", "content"),
            )
            self.plan.append(["a", t, "msg", "content" in item])
        elif kind == "reasoning":
            t = self.agent_turn(1, ts)
            summary = item.get("summary")
            parts = summary if isinstance(summary, list) else []
            texts = [p.get("text") for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
            if texts:
                self.turns[t]["reason"] = "\n\n".join(texts)
            plain = len(parts) == 1 and set(parts[0]) == {"type", "text"} and parts[0]["type"] == "summary_text"
            self.keep_rest(base, item, ("type", "summary") if plain and texts else ("type",))
            self.plan.append(["a", t, "reason"])
        elif kind in CALL_ITEMS or kind in HOSTED_FN:
            self.call(item, base, ts, kind)
        elif kind in OUTPUT_ITEMS:
            self.output(item, base, ts, kind)
        elif kind == "compaction":
            self.close()
            t = self.new_turn("system", "", ts)
            self.turns[t].update(kind="context", extra={"compaction": "item"})
            self.keep_rest(base, item, ("type",))
            self.plan.append(["y", t])
            self.close()
        else:
            if ts is not None:
                self.kept.keep(*ts)
            self.keep_rest(base, item, ())
            self.plan.append(["i"])  # an item type this reader does not know: kept whole (its pointers above)

    def call(self, item: dict, base: str, ts: tuple[str, Any] | None, kind: str) -> None:
        if kind in CALL_ITEMS:
            id_key, arg_key, call_kind = CALL_ITEMS[kind]
            fn = item.get("name")
            if not (isinstance(fn, str) and fn):
                fn = "unknown"  # a call without a name: the name the training outputs give unknown calls
        else:
            id_key = "call_id" if isinstance(item.get("call_id"), str) and item["call_id"] else "id"
            arg_key, call_kind, fn = "action", kind, HOSTED_FN[kind]
        fn_used = kind in CALL_ITEMS and isinstance(item.get("name"), str) and item["name"] != ""
        t = self.agent_turn(3, ts)
        source_id = item.get(id_key)
        if not (isinstance(source_id, str) and source_id):
            source_id, id_key = None, None
        tcid = source_id or f"{kind}-{len(self.plan)}"
        if tcid in self.tcids:
            tcid = f"{tcid}#{len(self.plan)}"
            if source_id is not None:
                self.renamed[tcid] = source_id
        self.tcids.add(tcid)
        call: dict[str, Any] = {"tcid": tcid, "fn": fn, "args": None}
        if arg_key in item:
            args = item[arg_key]
            if arg_key == "arguments" and isinstance(args, str):
                ok, parsed = try_loads(args)
                if ok and isinstance(parsed, (dict, list)) and orjson.dumps(parsed).decode() == args:
                    args = parsed
            call["args"] = args
        else:
            arg_key = None
        if call_kind is not None:
            call["kind"] = call_kind
        status = item.get("status")
        if isinstance(status, str) and status:
            call["response"] = {"status": status}
        calls = self.turns[t].setdefault("tool_calls", [])
        calls.append(call)
        if source_id is not None:
            self.calls[source_id] = (t, len(calls) - 1)
        used = ("type", *(k for k in (id_key, arg_key) if k), *(("name",) if fn_used else ()))
        self.keep_rest(base, item, used)
        self.plan.append(["c", t, len(calls) - 1, kind, id_key, arg_key, fn_used])

    def output(self, item: dict, base: str, ts: tuple[str, Any] | None, kind: str) -> None:
        source_id = item.get("call_id")
        where = self.calls.get(source_id) if isinstance(source_id, str) else None
        if ts is not None:
            self.kept.keep(*ts)
        if where is not None and "result" not in self.turns[where[0]]["tool_calls"][where[1]] and "output" in item:
            t, k = where
            call = self.turns[t]["tool_calls"][k]
            call["result"] = item["output"]
            code = exit_code(item["output"])
            if code is not None:
                response = call.setdefault("response", {})
                response["exit_code"] = code
                if code != 0:
                    response["status"] = "error"
            if isinstance(item.get("success"), bool) and item["success"] is False:
                call.setdefault("response", {})["status"] = "error"
            self.keep_rest(base, item, ("type", "call_id", "output"))
            self.plan.append(["o", t, k, kind])
            return
        # An output no call of this file answers (its call rolled back, or cut off): a tool turn of its own.
        self.close()
        result: dict[str, Any] = {"content": item.get("output", "")}
        if isinstance(source_id, str):
            result["source_call_id"] = source_id
        t = self.new_turn("tool", "", None)
        self.turns[t]["observation"] = {"results": [result]}
        used = ("type", "output", *(("call_id",) if isinstance(source_id, str) else ()))
        self.keep_rest(base, item, used)
        self.plan.append(["u", t, kind, "output" in item])
        self.close()

    def compacted(self, i: int, payload: dict, ts: tuple[str, Any] | None) -> None:
        self.close()
        message = payload.get("message")
        t = self.new_turn("system", message if isinstance(message, str) else "", ts)
        extra: dict[str, Any] = {"compaction": "compacted"}
        used = ["message"] if isinstance(message, str) else []
        if "replacement_history" in payload:
            extra["replacement_history"] = payload["replacement_history"]
            used.append("replacement_history")
        self.turns[t].update(kind="context", extra=extra)
        self.keep_rest(f"/{i}/payload", payload, tuple(used))
        self.plan.append(["x", t, isinstance(message, str)])
        self.close()

    def token_count(self, info: Any) -> None:
        if not isinstance(info, dict):
            return
        total, last = info.get("total_token_usage"), info.get("last_token_usage")
        if total is not None and total == self.prev_total:
            return  # a repeat of the previous count
        self.prev_total = total
        if not isinstance(last, dict):
            return
        self.usage_lines += 1
        agents = [t for t in range(len(self.turns)) if self.turns[t]["src"] == "agent"]
        if agents and "metrics" not in self.turns[agents[-1]] and agents[-1] > self.last_usage_turn():
            self.turns[agents[-1]]["metrics"] = _usage_metrics(last)
        else:
            for key, value in last.items():
                if type(value) is int:
                    self.unattributed[key] = self.unattributed.get(key, 0) + value
        self.close()

    def last_usage_turn(self) -> int:
        for t in range(len(self.turns) - 1, -1, -1):
            if "metrics" in self.turns[t]:
                return t
        return -1

    # ------------------------------------------------------------------------------------------ finish

    def finish(self, dropped_lines: int, dropped_turns: int) -> dict[str, Any]:
        story = self.story
        if "session" not in story:
            if not self.document_id:
                raise self.error("", "the rollout has no session_meta id and no file name to name its session")
            story["session"] = self.document_id
        if self.agent_model is not None:
            self.agent["model"] = self.agent_model
        story["agent"] = self.agent
        story["turns"] = self.turns
        hints: dict[str, Any] = {"version": 1, "layout": self.layout, "lines": self.plan}
        if dropped_lines:
            hints["rolled_back"] = {"turns": dropped_turns, "lines": dropped_lines}
        if self.unattributed:
            hints["unattributed_usage"] = self.unattributed
        meta: dict[str, Any] = {HINTS: hints}
        if self.renamed:
            meta[SOURCE_CALL_IDS] = self.renamed
        story["meta"] = meta
        if not self.turns:
            raise self.error("", "the rollout holds no message, call or compaction: nothing to read as turns")
        try:
            return self.kept.finish(story)
        except PchronicleError as exc:
            raise self.error(exc.pointer or "", f"the rollout gives no valid Storyline: {exc.reason}") from None


def read_rollout(lines: list[Any], document_id: str | None = None, numbers: list[int] | None = None) -> dict:
    """The Storyline document of a rollout's parsed lines (``numbers``: their 1-based line numbers, for errors).
    ``FormatError`` when the first line is neither layout's."""
    layout = layout_of(lines[0]) if lines else None
    if layout is None:
        raise FormatError(
            "not a Codex rollout: the first line is neither {timestamp, type, payload} nor the pre-wrapper "
            "{id, timestamp, instructions} header",
            pointer="/0",
            document_id=document_id,
            line=numbers[0] if numbers else None,
        )
    numbers = numbers or list(range(1, len(lines) + 1))
    return _Reader(document_id, layout).read(list(zip(numbers, lines, strict=True)))
