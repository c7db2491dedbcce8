"""Where redaction looks: every string of a document, decoded, and nothing that links or orders it.

A Storyline document is walked value by value (never its JSON text): turns, reasoning, call arguments,
results, observations, tool definitions, ``/task``, ``/agent``, ``/prompt``, ``/notes``, ``/extra``,
``/meta``, residual (``/unknown_fields``, keys included) and ``/origin/document_id`` (a path). A string
that is JSON text of an object or array (``args`` as the model wrote them, a tool result) is scanned string
literal by string literal and only changed literals are re-encoded, so its structure and spacing survive.

Identifiers (``IDENTIFIERS``: ``/session``, ``/run``, ``/trajectory``, ``/attempt_id``, ``/parent``,
``/children``, ``/continued_trajectory_ref``, ``tcid``, ``source_call_id``, env ids), times,
``schema_version``, ``src`` and ``kind`` are not scanned by the secret rules; only the user name of a home
folder path in them is replaced (readers make session ids from file paths: ``/home/alice/x.jsonl#1``), and
as every occurrence of one value gets one placeholder, a link (``/parent/psid`` → ``/session``) still holds.

Opaque reasoning payloads (``OPAQUE_KEYS``: Anthropic ``signature`` of a thinking block and
``redacted_thinking`` data, OpenAI ``encrypted_content``, Gemini ``thoughtSignature``, Pi's
``thinkingSignature``, the ``encrypted`` of Kimi CLI's and Kimi Code's ``think`` parts) are replaced by
``<REDACTED:opaque-reasoning>`` wherever they are: found by key name in every object of the document
(``msg`` parts, ``extra``, ``meta``, ``unknown_fields`` and inside JSON text), and by the last token of a
residual pointer (``/unknown_fields/sources/*/fields/{pointer}``).

>>> from pchronicle_datasets.redact.engine import Redactor
>>> story = {"schema_version": "storyline/v1", "session": "me@acme.io", "agent": {"id": "a"},
...          "turns": [{"id": 1, "src": "user", "msg": "mail me@acme.io"}]}
>>> out = redact_story(Redactor(key="k"), story)
>>> out["session"], out["turns"][0]["msg"]
('me@acme.io', 'mail <REDACTED:email:b4779141>')
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..pointer import escape, unescape
from ..schema import validate
from .config import RedactionError
from .engine import Redactor
from .report import field_of

__all__ = [
    "IDENTIFIERS",
    "OPAQUE_KEYS",
    "OPAQUE_PLACEHOLDER",
    "ROW_IDENTIFIER_KEYS",
    "redact_story",
    "redact_value",
]

OPAQUE_PLACEHOLDER = "<REDACTED:opaque-reasoning>"
MAX_CLEAN_KEYS = 100_000  # object keys remembered as having nothing to redact (memory stays bounded)
OPAQUE_RULE = "opaque-reasoning"
# Keys whose value is an opaque reasoning payload, wherever they are.
OPAQUE_KEYS = frozenset(
    ("encrypted_content", "thoughtSignature", "thought_signature", "thinkingSignature", "redacted_thinking")
)
# Pi (pi-ai) writes, for OpenAI-compatible chat providers (DeepSeek, …), the *name of the field* the reasoning came
# in as ``thinkingSignature`` (e.g. ``"reasoning_content"``): a field name, not an opaque payload; kept.
_REASONING_FIELD_NAMES = frozenset(("reasoning_content", "reasoning", "reasoning_text"))
# Objects whose ``signature`` is the thinking block's, whatever its length (fixtures write short ones).
_THINKING_TYPES = frozenset(("thinking", "signature_delta"))
# kosong's ``think`` part (Kimi CLI's context.jsonl, Kimi Code's journals) holds the provider's signature or
# encrypted thinking in ``encrypted``: opaque in such a part, or as the residual of a part read apart
# (``…/content/{k}/encrypted`` of a message, ``…/event/part/encrypted`` of a Kimi Code ``content.part`` event).
_KOSONG_THINK = "think"
_KOSONG_ENCRYPTED = "encrypted"
_KOSONG_RESIDUAL = re.compile(r"(?:/content/\d+|/event/part)/encrypted\Z")
# ``signature`` is opaque only as a payload (base64, no spaces): a tool's "signature" argument is code.
_OPAQUE_BLOB = re.compile(r"[A-Za-z0-9+/=_-]{32,}")

# Fields (pointers with indices as *) of a Storyline document that are identifiers, links or times.
IDENTIFIERS = frozenset(
    (
        "/schema_version",
        "/session",
        "/run",
        "/trajectory",
        "/attempt_id",
        "/continued_trajectory_ref",
        "/started_at",
        "/finished_at",
        "/children/*",
        "/origin/format",
        "/origin/schema_version",
        "/parent/psid",
        "/parent/scid",
        "/parent/rel",
        "/turns/*/src",
        "/turns/*/ts",
        "/turns/*/finished_at",
        "/turns/*/kind",
        "/turns/*/tool_calls/*/tcid",
        "/turns/*/tool_calls/*/kind",
        "/turns/*/observation/results/*/source_call_id",
        "/turns/*/env/id",
        "/turns/*/env/request_id",
        "/turns/*/env/event_type",
        "/task/env/id",
        "/task/env/request_id",
        "/task/env/event_type",
    )
)
IDENTIFIER_RULES = frozenset(("user-path",))
# In rows that are not Storyline (training rows, anything): keys that hold ids and times.
ROW_IDENTIFIER_KEYS = frozenset(
    ("id", "tcid", "tool_call_id", "source_call_id", "call_id", "session", "session_id", "timestamp", "ts")
)


def _opaque(key: str, value: Any, parent: Mapping[str, Any]) -> bool:
    if key in OPAQUE_KEYS:
        return value not in (None, "", [], {}) and not (key == "thinkingSignature" and value in _REASONING_FIELD_NAMES)
    if key == "signature":
        if parent.get("type") in _THINKING_TYPES or "thinking" in parent:
            return value not in (None, "")
        return isinstance(value, str) and bool(_OPAQUE_BLOB.fullmatch(value))
    if key == "data" and parent.get("type") == "redacted_thinking":
        return True
    if key == _KOSONG_ENCRYPTED and parent.get("type") == _KOSONG_THINK:
        return value not in (None, "")
    return False


def _residual_opaque(pointer_key: str, value: Any) -> bool:
    """A residual field (keyed by its source pointer) whose last token names an opaque payload."""
    if value is None:
        return False
    last = unescape(pointer_key.rsplit("/", 1)[-1])
    if last == _KOSONG_ENCRYPTED:
        return value != "" and bool(_KOSONG_RESIDUAL.search(pointer_key))
    if last == "signature":
        return not isinstance(value, str) or bool(_OPAQUE_BLOB.fullmatch(value))
    return last in OPAQUE_KEYS and not (last == "thinkingSignature" and value in _REASONING_FIELD_NAMES)


class _Walk:
    def __init__(self, redactor: Redactor, file: str | None, identifiers: frozenset[str], id_keys: frozenset[str]):
        self.r = redactor
        self.file = file
        self.identifiers = identifiers
        self.id_keys = id_keys
        self.strip = redactor.config.strip_opaque

    def key(self, key: str, pointer: str) -> str:
        """An object key redacted; in a JSON Pointer key (residual: ``/files/~1home~1ann~1x``) each escaped
        token is also scanned unescaped, so a path inside one token is seen as the path it is."""
        key = self.r.text(key, file=self.file, pointer=pointer)
        if not (key.startswith("/") and "~1" in key):
            return key
        tokens = key.split("/")[1:]
        for i, token in enumerate(tokens):
            if "~1" in token:
                tokens[i] = escape(self.r.text(unescape(token), file=self.file, pointer=pointer))
        return "/" + "/".join(tokens)

    def strip_value(self, pointer: str) -> str:
        self.r.report.add(self.file, OPAQUE_RULE, pointer)
        return OPAQUE_PLACEHOLDER

    def value(self, value: Any, pointer: str, key: str | None = None) -> Any:
        if isinstance(value, str):
            if key in self.id_keys or (self.identifiers and field_of(pointer) in self.identifiers):
                return self.r.text(value, file=self.file, pointer=pointer, only=IDENTIFIER_RULES)
            return self.string(value, pointer)
        if isinstance(value, Mapping):
            out = {}
            residual = pointer.startswith("/unknown_fields/sources/") and pointer.endswith("/fields")
            for k, v in value.items():
                if not isinstance(k, str):
                    out[k] = v
                    continue
                # A key is reported at its object (+ "/(key)"): the pointer of a key is the key's own text.
                # Keys repeat (field names): one found clean once is clean everywhere.
                if len(k) < 6 or k in self.r.clean_keys:
                    new_key = k
                else:
                    new_key = self.key(k, pointer + "/(key)")
                    if new_key == k and len(self.r.clean_keys) < MAX_CLEAN_KEYS:
                        self.r.clean_keys.add(k)
                here = pointer + "/" + escape(new_key)
                if self.strip and (_opaque(k, v, value) or (residual and _residual_opaque(k, v))):
                    out[new_key] = self.strip_value(here)
                    continue
                out[new_key] = self.value(v, here, k)
            return out
        if isinstance(value, list):
            return [self.value(v, f"{pointer}/{i}") for i, v in enumerate(value)]
        return value

    def string(self, text: str, pointer: str) -> str:
        head = text.lstrip()[:1]
        if head in ("{", "[") and len(text) >= 6:
            try:
                json.loads(text)
            except ValueError:
                pass
            else:
                return self.json_text(text, pointer)
        return self.r.text(text, file=self.file, pointer=pointer)

    def json_text(self, text: str, pointer: str) -> str:
        """JSON text with each string literal redacted as a decoded value; the rest kept byte for byte."""
        out = []
        pos = 0
        strip_next = False
        for m in _STRING_LITERAL.finditer(text):
            literal = m.group(0)
            decoded = json.loads(literal)
            is_key = bool(_KEY_FOLLOWS.match(text, m.end()))
            if strip_next and not is_key:
                new: str = self.strip_value(pointer)
                strip_next = False
            else:
                strip_next = False
                if is_key and self.strip and (decoded in OPAQUE_KEYS or decoded == "signature"):
                    value_at = _KEY_FOLLOWS.match(text, m.end()).end()  # type: ignore[union-attr]
                    nxt = _STRING_LITERAL.match(text, value_at)
                    if nxt and (decoded != "signature" or _OPAQUE_BLOB.fullmatch(json.loads(nxt.group(0)))):
                        strip_next = True
                new = self.string(decoded, pointer) if len(decoded) >= 6 else decoded
            out.append(text[pos : m.start()])
            if new == decoded:
                out.append(literal)
            else:
                out.append(json.dumps(new, ensure_ascii="\\u" in literal))
            pos = m.end()
        out.append(text[pos:])
        return "".join(out)


_STRING_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_KEY_FOLLOWS = re.compile(r"\s*:\s*")


def redact_story(redactor: Redactor, story: Mapping[str, Any], *, file: str | None = None) -> dict[str, Any]:
    """A redacted copy of a Storyline document (``story`` is not changed), validated.

    Raises ``RedactionError`` (naming the file and pointer, never a value) when the result is not a valid
    document or anything in redaction fails: the caller uploads nothing."""
    try:
        out = _Walk(redactor, file, IDENTIFIERS, frozenset()).value(story, "")
        validate(out)
    except RedactionError:
        raise
    except Exception as exc:
        pointer = getattr(exc, "pointer", "")
        raise RedactionError(
            f"redaction failed ({type(exc).__name__}); nothing was redacted or uploaded",
            pointer=pointer,
            document_id=file,
        ) from None
    redactor.report.documents += 1
    return out


def redact_value(redactor: Redactor, value: Any, *, file: str | None = None, pointer: str = "") -> Any:
    """A redacted copy of any JSON-like value (a training row, a column value): every string, keys named in
    ``ROW_IDENTIFIER_KEYS`` left as they are."""
    try:
        return _Walk(redactor, file, frozenset(), ROW_IDENTIFIER_KEYS).value(value, pointer)
    except RedactionError:
        raise
    except Exception as exc:
        raise RedactionError(f"redaction failed ({type(exc).__name__})", pointer=pointer, document_id=file) from None
