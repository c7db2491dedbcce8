"""One session's rows → one Storyline document: the session-level selections of RFC-0009 (run, agent, model,
the session-stable ``/task/env``) and of the project's reading (the session-stable ``/agent/tools``), then each
row's turns (``turns``) and fields (``fields``)."""

from __future__ import annotations

from typing import Any

from ...errors import PchronicleError
from ...jsonio import short, try_loads
from ...linking import SOURCE_CALL_IDS
from ...pointer import join
from ...schema import INT64_MAX
from ..residual import origin
from .fields import RowFields
from .hints import HINTS, RowHint, new_hint
from .history import NO_HISTORY
from .state import SessionState, SourceRow
from .tables import (
    ENV_SOURCES,
    NAME,
    RUN_KEYS,
    TOOLS_KEY,
    env_ok,
    first_more_id,
    nonempty_str,
    request_id,
    response_id,
    tools_value,
)
from .turns import CTX, REQ, RESP, RowTurns

__all__ = ["Session", "SourceRow"]


class Session:
    """Builds one Storyline document from the rows of one session (RFC-0009 + the project's reading)."""

    def __init__(self, sid: str, rows: list, document_id: str | None, root: dict, scan: bool = True) -> None:
        self.state = SessionState(sid, document_id, scan)  # what the rows' readers (turns, fields) see
        self.rows = rows
        self.root = root
        self.hints: list[RowHint] = []

    # ------------------------------------------------------------------------------------ the session

    def build(self) -> dict[str, Any]:
        rows = [
            SourceRow(r, row, line, new_hint(r, row["step_id"]), *self._decode_meta(r, row))
            for r, row, line, _ in self._ordered_rows()
        ]
        self.state.run = self._select_run(rows)
        self.state.agent_id, self.state.agent_source = self._select_agent_id(rows)
        agent_model = self._first_model(rows)
        self._select_task_env(rows)
        self.state.tools = self._select_tools(rows)
        for key, value in self.root.items():
            self.state.keep(join("", key), value)

        turns: list[dict[str, Any]] = []
        # The previous row's messages, the keys of what it sent back, and which messages carry extra keys.
        history = NO_HISTORY
        context_count = 0
        more_id = 0  # the last id given to a turn RFC-0009 leaves out (``MORE``): after every derived id
        response: dict[str, Any] | None = None
        for index, source in enumerate(rows):
            self.hints.append(source.hint)
            read = RowTurns(self.state, source).read(index == 0, history)
            history = read.history
            if index == 0:
                context_count = sum(what == CTX for what, _ in read.turns)
                more_id = first_more_id(context_count, rows[-1].row["step_id"]) - 1  # rows are in step order
            step = source.row["step_id"]
            if response_id(context_count, step) > INT64_MAX:
                raise self.state.error(
                    f"{source.base}/step_id", f"step_id {step} overflows the int64 turn id", source.line
                )
            RowFields(self.state, source, read.response, read.request).read()
            ctx = 0
            for what, turn in read.turns:
                if what == CTX:
                    ctx += 1
                    turn["id"] = ctx
                elif what == REQ:
                    turn["id"] = request_id(context_count, step)
                elif what == RESP:
                    turn["id"] = response_id(context_count, step)
                else:
                    more_id += 1
                    if more_id > INT64_MAX:
                        raise self.state.error(f"{source.base}/messages", "a turn id overflows int64", source.line)
                    turn["id"] = more_id
                turns.append(turn)
                if turn["src"] == "agent":
                    self.state.last_agent = turn
            for m, holder, result in read.loose:  # after the holder's own results, in message order
                holder.setdefault("observation", {"results": []})["results"].append(result)
                source.hint.setdefault("loose", []).append([m, holder["id"]])
            response = read.response
        return self._document(turns, agent_model, rows[0], response)

    def _document(
        self, turns: list[dict[str, Any]], agent_model: str | None, first: SourceRow, last: dict[str, Any] | None
    ) -> dict[str, Any]:
        story: dict[str, Any] = {"schema_version": "storyline/v1"}
        story["origin"] = origin(NAME, self.state.document_id)
        story["session"] = self.state.sid
        if self.state.run is not None:
            story["run"] = self.state.run
        agent: dict[str, Any] = {"id": self.state.agent_id, "name": self.state.agent_id}
        if agent_model is not None:
            agent["model"] = agent_model
        if self.state.tools is not None:
            agent["tools"] = self.state.tools
        story["agent"] = agent
        if self.state.task_env or self.state.task_state:
            env = dict(self.state.task_env)
            if self.state.task_state:
                env["state"] = self.state.task_state
            story["task"] = {"env": env}
        story["turns"] = turns
        if last is not None and "metrics" in last:  # the last response turn's (RFC-0009, convenience promotions)
            story["final_metrics"] = last["metrics"]
        story["meta"] = {HINTS: {"version": 1, "rows": self.hints}}
        if self.state.source_ids:
            story["meta"][SOURCE_CALL_IDS] = self.state.source_ids
        try:
            return self.state.kept.finish(story)
        except PchronicleError as exc:  # a value the mapping let through that Storyline cannot hold
            raise self.state.error(
                first.base, f"session {self.state.sid!r} gives no valid Storyline: {exc}", first.line
            ) from None

    def _ordered_rows(self) -> list:
        seen: dict[int, str] = {}
        for r, row, line, _ in self.rows:
            step = row.get("step_id")
            pointer = f"/session_steps/{r}/step_id"
            if type(step) is not int or step < 1:
                got = "missing" if "step_id" not in row else f"{type(step).__name__} {short(step)}"
                raise self.state.error(pointer, f"step_id must be a positive integer, got {got}", line)
            if step in seen:
                raise self.state.error(
                    pointer, f"step_id {step} repeats within session {self.state.sid!r} (also at {seen[step]})", line
                )
            seen[step] = pointer
        return sorted(self.rows, key=lambda x: x[1]["step_id"])

    def _decode_meta(self, r: int, row: dict) -> tuple[dict | None, dict | None]:
        """meta_json and its env_state as objects (None when absent or undecodable → whole value residual)."""
        meta = self._object_or_json(row, "meta_json")
        env_state = None
        if meta is not None:
            env_state = self._object_or_json(meta, "env_state")
        return meta, env_state

    def _object_or_json(self, parent: dict, key: str) -> dict | None:
        if key not in parent:
            return None
        value = parent[key]
        if isinstance(value, dict):
            return value
        if type(value) is str:
            ok, parsed = try_loads(value, scan=self.state.scan)
            if ok and isinstance(parsed, dict):
                return parsed
        return None

    def _select_run(self, rows: list[SourceRow]) -> str | None:
        for key in RUN_KEYS:
            values = [(s.r, s.row[key], s.line) for s in rows if nonempty_str(s.row.get(key))]
            if values:
                run = values[0][1]
                for r, value, line in values[1:]:
                    if value != run:
                        raise self.state.error(
                            f"/session_steps/{r}/{key}",
                            f"run identity changes within session {self.state.sid!r}: {key} {value!r} after {run!r}",
                            line,
                        )
                self.state.run_key = key
                return run
        self.state.run_key = None
        return None

    def _select_agent_id(self, rows: list[SourceRow]) -> tuple[str, str]:
        for s in rows:
            if nonempty_str(s.row.get("agent_id")):
                return s.row["agent_id"], "agent_id"
        for s in rows:
            if s.meta is not None and nonempty_str(s.meta.get("source")):
                return s.meta["source"], "meta_json/source"
        model = self._first_model(rows)
        if model is not None:
            return model, "model"
        return "openai-import", "default"

    @staticmethod
    def _first_model(rows: list[SourceRow]) -> str | None:
        for key in ("agent_model", "llm_model"):
            for s in rows:
                if nonempty_str(s.row.get(key)):
                    return s.row[key]
        return None

    @staticmethod
    def _env_value(source: SourceRow, rel: str) -> tuple[bool, Any]:
        parts = rel.split("/")
        if parts[0] == "meta_json":
            holder = source.meta if len(parts) == 2 else source.env_state
        else:
            holder = source.row
        if holder is None or parts[-1] not in holder:
            return False, None
        return True, holder[parts[-1]]

    def _select_tools(self, rows: list[SourceRow]) -> list | None:
        """The session's tool definitions: the first non-empty ``tools`` array in step order (``fields`` consumes
        the later rows' equal values and keeps a different one as residual on its row)."""
        for source in rows:
            if TOOLS_KEY in source.row:
                tools, _ = tools_value(source.row[TOOLS_KEY], scan=self.state.scan)
                if tools is not None:
                    return tools
        return None

    def _select_task_env(self, rows: list[SourceRow]) -> None:
        for rel, path in ENV_SOURCES:
            for source in rows:
                found, value = self._env_value(source, rel)
                if found and env_ok(path, value):
                    if len(path) == 1:
                        self.state.task_env[path[0]] = value
                    else:
                        self.state.task_state[path[1]] = value
                    break
