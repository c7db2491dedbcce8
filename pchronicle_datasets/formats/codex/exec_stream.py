"""``codex exec --json`` output → Storyline: the event stream ``codex exec`` prints (docs/formats/codex.md, "codex
exec --json output"), read into one document per thread (``writer.rollout_lines`` writes it back line for line).

The stream is not the rollout: it holds no prompt, no timestamp and no tool output but a command's
``aggregated_output``. What it holds is mapped by ``fields.EXEC_CALLS`` and the rules below; every line keeps its
place in the line plan (``/meta/codex/lines``) and every value the table does not map stays residual under its
pointer, so the writer gives the same JSON back.

>>> lines = [{"type": "thread.started", "thread_id": "t1"}, {"type": "turn.started"},
...          {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "pong"}},
...          {"type": "turn.completed", "usage": {"input_tokens": 9, "output_tokens": 1}}]
>>> story = read_exec(lines, "run.jsonl")
>>> [(t["src"], t["msg"], t["metrics"]) for t in story["turns"]]
[('agent', 'pong', {'prompt_tokens': 9, 'completion_tokens': 1})]
"""

from __future__ import annotations

from typing import Any

from ...errors import FormatError, NoConversationError, PchronicleError
from ..residual import Residual, origin
from .fields import AGENT_ID, EXEC_CALLS, EXEC_COMPLETED, EXEC_FIRST, EXEC_NOTICE, HINTS, NAME, usage_metrics
from .line_keeping import LineKeeping

__all__ = ["read_exec"]


