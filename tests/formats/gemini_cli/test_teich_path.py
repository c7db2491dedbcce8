"""What the Hub path gives on Gemini CLI files, measured (docs/formats/gemini-cli.md, "What datasets + teich lose"):
teich has no Gemini reader, so ``load_dataset("json")`` reads the session a line at a time — beside
``load_dataset("pchronicle", "auto")`` on the same folder, which gives one linked session per file."""

from __future__ import annotations

import datasets
import pytest

import pchronicle_datasets  # noqa: F401  (registers the "pchronicle" builder)
from tests.formats.gemini_cli import replay
from tests.formats.gemini_cli.replay import CHILD, LEGACY, MAIN


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


def test_the_json_builder_reads_lines_not_the_session(tmp_path):
    ds = datasets.load_dataset("json", data_files=str(MAIN), split="train", cache_dir=str(tmp_path / "c"))
    assert ds.num_rows == len(replay.records(MAIN)) == 21
    rows = ds.to_list()
    assert sum(r["id"] == "g-0002" for r in rows) == 3  # every version of the message a row of its own
    assert any(r["id"] == "g-0009" for r in rows)  # the reply the $rewindTo abandoned is still there
    summed = sum((r["tokens"] or {}).get("total") or 0 for r in rows)
    assert summed > sum(m["tokens"]["total"] for m in replay.conversation(MAIN) if m.get("tokens"))  # counted again


def test_the_json_builder_refuses_the_legacy_session(tmp_path):
    with pytest.raises(Exception, match=r"position 0|JSON"):
        datasets.load_dataset("json", data_files=str(LEGACY), split="train", cache_dir=str(tmp_path / "c"))


def test_pchronicle_reads_the_folder_as_linked_sessions(tmp_path):
    ds = datasets.load_dataset(
        "pchronicle", "auto", data_dir=str(replay.DATA / "tmp"), split="train", cache_dir=str(tmp_path / "c")
    )
    rows = {r["session"]: r for r in ds.to_list()}
    parent, child = (replay.records(p)[0]["sessionId"] for p in (MAIN, CHILD))
    assert set(rows) == {parent, child}
    assert rows[child]["parent"]["psid"] == parent and rows[parent]["children"] == [child]
    assert rows[parent]["num_tool_calls"] == len(replay.calls(MAIN))


def test_the_project_folder_loads_beside_the_prompt_log(tmp_path, caplog):
    # ~/.gemini/tmp/<hash>/logs.json (gemini-cli's Logger: every prompt typed in the project) holds no session: the
    # folder's load left it out and says so, instead of stopping on a file no reader takes (sidecars.pair).
    import json
    import shutil

    folder = tmp_path / "tmp"
    shutil.copytree(replay.DATA / "tmp", folder)
    (project,) = [p for p in folder.iterdir() if p.is_dir()]
    prompt = {"sessionId": "s", "messageId": 0, "type": "user", "message": "hi", "timestamp": "2026-10-01T09:00:00Z"}
    (project / "logs.json").write_text(json.dumps([prompt], indent=2))
    with caplog.at_level("WARNING"):
        ds = datasets.load_dataset(
            "pchronicle", "auto", data_dir=str(folder), split="train", cache_dir=str(tmp_path / "c")
        )
    assert ds.num_rows == 2 and {o["format"] for o in ds["origin"]} == {"gemini-cli"}
    assert f"left out 1 file that holds no session: {project.name}/logs.json" in caplog.text
