"""The STS writer (traces.py) and the traces push, at huggingface_hub's HTTP boundary."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import yaml
from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets.formats import into_storyline
from pchronicle_datasets.traces import is_failed, session_lines, write_traces
from tests.hub_fake import hub_fixture  # noqa: F401 (the `hub` fixture)

ROOT = Path(__file__).resolve().parents[3]
ATIF = ROOT / "tests" / "data" / "atif"
SAMPLES = ROOT / "pchronicle_datasets" / "samples"


def _story(**extra):
    return {
        "schema_version": "storyline/v1",
        "session": "s1",
        "agent": {"id": "bot", "model": "m"},
        "turns": [
            {"id": 1, "src": "system", "msg": "be brief"},
            {"id": 2, "src": "user", "msg": "2+2?", "ts": "2026-07-01T15:00:00.250Z"},
            {
                "id": 3,
                "src": "agent",
                "msg": None,
                "reason": "add",
                "metrics": {"prompt_tokens": 3},
                "tool_calls": [
                    {"tcid": "t1", "fn": "calc", "args": {"e": "2+2"}},
                    {"tcid": "t2", "fn": "raw", "args": "ls -la", "result": "a b"},
                ],
                "observation": {"results": [{"source_call_id": "t1", "content": "4"}, {"content": "log"}]},
            },
            {"id": 4, "src": "agent", "msg": [{"type": "text", "text": "4"}], "ts": 1751382000.5},
        ],
        **extra,
    }


def test_every_field_of_a_message():
    lines = session_lines(_story())
    assert lines[0] == {"type": "session", "harness": "bot", "id": "s1", "name": "2+2?"}
    msgs = [line["message"] for line in lines[1:]]
    assert all(line["type"] == "message" for line in lines[1:])
    assert msgs[0] == {"role": "system", "content": "be brief"}
    assert msgs[1] == {"role": "user", "content": "2+2?", "timestamp": 1782918000250}
    assert msgs[2] == {
        "role": "assistant",
        "content": "",
        "reasoningContent": "add",
        "toolCalls": [
            {"id": "t1", "function": {"name": "calc", "arguments": '{"e":"2+2"}'}},
            {"id": "t2", "function": {"name": "raw", "arguments": "ls -la"}},
        ],
        "model": "m",
    }
    assert msgs[3] == {"role": "tool", "content": "4", "toolCallId": "t1"}
    assert msgs[4] == {"role": "tool", "content": "log"}  # a result without a call id stays unlinked
    assert msgs[5] == {"role": "tool", "content": "a b", "toolCallId": "t2"}  # the call's own result
    assert msgs[6] == {"role": "assistant", "content": "4", "timestamp": 1751382000500, "model": "m"}


def test_what_sts_cannot_hold_is_counted(caplog, tmp_path):
    _, lost = write_traces([_story(task={"result": {"completed": False}}, extra={"k": 1})], tmp_path)
    assert lost["/turns/*/metrics"] == 1 and lost["/task"] == 1 and lost["/extra"] == 1
    assert "lossy write: not in sts: /task" in caplog.text  # logged outside a loss report
    with pc.collect_losses() as report:
        write_traces([_story(task={"result": {"completed": False}}, extra={"k": 1})], tmp_path / "again")
    assert report.counts["not in sts: /task"] == 1 and report.first["not in sts: /extra"] == "/extra"


def test_completed_and_failed_are_separate_folders(tmp_path):
    failed = _story(session="s2", task={"result": {"status": "timeout"}})
    groups, _ = write_traces([_story(), failed], tmp_path)
    assert [p.relative_to(tmp_path).as_posix() for p in groups["completed"]] == ["completed/s1.jsonl"]
    assert [p.relative_to(tmp_path).as_posix() for p in groups["failed"]] == ["failed/s2.jsonl"]
    assert is_failed(failed) and not is_failed(_story())
    first = orjson.loads((tmp_path / "completed" / "s1.jsonl").read_bytes().split(b"\n")[0])
    assert first["type"] == "session"


def test_harbor_and_sample_files_all_write():
    for path in sorted(ATIF.glob("*.json")) + sorted(SAMPLES.glob("*/*.json*")):
        for story in into_storyline("auto", path.read_bytes(), document_id=path.name):
            lines = session_lines(story)
            assert lines[0]["type"] == "session" and lines[0]["id"]
            for line in lines[1:]:
                assert line["message"]["role"] in ("user", "assistant", "system", "tool")
                assert isinstance(line["message"]["content"], str)


def _rows(tmp_path):
    files = [str(p) for p in sorted(ATIF.glob("*.json"))]
    return load_dataset("pchronicle", "atif", data_files=files, split="train", cache_dir=str(tmp_path / "c"))


def test_push_traces_loads_with_plain_datasets(hub, tmp_path):
    ds = _rows(tmp_path)
    r = pc.Redactor(key="k")  # redaction is on by default (issue #24): a known key
    pc.push_to_hub(ds, "org/agent-sft", conversion="atif → traces", token="hf_test_token", layout="both", redact=r)
    paths = set(hub.files)
    assert "data/train-00000-of-00001.parquet" in paths
    traces = sorted(p for p in paths if p.startswith("traces/"))
    assert len(traces) == 6 and all(p.startswith("traces/train/completed/") and p.endswith(".jsonl") for p in traces)
    meta = yaml.safe_load(hub.files["README.md"].decode().split("---")[1])
    # datasets reads all configs of a repository with one builder: beside Parquet, traces are files only
    assert [c["config_name"] for c in meta["configs"]] == ["default"]
    assert {"agent-traces", "format:agent-traces"} <= set(meta["tags"])
    assert meta["size_categories"] == ["n<1K"]
    card = hub.files["README.md"].decode()
    assert "atif: 6" in card and "**Models:**" in card
    folder = hub.write(tmp_path / "repo")
    rows = load_dataset(str(folder), split="train", cache_dir=str(tmp_path / "c1"))
    assert [pc.row_to_story(r) for r in rows] == [pc.redact(pc.row_to_story(r), key="k") for r in ds]
    hub.files.clear()
    pc.push_to_hub(ds, "org/agent-sft", conversion="atif → traces", token="hf_test_token", layout="traces")
    meta = yaml.safe_load(hub.files["README.md"].decode().split("---")[1])
    assert meta["configs"] == [
        {
            "config_name": "completed",
            "data_files": [{"split": "train", "path": "traces/train/completed/*.jsonl"}],
            "default": True,
        }
    ]
    folder = hub.write(tmp_path / "repo2")
    # datasets sees agent traces (type + message) and decodes them with `teich` when installed; without
    # it, parse_agent_traces=False reads the lines as they are
    loaded = load_dataset(
        str(folder), "completed", split="train", cache_dir=str(tmp_path / "c2"), parse_agent_traces=False
    )
    headers = [r for r in loaded if r["type"] == "session"]
    assert len(headers) == 6
    messages = [r for r in loaded if r["type"] == "message"]
    assert messages and all(m["message"]["role"] in ("user", "assistant", "system", "tool") for m in messages)


def test_push_traces_only_with_failed_config(hub, tmp_path):
    from datasets import Dataset

    from pchronicle_datasets.features import rows_to_table

    stories = [_story(), _story(session="s2", task={"result": {"completed": False}})]
    ds = Dataset(rows_to_table(pc.story_to_row(s) for s in stories))
    pc.push_to_hub(ds, "org/agent-sft", token="hf_test_token", layout="traces")
    assert not any(p.startswith("data/") for p in hub.files)
    meta = yaml.safe_load(hub.files["README.md"].decode().split("---")[1])
    assert [(c["config_name"], c.get("default")) for c in meta["configs"]] == [("completed", True), ("failed", None)]
    folder = hub.write(tmp_path / "repo")
    failed = load_dataset(
        str(folder), "failed", split="train", cache_dir=str(tmp_path / "c3"), parse_agent_traces=False
    )
    assert [r["id"] for r in failed if r["type"] == "session"] == ["s2"]


def test_cli_push_to_traces(hub, tmp_path):
    from pchronicle_datasets.cli import main

    src = ATIF / "harbor_golden_terminus2_timeout.trajectory.json"
    assert main(["push", str(src), "--repo", "org/agent-sft", "--to", "traces", "--token", "hf_test_token"]) == 0
    traces = [p for p in hub.files if p.startswith("traces/")]
    assert len(traces) == 1
    lines = [json.loads(x) for x in hub.files[traces[0]].decode().splitlines()]
    assert lines[0]["harness"] == "terminus-2"
