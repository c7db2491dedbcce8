"""The OpenCode export ↔ Storyline tables (docs/formats/opencode.md is their prose), held once for reader and writer.

>>> ROLES["assistant"], ROLE_OF["agent"]
('agent', 'assistant')
"""

from __future__ import annotations

NAME = "opencode"

#: message ``info.role`` → Storyline ``src`` (any other role: the message stays residual, whole); and back
ROLES = {"user": "user", "assistant": "agent"}
ROLE_OF = {v: k for k, v in ROLES.items()}
#: A call that starts a subagent (1.x ``task``, 2.x ``subagent``) and the key of its ``state.metadata`` that names the
#: child session (1.x ``sessionId``, 2.x ``sessionID``) → ``/children``.
SUBAGENT_TOOLS = ("task", "subagent")
CHILD_SESSION_KEYS = ("sessionId", "sessionID")
#: Part types mapped into the turn; every other part type stays residual, whole, in its place.
MAPPED_PARTS = ("text", "reasoning", "tool")
#: The keys of a mapped part the turn holds (its other keys stay residual at their pointer).
TEXT_KEYS = ("type", "text")
TOOL_KEYS = ("type", "tool", "callID", "state")
#: ``tokens`` of a message → ``metrics``: exactly this shape, every count an integer; OpenCode 1.18 adds an integer
#: ``total`` (a real 1.18.13 database: every assistant message), kept in ``metrics.extra.total``.
TOKEN_KEYS = {"input", "output", "reasoning", "cache"}
TOTAL = "total"
CACHE_KEYS = {"read", "write"}

# ------------------------------------------------------------------ the SQLite store (OpenCode >= 1.2, opencode.db)
#: The tables that name an OpenCode database (detection: ``formats.database_format``): 1.x's three, or OpenCode 2's two
#: (``V2_SESSIONS``, ``V2_MESSAGES`` below); the reader reads whichever it has, and both in an upgraded database.
V1_TABLES = frozenset({"session", "message", "part"})
DATABASE_TABLES = (V1_TABLES, frozenset({"session_v2", "session_message"}))
#: OpenCode 2's storage: its sessions (``session_v2``, 2.0.3 on; the 2.0 betas kept them in ``session``) and their
#: messages (``session_message``: one row per message, ordered by ``seq``, its kind in ``type``, the rest in ``data``).
#: An upgraded database keeps the 1.x tables beside them, frozen at the upgrade (``v2.py``, docs "OpenCode 2").
V2_SESSIONS, V2_MESSAGES = "session_v2", "session_message"
#: ``session_message.type`` → the export message's ``info.role``: a user prompt and an assistant step are read as turns;
#: every other kind keeps its type as its role: those the model is sent are context turns (``CONTEXT_ROLES``), the
#: others (``agent-switched``, ``model-switched``, ``idle``…) the export reader keeps whole as residual, in its place.
V2_ROLES = {"user": "user", "assistant": "assistant"}
#: The other kinds OpenCode 2 sends the model (``session/runner/to-llm-message.ts`` ``toLLMMessage``): a plan-mode
#: reminder (``synthetic``) and a skill's text (``skill``) as a user message of their ``text``, a context update
#: (``system``: "The available tools have changed…") as a system message, a command the user ran with ``!``
#: (``shell``) as the user message ``Shell command: <command>\n\n<output>``, a compaction as a user message holding
#: its ``summary``. kind → the Storyline ``src`` of its context turn (``reader.py``; ``v2.py`` gives each its text
#: part). ``agent-switched``, ``model-switched`` give the model nothing, ``idle`` is no message: residual.
CONTEXT_ROLES = {"synthetic": "user", "skill": "user", "system": "system", "shell": "user", "compaction": "user"}
#: The data key holding the text the model was sent, per kind (a shell's is rendered from ``command`` and ``output``).
V2_CONTEXT_TEXT = {"synthetic": "text", "skill": "text", "system": "text", "compaction": "summary"}
V2_SHELL_TEXT = "Shell command: {command}\n\n{output}"
#: ``extra`` of a compaction's context turn (the key the training flags read for every format's compaction), and of
#: the others' (``{"opencode": {"context": <kind>}}``).
COMPACTION_EXTRA = {"compaction": "summary"}
#: An assistant's ``model`` {id, providerID, variant?} → the 1.x info keys OpenCode's own backfill made it from
#: (``session/message-backfill.ts``: ``model: {providerID, id: modelID, variant}``); any other shape stays ``model``.
V2_MODEL_KEYS = {"id": "modelID", "providerID": "providerID", "variant": "variant"}
#: A tool content item's keys that become the 1.x tool part's: its call id (``callID`` when the item has one, else
#: its ``id``, as 2.0.26 writes it), its tool ``name`` → ``tool``; ``state`` is rewritten (``v2.py``).
V2_TOOL_NAME, V2_TOOL_ID, V2_TOOL_CALL_ID = "name", "id", "callID"
#: An error state's ``error`` {type, message} → the 1.x ``error`` string and ``errorType`` beside it.
V2_ERROR_TYPE = "errorType"
#: Several text blocks of a completed tool's ``content`` give one ``output``, joined by a blank line (a convenience, as
#: for several reasoning parts); the blocks stay in ``content`` (residual). One plain text block is the output alone.
V2_OUTPUT_JOIN = "\n\n"
#: A later backfill (anomalyco/opencode ``session/message-backfill.ts``) gives a 1.x message a new id:
#: ``evt_legacy_backfill_m_<ordinal, 8 base-36 digits>_<the first 24 hex digits of sha256(JSON [version, session id,
#: 1.x message id, "message", ordinal])>``; 2.0.26 kept the 1.x id. Either way the row is that 1.x message.
V2_BACKFILL_PREFIX = "evt_legacy_backfill_m_"
V2_BACKFILL_VERSION = "legacy-session-message-backfill/v1/mapper-subset"
#: A ``data`` key named as a column the message takes from its row (``id``, ``role``: OpenCode 2 writes none) is kept
#: under its name with this suffix, never overwritten.
V2_SHADOWED = "InData"
#: ``session`` row → the export's ``info``, as OpenCode's ``Session.fromRow`` builds the info ``opencode export``
#: prints: column → info key, a NULL column leaving its key out. Text and number columns as they are:
SESSION_COLUMNS = {
    "id": "id",
    "slug": "slug",
    "project_id": "projectID",
    "workspace_id": "workspaceID",
    "directory": "directory",
    "path": "path",
    "parent_id": "parentID",
    "title": "title",
    "agent": "agent",
    "version": "version",
}
#: columns that hold JSON text (Drizzle's ``text({mode: "json"})``), parsed:
SESSION_JSON_COLUMNS = {"model": "model", "revert": "revert", "permission": "permission", "metadata": "metadata"}
#: ``info.summary`` {additions, deletions, files, diffs?}: present when one of the three counts is not NULL (a NULL
#: count is 0 there, as fromRow makes it); ``summary_diffs`` is JSON
SUMMARY_COLUMNS = {"summary_additions": "additions", "summary_deletions": "deletions", "summary_files": "files"}
SUMMARY_DIFFS = "summary_diffs"
#: ``info.share`` = ``{url}`` when set
SHARE_URL = "share_url"
#: ``info.time`` {created, updated, compacting?, archived?} (epoch milliseconds)
TIME_COLUMNS = {"time_created": "created", "time_updated": "updated", "time_compacting": "compacting",
                "time_archived": "archived"}  # fmt: skip
