"""The Claude Code ↔ Storyline key tables (docs/formats/claude-code.md is their prose), held once for the reader
and the writer.

A session file (``~/.claude/projects/<project>/<session>.jsonl``) is JSON Lines of records; each record's
``type`` says what it is. ``user`` and ``assistant`` records hold conversation (``message``: an Anthropic
message, read through the shared message model), and so does an ``attachment`` that holds a message the user typed
mid-turn (``queued_prompt``); every other record is kept whole as residual under its line's pointer
(``/{line index}/…``) and counted in the export hints.

>>> RECORD_TYPES["progress"], RECORD_TYPES["user"]
('residual', 'message')
>>> CONTEXT_FLAGS["isCompactSummary"]
'compact_summary'
>>> queued_prompt({"type": "attachment", "attachment": {"type": "queued_command", "prompt": "also the tests",
...     "commandMode": "prompt", "origin": {"kind": "human"}}})
('also the tests', None)
"""

from __future__ import annotations

NAME = "claude-code"
HINTS = "claude-code"  # /meta/claude-code: the export hints (hints.py) of a document read from a session file
AGENT_ID = "claude-code"
AGENT_NAME = "Claude Code"

#: What each record type of versions 2.0–2.1.x is to the reader: ``message`` (its ``message`` gives turns) or
#: ``residual`` (kept whole under its line's pointer, counted). A type not listed is residual too, and counted
#: under its own name: a new record type never stops a file, never disappears.
RECORD_TYPES = {
    "user": "message",
    "assistant": "message",
    "system": "residual",  # subtypes: SYSTEM_SUBTYPES
    "summary": "residual",  # {summary, leafUuid}: the session's title, not conversation
    "progress": "residual",  # hook_progress, bash_progress, agent_progress, mcp_progress, waiting_for_task
    "file-history-snapshot": "residual",
    "queue-operation": "residual",
    "attachment": "residual",  # but a queued prompt on the conversation is a turn: queued_prompt
    "pr-link": "residual",
    "ai-title": "residual",
    "custom-title": "residual",
    "mode": "residual",
    "permission-mode": "residual",
    "tag": "residual",
    # 2.1.2xx session metadata, seen in real 2.1.270 files (tests/data/claude_code/README.md): re-appended after
    # turns, none of it conversation
    "last-prompt": "residual",
    "agent-name": "residual",
    "atis-latch": "residual",
    "bridge-session": "residual",
    "cost-state": "residual",
    "file-history-delta": "residual",
    "frame-link": "residual",
}
#: ``system`` subtypes seen in 2.0–2.1.x (counted as ``system/<subtype>``; any other subtype counts the same way).
SYSTEM_SUBTYPES = (
    "compact_boundary",
    "microcompact_boundary",
    "api_error",
    "local_command",
    "turn_duration",
    "stop_hook_summary",
    "informational",
)

#: Keys every conversation record repeats. The first value of each is the document's (``/meta/claude-code/
#: shared``); a line whose value equals it says so by a bit of its hint's ``e`` mask instead of repeating it in
#: the residual. ``ENV_STATE`` of them are also ``/task/env/state`` (derived), ``version`` is ``/agent/ver``.
ENVELOPE_KEYS = (
    "sessionId",
    "version",
    "cwd",
    "gitBranch",
    "userType",
    "entrypoint",
    "slug",
    "isSidechain",
    "agentId",
    "teamName",
)
ENV_STATE = ("cwd", "gitBranch", "entrypoint", "userType", "slug")

#: Flags of a ``user`` record whose message is context the harness injected, not the user's words: the turn
#: gets ``copied: true``, ``kind: "context"`` and ``extra.claude_code.context`` (the value below), so training
#: maps can leave it out (``drop_copied``).
CONTEXT_FLAGS = {"isCompactSummary": "compact_summary", "isMeta": "meta"}
#: A ``user`` record whose ``origin.kind`` is not ``HUMAN_ORIGIN`` is text Claude Code wrote itself (a real 2.1.280
#: session writes a background task's end as a ``user`` record with ``"origin": {"kind": "task-notification"}``,
#: ``"promptSource": "system"``; the user's own prompts have ``{"kind": "human"}``): a context turn too, its
#: ``extra.claude_code.context`` the kind. Records without ``origin`` (every version before it) are unchanged.
HUMAN_ORIGIN = "human"


def harness_origin(origin: object) -> str | None:
    """The ``origin.kind`` of a record Claude Code wrote itself (a non-empty kind other than ``HUMAN_ORIGIN``), the
    context it gives; None for the user's own, or no such ``origin``.

    >>> harness_origin({"kind": "task-notification"}), harness_origin({"kind": "human"}), harness_origin(None)
    ('task-notification', None, None)
    """
    kind = origin.get("kind") if isinstance(origin, dict) else None
    return kind if type(kind) is str and kind and kind != HUMAN_ORIGIN else None


