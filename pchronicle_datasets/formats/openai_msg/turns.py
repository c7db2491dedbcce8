"""One row's messages → turns (RFC-0009 table 2): the history copies it resends, the context turns (first row
only), the request turn, the response turn with its tool calls, and the tool results it carries; and, for issue
#12, a turn or a result for every other new message, so none is residual whole (docs/formats/openai-msg.md,
reading 2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...jsonio import json_type, try_loads
from ...markup_tags import FUNCTION, PARAMETER, TOOL_CALL
from ...pointer import join
from ..markup import blocks, named_blocks
from .hints import set_form
from .history import (
    COMPARED_KEYS,
    ECHO_ROLES,
    History,
    dumped,
    history_key,
    resends,
    same_copy,
    same_json,
    same_values,
)
from .state import SessionState, SourceRow
from .tables import (
    CONTEXT_KIND,
    CONTEXT_SRC,
    EMPTY_MSG_KEYS,
    REASONING_KEYS,
    RESULT_ROLES,
    empty,
    message_role,
    nonempty_str,
    role_src,
)
from .tables import valid_output as is_output

__all__ = ["CTX", "MORE", "REQ", "RESP", "RowRead", "RowTurns", "marker_calls"]

# What each turn of a row is, for the ids the session gives them: RFC-0009's context turns (1..context_count),
# request and response (by formula from step_id), and the turns of the messages RFC-0009 leaves out (``MORE``:
# ids after every derived one).
CTX, MORE, REQ, RESP = "ctx", "more", "req", "resp"


#: A call's keys RFC-0009 consumes (its ``type`` too when it is ``function``), and its function's: the others are
#: residual, a new message's always (``_tool_calls``), a copy's when the message it copies holds them otherwise.
CALL_CONSUMED = ("id", "function")
FUNCTION_CONSUMED = ("name", "arguments")


@dataclass
class RowRead:
    """One row read: its ``turns`` as ``(what, turn)`` in document order, the request turn (or None), the
    response turn, the history the next row is compared with, and the results of tool messages without an id
    with the turn that holds each (the session adds them once the turns have ids)."""

    turns: list[tuple[str, dict]]
    request: dict | None
    response: dict
    history: History
    loose: list[tuple[int, dict, dict]]  # tool output without an id: (message index, the turn holding it, result)


class RowTurns:
    """Reads the messages and the response of one row, in the context of its session."""

    def __init__(self, session: SessionState, source: SourceRow) -> None:
        self.s = session
        self.src = source
        self.hint = source.hint
        self.base = source.base

    def error(self, pointer: str, reason: str):
        return self.s.error(pointer, reason, self.src.line)

    def rel(self, pointer: str) -> str:
        """A source pointer relative to the row (``messages/3/content``), as the export hints name values."""
        return pointer.split("/", 3)[3]

    # ---------------------------------------------------------------------------------------- the row

    def read(self, first: bool, history: History) -> RowRead:
        """The row's turns in document order, and the history for the next row."""
        msgs = self._messages()
        text = dumped(msgs)
        p, keys, extra, same = self._copies(msgs, text, history)
        self.hint["p"], self.hint["n"] = p, len(msgs)
        new = range(p, len(msgs))
        last_user = next((m for m in reversed(new) if msgs[m].get("role") == "user"), None)
        output, out_index, out_ptr = self._output(msgs, new)
        self.hint["out"] = out_index

        # (position in messages, what, turn): sorted at the end, so each turn sits where its message was.
        self.placed: list[tuple[float, str, dict]] = []
        self.more: list[int] = []
        self.results: list[dict] = []  # RFC-0009's: the response turn's observation results
        self.tool_idx: list[int] = []
        self.loose: list[tuple[int, dict | None, dict]] = []  # (m, holder turn or None: the response, result)
        ctx_idx: list[int] = []
        stop = p
        if first:
            # Context turns (first row only): the messages before the last user (or the output). RFC-0009's are
            # system/user/assistant (they make context_count); any other role but tool output is a context turn
            # of its own src, with an id after the derived ones (docs/formats/openai-msg.md, "What may be
            # residual").
            stop = last_user if last_user is not None else (out_index if out_index != -1 else len(msgs))
            for m in range(p, stop):
                role = msgs[m].get("role")
                if type(role) is str and role in CONTEXT_SRC:
                    self.placed.append((m, CTX, self._context_turn(msgs[m], f"{self.base}/messages/{m}")))
                    ctx_idx.append(m)
                elif role not in RESULT_ROLES:
                    self.placed.append((m, MORE, self._context_turn(msgs[m], f"{self.base}/messages/{m}")))
                    self.more.append(m)
            self.hint["ctx"] = ctx_idx

        echoes = self._echoes(msgs, keys, new, {last_user, out_index})
        request = None
        if last_user is not None:
            request = self._request_turn(msgs[last_user], f"{self.base}/messages/{last_user}")
            self.placed.append((last_user, REQ, request))
            self.hint["user"] = last_user
        # Results answer calls made before them: resolve those that precede the output before its calls are
        # registered (a reused id such as `call_0` is renamed only for the new call), the rest after.
        skip = {last_user, out_index, *ctx_idx, *self.more, *echoes}
        split = len(msgs) if out_index == -1 else out_index
        self._new_messages(msgs, range(p, split), skip, stop)
        response_turn = self._response_turn(output, out_ptr)
        # The response sits at its message, or after the messages; never before the request turn.
        at = len(msgs) if out_index == -1 else out_index
        self.placed.append((at if last_user is None or at > last_user else last_user + 0.5, RESP, response_turn))
        self._new_messages(msgs, range(max(p, split), len(msgs)), skip, stop)
        if self.results:
            response_turn["observation"] = {"results": self.results}
            self.hint["tools"] = self.tool_idx
        if self.more:
            self.hint["more"] = sorted(self.more)
        for m in extra:  # only copies that carry more than the compared fields can leave residual
            if m >= p:
                break
            self._copy_residual(msgs[m], f"{self.base}/messages/{m}")
        for m in range(same, p):  # copies not resent equal: their calls may hold other unconsumed values
            self._copy_spelling(msgs[m], history.held[m], f"{self.base}/messages/{m}")

        held = [*msgs, output] if out_index == -1 else msgs
        history = History(msgs, keys + ([history_key(output)] if out_index == -1 else []), extra, held, text)
        self.s.held.add(held, history.keys, same)
        self.placed.sort(key=lambda x: x[0])
        loose = [(m, holder if holder is not None else response_turn, res) for m, holder, res in self.loose]
        return RowRead([(what, t) for _, what, t in self.placed], request, response_turn, history, loose)

    def _echoes(self, msgs: list[dict], keys: list, new: range, selected: set) -> list[int]:
        """The new messages that repeat a message an earlier row held (``Held``): an assistant message whose calls
        the session already has, or a tool result it already has, resent by a gateway that logs only each request's
        new messages. They are history copies (RFC-0009: no new turn, no residual for their compared fields), noted
        in the hints so the same-source writer puts them back."""
        found = []
        for m in new:
            role = msgs[m].get("role")
            if (
                m in selected
                or type(role) is not str
                or role not in ECHO_ROLES
                or (role == "tool" and not nonempty_str(msgs[m].get("tool_call_id")))
            ):
                continue  # output without an id answers no call by itself: the same text twice is two outputs
            held = self.s.held.find(msgs[m], keys[m])
            if held is None:
                continue
            at, projected = held
            found.append(m)
            self.hint.setdefault("echo", []).append([m, at])
            # Every value the held message does not spell the same way stays residual, so the writer gives the
            # echo back exactly (a reasoning_content, a name, arguments re-serialised by the client).
            pointer = f"{self.base}/messages/{m}"
            for k, value in msgs[m].items():
                if k not in projected or not same_json(projected[k], value):
                    self.s.keep(join(pointer, k), value)
        return found

    def _messages(self) -> list[dict]:
        row = self.src.row
        msgs = row.get("messages")
        if "messages" in row:
            self.hint["keys"].append("messages")
        if msgs is None:
            if "messages" in row:
                set_form(self.hint, "messages", "null")
            msgs = []
        if not isinstance(msgs, list):
            raise self.error(f"{self.base}/messages", f"messages must be an array, got {type(msgs).__name__}")
        for m, msg in enumerate(msgs):
            if not isinstance(msg, dict):
                raise self.error(f"{self.base}/messages/{m}", f"a message is a JSON object, got {type(msg).__name__}")
        return msgs

    @staticmethod
    def _copies(msgs: list[dict], text: bytes | None, history: History) -> tuple[int, list, list, int]:
        """``(p, keys, extra, same)``: messages ``[0, p)`` are copies of the previous row's, the history key of every
        message, which messages carry keys beyond the compared ones, and how many are the previous row's messages
        resent equal (``[0, same)``: the others' calls may hold values the RFC does not consume otherwise)."""
        prev_msgs, prev_keys, prev_extra = history.msgs, history.keys, history.extra
        n_prev = len(prev_msgs)
        if resends(msgs, text, history):
            # The usual row: it resends the previous row's messages unchanged (one comparison),
            # so their keys and which of them carry extra keys are known already.
            keys = prev_keys[:n_prev] + [history_key(msg) for msg in msgs[n_prev:]]
            extra = [*prev_extra, *(m for m in range(n_prev, len(msgs)) if not msgs[m].keys() <= COMPARED_KEYS)]
            p = same = n_prev
        else:
            keys = [
                prev_keys[m] if m < n_prev and same_values(msg, prev_msgs[m]) else history_key(msg)
                for m, msg in enumerate(msgs)
            ]
            extra = [m for m, msg in enumerate(msgs) if not msg.keys() <= COMPARED_KEYS]
            p = same = 0
        while p < len(msgs) and p < len(prev_keys) and same_copy(keys[p], prev_keys[p]):
            p += 1
        return p, keys, extra, same

    def _output(self, msgs: list[dict], new: range) -> tuple[dict, int, str]:
        """The row's output: ``response`` when it is a valid output, else the last valid assistant message
        among the new ones (``index`` -1 for ``response``)."""
        row = self.src.row
        response = row.get("response")
        if "response" in row:
            self.hint["keys"].append("response")
        if is_output(response):
            return response, -1, f"{self.base}/response"
        if "response" in row and response is not None:
            self.s.keep(f"{self.base}/response", response)
        for m in reversed(new):
            if msgs[m].get("role") == "assistant" and is_output(msgs[m]):
                return msgs[m], m, f"{self.base}/messages/{m}"
        where = f"{self.base}/response" if "response" in row else f"{self.base}/messages"
        raise self.error(where, "no valid assistant output (non-empty content, refusal or tool calls)")

    def _new_messages(self, msgs: list[dict], indices: range, skip: set, stop: int) -> None:
        """The new messages among ``indices`` that are not selected. Tool output with a ``tool_call_id`` is an
        observation result of the response turn (RFC-0009); without one, a result of the agent turn it follows
        (``loose``); any other message a turn of its own (``MORE``, placed where it was). A whole message is
        never residual."""
        for m in indices:
            if m in skip:
                continue
            msg = msgs[m]
            pointer = f"{self.base}/messages/{m}"
            if msg.get("role") not in RESULT_ROLES:
                self.placed.append((m, MORE, self._context_turn(msg, pointer, copied=False)))
                self.more.append(m)
                continue
            result = self._tool_result(msg, pointer)
            if "source_call_id" in result:
                self.results.append(result)
                self.tool_idx.append(m)
            else:
                self.loose.append((m, self._follows(m), result))

    def _follows(self, m: int) -> dict | None:
        """The agent turn message ``m`` follows: the row's latest before it, else the session's last one so far;
        None (the row's response turn) when no agent turn comes before it."""
        before = [(at, t) for at, _, t in self.placed if at < m and t["src"] == "agent"]
        if before:
            return max(before, key=lambda x: x[0])[1]
        return self.s.last_agent

    # ------------------------------------------------------------------------------------ the messages

    def _copy_residual(self, msg: dict, pointer: str) -> None:
        """A history copy: its compared fields are normalised away; anything else it carries is kept."""
        for key, value in msg.items():
            if key in COMPARED_KEYS:
                continue
            if key in REASONING_KEYS and (value is None or type(value) is str):
                continue
            if key in EMPTY_MSG_KEYS and empty(value):
                continue
            if key == "refusal" and empty(msg.get("content")):
                continue
            self.s.keep(join(pointer, key), value)

    def _copy_spelling(self, msg: dict, copied: dict, pointer: str) -> None:
        """The values of a history copy's calls that RFC-0009 does not consume (a call's ``index`` or a ``type``
        other than ``function``, a function's other keys) and that the message it copies (``copied``, what the
        writer rebuilds it from) spells otherwise, kept at their pointers as a new message's are (``_tool_calls``).
        Role, content and a call's id, name and arguments are the copy's compared values: normalised away, as the
        RFC says (docs/formats/openai-msg.md, "1. History copies")."""
        calls, originals = msg.get("tool_calls"), copied.get("tool_calls")
        if not (isinstance(calls, list) and isinstance(originals, list) and len(calls) == len(originals)):
            return  # equal as history keys: no call, or not a list on either side (kept by _copy_residual's rule)
        for c, (call, original) in enumerate(zip(calls, originals, strict=True)):
            if not (isinstance(call, dict) and isinstance(original, dict)):
                continue
            cptr = f"{pointer}/tool_calls/{c}"
            _kept_beside(self.s.keep, call, original, cptr, CALL_CONSUMED)
            self._absent_beside(call, original, cptr, CALL_CONSUMED)
            fn, fn_original = call.get("function"), original.get("function")
            if isinstance(fn, dict) and isinstance(fn_original, dict):
                _kept_beside(self.s.keep, fn, fn_original, f"{cptr}/function", FUNCTION_CONSUMED)
                self._absent_beside(fn, fn_original, f"{cptr}/function", FUNCTION_CONSUMED)

    def _absent_beside(self, value: dict, copied: dict, pointer: str, compared: tuple[str, ...]) -> None:
        """The keys beyond ``compared`` that the message a history copy copies has and the copy leaves out (a client
        that resends a call without its ``type``): the writer, which rebuilds the copy from that message, leaves
        them out too (form ``absent``), so the copy is written as it was sent."""
        for key in copied:
            if key not in compared and key not in value:
                set_form(self.hint, f"{self.rel(pointer)}/{key}", "absent")

    def _message_rest(self, msg: dict, pointer: str, consumed: tuple) -> None:
        for key, value in msg.items():
            if key in consumed:
                continue
            if key in EMPTY_MSG_KEYS and empty(value):
                continue
            self.s.keep(join(pointer, key), value)

    def _content(self, msg: dict, rel: str) -> Any:
        if "content" not in msg:
            set_form(self.hint, f"{rel}/content", "absent")
            return None
        # A string is a string (issue #23, over RFC-0009's "content parts re-encoded as a string" restoration): text
        # that looks like JSON, even like content parts, is the text the model or the user wrote.
        return msg["content"]

    def _context_turn(self, msg: dict, pointer: str, copied: bool = True) -> dict:
        """A message that is neither the request, the output nor tool output, as a turn: RFC-0009's context turns
        (``copied``), and the messages it leaves out (a ``developer`` message, a later ``system`` one, an
        unselected assistant message…), whose ``src`` is their role (``role_src``)."""
        role = msg.get("role")
        if not nonempty_str(role):
            got = "missing" if "role" not in msg else ("an empty string" if role == "" else json_type(role))
            raise self.error(join(pointer, "role"), f"a message needs a role (a non-empty string), got {got}")
        rel = self.rel(pointer)
        src = role_src(role)
        turn: dict[str, Any] = {"id": 0, "src": src, "msg": self._content(msg, rel)}
        calls = self._tool_calls(msg, pointer) if role == "assistant" else None
        if calls:
            turn["tool_calls"] = calls
        consumed: tuple[str, ...] = ("content", "tool_calls") if role == "assistant" else ("content",)
        if not copied and role == "assistant" and type(msg.get("reasoning_content")) is str:
            # A new assistant message the gateway did not select is a model output all the same: its reasoning is
            # the turn's (RFC-0009's context turns keep theirs as residual, as the RFC maps them).
            turn["reason"] = msg["reasoning_content"]
            consumed += ("reasoning_content",)
        if copied:
            turn["copied"] = True
        turn["kind"] = "autonomous" if calls else CONTEXT_KIND.get(message_role(src), "context")
        # The role comes back from the src (``message_role``); one that would not (``agent``) stays residual.
        self._message_rest(msg, pointer, ("role", *consumed) if message_role(src) == role else consumed)
        return turn

    def _request_turn(self, msg: dict, pointer: str) -> dict:
        rel = self.rel(pointer)
        turn = {"id": 0, "src": "user", "msg": self._content(msg, rel), "kind": "llm.request"}
        self._message_rest(msg, pointer, ("content", *self._role(msg, "user", rel)))
        return turn

    def _role(self, msg: dict, expected: str, rel: str) -> tuple[str, ...]:
        """``("role",)`` when the message's role is the one export writes back; an output without a role, or
        with another value, keeps it as it was (absent, or residual)."""
        if "role" not in msg:
            set_form(self.hint, f"{rel}/role", "absent")
            return ("role",)
        return ("role",) if msg["role"] == expected else ()

    def _tool_result(self, msg: dict, pointer: str) -> dict:
        """A tool message as an observation result: linked to its call by a non-empty ``tool_call_id`` (RFC-0009),
        else without ``source_call_id`` (output that answers no call: training outputs show it as the next user
        message). A ``function`` message keeps its role as residual (the writer writes ``tool``)."""
        result: dict[str, Any] = {}
        consumed = ["content"]
        source_id = msg.get("tool_call_id")
        if msg["role"] == "tool":
            consumed.append("role")
            if nonempty_str(source_id):
                tcid = self.s.call_alias.get(source_id, source_id)
                if tcid != source_id:
                    self.s.keep(f"{pointer}/tool_call_id", source_id)  # the link was renamed with its call
                result["source_call_id"] = tcid
                consumed.append("tool_call_id")
        if "content" in msg:
            result["content"] = msg["content"]
        else:
            set_form(self.hint, f"{self.rel(pointer)}/content", "absent")
        self._message_rest(msg, pointer, tuple(consumed))
        return result

    def _response_turn(self, msg: dict, pointer: str) -> dict:
        rel = self.rel(pointer)
        hint = self.hint
        turn: dict[str, Any] = {"id": 0, "src": "agent"}
        consumed = ["content", "tool_calls", *self._role(msg, "assistant", rel)]
        content = self._content(msg, rel)
        if empty(msg.get("content")) and not empty(msg.get("refusal")):
            turn["msg"] = msg["refusal"]  # refusal is the fallback msg and counts as consumed
            consumed.append("refusal")
            set_form(hint, f"{rel}/refusal", "msg")
            if "content" in msg:
                set_form(hint, f"{rel}/content", {"value": msg["content"]})
        else:
            turn["msg"] = content
        consumed.extend(self._reasoning(msg, turn, rel))
        calls = self._tool_calls(msg, pointer)
        if not calls and type(msg.get("content")) is str:
            calls = self._marker_calls(msg["content"])
            if calls:
                hint["derived_calls"] = True
        if calls:
            turn["tool_calls"] = calls
        turn["nllm"] = 1
        turn["kind"] = "autonomous" if calls else "llm.response"
        self._message_rest(msg, pointer, tuple(consumed))
        return turn

    def _reasoning(self, msg: dict, turn: dict, rel: str) -> list[str]:
        """The first reasoning key present → ``reason`` (a string, or null noted as a form); the key consumed."""
        for key in REASONING_KEYS:
            if key in msg:
                value = msg[key]
                if value is None or type(value) is str:
                    if value is not None:
                        turn["reason"] = value
                    if key != "reasoning_content":
                        self.hint["reason_key"] = key
                    if value is None:
                        set_form(self.hint, f"{rel}/{key}", "null")
                    return [key]
                return []
        return []

    def _tool_calls(self, msg: dict, pointer: str) -> list[dict]:
        calls = msg.get("tool_calls")
        if empty(calls):
            return []
        if not isinstance(calls, list):
            self.s.keep(f"{pointer}/tool_calls", calls)
            return []
        rel = self.rel(pointer)
        out = []
        for c, call in enumerate(calls):
            cptr = f"{pointer}/tool_calls/{c}"
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict) or not nonempty_str(fn.get("name")):
                self.s.keep(cptr, call)  # not a usable call: kept whole, in its place
                set_form(self.hint, f"{rel}/tool_calls/{c}", "residual")
                continue
            original = call.get("id")
            tcid = self.s.tcid(original, f"call-{self.src.r}-{rel.replace('/', '-')}-{c}")
            if tcid != original:
                if "id" in call:
                    self.s.keep(f"{cptr}/id", original)
                else:
                    set_form(self.hint, f"{rel}/tool_calls/{c}/id", "absent")
            out.append({"tcid": tcid, "fn": fn["name"], "args": self._arguments(fn, f"{rel}/tool_calls/{c}")})
            if "type" not in call:  # some servers leave it out; the writer writes "function" unless told (absent)
                set_form(self.hint, f"{rel}/tool_calls/{c}/type", "absent")
            for key, value in call.items():
                if key in CALL_CONSUMED or (key == "type" and value == "function"):
                    continue
                self.s.keep(join(cptr, key), value)
            for key, value in fn.items():
                if key not in FUNCTION_CONSUMED:
                    self.s.keep(join(f"{cptr}/function", key), value)
        return out

    def _arguments(self, fn: dict, rel: str) -> Any:
        """``function.arguments`` decoded from its JSON string when it is JSON (the form noted), else as given."""
        if "arguments" not in fn:
            set_form(self.hint, f"{rel}/function/arguments", "absent")
            return None
        args = fn["arguments"]
        if type(args) is str:
            ok, parsed = try_loads(args, scan=self.s.scan)
            if ok:
                set_form(self.hint, f"{rel}/function/arguments", "json-string")
                return parsed
        return args

    def _marker_calls(self, content: str) -> list[dict]:
        """Tool calls written as text: ``<tool_call>{json}</tool_call>`` and ``<function=…>`` blocks."""
        r = self.src.r
        return [
            {"tcid": self.s.tcid(None, f"call-{r}-content-{c}"), "fn": name, "args": args}
            for c, (name, args) in enumerate(marker_calls(content, self.s.scan))
        ]


