"""One Codex rollout (its parsed lines) → one Storyline document (the table in docs/formats/codex.md).

Responses items are read by the shared message model (``formats/messages``: ``responses.read`` and
``TurnBuilder``); this module adds what is Codex's own: the rollout lines around the items, usage from
``token_count``, rollbacks, compactions and the session. Every line is planned (``/meta/codex/lines``): the
message model's export hint of its item, the turn it became, or kept whole as residual under ``/{i}`` (``i``:
the line's index among the file's non-blank lines). What a mapped line holds beyond the table stays residual
under its own pointer, so the writer gives every line back.

>>> lines = [
...     {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s1", "cli_version": "0.1"}},
...     {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
...      "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}},
...     {"timestamp": "2026-01-01T00:00:02Z", "type": "response_item",
...      "payload": {"type": "function_call", "name": "ls", "arguments": "{}", "call_id": "c1"}},
...     {"timestamp": "2026-01-01T00:00:03Z", "type": "response_item",
...      "payload": {"type": "function_call_output", "call_id": "c1", "output": "a.txt"}}]
>>> story = read_rollout(lines, "r.jsonl")
>>> [(t["src"], t["msg"]) for t in story["turns"]], story["turns"][1]["observation"]["results"]
([('user', 'hi'), ('agent', '')], [{'content': 'a.txt', 'source_call_id': 'c1'}])
"""

from __future__ import annotations

import re
from typing import Any

from ...errors import FormatError, NoConversationError, PchronicleError
from ...jsonio import try_loads
from ...linking import SOURCE_CALL_IDS
from ...pointer import join
from ...schema import is_time
from ..base import INTERRUPTED
from ..messages import Call, Message, TurnBuilder, responses
from ..messages.model import Result, strip
from ..residual import Residual, origin
from .exec_stream import read_exec
from .fields import (
    AGENT_ID,
    AGENT_MESSAGE,
    AGENT_MESSAGE_ROUTE,
    AGENT_MESSAGE_TEXT,
    API_ERROR_COUNT,
    CODE_MODE_EXIT,
    CODE_MODE_FAILED,
    COMPACTION_ITEMS,
    EXEC_END,
    EXEC_FIRST,
    FAILED_OUTPUT_PREFIXES,
    FORKED_FROM,
    HINTS,
    HISTORY_START,
    HOOK_KIND_PREFIX,
    HOSTED_ARGS,
    HOSTED_FN,
    HOSTED_OUTPUTS,
    INHERITED,
    NAME,
    PRE_WRAPPER_HEADER,
    REL_FORK,
    SESSION,
    TASK_COMPLETE,
    TASK_ERROR,
    WRAPPER_TYPES,
    context_by_kinds,
    contextual,
    usage_metrics,
)
from .line_keeping import LineKeeping

__all__ = ["code_mode_outcome", "exit_code", "layout_of", "parent_thread", "read_rollout"]

# An exec output's exit code in its text: the unified exec's "Process exited with code N", the shell's "Exit code:
# N", and a sandbox refusal (codex-rs ``SandboxErr::Denied``: "failed in sandbox … with execution error: sandbox
# denied exec error, exit code: N, stdout: …").
_EXIT = re.compile(r"(?:Process exited with code|Exit code:|sandbox denied exec error, exit code:)\s*(-?\d+)")


def layout_of(first: Any) -> str | None:
    """``"wrapper"`` or ``"bare"`` (pre-wrapper) for a rollout's first line, ``"exec"`` for the first line of
    ``codex exec --json`` output (``exec_stream.py``), None when it is none of them.

    >>> layout_of({"timestamp": "t", "type": "session_meta", "payload": {}}), layout_of({"id": "x", "timestamp": "t",
    ...     "instructions": None}), layout_of({"type": "message"})
    ('wrapper', 'bare', None)
    >>> layout_of({"type": "thread.started", "thread_id": "019f"})
    'exec'
    """
    if not isinstance(first, dict):
        return None
    if first.get("type") == EXEC_FIRST[0] and set(first) == {"type", EXEC_FIRST[1]}:
        return "exec"
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


