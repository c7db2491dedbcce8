"""The ``openai-msg`` format (alias ``openai-messages``): gateway captures of OpenAI-compatible calls.

RFC-0009 is the authoritative mapping; ``docs/formats/openai-msg.md`` says how this module reads it,
with the project's decisions where the RFC is silent. Input is a top-level array of rows, the
``{"session_steps": [...], ...root fields}`` envelope, or JSON Lines of rows (pointers then use the
line index as ``{r}``: a top-level array and JSON Lines are both normalised to ``/session_steps/{r}``).

>>> rows = [{"session_id": "s1", "step_id": 1, "run_id": "run-7", "agent_model": "gpt-5",
...          "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}],
...          "response": {"role": "assistant", "content": "4"}}]
>>> [story] = decode(orjson.dumps(rows), "cap.json")
>>> [(t["id"], t["src"], t["msg"]) for t in story["turns"]]
[(1, 'system', 'Be brief.'), (2, 'user', '2+2?'), (3, 'agent', '4')]
>>> orjson.loads(encode([story]))["session_id"]
's1'
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import orjson

from .._gc import gc_paused
from ..errors import FormatError, PchronicleError
from ..jsonio import dumps, loads, may_hold_big_int
from ..pointer import join, parse
from ..storyline import INT64_MAX, _short, compute_unknown_key_counts, is_time, validate
from .base import Record, as_bytes, documents, parse_file
from .markup import blocks, named_blocks

NAME = "openai-msg"
ALIASES = ("openai-messages",)
HINTS = "openai-msg"
log = logging.getLogger(
    "pchronicle_datasets.openai_msg"
)  # key of this format's export hints under /meta (see docs/formats/openai-msg.md)

RUN_KEYS = ("run_id", "run_bucket", "job_id")
ROW_METRICS = ("reward", "step_reward", "is_terminal", "is_truncated", "is_session_completed", "is_trainable")
ENV_STATE_METRICS = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "request_bytes",
    "response_bytes",
    "output_bytes",
    "output_chunk_count",
    "finish_reason",
    "status_code",
    "retry_count",
    "upstream_latency_ms",
    "gateway_overhead_ms",
    "total_latency_ms",
    "ttft_ms",
    "truncate_reason",
    "error_type",
    "error_text",
    "client_cancelled",
    "upstream_cancelled",
    "synthetic_stop",
    "is_truncated",
    "is_session_completed",
    "max_steps",
    "is_stream",
    "payload_sampled",
    "created_at",
    "completed_at",
)
EMPTY_ROW_KEYS = ("blob_manifest", "chosen_response", "rejected_response", "ground_truth_answer", "reference_answer")
EMPTY_MSG_KEYS = ("name", "refusal", "tool_call_id", "tool_calls")
# Session-stable env keys: relative source pointer (from the row) → path under /task/env.
ENV_SOURCES = (
    ("env_name", ("name",)),
    ("meta_json/env_state/endpoint", ("endpoint",)),
    ("dataset_type", ("state", "dataset_type")),
    ("dt", ("state", "dt")),
    ("meta_json/group_id", ("state", "group_id")),
    ("meta_json/env_state/redaction_policy", ("state", "redaction_policy")),
    ("meta_json/env_state/upstream_base_url", ("state", "upstream_base_url")),
    ("meta_json/env_state/weight_version", ("state", "weight_version")),
)
TURN_ENV_SOURCES = (
    ("id", "id"),
    ("meta_json/env_state/event_type", "event_type"),
    ("meta_json/env_state/request_id", "request_id"),
)
REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")
CONTENT_PART_TYPES = frozenset(
    {"text", "image_url", "input_audio", "file", "refusal", "input_text", "output_text", "image", "audio"}
)
CONTEXT_SRC = {"system": "system", "user": "user", "assistant": "agent"}
CONTEXT_KIND = {"system": "context", "user": "llm.request", "assistant": "llm.response"}


def _empty(value: Any) -> bool:
    """Null, "" and empty containers: the RFC's "null 或空容器" that count as missing."""
    return value is None or value == "" or value == [] or value == {}


def _nonempty_str(value: Any) -> bool:
    return type(value) is str and value != ""


def _valid_output(msg: Any) -> bool:
    """An assistant output: non-empty content, refusal or tool calls."""
    return isinstance(msg, dict) and (
        not _empty(msg.get("content")) or not _empty(msg.get("refusal")) or not _empty(msg.get("tool_calls"))
    )


def _try_json(text: str, scan: bool = True) -> tuple[bool, Any]:
    """``(True, value)`` when ``text`` is JSON Storyline can hold; ``scan=False`` when the file holds no
    integer beyond 64 bits anywhere (checked once per file), so no part of it can."""
    try:
        return True, loads(text, scan=scan)
    except FormatError:
        return False, None


def _restore_content(content: Any, scan: bool = True) -> tuple[Any, bool]:
    """Content parts a producer re-encoded as a string, restored (RFC-0009); plain text stays as it is."""
    if type(content) is str and content[:1] in ("[", "{"):
        ok, value = _try_json(content, scan)
        if ok and (isinstance(value, list) or (isinstance(value, dict) and value.get("type") in CONTENT_PART_TYPES)):
            return value, True
    return content, False


# --------------------------------------------------------------------------------------------- input


def _rows(
    data: bytes, document_id: str | None, scan: bool = True
) -> Iterator[tuple[int, Any, int | None, bytes] | Record]:
    """``(r, row, line, raw)`` for every row, or a Record carrying a file- or line-level error.

    The first item is always a dict of root fields (for the envelope; empty otherwise)."""
    try:
        is_whole, parsed = parse_file(data, document_id, scan)
    except FormatError as exc:
        yield {}
        yield Record(exc.line, data, error=exc)
        return
    if not is_whole:
        yield {}
        # {r} is the row's index among the non-blank lines (blank lines are not rows), so that export, which
        # writes no blank lines, gives back the same pointers; errors still name the physical line.
        for r, number, raw, row in parsed:
            yield Record(number, raw, error=row) if isinstance(row, FormatError) else (r, row, number, raw)
        return
    whole = parsed
    if isinstance(whole, list):
        yield {}
        for r, row in enumerate(whole):
            yield (r, row, None, b"")
    elif isinstance(whole, dict) and "session_steps" in whole:
        steps = whole["session_steps"]
        root = {k: v for k, v in whole.items() if k != "session_steps"}
        yield root
        if not isinstance(steps, list):
            yield Record(
                None,
                data,
                error=FormatError(
                    "session_steps must be an array of rows", pointer="/session_steps", document_id=document_id
                ),
            )
            return
        for r, row in enumerate(steps):
            yield (r, row, None, b"")
    elif isinstance(whole, dict) and "session_id" in whole:
        yield {}
        yield (0, whole, 1, data)  # JSON Lines holding a single row
    else:
        yield {}
        kind = "an object without session_steps" if isinstance(whole, dict) else type(whole).__name__
        yield Record(
            None,
            data,
            error=FormatError(
                f"expected an array of rows, a {{'session_steps': [...]}} envelope or JSON Lines of rows; got {kind}",
                document_id=document_id,
            ),
        )


