"""One session's rows → one Storyline document: the session-level selections of RFC-0009 (run, agent, model,
the session-stable ``/task/env``) and of the project's reading (the session-stable ``/agent/tools``), then each
row's turns (``turns``) and fields (``fields``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import FormatError, PchronicleError
from ...jsonio import short, try_loads
from ...linking import SOURCE_CALL_IDS
from ...pointer import join
from ...schema import INT64_MAX
from ..residual import Residual, origin
from .fields import RowFields
from .hints import HINTS, RowHint, new_hint
from .history import Held
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


@dataclass
class SourceRow:
    """One source row with what the session learnt of it: its index ``r``, physical line, export hint and its
    ``meta_json`` / ``env_state`` decoded (None when absent or undecodable: then kept whole as residual)."""

    r: int
    row: dict[str, Any]
    line: int | None
    hint: RowHint
    meta: dict[str, Any] | None
    env_state: dict[str, Any] | None

    @property
    def base(self) -> str:
        return f"/session_steps/{self.r}"


class Session:
    """Builds one Storyline document from the rows of one session (RFC-0009 + the project's reading)."""

    def __init__(self, sid: str, rows: list, document_id: str | None, root: dict, scan: bool = True) -> None:
        self.sid = sid
        self.scan = scan  # False: the file holds no integer beyond 64 bits, so no value in it needs the check
        self.rows = rows
        self.document_id = document_id
        self.root = root
        self.kept = Residual(NAME, document_id)
        self.hints: list[RowHint] = []
        self.used_tcids: set[str] = set()
        self.call_alias: dict[str, str] = {}  # a source call id → the tcid of its latest call
        self.source_ids: dict[str, str] = {}  # renamed call ids → the source's (/meta/source_call_ids)
        self.last_agent: dict[str, Any] | None = None  # the latest agent turn so far, in document order
        self.held = Held()  # every message the rows read so far held: echoes of them are copies
        self.task_env: dict[str, Any] = {}
        self.task_state: dict[str, Any] = {}
        self.tools: list | None = None  # /agent/tools: the first row's non-empty tools array, in step order
        self.run: str | None = None
        self.run_key: str | None = None
        self.agent_id = ""
        self.agent_source = ""  # where agent_id came from: agent_id, meta_json/source, model or default

    def error(self, pointer: str, reason: str, line: int | None = None) -> FormatError:
        return FormatError(reason, pointer=pointer, document_id=self.document_id, line=line)

    def keep(self, pointer: str, value: Any) -> None:
        self.kept.keep(pointer, value)

    def tcid(self, original: Any, fallback: str) -> str:
        """The source id when it is usable (non-empty, not yet used in the document), else a deterministic one."""
        if nonempty_str(original) and original not in self.used_tcids:
            tcid = original
        else:
            tcid = fallback
            n = 1
            while tcid in self.used_tcids:
                n += 1
                tcid = f"{fallback}-{n}"
        self.used_tcids.add(tcid)
        if nonempty_str(original):
            self.call_alias[original] = tcid
            if tcid != original:
                self.source_ids[tcid] = original  # a reused id: training outputs show the one the source wrote
        return tcid

    # ------------------------------------------------------------------------------------ the session

    def build(self) -> dict[str, Any]:
        rows = [
            SourceRow(r, row, line, new_hint(r, row["step_id"]), *self._decode_meta(r, row))
            for r, row, line, _ in self._ordered_rows()
        ]
        self.run = self._select_run(rows)
        self.agent_id, self.agent_source = self._select_agent_id(rows)
        agent_model = self._first_model(rows)
        self._select_task_env(rows)
        self.tools = self._select_tools(rows)
        for key, value in self.root.items():
            self.keep(join("", key), value)

        turns: list[dict[str, Any]] = []
        # The previous row's messages, the keys of what it sent back, and which messages carry extra keys.
        history: tuple[list, list, list] = ([], [], [])
        context_count = 0
        more_id = 0  # the last id given to a turn RFC-0009 leaves out (``MORE``): after every derived id
        response: dict[str, Any] | None = None
        for index, source in enumerate(rows):
            self.hints.append(source.hint)
            read = RowTurns(self, source).read(index == 0, history)
            history = read.history
            if index == 0:
                context_count = sum(what == CTX for what, _ in read.turns)
                more_id = first_more_id(context_count, rows[-1].row["step_id"]) - 1  # rows are in step order
            step = source.row["step_id"]
            if response_id(context_count, step) > INT64_MAX:
                raise self.error(f"{source.base}/step_id", f"step_id {step} overflows the int64 turn id", source.line)
            RowFields(self, source, read.response, read.request).read()
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
                        raise self.error(f"{source.base}/messages", "a turn id overflows int64", source.line)
                    turn["id"] = more_id
                turns.append(turn)
                if turn["src"] == "agent":
                    self.last_agent = turn
            for m, holder, result in read.loose:  # after the holder's own results, in message order
                holder.setdefault("observation", {"results": []})["results"].append(result)
                source.hint.setdefault("loose", []).append([m, holder["id"]])
            response = read.response
        return self._document(turns, agent_model, rows[0], response)

    def _document(
        self, turns: list[dict[str, Any]], agent_model: str | None, first: SourceRow, last: dict[str, Any] | None
    ) -> dict[str, Any]:
        story: dict[str, Any] = {"schema_version": "storyline/v1"}
        story["origin"] = origin(NAME, self.document_id)
        story["session"] = self.sid
        if self.run is not None:
            story["run"] = self.run
        agent: dict[str, Any] = {"id": self.agent_id, "name": self.agent_id}
        if agent_model is not None:
            agent["model"] = agent_model
        if self.tools is not None:
            agent["tools"] = self.tools
        story["agent"] = agent
        if self.task_env or self.task_state:
            env = dict(self.task_env)
            if self.task_state:
                env["state"] = self.task_state
            story["task"] = {"env": env}
        story["turns"] = turns
        if last is not None and "metrics" in last:  # the last response turn's (RFC-0009, convenience promotions)
            story["final_metrics"] = last["metrics"]
        story["meta"] = {HINTS: {"version": 1, "rows": self.hints}}
        if self.source_ids:
            story["meta"][SOURCE_CALL_IDS] = self.source_ids
        try:
            return self.kept.finish(story)
        except PchronicleError as exc:  # a value the mapping let through that Storyline cannot hold
            raise self.error(first.base, f"session {self.sid!r} gives no valid Storyline: {exc}", first.line) from None

    def _ordered_rows(self) -> list:
        seen: dict[int, str] = {}
        for r, row, line, _ in self.rows:
            step = row.get("step_id")
            pointer = f"/session_steps/{r}/step_id"
            if type(step) is not int or step < 1:
                got = "missing" if "step_id" not in row else f"{type(step).__name__} {short(step)}"
                raise self.error(pointer, f"step_id must be a positive integer, got {got}", line)
            if step in seen:
                raise self.error(
                    pointer, f"step_id {step} repeats within session {self.sid!r} (also at {seen[step]})", line
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
            ok, parsed = try_loads(value, scan=self.scan)
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
                        raise self.error(
                            f"/session_steps/{r}/{key}",
                            f"run identity changes within session {self.sid!r}: {key} {value!r} after {run!r}",
                            line,
                        )
                self.run_key = key
                return run
        self.run_key = None
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
                tools, _ = tools_value(source.row[TOOLS_KEY], scan=self.scan)
                if tools is not None:
                    return tools
        return None

    def _select_task_env(self, rows: list[SourceRow]) -> None:
        for rel, path in ENV_SOURCES:
            for source in rows:
                found, value = self._env_value(source, rel)
                if found and env_ok(path, value):
                    if len(path) == 1:
                        self.task_env[path[0]] = value
                    else:
                        self.task_state[path[1]] = value
                    break