def code_mode_outcome(output: Any) -> tuple[int | None, bool]:
    """``(exit code, failed)`` of a code-mode ``exec`` output (a list of ``input_text`` parts): the exit code of its
    commands' JSON result parts (the first that is not 0, else 0; None when none reports one), and whether its status
    line says the cell failed (``fields.CODE_MODE_FAILED``).

    >>> code_mode_outcome([{"type": "input_text", "text": "Script completed\\nWall time 0.1 seconds\\nOutput:\\n"},
    ...                    {"type": "input_text", "text": '{"chunk_id":"5d","exit_code":0,"output":"a1"}'}])
    (0, False)
    >>> code_mode_outcome([{"type": "input_text", "text": "Script failed\\nWall time 0.0 seconds\\nOutput:\\n"}])
    (None, True)
    """
    texts = [p.get("text") for p in output if isinstance(p, dict)] if isinstance(output, list) else []
    if not texts or not isinstance(texts[0], str):
        return None, False
    codes = []
    for text in texts[1:]:
        if isinstance(text, str) and text.startswith("{"):
            ok, value = try_loads(text)
            code = value.get(CODE_MODE_EXIT) if ok and isinstance(value, dict) else None
            if type(code) is int and -(2**63) <= code < 2**63:
                codes.append(code)
    code = next((c for c in codes if c != 0), 0) if codes else None
    return code, texts[0].startswith(CODE_MODE_FAILED)


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