def iter_records(data: str | bytes, document_id: str | None = None) -> Iterator[Record]:
    """One Record per session (in first-appearance order) or per unreadable line, in file order.

    A session that breaks a rule is one error record; the others still convert (skip policy)."""
    with gc_paused():  # the whole file is decoded before the first record is handed out
        records = _file_records(data, document_id)
    yield from records


def _file_records(data: str | bytes, document_id: str | None) -> list[Record]:
    data = as_bytes(data, document_id)
    if not data or data.isspace():
        return []  # an empty file holds no rows
    sessions: dict[str, list[tuple[int, dict, int | None, bytes]]] = {}
    errors: list[Record] = []
    scan = may_hold_big_int(data)  # one scan of the whole file instead of one per line and value
    items = _rows(data, document_id, scan)
    root = next(items)
    for item in items:
        if isinstance(item, Record):
            errors.append(item)
            continue
        r, row, line, raw = item
        base = f"/session_steps/{r}"
        if not isinstance(row, dict):
            errors.append(
                Record(
                    line,
                    raw,
                    value=row,
                    error=FormatError(
                        f"a row is a JSON object, got {type(row).__name__}",
                        pointer=base,
                        document_id=document_id,
                        line=line,
                    ),
                )
            )
            continue
        sid = row.get("session_id")
        if not _nonempty_str(sid):
            what = "missing" if "session_id" not in row else ("empty" if sid == "" else f"a {type(sid).__name__}")
            errors.append(
                Record(
                    line,
                    raw,
                    value=row,
                    error=FormatError(
                        f"session_id must be a non-empty string, got {what}",
                        pointer=f"{base}/session_id",
                        document_id=document_id,
                        line=line,
                    ),
                )
            )
            continue
        sessions.setdefault(sid, []).append((r, row, line, raw))
    records = list(errors)
    first = True
    for sid, rows in sessions.items():
        raw = b"\n".join(x[3] for x in rows if x[3])
        try:
            story = _Session(sid, rows, document_id, root if first else {}, scan).build()
        except PchronicleError as exc:
            records.append(Record(rows[0][2], raw, error=exc, value=[x[1] for x in rows]))
        else:
            records.append(Record(rows[0][2], raw, story=story, value=[x[1] for x in rows]))
        first = False
    # File order (a session stands at its first row), so "the first bad record" is the first in the file.
    records.sort(key=lambda rec: rec.line if rec.line is not None else 0)
    return records


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    """All Storyline documents of a capture file (one per session); raises the first error."""
    return documents(iter_records(data, document_id))


def sniff(head: bytes) -> bool:
    """Rows of this format carry ``session_id`` and ``step_id``."""
    return b'"session_id"' in head and b'"step_id"' in head


# --------------------------------------------------------------------------------------------- reader


_COMPARED_KEYS = frozenset(("role", "content", "tool_calls", "tool_call_id"))


def _history_key(msg: dict) -> tuple:
    """What makes a message a history copy: role, content, tool calls (id, name, arguments), tool_call_id."""
    calls = msg.get("tool_calls")
    call_key: list = []
    if isinstance(calls, list):
        for c in calls:
            if isinstance(c, dict):
                fn = c.get("function") if isinstance(c.get("function"), dict) else {}
                call_key.append((c.get("id") or None, fn.get("name"), fn.get("arguments")))
            else:
                call_key.append(c)
    content = msg.get("content")
    return (msg.get("role"), None if content == "" else content, call_key, msg.get("tool_call_id") or None)


def _parsed_args(args: Any) -> Any:
    if type(args) is str:
        try:
            return ("json", orjson.loads(args))
        except orjson.JSONDecodeError:
            return args
    return ("json", args)


def _same_copy(a: tuple, b: tuple) -> bool:
    """Keys equal, or equal once arguments are compared as JSON (a client may re-serialise them)."""
    if a == b:
        return True
    if a[0] != b[0] or a[1] != b[1] or a[3] != b[3] or len(a[2]) != len(b[2]):
        return False
    for x, y in zip(a[2], b[2], strict=True):
        if not (isinstance(x, tuple) and isinstance(y, tuple)):
            if x != y:
                return False
        elif x[:2] != y[:2] or _parsed_args(x[2]) != _parsed_args(y[2]):
            return False
    return True