CONTEXT_KIND = "context"

#: The ``message.model`` of an ``assistant`` record Claude Code wrote itself, no model did: an API error it shows in
#: place of an answer (``isApiErrorMessage: true``, ``error`` its kind: ``unknown``, ``rate_limit``,
#: ``model_not_found``…; "API Error: 500 …", a real 2.1.17 file) or the filler it writes after a local command
#: ("No response requested.", ``isApiErrorMessage: false``, a real 2.1.15 file). Such a turn is context
#: (``extra.claude_code.context: "synthetic"``); an API error also says ``extra.claude_code.api_error`` (its
#: ``error``, else true), which ``pc.flags`` reads; ``/agent/model`` is the first model that is not this marker.
SYNTHETIC_MODEL = "<synthetic>"
SYNTHETIC = "synthetic"
API_ERROR_FLAG = "isApiErrorMessage"
API_ERROR = "api_error"  # extra.claude_code.api_error on the turn (training/policy.py reads it)

#: The key of an ``assistant`` record that holds the reasoning effort of its answer (2.1.212 and later: "Changed
#: session transcripts to record the reasoning effort level on each assistant message"; ``"high"``, ``"medium"``,
#: ``"low"`` in real 2.1.220 and 2.1.270 sessions; absent on haiku answers): the turn's ``effort`` (derived, the key
#: stays residual), as Codex's ``effort`` and Pi's thinking level are.
EFFORT = "effort"

#: The whole text of the ``user`` message Claude Code writes when the user stops the agent (Esc): its
#: ``INTERRUPT_MESSAGE`` and ``INTERRUPT_MESSAGE_FOR_TOOL_USE`` (the latter after a rejected tool call). The turn
#: stays a user turn (the model saw it); ``/meta/claude-code/interrupted`` counts them, which ``pc.flags`` reads
#: (``interrupted``). Only the whole text: a hook's message that quotes one is not an interrupt.
INTERRUPT_MARKERS = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")

#: A message the user types while the agent is working (Claude Code 2.1.x, seen in a real 2.1.280 session) is no
#: ``user`` record: Claude Code queues it (``queue-operation`` ``enqueue``, then ``remove`` with ``reason:
#: "absorbed_mid_turn"``) and writes it as an ``attachment`` record ``{"type": "queued_command", "prompt": <the
#: user's words>, "commandMode": "prompt", "origin": {"kind": "human"}, …}``, shown to the model mid-turn inside a
#: system reminder (the record's ``rendered``: "The user sent a new message while you were working: …"), beside
#: the next tool result. The model saw the user's words, and no ``user`` record holds them: such a record on the
#: conversation is a user turn (``msg``: the ``prompt``; ``extra.claude_code.queued: true`` says it came mid-turn);
#: every other key stays residual. A ``queued_command`` that is not the user's words (``commandMode``
#: ``task-notification``: a background task's end; ``origin.kind`` ``peer``: another session's message) is shown
#: to the model the same way and is in no ``user`` record either (the real 2.1.280 session's two absorbed task
#: notifications): a context turn (``copied``, ``extra.claude_code.context`` its origin's kind, else its mode), as
#: a ``user`` record of such an origin is (``HUMAN_ORIGIN``). The prompt is text or, in recent versions, content
#: blocks (``[{"type": "text", …}, {"type": "image", …}]``), read as a ``user`` record's content; an ``origin`` that
#: is no object with a kind, or blocks no reader maps, stay residual.
QUEUED_ATTACHMENT = "queued_command"
QUEUED_MODE = "prompt"
QUEUED = "queued"  # extra.claude_code.queued: true on the turn


def queued_prompt(value: object) -> tuple[str | list, str | None] | None:
    """``(prompt, context)`` of an ``attachment`` record that holds a message queued mid-turn
    (``QUEUED_ATTACHMENT``): ``prompt`` its text or its content blocks, ``context`` None for the user's own words,
    else why it is context; None for any other record.

    >>> queued_prompt({"type": "attachment", "attachment": {"type": "queued_command", "prompt": "done",
    ...     "commandMode": "task-notification"}})
    ('done', 'task-notification')
    """
    if not isinstance(value, dict) or value.get("type") != "attachment":
        return None
    att = value.get("attachment")
    if not isinstance(att, dict) or att.get("type") != QUEUED_ATTACHMENT or not _prompt(att.get("prompt")):
        return None
    origin = att.get("origin")
    if "origin" in att and not (isinstance(origin, dict) and type(origin.get("kind")) is str and origin["kind"]):
        return None  # an origin that says nothing: kept whole, not guessed
    context = harness_origin(origin)
    if context is None and att.get("commandMode") != QUEUED_MODE:
        context = att.get("commandMode")  # a mode that is not the user's prompt, task-notification
        if not (isinstance(context, str) and context):
            return None
    return att["prompt"], context


