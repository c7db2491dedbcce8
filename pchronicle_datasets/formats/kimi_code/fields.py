"""The Kimi Code mapping table as data (docs/formats/kimi-code.md), read by the reader and both writers.

Source: MoonshotAI/kimi-code (MIT) ``packages/agent-core-v2``: ``src/wire/record.ts`` (``wire.jsonl``, one
journal per agent), ``src/agent/contextMemory/contextEvents.ts`` (the ``context.*`` records),
``loopEventFold.ts`` (how ``context.append_loop_event`` records fold into the model's messages), ``types.ts`` (a
message's ``origin``) and ``sessionLifecycle/`` (the session folder: ``state.json``, ``session_index.jsonl``).
"""

from __future__ import annotations

from typing import Any

NAME = "kimi-code"
AGENT_ID = "kimi-code"
AGENT_NAME = "Kimi Code"
EXTRA_KEY = "kimi_code"

#: The records the reader reads, each with the key that holds what it says (a record with that key missing is
#: residual, whole). ``context.append_message``: a message appended to the model's context (the user's prompt, an
#: injection); ``context.append_loop_event``: one event of a model step (below); ``context.apply_compaction``: the
#: summary that replaced the context. Detection claims a file by the first of these (with its key), a
#: ``turn.prompt`` (``input``), or the records a journal opens with (``config.update`` with the agent's profile or
#: prompt, ``tools.set_active_tools``: a session opened and left holds only these, and is then no conversation, not
#: an unknown file). Kimi CLI's ``wire.jsonl`` starts with the same ``metadata`` line, so that line decides nothing.
APPEND_MESSAGE = "context.append_message"
LOOP_EVENT = "context.append_loop_event"
COMPACTION_RECORD = "context.apply_compaction"
PROMPT = "turn.prompt"
MARKERS = {
    APPEND_MESSAGE: ("message",),
    LOOP_EVENT: ("event",),
    COMPACTION_RECORD: ("compactedCount",),
    PROMPT: ("input",),
    "config.update": ("systemPrompt", "profileName", "modelAlias"),
    "tools.set_active_tools": ("names",),
}

#: Records whose ``systemPrompt`` (a string) is the system prompt the agent runs with from then on: a system turn
#: when it differs from the one before.
SYSTEM_PROMPT_RECORDS = ("config.update", "profile.bind")
SYSTEM_PROMPT_KEY = "systemPrompt"
#: Records that change what the model sees without a message: counted in ``/meta/kimi-code`` (the turns they
#: remove stay in the document: the journal keeps them, docs/formats/kimi-code.md).
UNDO, CLEAR = "context.undo", "context.clear"
#: The record of a turn the user stopped: Kimi Code's ``TurnCancel`` (agent-core-v2 ``loop/turnOps.ts``:
#: ``{agentId, turnId?, target?: "active" | "queued", reason?: "user_cancelled" | "aborted"}``; 0.29.1 writes
#: ``{"type": "turn.cancel", "time"}``). One that cancels the running turn (``target`` absent or ``active``) for the
#: user (``reason`` absent or ``user_cancelled``) is counted in ``/meta/kimi-code/interrupted``
#: (``formats.base.INTERRUPTED``; ``pc.flags``: ``interrupted``); a queued prompt's cancel or an ``aborted`` one is
#: not. The record stays residual, whole.
TURN_CANCEL = "turn.cancel"
CANCEL_NOT_USER = {"target": "queued", "reason": "aborted"}
#: The record the first model name is taken from (``/agent/model``, derived).
LLM_REQUEST = "llm.request"

#: The loop events (``LoopRecordedEvent``): a step (``step.begin`` … ``step.end``, one model answer) and what it
#: streamed (``content.part``: a text or think part; ``tool.call``), and a call's ``tool.result``.
STEP_BEGIN, STEP_END = "step.begin", "step.end"
CONTENT_PART, TOOL_CALL, TOOL_RESULT = "content.part", "tool.call", "tool.result"

#: ``message.role`` → Storyline ``src``.
ROLE_SRC = {"system": "system", "user": "user", "assistant": "agent"}
SRC_ROLE = {v: k for k, v in ROLE_SRC.items()}
#: A user message is the user's when its ``origin.kind`` is ``user`` (or it has no origin: older versions), and a
#: subagent's first message (``system_trigger`` named ``subagent``: the prompt its starter wrote, the subagent's
#: task); any other kind (``injection``: a reminder; ``compaction_summary``, ``skill_activation``, ``task``,
#: ``cron_job``, ``hook_result``, …) is the CLI's words, a context turn.
USER_ORIGIN = "user"
SUBAGENT_TASK = ("system_trigger", "subagent")
USER_ORIGINS = {(USER_ORIGIN, None), SUBAGENT_TASK}
#: A forked subagent's journal opens with a copy of its starter's messages (``agentLifecycle.fork``: the
#: experimental ``fork`` parameter of the ``Agent`` tool), then its task: the turns before the task are context
#: turns, ``extra.kimi_code.context`` ``inherited`` (as Codex's inherited history).
INHERITED = "inherited"
#: The role of a message that answers a call (``createToolMessage``: ``toolCallId``, the output as parts).
TOOL_ROLE = "tool"
CONTEXT_KIND = "context"
COMPACTION = "compaction"