class _Session:
    """Builds one Storyline document from the rows of one session (RFC-0009 + the project's reading)."""

    def __init__(self, sid: str, rows: list, document_id: str | None, root: dict, scan: bool = True) -> None:
        self.sid = sid
        self.scan = scan  # False: the file holds no integer beyond 64 bits, so no value in it needs the check
        self.rows = rows
        self.document_id = document_id
        self.root = root
        self.residual: dict[str, Any] = {}
        self.hints: list[dict[str, Any]] = []
        self.used_tcids: set[str] = set()
        self.call_alias: dict[str, str] = {}  # a source call id → the tcid of its latest call
        self.task_env: dict[str, Any] = {}
        self.task_state: dict[str, Any] = {}
        self.carried: dict[str, Any] = {}  # other formats' residual from a `_storyline` envelope

    def error(self, pointer: str, reason: str, line: int | None = None) -> FormatError:
        return FormatError(reason, pointer=pointer, document_id=self.document_id, line=line)

    def keep(self, pointer: str, value: Any) -> None:
        self.residual[pointer] = value

    # ------------------------------------------------------------------------------------ the session

    def build(self) -> dict[str, Any]:
        rows = self._ordered_rows()
        decoded = [self._decode_meta(r, row) for r, row, _, _ in rows]
        run = self._select_run(rows)
        agent_id, agent_source = self._select_agent_id(rows, decoded)
        agent_model = self._first_model(rows)
        self._select_task_env(rows, decoded)
        for key, value in self.root.items():
            self.keep(join("", key), value)

        turns: list[dict[str, Any]] = []
        # The previous row's messages, the keys of what it sent back, and which messages carry extra keys.
        history: tuple[list, list, list] = ([], [], [])
        context_count = 0
        for index, ((r, row, line, _), (meta, env_state)) in enumerate(zip(rows, decoded, strict=True)):
            hint: dict[str, Any] = {"r": r, "step_id": row["step_id"], "keys": []}
            self.hints.append(hint)
            ctx_turns, req, resp, history = self._row_turns(r, row, line, index == 0, history, hint)
            if index == 0:
                context_count = len(ctx_turns)
                for i, t in enumerate(ctx_turns, 1):
                    t["id"] = i
                turns.extend(ctx_turns)
            step = row["step_id"]
            if context_count + 2 * step > INT64_MAX:
                raise self.error(f"/session_steps/{r}/step_id", f"step_id {step} overflows the int64 turn id", line)
            self._row_fields(r, row, meta, env_state, resp, req, hint, run, agent_id, agent_source)
            if req is not None:
                req["id"] = context_count + 2 * step - 1
                turns.append(req)
            resp["id"] = context_count + 2 * step
            turns.append(resp)

        story: dict[str, Any] = {"schema_version": "storyline/v1"}
        story["origin"] = {"format": NAME, **({"document_id": self.document_id} if self.document_id else {})}
        story["session"] = self.sid
        if run is not None:
            story["run"] = run
        agent: dict[str, Any] = {"id": agent_id, "name": agent_id}
        if agent_model is not None:
            agent["model"] = agent_model
        story["agent"] = agent
        if self.task_env or self.task_state:
            env = dict(self.task_env)
            if self.task_state:
                env["state"] = self.task_state
            story["task"] = {"env": env}
        story["turns"] = turns
        last = next((t for t in reversed(turns) if t["src"] == "agent" and not t.get("copied")), None)
        if last is not None and "metrics" in last:
            story["final_metrics"] = last["metrics"]
        story["meta"] = {HINTS: {"version": 1, "rows": self.hints}}
        uf = {
            "sources": {**self.carried, NAME: {"source_document_id": self.document_id or "", "fields": self.residual}}
        }
        story["unknown_fields"] = uf
        story["unknown_key_counts"] = compute_unknown_key_counts(uf)
        try:
            validate(story, document_id=self.document_id, parsed=True)
        except PchronicleError as exc:  # a value the mapping let through that Storyline cannot hold
            raise self.error(
                f"/session_steps/{rows[0][0]}", f"session {self.sid!r} gives no valid Storyline: {exc}", rows[0][2]
            ) from None
        return story

    def _ordered_rows(self) -> list:
        seen: dict[int, str] = {}
        for r, row, line, _ in self.rows:
            step = row.get("step_id")
            pointer = f"/session_steps/{r}/step_id"
            if type(step) is not int or step < 1:
                got = "missing" if "step_id" not in row else f"{type(step).__name__} {_short(step)}"
                raise self.error(pointer, f"step_id must be a positive integer, got {got}", line)
            if step in seen:
                raise self.error(
                    pointer, f"step_id {step} repeats within session {self.sid!r} (also at {seen[step]})", line
                )
            seen[step] = pointer
        return sorted(self.rows, key=lambda x: x[1]["step_id"])

    def _decode_meta(self, r: int, row: dict) -> tuple[dict | None, dict | None]:
        """meta_json and its env_state as objects (None when absent or undecodable → whole value residual)."""
        meta = self._object_or_json(row, "meta_json", f"/session_steps/{r}/meta_json")
        env_state = None
        if meta is not None:
            env_state = self._object_or_json(meta, "env_state", f"/session_steps/{r}/meta_json/env_state")
        return meta, env_state

    def _object_or_json(self, parent: dict, key: str, pointer: str) -> dict | None:
        if key not in parent:
            return None
        value = parent[key]
        if isinstance(value, dict):
            return value
        if type(value) is str:
            ok, parsed = _try_json(value, self.scan)
            if ok and isinstance(parsed, dict):
                return parsed
        return None

    def _select_run(self, rows: list) -> str | None:
        for key in RUN_KEYS:
            values = [(r, row[key], line) for r, row, line, _ in rows if _nonempty_str(row.get(key))]
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

    def _select_agent_id(self, rows: list, decoded: list) -> tuple[str, str]:
        for _, row, _, _ in rows:
            if _nonempty_str(row.get("agent_id")):
                return row["agent_id"], "agent_id"
        for meta, _ in decoded:
            if meta is not None and _nonempty_str(meta.get("source")):
                return meta["source"], "meta_json/source"
        model = self._first_model(rows)
        if model is not None:
            return model, "model"
        return "openai-import", "default"

    @staticmethod
    def _first_model(rows: list) -> str | None:
        for key in ("agent_model", "llm_model"):
            for _, row, _, _ in rows:
                if _nonempty_str(row.get(key)):
                    return row[key]
        return None

    def _env_value(self, row: dict, meta: dict | None, env_state: dict | None, rel: str) -> tuple[bool, Any]:
        parts = rel.split("/")
        if parts[0] == "meta_json":
            holder = meta if len(parts) == 2 else env_state
        else:
            holder = row
        if holder is None or parts[-1] not in holder:
            return False, None
        return True, holder[parts[-1]]

    def _select_task_env(self, rows: list, decoded: list) -> None:
        for rel, path in ENV_SOURCES:
            for (_, row, _, _), (meta, env_state) in zip(rows, decoded, strict=True):
                found, value = self._env_value(row, meta, env_state, rel)
                if found and self._env_ok(path, value):
                    if len(path) == 1:
                        self.task_env[path[0]] = value
                    else:
                        self.task_state[path[1]] = value
                    break

    @staticmethod
    def _env_ok(path: tuple, value: Any) -> bool:
        """A non-empty value that RFC-0001's env shape can hold at ``path``."""
        if value is None or value == "":
            return False
        return type(value) is str if len(path) == 1 else True

    # -------------------------------------------------------------------------------------- one row

    def _row_turns(self, r: int, row: dict, line: int | None, first: bool, history: list, hint: dict):
        base = f"/session_steps/{r}"
        msgs = row.get("messages")
        if "messages" in row:
            hint["keys"].append("messages")
        if msgs is None:
            if "messages" in row:
                hint.setdefault("forms", {})["messages"] = "null"
            msgs = []
        if not isinstance(msgs, list):
            raise self.error(f"{base}/messages", f"messages must be an array, got {type(msgs).__name__}", line)
        for m, msg in enumerate(msgs):
            if not isinstance(msg, dict):
                raise self.error(f"{base}/messages/{m}", f"a message is a JSON object, got {type(msg).__name__}", line)
        prev_msgs, prev_keys, prev_extra = history
        n_prev = len(prev_msgs)
        if n_prev and msgs[:n_prev] == prev_msgs:
            # The usual row: it resends the previous row's messages unchanged (one list comparison, in C),
            # so their keys and which of them carry extra keys are known already.
            keys = prev_keys[:n_prev] + [_history_key(msg) for msg in msgs[n_prev:]]
            extra = [*prev_extra, *(m for m in range(n_prev, len(msgs)) if not msgs[m].keys() <= _COMPARED_KEYS)]
            p = n_prev
        else:
            keys = [
                prev_keys[m] if m < n_prev and msg == prev_msgs[m] else _history_key(msg) for m, msg in enumerate(msgs)
            ]
            extra = [m for m, msg in enumerate(msgs) if not msg.keys() <= _COMPARED_KEYS]
            p = 0
        while p < len(msgs) and p < len(prev_keys) and _same_copy(keys[p], prev_keys[p]):
            p += 1
        hint["p"], hint["n"] = p, len(msgs)
        new = range(p, len(msgs))
        last_user = next((m for m in reversed(new) if msgs[m].get("role") == "user"), None)

        response = row.get("response")
        out_index: int | None = None
        if "response" in row:
            hint["keys"].append("response")
        if _valid_output(response):
            output, out_ptr = response, f"{base}/response"
            out_index = -1
        else:
            if "response" in row and response is not None:
                self.keep(f"{base}/response", response)
            output = None
            for m in reversed(new):
                if msgs[m].get("role") == "assistant" and _valid_output(msgs[m]):
                    output, out_index, out_ptr = msgs[m], m, f"{base}/messages/{m}"
                    break
            if output is None:
                where = f"{base}/response" if "response" in row else f"{base}/messages"
                raise self.error(where, "no valid assistant output (non-empty content, refusal or tool calls)", line)
        hint["out"] = out_index

        # Context turns (first row only): system/user/assistant before the last user (or the output).
        context: list[dict] = []
        ctx_idx: list[int] = []
        if first:
            stop = last_user if last_user is not None else (out_index if out_index not in (None, -1) else len(msgs))
            for m in range(p, stop):
                role = msgs[m].get("role")
                if type(role) is str and role in CONTEXT_SRC:
                    context.append(self._context_turn(msgs[m], f"{base}/messages/{m}"))
                    ctx_idx.append(m)
            hint["ctx"] = ctx_idx

        request = None
        if last_user is not None:
            request = self._request_turn(msgs[last_user], f"{base}/messages/{last_user}")
            hint["user"] = last_user
        # Results answer calls made before them: resolve those that precede the output before its calls
        # are registered (a reused id such as `call_0` is renamed only for the new call), the rest after.
        results: list[dict] = []
        tool_idx: list[int] = []

        def take(messages: range) -> None:
            for m in messages:
                if m in (last_user, out_index) or m in ctx_idx:
                    continue
                msg = msgs[m]
                if msg.get("role") == "tool" and _nonempty_str(msg.get("tool_call_id")):
                    results.append(self._tool_result(msg, f"{base}/messages/{m}"))
                    tool_idx.append(m)
                else:
                    self.keep(f"{base}/messages/{m}", msg)  # new, but neither selected nor a copy: kept whole

        split = len(msgs) if out_index == -1 else out_index
        take(range(p, split))
        response_turn = self._response_turn(output, out_ptr, r, hint)
        take(range(max(p, split), len(msgs)))
        if results:
            response_turn["observation"] = {"results": results}
            hint["tools"] = tool_idx
        for m in extra:  # only copies that carry more than the compared fields can leave residual
            if m >= p:
                break
            self._copy_residual(msgs[m], f"{base}/messages/{m}")

        history = (msgs, keys + ([_history_key(output)] if out_index == -1 else []), extra)
        return context, request, response_turn, history

    def _copy_residual(self, msg: dict, pointer: str) -> None:
        """A history copy: its compared fields are normalised away; anything else it carries is kept."""
        for key, value in msg.items():
            if key in ("role", "content", "tool_calls", "tool_call_id"):
                continue
            if key in ("reasoning_content", "reasoning", "thinking") and (value is None or type(value) is str):
                continue
            if key in EMPTY_MSG_KEYS and _empty(value):
                continue
            if key == "refusal" and _empty(msg.get("content")):
                continue
            self.keep(join(pointer, key), value)

    def _message_rest(self, msg: dict, pointer: str, consumed: tuple) -> None:
        for key, value in msg.items():
            if key in consumed:
                continue
            if key in EMPTY_MSG_KEYS and _empty(value):
                continue
            self.keep(join(pointer, key), value)

    def _content(self, msg: dict, pointer: str, hint: dict, rel: str) -> Any:
        if "content" not in msg:
            hint.setdefault("forms", {})[f"{rel}/content"] = "absent"
            return None
        content, restored = _restore_content(msg["content"], self.scan)
        if restored:
            hint.setdefault("forms", {})[f"{rel}/content"] = "json-string"
        return content

    def _context_turn(self, msg: dict, pointer: str) -> dict:
        role = msg["role"]
        hint = self.hints[-1]
        rel = pointer.split("/", 3)[3]
        turn: dict[str, Any] = {"id": 0, "src": CONTEXT_SRC[role], "msg": self._content(msg, pointer, hint, rel)}
        calls = self._tool_calls(msg, pointer, hint, rel) if role == "assistant" else None
        if calls:
            turn["tool_calls"] = calls
        turn["copied"] = True
        turn["kind"] = "autonomous" if calls else CONTEXT_KIND[role]
        self._message_rest(
            msg, pointer, ("role", "content", "tool_calls") if role == "assistant" else ("role", "content")
        )
        return turn

    def _request_turn(self, msg: dict, pointer: str) -> dict:
        hint = self.hints[-1]
        rel = pointer.split("/", 3)[3]
        turn = {"id": 0, "src": "user", "msg": self._content(msg, pointer, hint, rel), "kind": "llm.request"}
        self._message_rest(msg, pointer, ("content", *self._role(msg, "user", hint, rel)))
        return turn

    @staticmethod
    def _role(msg: dict, expected: str, hint: dict, rel: str) -> tuple[str, ...]:
        """``("role",)`` when the message's role is the one export writes back; an output without a role, or
        with another value, keeps it as it was (absent, or residual)."""
        if "role" not in msg:
            hint.setdefault("forms", {})[f"{rel}/role"] = "absent"
            return ("role",)
        return ("role",) if msg["role"] == expected else ()

    def _tool_result(self, msg: dict, pointer: str) -> dict:
        source_id = msg["tool_call_id"]
        tcid = self.call_alias.get(source_id, source_id)
        if tcid != source_id:
            self.keep(f"{pointer}/tool_call_id", source_id)  # the link was renamed with its call
        result: dict[str, Any] = {"source_call_id": tcid}
        if "content" in msg:
            result["content"] = msg["content"]
        else:
            self.hints[-1].setdefault("forms", {})[f"{pointer.split('/', 3)[3]}/content"] = "absent"
        self._message_rest(msg, pointer, ("role", "tool_call_id", "content"))
        return result

    def _response_turn(self, msg: dict, pointer: str, r: int, hint: dict) -> dict:
        rel = pointer.split("/", 3)[3]
        turn: dict[str, Any] = {"id": 0, "src": "agent"}
        consumed = ["content", "tool_calls", *self._role(msg, "assistant", hint, rel)]
        content = self._content(msg, pointer, hint, rel)
        if _empty(msg.get("content")) and not _empty(msg.get("refusal")):
            turn["msg"] = msg["refusal"]  # refusal is the fallback msg and counts as consumed
            consumed.append("refusal")
            hint.setdefault("forms", {})[f"{rel}/refusal"] = "msg"
            if "content" in msg:
                hint["forms"][f"{rel}/content"] = {"value": msg["content"]}
        else:
            turn["msg"] = content
        for key in REASONING_KEYS:
            if key in msg:
                value = msg[key]
                if value is None or type(value) is str:
                    if value is not None:
                        turn["reason"] = value
                    consumed.append(key)
                    if key != "reasoning_content":
                        hint["reason_key"] = key
                    if value is None:
                        hint.setdefault("forms", {})[f"{rel}/{key}"] = "null"
                break
        calls = self._tool_calls(msg, pointer, hint, rel)
        if not calls and type(msg.get("content")) is str:
            calls = self._marker_calls(msg["content"], r)
            if calls:
                hint["derived_calls"] = True
        if calls:
            turn["tool_calls"] = calls
        turn["nllm"] = 1
        turn["kind"] = "autonomous" if calls else "llm.response"
        self._message_rest(msg, pointer, tuple(consumed))
        return turn

    def _tcid(self, original: Any, fallback: str) -> str:
        """The source id when it is usable (non-empty, not yet used in the document), else a deterministic one."""
        if _nonempty_str(original) and original not in self.used_tcids:
            tcid = original
        else:
            tcid = fallback
            n = 1
            while tcid in self.used_tcids:
                n += 1
                tcid = f"{fallback}-{n}"
        self.used_tcids.add(tcid)
        if _nonempty_str(original):
            self.call_alias[original] = tcid
        return tcid

    def _tool_calls(self, msg: dict, pointer: str, hint: dict, rel: str) -> list[dict]:
        calls = msg.get("tool_calls")
        if _empty(calls):
            return []
        if not isinstance(calls, list):
            self.keep(f"{pointer}/tool_calls", calls)
            return []
        out = []
        r = hint["r"]
        for c, call in enumerate(calls):
            cptr = f"{pointer}/tool_calls/{c}"
            fn = call.get("function") if isinstance(call, dict) else None
            if not isinstance(fn, dict) or not _nonempty_str(fn.get("name")):
                self.keep(cptr, call)  # not a usable call: kept whole, in its place
                hint.setdefault("forms", {})[f"{rel}/tool_calls/{c}"] = "residual"
                continue
            original = call.get("id")
            tcid = self._tcid(original, f"call-{r}-{rel.replace('/', '-')}-{c}")
            if tcid != original:
                if "id" in call:
                    self.keep(f"{cptr}/id", original)
                else:
                    hint.setdefault("forms", {})[f"{rel}/tool_calls/{c}/id"] = "absent"
            args: Any = None
            if "arguments" in fn:
                args = fn["arguments"]
                if type(args) is str:
                    ok, parsed = _try_json(args, self.scan)
                    if ok:
                        args = parsed
                        hint.setdefault("forms", {})[f"{rel}/tool_calls/{c}/function/arguments"] = "json-string"
            else:
                hint.setdefault("forms", {})[f"{rel}/tool_calls/{c}/function/arguments"] = "absent"
            out.append({"tcid": tcid, "fn": fn["name"], "args": args})
            for key, value in call.items():
                if key in ("id", "function") or (key == "type" and value == "function"):
                    continue
                self.keep(join(cptr, key), value)
            for key, value in fn.items():
                if key not in ("name", "arguments"):
                    self.keep(join(f"{cptr}/function", key), value)
        return out

    def _marker_calls(self, content: str, r: int) -> list[dict]:
        """Tool calls written as text: ``<tool_call>{json}</tool_call>`` and ``<function=…>`` blocks."""
        found: list[tuple[str, Any]] = []
        for _, _, raw in blocks(content, "<tool_call>", "</tool_call>"):
            block = raw.strip()
            ok, value = _try_json(block, self.scan)
            if ok and isinstance(value, dict) and _nonempty_str(value.get("name")):
                found.append((value["name"], value.get("arguments", {})))
        if not found:
            for name, body in named_blocks(content, "<function=", "</function>", close_optional=True):
                params = {k: v.strip("\n") for k, v in named_blocks(body, "<parameter=", "</parameter>")}
                found.append((name, params))
        calls = []
        for c, (name, args) in enumerate(found):
            tcid = self._tcid(None, f"call-{r}-content-{c}")
            calls.append({"tcid": tcid, "fn": name, "args": args})
        return calls

    def _row_fields(self, r, row, meta, env_state, resp, req, hint, run, agent_id, agent_source) -> None:
        """Every row-level key: authoritative, derived, consumed alias or residual."""
        base = f"/session_steps/{r}"
        keys = hint["keys"]
        metrics: dict[str, Any] = {}
        # The row's model: agent_model → llm_model.
        model_key = next((k for k in ("agent_model", "llm_model") if _nonempty_str(row.get(k))), None)
        model = row[model_key] if model_key else None
        if model is not None:
            resp["model"] = model
        env_delta: dict[str, Any] = {}
        state_delta: dict[str, Any] = {}
        for key, value in row.items():
            if key in ("session_id", "step_id", "messages", "response"):
                if key in ("session_id", "step_id"):
                    keys.append(key)
                continue
            if key == "created_at":
                if is_time(value):
                    resp["ts"] = value
                    if req is not None:
                        req["ts"] = value
                    keys.append(key)
                else:
                    self.keep(join(base, key), value)
            elif key in RUN_KEYS and key == self.run_key and value == run:
                keys.append(key)
            elif key == "agent_id" and agent_source == "agent_id" and value == agent_id:
                keys.append(key)
            elif key == model_key:
                keys.append(key)
            elif key == "llm_model" and model_key == "agent_model" and value == model:
                keys.append(key)
            elif key in ROW_METRICS:
                metrics[key] = value
                keys.append(key)
            elif key == "env_id" and value == self.sid:
                keys.append(key)
            elif key in EMPTY_ROW_KEYS and _empty(value):
                continue
            elif key == "meta_json":
                self._meta_fields(
                    r, row, meta, env_state, metrics, hint, agent_id, agent_source, model, env_delta, state_delta
                )
            elif key in ("env_name", "dataset_type", "dt", "id"):
                if not self._env_field(key, value, keys, env_delta, state_delta):
                    self.keep(join(base, key), value)
            elif key == "_storyline" and self._carried(value):
                keys.append(key)  # residual of another format, carried by our own writer
            else:
                self.keep(join(base, key), value)
        if metrics:
            resp["metrics"] = metrics
            for src, dst in (("total_latency_ms", "latency_ms"), ("ttft_ms", "ttft_ms")):
                if type(metrics.get(src)) is int and -(2**63) <= metrics[src] <= INT64_MAX:
                    resp[dst] = metrics[src]
        if state_delta:
            env_delta["state"] = state_delta
        if env_delta:
            resp["env"] = env_delta

    def _carried(self, value: Any) -> bool:
        """Take a version-1 ``_storyline`` envelope: ``{"version": 1, "unknown_fields": {"sources": {...}}}``."""
        if not (isinstance(value, dict) and set(value) == {"version", "unknown_fields"} and value["version"] == 1):
            return False
        sources = value["unknown_fields"].get("sources") if isinstance(value["unknown_fields"], dict) else None
        if not isinstance(sources, dict) or NAME in sources or set(value["unknown_fields"]) != {"sources"}:
            return False
        self.carried.update(sources)
        return True

    def _env_field(self, rel, value, keys, env_delta, state_delta) -> bool:
        """Route an env-shaped source value; False when it must stay residual."""
        for source, path in ENV_SOURCES:
            if source == rel:
                if not self._env_ok(path, value):
                    return False
                stable = self.task_env.get(path[0]) if len(path) == 1 else self.task_state.get(path[1])
                keys.append(rel)
                if value != stable:
                    (env_delta if len(path) == 1 else state_delta)[path[-1]] = value
                return True
        for source, name in TURN_ENV_SOURCES:
            if source == rel:
                if type(value) is not str:
                    return False
                keys.append(rel)
                env_delta[name] = value
                return True
        return False

    def _meta_fields(
        self, r, row, meta, env_state, metrics, hint, agent_id, agent_source, model, env_delta, state_delta
    ) -> None:
        base = f"/session_steps/{r}/meta_json"
        keys = hint["keys"]
        if meta is None:
            self.keep(base, row["meta_json"])  # neither an object nor a JSON-encoded object: kept whole
            return
        keys.append("meta_json")
        if type(row["meta_json"]) is str:
            hint.setdefault("forms", {})["meta_json"] = "json-string"
        for key, value in meta.items():
            rel = f"meta_json/{key}"
            if key == "source" and agent_source == "meta_json/source" and value == agent_id:
                keys.append(rel)
            elif key == "group_id":
                if not self._env_field(rel, value, keys, env_delta, state_delta):
                    self.keep(join(base, key), value)
            elif key == "env_state":
                if env_state is None:
                    self.keep(join(base, key), value)
                    continue
                keys.append(rel)
                if type(value) is str:
                    hint.setdefault("forms", {})[rel] = "json-string"
                self._env_state_fields(r, row, env_state, metrics, keys, model, env_delta, state_delta)
            else:
                self.keep(join(base, key), value)

    def _env_state_fields(self, r, row, env_state, metrics, keys, model, env_delta, state_delta) -> None:
        base = f"/session_steps/{r}/meta_json/env_state"
        for key, value in env_state.items():
            rel = f"meta_json/env_state/{key}"
            if key in ENV_STATE_METRICS:
                if key in ROW_METRICS and key in row:
                    keys.append(rel)  # the row-level value wins and consumes this one
                else:
                    metrics[key] = value
                    keys.append(rel)
            elif key == "session_id" and value == self.sid:
                keys.append(rel)
            elif key == "requested_model" and model is not None and value == model:
                keys.append(rel)
            elif key == "llm_step_index" and value == row["step_id"] and type(value) is int:
                keys.append(rel)
            elif self._env_field(rel, value, keys, env_delta, state_delta):
                pass
            else:
                self.keep(join(base, key), value)


