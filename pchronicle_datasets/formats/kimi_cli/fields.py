"""The Kimi CLI mapping table as data (docs/formats/kimi-cli.md), read by the reader and both writers.

Source: MoonshotAI/kimi-cli (Apache-2.0) ``src/kimi_cli/soul/context.py`` (``Context``: what each line of
``context.jsonl`` is), ``src/kimi_cli/session.py`` and ``metadata.py`` (where the files lie), and the message model
``packages/kosong/src/kosong/message.py`` (``Message``, ``TextPart``, ``ThinkPart``, ``ToolCall``).
"""

from __future__ import annotations

import re
from typing import Any

NAME = "kimi-cli"
AGENT_ID = "kimi-cli"
AGENT_NAME = "Kimi CLI"
EXTRA_KEY = "kimi_cli"

#: The bookkeeping records ``Context`` writes among the messages (a ``role`` starting with ``_``), each with the key
#: that holds its value: the system prompt (``write_system_prompt``, the file's first line since 2026), a checkpoint
#: (``checkpoint``: one before each user input, the marks ``revert_to`` cuts at) and the context's token count
#: (``update_token_count``).
SYSTEM_PROMPT = "_system_prompt"
CHECKPOINT = "_checkpoint"
USAGE = "_usage"
MARKERS = {SYSTEM_PROMPT: "content", CHECKPOINT: "id", USAGE: "token_count"}

#: ``Message.role`` → Storyline ``src`` (kosong's roles; ``tool`` messages are results, not turns).
ROLE_SRC = {"system": "system", "user": "user", "assistant": "agent"}
SRC_ROLE = {v: k for k, v in ROLE_SRC.items()}
TOOL = "tool"

#: kosong's content part types the reader maps: ``text`` → the message, ``think`` → the reasoning (its ``encrypted``
#: signature residual); every other part (``image_url``, ``audio_url``, ``video_url``) stays in the message as it is.
TEXT, THINK = "text", "think"

#: A user message the CLI wrote, not the user: its first text part opens with one of these (kimi-cli
#: ``soul/message.py`` ``system()`` / ``system_reminder()``): the compaction summary
#: (``soul/compaction.py`` ``COMPACTION_OUTPUT_PREFIX``), a checkpoint marker, a background-task snapshot, a reminder.
COMPACTION_PREFIX = "<system>Previous context has been compacted."
COMPACTION = "compaction"
CONTEXT_PREFIXES = {COMPACTION_PREFIX: COMPACTION, "<system-reminder>": "system-reminder", "<system>": "system"}
CONTEXT_KIND = "context"

#: A tool result the CLI marked failed (``tool_result_to_message``: ``system(f"ERROR: {message}")`` first).
ERROR_PREFIX = "<system>ERROR:"

#: Files Kimi CLI keeps beside its sessions that hold no conversation of their own (``sidecars.index_files``
#: leaves them out of a folder's documents and names them). ``wire.jsonl`` is the UI's event stream: a replay of
#: the conversation ``context.jsonl`` holds, with timestamps and per-step token usage (docs/formats/kimi-cli.md,
#: "Which file is the conversation").
INDEX_FILES = {
    "sessions/*/*/wire.jsonl": "Kimi CLI's event stream for its UI (a replay of context.jsonl; not read)",
    "subagents/*/wire.jsonl": "Kimi CLI's event stream of a subagent (a replay of its context.jsonl; not read)",
    "sessions/*/*/state.json": "Kimi CLI's session state (title, approvals, plan mode, todos)",
    "sessions/*/*/metadata.json": "Kimi CLI's older session state (title, archive flag)",
    "subagents/*/meta.json": "Kimi CLI's record of a subagent (type, description, status, model)",
    "tasks/*/spec.json": "a background task Kimi CLI ran (its command)",
    "tasks/*/runtime.json": "a background task's state",
    "tasks/*/control.json": "a background task's control flags",
    "tasks/*/consumer.json": "a background task's delivery state",
    "notifications/*/event.json": "a notification Kimi CLI queued for the model",
    "notifications/*/delivery.json": "a notification's delivery state",
    "kimi.json": "Kimi CLI's list of work directories (no conversation)",
    "user-history/": "Kimi CLI's history of the prompts typed in its shell (no conversation)",
}

