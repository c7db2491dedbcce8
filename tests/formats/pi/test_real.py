"""Real Pi sessions (tests/data/pi/README.md): every call and result, counted here from the JSON lines without the
reader; names resolved; usage and cost per message; calls without a result counted, not balanced; compactions
not user turns of the training text; each file written back as equal JSON lines. What datasets + teich give for
the same files is measured beside (docs/formats/pi.md).

``PCHRONICLE_PI_CORPUS=<folder>`` adds every ``*.jsonl`` file of a folder (pi-mono's whole fixtures, say).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.formats import detect, pi

DATA = Path(__file__).parents[2] / "data" / "pi"


def _files() -> list[Path]:
    files = sorted(DATA.glob("*.jsonl"))
    corpus = os.environ.get("PCHRONICLE_PI_CORPUS")
    if corpus:
        files += sorted(Path(corpus).rglob("*.jsonl"))
    return files


FILES = _files()


def _lines(path: Path) -> list[dict]:
    return [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]


def _chain(lines: list[dict]) -> list[dict]:
    """The entries the conversation holds: all of a v1 file; the chain to the last entry of a tree (up to the root,
    or to the first entry whose parent the file does not hold: a fragment cut from a longer session)."""
    entries = lines[1:] if lines[0].get("type") == "session" else lines
    if not any("id" in e for e in entries):
        return entries
    by_id = {e["id"]: e for e in entries}
    keep, at = set(), entries[-1]["id"]
    while at in by_id:
        keep.add(at)
        at = by_id[at].get("parentId")
    return [e for e in entries if e["id"] in keep]


def _messages(entries: list[dict], role: str) -> list[dict]:
    return [e["message"] for e in entries if e["type"] == "message" and e["message"].get("role") == role]


def _story(path: Path) -> dict:
    (story,) = pi.decode(path.read_bytes(), path.name)
    return story


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_call_and_result_with_its_name_and_the_unanswered_counted(path):
    entries, story = _chain(_lines(path)), _story(path)
    calls = [b for m in _messages(entries, "assistant") for b in m["content"] if b.get("type") == "toolCall"]
    results = _messages(entries, "toolResult")
    got = [c for t in story["turns"] for c in t.get("tool_calls") or ()]
    assert [(c["tcid"], c["fn"], c["args"]) for c in got] == [(c["id"], c["name"], c["arguments"]) for c in calls]
    by_id = {c["tcid"]: c for c in got}
    for res in results:  # each result on its call, with the call's name: the same name the result carries
        call = by_id[res["toolCallId"]]
        assert call["fn"] == res["toolName"]
        assert call.get("response", {}).get("status") == ("error" if res["isError"] else None)
    answered = {r["toolCallId"] for r in results}
    unanswered = [c["id"] for c in calls if c["id"] not in answered]
    assert story["meta"]["pi"]["unanswered_calls"] == len(unanswered)
    assert story["meta"]["pi"].get("unanswered", []) == unanswered
    stats = pc.compute_tool_stats(story)
    assert sum(s["count"] for s in stats) == len(calls)
    assert sum(s["success"] + s["failure"] for s in stats) == len(results)
    assert sum(s["failure"] for s in stats) >= sum(r["isError"] for r in results)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_usage_and_cost_per_message(path):
    entries, story = _chain(_lines(path)), _story(path)
    usages = [m["usage"] for m in _messages(entries, "assistant") if "usage" in m]
    metrics = [t["metrics"] for t in story["turns"] if "metrics" in t]
    assert len(metrics) == len(usages)
    assert sum(m["prompt_tokens"] for m in metrics) == sum(u["input"] for u in usages)
    assert sum(m["completion_tokens"] for m in metrics) == sum(u["output"] for u in usages)
    assert math.isclose(
        sum(m.get("cost_usd", 0) for m in metrics), sum(u.get("cost", {}).get("total", 0) for u in usages)
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_training_text_compaction_is_no_user_turn(path):
    entries, story = _chain(_lines(path)), _story(path)
    roles = [m["role"] for m in pc.to_messages(story, arguments="object")["messages"]]
    # the user messages of the training text: the user's, and what Pi sends as user (bash output, custom)
    sent = sum(len(_messages(entries, r)) for r in ("user", "bashExecution", "custom", "hookMessage"))
    assert roles.count("user") == sent
    summaries = [e for e in entries if e["type"] in ("compaction", "branch_summary")]
    context = [t for t in story["turns"] if t["src"] == "system"]
    assert [t["msg"] for t in context] == [e["summary"] for e in summaries]
    assert all(t["kind"] == "context" for t in context)
    bash = [t for t in story["turns"] if "bash_execution" in (t.get("extra") or {})]
    assert len(bash) == len(_messages(entries, "bashExecution"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_same_source_writer_gives_equal_json_lines(path):
    story = _story(path)
    assert [orjson.loads(x) for x in pi.encode([story]).splitlines()] == _lines(path)
    assert detect(path.read_bytes()) is pi


def test_what_datasets_and_teich_lose_on_the_same_files(tmp_path):
    """The measured half of docs/formats/pi.md's loss table: datasets' json builder (teich) on the real files."""
    pytest.importorskip("teich")
    datasets = pytest.importorskip("datasets")
    for path in (DATA / "before-compaction.excerpt.jsonl", DATA / "large-session.excerpt.jsonl"):
        folder = tmp_path / path.stem
        folder.mkdir()
        (folder / path.name).write_bytes(path.read_bytes())
        row = datasets.load_dataset(
            "json", data_files=str(folder / "*.jsonl"), split="train", cache_dir=str(tmp_path / "c")
        )[0]
        if "messages" not in row or "metadata" not in row:
            pytest.skip("datasets did not hand the file to teich")
        story = _story(path)
        text = str(row["messages"])
        assert "usage" not in str(row["metadata"]) and "cost" not in str(row["metadata"])
        assert any("cost_usd" in t.get("metrics", {}) for t in story["turns"])
        results = sum(m["role"] == "tool" for m in row["messages"])
        if int(row["num_tool_calls"]) != results:  # calls without a result pass unflagged there; counted here
            assert story["meta"]["pi"]["unanswered_calls"] == int(row["num_tool_calls"]) - results
        for entry in _lines(path):
            if entry["type"] == "compaction":
                assert entry["summary"][:60] not in text  # dropped by teich; a context turn here
            if entry.get("message", {}).get("role") == "bashExecution":
                assert entry["message"]["output"][:30] not in text


def test_a_real_tree_fragment_without_its_header():
    """A real v3 session cut from the middle (its fixture's own cut: no header, the first entry's parent absent):
    read as a tree, every entry on the chain, the failed call a failure, usage per message."""
    path = DATA / "deepseek-v4-tree-fragment.excerpt.jsonl"
    lines, story = _lines(path), _story(path)
    assert lines[0]["type"] == "message" and lines[0]["parentId"] not in {e["id"] for e in lines}
    assert story["meta"]["pi"]["tree"] and "abandoned" not in story["meta"]["pi"]
    assert story["session"] == path.name  # no header: the document is named by its path
    assert [t["src"] for t in story["turns"]] == ["user", "agent", "agent", "user", "agent", "agent", "agent"]
    stats = pc.compute_tool_stats(story)
    assert [(s["tool"], s["count"], s["success"], s["failure"]) for s in stats] == [("satellite_remote_exec", 4, 3, 1)]
    assert all(t["model"] == "deepseek-v4-flash" for t in story["turns"] if t["src"] == "agent")


OPENCLAW = DATA / "openclaw" / "agents" / "main" / "sessions"  # an OpenClaw agent's sessions folder, as it lies
OPENCLAW_SESSION = OPENCLAW / "a4ecf754-58c6-4d18-b047-12a40e604950.jsonl"


def test_a_real_openclaw_custom_message_is_a_context_turn_the_model_saw():
    """OpenClaw (Pi's v3 format) writes the runtime context it sends the model with the user's message as a
    ``custom_message`` entry (pi-mono docs/session.md: "Extension-injected messages that DO participate in LLM
    context"): a context turn like a ``custom`` message's, its ``display``/``details`` residual, given back."""
    src = _lines(OPENCLAW_SESSION)
    (injected,) = [e for e in src if e["type"] == "custom_message"]
    story = _story(OPENCLAW_SESSION)
    pc.validate(story)
    assert [(t["src"], t.get("kind")) for t in story["turns"]] == [("user", None), ("user", "context"), ("agent", None)]
    turn = story["turns"][1]
    assert turn["msg"] == injected["content"] and turn["extra"] == {"custom_type": "openclaw.runtime-context"}
    assert turn["ts"] == injected["timestamp"]
    # the model's answer follows it on the chain; the entries no turn gives (model_change, custom…) stay residual
    assert story["turns"][2]["reason"].startswith("The user is saying")
    assert story["turns"][2]["effort"] == "medium"
    messages = pc.to_messages(pc.story_to_row(story))["messages"]
    assert injected["content"] in [m["content"] for m in messages]
    assert [orjson.loads(x) for x in pi.encode([story]).splitlines()] == src


def test_a_real_openclaw_sessions_folder_loads_without_its_trajectory_files():
    """OpenClaw keeps beside each session ``<id>.trajectory.jsonl`` (its own runtime trace, no Pi session) and
    ``<id>.trajectory-path.json`` (a pointer to it): a folder's listing leaves them out and says so, instead of
    refusing the whole folder on a file no reader takes."""
    from datasets import load_dataset

    ds = load_dataset("pchronicle", "auto", data_dir=str(OPENCLAW), split="train")
    # the copies OpenClaw keeps (`<id>.jsonl.bak-<pid>-<ms>` before a rewrite, `<id>.jsonl.reset.<time>` after a
    # /reset) are no documents of a folder: datasets listed them (".jsonl" is in their names), and each was read
    # as a session of its own, the same conversation again; the CLI never took them
    assert ds["session"] == ["a4ecf754-58c6-4d18-b047-12a40e604950"]
    from pchronicle_datasets.sidecars import folder_files, index_files

    names = [str(p) for p in sorted(OPENCLAW.iterdir())]
    assert [Path(names[i]).name.split(".", 1)[1] for i in index_files(names)] == [
        "trajectory-path.json",
        "trajectory.jsonl",
    ]
    assert [Path(p).name for p in folder_files([str(OPENCLAW)]) if not p.endswith("trajectory.jsonl")] == [
        OPENCLAW_SESSION.name,
        OPENCLAW_SESSION.name.replace(".jsonl", ".trajectory-path.json"),
    ]
    assert not index_files(["runs/x.trajectory.jsonl", "sessions.json"])  # only in a sessions folder