# --------------------------------------------------------------------------------------------- writer


def _set(obj: Any, tokens: list[str], value: Any) -> None:
    """Set ``value`` at ``tokens`` inside rows being rebuilt, creating objects on the way."""
    for token in tokens[:-1]:
        nxt = obj[int(token)] if isinstance(obj, list) else obj.get(token)
        if nxt is None:
            nxt = {}
            if isinstance(obj, list):
                obj[int(token)] = nxt
            else:
                obj[token] = nxt
        obj = nxt
    last = tokens[-1]
    if isinstance(obj, list):
        obj[int(last)] = value
    else:
        obj[last] = value


def _get(obj: Any, tokens: list[str]) -> tuple[bool, Any, Any]:
    """``(found, parent, value)`` at ``tokens``."""
    parent = None
    for token in tokens:
        parent = obj
        if isinstance(obj, dict) and token in obj:
            obj = obj[token]
        elif isinstance(obj, list) and token.isdigit() and int(token) < len(obj):
            obj = obj[int(token)]
        else:
            return False, None, None
    return True, parent, obj


def _call_message(call: dict, *, encode_args: bool = False) -> dict:
    """An OpenAI tool call; ``encode_args`` writes ``arguments`` as the JSON string the wire format uses."""
    args = dumps(call["args"]).decode("utf-8") if encode_args else call["args"]
    return {"id": call["tcid"], "type": "function", "function": {"name": call["fn"], "arguments": args}}