class _Reader(LineKeeping):
    def __init__(self, document_id: str | None) -> None:
        self.document_id = document_id
        self.kept = Residual(NAME, document_id)
        self.turns: list[dict[str, Any]] = []
        self.plan: list[list[Any]] = []
        self.story: dict[str, Any] = {"schema_version": "storyline/v1", "origin": origin(NAME, document_id)}
        self.turn_start = 0  # the first turn of the current exec turn (turn.started): usage goes to its last
        self.line: int | None = None

    def one(self, i: int, value: Any) -> None:
        kind = value.get("type") if isinstance(value, dict) else None
        if kind == EXEC_FIRST[0] and "session" not in self.story and isinstance(value.get(EXEC_FIRST[1]), str):
            if value[EXEC_FIRST[1]]:
                self.story["session"] = value[EXEC_FIRST[1]]
                self.keep_rest(f"/{i}", value, ("type", EXEC_FIRST[1]))
                self.plan.append(["t"])
                return
        elif kind == "turn.started":
            self.turn_start = len(self.turns)
        elif kind == "turn.completed" and isinstance(value.get("usage"), dict):
            agent = [t for t in self.turns[self.turn_start :] if t["src"] == "agent" and "metrics" not in t]
            if agent:  # derived: the line stays whole
                agent[-1]["metrics"] = usage_metrics(value["usage"])
        elif kind == EXEC_COMPLETED and isinstance(value.get("item"), dict):
            if self.item(i, value, value["item"]):
                return
        self.keep_line(i, value)

    def _agent(self, fresh: bool) -> int:
        """The agent turn an item goes to: the last turn when it is an agent turn that can take it, else a new one."""
        if not fresh and self.turns and self.turns[-1]["src"] == "agent" and len(self.turns) > self.turn_start:
            return len(self.turns) - 1
        self.turns.append({"id": len(self.turns) + 1, "src": "agent", "msg": ""})
        return len(self.turns) - 1

    def item(self, i: int, line: dict, item: dict) -> bool:
        """An ``item.completed`` line read into a turn (True), or False when it is kept whole."""
        kind, iid = item.get("type"), item.get("id")
        base = f"/{i}/item"
        if not isinstance(kind, str):
            return False
        last = self.turns[-1] if self.turns else {}
        if kind == "reasoning" and isinstance(item.get("text"), str):
            t = self._agent(fresh=True)
            self.turns[t]["reason"] = item["text"]
            used: tuple[str, ...] = ("type", "text")
        elif kind == "agent_message" and isinstance(item.get("text"), str):
            # the message of a response whose reasoning came first; else a turn of its own
            joins = (
                last.get("src") == "agent" and last.get("msg") == "" and "reason" in last and "tool_calls" not in last
            )
            t = self._agent(fresh=not joins)
            self.turns[t]["msg"] = item["text"]
            used = ("type", "text")
        elif kind == EXEC_NOTICE and isinstance(item.get("message"), str):
            self.turns.append({"id": len(self.turns) + 1, "src": "system", "kind": "error", "msg": item["message"]})
            t = len(self.turns) - 1
            used = ("type", "message")
        elif kind in EXEC_CALLS and isinstance(iid, str) and iid:
            fn_key, args_keys, result_key = EXEC_CALLS[kind]
            fn = item.get(fn_key) if fn_key else kind
            whole = args_keys == ("arguments",)
            if not (isinstance(fn, str) and fn) or (whole and "arguments" not in item):
                return False
            # a response's calls follow its reasoning or its message; a call after a call is the next response's
            t = self._agent(fresh="tool_calls" in last)
            args = item["arguments"] if whole else {k: item[k] for k in args_keys if k in item}
            call = {"tcid": iid, "fn": fn, "args": args, "kind": kind}
            calls = self.turns[t].setdefault("tool_calls", [])
            calls.append(call)
            used = ("type", "id", *args_keys, *((fn_key,) if fn_key else ()))
            if result_key and item.get(result_key) is not None:
                results = self.turns[t].setdefault("observation", {"results": []})["results"]
                results.append({"content": item[result_key], "source_call_id": iid})
                used = (*used, result_key)
            response = self._response(item)
            if response:
                call["response"] = response
            self.plan.append(["c", t, kind, len(calls) - 1])
            self.keep_rest(base, item, used)
            self.keep_rest(f"/{i}", line, ("type", "item"))
            return True
        else:
            return False
        self.plan.append(["i", t, kind])
        self.keep_rest(base, item, used)
        self.keep_rest(f"/{i}", line, ("type", "item"))
        return True

    @staticmethod
    def _response(item: dict) -> dict[str, Any]:
        """A call's ``response`` derived from its item: the exit code, and status ``error`` when it is not 0, when
        the item failed, or when an MCP call reports an error."""
        code = item.get("exit_code")
        out: dict[str, Any] = {"exit_code": code} if type(code) is int and -(2**63) <= code < 2**63 else {}
        if (out and code != 0) or item.get("status") == "failed" or item.get("error") not in (None, ""):
            out["status"] = "error"
        return out

    def finish(self) -> dict[str, Any]:
        story = self.story
        if "session" not in story:
            if not self.document_id:
                raise FormatError("the exec stream names no thread and has no file name", document_id=self.document_id)
            story["session"] = self.document_id
        story["agent"] = {"id": AGENT_ID}
        story["turns"] = self.turns
        story["meta"] = {HINTS: {"version": 1, "layout": "exec", "lines": self.plan}}
        if not self.turns:
            raise NoConversationError(
                "the codex exec --json output holds no message, reasoning or call", document_id=self.document_id
            )
        try:
            return self.kept.finish(story)
        except PchronicleError as exc:
            raise FormatError(
                f"the exec stream gives no valid Storyline: {exc.reason}",
                pointer=exc.pointer or "",
                document_id=self.document_id,
                line=self.line,
            ) from None


def read_exec(lines: list[Any], document_id: str | None = None, numbers: list[int] | None = None) -> dict[str, Any]:
    """The Storyline document of ``codex exec --json`` output (its parsed lines)."""
    reader = _Reader(document_id)
    for i, value in enumerate(lines):
        reader.line = numbers[i] if numbers else i + 1
        reader.one(i, value)
    return reader.finish()
