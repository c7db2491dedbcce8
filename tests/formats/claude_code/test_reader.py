"""The reader's rules on cases written here in Claude Code's shape (each rule of docs/formats/claude-code.md that
the real files of test_real_files.py do not show): failed calls, results written between the fragments of a
response, unknown record types, context turns, compaction sidechains, refusals, and documents of other formats
written as session lines."""

from __future__ import annotations

import json

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from pchronicle_datasets.formats import claude_code


def rec(kind: str, uid: str, parent: str | None, content, **more) -> dict:
    message = {"role": "assistant" if kind == "assistant" else "user", "content": content}
    if kind == "assistant":
        message = {"id": more.pop("mid", f"m-{uid}"), "role": "assistant", "content": content, **more.pop("m", {})}
    return {"type": kind, "uuid": uid, "parentUuid": parent, "sessionId": "s1", "version": "2.1.39",
            "cwd": "/w", "message": message, **more}  # fmt: skip


def text(records: list) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def decode(records: list, name: str = "s1.jsonl", sidecar: bytes | None = None) -> dict:
    out = list(claude_code.iter_records(text(records), name, sidecar=sidecar))
    (doc,) = [r.story for r in out if r.story is not None]
    pc.validate(doc)
    assert [json.loads(x) for x in claude_code.encode([doc]).splitlines()] == [
        r for r in records if isinstance(r, (dict, list, int, str))
    ]
    return doc


def test_a_failed_call_keeps_is_error_and_counts_as_a_failure():
    doc = decode([
        rec("user", "u", None, "run it"),
        rec("assistant", "a", "u", [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "false"}}]),
        rec("user", "r", "a", [
            {"type": "tool_result", "tool_use_id": "t1", "content": "Exit code 1", "is_error": True}]),
    ])  # fmt: skip
    (res,) = doc["turns"][1]["observation"]["results"]
    assert res == {"content": "Exit code 1", "source_call_id": "t1", "is_error": True}
    assert pc.compute_tool_stats(doc) == [{"tool": "Bash", "count": 1, "success": 0, "failure": 1}]


def test_results_written_between_the_fragments_of_one_response_keep_it_one_turn():
    doc = decode([
        rec("user", "u", None, "two files"),
        rec("assistant", "a1", "u", [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}], mid="m",
            m={"usage": {"output_tokens": 3}}),
        rec("user", "r1", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": [
            {"type": "text", "text": "a"}, {"type": "image", "source": {"type": "base64", "data": "AA=="}}]}]),
        rec("assistant", "a2", "a1", [{"type": "tool_use", "id": "t2", "name": "Read", "input": {}}], mid="m",
            m={"usage": {"output_tokens": 9}}),
        rec("user", "r2", "a2", [{"type": "tool_result", "tool_use_id": "t2", "content": "b"}]),
        rec("assistant", "a3", "r2", [{"type": "text", "text": "done"}], m={"usage": {"output_tokens": 1}}),
    ])  # fmt: skip
    assert [t["src"] for t in doc["turns"]] == ["user", "agent", "agent"]
    turn = doc["turns"][1]
    assert [c["tcid"] for c in turn["tool_calls"]] == ["t1", "t2"]
    assert turn["metrics"] == {"output_tokens": 9}
    # the image block of a result is kept as written
    assert turn["observation"]["results"][0]["content"][1]["type"] == "image"


def test_other_records_are_residual_and_counted_never_dropped():
    records = [
        {"type": "file-history-snapshot", "messageId": "u", "snapshot": {}, "isSnapshotUpdate": False},
        rec("user", "u", None, "hi"),
        {"type": "progress", "uuid": "p", "parentUuid": "u", "sessionId": "s1", "data": {"type": "hook_progress"}},
        {"type": "brand-new-record", "what": [1, 2]},
        {"type": "system", "subtype": "turn_duration", "durationMs": 5, "uuid": "d", "parentUuid": "p",
         "sessionId": "s1"},
        [1, 2],
        rec("assistant", "a", "p", [{"type": "text", "text": "hello", "citations": []}]),
    ]  # fmt: skip
    doc = decode(records)
    counts = doc["meta"]["claude-code"]["counts"]
    assert counts["brand-new-record"] == 1 and counts["progress"] == 1 and counts["system/turn_duration"] == 1
    assert counts["(not an object)"] == 1
    fields = doc["unknown_fields"]["sources"]["claude-code"]["fields"]
    assert (
        fields["/3"] == {"type": "brand-new-record", "what": [1, 2]}
        and fields["/5"] == [1, 2]
        and fields["/6/message/content/0/citations"] == []
    )
    assert [t["msg"] for t in doc["turns"]] == ["hi", "hello"]