def _project(msg: dict) -> dict:
    """The compared fields of a message: what a history copy is rebuilt from."""
    return {k: msg[k] for k in ("role", "content", "tool_calls", "tool_call_id") if k in msg}


class _Recover:
    """Same-source export: rows rebuilt from Storyline semantics, residual and the export hints."""

    def __init__(self, story: dict, source: dict, hints: dict) -> None:
        self.story = story
        self.fields = source.get("fields") or {}
        self.rows_hints = hints["rows"]
        self.turns = {t["id"]: t for t in story["turns"]}
        self.context = len(self.rows_hints[0].get("ctx", ())) if self.rows_hints else 0
        task_env = (story.get("task") or {}).get("env") or {}
        self.task_env = task_env if isinstance(task_env, dict) else {}
        others = {k: v for k, v in story.get("unknown_fields", {}).get("sources", {}).items() if k != NAME}
        self.carried = {"version": 1, "unknown_fields": {"sources": others}} if others else None

    def rows(self) -> tuple[list[tuple[int, dict]], dict]:
        by_row: dict[int, list[tuple[list[str], Any]]] = {}
        root: dict[str, Any] = {}
        for pointer, value in self.fields.items():
            tokens = parse(pointer)
            if len(tokens) >= 2 and tokens[0] == "session_steps" and tokens[1].isdigit():
                by_row.setdefault(int(tokens[1]), []).append((tokens[2:], value))
            elif len(tokens) == 1:
                root[tokens[0]] = value
        out = []
        history: list[dict] = []
        for hint in self.rows_hints:
            row, history = self._row(hint, history, by_row.get(hint["r"], []))
            out.append((hint["r"], row))
        return out, root

    def _row(self, hint: dict, history: list[dict], residual: list) -> tuple[dict, list[dict]]:
        step = hint["step_id"]
        resp = self.turns[self.context + 2 * step]
        req = self.turns.get(self.context + 2 * step - 1) if "user" in hint else None
        env = {**self.task_env, **(resp.get("env") or {})}
        state = {**(self.task_env.get("state") or {}), **((resp.get("env") or {}).get("state") or {})}
        metrics = resp.get("metrics") or {}
        model = resp.get("model")
        values = {
            "session_id": self.story["session"],
            "step_id": step,
            "created_at": resp.get("ts"),
            "agent_id": self.story["agent"]["id"],
            "agent_model": model,
            "llm_model": model,
            "env_id": self.story["session"],
            "meta_json/source": self.story["agent"]["id"],
            "meta_json/env_state/session_id": self.story["session"],
            "meta_json/env_state/requested_model": model,
            "meta_json/env_state/llm_step_index": step,
            "_storyline": self.carried,
        }
        for key in RUN_KEYS:
            values[key] = self.story.get("run")
        for rel, path in ENV_SOURCES:
            values[rel] = env.get(path[0]) if len(path) == 1 else state.get(path[1])
        for rel, name in TURN_ENV_SOURCES:
            values[rel] = (resp.get("env") or {}).get(name)
        row: dict[str, Any] = {}
        for rel in hint["keys"]:
            tokens = rel.split("/")
            if rel in ("meta_json", "meta_json/env_state"):
                value: Any = {}
            elif rel == "messages":
                value = [None] * hint["n"]
            elif rel == "response":
                value = None
            elif (tokens[-1] in ROW_METRICS and len(tokens) == 1) or (
                tokens[0] == "meta_json" and len(tokens) == 3 and (tokens[-1] in ENV_STATE_METRICS)
            ):
                value = metrics.get(tokens[-1])
            else:
                value = values[rel]
            _set(row, tokens, value)

        messages = row.get("messages")
        if messages is not None:
            for m in range(hint["p"]):
                messages[m] = dict(history[m])
            for m, turn in zip(hint.get("ctx", ()), (t for t in self.story["turns"] if t.get("copied")), strict=False):
                messages[m] = self._context_message(turn, hint, m)
            if req is not None:
                messages[hint["user"]] = {"role": "user", "content": req["msg"]}
            results = (resp.get("observation") or {}).get("results") or []
            for m, result in zip(hint.get("tools", ()), results, strict=False):
                tool = {"role": "tool", "tool_call_id": result["source_call_id"]}
                if "content" in result:
                    tool["content"] = result["content"]
                messages[m] = tool
        output = self._output_message(resp, hint)
        if hint["out"] == -1:
            row["response"] = output
        elif messages is not None:
            messages[hint["out"]] = output
        for tokens, value in residual:
            _set(row, tokens, value)
        self._apply_forms(row, hint)
        history = [_project(m) for m in (row.get("messages") or []) if isinstance(m, dict)]
        if hint["out"] == -1 and isinstance(row.get("response"), dict):
            history.append(_project(row["response"]))
        return row, history

    def _calls(self, calls: list, hint: dict, rel: str) -> list:
        forms = hint.get("forms", {})
        out: list = []
        it = iter(calls)
        c = 0
        while True:
            if forms.get(f"{rel}/tool_calls/{c}") == "residual":
                out.append(None)  # filled from residual
            else:
                call = next(it, None)
                if call is None:
                    break
                out.append(_call_message(call))
            c += 1
        return out

    @staticmethod
    def _has_calls(turn: dict, hint: dict, rel: str) -> bool:
        """Whether the source message had a tool_calls list (usable calls, or only calls kept whole)."""
        if turn.get("tool_calls") and not hint.get("derived_calls"):
            return True
        prefix = f"{rel}/tool_calls/"
        return any(k.startswith(prefix) and v == "residual" for k, v in (hint.get("forms") or {}).items())

    def _context_message(self, turn: dict, hint: dict, m: int) -> dict:
        role = {"system": "system", "user": "user", "agent": "assistant"}[turn["src"]]
        msg: dict[str, Any] = {"role": role, "content": turn["msg"]}
        if self._has_calls(turn, hint, f"messages/{m}"):
            msg["tool_calls"] = self._calls(turn.get("tool_calls") or [], hint, f"messages/{m}")
        return msg

    def _output_message(self, turn: dict, hint: dict) -> dict:
        rel = "response" if hint["out"] == -1 else f"messages/{hint['out']}"
        forms = hint.get("forms") or {}
        msg: dict[str, Any] = {"role": "assistant"}
        if forms.get(f"{rel}/refusal") == "msg":  # the refusal was the fallback msg: it goes back to refusal
            content = forms.get(f"{rel}/content")
            if isinstance(content, dict):
                msg["content"] = content["value"]
            msg["refusal"] = turn["msg"]
        else:
            msg["content"] = turn["msg"]
        if "reason" in turn:
            msg[hint.get("reason_key", "reasoning_content")] = turn["reason"]
        if self._has_calls(turn, hint, rel):
            msg["tool_calls"] = self._calls(turn.get("tool_calls") or [], hint, rel)
        return msg

    def _apply_forms(self, row: dict, hint: dict) -> None:
        forms = hint.get("forms") or {}
        # Deepest first, so that an object is encoded as a string only after its members are restored.
        for rel in sorted(forms, key=lambda p: -p.count("/")):
            form = forms[rel]
            tokens = rel.split("/")
            found, parent, value = _get(row, tokens)
            if form == "json-string":
                if found:
                    _set(row, tokens, dumps(value).decode("utf-8"))
            elif form == "absent":
                if found and isinstance(parent, dict):
                    del parent[tokens[-1]]
            elif form == "null":
                _set(row, tokens, None)
            # "msg", {"value": …} (the refusal fallback) and "residual" are laid out while building rows.