def _contextual(msg: Any) -> str | None:
    """``fields.contextual`` of a user turn's message: of its text, or of any text part (Codex's rule: one
    contextual part makes the message context)."""
    if isinstance(msg, str):
        return contextual(msg)
    parts = msg if isinstance(msg, list) else ()
    texts = (p.get("text") for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
    return next((name for text in texts if (name := contextual(text)) is not None), None)


def _hosted(item: dict, kind: str) -> Message:
    """A hosted tool call the message model has no reader for (``tool_search_call``, ``image_generation_call``):
    a call named ``HOSTED_FN[kind]`` whose arguments are its ``arguments`` (what Codex writes for a tool search),
    else its ``action``; the other keys (an image's base64 ``result`` too) are leftovers."""
    m = Message(responses.SHAPE, "assistant", continues=True)
    id_key = next((k for k in ("call_id", "id") if isinstance(item.get(k), str) and item[k]), None)
    args_key = next((k for k in HOSTED_ARGS if k in item), None)
    pointers = {"id": f"/{id_key}"} if id_key else {}
    if args_key:
        pointers["arguments"] = f"/{args_key}"
    m.add_call(
        Call(
            HOSTED_FN[kind], item[args_key] if args_key else {}, item.get(id_key) if id_key else None, HOSTED_FN[kind]
        ),
        **pointers,
    )
    for key, value in item.items():
        if key not in ("type", args_key, id_key):
            m.leave(f"/{key}", value)
    m.skeleton = strip(item, [p for p, _ in m.slots] + list(m.leftovers))
    return m


def _hosted_output(item: dict, kind: str) -> Message:
    """A hosted output (``tool_search_output``): the result of the call its ``call_id`` names (without one: the
    first unanswered search), its content the value ``HOSTED_OUTPUTS[kind]`` names (the tools a search loaded); the
    other keys are leftovers."""
    m = Message(responses.SHAPE, "tool")
    key, answers = HOSTED_OUTPUTS[kind]
    cid = item.get("call_id") if isinstance(item.get("call_id"), str) else None
    pointers = {"call_id": "/call_id"} if cid is not None else {}
    if key in item:
        pointers["content"] = f"/{key}"
    # A server-run search (``execution: "server"``) has no call_id: its output answers the search before it,
    # linked by the call's name and order (the builder's rule for results without an id).
    m.add_result(Result(item.get(key, ""), cid, None if cid is not None else HOSTED_FN[answers]), **pointers)
    for k, value in item.items():
        if k != "type" and f"/{k}" not in pointers.values():
            m.leave(f"/{k}", value)
    m.skeleton = strip(item, [p for p, _ in m.slots] + list(m.leftovers))
    return m


def _agent_message(item: dict) -> Message:
    """A message between agents (``fields.AGENT_MESSAGE``): a user-role message whose text is its ``input_text``
    parts; every other part (the opaque ``encrypted_content``) and key (``author``, ``recipient``, ``id``…) is a
    leftover."""
    m = Message(responses.SHAPE, "user")
    content = item.get("content")
    for p, part in enumerate(content if isinstance(content, list) else ()):
        ptr = f"/content/{p}"
        if isinstance(part, dict) and part.get("type") == AGENT_MESSAGE_TEXT and isinstance(part.get("text"), str):
            m.add_text(f"{ptr}/text", part["text"])
            for key, value in part.items():
                if key not in ("type", "text"):
                    m.leave(join(ptr, key), value)
        else:
            m.leave(ptr, part)
    for key, value in item.items():
        if key != "type" and (key != "content" or not isinstance(content, list)):
            m.leave(f"/{key}", value)
    m.skeleton = strip(item, [p for p, _ in m.slots] + list(m.leftovers))
    return m


class _Reader(LineKeeping):
    def __init__(self, document_id: str | None, layout: str) -> None:
        self.document_id = document_id
        self.layout = layout
        self.kept = Residual(NAME, document_id)
        self.builder = TurnBuilder()  # the shared message model's turns: Responses items → turns
        self.turns: list[dict[str, Any]] = self.builder.turns
        self.plan: list[list[Any]] = []
        self.model: Any = None
        self.effort: Any = None
        self.agent_model: str | None = None
        self.story: dict[str, Any] = {"schema_version": "storyline/v1", "origin": origin(NAME, document_id)}
        self.agent: dict[str, Any] = {"id": AGENT_ID}
        self.prev_total: Any = None
        # Where a response's token_count stands: None until the first count with usage; True when it came
        # before any agent turn waited for it (Codex 0.58 wrote a response's items after its count), then each
        # count is held in ``pending`` for the agent turn that opens next.
        self.usage_first: bool | None = None
        self.pending: dict | None = None
        self.unattributed: dict[str, int] = {}
        self.interrupted = 0  # turn_aborted events of reason "interrupted": the user stopped the agent
        self.api_errors = 0  # task_complete events with an error: turns the API failed
        self.exec_ends: dict[str, int] = {}  # exec_command_end: call_id → exit code
        self.line: int | None = None
        self.history_start: int | None = None  # fields.HISTORY_START of the session's meta

    def error(self, pointer: str, reason: str) -> FormatError:
        return FormatError(reason, pointer=pointer, document_id=self.document_id, line=self.line)

    # ------------------------------------------------------------------------------------------ lines

    def read(self, items: list[tuple[int, Any]]) -> dict[str, Any]:
        dropped, dropped_turns = _rolled_back(items) if self.layout == "wrapper" else (set(), 0)
        for i, (line, value) in enumerate(items):
            self.line = line
            if line in dropped:
                self.keep_line(i, value)
                continue
            before = len(self.turns)
            self.one(i, value)
            if self.inherited(value):
                self.mark_inherited(before)
        return self.finish(len(dropped), dropped_turns)

    def inherited(self, value: Any) -> bool:
        """A line of the parent's history a subagent was given (``fields.HISTORY_START``): its ``ordinal`` is below
        the first of the subagent's own."""
        ordinal = value.get("ordinal") if isinstance(value, dict) else None
        return self.history_start is not None and type(ordinal) is int and ordinal < self.history_start

    def mark_inherited(self, first: int) -> None:
        """The turns from ``first`` on are the parent's, replayed: context turns (one already context keeps why)."""
        for turn in self.turns[first:]:
            if not turn.get("copied"):
                turn.update(copied=True, kind="context")
                turn.setdefault("extra", {}).setdefault(NAME, {})["context"] = INHERITED

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
        elif kind == "event_msg" and payload.get("type") == EXEC_END:
            cid, code = payload.get("call_id"), payload.get("exit_code")
            if isinstance(cid, str) and type(code) is int and -(2**63) <= code < 2**63:
                self.exec_ends[cid] = code
        elif kind == "event_msg" and payload.get("type") == TASK_COMPLETE and isinstance(payload.get(TASK_ERROR), dict):
            self.api_errors += 1  # the API failed the turn: no answer follows its prompt
        elif kind == "event_msg" and payload.get("type") == "turn_aborted" and payload.get("reason") == "interrupted":
            # Codex's TurnAbortReason is interrupted, replaced or review_ended: only the first is the user's.
            self.interrupted += 1
        self.keep_line(i, value)

    def header(self, i: int, value: dict) -> None:
        self.session_fields(f"/{i}", value)
        self.plan.append(["h"])

    def session_meta(self, i: int, value: dict, payload: dict) -> None:
        self.keep_rest(f"/{i}", value, ("type", "payload"))
        self.session_fields(f"/{i}/payload", payload)
        parent = parent_thread(payload)
        fork = payload.get(FORKED_FROM)
        if parent is not None:
            self.story["parent"] = {"psid": parent, "rel": "spawn"}
        elif isinstance(fork, str) and fork:
            self.story["parent"] = {"psid": fork, "rel": REL_FORK}
        start = payload.get(HISTORY_START)
        if type(start) is int and start > 0:
            self.history_start = start
        self.plan.append(["s"])

    def session_fields(self, base: str, obj: dict) -> None:
        """The session's keys by ``fields.SESSION`` (a value of another type stays residual, as every other key)."""
        for key, value in obj.items():
            entry = SESSION.get(key)
            kind = entry[2] if entry else None
            fits = (
                (kind == "nestr" and isinstance(value, str) and value != "")
                or (kind == "str" and isinstance(value, str))
                or (kind == "time" and isinstance(value, str) and is_time(value))
            )
            if entry is not None and fits:
                (self.story if entry[0] == "document" else self.agent)[entry[1]] = value
            else:
                self.kept.keep(join(base, key), value)

    # ------------------------------------------------------------------------------------------ turns

    def new_turn(self, src: str, msg: Any, ts: tuple[str, Any] | None) -> int:
        """A turn of this reader's own (a compaction), after the ones the message model built."""
        self.builder.interrupt()
        self.unattribute(self.pending)  # a compaction's own count is no response's
        self.pending = None
        turns = self.builder.turns
        turn: dict[str, Any] = {"id": len(turns) + 1, "src": src, "msg": msg}
        self.stamp(turn, ts)
        turns.append(turn)
        return len(turns) - 1

    def stamp(self, turn: dict[str, Any], ts: tuple[str, Any] | None) -> bool:
        """Give a turn its first line's timestamp (True), or keep it residual (False)."""
        if ts is not None and isinstance(ts[1], str) and is_time(ts[1]):
            turn["ts"] = ts[1]
            return True
        if ts is not None:
            self.kept.keep(*ts)
        return False

    def item(self, i: int, item: dict, base: str, ts: tuple[str, Any] | None, bare: bool = False) -> None:
        """A Responses item, read by the shared message model (``formats/messages``) and placed in turns."""
        kind = item.get("type")
        if isinstance(kind, str) and kind in COMPACTION_ITEMS:  # a list or object type is unhashable: not looked up
            t = self.new_turn("system", "", ts)
            self.turns[t].update(kind="context", extra={"compaction": COMPACTION_ITEMS[kind]})
            # the writer gives the item back as ``compaction``; another type's name stays residual
            self.keep_rest(base, item, ("type",) if kind == "compaction" else ())
            self.plan.append(["y", t])
            return
        if kind == AGENT_MESSAGE:
            m = _agent_message(item)
        elif isinstance(kind, str) and kind in HOSTED_FN:
            m = _hosted(item, kind)
        elif isinstance(kind, str) and kind in HOSTED_OUTPUTS:
            m = _hosted_output(item, kind)
        elif responses.is_item(item):
            m = responses.read(item)
        else:
            if ts is not None:
                self.kept.keep(*ts)
            self.keep_rest(base, item, ())
            self.plan.append(["i"])  # an item type the message model does not know: kept whole
            return
        turns = self.builder.turns
        before = len(turns)
        hint = self.builder.add(m, base, self.kept.keep, where=i)
        t: int | None = None
        if len(turns) > before:
            t = len(turns) - 1
            turn = turns[t]
            if self.pending is not None:  # usage-first order: the count before a response is its own
                if turn["src"] == "agent":
                    turn["metrics"] = usage_metrics(self.pending)
                else:
                    self.unattribute(self.pending)
                self.pending = None
            if turn["src"] == "agent":
                if self.model is not None:
                    turn["model"] = self.model
                if self.effort is not None:
                    turn["effort"] = self.effort
            elif turn["src"] == "user" and kind == AGENT_MESSAGE:
                route = {k: item[k] for k in AGENT_MESSAGE_ROUTE if isinstance(item.get(k), str)}
                turn.update(copied=True, kind="context", extra={NAME: {"context": AGENT_MESSAGE, **route}})
            elif turn["src"] == "user" and (context := _contextual(turn.get("msg")) or context_by_kinds(item)):
                turn.update(copied=True, kind="context", extra={NAME: {"context": context}})
            elif turn["src"] == "developer" and (context := context_by_kinds(item) or "").startswith(HOOK_KIND_PREFIX):
                turn.update(copied=True, kind="context", extra={NAME: {"context": context}})
            if not self.stamp(turn, ts):
                t = None
        elif ts is not None:
            self.kept.keep(*ts)
        self.plan.append(["r", hint, t])

    def compacted(self, i: int, payload: dict, ts: tuple[str, Any] | None) -> None:
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

    def token_count(self, info: Any) -> None:
        if not isinstance(info, dict):
            return
        total, last = info.get("total_token_usage"), info.get("last_token_usage")
        if total is not None and total == self.prev_total:
            return  # a repeat of the previous count
        self.prev_total = total
        self.builder.interrupt()  # the model response is over: the next items are another turn
        if not isinstance(last, dict):
            return
        t = self.builder.last_agent
        waiting = t is not None and "metrics" not in self.turns[t] and t > self.last_usage_turn()
        if self.usage_first is None:
            self.usage_first = not waiting
        if self.usage_first:
            self.unattribute(self.pending)  # a count no response followed
            self.pending = last
        elif waiting and t is not None:
            self.turns[t]["metrics"] = usage_metrics(last)
        else:
            self.unattribute(last)

    def unattribute(self, usage: dict | None) -> None:
        """A usage no agent turn takes: counted in ``/meta/codex/unattributed_usage``."""
        for key, value in (usage or {}).items():
            if type(value) is int:
                self.unattributed[key] = self.unattributed.get(key, 0) + value

    def last_usage_turn(self) -> int:
        for t in range(len(self.turns) - 1, -1, -1):
            if "metrics" in self.turns[t]:
                return t
        return -1

    def exit_codes(self) -> None:
        """Each call's ``response`` derived from its output: the exit code its ``exec_command_end`` event reports,
        else the one its exec output reports (status ``error`` when it is not 0: a failure in ``tool_stats``), else
        status ``error`` for an output Codex writes for a failed call (``fields.FAILED_OUTPUT_PREFIXES``)."""
        calls = {c["tcid"]: c for turn in self.turns for c in turn.get("tool_calls") or ()}
        source = self.builder.source_ids
        for turn in self.turns:
            for res in (turn.get("observation") or {}).get("results") or ():
                tcid = res.get("source_call_id")
                call = calls.get(tcid)
                content = res.get("content")
                code = self.exec_ends.get(source.get(tcid, tcid)) if call is not None else None
                failed = False
                if code is None and call is not None:
                    code, failed = (
                        code_mode_outcome(content) if isinstance(content, list) else (exit_code(content), False)
                    )
                if code is not None:
                    failed = failed or code != 0
                    call["response"] = {"exit_code": code, **({"status": "error"} if failed else {})}
                elif call is not None and (
                    failed or (isinstance(content, str) and content.startswith(FAILED_OUTPUT_PREFIXES))
                ):
                    call["response"] = {"status": "error"}

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
        self.unattribute(self.pending)
        self.exit_codes()
        story["turns"] = self.turns
        hints: dict[str, Any] = {"version": 1, "layout": self.layout, "lines": self.plan}
        if dropped_lines:
            hints["rolled_back"] = {"turns": dropped_turns, "lines": dropped_lines}
        if self.unattributed:
            hints["unattributed_usage"] = self.unattributed
        if self.interrupted:
            hints[INTERRUPTED] = self.interrupted
        if self.api_errors:
            hints["counts"] = {API_ERROR_COUNT: self.api_errors}
        meta: dict[str, Any] = {HINTS: hints}
        if self.builder.source_ids:
            meta[SOURCE_CALL_IDS] = self.builder.source_ids
        story["meta"] = meta
        if not self.turns:
            raise NoConversationError(
                "the rollout holds no message, call or compaction: only its header and events",
                document_id=self.document_id,
            )
        try:
            return self.kept.finish(story)
        except PchronicleError as exc:
            raise self.error(exc.pointer or "", f"the rollout gives no valid Storyline: {exc.reason}") from None


def read_rollout(lines: list[Any], document_id: str | None = None, numbers: list[int] | None = None) -> dict:
    """The Storyline document of a rollout's parsed lines (``numbers``: their 1-based line numbers, for errors).
    ``FormatError`` when the first line is no layout's."""
    layout = layout_of(lines[0]) if lines else None
    if layout is None:
        raise FormatError(
            "not a Codex rollout: the first line is not {timestamp, type, payload}, the pre-wrapper "
            "{id, timestamp, instructions} header or the thread.started of codex exec --json output",
            pointer="/0",
            document_id=document_id,
            line=numbers[0] if numbers else None,
        )
    if layout == "exec":
        return read_exec(lines, document_id, numbers)
    numbers = numbers or list(range(1, len(lines) + 1))
    return _Reader(document_id, layout).read(list(zip(numbers, lines, strict=True)))