def _prompt(prompt: object) -> bool:
    """A queued prompt is text or, in recent versions (2.1.2xx), a list of content blocks (``text``, an ``image``
    pasted with it), read as a ``user`` record's content is."""
    return isinstance(prompt, str) or (isinstance(prompt, list) and all(isinstance(b, dict) for b in prompt))


#: Tools that start a subagent: the result's ``toolUseResult.agentId`` names the child.
SPAWN_TOOLS = ("Task", "Agent")
REL_SPAWN = "spawn"  # RFC-0001's default relation: delegated work
REL_COMPACTION = "compaction"  # the agent-acompact-* sidechain that wrote a compaction summary
REL_FORK = "fork"  # a session branched from another one (``forkedFrom``): the other is its parent

#: The key a branched session's copied records carry: ``/branch`` (commands/branch/branch.ts, 2.0.x to 2.1.2xx) and
#: the Agent SDK's ``forkSession`` copy the parent's conversation into the new ``<id>.jsonl``, each record with the
#: new ``sessionId`` and ``{"forkedFrom": {"sessionId": <the parent>, "messageUuid": <its uuid there>}}``; the
#: records the new session writes itself have none. Such a record's turn is a context turn
#: (``extra.claude_code.context`` ``FORK_CONTEXT``): the model saw it, the fork did not do it.
FORKED_FROM = "forkedFrom"
FORK_CONTEXT = "fork"


def forked_from(value: object) -> str | None:
    """The parent session a record was copied from (``FORKED_FROM``), or None.

    >>> forked_from({"type": "user", "forkedFrom": {"sessionId": "p1", "messageUuid": "u1"}}), forked_from({})
    ('p1', None)
    """
    source = value.get(FORKED_FROM) if isinstance(value, dict) else None
    sid = source.get("sessionId") if isinstance(source, dict) else None
    return sid if isinstance(sid, str) and sid else None


COMPACTION_AGENT = "acompact"  # agent ids of compaction sidechains start with it

#: The sidecar of a 2.1.x subagent file: ``agent-<id>.jsonl`` beside ``agent-<id>.meta.json``.
SIDECAR_SUFFIX = ".meta.json"
#: Files Claude Code writes in a project folder beside its sessions that hold none (``sidecars.pair`` leaves them
#: out of a folder's documents): the resume picker's index (2.1.x; tmc/cc ``SessionIndex``), and every file below
#: ``<session>/tool-results/``: a tool output too big for the conversation, kept whole there, ``<id>.txt`` for
#: text and ``<id>.json`` for an MCP tool's content blocks (``[{"type": "text", "text": …}]``), which a folder's
#: listing takes, so the first one stopped the load. The session's own result holds what the model saw: the
#: ``<persisted-output>`` preview, with the file's path. A ``Workflow`` run (the tool that fans a script out into
#: subagents; seen in real 2.1.270 project folders) leaves, beside its agents' ``agent-<id>.jsonl`` (read as
#: subagents), ``<session>/subagents/workflows/<runId>/journal.jsonl``, the run's ledger (``{"type": "launched"}``,
#: then ``started`` / ``result`` lines keyed by ``agentId``; no reader takes it, so it stopped the load), and
#: ``<session>/workflows/<runId>.json``, its summary once done (status, per-agent state, the script); run ids are
#: ``wf_…`` (the tool's ``resumeFromRunId`` pattern). Each agent's result is also in its own file, the run's in the
#: parent's task notification.
INDEX_FILES = {
    "sessions-index.json": "the index of the project's sessions Claude Code keeps for its resume picker",
    "tool-results/": "a tool output Claude Code kept apart, too big for the conversation",
    "subagents/workflows/wf_*/journal.jsonl": "the ledger of a Workflow run's agents, whose own files are read",
    "workflows/wf_*.json": "the summary Claude Code writes of a finished Workflow run",
}
SUBAGENT_PREFIX = "agent-"


def child_session(session_id: str, agent_id: str) -> str:
    """The session of a subagent's document: its lines carry the parent's ``sessionId``, so the agent id makes it
    its own.

    >>> child_session("c01ff5a5", "ab532cf")
    'c01ff5a5/agent-ab532cf'
    """
    return f"{session_id}/{SUBAGENT_PREFIX}{agent_id}"
