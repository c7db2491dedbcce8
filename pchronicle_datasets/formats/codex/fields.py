"""The Codex rollout ↔ Storyline tables (docs/formats/codex.md is their prose), held once for reader and writer.
The Responses items themselves are the shared message model's (``formats/messages/responses.py``).

>>> SESSION["cli_version"], HOSTED_FN["tool_search_call"]
(('agent', 'ver', 'str'), 'tool_search')
"""

from __future__ import annotations

NAME = "codex"
HINTS = "codex"  # /meta/codex: the line plan and counts of a document read from a rollout
AGENT_ID = "codex"

#: The ``type`` of a wrapper line (``{timestamp, type, payload}``); any other type is kept whole as residual.
WRAPPER_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")
#: The keys of the first line of a pre-wrapper rollout (``id``, ``timestamp`` and ``instructions`` required).
PRE_WRAPPER_HEADER = frozenset({"id", "timestamp", "instructions", "git"})

#: The first line of ``codex exec --json`` output (``{"type": "thread.started", "thread_id"}``, then ``turn.started``,
#: ``item.started`` / ``item.completed`` of ``agent_message``, ``reasoning``, ``command_execution``, ``file_change``…,
#: ``turn.completed {usage}``): the ``exec`` layout, read by ``exec_stream.py``.
EXEC_FIRST = ("thread.started", "thread_id")

#: ``codex exec --json`` items read as calls (docs/formats/codex.md, "codex exec --json output"): item type → (the
#: key of the call's name, None for the type itself; the keys whose values make the arguments, or ``("arguments",)``
#: for an item whose ``arguments`` are the arguments as they are; the key of the call's result, if any). codex-rs
#: ``exec/src/exec_events.rs`` ``ThreadItemDetails``. A file change's result is its ``status`` (``completed`` or
#: ``failed``: whether the patch applied, all the stream says of it); a search and a to-do list have none.
EXEC_CALLS: dict[str, tuple[str | None, tuple[str, ...], str | None]] = {
    "command_execution": (None, ("command",), "aggregated_output"),
    "file_change": (None, ("changes",), "status"),
    "mcp_tool_call": ("tool", ("arguments",), "result"),
    "web_search": (None, ("query",), None),
    "todo_list": (None, ("items",), None),
}
#: The line type of a finished item, and the item type of a notice the CLI prints (a system turn of kind ``error``:
#: e.g. "Skill descriptions were shortened…" at the start of every turn of a stock install, never sent to the model).
EXEC_COMPLETED = "item.completed"
EXEC_NOTICE = "error"

#: session_meta payload (or pre-wrapper header) key → (Storyline object, key, kind the value must have to be
#: mapped: ``nestr`` a non-empty string, ``time`` a Storyline time, ``str`` a string); else it stays residual.
SESSION = {
    "id": ("document", "session", "nestr"),
    "timestamp": ("document", "started_at", "time"),
    "cli_version": ("agent", "ver", "str"),
    "originator": ("agent", "name", "str"),
}
#: A fork's ``session_meta`` names the thread it was forked from: ``/parent`` ``{"psid": <it>, "rel": REL_FORK}``
#: (when no parent thread makes it a subagent; the value stays residual).
FORKED_FROM = "forked_from_id"
REL_FORK = "fork"
#: A subagent given its parent's history (newer builds, lines with ``ordinal``): its ``session_meta`` says the first
#: ordinal that is the subagent's own; the lines below it are the parent's history, replayed for context (a reading
#: of codex-rs: its state projection skips them, ``ordinal < start``). Their turns are context turns of the
#: subagent (``copied: true``, ``extra.codex.context`` ``INHERITED``). Older forks replay without ordinals, and no
#: line says where the replay ends: their turns are not marked (docs/formats/codex.md, "Forks").
HISTORY_START = "subagent_history_start_ordinal"
INHERITED = "inherited"
#: The content part type a plain-text message of a role is written with (documents of other formats).
TEXT_PART = {"assistant": "output_text"}  # every other role: input_text

#: Hosted tool calls the message model has no reader for: item type → the Storyline ``fn`` (and call kind).
HOSTED_FN = {"tool_search_call": "tool_search", "image_generation_call": "image_generation"}
#: The key of a hosted call's arguments, in the order looked for: Codex's ``ToolSearchCall`` writes
#: ``arguments`` (codex-rs/protocol ``ResponseItem::ToolSearchCall {id, call_id, status, execution, arguments}``);
#: ``action`` is kept for items that carry one.
HOSTED_ARGS = ("arguments", "action")
#: Hosted outputs: item type → (the key of the result's content, the call item it answers) (``ToolSearchOutput
#: {call_id, status, execution, tools}``: the tools the search loaded are what the model sees next).
HOSTED_OUTPUTS = {"tool_search_output": ("tools", "tool_search_call")}