#: The session's totals of its messages' own ``cost`` and ``tokens`` (each message's info holds its share, read into
#: its turn's metrics): not in the export OpenCode prints, not read. Any other column not named here (a later
#: OpenCode's) is kept in ``info`` under its column name when not NULL, residual like every unknown info key.
SESSION_TOTALS = (
    "cost",
    "tokens_input",
    "tokens_output",
    "tokens_reasoning",
    "tokens_cache_read",
    "tokens_cache_write",
)

#: Files OpenCode keeps in its data folder (``~/.local/share/opencode``) beside ``opencode.db`` that hold no session a
#: folder load reads (``sidecars.index_files``): credentials, never read; the packages OpenCode installs under ``bin/``
#: (language servers, formatters: ``package.json`` and ``node_modules``, anomalyco/opencode#9404); and the file store
#: of OpenCode before 1.2, which 1.2 migrates into the database on its first start.
_LEGACY = "OpenCode's file store before 1.2 (migrated into opencode.db by OpenCode 1.2 and later; give an older "
_LEGACY += "session as `opencode export <id>` prints it)"
INDEX_FILES = {
    "auth.json": "the provider credentials OpenCode keeps (never read)",
    "mcp-auth.json": "the MCP server credentials OpenCode keeps (never read)",
    "bin/package.json": "the manifest of the language servers and formatters OpenCode installs",
    "node_modules/": "a package installed beside the sessions (OpenCode's language servers, formatters)",
    "storage/session/*/*.json": _LEGACY,
    "storage/message/*/*.json": _LEGACY,
    "storage/part/*/*.json": _LEGACY,
    "storage/project/*.json": _LEGACY,
    "storage/todo/*.json": _LEGACY,
    "storage/session_diff/*.json": _LEGACY,
    "storage/session_share/*.json": _LEGACY,
}
