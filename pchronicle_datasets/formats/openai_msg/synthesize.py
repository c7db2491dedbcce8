"""The synthesized writer: rows for a document that did not come from openai-msg (RFC-0009: ``job_id``,
``agent_id``, ``agent_model``), one row per agent turn with its full history and the request's ``tools``."""

from __future__ import annotations

from typing import Any

from ...linking import observation_results
from ...losses import report_loss
from ..residual import ENVELOPE_KEY, envelope, other_sources
from .messages import call_message
from .tables import ENV_STATE_METRICS, ROW_METRICS, TOOLS_KEY, empty, valid_output

__all__ = ["synthesize"]


def synthesize(story: dict) -> list[dict]:
    """Rows for a document that did not come from openai-msg: one row per agent turn, full history.

    A row is one model call, ending with its output, and RFC-0009's reader takes only a valid output (non-empty
    content, refusal or tool calls): an agent turn without one goes into the history of the next row as an
    assistant message, as a non-agent turn does. What comes after the last row's output (a closing user turn,
    the results of the last turn's own calls) is in no row: each such turn is a ``turns_after_last_output``
    loss. A document with no row to write gives none (the caller reports it).

    >>> story = {"session": "s", "agent": {"id": "a"}, "turns": [
    ...     {"id": 1, "src": "user", "msg": "hi"}, {"id": 2, "src": "agent", "msg": "hello"}]}
    >>> [(r["step_id"], r["messages"], r["response"]["content"]) for r in synthesize(story)]
    [(1, [{'role': 'user', 'content': 'hi'}], 'hello')]
    """
    return _Synthesis(story).rows()


class _Synthesis:
    """One document's rows, built turn by turn along the history every row repeats."""

    def __init__(self, story: dict) -> None:
        self.story = story
        self.out: list[dict] = []
        self.history: list[dict] = []
        self.unwritten: list[str] = []  # pointers of what went into the history since the last row
        self.carried = envelope(other_sources(story, None))
        self.answered: set[str] = set()
        self.calls: set[str] = set()  # the call ids of the turns so far

    def rows(self) -> list[dict]:
        for t, turn in enumerate(self.story["turns"]):
            own_calls = {c["tcid"] for c in turn.get("tool_calls") or ()}
            output = self._output(turn) if not turn.get("copied") and turn["src"] == "agent" else None
            if output is None:
                self.history.append(self._message(turn))
                self.calls |= own_calls
                self.history.extend(self._results(turn, self.calls))
                self.unwritten.append(f"/turns/{t}")
                continue
            # Results on this turn for earlier calls (RFC-0009 style) are in its row's messages; results for its
            # own calls (ATIF style) follow its output, in the next row's.
            self.history.extend(self._results(turn, self.calls))
            self.out.append(self._row(turn, output))
            self.unwritten.clear()
            self.history.append(output)
            self.calls |= own_calls
            results = self._results(turn, own_calls)
            self.history.extend(results)
            if results:
                self.unwritten.append(f"/turns/{t}/observation")
        if self.out:
            for pointer in self.unwritten:
                report_loss("turns_after_last_output", pointer=pointer)
        return self.out

    def _results(self, turn: dict, calls: set[str]) -> list[dict]:
        """The tool messages of ``turn``'s observation results that answer one of ``calls`` (each once)."""
        out = []
        for res in observation_results(turn):
            sid = res.get("source_call_id") if isinstance(res, dict) else None
            if isinstance(sid, str) and sid in calls and sid not in self.answered:
                self.answered.add(sid)
                out.append({"role": "tool", "tool_call_id": sid, "content": res.get("content")})
        return out

    @staticmethod
    def _message(turn: dict) -> dict[str, Any]:
        """A turn that is no row's output, as a message of the history."""
        # OpenAI's roles: a developer turn keeps its role (the reader reads it back as a developer turn); any
        # other source without one is a system message.
        role = {"user": "user", "agent": "assistant", "developer": "developer"}.get(turn["src"], "system")
        msg: dict[str, Any] = {"role": role, "content": turn["msg"]}
        if role == "assistant" and "reason" in turn and not turn.get("copied"):
            msg["reasoning_content"] = turn["reason"]
        if role == "assistant" and turn.get("tool_calls"):
            msg["tool_calls"] = [call_message(c, encode_args=True) for c in turn["tool_calls"]]
        return msg

    @staticmethod
    def _output(turn: dict) -> dict[str, Any] | None:
        """An agent turn as a row's output, or None when it is not a valid one."""
        out: dict[str, Any] = {"role": "assistant", "content": turn["msg"]}
        if "reason" in turn:
            out["reasoning_content"] = turn["reason"]
        if turn.get("tool_calls"):
            out["tool_calls"] = [call_message(c, encode_args=True) for c in turn["tool_calls"]]
        return out if valid_output(out) else None

    def _row(self, turn: dict, output: dict[str, Any]) -> dict[str, Any]:
        story = self.story
        step = len(self.out) + 1
        row: dict[str, Any] = {"session_id": story["session"], "step_id": step}
        if "run" in story:
            row["job_id"] = story["run"]
        row["agent_id"] = story["agent"]["id"]
        model = turn.get("model") or story["agent"].get("model")
        if model:
            row["agent_model"] = model
        if "ts" in turn:
            row["created_at"] = turn["ts"]
        metrics = turn.get("metrics")
        if isinstance(metrics, dict):
            env_state = {}
            for key, value in metrics.items():
                if key in ROW_METRICS:
                    row[key] = value
                elif key in ENV_STATE_METRICS:
                    env_state[key] = value
            if env_state:
                row["meta_json"] = {"env_state": env_state}
        row["messages"] = list(self.history)
        tools = story["agent"].get("tools")
        if not empty(tools):
            row[TOOLS_KEY] = tools  # /agent/tools, as a gateway logs the request's tools with every call
        row["response"] = output
        if step == 1 and self.carried is not None:
            row[ENVELOPE_KEY] = self.carried
        return row