#: Compaction items (a context turn ``{src: "system", kind: "context", msg: ""}``, their ``encrypted_content``
#: residual): item type → the turn's ``extra.compaction``. ``compaction`` is the remote compaction's item
#: (``compaction_summary`` its older name, a serde alias codex-rs still reads); ``context_compaction``
#: (codex-rs ``ResponseItem::ContextCompaction {id?, encrypted_content?}``, persisted by ``policy.rs`` since
#: 2026-09) is the server-side context compaction of newer builds.
COMPACTION_ITEMS = {"compaction": "item", "compaction_summary": "item", "context_compaction": "context_compaction"}

#: A message between agents of one multi-agent tree (codex-rs ``ResponseItem::AgentMessage {id?, author,
#: recipient, content: [input_text | encrypted_content], internal_chat_message_metadata_passthrough?}``, real
#: in 0.156.1 rollouts): the task a parent gives a subagent (``Message Type: NEW_TASK``) or a subagent's report
#: (``FINAL_ANSWER``). The model reads it, and it is no user's words: a user turn marked as context
#: (``copied: true``, ``kind: "context"``, ``extra.codex.context`` this name), its ``input_text`` parts the text;
#: ``author``, ``recipient`` (copied into ``extra.codex``) and the opaque ``encrypted_content`` parts stay residual.
AGENT_MESSAGE = "agent_message"
AGENT_MESSAGE_TEXT = "input_text"
AGENT_MESSAGE_ROUTE = ("author", "recipient")

#: A user-role message Codex writes itself, not the user's words: its ``CONTEXTUAL_USER_MARKERS`` (codex-rs: a
#: text part that starts and ends with the pair, ASCII case ignored; "not user intent and must not create
#: user-turn boundaries"), with the older ``<user_instructions>`` and ``<context_update>``. Start marker → the
#: name the turn's ``extra.codex.context`` gets; the turn is ``copied: true``, ``kind: "context"`` (a training
#: map leaves it out with ``drop_copied=True``), as Claude Code's ``isMeta`` lines are.
CONTEXTUAL_USER_MARKERS = {
    "# AGENTS.md instructions for ": ("</INSTRUCTIONS>", "agents_md"),
    "<user_instructions>": ("</user_instructions>", "user_instructions"),
    "<agents_instructions>": ("</agents_instructions>", "agents_instructions"),
    "<environment_context>": ("</environment_context>", "environment_context"),
    "<context_update>": ("</context_update>", "context_update"),
    "<multiagent_context>": ("</multiagent_context>", "multiagent_context"),
    "<skill>": ("</skill>", "skill"),
    "<user_shell_command>": ("</user_shell_command>", "user_shell_command"),
    "<turn_aborted>": ("</turn_aborted>", "turn_aborted"),
    "<subagent_notification>": ("</subagent_notification>", "subagent_notification"),
    "<goal_context>": ("</goal_context>", "goal_context"),
    # 0.15x: codex-rs's newer matchers. A hook's prompt (a Stop hook that blocks a turn's end, say) has attributes
    # in its open tag: ``<hook_prompt hook_run_id="…">``; codex-rs reads it as a HookPrompt item, not user input.
    "<hook_prompt": ("</hook_prompt>", "hook_prompt"),
    "<recommended_plugins>": ("</recommended_plugins>", "recommended_plugins"),
    "<codex_internal_context": ("</codex_internal_context>", "internal_context"),
    "<external_context": ("</external_context>", "external_context"),
}


def contextual(text: str) -> str | None:
    """The context name of a text part Codex writes itself (``CONTEXTUAL_USER_MARKERS``), or None.

    >>> contextual("<environment_context><cwd>/w</cwd></environment_context>"), contextual("hi <skill>")
    ('environment_context', None)
    """
    text = text.strip()
    low = text.lower()
    for start, (end, name) in CONTEXTUAL_USER_MARKERS.items():
        if low.startswith(start.lower()) and low.endswith(end.lower()) and len(text) >= len(start) + len(end):
            return name
    return None