def _synthesize(story: dict) -> list[dict]:
    """Rows for a document that did not come from openai-msg: one row per agent turn, full history."""
    rows: list[dict] = []
    history: list[dict] = []
    step = 0
    others = (story.get("unknown_fields") or {}).get("sources") or {}
    answered: set[str] = set()

    def results_of(turn: dict, calls: set[str]) -> list[dict]:
        out = []
        obs = turn.get("observation")
        results = obs.get("results") if isinstance(obs, dict) else None
        for res in results if isinstance(results, list) else []:
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
                msg["tool_calls"] = [_call_message(c, encode_args=True) for c in turn["tool_calls"]]
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
            out["tool_calls"] = [_call_message(c, encode_args=True) for c in turn["tool_calls"]]
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
        row["response"] = out
        if step == 1 and others:
            row["_storyline"] = {"version": 1, "unknown_fields": {"sources": others}}
        rows.append(row)
        history.append(out)
        earlier_calls |= own_calls
        history.extend(results_of(turn, own_calls))
    return rows


def _check_hints(rows: list) -> None:
    """``ValueError`` unless every row hint has the shape the reader writes (see docs/formats/openai-msg.md)."""

    def index(value: Any, n: int, low: int = 0) -> bool:
        return type(value) is int and low <= value < n

    seen: set[int] = set()
    for hint in rows:
        if not isinstance(hint, dict):
            raise ValueError("a row hint is not an object")
        r, n = hint.get("r"), hint.get("n")
        if type(r) is not int or r < 0 or r in seen or type(hint.get("step_id")) is not int or hint["step_id"] < 1:
            raise ValueError("bad r or step_id")
        seen.add(r)
        if type(n) is not int or n < 0 or not index(hint.get("p"), n + 1) or not index(hint.get("out"), n, -1):
            raise ValueError("bad p, n or out")
        if not isinstance(hint.get("keys"), list) or not all(type(k) is str for k in hint["keys"]):
            raise ValueError("bad keys")
        if "user" in hint and not index(hint["user"], n):
            raise ValueError("bad user")
        for name in ("tools", "ctx"):
            if name in hint and not (isinstance(hint[name], list) and all(index(m, n) for m in hint[name])):
                raise ValueError(f"bad {name}")
        forms = hint.get("forms", {})
        if not isinstance(forms, dict) or not all(isinstance(v, (str, dict)) for v in forms.values()):
            raise ValueError("bad forms")
        if hint.get("reason_key", "reasoning_content") not in REASONING_KEYS:
            raise ValueError("bad reason_key")