def test_a_parallel_call_written_after_progress_lines_stays_on_the_conversation():
    # 2.1.39-2.1.42 (marot/spotter, entireio/cli checkpoints): the second Task of one response is the child of the
    # first Task's last agent_progress line, and its result the child of that fragment.
    progress = {"type": "progress", "sessionId": "s1", "data": {"type": "agent_progress", "agentId": "x1"},
                "parentToolUseID": "t1"}  # fmt: skip
    doc = decode([
        rec("user", "u", None, "two agents"),
        rec("assistant", "a1", "u", [{"type": "tool_use", "id": "t1", "name": "Task", "input": {}}], mid="m"),
        {**progress, "uuid": "p1", "parentUuid": "a1"},
        {**progress, "uuid": "p2", "parentUuid": "p1"},
        rec("assistant", "a2", "p2", [{"type": "tool_use", "id": "t2", "name": "Task", "input": {}}], mid="m"),
        rec("user", "r2", "a2", [{"type": "tool_result", "tool_use_id": "t2", "content": "two"}]),
        rec("user", "r1", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "one"}]),
        rec("assistant", "a3", "r1", [{"type": "text", "text": "both done"}]),
    ])  # fmt: skip
    assert [c["tcid"] for c in doc["turns"][1]["tool_calls"]] == ["t1", "t2"]
    assert [r["source_call_id"] for r in doc["turns"][1]["observation"]["results"]] == ["t2", "t1"]
    assert "abandoned" not in doc["meta"]["claude-code"]


def test_a_compaction_whose_logical_parent_is_not_in_the_file_keeps_the_conversation_before_it():
    # measured in real 2.1.39 and 2.1.42 files: logicalParentUuid names a record Claude Code never wrote (the
    # progress line before the boundary is its child too)
    doc = decode([
        rec("user", "u", None, "first"),
        rec("assistant", "a", "u", [{"type": "text", "text": "one"}]),
        {"type": "progress", "uuid": "p", "parentUuid": "gone", "sessionId": "s1", "data": {"type": "hook_progress"}},
        {"type": "system", "subtype": "compact_boundary", "uuid": "b", "parentUuid": None, "logicalParentUuid": "gone",
         "sessionId": "s1", "compactMetadata": {"trigger": "auto", "preTokens": 167045}},
        rec("user", "s", "b", "This session is being continued from a previous conversation", isCompactSummary=True),
        rec("user", "u2", "s", "second"),
        rec("assistant", "a2", "u2", [{"type": "text", "text": "two"}]),
    ])  # fmt: skip
    assert [t["msg"] for t in doc["turns"] if not t.get("copied")] == ["first", "one", "second", "two"]
    assert "abandoned" not in doc["meta"]["claude-code"]


def test_hook_reminders_are_context_turns():
    doc = decode([
        rec("user", "u", None, "hi"),
        rec("user", "m", "u", "<system-reminder>hook said so</system-reminder>", isMeta=True),
        rec("assistant", "a", "m", [{"type": "text", "text": "ok"}]),
    ])  # fmt: skip
    meta = doc["turns"][1]
    assert meta["copied"] is True and meta["kind"] == "context" and meta["extra"]["claude_code"]["context"] == "meta"
    assert [m["role"] for m in pc.to_messages(pc.story_to_row(doc), drop_copied=True)["messages"]] == [
        "user",
        "assistant",
    ]


