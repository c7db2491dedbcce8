"""Pi sessions beyond the real files: the v2/v3 tree (tests/data/pi/tree-v3.written.jsonl, written from
session.md), abandoned branches, failed results, thinking levels, images, v2's hookMessage, detection, the
builder and documents of other formats."""

from __future__ import annotations

from pathlib import Path

import datasets
import orjson

import pchronicle_datasets as pc
from pchronicle_datasets.formats import codex, detect, pi
from pchronicle_datasets.formats.residual import source_fields

DATA = Path(__file__).parents[2] / "data" / "pi"
TREE = DATA / "tree-v3.written.jsonl"


def _one(data: bytes, name: str = "s.jsonl") -> dict:
    (story,) = pi.decode(data, name)
    return story


def test_the_conversation_is_the_chain_to_the_last_entry_and_the_abandoned_branch_is_kept():
    story = _one(TREE.read_bytes())
    texts = [t["msg"] for t in story["turns"] if t["src"] == "agent"]
    assert "abandoned answer" not in texts and "done" in texts
    assert story["meta"]["pi"]["abandoned"] == 1 and story["meta"]["pi"]["tree"] is True
    (kept,) = [v for k, v in source_fields(story, "pi")["fields"].items() if k == "/4"]
    assert kept["message"]["content"][0]["text"] == "abandoned answer"  # kept whole, written back
    assert story["origin"]["schema_version"] == "pi/v3"


def test_failed_results_unanswered_calls_effort_and_images():
    story = _one(TREE.read_bytes())
    stats = {s["tool"]: s for s in pc.compute_tool_stats(story)}
    assert stats["read"] == {"tool": "read", "count": 1, "success": 0, "failure": 1}  # isError: true
    assert stats["bash"] == {"tool": "bash", "count": 1, "success": 0, "failure": 0}  # no result: counted only
    assert story["meta"]["pi"]["unanswered"] == ["call_2"]
    agent = [t for t in story["turns"] if t["src"] == "agent"]
    assert agent[-1]["effort"] == "high" and agent[-1]["model"] == "claude-opus-4-7"
    (look,) = [t for t in story["turns"] if t["msg"] == "look"]
    assert look["extra"]["media"] == [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]
    messages = pc.to_messages(story, arguments="object")["messages"]
    assert {"role": "user", "content": "look"} in messages  # the image is not flattened into the text
    assert agent[1]["reason"] == "hmm"
    assert "/6/message/content/0/thinkingSignature" in source_fields(story, "pi")["fields"]


def test_v2_hook_messages_read_like_v3_custom_messages():
    lines = [
        {"type": "session", "version": 2, "id": "s2", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"},
        {"type": "message", "id": "a", "parentId": None, "timestamp": "2026-01-01T00:00:01Z",
         "message": {"role": "hookMessage", "customType": "todo", "content": "do it", "display": True}},
        {"type": "message", "id": "b", "parentId": "a", "timestamp": "2026-01-01T00:00:02Z",
         "message": {"role": "user", "content": "ok"}},
    ]  # fmt: skip
    text = "".join(orjson.dumps(x).decode() + "\n" for x in lines).encode()
    story = _one(text)
    assert [(t["src"], t.get("kind"), t["msg"]) for t in story["turns"]] == [
        ("user", "context", "do it"),
        ("user", None, "ok"),
    ]
    assert story["turns"][0]["extra"] == {"custom_type": "todo"}
    assert [orjson.loads(x) for x in pi.encode([story]).splitlines()] == lines
    assert detect(text) is pi


def test_detection_tells_pi_from_codex_and_the_builder_reads_a_sessions_folder(tmp_path):
    assert pi.sniff(orjson.loads(TREE.read_bytes().splitlines()[0]))
    assert not codex.sniff(orjson.loads(TREE.read_bytes().splitlines()[0]))
    folder = tmp_path / "sessions" / "--work--"
    folder.mkdir(parents=True)
    for path in DATA.glob("*.jsonl"):
        (folder / path.name).write_bytes(path.read_bytes())
    ds = datasets.load_dataset(
        "pchronicle", "auto", data_dir=str(tmp_path / "sessions"), split="train", cache_dir=str(tmp_path / "c")
    )
    assert len(ds) == len(list(DATA.glob("*.jsonl"))) and set(ds["session"]) == {
        _one(p.read_bytes(), f"--work--/{p.name}")["session"] for p in DATA.glob("*.jsonl")
    }  # a file without a header (a fragment) is named by its path
    for row in ds:
        story = pc.row_to_story(row)
        source = folder / story["origin"]["document_id"].rsplit("/", 1)[-1]
        assert [orjson.loads(x) for x in pi.encode([story]).splitlines()] == [
            orjson.loads(x) for x in source.read_bytes().splitlines()
        ]


def test_documents_of_other_formats_are_written_as_a_session():
    story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
        {"id": 1, "src": "user", "msg": "ls?"},
        {"id": 2, "src": "agent", "msg": "here", "reason": "list",
         "tool_calls": [{"tcid": "c1", "fn": "ls", "args": {}}],
         "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]}}]}  # fmt: skip
    text = pc.from_storyline("pi", [story])
    (back,) = pc.into_storyline("pi", text, document_id="x.jsonl")
    assert [(t["src"], t["msg"]) for t in back["turns"]] == [("user", "ls?"), ("agent", "here")]
    (call,) = back["turns"][1]["tool_calls"]
    assert (call["fn"], call["result"], back["turns"][1]["reason"]) == ("ls", "a.txt", "list")


def test_inspect_shows_the_calls_without_a_result(capsys):
    from pchronicle_datasets.cli import main

    assert main(["inspect", "--json", str(TREE), str(DATA / "large-session.excerpt.jsonl")]) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert report["tool_calls_without_result"] == 1 + 0  # the tree's call_2; the excerpt's calls are answered
    assert main(["inspect", str(TREE)]) == 0
    assert "tool calls without a result: 1" in capsys.readouterr().out
