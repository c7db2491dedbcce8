"""The ``swe-agent`` format (docs/formats/swe-agent.md) on SWE-agent's own test trajectory and hand-written
text-protocol cases: every call, result and message in its place, counted from the source here, not by the
reader; same-source round trips give equal JSON."""

from __future__ import annotations

import orjson
import pytest
from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from pchronicle_datasets.losses import collect_losses

from .common import DATA, calls, load_auto, records, results, written

TRAJ = DATA / "swe_agent" / "6e44b9__sweagenttestrepo-1c2844.traj"

TEXT_PROTOCOL = {
    "environment": "main",
    "trajectory": [
        {
            "action": "ls",
            "observation": "a.py",
            "response": "DISCUSSION\nLook first.\n```\nls\n```",
            "thought": "DISCUSSION\nLook first.",
            "state": {"open_file": "n/a", "working_dir": "/repo"},
        },
        {"action": "submit", "observation": "diff", "response": "```\nsubmit\n```", "thought": ""},
    ],
    "history": [
        {"role": "system", "content": "SETTING: …", "agent": "main"},
        {"role": "user", "content": "ISSUE: fix it", "agent": "main"},
        {
            "role": "assistant",
            "content": "DISCUSSION\nLook first.\n```\nls\n```",
            "thought": "DISCUSSION\nLook first.",
            "action": "ls",
            "agent": "main",
        },
        {"role": "user", "content": "a.py\n(Open file: n/a)\nbash-$", "agent": "main"},
        {"role": "assistant", "content": "```\nsubmit\n```", "thought": "", "action": "submit", "agent": "main"},
    ],
    "info": {"exit_status": "submitted", "submission": "diff", "model_stats": {"api_calls": 2}},
    "replay_config": '{"agent": {"model": {"name": "gpt-4o"}}}',
}


def test_load_dataset_auto_reads_every_call_result_and_message(tmp_path):
    [story] = load_auto([TRAJ], tmp_path)
    [source] = records(TRAJ)
    assert story["origin"]["format"] == "swe-agent"
    history = source["history"]
    messages = [m for m in history if m["role"] != "tool"]
    want_calls = [
        (c["id"], c["function"]["name"], orjson.loads(c["function"]["arguments"]))
        for m in history
        for c in m.get("tool_calls") or ()
    ]
    # the 5th step (submit) has no history message: its own turn, its action a bash call, its observation the result
    step = source["trajectory"][-1]
    got = calls(story)
    assert got[:-1] == want_calls and got[-1][1:] == ("bash", {"command": step["action"]})
    assert results(story) == [(m["tool_call_ids"][0], m["content"]) for m in history if m["role"] == "tool"] + [
        (got[-1][0], step["observation"])
    ]
    assert [t["msg"] for t in story["turns"]] == [m["content"] for m in messages] + [step["response"]]
    assert [t["src"] for t in story["turns"]] == ["system", "user", "agent", "agent", "agent", "agent", "agent"]
    assert story["task"] == {
        "env": {"name": "main"},
        "result": {"status": "submitted", "final_answer": source["info"]["submission"]},
    }
    assert story["final_metrics"] == source["info"]["model_stats"]
    assert story["agent"]["model"] == "gpt-4o"
    assert story["turns"][2]["env"] == {"state": source["trajectory"][0]["state"]}
    fields = story["unknown_fields"]["sources"]["swe-agent"]["fields"]
    assert "/replay_config" in fields and "/info/edited_files30" in fields
    # trajectory values equal to history's are not kept twice
    assert "/trajectory/0/response" not in fields and "/trajectory/0/thought" not in fields
    assert "/trajectory/0/observation" in fields  # the raw observation differs from the tool message


def test_same_source_round_trip_is_equal_json():
    stories = pc.into_storyline("auto", TRAJ.read_bytes(), document_id=TRAJ.name)
    assert written(pc.from_storyline("swe-agent", stories)) == records(TRAJ)