def marker_calls(content: str, scan: bool = True) -> list[tuple[str, Any]]:
    """``(name, arguments)`` of the tool calls a response's text spells: ``<tool_call>{"name": …}</tool_call>``
    blocks, else ``<function=NAME><parameter=KEY>VALUE</parameter></function>`` blocks (the closing tag may be
    missing, as when a stop sequence cut it); the reader derives calls from them when the response has none.

    >>> marker_calls('<tool_call>{"name": "ls", "arguments": {}}</tool_call>'), marker_calls("no calls")
    ([('ls', {})], [])
    """
    found: list[tuple[str, Any]] = []
    for _, _, raw in blocks(content, *TOOL_CALL):
        block = raw.strip()
        ok, value = try_loads(block, scan=scan)
        if ok and isinstance(value, dict) and nonempty_str(value.get("name")):
            found.append((value["name"], value.get("arguments", {})))
    if not found:
        for name, body in named_blocks(content, *FUNCTION, close_optional=True):
            params = {k: v.strip("\n") for k, v in named_blocks(body, *PARAMETER)}
            found.append((name, params))
    return found


def _kept_beside(keep: Any, value: dict, copied: dict, pointer: str, compared: tuple[str, ...]) -> None:
    """``keep`` each key of ``value`` beyond ``compared`` that ``copied`` lacks or holds otherwise."""
    for key, item in value.items():
        if key in compared or (key in copied and same_json(item, copied[key])):
            continue
        keep(join(pointer, key), item)
