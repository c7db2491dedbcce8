"""The Cline task history ↔ Storyline tables (docs/formats/cline.md is their prose), held once for reader and
writer.

Cline (cline/cline, the VS Code extension and its CLI) keeps each task in ``<globalStorage>/tasks/<task id>/``:
``api_conversation_history.json`` is the conversation as the model saw it, a JSON array of Anthropic
``MessageParam`` objects with keys of Cline's own (``ClineStorageMessage``, src/shared/messages/content.ts).

>>> bool(RESULT_HEAD.match("[read_file for 'src/a.ts'] Result:\\nexport const a = 1"))
True
>>> bool(RESULT_HEAD.match("[ERROR] You did not use a tool in your previous response!"))
False
"""

from __future__ import annotations

import re

NAME = "cline"
HINTS = "cline"  # /meta/cline: the export hint of each message, and the counts inspect shows
AGENT_ID = "cline"
AGENT_NAME = "Cline"
#: The file Cline writes the conversation to, in each task's folder: a document is named by that folder.
HISTORY_FILE = "api_conversation_history.json"

#: Files Cline writes beside the history in a task's folder that hold no conversation the model saw
#: (src/core/storage/disk.ts ``GlobalFileNames``, ``readTaskSettingsFromStorage``): ``sidecars.pair`` leaves them
#: out of a folder's documents and the builder says so. The names are Cline's own (``settings.json``, too common
#: a name, only in a task's folder: ``tasks/<task id>/``).
INDEX_FILES = {
    "ui_messages.json": "the chat panel messages of Cline or a fork (ClineMessage: say/ask, each also sent or shown)",
    "task_metadata.json": "Cline's (or a fork's) record of the task's files in context, models and environments",
    "context_history.json": "Cline's record of the context truncations and edits applied to the history",
    "tasks/*/settings.json": "the settings Cline kept for the task",
    "tasks/*/history_item.json": "Roo Code's record of the task for its history list (HistoryItem: task, tokens, cost)",
    "tasks/_index.json": "Roo Code's index of its tasks' history records",
    "sessions/*/*.compaction.json": "Cline's compaction state of a session (its canonical history is unchanged)",
}

#: The keys ``ClineStorageMessage`` adds to an Anthropic message (content.ts). ``ts`` (ms since the epoch), the
#: model of ``modelInfo`` and the counts of ``metrics`` give the turn's time, model and metrics (derived: the source
#: values stay residual, where the same-source writer takes them); ``id`` (the response id) is residual.
TS = "ts"
MODEL_INFO = "modelInfo"
METRICS = "metrics"
CLINE_KEYS = ("id", TS, MODEL_INFO, METRICS)

#: Cline's SDK (its CLI, and the extension since it moved onto it, 2026-05) writes a session as one object,
#: ``~/.cline/data/sessions/<id>/<id>.messages.json`` (sdk/packages/core/docs/messages-contract-v1.md): ``version``
#: (1), ``updated_at``, ``agent`` (``lead``/``subagent``/``teammate``), ``sessionId``, ``taskType``?, ``messages``
#: (the same stored messages), ``system_prompt``?. Beside it, ``<id>.json`` is the session's manifest.
SESSION_ID = "sessionId"
SYSTEM_PROMPT = "system_prompt"
MESSAGES = "messages"
MANIFEST_KEYS = ("session_id", "messages_path")  # the manifest: no conversation of its own
#: ``modelInfo``'s model key: ``modelId`` in task histories, ``id`` in the SDK's sessions
MODEL_KEYS = ("modelId", "id")
#: a message's ``metadata.kind`` that makes it a context turn (the SDK's compaction: the summary that replaces
#: the messages it removed)
COMPACTION_KINDS = ("compaction", "compaction_summary")
#: the SDK's block of a file the user attached (``{type: "file", path, content}``): kept beside the turn as media
FILE_BLOCK = "file"

#: ``metrics.tokens`` key → Storyline metrics key (``prompt`` is the whole input, cached tokens included, as
#: Storyline's ``prompt_tokens``: ClineTokensInfo, src/shared/messages/metrics.ts); ``metrics.cost`` is ``cost_usd``.
TOKENS = {"prompt": "prompt_tokens", "completion": "completion_tokens", "cached": "cached_tokens"}
COST = ("cost", "cost_usd")
#: the SDK's ``metrics`` keys → Storyline metrics keys (as written; ``cacheWriteTokens`` in ``metrics.extra``)
SDK_TOKENS = {"inputTokens": "prompt_tokens", "outputTokens": "completion_tokens", "cacheReadTokens": "cached_tokens"}
SDK_TOKENS_EXTRA = {"cacheWriteTokens": "cache_write_tokens"}

#: The head of a tool's result given back as text (ToolResultUtils.pushToolResult: ``${description} Result:\n…``
#: when the call has no ``tool_use_id`` to answer; the description is the handler's ``getDescription``:
#: ``[read_file for 'src/a.ts']``, ``[search_files for 'x' in '*.ts']``, ``[subagents]``, ``[subagent: name]``,
#: ``[attempt_completion] Result: Done``). The argument between quotes may span lines (a question).
RESULT_HEAD = re.compile(r"\[(?:[^\[\]\n]+|[\w:.-]+ for '.*?'(?: in '.*?')?)\] Result:", re.S)

