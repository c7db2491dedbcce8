"""A branched session (docs/formats/claude-code.md, "Forks"): its copy of the parent's conversation is context
turns of the fork, not its own work, and the fork names its parent; a ``--fork-session`` copy, which says nothing
of where it came from, is read as it is. The two forks of tests/data/claude_code/fork_2.1.1 are written as Claude
Code writes them from the real session of entire_2.1.1_task (the README there says how); the counts below are made
from the raw lines, independently of the reader."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.formats import claude_code

DATA = Path(__file__).resolve().parents[2] / "data" / "claude_code"
PARENT = DATA / "entire_2.1.1_task" / "c01ff5a5-0d50-40b0-9169-a0302770e8ff.jsonl"
BRANCH = DATA / "fork_2.1.1" / "c01ff5a5-f02c-4b7e-9d1a-5b2a7e0c1f01.written.jsonl"  # /branch: forkedFrom
RESUMED = DATA / "fork_2.1.1" / "c01ff5a5-f02c-4b7e-9d1a-5b2a7e0c1f02.written.jsonl"  # --fork-session: no marker
PARENT_ID = "c01ff5a5-0d50-40b0-9169-a0302770e8ff"


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def turns_of(recs: list[dict]) -> int:
    """The turns of conversation records, counted by hand: a user record with text is one, the lines of one
    response (one ``message.id``) are one; a record of results only adds none."""
    users = sum(1 for r in recs if r["type"] == "user" and not _results_only(r))
    return users + len({r["message"]["id"] for r in recs if r["type"] == "assistant"})


def _results_only(r: dict) -> bool:
    content = r["message"]["content"]
    return isinstance(content, list) and all(b.get("type") == "tool_result" for b in content)


def folder(tmp_path: Path) -> Path:
    """A project folder as Claude Code leaves it: the parent session beside its two forks."""
    project = tmp_path / "projects" / "-home-me-cli"
    project.mkdir(parents=True)
    for path in (PARENT, BRANCH, RESUMED):
        shutil.copy(path, project / path.name.replace(".written", ""))
    return project


def test_a_branched_sessions_copy_is_context_and_the_fork_names_its_parent():
    recs = records(BRANCH)
    copied = [r for r in recs if "forkedFrom" in r]
    own = [r for r in recs if "forkedFrom" not in r]
    # by hand: the 6 conversation records of the parent (2 user, 4 assistant lines of 2 responses), each with its
    # forkedFrom naming the parent and its own uuid there; then the fork's own question and answer
    assert len(copied) == 6 and len(own) == 2
    assert {r["forkedFrom"]["sessionId"] for r in copied} == {PARENT_ID}
    assert all(r["forkedFrom"]["messageUuid"] == r["uuid"] for r in copied)
    assert [r["uuid"] for r in copied] == [r["uuid"] for r in records(PARENT) if r["type"] in ("user", "assistant")]
    assert (turns_of(copied), turns_of(own)) == (3, 2)

    (doc,) = claude_code.decode(BRANCH.read_bytes(), BRANCH.name)
    pc.validate(doc)
    assert doc["session"] == "c01ff5a5-f02c-4b7e-9d1a-5b2a7e0c1f01"
    assert doc["parent"] == {"psid": PARENT_ID, "rel": "fork"}
    marks = [
        (t["src"], t.get("copied", False), t.get("extra", {}).get("claude_code", {}).get("context"))
        for t in doc["turns"]
    ]
    assert marks == [("user", True, "fork"), ("agent", True, "fork"), ("agent", True, "fork"),
                     ("user", False, None), ("agent", False, None)]  # fmt: skip
    assert all(t["kind"] == "context" for t in doc["turns"][:3])
    # the copied Task call started the parent's subagent (its file is under the parent's session), not the fork's
    (call,) = doc["turns"][1]["tool_calls"]
    assert call["extra"]["subagent"] == f"{PARENT_ID}/agent-ab532cf" and "children" not in doc
    # a fork is the user's own conversation, not a subagent: no flag says otherwise
    assert pc.flags(doc) == []
    # the same-source writer gives the file back: forkedFrom stays on every copied record
    assert [json.loads(x) for x in claude_code.encode([doc]).splitlines()] == recs


def test_training_output_of_a_fork_has_its_own_turns_once():
    (doc,) = claude_code.decode(BRANCH.read_bytes(), BRANCH.name)
    full = pc.to_messages(doc, arguments="object")["messages"]
    # what the model saw: the copy (user, the Task call, its result, the answer), then the fork's question and answer
    assert [m["role"] for m in full] == ["user", "assistant", "tool", "assistant", "user", "assistant"]
    own = pc.to_messages(doc, arguments="object", drop_copied=True)["messages"]
    assert [(m["role"], m["content"]) for m in own] == [
        ("user", records(BRANCH)[-2]["message"]["content"]),
        ("assistant", records(BRANCH)[-1]["message"]["content"][0]["text"]),
    ]
    # the policies train the fork's last answer, never a copied one
    assert [m["train"] for m in pc.to_messages(doc, trainable="last")["messages"]] == [False] * 5 + [True]
    assert [c["from"] for c in pc.to_sharegpt(doc, drop_copied=True)["conversations"]] == ["system", "human", "gpt"]


def test_a_fork_session_copy_says_nothing_and_is_read_as_it_is():
    # --fork-session (and /fork's background copy) re-stamps the parent's records with the new sessionId and
    # writes no forkedFrom: only the uuids, equal to the parent file's, say it is a copy. The reader does not
    # guess across files (docs/formats/claude-code.md, "Forks"): its turns are all its own.
    recs = records(RESUMED)
    assert not any("forkedFrom" in r for r in recs)
    parent_uuids = {r["uuid"] for r in records(PARENT) if "uuid" in r}
    assert sum(1 for r in recs if r["uuid"] in parent_uuids) == 6
    (doc,) = claude_code.decode(RESUMED.read_bytes(), RESUMED.name)
    assert "parent" not in doc and not any(t.get("copied") for t in doc["turns"])
    assert len(doc["turns"]) == turns_of(recs) == 5


def test_a_folder_with_a_parent_and_its_forks(tmp_path, capsys):
    project = folder(tmp_path)
    ds = load_dataset("pchronicle", "auto", data_dir=str(project), split="train", cache_dir=str(tmp_path / "c"))
    stories = {s["session"]: s for s in map(pc.row_to_story, ds)}
    assert len(ds) == 3 and set(stories) == {PARENT_ID, *(f"c01ff5a5-f02c-4b7e-9d1a-5b2a7e0c1f0{k}" for k in "12")}
    branch = stories["c01ff5a5-f02c-4b7e-9d1a-5b2a7e0c1f01"]
    assert branch["parent"] == {"psid": PARENT_ID, "rel": "fork"}
    assert "children" not in branch and stories[PARENT_ID]["children"] == [f"{PARENT_ID}/agent-ab532cf"]
    chat = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    own = ds.map(
        pc.to_messages,
        batched=True,
        remove_columns=ds.column_names,
        features=pc.MESSAGES_FEATURES,
        fn_kwargs={"drop_copied": True},
    )
    by_row = {row["session"]: k for k, row in enumerate(ds)}
    k = by_row["c01ff5a5-f02c-4b7e-9d1a-5b2a7e0c1f01"]
    # the parent's 4 messages once as trainable text (the parent's row), the branch's 2 own beside them
    assert len(chat[by_row[PARENT_ID]]["messages"]) == len(own[by_row[PARENT_ID]]["messages"]) == 4
    assert (len(chat[k]["messages"]), len(own[k]["messages"])) == (6, 2)
    assert main(["inspect", str(project / BRANCH.name.replace(".written", "")), "--losses"]) == 0


def test_no_policy_trains_a_copy():
    # A branch the user left without asking anything (/branch writes the file at once): all its answers are
    # copies, trained in the parent's row; no policy trains them again.
    text = "".join(line + "\n" for line in BRANCH.read_text().splitlines()[:6])
    (doc,) = claude_code.decode(text, BRANCH.name)
    assert all(t.get("copied") for t in doc["turns"]) and len(doc["turns"]) == 3
    for trainable in ("last", "final_answer"):
        assert not any(m["train"] for m in pc.to_messages(doc, trainable=trainable)["messages"])
        assert not any(c["train"] for c in pc.to_sharegpt(doc, trainable=trainable)["conversations"])
        assert not any(
            c["train"] for c in pc.to_sharegpt(doc, trainable=trainable, dialect="llamafactory")["conversations"]
        )
    assert pc.to_prompt_completion(doc)["completion"] == []
    # the branch with its own answer: every form trains that answer and nothing of the copy
    (doc,) = claude_code.decode(BRANCH.read_bytes(), BRANCH.name)
    conv = pc.to_sharegpt(doc, trainable="final_answer")["conversations"]
    assert [c["value"].endswith("from A to Z.") for c in conv if c["train"]] == [True]
    assert pc.to_prompt_completion(doc)["completion"][0]["content"].endswith("from A to Z.")
    masked = pc.to_messages(doc, mask_tool_arguments=True)["messages"]  # "all" with a policy: the fork's own only
    assert [m["content"] for m in masked if m["train"]] == ["Sorted: the file now lists the colors from A to Z."]


def test_the_cli_marks_the_same(tmp_path):
    out = tmp_path / "sft"
    assert main(["convert", str(BRANCH), "--to", "sharegpt", "--trainable", "last", "-o", str(out)]) == 0
    (record,) = [json.loads(line) for f in sorted(out.rglob("*.jsonl")) for line in f.read_text().splitlines()]
    conv = record["conversations"] if isinstance(record, dict) else record
    assert [c["value"] for c in conv if c["train"]] == [
        pc.to_sharegpt(claude_code.decode(BRANCH.read_bytes(), BRANCH.name)[0])["conversations"][-1]["value"]
    ]
