"""The Gemini CLI mapping table as data (docs/formats/gemini-cli.md), read by the reader and both writers.

Sources: google-gemini/gemini-cli ``packages/core/src/services/chatRecordingService.ts`` (the recorder and its
loader, ``loadConversationRecord``) and ``chatRecordingTypes.ts`` (``MessageRecord``, ``ToolCallRecord``,
``TokensSummary``, ``ConversationRecord``).
"""

from __future__ import annotations

from typing import Any, TypedDict

NAME = "gemini-cli"
#: Files Gemini CLI keeps in a project's folder (``~/.gemini/tmp/<project hash>/``) beside its sessions that hold
#: none (``sidecars.pair`` leaves them out of a folder's documents): the Logger's ``logs.json`` (gemini-cli
#: ``packages/core/src/core/logger.ts``, ``LOG_FILE_NAME``), every prompt the user typed, each also in its session.
INDEX_FILES = {"logs.json": "Gemini CLI's log of the prompts typed in the project, each also in its session"}
AGENT_ID = "gemini-cli"

#: Message ``type`` → Storyline ``(src, kind)``; ``kind`` None: derived from ``src`` (RFC-0001). ``info``,
#: ``warning`` and ``error`` are the CLI's own notices (never sent to the model): system turns whose ``kind``
#: names them, so the writer gives the type back and training can tell them from a system prompt.
TYPES: dict[str, tuple[str, str | None]] = {
    "user": ("user", None),
    "gemini": ("agent", None),
    "info": ("system", "info"),
    "warning": ("system", "warning"),
    "error": ("system", "error"),
}
#: The start of an ``error`` notice the CLI writes when the model's API failed the turn: gemini-cli's
#: ``parseAndFormatApiError`` (``packages/core/src/utils/errorParsing.ts``) gives every such text this prefix
#: (``[API Error: exceeded quota for the day]``, ``[API Error: … (Status: …)]``), and ``useGeminiStream`` records
#: it as an ``error`` message when the stream fails. Its turn gets ``extra.gemini-cli.api_error: true``
#: (``pc.flags``: ``api_error``); any other ``error`` notice (a command's, a tool's) is not the API's.
API_ERROR_PREFIX = "[API Error: "
API_ERROR_KIND = "error"

#: Storyline ``(src, kind)`` → message ``type``, for the writers.
TYPE_OF: dict[tuple[str, str | None], str] = {v: k for k, v in TYPES.items()}

#: A user message the CLI writes itself, not the user's words: its text (the text parts joined, leading blanks
#: left out) starts with one of these — gemini-cli's ``isIgnoredUserContent`` (``packages/core/src/utils/
#: sessionUtils.ts``), which leaves such a message out of the history it sends back on resume. ``<session_context>``
#: is the environment context recorded with ``$set.messages`` at the start of every session (real 0.44.1 files),
#: ``<hook_context>`` a hook's. The model saw it: a user turn marked as context (``copied: true``, ``kind:
#: "context"``, ``extra["gemini-cli"]["context"]`` the name), as Codex's ``<environment_context>`` is.
CONTEXT_MARKERS = {"<session_context>": "session_context", "<hook_context>": "hook_context"}
CONTEXT_KIND = "context"
#: The other starts ``isIgnoredUserContent`` names (a slash command, ``?``): with an empty text and the context
#: markers, a user message the CLI does not count as conversation (``isResumableMessageRecord``).
IGNORED_STARTS = ("/", "?", *CONTEXT_MARKERS)

#: Keys a ``content`` part may carry beside ``text`` and still be read as text (each such key stays residual at its
#: pointer): the ``thoughtSignature`` Gemini 3 attaches to a part of the model's reply, which the checkpoint
#: ``$set.messages`` keeps (``updateMessagesFromHistory`` records the history's own parts). A ``thought: true`` part
#: (the model's thinking), ``functionCall`` and every other part stay residual whole.
TEXT_PART_EXTRA = frozenset({"thoughtSignature"})


def type_of(src: str, kind: str | None) -> str | None:
    """The message ``type`` of a turn read from a session: ``TYPE_OF``, and ``user`` for a context user turn.

    >>> type_of("user", "context"), type_of("system", "info"), type_of("agent", "autonomous")
    ('user', 'info', None)
    """
    if (src, kind) in TYPE_OF:
        return TYPE_OF[(src, kind)]
    return TYPE_OF[(src, None)] if kind == CONTEXT_KIND and src == "user" else None


