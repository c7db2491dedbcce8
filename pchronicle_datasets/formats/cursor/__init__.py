"""The ``cursor`` format: Cursor agent transcripts, ``~/.cursor/projects/<repo>/agent-transcripts/<id>.jsonl``
(the CLI's flat layout; the IDE's ``<id>/<id>.jsonl``), one conversation per file (docs/formats/cursor.md).

Each line is ``{"role": "user" | "assistant", "message": {"content": [text | tool_use{name, input}]}}``: one turn.
Transcripts hold no tool results, no call ids and no timestamps: calls get derived ids (``cursor-{line}-{k}``) and
stay without results (counted by ``tool_stats``, never invented). A user text wrapped as
``[<timestamp>…</timestamp>\\n]<user_query>\\n…\\n</user_query>`` is the query inside (the user's words); the
wrapper is kept for the writer, which wraps it again.

Written from the schema (entireio/cli ``cmd/entire/cli/agent/cursor/AGENT.md``): no public transcript is known.

>>> import json
>>> lines = [{"role": "user", "message": {"content": [{"type": "text", "text": "<user_query>\\nls\\n</user_query>"}]}},
...          {"role": "assistant", "message": {"content": [{"type": "tool_use", "name": "Shell", "input": {}}]}}]
>>> text = "".join(json.dumps(line) + "\\n" for line in lines)
>>> [story] = decode(text, "agent-transcripts/c1.jsonl")
>>> story["session"], story["turns"][0]["msg"], story["turns"][1]["tool_calls"][0]["tcid"]
('c1', [{'type': 'text', 'text': 'ls'}], 'cursor-1-0')
>>> [json.loads(line) for line in encode([story]).splitlines()] == lines
True
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

import orjson

from ...errors import FormatError, PchronicleError
from ...linking import place_results
from ...losses import report_loss
from ...pointer import escape, parse
from ..base import Record, as_source, documents, parse_file
from ..residual import Residual, envelope, origin, other_sources, source_fields

__all__ = ["ALIASES", "EXTENSION", "NAME", "OUTPUT", "PER_DOCUMENT", "decode", "encode", "iter_records", "sniff"]

NAME = "cursor"
ALIASES: tuple[str, ...] = ()
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = True
DOCUMENT_SUFFIX = ".jsonl"  # convert --per-document names each file {session}.jsonl
ROLES = {"user": "user", "assistant": "agent"}
ROLE_OF = {v: k for k, v in ROLES.items()}
#: The wrapper Cursor puts around a user's query (with an optional leading timestamp line): unwrapped.
WRAPPED = re.compile(r"((?:<timestamp>[^<]*</timestamp>\n)?<user_query>\n)(.*)(\n</user_query>)\Z", re.DOTALL)


def sniff(sample: Any) -> bool:
    """A transcript line: exactly ``role`` (user/assistant) and ``message`` holding a ``content`` list.

    >>> sniff({"role": "user", "message": {"content": [{"type": "text", "text": "hi"}]}})
    True
    >>> sniff({"role": "user", "content": "hi"})
    False
    """
    return (
        isinstance(sample, dict)
        and sample.keys() == {"role", "message"}
        and sample["role"] in ROLES
        and isinstance(sample["message"], dict)
        and isinstance(sample["message"].get("content"), list)
    )


def _session_of(document_id: str | None) -> str:
    stem = PurePosixPath((document_id or "").replace("\\", "/")).name.split(".", 1)[0]
    return stem or NAME


def _line(
    i: int, value: Any, story: dict[str, Any], kept: Residual, wrapped: dict[str, list[str]], kinds: dict[str, str]
) -> bool:
    """Line ``i`` as a turn (False: the line stays residual, whole)."""
    ptr = f"/{i}"
    if not (
        isinstance(value, dict)
        and isinstance(value.get("role"), str)  # a list or object role is unhashable: not looked up
        and value["role"] in ROLES
        and isinstance(value.get("message"), dict)
        and isinstance(value["message"].get("content"), list)
    ):
        kept.keep(ptr, value)
        return False
    turn: dict[str, Any] = {"id": len(story["turns"]) + 1, "src": ROLES[value["role"]], "msg": []}
    calls = []
    order = ""
    for k, part in enumerate(value["message"]["content"]):
        pptr = f"{ptr}/message/content/{k}"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and type(part.get("text")) is str:
            text = part["text"]
            match = WRAPPED.match(text) if value["role"] == "user" else None
            if match:
                wrapped[f"{i}/{k}"] = [match.group(1), match.group(3)]
                text = match.group(2)
            turn["msg"].append({"type": "text", "text": text})
            used, order = ("type", "text"), order + "t"
        elif kind == "tool_use" and type(part.get("name")) is str and part["name"] and "input" in part:
            calls.append({"tcid": f"cursor-{i}-{k}", "fn": part["name"], "args": part["input"]})
            used, order = ("type", "name", "input"), order + "c"
        else:
            kept.keep(pptr, part)
            continue
        for key, v in part.items():
            if key not in used:
                kept.keep(f"{pptr}/{escape(key)}", v)
    if calls:
        turn["tool_calls"] = calls
    kinds[str(i)] = order
    for key, v in value["message"].items():
        if key != "content":
            kept.keep(f"{ptr}/message/{escape(key)}", v)
    for key, v in value.items():
        if key not in ("role", "message"):
            kept.keep(f"{ptr}/{escape(key)}", v)
    story["turns"].append(turn)
    return True


def iter_records(data: Any, document_id: str | None = None):
    """The document of a transcript (a line that is not JSON is its own error record; the others still read)."""
    src = as_source(data, document_id)
    if src.is_blank():
        return
    try:
        whole, parsed = parse_file(src, document_id)
    except FormatError as exc:
        yield Record(exc.line, src.text, error=exc)
        return
    kept = Residual(NAME, document_id)
    story: dict[str, Any] = {
        "schema_version": "storyline/v1",
        "origin": origin(NAME, document_id),
        "session": _session_of(document_id),
        "agent": {"id": NAME},
        "turns": [],
    }
    items = [(0, None, src.text, parsed)] if whole else parsed
    layout: list[int] = []
    wrapped: dict[str, list[str]] = {}
    kinds: dict[str, str] = {}
    first, raws = None, []
    for index, line, raw, value in items:
        if isinstance(value, FormatError):
            yield Record(line, raw, error=value)
            continue
        first = line if first is None else first
        raws.append(raw)
        if _line(index, value, story, kept, wrapped, kinds):
            layout.append(index)
    story["meta"] = {NAME: {"version": 1, "lines": (index + 1) if raws else 0, "turns": layout, "kinds": kinds}}
    if wrapped:
        story["meta"][NAME]["wrapped"] = wrapped
    try:
        if not layout:  # nothing but residual: not a transcript
            raise FormatError(
                "a Cursor transcript is JSON Lines of {role, message: {content: [...]}}; no line of this file is one",
                pointer="",
                document_id=document_id,
            )
        story = kept.finish(story)
    except PchronicleError as exc:
        yield Record(first, b"\n".join(raws), error=exc.with_context(document_id=document_id, line=first))
        return
    yield Record(first, b"\n".join(raws), story=story)


def decode(data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]:
    return documents(iter_records(data, document_id))


# ------------------------------------------------------------------------------------------------ writing


def _put(node: Any, tokens: list[str], value: Any) -> None:
    for token in tokens[:-1]:
        node = node[int(token)] if isinstance(node, list) else node.setdefault(token, {})
    if isinstance(node, list):
        index = int(tokens[-1])
        node.insert(index, value)
    else:
        node[tokens[-1]] = value


def _same_source(story: dict[str, Any], hints: dict[str, Any]) -> list[Any]:
    fields = (source_fields(story, NAME) or {}).get("fields") or {}
    kinds = hints.get("kinds") or {}
    lines: list[Any] = [None] * int(hints.get("lines") or 0)
    for i, turn in zip(hints["turns"], story["turns"], strict=True):
        texts = iter(turn["msg"] if isinstance(turn["msg"], list) else [{"text": turn["msg"]}])
        calls = iter(turn.get("tool_calls") or ())
        content: list[Any] = []
        for kind in kinds.get(str(i), ""):
            if kind == "t":
                part = next(texts, {})
                content.append({"type": "text", "text": part.get("text", "") if isinstance(part, dict) else part})
            else:
                call = next(calls)
                content.append({"type": "tool_use", "name": call["fn"], "input": call["args"]})
        lines[i] = {"role": ROLE_OF.get(turn["src"], "user"), "message": {"content": content}}
    # the residual in its place, shallow first: whole lines, then whole parts (inserted at their index), then keys
    for pointer, value in sorted(fields.items(), key=lambda kv: len(parse(kv[0]))):
        tokens = parse(pointer)
        if len(tokens) == 1:
            lines[int(tokens[0])] = value
        else:
            _put(lines[int(tokens[0])], tokens[1:], value)
    for key, (head, tail) in (hints.get("wrapped") or {}).items():
        i, k = (int(x) for x in key.split("/"))
        part = lines[i]["message"]["content"][k]
        part["text"] = head + part["text"] + tail
    return [line for line in lines if line is not None]


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """The transcript of one document ("" for none); several are refused (one file per conversation)."""
    if not stories:
        return ""
    if len(stories) > 1:
        raise FormatError(
            f"a Cursor transcript holds one conversation, not {len(stories)}: convert --per-document", pointer=""
        )
    story = stories[0]
    meta = story.get("meta") if isinstance(story.get("meta"), dict) else {}
    hints = meta.get(NAME)
    if (
        (story.get("origin") or {}).get("format") == NAME
        and isinstance(hints, dict)
        and isinstance(hints.get("turns"), list)
        and len(hints["turns"]) == len(story["turns"])
    ):
        lines = _same_source(story, hints)
    else:
        lines = _synthesized(story)
    return "".join(orjson.dumps(line).decode() + "\n" for line in lines)


def _synthesized(story: dict[str, Any]) -> list[Any]:
    placed, _ = place_results(story)
    lines: list[Any] = []
    for t, turn in enumerate(story["turns"]):
        if turn["src"] not in ROLE_OF:
            report_loss(f"not in {NAME}: /turns/*/src", pointer=f"/turns/{t}/src")
            continue
        msg = turn["msg"]
        texts = (
            [msg]
            if isinstance(msg, str)
            else [p.get("text") for p in msg if isinstance(p, dict) and isinstance(p.get("text"), str)]
            if isinstance(msg, list)
            else []
        )
        content: list[Any] = [{"type": "text", "text": x} for x in texts]
        content += [{"type": "tool_use", "name": c["fn"], "input": c["args"]} for c in turn.get("tool_calls") or ()]
        if placed.get(t):
            report_loss(f"not in {NAME}: tool results", pointer=f"/turns/{t}/tool_calls", count=len(placed[t]))
        if isinstance(turn.get("reason"), str) and turn["reason"]:
            report_loss(f"not in {NAME}: /turns/*/reason", pointer=f"/turns/{t}/reason")
        lines.append({"role": ROLE_OF[turn["src"]], "message": {"content": content}})
    carried = envelope(other_sources(story, NAME))
    if carried is not None:
        report_loss(f"not in {NAME}: other formats' residual", pointer="/unknown_fields")
    return lines