def test_text_protocol_keeps_the_text_and_maps_the_action_to_a_call():
    [story] = pc.into_storyline("auto", orjson.dumps(TEXT_PROTOCOL), document_id="t.traj")
    turn = story["turns"][2]
    assert turn["msg"] == TEXT_PROTOCOL["history"][2]["content"]  # exactly, bash block included
    assert turn["tool_calls"] == [{"tcid": "action-2", "fn": "bash", "args": {"command": "ls"}}]
    # The user message after it shows the model the action's output: the call's result (as the tool message is with
    # function calling), not a user turn; the step's raw observation stays residual.
    shown = "a.py\n(Open file: n/a)\nbash-$"
    assert turn["observation"] == {"results": [{"content": shown, "source_call_id": "action-2"}]}
    assert [t["src"] for t in story["turns"]] == ["system", "user", "agent", "agent"]
    assert story["agent"]["model"] == "gpt-4o"
    fields = story["unknown_fields"]["sources"]["swe-agent"]["fields"]
    assert fields["/history/2/thought"] == "DISCUSSION\nLook first."  # the thought is visible text, not reasoning
    assert fields["/trajectory/0/observation"] == "a.py"
    assert fields["/history/3/agent"] == "main"
    # the last action (submit) has no message after it: its step's observation is its result
    assert story["turns"][3]["observation"]["results"] == [{"content": "diff", "source_call_id": "action-4"}]
    assert "reason" not in turn
    assert written(pc.from_storyline("swe-agent", [story])) == [TEXT_PROTOCOL]


def test_a_real_text_protocol_run_shows_each_output_once(tmp_path):
    # SWE-agent's own demonstration (thought-action text protocol): each action's output is the user message after
    # it, as the model saw it (the raw output plus the prompt's "(Open file: …)" lines). It was a tool message
    # (the step's raw observation) and then the same text again as a user message in every training example.
    path = DATA / "swe_agent" / "humanevalfix-python-0.traj"
    [source] = records(path)
    history, steps = source["history"], source["trajectory"]
    ds = load_dataset("pchronicle", "auto", data_dir=str(path.parent), split="train", cache_dir=str(tmp_path))
    [story] = [pc.row_to_story(r) for r in ds if r["origin"]["document_id"] == path.name]
    actions = [i for i, m in enumerate(history) if m["role"] == "assistant" and "action" in m]
    assert calls(story) == [(f"action-{i}", "bash", {"command": history[i]["action"]}) for i in actions]
    shown = [(f"action-{i}", history[i + 1]["content"]) for i in actions if i + 1 < len(history)]
    assert results(story) == [*shown, (f"action-{actions[-1]}", steps[-1]["observation"])]  # submit: no message after
    out = pc.to_messages(story)["messages"]
    assert [m["role"] for m in out] == ["system", "user"] + ["assistant", "tool"] * len(actions)
    assert [m["content"] for m in out if m["role"] == "tool"] == [c for _, c in results(story)]
    assert not any(m["role"] == "user" and m["content"] == c for m in out for _, c in shown)
    assert pc.flags(story) == ["incomplete"]  # it ends on the submission's output
    assert written(pc.from_storyline("swe-agent", [story])) == [source]


def test_to_messages_writes_each_call_once():
    [story] = pc.into_storyline("auto", TRAJ.read_bytes(), document_id=TRAJ.name)
    out = pc.to_messages(story)["messages"]
    ids = [c["id"] for m in out for c in m.get("tool_calls") or ()]
    assert len(ids) == len(set(ids)) == 5
    assert sum(m["role"] == "tool" for m in out) == 5


def test_other_documents_are_written_with_their_losses_counted():
    chat = {
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        ],
        "split": "train",
    }
    [story] = pc.into_storyline("chat", orjson.dumps(chat), document_id="c.json")
    story["turns"][0]["ts"] = "2026-01-01T00:00:00Z"
    with collect_losses() as report:
        text = pc.from_storyline("swe-agent", [story])
    assert report.counts["not in swe-agent: /turns/*/ts"] == 1
    [back] = pc.into_storyline("swe-agent", text, document_id="c.traj")
    assert calls(back) == [("c1", "ls", {})] and results(back) == [("c1", "a.py")]
    assert back["unknown_fields"]["sources"]["chat"]["fields"] == {"/split": "train"}  # carried in /_storyline


def test_a_message_that_is_not_one_is_refused_with_its_pointer():
    bad = dict(TEXT_PROTOCOL, history=[{"role": "user", "content": "x"}, "oops"])
    with pytest.raises(FormatError, match=r"/history/1: a history message is an object with a string role"):
        pc.into_storyline("swe-agent", orjson.dumps(bad), document_id="t.traj")


def test_a_bare_history_is_not_claimed_but_the_refusal_names_the_reader():
    with pytest.raises(FormatError, match="read it with --from swe-agent"):
        pc.into_storyline("auto", orjson.dumps({"history": TEXT_PROTOCOL["history"]}), document_id="demo.traj")


def _fc(i: int, cid: str, command: str) -> list[dict]:
    """An assistant message calling ``bash`` with id ``cid`` and the tool message answering it (history ``i``)."""
    args = orjson.dumps({"command": command}).decode()
    return [
        {
            "role": "assistant",
            "content": f"step {i}",
            "tool_calls": [{"id": cid, "type": "function", "function": {"name": "bash", "arguments": args}}],
        },
        {"role": "tool", "content": f"out {i}", "tool_call_ids": [cid]},
    ]


