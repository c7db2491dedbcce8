"""One row's fields (RFC-0009 tables 1, 3 and 4): row-level keys, ``meta_json`` and its ``env_state``, each
authoritative, derived, a consumed alias, or residual. They land on the row's response turn (``model``,
``ts``, ``metrics``, ``env`` deltas) and its request turn (``ts``)."""

from __future__ import annotations

from typing import Any

from ...pointer import join
from ...schema import INT64_MAX, is_time
from ..residual import ENVELOPE_KEY
from .hints import set_form
from .state import SessionState, SourceRow
from .tables import (
    EMPTY_ROW_KEYS,
    ENV_SOURCES,
    ENV_STATE_METRICS,
    ROW_METRICS,
    RUN_KEYS,
    TOOLS_KEY,
    TURN_ENV_SOURCES,
    empty,
    env_ok,
    nonempty_str,
    same_json,
    tools_value,
)

__all__ = ["RowFields"]


class RowFields:
    """Routes every key of one row; collects the response turn's metrics and env deltas on the way."""

    def __init__(
        self, session: SessionState, source: SourceRow, resp: dict[str, Any], req: dict[str, Any] | None
    ) -> None:
        self.s = session
        self.src = source
        self.resp = resp
        self.req = req
        self.keys = source.hint["keys"]  # consumed relative keys, in source order
        self.metrics: dict[str, Any] = {}
        self.env_delta: dict[str, Any] = {}
        self.state_delta: dict[str, Any] = {}
        # The row's model: agent_model → llm_model.
        row = source.row
        self.model_key = next((k for k in ("agent_model", "llm_model") if nonempty_str(row.get(k))), None)
        self.model = row[self.model_key] if self.model_key else None

    def read(self) -> None:
        base = self.src.base
        row = self.src.row
        s = self.s
        keys = self.keys
        if self.model is not None:
            self.resp["model"] = self.model
        for key, value in row.items():
            if key in ("session_id", "step_id", "messages", "response"):
                if key in ("session_id", "step_id"):
                    keys.append(key)
                continue
            if key == "created_at":
                if is_time(value):
                    self.resp["ts"] = value
                    if self.req is not None:
                        self.req["ts"] = value
                    keys.append(key)
                else:
                    s.keep(join(base, key), value)
            elif key in RUN_KEYS and key == s.run_key and value == s.run:
                keys.append(key)
            elif key == "agent_id" and s.agent_source == "agent_id" and value == s.agent_id:
                keys.append(key)
            elif key == self.model_key:
                keys.append(key)
            elif key == "llm_model" and self.model_key == "agent_model" and value == self.model:
                keys.append(key)
            elif key in ROW_METRICS:
                self.metrics[key] = value
                keys.append(key)
            elif key == "env_id" and value == s.sid:
                keys.append(key)
            elif key in EMPTY_ROW_KEYS and empty(value):
                continue
            elif key == "meta_json":
                self._meta_fields()
            elif key in ("env_name", "dataset_type", "dt", "id"):
                if not self._env_field(key, value):
                    s.keep(join(base, key), value)
            elif key == TOOLS_KEY and self._tools_field(value):
                pass
            elif key == ENVELOPE_KEY and s.kept.take_envelope(value):
                keys.append(key)  # residual of another format, carried by our own writer
            else:
                s.keep(join(base, key), value)
        self._finish()

    def _finish(self) -> None:
        resp, metrics = self.resp, self.metrics
        if metrics:
            resp["metrics"] = metrics
            for src, dst in (("total_latency_ms", "latency_ms"), ("ttft_ms", "ttft_ms")):
                if type(metrics.get(src)) is int and -(2**63) <= metrics[src] <= INT64_MAX:
                    resp[dst] = metrics[src]
        if self.state_delta:
            self.env_delta["state"] = self.state_delta
        if self.env_delta:
            resp["env"] = self.env_delta

    def _tools_field(self, value: Any) -> bool:
        """Consume a ``tools`` value equal to ``/agent/tools`` (noting a JSON-string spelling); False when it
        must stay residual (empty, not an array, or other tools than the session's)."""
        tools, was_string = tools_value(value, scan=self.s.scan)
        if tools is None or self.s.tools is None or not same_json(tools, self.s.tools):
            return False
        self.keys.append(TOOLS_KEY)
        if was_string:
            set_form(self.src.hint, TOOLS_KEY, "json-string")
        return True

    def _env_field(self, rel: str, value: Any) -> bool:
        """Route an env-shaped source value; False when it must stay residual."""
        for source, path in ENV_SOURCES:
            if source == rel:
                if not env_ok(path, value):
                    return False
                stable = self.s.task_env.get(path[0]) if len(path) == 1 else self.s.task_state.get(path[1])
                self.keys.append(rel)
                if value != stable:
                    (self.env_delta if len(path) == 1 else self.state_delta)[path[-1]] = value
                return True
        for source, name in TURN_ENV_SOURCES:
            if source == rel:
                if type(value) is not str:
                    return False
                self.keys.append(rel)
                self.env_delta[name] = value
                return True
        return False

    def _meta_fields(self) -> None:
        base = f"{self.src.base}/meta_json"
        row, meta, s = self.src.row, self.src.meta, self.s
        if meta is None:
            s.keep(base, row["meta_json"])  # neither an object nor a JSON-encoded object: kept whole
            return
        self.keys.append("meta_json")
        if type(row["meta_json"]) is str:
            set_form(self.src.hint, "meta_json", "json-string")
        for key, value in meta.items():
            rel = f"meta_json/{key}"
            if key == "source" and s.agent_source == "meta_json/source" and value == s.agent_id:
                self.keys.append(rel)
            elif key == "group_id":
                if not self._env_field(rel, value):
                    s.keep(join(base, key), value)
            elif key == "env_state":
                if self.src.env_state is None:
                    s.keep(join(base, key), value)
                    continue
                self.keys.append(rel)
                if type(value) is str:
                    set_form(self.src.hint, rel, "json-string")
                self._env_state_fields()
            else:
                s.keep(join(base, key), value)

    def _env_state_fields(self) -> None:
        base = f"{self.src.base}/meta_json/env_state"
        row, s = self.src.row, self.s
        for key, value in self.src.env_state.items():  # type: ignore[union-attr]
            rel = f"meta_json/env_state/{key}"
            if key in ENV_STATE_METRICS:
                if key in ROW_METRICS and key in row:
                    self.keys.append(rel)  # the row-level value wins and consumes this one
                else:
                    self.metrics[key] = value
                    self.keys.append(rel)
            elif key == "session_id" and value == s.sid:
                self.keys.append(rel)
            elif key == "requested_model" and self.model is not None and value == self.model:
                self.keys.append(rel)
            elif key == "llm_step_index" and value == row["step_id"] and type(value) is int:
                self.keys.append(rel)
            elif self._env_field(rel, value):
                pass
            else:
                s.keep(join(base, key), value)