#: Where a context file lies (``~/.kimi/sessions/<md5 of the work dir>/<session id>/``): the main context, a file
#: ``revert_to`` / ``clear`` / compaction rotated out (``context_<n>.jsonl``: ``utils/path.next_available_rotation``),
#: and a subagent's (``<session>/subagents/<agent id>/context.jsonl``). Before the per-session folders, a session
#: was ``<md5>/<session id>.jsonl`` (``_migrate_session_context_file``).
CONTEXT_FILE = "context.jsonl"
ROTATED = re.compile(r"context_(\d+)\.jsonl")
SUBAGENTS = "subagents"
SUBAGENT_REL = "subagent"
#: The tool that starts a subagent, and the line of its result that names it (``subagents/runner.py`` and
#: ``tools/agent``: ``agent_id: a1b2c3d4`` first, for a foreground and a background run alike).
AGENT_TOOL = "Agent"
AGENT_ID_LINE = re.compile(r"^agent_id: (\S+)$", re.MULTILINE)
COMPRESSED = (".gz", ".zst", ".bz2", ".xz")


def place_of(document_id: str | None) -> dict[str, Any]:
    """What a context file's path says: ``session`` (the session's id; a subagent's ``<id>/subagents/<agent>``, a
    rotated file's ``<id>/context_<n>``), ``parent`` (a subagent's session), ``work_dir_hash``, ``rotated``.

    >>> place_of("0a1b/4f2e-77/context.jsonl")
    {'session': '4f2e-77', 'work_dir_hash': '0a1b'}
    >>> place_of("h/s1/subagents/a7/context.jsonl")
    {'session': 's1/subagents/a7', 'parent': 's1', 'work_dir_hash': 'h'}
    >>> place_of("h/s1/context_2.jsonl.gz"), place_of("h/s0.jsonl"), place_of(None)
    ({'session': 's1/context_2', 'rotated': 2, 'work_dir_hash': 'h'}, {'session': 's0', 'work_dir_hash': 'h'}, {})
    """
    if not document_id:
        return {}
    parts = [p for p in document_id.replace("\\", "/").split("/") if p]
    name = parts[-1] if parts else ""
    for suffix in COMPRESSED:
        name = name.removesuffix(suffix)
    folders = parts[:-1]
    rotated = ROTATED.fullmatch(name)
    if name != CONTEXT_FILE and rotated is None:
        stem = name.removesuffix(".jsonl")
        out: dict[str, Any] = {"session": stem or document_id}
        if folders:
            out["work_dir_hash"] = folders[-1]
        return out
    if not folders:
        return {"session": document_id}
    if len(folders) >= 3 and folders[-2] == SUBAGENTS:
        out = {"session": "/".join(folders[-3:]), "parent": folders[-3]}
        hashes = folders[:-3]
    else:
        out = {"session": folders[-1]}
        hashes = folders[:-1]
    if rotated is not None:
        out["session"] += f"/context_{rotated.group(1)}"
        out["rotated"] = int(rotated.group(1))
    if hashes:
        out["work_dir_hash"] = hashes[-1]
    return out


#: What the writer for documents of other formats writes (``layout.report_unwritten`` counts every other value).
WRITTEN = {
    "": ("session", "turns", "unknown_fields"),
    "agent": ("id", "name"),
    "task": (),
    "turn": ("id", "src", "msg", "reason", "tool_calls", "observation"),
    "call": ("tcid", "fn", "args", "result"),
    "result": ("content", "source_call_id"),
}