def test_a_compaction_sidechain_is_a_child_of_relation_compaction():
    child = [
        {**rec("user", "c1", None, "summarise"), "isSidechain": True, "agentId": "acompact-1f2e"},
        {**rec("assistant", "c2", "c1", [{"type": "text", "text": "summary"}]), "isSidechain": True,
         "agentId": "acompact-1f2e"},
    ]  # fmt: skip
    doc = decode(child, "s1/subagents/agent-acompact-1f2e.jsonl")
    assert doc["session"] == "s1/agent-acompact-1f2e"
    assert doc["parent"] == {"psid": "s1", "rel": "compaction"}
    nested = decode(
        child, "s1/subagents/agent-acompact-1f2e.jsonl", sidecar=b'{"parentAgentId": "a9", "toolUseId": "t"}'
    )
    assert nested["parent"] == {"psid": "s1/agent-a9", "scid": "t", "rel": "compaction"}


def test_a_file_without_conversation_is_refused_and_a_bad_line_is_its_own_error():
    (only,) = claude_code.iter_records(text([{"type": "file-history-snapshot", "messageId": "m", "snapshot": {}}]), "x")
    assert isinstance(only.error, FormatError) and "no user or assistant message" in str(only.error)
    data = text([rec("user", "u", None, "hi")]) + b'{"broken": \n' + text([rec("assistant", "a", "u", "hello")])
    bad, good = claude_code.iter_records(data, "s1.jsonl")
    assert bad.error is not None and bad.line == 2
    assert [t["msg"] for t in good.story["turns"]] == ["hi", "hello"]
    written = [json.loads(x) for x in claude_code.encode([good.story]).splitlines()]
    assert written == [json.loads(x) for x in data.split(b"\n") if x.strip() and not x.startswith(b'{"broken')]


def test_documents_of_other_formats_are_written_as_session_lines_and_read_back():
    story = {"schema_version": "storyline/v1", "session": "chat-1", "agent": {"id": "a"}, "turns": [
        {"id": 1, "src": "user", "msg": "ls?"},
        {"id": 2, "src": "agent", "msg": "", "reason": "look", "tool_calls": [
            {"tcid": "c1", "fn": "Bash", "args": {"command": "ls"}}],
         "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]}},
        {"id": 3, "src": "agent", "msg": "a.txt"}]}  # fmt: skip
    with pc.collect_losses() as losses:
        written = pc.from_storyline("claude-code", [story])
    assert not losses.counts
    (back,) = pc.into_storyline("auto", written, document_id="chat-1.jsonl")
    assert [(t["src"], t["msg"]) for t in back["turns"]] == [("user", "ls?"), ("agent", ""), ("agent", "a.txt")]
    assert back["turns"][1]["tool_calls"][0]["fn"] == "Bash" and back["turns"][1]["reason"] == "look"
    assert back["turns"][1]["observation"]["results"][0]["content"] == "a.txt"


@pytest.mark.parametrize(
    "sample, claimed",
    [
        ({"type": "user", "uuid": "u", "sessionId": "s", "message": {}}, True),
        ({"type": "summary", "summary": "t", "leafUuid": "u"}, True),
        ({"type": "queue-operation", "operation": "enqueue", "sessionId": "s"}, True),
        ({"type": "user", "message": {}}, False),
        ({"type": "message", "message": {"role": "user"}}, False),
    ],
)
def test_sniff(sample, claimed):
    assert claude_code.sniff(sample) is claimed


def test_the_effort_of_an_answer_is_its_turns_effort():
    # 2.1.212 and later write the reasoning effort on each assistant record (top-level "effort", beside
    # "perTurnEffort": null; real 2.1.220 and 2.1.270 sessions, no licence: the key only): the turn's effort, as
    # Codex's and Pi's; the key stays where the writer takes it. A fragment's own effort never overrides the first's.
    doc = decode([
        rec("user", "u", None, "hi"),
        rec("assistant", "a1", "u", [{"type": "thinking", "thinking": "", "signature": "s"}], mid="m1",
            effort="high", perTurnEffort=None),
        rec("assistant", "a2", "a1", [{"type": "text", "text": "hello"}], mid="m1", effort="high",
            perTurnEffort=None),
        rec("user", "u2", "a2", "more"),
        rec("assistant", "a3", "u2", [{"type": "text", "text": "ok"}], mid="m2"),
    ])  # fmt: skip
    agent = [t for t in doc["turns"] if t["src"] == "agent"]
    assert agent[0]["effort"] == "high" and "effort" not in agent[1]
    assert doc["unknown_fields"]["sources"]["claude-code"]["fields"]["/1/effort"] == "high"