#: codex-cli 0.15x tags each part of a message with a kind (``internal_chat_message_metadata_passthrough.
#: content_item_kinds``: ``user.text`` for what the user typed; ``environments.environment_context``,
#: ``plugins.recommendations``, ``hooks.additional_context``, … for what Codex wrote). codex-rs's own rule
#: (``is_user_authorization_message``): a message is the user's when its kinds are missing, fewer or more than its
#: parts, or one of them is ``user.…`` or one of these; otherwise Codex wrote every part of it.
USER_KINDS = frozenset({"", "unknown", "images.preparation_error", "images.unsupported", "audio.unsupported"})
KINDS_KEY = ("internal_chat_message_metadata_passthrough", "content_item_kinds")


#: The ``content_item_kinds`` prefix of what a hook added (codex-cli 0.156.1: ``hooks.additional_context``). A
#: developer-role message whose every part is so tagged is a hook's text, not Codex's instructions: a context turn
#: (``copied: true``, ``kind: "context"``, ``extra.codex.context`` its kind), as the same text in a user-role
#: ``<external_context>`` is; ``pc.flags`` says ``injected`` for both.
HOOK_KIND_PREFIX = "hooks."


def context_by_kinds(item: dict) -> str | None:
    """The context name of a ``message`` item whose every part codex-rs tagged as its own (``KINDS_KEY``, codex-rs's
    rule above): its first kind, for a fragment no marker of ``CONTEXTUAL_USER_MARKERS`` names yet; else None.

    >>> meta = {"content_item_kinds": ["app.context"]}
    >>> context_by_kinds({"content": [{"text": "<app-context>x</app-context>"}], KINDS_KEY[0]: meta})
    'app.context'
    >>> context_by_kinds({"content": [{"text": "hi"}], KINDS_KEY[0]: {"content_item_kinds": ["user.text"]}})
    """
    meta = item.get(KINDS_KEY[0])
    kinds = meta.get(KINDS_KEY[1]) if isinstance(meta, dict) else None
    content = item.get("content")
    if not isinstance(kinds, list) or not kinds or not isinstance(content, list) or len(kinds) != len(content):
        return None
    if not all(isinstance(k, str) and k not in USER_KINDS and not k.startswith("user.") for k in kinds):
        return None
    return kinds[0]


#: The start of an output Codex writes for a call that failed without an exit code: an MCP call's error
#: (codex-rs ``mcp_tool_call``: ``format!("tool call error: {e:?}")``). The call's ``response`` is
#: ``{"status": "error"}`` (a failure in ``tool_stats``). Exit codes are ``reader.exit_code``'s.
FAILED_OUTPUT_PREFIXES = ("tool call error: ",)

#: The status line codex-rs's code mode puts first in an ``exec`` output (``format_script_status``: ``Script
#: completed``, ``Script failed`` when the cell threw, ``Script running with cell ID N``, ``Script terminated``), and
#: the key of a command's JSON result part that holds its exit code (``{chunk_id, …, exit_code, output}``).
CODE_MODE_FAILED = "Script failed\n"
CODE_MODE_EXIT = "exit_code"

#: The event that reports a command's end (codex-rs ``ExecCommandEndEvent {call_id, exit_code, …}``; persisted in
#: the "extended" event mode, seen with 0.146-0.149 rollouts): its ``exit_code`` is the exit code of the call whose
#: ``call_id`` it names, before what the output's text says (a code-mode ``exec`` output is a list of parts).
EXEC_END = "exec_command_end"

#: The event that ends a turn, and its key that codex-cli 0.160 sets when the API failed the turn (``{message,
#: codex_error_info}``, e.g. ``internal_server_error``; ``last_agent_message`` null): counted in
#: ``/meta/codex/counts`` under ``API_ERROR_COUNT``, the key ``pc.flags`` reads as ``api_error``.
TASK_COMPLETE, TASK_ERROR = "task_complete", "error"
API_ERROR_COUNT = "task_complete/api_error"

#: token_count usage key → Storyline metrics key (ATIF's metric names); the rest go to metrics.extra
USAGE = {"input_tokens": "prompt_tokens", "output_tokens": "completion_tokens", "cached_input_tokens": "cached_tokens"}


def usage_metrics(usage: dict) -> dict:
    """A Codex usage object as Storyline ``metrics`` (``USAGE``; every other count under ``extra``).

    >>> usage_metrics({"input_tokens": 9, "output_tokens": 1, "reasoning_output_tokens": 0})
    {'prompt_tokens': 9, 'completion_tokens': 1, 'extra': {'reasoning_output_tokens': 0}}
    """
    metrics: dict = {}
    extra: dict = {}
    for key, value in usage.items():
        if key in USAGE:
            metrics[USAGE[key]] = value
        else:
            extra[key] = value
    if extra:
        metrics["extra"] = extra
    return metrics
