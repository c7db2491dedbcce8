"""Detecting a Storyline file from the structure of its first record, and the package samples decoding and detected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pchronicle_datasets.formats import storyline_file as fmt
from pchronicle_datasets.formats.base import first_value
from tests.formats.storyline.helpers import (
    BOM,
    FULL_TEXT,
    SAMPLES,
    story,
)


@pytest.mark.parametrize(
    "head",
    [
        FULL_TEXT.encode(),
        fmt.encode([story()]).encode(),
        BOM + FULL_TEXT.encode(),
        json.dumps(story(), indent=4).encode(),
    ],
    ids=["pretty", "compact", "bom", "indent-4"],
)
def test_sniff_true_for_storyline(head):
    assert fmt.sniff(first_value(head)) is True


@pytest.mark.parametrize(
    "head",
    [
        b"",
        b'{"session": "s", "turns": []}',
        b'{"schema_version": "storyline/v2", "session": "s"}',
        b'{"schema_version": "ATIF-v1.7", "steps": []}',
        b"session,turns\n",
    ],
    ids=["empty", "no-version", "v2", "atif", "csv"],
)
def test_sniff_false_for_other_text(head):
    assert fmt.sniff(first_value(head)) is False


# ---------------------------------------------------------------------------------------------- samples


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_samples_decode_and_sniff(path: Path):
    data = path.read_bytes()
    assert fmt.sniff(first_value(data))
    stories = fmt.decode(data, path.name)
    nonblank = [ln for ln in data.splitlines() if ln.strip()]
    expected = len(nonblank) if path.suffix == ".jsonl" else 1
    assert len(stories) == expected
    assert fmt.decode(fmt.encode(stories)) == stories
    assert all(r.error is None for r in fmt.iter_records(data, path.name))
