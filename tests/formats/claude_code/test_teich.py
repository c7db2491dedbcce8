"""What ``datasets`` + ``teich`` lose on the Claude Code files of tests/data, beside what this project keeps:
the table of docs/formats/claude-code.md, measured by benchmarks/claude_code_teich.py on the same files."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benchmarks"))
import claude_code_teich as measure  # noqa: E402

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("teich") is None, reason="teich is not installed (the test extra has it)"
)


def test_what_teich_loses_and_pchronicle_keeps():
    paths = measure.session_files([])
    source = measure.source_counts(paths)
    teich = measure.teich_counts(paths)
    ours = measure.pchronicle_counts(paths)
    # datasets' json loader refuses the file with a line of two records (a real 2.1.7 file): its rows are lost.
    assert teich["failed_files"] == 1 and teich["rows"] == len(paths) - 1 and ours["rows"] == len(paths) == 15
    assert source["results"] == ours["results"] == 61 and teich["results"] == 59  # the lost file had 2
    assert teich["unknown_tool"] == 59 and ours["resolved"] == 61  # every result's tool name
    assert teich["usages"] == teich["rows"] and ours["usages"] == source["responses"] - 1  # one abandoned response
    assert teich["linked_children"] == 0 and ours["linked_children"] == source["children"] == 4
    assert teich["compact_summary_user_turns"] == source["compact_summaries"] == 4
    assert ours["compact_summary_user_turns"] == 0
    assert teich["abandoned_messages_kept"] == 2 and ours["abandoned_messages_kept"] == 0
    assert teich["signatures"] == 0 and ours["signatures"] == source["signatures"] == 28
    assert teich["is_error"] == 0 and ours["is_error"] == source["is_error"] == 4