#: ``tokens`` key → ``metrics`` key (ATIF's metric names); the other counts go to ``metrics.extra`` as they are.
TOKENS = {"input": "prompt_tokens", "output": "completion_tokens", "cached": "cached_tokens"}
TOKENS_EXTRA = ("thoughts", "tool", "total")
METRIC_OF = {v: k for k, v in TOKENS.items()}

#: Metadata keys (the first line, a legacy file's root, ``$set`` patches) mapped to Storyline, and where.
META_SESSION = "sessionId"
META_STARTED = "startTime"
META_UPDATED = "lastUpdated"
META_SUMMARY = "summary"
META_PROJECT = "projectHash"
META_DIRECTORIES = "directories"
META_KIND = "kind"
MAPPED_META = (META_SESSION, META_STARTED, META_UPDATED, META_SUMMARY, META_PROJECT, META_DIRECTORIES, META_KIND)

#: Keys of a message record the mapping reads; every other key is residual at its pointer.
MESSAGE_KEYS = ("id", "timestamp", "type", "content", "model", "thoughts", "tokens", "toolCalls")
#: Keys of a tool call the mapping reads (``status`` → ``response.status``).
CALL_KEYS = ("id", "name", "args", "result", "status")
#: Thought keys: ``description`` goes to ``reason``; ``subject`` heads it there and stays residual with
#: ``timestamp`` (the writer splits ``reason`` again at the subjects).
THOUGHT_KEYS = frozenset({"subject", "description", "timestamp"})

#: ``rel`` of a subagent's ``/parent``.
SUBAGENT_REL = "subagent"

HINTS_VERSION = 1


class Hints(TypedDict, total=False):
    """``/meta/gemini-cli``: what the same-source writer needs to lay the file out again, and the reader's
    counts of what the replay set aside (all of it is residual).

    - ``version``: 1;
    - ``legacy``: the file is one JSON object with ``messages`` (before JSONL);
    - ``lines``: JSONL: how many records (non-blank lines) the file has;
    - ``header``: where the metadata record is (``"/0"``; ``""`` for a legacy file) and its keys in order;
    - ``turns``: per turn, ``[pointer of its message record, message id]``;
    - ``sets``: ``{line: number of messages}`` of the ``$set`` records that set ``messages``;
    - ``raw_results``: the tcids whose ``result`` is kept as written (not one functionResponse of that call);
    - ``superseded``, ``rewound``, ``replaced``: message records a later record with the same id, a
      ``$rewindTo`` or a ``$set`` of ``messages`` took out of the conversation (kept whole as residual);
    - ``echoes``: user records that only repeat results their calls hold (kept whole as residual).
    """

    version: int
    legacy: bool
    lines: int
    header: list[Any]
    turns: list[list[str]]
    sets: dict[str, int]
    raw_results: list[str]
    superseded: int
    rewound: int
    replaced: int
    echoes: int


def thought_block(subject: str, description: str) -> str:
    """One thought as the model wrote it: ``**subject**`` then a blank line, then the description (the CLI's
    ``parseThought`` splits a thought part at that bold heading).

    >>> thought_block("Plan", "Run the tests.")
    '**Plan**\\n\\nRun the tests.'
    """
    return f"**{subject}**\n\n{description}" if subject else description


def reason_of(subjects: list[str], descriptions: list[str]) -> str:
    """The ``reason`` text of a message's thoughts: their blocks, a blank line apart."""
    return "\n\n".join(thought_block(s, d) for s, d in zip(subjects, descriptions, strict=True))


def split_reason(reason: str, subjects: list[str]) -> list[str] | None:
    """The descriptions ``reason_of(subjects, …)`` was made of, or None when ``reason`` is not such a text.

    Each block starts with its known subject's heading, so the text splits at the next heading; the reader keeps
    ``reason`` as the mapping only when this gives the descriptions back exactly.

    >>> split_reason(reason_of(["A", "B"], ["one\\n\\ntwo", "three"]), ["A", "B"])
    ['one\\n\\ntwo', 'three']
    """
    out: list[str] = []
    rest = reason
    for k, subject in enumerate(subjects):
        head = f"**{subject}**\n\n" if subject else ""
        if not rest.startswith(head):
            return None
        rest = rest[len(head) :]
        if k == len(subjects) - 1:
            out.append(rest)
            return out
        nxt = subjects[k + 1]
        marker = "\n\n" + (f"**{nxt}**\n\n" if nxt else "")
        at = rest.find(marker) if nxt else rest.find("\n\n")
        if at < 0:
            return None
        out.append(rest[:at])
        rest = rest[at + 2 :]
    return out if not subjects else None