#: What Cline adds to user messages that is not the user's words, by the head of its text block (leading blank
#: lines aside) → the kind ``extra.cline.context`` names: the environment details it adds to each one
#: (``getEnvironmentDetails``: open files, terminals, time, mode…) and the focus chain's reminders to keep the task's
#: todo list (src/core/task/focus-chain/prompts.ts, index.ts). A user message that holds nothing else (blank blocks
#: aside) is a context turn.
CONTEXT_HEADS = {
    "<environment_details>": "environment_details",
    "# task_progress": "task_progress",
    "# TODO LIST UPDATE REQUIRED": "task_progress",
}

#: The head of the text Cline adds to the user message that resumes a task it stopped (``formatResponse.
#: taskResumption``: "[TASK RESUMPTION] This task was interrupted 3 days ago. …"): each such block is counted as an
#: interruption (``/meta/cline/interrupted``, read by ``pc.flags``).
RESUMPTION = "[TASK RESUMPTION]"

#: Which extension wrote a task, by the folder VS Code keeps its storage in (``<globalStorage>/<publisher>.<name>/
#: tasks/<task id>/``, the extension id in lower case): seen when the document's id holds that folder (a load of the
#: ``globalStorage`` folder, or of one extension's). Roo Code (RooCodeInc/Roo-Code: ``src/package.json``
#: ``RooVeterinaryInc.roo-cline``, its nightly ``roo-code-nightly``) and Kilo Code (Kilo-Org/kilocode: ``kilocode.
#: kilo-code``; its Roo-based 4.x extension kept these folders, its later releases keep sessions in the Kilo CLI's
#: database instead) are forks of Cline that write the same task folders.
EXTENSIONS = {
    "saoudrizwan.claude-dev": (AGENT_ID, AGENT_NAME),
    "rooveterinaryinc.roo-cline": ("roo-code", "Roo Code"),
    "rooveterinaryinc.roo-code-nightly": ("roo-code", "Roo Code"),
    "kilocode.kilo-code": ("kilo-code", "Kilo Code"),
}
#: The agent of a Roo-family history whose folder does not say which extension wrote it (``ROO_MARKS``): Roo Code,
#: whose source is the family's (Kilo Code's Roo-based extension writes the same history; only its folder tells).
ROO_AGENT = ("roo-code", "Roo Code")
#: What only the Roo family writes in a history (Roo's ``ApiMessage``, src/core/task-persistence/apiMessages.ts):
#: the message keys of its condensing and sliding-window truncation (kept residual), and its reasoning blocks.
ROO_KEYS = ("isSummary", "condenseId", "condenseParent", "truncationId", "truncationParent", "isTruncationMarker")
#: Roo's reasoning, kept in the history since 2025-11 (Task.addToApiConversationHistory): a ``reasoning`` block
#: first in an assistant message's content, ``{type, text, summary}`` (the reasoning text of a provider that is not
#: Anthropic's) or ``{type, summary, encrypted_content, id}`` (OpenAI's encrypted reasoning); builds of 2025-11-12 to
#: -14 kept the encrypted one as an item of its own in the array, before its assistant message, ``{type,
#: summary, encrypted_content, id, ts}`` (no ``role``). ``text`` is the turn's reasoning, ``encrypted_content`` its
#: opaque payload; ``summary``, ``id`` stay residual. A ``thoughtSignature`` block (Gemini's) stays residual.
REASONING = "reasoning"
REASONING_TEXT, REASONING_ENCRYPTED = "text", "encrypted_content"
#: OpenRouter's ``reasoning_details`` of a message (Roo keeps them instead of a ``reasoning`` block for the models
#: that need them back, Gemini 3's; Cline keeps them beside its ``thinking`` block): read as the message's reasoning
#: when it has none of its own. Item ``type`` → the key of its text (``signature`` beside a text), or of its opaque
#: payload; any other key (``id``, ``format``, ``index``) stays residual.
REASONING_DETAILS = "reasoning_details"
DETAIL_TEXT = {"reasoning.text": "text", "reasoning.summary": "summary"}
DETAIL_ENCRYPTED = {"reasoning.encrypted": "data"}
#: The message keys of Roo's condensing and truncation that make a message a context turn (the model did not get
#: it from the user): the summary that replaces the condensed messages (``isSummary``, a user message since
#: 2026-01, an assistant one before) and the marker of a sliding-window truncation (``isTruncationMarker``) →
#: the kind ``extra.cline.context`` names.
CONTEXT_KEYS = {"isSummary": "condense_summary", "isTruncationMarker": "truncation_marker"}
#: Roo's environment details name the mode and model of the request (``getEnvironmentDetails``: ``# Current Mode``,
#: ``<slug>code</slug>``, ``<name>💻 Code</name>``, ``<model>…</model>``; Kilo Code's the same, and
#: ``<tool_format>``): the mark of a Roo-family history, and the model of the agent turns that follow (Roo stamps no
#: model on its messages, as Cline's ``modelInfo`` does).
ROO_MODE = re.compile(r"# Current Mode\n<slug>[^<\n]*</slug>")
ENV_MODEL = re.compile(r"\n<model>([^<\n]+)</model>")