def test_a_repeated_call_id_is_renamed_and_its_result_stays_linked():
    # SWE-agent's own demonstration (trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__
    # function_calling_replace_from_source) reuses call_5iDd… for four calls: each call and result is kept,
    # the repeats as {id}#{n} (the session-log readers' rule), and the file comes back as it was.
    history = [{"role": "system", "content": "S"}, {"role": "user", "content": "fix"}]
    history += _fc(2, "call_a", "ls") + _fc(4, "call_b", "cat x") + _fc(6, "call_a", "ls") + _fc(8, "call_a", "pwd")
    record = {"history": history, "info": {"exit_status": "submitted"}}
    [story] = pc.into_storyline("swe-agent", orjson.dumps(record), document_id="r.traj")
    assert calls(story) == [
        ("call_a", "bash", {"command": "ls"}),
        ("call_b", "bash", {"command": "cat x"}),
        ("call_a#2", "bash", {"command": "ls"}),
        ("call_a#3", "bash", {"command": "pwd"}),
    ]
    assert results(story) == [("call_a", "out 2"), ("call_b", "out 4"), ("call_a#2", "out 6"), ("call_a#3", "out 8")]
    assert [t["src"] for t in story["turns"]] == ["system", "user", "agent", "agent", "agent", "agent"]
    out = pc.to_messages(story)["messages"]
    assert sum(len(m.get("tool_calls") or ()) for m in out) == 4
    assert [m["tool_call_id"] for m in out if m["role"] == "tool"] == ["call_a", "call_b", "call_a#2", "call_a#3"]
    assert written(pc.from_storyline("swe-agent", [story])) == [record]


MARSHMALLOW = DATA / "swe_agent" / "marshmallow-code__marshmallow-1867.traj"


def test_a_real_trajectory_that_reuses_call_ids_keeps_every_call_and_result(tmp_path):
    # SWE-agent's demonstration reuses call_5iDd… (4 calls) and call_ahTo… (2 calls): each is a call answered by
    # its own tool message, not a residual call whose result becomes a user message.
    ds = load_dataset("pchronicle", "swe-agent", data_files=[str(MARSHMALLOW)], split="train", cache_dir=str(tmp_path))
    [story] = [pc.row_to_story(row) for row in ds]
    [source] = records(MARSHMALLOW)
    history = source["history"]
    want_calls = sum(len(m.get("tool_calls") or ()) for m in history if m["role"] == "assistant")
    want_results = sum(m["role"] == "tool" for m in history)
    ids = [c["id"] for m in history for c in m.get("tool_calls") or ()]
    assert len(set(ids)) < len(ids)  # the file does reuse ids
    out = pc.to_messages(story)["messages"]
    got_ids = [c["id"] for m in out for c in m.get("tool_calls") or ()]
    assert len(got_ids) == len(set(got_ids)) == want_calls
    assert [m["tool_call_id"] for m in out if m["role"] == "tool"] == got_ids
    assert sum(m["role"] == "tool" for m in out) == want_results
    assert [m["role"] for m in out].count("user") == sum(m["role"] == "user" for m in history)
    assert written(pc.from_storyline("swe-agent", [story])) == [source]


def test_a_folder_of_traj_files_loads_through_data_dir_and_the_cli(tmp_path):
    # SWE-agent writes <instance>.traj: a data_dir or a folder given to the CLI reads them (sidecars.FOLDER_EXTENSIONS
    # holds every format's EXTENSION), as every other harness's folder. Before, data_dir found no file.
    from pchronicle_datasets.cli import main
    from pchronicle_datasets.formats import formats
    from pchronicle_datasets.sidecars import FOLDER_EXTENSIONS

    assert all(m.EXTENSION.endswith(FOLDER_EXTENSIONS) for m in formats())
    folder = DATA / "swe_agent"
    ds = load_dataset("pchronicle", "auto", data_dir=str(folder), cache_dir=str(tmp_path / "c"))["train"]
    assert sorted(o["document_id"] for o in ds["origin"]) == sorted(p.name for p in folder.glob("*.traj"))
    out = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    calls_in = sum(len(t.get("tool_calls") or []) for r in ds for t in pc.row_to_story(r)["turns"])
    assert calls_in and sum(len(m["tool_calls"] or []) for r in out for m in r["messages"]) == calls_in
    assert main(["convert", str(folder), "--to", "storyline", "-o", str(tmp_path / "out.jsonl")]) == 0
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == len(ds)
