"""The CLI on a Gemini CLI folder as it lies on disk: inspect counts it, convert --per-document writes each
session back as its own .jsonl file, equal to its source."""

from __future__ import annotations

import json

from pchronicle_datasets.cli import main
from tests.formats.gemini_cli.replay import CHATS, CHILD, MAIN, records


def test_convert_per_document_writes_each_session_back(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["convert", str(MAIN), str(CHILD), "--to", "gemini-cli", "--per-document", "-o", str(out)]) == 0
    written = {p.name: p for p in out.iterdir()}
    for path in (MAIN, CHILD):
        name = f"{records(path)[0]['sessionId']}.jsonl"
        lines = written[name].read_text(encoding="utf-8").splitlines()
        assert [json.loads(line) for line in lines] == records(path)


def test_inspect_reads_the_folder(capsys):
    assert main(["inspect", "--json", str(MAIN), str(CHILD)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert json.dumps(report).count("gemini-cli") >= 1
    assert CHATS.is_dir()