#: kosong's content part types: ``text`` → the message, ``think`` → the reasoning; any other part stays as it is.
TEXT, THINK = "text", "think"

#: The tool that starts a subagent, and the line of its result that names it (``agent_id: agent-0``,
#: ``tools/agent/agentTool.ts``); the tool that starts several, and the line of its result that names each
#: (``<subagent agent_id="agent-1" … outcome="completed">``, ``features/swarm/tools/agent-swarm/agentSwarmTool.ts``).
AGENT_TOOL = "Agent"
AGENT_ID_LINE = r"^agent_id: (\S+)$"
SWARM_TOOL = "AgentSwarm"
SWARM_AGENT_ID = r'^<subagent\b[^>\n]*? agent_id="([^"\n]+)"'
MAIN_AGENT = "main"
AGENTS = "agents"
SUBAGENT_REL = "subagent"
JOURNAL = "wire.jsonl"
COMPRESSED = (".gz", ".zst", ".bz2", ".xz")
PROTOCOL_VERSION = "1.4"

#: Files Kimi Code keeps beside its journals that hold no conversation (``sidecars.index_files``). A session's
#: ``state.json`` lies where Kimi CLI's does: the folders' names (``wd_<slug>_<hash>``, ``session_<uuid>``) tell
#: them apart (a name with more path parts is tried first).
INDEX_FILES = {
    "sessions/wd_*/session_*/state.json": "Kimi Code's session state (title, agents, work directory)",
    "session_index.jsonl": "Kimi Code's index of the sessions of a work directory (no conversation)",
    "agents/*/state.json": "Kimi Code's state of an agent (no conversation)",
    "upcoming-goals.json": "Kimi Code's queued goals (no conversation)",
    "workspaces.json": "Kimi Code's list of work directories (no conversation)",
}


#: A session's ``state.json`` says which agent started each other one: ``agents[<agent>].parentAgentId`` (Kimi Code's
#: ``SessionSubagentHost``: the agent whose ``Agent`` or ``AgentSwarm`` call spawned it). The built-in subagents
#: (``coder``, ``explore``, ``plan``) have no ``Agent`` tool, so theirs is ``main``; a user's agent profile that
#: lists the tool lets a subagent start its own, whose ``parentAgentId`` is that subagent: a link the folder layout
#: (every agent beside ``main`` under ``agents/``) cannot give. It is the sidecar of every other agent's journal
#: (``sidecars.py``).
STATE = "state.json"
STATE_AGENTS, PARENT_AGENT = "agents", "parentAgentId"


def state_of(name: str) -> str | None:
    """The ``state.json`` of the session whose journal ``name`` is another agent's than ``main``, else None.

    >>> state_of("wd_p/session_1/agents/agent-1/wire.jsonl"), state_of("wd_p/session_1/agents/main/wire.jsonl")
    ('wd_p/session_1/state.json', None)
    """
    if "parent" not in place_of(name):
        return None
    parts = name.replace("\\", "/").split("/")
    return "/".join([*parts[:-3], STATE])


def place_of(document_id: str | None) -> dict[str, Any]:
    """What a journal's path says (``~/.kimi-code/sessions/<work dir>/<session>/agents/<agent>/wire.jsonl``):
    ``session`` (the main agent's: the session folder's name; another agent's ``<session>/agents/<agent>``),
    ``parent`` (another agent's session), ``work_dir`` (the folder above the session).

    >>> place_of("wd_p_ac3b/session_1/agents/main/wire.jsonl")
    {'session': 'session_1', 'work_dir': 'wd_p_ac3b'}
    >>> place_of("session_1/agents/agent-0/wire.jsonl")
    {'session': 'session_1/agents/agent-0', 'parent': 'session_1'}
    >>> place_of("x/small.jsonl"), place_of(None)
    ({'session': 'small'}, {})
    """
    if not document_id:
        return {}
    parts = [p for p in document_id.replace("\\", "/").split("/") if p]
    name = parts[-1] if parts else ""
    for suffix in COMPRESSED:
        name = name.removesuffix(suffix)
    folders = parts[:-1]
    if name != JOURNAL or len(folders) < 3 or folders[-2] != AGENTS:
        return {"session": name.removesuffix(".jsonl") or document_id}
    session, agent = folders[-3], folders[-1]
    out: dict[str, Any] = {"session": session}
    if agent != MAIN_AGENT:
        out = {"session": f"{session}/{AGENTS}/{agent}", "parent": session}
    if len(folders) >= 4:
        out["work_dir"] = folders[-4]
    return out


#: What the writer for documents of other formats writes (``layout.report_unwritten`` counts every other value).
WRITTEN = {
    "": ("session", "turns", "unknown_fields"),
    "agent": ("id", "name"),
    "task": (),
    "turn": ("id", "src", "msg", "reason", "tool_calls", "observation", "ts"),
    "call": ("tcid", "fn", "args", "result"),
    "result": ("content", "source_call_id", "is_error"),
}
