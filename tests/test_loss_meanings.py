"""Every kind of loss a writer reports says what it means (``losses.describe``): the CLI prints the meaning
beside the count, and a kind with no meaning printed itself twice (``not in mini-swe-agent: /run: not in
mini-swe-agent: /run``)."""

from __future__ import annotations

from pathlib import Path

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.formats import format_names, get_format
from pchronicle_datasets.losses import collect_losses, describe

SAMPLES = Path(pc.__file__).parent / "samples"
SOURCES = [  # real files of three sources: a gateway capture, Harbor's goldens, the agent's ShareGPT
    SAMPLES / "openai_msg" / "gateway_capture.jsonl",
    SAMPLES / "storyline" / "harbor_goldens.storyline.jsonl",
    SAMPLES / "sharegpt" / "trajectory_samples.jsonl",
]


@pytest.fixture(scope="module")
def stories() -> list[dict]:
    out = []
    for path in SOURCES:
        out += pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    return out


def test_every_kind_a_writer_reports_has_a_meaning(stories):
    kinds = set()
    for fmt in sorted({get_format(name).NAME for name in format_names()}):
        for story in stories:  # one document at a time: the session-log formats hold one session per file
            with collect_losses(propagate=False) as report:
                pc.from_storyline(fmt, [story])
            kinds |= {(fmt, kind) for kind in report.counts}
    assert len({fmt for fmt, _ in kinds}) >= 10  # the samples lose something in most formats: the test checks them
    unexplained = [(fmt, kind) for fmt, kind in sorted(kinds) if describe(kind) == kind]
    assert not unexplained