def _try_recover(story: dict, source: dict, hints: Any) -> tuple[list, dict] | None:
    """Same-source rows, or None when the export hints are missing or do not fit the document (a document
    edited after it was read, or hints of another producer): the rows are then synthesized, with a warning,
    and the document's residual rides in the ``_storyline`` envelope, so nothing is dropped."""
    if not (isinstance(hints, dict) and hints.get("version") == 1 and isinstance(hints.get("rows"), list)):
        return None
    try:
        _check_hints(hints["rows"])
        return _Recover(story, source, hints).rows()
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        log.warning(
            "session %r: export hints at /meta/%s do not fit the document (%r); rows are synthesized",
            story.get("session"),
            HINTS,
            exc,
        )
        return None


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """Rows for Storyline documents: JSON Lines, or an envelope when root fields must come back.

    Documents read from openai-msg are recovered from their residual and export hints (same source);
    others get synthesized rows (RFC-0009: ``job_id``, ``agent_id``, ``agent_model``), with their own
    formats' residual carried in a version-1 ``_storyline`` envelope on the session's first row.
    """
    if options:
        raise TypeError(f"the {NAME} writer takes no options, got {sorted(options)}")
    files: dict[str, int] = {}
    keyed: list[tuple[tuple, dict]] = []
    root: dict[str, Any] = {}
    for index, story in enumerate(stories):
        validate(story)
        source = ((story.get("unknown_fields") or {}).get("sources") or {}).get(NAME)
        meta = story.get("meta")
        hints = meta.get(HINTS) if isinstance(meta, dict) else None
        recovered = _try_recover(story, source, hints) if source is not None else None
        if recovered is not None:
            rows, story_root = recovered
            order = files.setdefault(source["source_document_id"], len(files))
            root.update(story_root)
            keyed.extend(((0, order, r), row) for r, row in rows)
        else:
            keyed.extend(((1, index, s), row) for s, row in enumerate(_synthesize(story)))
    keyed.sort(key=lambda x: x[0])
    rows_out = [row for _, row in keyed]
    if root or (len(rows_out) == 1 and "session_steps" in rows_out[0]):
        # Root fields need the envelope; so does a lone row with a `session_steps` key of its own, which
        # would otherwise read back as an envelope.
        return dumps({**root, "session_steps": rows_out}).decode("utf-8") + "\n"
    return "".join(dumps(row).decode("utf-8") + "\n" for row in rows_out)
