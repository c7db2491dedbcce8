"""The synthesized writer: rows for a document that did not come from openai-msg (RFC-0009: ``job_id``,
``agent_id``, ``agent_model``), one row per agent turn with its full history and the request's ``tools``."""

from __future__ import annotations

from typing import Any

from ...linking import observation_results
from ..residual import ENVELOPE_KEY, envelope, other_sources
from .messages import call_message
from .tables import ENV_STATE_METRICS, ROW_METRICS, TOOLS_KEY, empty

__all__ = ["synthesize"]


def synthesize(story: dict) -> list[dict]:
    """Rows for a document that did not come from openai-msg: one row per agent turn, full history, and
    ``/agent/tools`` (when not empty) as every row's ``tools``, as a gateway logs them with every request.

    >>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a", "tools": [
    ...     {"type": "function", "function": {"name": "ls"}}]}, "turns": [
    ...     {"id": 1, "src": "user", "msg": "ls?"}, {"id": 2, "src": "agent", "msg": "a.txt"}]}
    >>> [row] = synthesize(story)
    >>> list(row), row["tools"][0]["function"]["name"]
    (['session_id', 'step_id', 'agent_id', 'messages', 'tools', 'response'], 'ls')
    """
    rows: list[dict] = []
    tools = story["agent"].get("tools")
    history: list[dict] = []
    step = 0
    carried = envelope(other_sources(story, None))
    answered: set[str] = set()

    def results_of(turn: dict, calls: set[str]) -> list[dict]:
        out = []
        for res in observation_results(turn):
            sid = res.get("source_call_id") if isinstance(res, dict) else None
            if isinstance(sid, str) and sid in calls and sid not in answered:
                answered.add(res["source_call_id"])
                out.append({"role": "tool", "tool_call_id": res["source_call_id"], "content": res.get("content")})
        return out

    earlier_calls: set[str] = set()
    for turn in story["turns"]:
        src = turn["src"]
        own_calls = {c["tcid"] for c in turn.get("tool_calls") or ()}
        if turn.get("copied") or src != "agent":
            role = {"user": "user", "agent": "assistant"}.get(src, "system")
            msg: dict[str, Any] = {"role": role, "content": turn["msg"]}
            if role == "assistant" and turn.get("tool_calls"):
                msg["tool_calls"] = [call_message(c, encode_args=True) for c in turn["tool_calls"]]
            history.append(msg)
            earlier_calls |= own_calls
            history.extend(results_of(turn, earlier_calls))
            continue
        history.extend(results_of(turn, earlier_calls))
        step += 1
        out: dict[str, Any] = {"role": "assistant", "content": turn["msg"]}
        if "reason" in turn:
            out["reasoning_content"] = turn["reason"]
        if turn.get("tool_calls"):
            out["tool_calls"] = [call_message(c, encode_args=True) for c in turn["tool_calls"]]
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
        row["messages"] = list(history)
        if not empty(tools):
            row[TOOLS_KEY] = tools
        row["response"] = out
        if step == 1 and carried is not None:
            row[ENVELOPE_KEY] = carried
        rows.append(row)
        history.append(out)
        earlier_calls |= own_calls
        history.extend(results_of(turn, own_calls))
    return rows
