"""Reading a Kimi CLI ``context.jsonl`` into one Storyline document (docs/formats/kimi-cli.md).

The file is what the model saw, line by line (``Context.restore`` reads it back the same way): kosong messages
(``system`` / ``user`` / ``assistant`` turns, ``tool`` messages the results of the calls they name) among the
CLI's bookkeeping records (``_system_prompt``: a system turn; ``_checkpoint`` and ``_usage``: kept whole). Each
value is mapped through ``formats/layout.py``'s pointer map (only when it comes back exactly) or kept as residual
under its source pointer ``/{i}`` (``i`` the 0-based index among the non-blank lines), so the same-source writer
gives every line back.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...errors import FormatError, NoConversationError
from ...linking import SOURCE_CALL_IDS
from ..base import Record, one_document_records
from ..layout import Layout, walkable
from ..residual import origin
from .fields import (
    AGENT_ID,
    AGENT_ID_LINE,
    AGENT_NAME,
    AGENT_TOOL,
    CHECKPOINT,
    COMPACTION,
    CONTEXT_KIND,
    CONTEXT_PREFIXES,
    ERROR_PREFIX,
    EXTRA_KEY,
    MARKERS,
    NAME,
    ROLE_SRC,
    SRC_ROLE,
    SUBAGENT_REL,
    SUBAGENTS,
    SYSTEM_PROMPT,
    TEXT,
    THINK,
    TOOL,
    USAGE,
    place_of,
)

__all__ = ["INVERSE", "is_marker", "iter_records", "read_context"]

#: How the same-source writer gives back the values the pointer map derived (``layout.rebuild``): a turn's ``src``
#: back to its message's ``role``; the system prompt's role; a result's ``tool`` role.
INVERSE = {
    "role": SRC_ROLE,
    "prompt_role": lambda _: SYSTEM_PROMPT,
    "tool_role": lambda _: TOOL,
}


def is_marker(value: Any) -> bool:
    """A bookkeeping record of ``context.jsonl``: an object whose ``role`` is ``_system_prompt``, ``_checkpoint``
    or ``_usage`` and that holds that record's key. No other format writes a role starting with ``_``: this is
    what tells a Kimi CLI context from a bare list of chat messages.

    >>> is_marker({"role": "_checkpoint", "id": 0}), is_marker({"role": "user", "content": "hi"})
    (True, False)
    """
    role = value.get("role") if isinstance(value, dict) else None
    return type(role) is str and role in MARKERS and MARKERS[role] in value


def _obj(value: Any) -> bool:
    """An object whose keys the reader may map one by one (``layout.walkable``), not an array."""
    return isinstance(value, dict) and walkable(value)


def _first_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and _obj(content[0]) and content[0].get("type") == TEXT:
        text = content[0].get("text")
        return text if isinstance(text, str) else None
    return None


def context_of(content: Any) -> str | None:
    """Why a user message is the CLI's words, not the user's (``CONTEXT_PREFIXES``), or None.

    >>> context_of([{"type": "text", "text": "<system>Previous context has been compacted. Here is…</system>"}])
    'compaction'
    >>> context_of("<system>CHECKPOINT 0</system>"), context_of("fix <system> parsing")
    ('system', None)
    """
    text = _first_text(content)
    if text is None:
        return None
    return next((why for prefix, why in CONTEXT_PREFIXES.items() if text.startswith(prefix)), None)


class _Context:
    """One file being read: the layout (residual and pointer map), the turns, the calls waiting for results."""

    def __init__(self, document_id: str | None, records: dict[int, Any]) -> None:
        self.document_id = document_id
        self.records = records
        self.lay = Layout(NAME, document_id, INVERSE)
        self.turns: list[dict[str, Any]] = []
        # source call id → the (turn, Storyline call id) of its calls not yet answered, latest last (Kimi CLI's
        # older ids, "Shell:0", repeat from step to step)
        self.pending: dict[str, list[tuple[int, str]]] = {}
        self.used_ids: set[str] = set()
        self.renamed: dict[str, str] = {}
        self.counts = {CHECKPOINT: 0, USAGE: 0, "orphan_results": 0, "unread": 0}
        self.subagents: list[tuple[dict[str, Any], str]] = []  # (an Agent call, the agent id its result names)

    def error(self, pointer: str, reason: str) -> FormatError:
        return FormatError(reason, pointer=pointer, document_id=self.document_id)

    def read(self) -> dict[str, Any]:
        unread: str | None = None  # the first message line not read (no content, a result of no call)
        for i, rec in self.records.items():
            ptr = f"/{i}"
            role = rec.get("role") if _obj(rec) else None
            role = role if type(role) is str else None  # a role of another type: a line Context skips
            if role == SYSTEM_PROMPT and isinstance(rec.get("content"), str):
                self._turn(ptr, rec, "system", "prompt_role")
            elif role in (CHECKPOINT, USAGE):
                self.counts[role] += 1
                self.lay.keep_record(ptr, rec)
            elif role in ROLE_SRC and "content" in rec:
                self._turn(ptr, rec, ROLE_SRC[role], "role")
            elif role == TOOL and self._result(ptr, rec):
                continue
            else:  # a line Context.restore skips too (no role, an invalid message), or a result of no call
                if role == TOOL:
                    self.counts["orphan_results"] += 1
                else:
                    self.counts["unread"] += 1
                if unread is None and (role in ROLE_SRC or role == TOOL):
                    unread = ptr
                self.lay.keep_record(ptr, rec)
        if not any(turn["src"] in ("user", "agent") for turn in self.turns):
            if unread is not None:  # messages there were, but their content would all be residual
                raise self.error(
                    unread,
                    "no user or assistant message of the context has content (a string or a part list): nothing "
                    "to read as turns",
                )
            raise NoConversationError(
                "the context holds no user or assistant message: only bookkeeping", document_id=self.document_id
            )
        return self._story()

    # ---------------------------------------------------------------------------------------------- turns

    def _turn(self, ptr: str, rec: dict[str, Any], src: str, rule: str) -> None:
        t = len(self.turns)
        at = f"/turns/{t}"
        turn: dict[str, Any] = {"id": t + 1, "src": src, "msg": None}
        self.turns.append(turn)
        self.lay.map(f"{ptr}/role", rec["role"], f"{at}/src", src, rule)
        self._content(f"{ptr}/content", rec["content"], turn, t)
        used = ["role", "content"]
        if src == "user":
            why = context_of(rec["content"])
            if why is not None:  # the CLI's words (a compaction summary, a reminder): context, as Qwen Code's are
                turn.update(copied=True, kind=CONTEXT_KIND, extra={EXTRA_KEY: {"context": why}})
                if why == COMPACTION:  # the key Codex's and Pi's compaction turns carry: pc.flags' "compaction"
                    turn["extra"][COMPACTION] = "summary"
        if src == "agent":
            calls = rec.get("tool_calls")
            if isinstance(calls, list) and calls:
                used.append("tool_calls")
                self._calls(f"{ptr}/tool_calls", calls, turn, t)
        self.lay.record_rest(ptr, rec, tuple(used))

    def _content(self, cp: str, content: Any, turn: dict[str, Any], t: int) -> None:
        """A message's ``content``: a string is the message; of a part list, the ``think`` parts are the
        reasoning and the rest the message (its text when every part is text, else the parts as they are)."""
        at = f"/turns/{t}"
        if isinstance(content, str):
            turn["msg"] = content
            self.lay.map(cp, content, f"{at}/msg", content)
            return
        if not isinstance(content, list) or not content:
            self.lay.keep(cp, content)  # null or [] (no content), or what kosong would refuse
            return
        thinks = [(k, p) for k, p in enumerate(content) if _obj(p) and p.get("type") == THINK]
        thinks = [(k, p) for k, p in thinks if isinstance(p.get("think"), str)]
        think_at = {k for k, _ in thinks}
        rest = [(k, p) for k, p in enumerate(content) if k not in think_at]
        texts = all(_obj(p) and p.get("type") == TEXT and isinstance(p.get("text"), str) for _, p in rest)
        if rest and texts and len(rest) == 1:
            k, part = rest[0]
            turn["msg"] = part["text"]
            self.lay.map(f"{cp}/{k}/text", part["text"], f"{at}/msg", part["text"])
            self.lay.rest(part, f"{cp}/{k}", ("text",))
        elif rest and texts:
            turn["msg"] = []
            for j, (k, part) in enumerate(rest):
                turn["msg"].append({"type": TEXT, "text": part["text"]})
                self.lay.map(f"{cp}/{k}/text", part["text"], f"{at}/msg/{j}/text", part["text"])
                self.lay.rest(part, f"{cp}/{k}", ("text",))
        elif rest:  # an image, audio or video part, or one kosong does not know: the parts as they are
            turn["msg"] = []
            for j, (k, part) in enumerate(rest):
                turn["msg"].append(part)
                self.lay.map(f"{cp}/{k}", part, f"{at}/msg/{j}", part)
        if len(thinks) == 1:
            k, part = thinks[0]
            turn["reason"] = part["think"]
            self.lay.map(f"{cp}/{k}/think", part["think"], f"{at}/reason", part["think"])
            self.lay.rest(part, f"{cp}/{k}", ("think",))  # type, encrypted (the signature)
        elif thinks:  # several: reason is a derived copy, the parts stay as written
            turn["reason"] = "\n\n".join(part["think"] for _, part in thinks)
            for k, part in thinks:
                self.lay.keep(f"{cp}/{k}", part)

    def _calls(self, ptr: str, calls: list[Any], turn: dict[str, Any], t: int) -> None:
        out: list[dict[str, Any]] = []
        for c, call in enumerate(calls):
            entry = self.lay.openai_call(f"{ptr}/{c}", call, f"/turns/{t}/tool_calls/{len(out)}", self.used_ids)
            if entry is None:
                continue
            if entry["tcid"] != call["id"]:
                self.renamed[entry["tcid"]] = call["id"]
            self.pending.setdefault(call["id"], []).append((t, entry["tcid"]))
            out.append(entry)
        if out:
            turn["tool_calls"] = out

    # ---------------------------------------------------------------------------------------------- results

    def _result(self, ptr: str, rec: dict[str, Any]) -> bool:
        """A ``tool`` message as the result of the pending call its ``tool_call_id`` names (the latest call of that
        id not yet answered), on the call's turn; False (the caller keeps it) when it names none."""
        source = rec.get("tool_call_id")
        if not (isinstance(source, str) and self.pending.get(source) and "content" in rec):
            return False
        t, tcid = self.pending[source].pop()
        turn = self.turns[t]
        at = self.lay.result_message(ptr, rec, turn, t, tcid, "tool_role")
        self.lay.map(
            f"{ptr}/tool_call_id", source, f"{at}/source_call_id", tcid, None if tcid == source else "renamed_id"
        )
        call = next(c for c in turn["tool_calls"] if c["tcid"] == tcid)
        text = _first_text(rec["content"])
        if text is not None and text.startswith(ERROR_PREFIX):
            turn["observation"]["results"][-1]["is_error"] = True  # derived: the CLI's own mark of a failed call
        elif text is not None and call["fn"] == AGENT_TOOL:
            found = AGENT_ID_LINE.search(text)
            if found is not None:
                self.subagents.append((call, found.group(1)))
        self.lay.record_rest(ptr, rec, ("role", "content", "tool_call_id"))
        return True

    # ---------------------------------------------------------------------------------------------- document

    def _story(self) -> dict[str, Any]:
        place = place_of(self.document_id)
        story: dict[str, Any] = {"schema_version": "storyline/v1", "origin": origin(NAME, self.document_id)}
        story["session"] = place.get("session") or NAME
        story["agent"] = {"id": AGENT_ID, "name": AGENT_NAME}
        story["turns"] = self.turns
        if "parent" in place:
            story["parent"] = {"psid": place["parent"], "rel": SUBAGENT_REL}
        elif self.subagents:
            # the subagent's own context lies at <session>/subagents/<agent id>/context.jsonl (derived links; a
            # rotated file's calls started theirs in the same session folder)
            base = story["session"].removesuffix(f"/context_{place['rotated']}" if "rotated" in place else "")
            children: list[str] = []
            for call, agent_id in self.subagents:
                child = f"{base}/{SUBAGENTS}/{agent_id}"
                call["extra"] = {"subagent": child}
                if child not in children:
                    children.append(child)
            story["children"] = children
        extra = {k: place[k] for k in ("work_dir_hash", "rotated") if k in place}
        if extra:
            story["extra"] = {EXTRA_KEY: extra}
        hints: dict[str, Any] = {**self.lay.hints("object"), "records": len(self.records)}
        hints.update({k.lstrip("_"): v for k, v in self.counts.items() if v})
        story["meta"] = {NAME: hints}
        if self.renamed:
            story["meta"][SOURCE_CALL_IDS] = self.renamed
        return self.lay.kept.finish(story)


def read_context(data: Any, document_id: str | None = None) -> Iterator[Record]:
    """The records of one context file (``base.one_document_records``): one error record per line that is not
    JSON (the other lines still make the document, as ``Context.restore`` skips them), then the document, or the
    error that refused it."""
    return one_document_records(
        data,
        document_id,
        "a Kimi CLI context file is JSON Lines of messages and records (objects)",
        lambda records: _Context(document_id, records).read(),
    )


iter_records = read_context
