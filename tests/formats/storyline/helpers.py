"""Shared by the Storyline file-format tests: the every-optional-field document, the package samples, small
documents and a check that a decode fails with a ``FormatError`` for the right file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from pchronicle_datasets import FormatError, PchronicleError
from pchronicle_datasets.formats import storyline_file as fmt
from tests import goldens

ROOT = Path(__file__).resolve().parents[3]
FULL_PATH = goldens.DATA / "validation" / "every_optional_field.storyline.json"
FULL_TEXT = FULL_PATH.read_text(encoding="utf-8")
FULL: dict[str, Any] = json.loads(FULL_TEXT)
SAMPLES = sorted((ROOT / "pchronicle_datasets" / "samples" / "storyline").glob("*.storyline.json*"))
BOM = b"\xef\xbb\xbf"


def story(session: str = "s1", **extra: Any) -> dict[str, Any]:
    doc = {
        "schema_version": "storyline/v1",
        "session": session,
        "agent": {"id": "a"},
        "turns": [{"id": 1, "src": "user", "msg": "hi"}, {"id": 0, "src": "agent", "msg": None}],
    }
    doc.update(extra)
    return doc


def line(doc: Any) -> str:
    return json.dumps(doc, ensure_ascii=False)


def jsonl(*docs: Any) -> str:
    return "".join(line(d) + "\n" for d in docs)


def raises_format_error(data: Any, document_id: str | None = "logs/a.jsonl") -> FormatError:
    with pytest.raises(PchronicleError) as info:
        fmt.decode(data, document_id)
    err = info.value
    assert type(err) is FormatError, f"{type(err).__name__}: {err}"
    assert not isinstance(err, orjson.JSONDecodeError)
    assert err.document_id == document_id
    return err
