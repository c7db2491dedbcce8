"""A session folder as it lies on disk: ``load_dataset("pchronicle", "auto", data_dir=…)`` and the CLI on a
folder read each session and subagent file as a document, give each subagent's ``.meta.json`` sidecar to its
file's reader (never a row of its own), and link children to the call that spawned them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.sidecars import pair

DATA = Path(__file__).resolve().parents[2] / "data" / "claude_code"
SHOWCASE = DATA / "showcase"
SESSION = "55550000-0000-4000-8000-000000000001"


def test_a_session_folder_loads_linked_with_its_sidecars(tmp_path):
    ds = load_dataset("pchronicle", "auto", data_dir=str(SHOWCASE), split="train", cache_dir=str(tmp_path))
    stories = {s["session"]: s for s in map(pc.row_to_story, ds)}
    assert sorted(stories) == [SESSION, f"{SESSION}/agent-showcol1"]  # the sidecar is no row
    child, parent = stories[f"{SESSION}/agent-showcol1"], stories[SESSION]
    assert child["parent"] == {"psid": SESSION, "scid": "toolu_sc_showcol1", "rel": "spawn"}
    assert child["meta"]["claude-code"]["sidecar"]["agentType"] == "general-purpose"
    assert child["session"] in parent["children"]


def test_a_child_loaded_alone_reads_the_sidecar_beside_it(tmp_path):
    child = next(SHOWCASE.rglob("agent-showcol1.jsonl"))
    ds = load_dataset("pchronicle", "claude-code", data_files=[str(child)], split="train", cache_dir=str(tmp_path))
    (story,) = map(pc.row_to_story, ds)
    assert story["parent"]["psid"] == SESSION and story["parent"]["scid"] == "toolu_sc_showcol1"


def test_the_cli_reads_a_folder(tmp_path, capsys):
    folder = tmp_path / "projects"
    shutil.copytree(SHOWCASE, folder / "-workspace-example-app")
    out = tmp_path / "out.storyline.jsonl"
    assert main(["convert", str(folder), "--to", "storyline", "-o", str(out)]) == 0
    stories = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(s["session"] for s in stories) == [SESSION, f"{SESSION}/agent-showcol1"]
    child = next(s for s in stories if "parent" in s)
    assert child["parent"]["scid"] == "toolu_sc_showcol1"


def test_a_project_folder_loads_beside_the_files_claude_code_keeps_there(tmp_path, caplog, capsys):
    # Claude Code keeps big tool outputs in <session>/tool-results/: <id>.txt for text, and <id>.json for an MCP
    # tool's content blocks (as real sessions' paths show: toolu_…json, read back as rawData[0].text), and (2.1.x)
    # an index of the project's sessions in sessions-index.json: the folder loads with none taken for a session
    # (no reader takes them: the load stopped on the first .json), and the .json files are said to be left out.
    project = tmp_path / "projects" / "-home-me-app"
    shutil.copytree(SHOWCASE, project)
    (project / SESSION / "tool-results").mkdir()
    (project / SESSION / "tool-results" / "toolu_01X.txt").write_text("a long tool output\n")
    blocks = [{"type": "text", "text": json.dumps({"messages": [{"ts": "1", "text": "hi"}] * 500})}]
    (project / SESSION / "tool-results" / "toolu_01Y.json").write_text(json.dumps(blocks))
    index = {"version": 1, "originalPath": "/home/me/app", "entries": [{"sessionId": SESSION, "messageCount": 4}]}
    (project / "sessions-index.json").write_text(json.dumps(index))
    with caplog.at_level("WARNING"):
        ds = load_dataset(
            "pchronicle", "auto", data_dir=str(project.parent), split="train", cache_dir=str(tmp_path / "c")
        )
    assert sorted(ds["session"]) == [SESSION, f"{SESSION}/agent-showcol1"]
    assert (
        f"left out 2 files that hold no session: -home-me-app/{SESSION}/tool-results/toolu_01Y.json (a tool output "
        "Claude Code kept apart, too big for the conversation) and 1 more"
    ) in caplog.text
    assert main(["inspect", str(project.parent)]) == 0  # no bad record
    assert "left out 2 files that hold no session" in capsys.readouterr().err


def test_a_project_folder_loads_beside_a_workflow_runs_files(tmp_path, caplog):
    # A Workflow run (2.1.2xx: a script that fans out into subagents) leaves, in real 2.1.270 project folders
    # (noamsalit/Shepherd's probe copies, no licence: the shapes only, tests/data/claude_code/README.md), beside each
    # agent's agent-<id>.jsonl and its .meta.json, the run's journal.jsonl and, once done, workflows/<runId>.json
    # (and the script, a .js no reader lists). No reader takes those two: the load stopped on the journal.
    project = tmp_path / "projects" / "-tmp-work"
    shutil.copytree(SHOWCASE, project)
    run = project / SESSION / "subagents" / "workflows" / "wf_edb19b07-a69"
    run.mkdir(parents=True)
    agent = "aff491fda998b3fe0"
    (run / "journal.jsonl").write_text(
        '{"type":"launched"}\n'
        f'{{"type":"started","key":"v2:790ace0b","agentId":"{agent}","label":"ping","phase":"Ping"}}\n'
        f'{{"type":"result","key":"v2:790ace0b","agentId":"{agent}","result":"PONG"}}\n'
    )
    meta = {"agentType": "workflow-subagent", "description": "ping", "workflowPhase": "Ping", "spawnDepth": 1}
    (run / f"agent-{agent}.meta.json").write_text(json.dumps(meta))
    env = {"userType": "external", "cwd": "/tmp/work", "sessionId": SESSION, "version": "2.1.270"}
    records = [
        {"parentUuid": None, "isSidechain": True, "agentId": agent, "type": "user", "uuid": "w1",
         "message": {"role": "user", "content": "Reply with exactly the word PONG."}, **env},
        {"parentUuid": "w1", "isSidechain": True, "agentId": agent, "type": "assistant", "uuid": "w2",
         "message": {"id": "msg_w", "role": "assistant", "model": "claude-haiku-4-5-20251001",
                     "content": [{"type": "text", "text": "PONG"}]}, **env},
    ]  # fmt: skip
    (run / f"agent-{agent}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (project / SESSION / "workflows" / "scripts").mkdir(parents=True)
    (project / SESSION / "workflows" / "scripts" / "ping-wf_edb19b07-a69.js").write_text("export const meta = {}\n")
    summary = {"runId": "wf_edb19b07-a69", "taskId": "w1x94eiqe", "result": "PONG", "agentCount": 1,
               "status": "completed", "workflowProgress": [{"type": "workflow_agent", "agentId": agent}]}  # fmt: skip
    (project / SESSION / "workflows" / "wf_edb19b07-a69.json").write_text(json.dumps(summary))
    with caplog.at_level("WARNING"):
        ds = load_dataset(
            "pchronicle", "auto", data_dir=str(project.parent), split="train", cache_dir=str(tmp_path / "c")
        )
    stories = {s["session"]: s for s in map(pc.row_to_story, ds)}
    assert sorted(stories) == [SESSION, f"{SESSION}/agent-{agent}", f"{SESSION}/agent-showcol1"]
    child = stories[f"{SESSION}/agent-{agent}"]
    assert child["parent"] == {"psid": SESSION, "rel": "spawn"}  # no toolUseId: a workflow agent has none
    assert child["meta"]["claude-code"]["sidecar"] == meta and [t["msg"] for t in child["turns"]] == [
        "Reply with exactly the word PONG.",
        "PONG",
    ]
    assert (
        f"left out 2 files that hold no session: -tmp-work/{SESSION}/subagents/workflows/wf_edb19b07-a69/journal.jsonl "
        "(the ledger of a Workflow run's agents, whose own files are read) and 1 more"
    ) in caplog.text


def test_a_lone_meta_json_is_not_taken_for_a_sidecar():
    assert pair(["a/agent-x.meta.json"]) == ([0], {})
    assert pair(["a/agent-x.jsonl", "a/agent-x.meta.json"]) == ([0], {0: 1})
