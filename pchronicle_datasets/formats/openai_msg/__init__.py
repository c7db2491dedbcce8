"""The ``openai-msg`` format (alias ``openai-messages``): gateway captures of OpenAI-compatible calls.

RFC-0009 is the authoritative mapping; ``docs/formats/openai-msg.md`` says how this module reads it,
with the project's decisions where the RFC is silent. Input is a top-level array of rows, the
``{"session_steps": [...], ...root fields}`` envelope, or JSON Lines of rows (pointers then use the
line index as ``{r}``: a top-level array and JSON Lines are both normalised to ``/session_steps/{r}``).

The package is split by concern: ``tables`` (RFC-0009's key lists), ``rows`` (input shapes → rows),
``reader`` (rows grouped by session), ``session`` (one session → one document), ``turns`` (a row's messages),
``fields`` (a row's other keys), ``history`` (history copies), ``hints`` (the export hints' shape), and the
writers ``recover`` (same source), ``synthesize`` (any other document) and ``writer`` (``encode``, and
``encode_to`` from a stream with bounded memory).

>>> import orjson
>>> rows = [{"session_id": "s1", "step_id": 1, "run_id": "run-7", "agent_model": "gpt-5",
...          "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}],
...          "response": {"role": "assistant", "content": "4"}}]
>>> [story] = decode(orjson.dumps(rows), "cap.json")
>>> [(t["id"], t["src"], t["msg"]) for t in story["turns"]]
[(1, 'system', 'Be brief.'), (2, 'user', '2+2?'), (3, 'agent', '4')]
>>> orjson.loads(encode([story]))["session_id"]
's1'
"""

from .reader import SPLITTABLE, build_group, build_session, decode, group_of, iter_records, refused_row, sniff
from .tables import (
    EMPTY_MSG_KEYS,
    EMPTY_ROW_KEYS,
    ENV_SOURCES,
    ENV_STATE_METRICS,
    NAME,
    REASONING_KEYS,
    ROW_METRICS,
    RUN_KEYS,
    TURN_ENV_SOURCES,
)
from .writer import encode, encode_to

ALIASES = ("openai-messages",)
KEYS = (
    "session_id",
    "step_id",
    "messages",
    "tools",
    "model",
    "role",
    "content",
)  # the keys its records are known by: detection names the closest format
EXTENSION = ".jsonl"
OUTPUT = "file"
PER_DOCUMENT = False

__all__ = [
    "ALIASES",
    "EMPTY_MSG_KEYS",
    "EMPTY_ROW_KEYS",
    "ENV_SOURCES",
    "ENV_STATE_METRICS",
    "EXTENSION",
    "NAME",
    "OUTPUT",
    "PER_DOCUMENT",
    "REASONING_KEYS",
    "ROW_METRICS",
    "RUN_KEYS",
    "SPLITTABLE",
    "TURN_ENV_SOURCES",
    "build_group",
    "build_session",
    "decode",
    "encode",
    "encode_to",
    "group_of",
    "iter_records",
    "refused_row",
    "sniff",
]
