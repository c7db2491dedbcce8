"""The Pi session ↔ Storyline tables (docs/formats/pi.md is their prose), held once for reader and writer.

>>> ROLES["hookMessage"]
'custom'
"""

from __future__ import annotations

NAME = "pi"
#: Files OpenClaw (which writes its agents' sessions in Pi's format, ``~/.openclaw/agents/<id>/sessions/``) keeps
#: beside them that hold no session (``sidecars.pair`` leaves them out of a folder's documents; ``*``: any part of
#: a name, the ``sessions/`` folder required so that a user's own file of that name elsewhere is still read):
#: found in a real OpenClaw state folder (tests/data/pi/README.md).
INDEX_FILES = {
    "sessions/*.trajectory.jsonl": "OpenClaw's runtime trace of the session (its own schema, no Pi session)",
    "sessions/*.trajectory-path.json": "OpenClaw's pointer to the session's runtime trace",
    "sessions/sessions.json": "OpenClaw's store of the agent's sessions (session keys, delivery, usage)",
    "sessions/sessions.json.*.tmp": "a copy of OpenClaw's store of sessions an interrupted write left",
    "sessions/.usage-cost-cache.json": "OpenClaw's cache of the sessions' usage and cost",
}
HINTS = "pi"  # /meta/pi: the line plan and counts of a document read from a Pi session
AGENT_ID = "pi"

#: message roles → how the reader takes them (v2's hookMessage is v3's custom)
ROLES = {
    "user": "user",
    "assistant": "assistant",
    "toolResult": "toolResult",
    "bashExecution": "bashExecution",
    "custom": "custom",
    "hookMessage": "custom",
}
#: entry types that give a context turn: entry type → the key of their text
SUMMARIES = {"compaction": "summary", "branch_summary": "summary"}
#: v3's entry of an extension's message to the model (``{type: "custom_message", customType, content, display,
#: details}``; pi-mono docs/session.md: "Extension-injected messages that DO participate in LLM context"; OpenClaw
#: writes the runtime context it sends beside each user message so): read as a ``custom`` message is
CUSTOM_MESSAGE = "custom_message"

#: assistant usage key → Storyline metrics key; ``cost.total`` is ``cost_usd``; the rest go to metrics.extra
USAGE = {"input": "prompt_tokens", "output": "completion_tokens", "cacheRead": "cached_tokens"}
USAGE_EXTRA = {"cacheWrite": "cache_write_tokens", "totalTokens": "total_tokens"}

#: ``extra.pi`` of an agent turn (``EXTRA``): why it is no model's answer. An assistant message whose ``stopReason``
#: is ``STOP_ERROR`` is a provider call that failed (pi-ai's ``StopReason``; a real OpenClaw session of 2026-03 writes
#: retries of ``"fetch failed"`` as assistant messages of empty ``content``, ``errorMessage`` the error):
#: ``extra.pi.api_error`` is its ``errorMessage`` (else true), which ``pc.flags`` reads (``api_error``). One whose
#: ``stopReason`` is ``STOP_ABORTED`` is the user's stop (Esc): counted in ``/meta/pi/interrupted``
#: (``pc.flags``: ``interrupted``), the turn unchanged. One whose ``provider`` is ``SELF_PROVIDER`` OpenClaw wrote
#: itself, no model did (``model`` ``gateway-injected``: a gateway notice such as "⚠️ Agent failed before reply: No
#: API key found…", the same real session; ``delivery-mirror``, ``api: "openclaw-transcript"``: a copy of a message
#: delivered to a channel): a context turn (``copied``), ``extra.pi.context`` its ``model``.
EXTRA = "pi"
STOP_ERROR = "error"
STOP_ABORTED = "aborted"
SELF_PROVIDER = "openclaw"

#: The header key that names the session a file was made from: ``parentSession`` (v2/v3: ``/fork``, a branch
#: extracted with ``createBranchedSession``, ``SessionManager.forkFrom``, ``newSession({parentSession})``), once
#: ``branchedFrom`` (v1, renamed in pi-mono's 0.3x SDK migration; the real fixture ``before-compaction.jsonl`` has
#: it). Its value is the parent's file path, ``<dir>/<timestamp>_<session id>.jsonl`` (OpenClaw:
#: ``<session id>.jsonl``): ``/parent`` is ``{psid: <that id>, rel: REL_FORK}``.
PARENT_KEYS = ("parentSession", "branchedFrom")
REL_FORK = "fork"
#: ``extra.pi.context`` of a turn copied from the parent session: every way Pi makes such a file copies the parent's
#: entries with their own ``timestamp`` before any of its own, under a header stamped when the copy was made, so
#: the entries before the first one stamped at or after the header's ``timestamp`` are the parent's (docs/formats/
#: pi.md "Forks").
CONTEXT_FORK = "fork"
