"""The Goose session ↔ Storyline tables (docs/formats/goose.md is their prose), held once for the database
assembler, the reader and the writer.

>>> ROLES["assistant"], ROLE_OF["agent"]
('agent', 'assistant')
"""

from __future__ import annotations

NAME = "goose"

# ------------------------------------------------------------------------------------------ the database

#: The tables that name a Goose database (``base.Database``): OpenCode's are ``session``, ``message``, ``part``.
DATABASE_TABLES = frozenset({"sessions", "messages", "schema_version"})
#: ``sessions`` columns holding JSON text → the key ``goose session export`` gives the parsed value.
SESSION_JSON_COLUMNS = {
    "extension_data": "extension_data",
    "recipe_json": "recipe",
    "user_recipe_values_json": "user_recipe_values",
    "model_config_json": "model_config",
}
#: ``sessions`` columns that are booleans (SQLite stores 0/1).
SESSION_BOOL_COLUMNS = ("user_set_name",)
#: ``sessions`` / ``messages`` columns holding SQLite's UTC text ``YYYY-MM-DD HH:MM:SS`` (serde prints RFC 3339).
SESSION_TIME_COLUMNS = ("created_at", "updated_at", "archived_at")
MESSAGE_TIME_COLUMNS = ("timestamp",)
#: The legacy name column: left out when it holds its default ``''`` (``name`` supersedes it). Goose names a session
#: by it when ``name`` is absent or empty (``Session``'s ``#[serde(alias = "description")]`` on ``name``, and
#: ``from_row``: ``name``, else ``description``): the reader's ``/notes`` then (derived: it stays residual), and
#: ``/meta/goose/notes`` says so to the writer (``NOTES_FROM``).
LEGACY_NAME = "description"
NOTES_FROM = "notes"
#: ``messages`` columns → message keys (the message's ``id`` is ``message_id``); ``messages.id`` (the row order)
#: and ``session_id`` are given by the shape; ``tokens`` is kept only when not NULL (an unused column).
MESSAGE_COLUMNS = {"message_id": "id", "role": "role", "created_timestamp": "created"}
MESSAGE_JSON_COLUMNS = {"content_json": "content", "metadata_json": "metadata"}
MESSAGE_OPTIONAL = ("tokens",)
#: ``usage_ledger`` columns left out of each row: the row order and the session.
LEDGER_DROPPED = ("id", "session_id")
LEDGER_KEY = "usage_ledger"
#: The columns without which a database is not Goose's (refused, naming the column).
REQUIRED_COLUMNS = {
    "sessions": ("id", "working_dir", "created_at"),
    "messages": ("id", "session_id", "role", "content_json", "created_timestamp", "timestamp"),
}

# ------------------------------------------------------------------------------------------ the JSON shape

#: message ``role`` → Storyline ``src`` (any other role: the message stays residual, whole); and back
ROLES = {"user": "user", "assistant": "agent"}
ROLE_OF = {v: k for k, v in ROLES.items()}
#: ``model_config.model_name`` is the session's model (``/agent/model``); the other keys of ``model_config`` stay
#: residual.
MODEL_CONFIG, MODEL_NAME = "model_config", "model_name"
#: ``metadata.usage`` key → where the turn holds it: (``metrics`` key | turn key, Storyline name).
USAGE = {
    "inputTokens": ("metrics", "prompt_tokens"),
    "outputTokens": ("metrics", "completion_tokens"),
    "totalTokens": ("extra", "total_tokens"),
    "elapsedMs": ("turn", "latency_ms"),
    "timeToFirstTokenMs": ("turn", "ttft_ms"),
}
#: ``metadata.inference`` keys that name the turn's model, first found wins (derived: ``inference`` stays residual).
INFERENCE_MODEL = ("resolvedModel", "requestedModel")
#: ``metadata`` flags of a message (Goose's ``MessageMetadata``; both default to true): whether the user is shown it,
#: whether the model is sent it. What each pair is (block/goose ``context_mgmt/mod.rs`` ``compact_messages``): a
#: compaction marks every earlier message agent-invisible (the model saw it before, now it sees the summary), adds
#: the summary (a ``user`` message) and a continuation (an ``assistant`` message) both agent-only, and marks a last
#: user message not yet answered invisible (both false: a fresh copy follows the summary); ``user_only`` is also what
#: Goose gives a notice to its user (``Message::with_system_notification``: the part is a ``systemNotification``).
USER_VISIBLE, AGENT_VISIBLE = "userVisible", "agentVisible"
#: How a message is read by what the model saw (``reader._visibility``): an ordinary turn (``None``), ``HIDDEN``
#: (never sent to the model: residual, whole, in its place), or a context turn saying why (``extra`` of the turn):
#: the compaction's summary and continuation (``{"compaction": "summary" | "continuation"}``, the key the training
#: flags read for every format's compaction), any other agent-only message (``{"goose": {"context": "agent_only"}}``).
HIDDEN = "hidden"
COMPACTION_SUMMARY, COMPACTION_CONTINUATION, AGENT_ONLY = "summary", "continuation", "agent_only"

#: The keys of each mapped part the turn holds (its other keys stay residual at their pointer).
TEXT_KEYS = ("type", "text")
THINKING_KEYS = ("type", "thinking", "signature")
REQUEST_KEYS = ("type", "id", "toolCall")
CALL_VALUE_KEYS = ("name", "arguments")
RESPONSE_KEYS = ("type", "id", "toolResult")
RESULT_VALUE_KEYS = ("content", "isError")
#: The forms of a ``toolResponse``'s ``toolResult`` (kept in the layout for the writer): a ``{content, isError}``
#: value, the legacy bare list of content blocks, ``{status: "error", error}``.
CONTENT, LEGACY_LIST, NEVER_RAN = "content", "list", "error"
#: Layout kind of a part kept residual, whole, in its place.
RESIDUAL = "r"

# ------------------------------------------------------------------------------------------ before the database

#: Goose wrote each session as ``~/.local/share/goose/sessions/<id>.jsonl`` before ``sessions.db`` (block/goose
#: ``session/storage.rs``; ``session/legacy.rs`` reads them to import them into the database): a metadata line
#: (``SessionMetadata``: ``description`` and ``message_count`` required by its deserializer, the others optional),
#: then one message per line. These are the metadata keys that tell such a line in detection (with the two
#: required ones): the working folder, the schedule, the token counts, and (later) ``extension_data``, ``recipe``.
LEGACY_REQUIRED = ("description", "message_count")
LEGACY_METADATA = (
    "working_dir",
    "schedule_id",
    "total_tokens",
    "input_tokens",
    "output_tokens",
    "accumulated_total_tokens",
    "accumulated_input_tokens",
    "accumulated_output_tokens",
    "extension_data",
    "recipe",
)
#: ``/meta/goose/jsonl`` of a document read from such a file: ``{header: whether its first line is the metadata,
#: named: whether its id is the file's name}`` (the writer gives the file back from it).
LEGACY_HINTS = "jsonl"
#: Goose 1.10 imported those files into the ``sessions.db`` it created beside them and left them there: a folder
#: holding both would give each such session twice, so a folder's listing leaves the files out when the database is
#: beside them, and says so (``sidecars.index_files``: `` beside `` names the file that must be in the same folder).
INDEX_FILES = {
    "*.jsonl beside sessions.db": (
        "a Goose session file from before its database, which Goose imported into the sessions.db beside it "
        "(give it as data_files to read it anyway)"
    ),
}
LEGACY_SUFFIX = ".jsonl"
