"""The real and fixture session files of tests/data/claude_code, counted line by line here (independently of the
reader): every call and result, every result's tool name, usage once per response, subagents linked to the call
that spawned them, the compaction summary out of the training text, the rewind's abandoned branch out of the
turns, and each file written back as equal JSON lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets.formats import claude_code, detect

DATA = Path(__file__).resolve().parents[2] / "data" / "claude_code"
FILES = sorted(DATA.rglob("*.jsonl"))
REWIND = DATA / "daaain_dag_compact_after_rewind.jsonl"
TASK = DATA / "entire_2.1.1_task" / "c01ff5a5-0d50-40b0-9169-a0302770e8ff.jsonl"
SHOWCASE = DATA / "showcase" / "55550000-0000-4000-8000-000000000001.jsonl"
COMPACT = DATA / "entire_2.1.36_compact" / "53ea1606-cf60-417b-928a-068324ecc7b3.excerpt.jsonl"
CHILD = DATA / "showcase" / "55550000-0000-4000-8000-000000000001" / "subagents" / "agent-showcol1.jsonl"
SPOTTER_AGENT = DATA / "spotter_2.1.39" / "agent-a7be2f0.jsonl"
SPOTTER_COMPACT = DATA / "spotter_2.1.39" / "4d5611e5-241a-462a-8d15-5122611a9569.excerpt.jsonl"
FOLDER = DATA / "spotter_2.1.39_folder"  # a real session's folder: the session (excerpt), a subagent, a compaction
FOLDER_SESSION = FOLDER / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.excerpt.jsonl"
FOLDER_AGENT = FOLDER / "ae4a77f8-aedd-4bc1-888f-c94edc91af04" / "subagents" / "agent-aac57f5.jsonl"
FOLDER_COMPACT = FOLDER / "ae4a77f8-aedd-4bc1-888f-c94edc91af04" / "subagents" / "agent-acompact-946d2b.jsonl"


def lines(path: Path) -> list[dict]:
    """The file's records, line by line; a line that holds several (``{…}{…}``, GLUED) gives each."""
    out, decoder = [], json.JSONDecoder()
    for raw in path.read_bytes().split(b"\n"):
        text = raw.decode("utf-8").strip()
        while text:
            value, end = decoder.raw_decode(text)
            out.append(value)
            text = text[end:].lstrip()
    return out


def blocks(line: dict, kind: str) -> list[dict]:
    content = (line.get("message") or {}).get("content")
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind] if isinstance(content, list) else []


def story(path: Path, sidecar: bytes | None = None) -> dict:
    rel = str(path.relative_to(DATA))
    (doc,) = (
        claude_code.decode(path.read_bytes(), rel)
        if sidecar is None
        else [r.story for r in claude_code.iter_records(path.read_bytes(), rel, sidecar=sidecar)]
    )
    pc.validate(doc)
    return doc


def test_the_files_are_there_and_detected():
    # 15 of the wild, queued_2.1.280's .written file (test_queued.py), and fork_2.1.1's two forks of entire_2.1.1_task's
    # session, written as Claude Code writes them (test_forks.py)
    assert len(FILES) == 18
    for path in FILES:
        assert detect(path.read_bytes(), path.name).NAME == "claude-code"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_call_and_result_with_its_tool_name(path):
    src = lines(path)
    abandoned = set(story(path)["meta"]["claude-code"].get("abandoned", []))
    names = {b["id"]: b["name"] for i, line in enumerate(src) if i not in abandoned for b in blocks(line, "tool_use")}
    results = [
        b["tool_use_id"] for i, line in enumerate(src) if i not in abandoned for b in blocks(line, "tool_result")
    ]
    doc = story(path)
    calls = {c["tcid"]: c["fn"] for t in doc["turns"] for c in t.get("tool_calls") or ()}
    assert calls == names
    linked = [r for t in doc["turns"] for r in (t.get("observation") or {}).get("results", ())]
    assert [r["source_call_id"] for r in linked] == results
    assert all(calls[r["source_call_id"]] == names[r["source_call_id"]] for r in linked)
    assert {s["tool"]: s["count"] for s in pc.compute_tool_stats(doc)} == {
        n: list(names.values()).count(n) for n in set(names.values())
    }


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_usage_is_counted_once_per_response(path):
    doc = story(path)
    abandoned = set(doc["meta"]["claude-code"].get("abandoned", []))
    best: dict[str, int] = {}
    for i, line in enumerate(lines(path)):
        if line.get("type") == "assistant" and i not in abandoned:
            usage = line["message"].get("usage") or {}
            mid = line["message"]["id"]
            best[mid] = max(best.get(mid, -1), usage.get("output_tokens", -1))
    agent = [t for t in doc["turns"] if t["src"] == "agent"]
    assert len(agent) == len(best)
    assert sum(t["metrics"]["output_tokens"] for t in agent) == sum(best.values())


def test_one_turn_per_response_and_its_signatures():
    doc = story(TASK)
    assert [t["src"] for t in doc["turns"]] == ["user", "agent", "agent"]
    first = doc["turns"][1]
    assert first["reason"].startswith("The user wants me to run an agent")
    assert first["extra"]["reasoning"][0]["signature"].startswith("EucCCkYICxgCKkDh")
    assert first["tool_calls"][0]["fn"] == "Task"
    # usage is on every fragment; the turn's is the fragment with the most output tokens, not the last one's
    assert first["metrics"]["output_tokens"] == 6 and doc["turns"][2]["metrics"]["output_tokens"] == 1
    assert doc["agent"] == {
        "id": "claude-code",
        "name": "Claude Code",
        "ver": "2.1.1",
        "model": "claude-opus-4-5-20251101",
    }
    assert doc["task"]["env"]["state"]["gitBranch"] == "fix/agent-detection-from-session-data"


def test_subagents_are_linked_to_the_call_that_spawned_them():
    parent_lines = lines(SHOWCASE)
    spawned = {}  # agentId → the tool_use id whose result names it, walked from the source
    for line in parent_lines:
        agent = (line.get("toolUseResult") or {}).get("agentId")
        for b in blocks(line, "tool_result"):
            if agent:
                spawned[agent] = b["tool_use_id"]
    parent = story(SHOWCASE)
    child = story(CHILD, sidecar=CHILD.with_name("agent-showcol1.meta.json").read_bytes())
    assert child["session"] == f"{parent['session']}/agent-showcol1"
    assert child["session"] in parent["children"] and len(parent["children"]) == len(spawned)
    assert child["parent"] == {"psid": parent["session"], "scid": spawned["showcol1"], "rel": "spawn"}
    call = next(c for t in parent["turns"] for c in t.get("tool_calls") or () if c["tcid"] == spawned["showcol1"])
    assert call["fn"] == "Agent" and call["extra"]["subagent"] == child["session"]
    # loaded alone, without its sidecar, the child still says whose child it is
    alone = story(CHILD)
    assert alone["session"] == child["session"] and alone["parent"]["psid"] == parent["session"]
    # the real 2.1.1 session: its Task result names agent ab532cf
    assert story(TASK)["children"] == ["c01ff5a5-0d50-40b0-9169-a0302770e8ff/agent-ab532cf"]


def test_the_compaction_summary_is_a_context_turn_not_a_user_turn_of_the_training_text():
    doc = story(REWIND)
    (summary,) = [t for t in doc["turns"] if t.get("copied")]
    assert summary["msg"].startswith("This session is being continued")
    assert summary["kind"] == "context" and summary["extra"]["claude_code"] == {"context": "compact_summary"}
    messages = pc.to_messages(pc.story_to_row(doc), drop_copied=True)["messages"]
    assert not any(m["content"].startswith("This session is being continued") for m in messages)
    assert [m["content"] for m in messages if m["role"] == "user"][-1] == "After compaction"


def test_a_real_auto_compaction_of_2_1_36():
    """A real session's compaction (entireio/cli's checkpoints, Claude Code 2.1.36, an excerpt from the middle of
    the session): the boundary stays residual whole, the summary is a copied context turn out of the training text,
    and a first line whose parent the excerpt does not hold abandons nothing."""
    src = lines(COMPACT)
    (boundary,) = [i for i, line in enumerate(src) if line.get("subtype") == "compact_boundary"]
    (summary_line,) = [i for i, line in enumerate(src) if line.get("isCompactSummary")]
    assert src[summary_line]["parentUuid"] == src[boundary]["uuid"] and src[boundary]["parentUuid"] is None
    doc = story(COMPACT)
    assert "abandoned" not in doc["meta"]["claude-code"]
    kept = doc["unknown_fields"]["sources"]["claude-code"]["fields"][f"/{boundary}"]
    assert kept["compactMetadata"] == {"trigger": "auto", "preTokens": 174247}
    assert kept["logicalParentUuid"] == src[boundary - 1]["uuid"]
    (summary,) = [t for t in doc["turns"] if t.get("copied")]
    assert summary["msg"] == src[summary_line]["message"]["content"]
    assert summary["kind"] == "context" and summary["extra"]["claude_code"] == {"context": "compact_summary"}
    messages = pc.to_messages(pc.story_to_row(doc), drop_copied=True)["messages"]
    assert not any(str(m["content"]).startswith("This session is being continued") for m in messages)
    progress = [line for line in src if line["type"] == "progress"]
    assert len(progress) == 6 and doc["meta"]["claude-code"]["counts"]["progress"] == 6


def test_a_real_subagent_keeps_the_call_written_after_hook_progress(tmp_path):
    """A real 2.1.39 subagent file (marot/spotter), loaded alone: the second call of a response is the child of
    the first call's last hook_progress line (its result the child of that call); every call and every result of
    the file is in the training messages, and nothing is abandoned."""
    src = lines(SPOTTER_AGENT)
    by_uuid = {line["uuid"]: i for i, line in enumerate(src)}
    chain, uid = set(), src[-1]["uuid"]  # the parentUuid chain from the last line (a message) back to the root
    while uid in by_uuid:
        chain.add(by_uuid[uid])
        uid = src[by_uuid[uid]]["parentUuid"]
    off_chain_after_progress = [
        i
        for i, line in enumerate(src)
        if blocks(line, "tool_use") and i not in chain and src[by_uuid[line["parentUuid"]]]["type"] == "progress"
    ]
    assert off_chain_after_progress == [20]  # line 21 (1-based), a Read; its result is line 23
    calls = [b["id"] for line in src for b in blocks(line, "tool_use")]
    results = [b["tool_use_id"] for line in src for b in blocks(line, "tool_result")]
    ds = load_dataset(
        "pchronicle", "claude-code", data_files=[str(SPOTTER_AGENT)], split="train", cache_dir=str(tmp_path)
    )
    (row,) = ds
    doc = pc.row_to_story(row)
    assert "abandoned" not in doc["meta"]["claude-code"]
    assert doc["session"] == f"{src[0]['sessionId']}/agent-{src[0]['agentId']}"
    assert doc["parent"]["psid"] == src[0]["sessionId"]
    messages = pc.to_messages(row)["messages"]
    assert sorted(c["id"] for m in messages for c in m.get("tool_calls") or ()) == sorted(calls)
    assert sorted(m["tool_call_id"] for m in messages if m["role"] == "tool") == sorted(results)
    assert len(calls) == len(set(calls)) == len(results) == 19


def test_a_real_compaction_of_2_1_39_whose_logical_parent_is_not_in_the_file():
    """A real 2.1.39 auto compaction (marot/spotter, lines 742-778 of session 4d5611e5…): the compact_boundary's
    logicalParentUuid names a uuid written nowhere (not in the whole 1,512-line session either); the turns before
    the boundary stay in the document, on the conversation, and nothing is abandoned."""
    src = lines(SPOTTER_COMPACT)
    (boundary,) = [i for i, line in enumerate(src) if line.get("subtype") == "compact_boundary"]
    (summary_line,) = [i for i, line in enumerate(src) if line.get("isCompactSummary")]
    assert src[boundary]["parentUuid"] is None and src[summary_line]["parentUuid"] == src[boundary]["uuid"]
    assert src[boundary]["logicalParentUuid"] not in {line.get("uuid") for line in src}
    assert [line["type"] for line in src[boundary - 10 : boundary]] == ["progress"] * 9 + ["user"]
    doc = story(SPOTTER_COMPACT)
    assert "abandoned" not in doc["meta"]["claude-code"]
    kept = doc["unknown_fields"]["sources"]["claude-code"]["fields"][f"/{boundary}"]
    assert kept["compactMetadata"] == {"trigger": "auto", "preTokens": 170251}
    # the text, the call and the result written before the boundary are turns of the document
    before = [b["text"] for line in src[:boundary] for b in blocks(line, "text")]
    assert before and all(any(text in str(t["msg"]) for t in doc["turns"]) for text in before)
    calls = {c["tcid"] for t in doc["turns"] for c in t.get("tool_calls") or ()}
    results = {r["source_call_id"] for t in doc["turns"] for r in (t.get("observation") or {}).get("results", ())}
    assert {b["id"] for line in src[:boundary] for b in blocks(line, "tool_use")} <= calls
    assert {b["tool_use_id"] for line in src[:boundary] for b in blocks(line, "tool_result")} <= results
    # and in the training messages, before those after the compaction; the summary is not
    (summary,) = [t for t in doc["turns"] if t.get("copied")]
    assert summary["msg"] == src[summary_line]["message"]["content"]
    contents = [str(m["content"]) for m in pc.to_messages(pc.story_to_row(doc), drop_copied=True)["messages"]]
    after = next(b["text"] for line in src[boundary:] for b in blocks(line, "text") if b["text"].strip())
    first = next(i for i, c in enumerate(contents) if before[0] in c)
    assert first < next(i for i, c in enumerate(contents) if after in c)
    assert not any(c.startswith("This session is being continued") for c in contents)


def test_the_rewind_is_applied_and_the_abandoned_branch_kept():
    doc = story(REWIND)
    src = lines(REWIND)
    texts = [t["msg"] for t in doc["turns"]]
    assert "First attempt" not in texts and "First answer" not in texts
    assert texts[:3] == ["Start", "Ready", "Second attempt"] and texts[-1] == "Final answer"
    abandoned = doc["meta"]["claude-code"]["abandoned"]
    assert [src[i]["uuid"] for i in abandoned] == ["b1u", "b1a"]
    kept = doc["unknown_fields"]["sources"]["claude-code"]["fields"]
    assert kept["/2"]["message"]["content"][0]["text"] == "First attempt"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_same_source_writer_gives_each_file_back_as_equal_json_lines(path):
    written = claude_code.encode([story(path)])
    assert [json.loads(x) for x in written.splitlines()] == lines(path)
    # and what it wrote reads back to the same document
    assert claude_code.decode(written, str(path.relative_to(DATA))) == [story(path)]


INTERRUPT = DATA / "entire_2.1.29_interrupt" / "1ecba475-5b18-4058-a0cb-e87703f6f792.jsonl"


def test_an_interrupt_is_counted_and_flagged_and_a_hook_that_quotes_one_is_not():
    # Real 2.1.29 session: the user rejects an Edit (its result says so), Claude Code writes its interrupt message
    # as a user message, and the user corrects the agent. A hook's message earlier quotes the same marker.
    src = lines(INTERRUPT)
    users = [line["message"]["content"] for line in src if line.get("type") == "user"]
    texts = [c for c in users if isinstance(c, str)] + [
        b["text"] for c in users if isinstance(c, list) for b in c if b.get("type") == "text"
    ]
    assert sum("[Request interrupted by user for tool use]" in t for t in texts) == 2  # the hook's quote and the marker
    assert texts.count("[Request interrupted by user for tool use]") == 1
    doc = story(INTERRUPT)
    assert doc["meta"]["claude-code"]["interrupted"] == 1
    marker = next(t for t in doc["turns"] if t.get("msg") == "[Request interrupted by user for tool use]")
    assert marker["src"] == "user" and "copied" not in marker  # the model saw it: it stays a user turn
    assert pc.flags(doc) == ["interrupted"] and pc.flags(pc.story_to_row(doc)) == ["interrupted"]
    assert "interrupted" not in pc.flags(story(TASK))


GLUED = DATA / "entire_2.1.7_glued" / "130d7b7e-5801-4345-9bd6-f32fd9b8429b.excerpt.jsonl"


def test_a_record_glued_to_the_line_before_is_read_and_the_conversation_goes_on_through_it():
    # Real: the session was resumed (2.1.7, then 2.1.12) and Claude Code appended a summary to a line that had
    # lost its newline. That line's assistant message is on the conversation: the next user message hangs from it.
    raw = GLUED.read_bytes().split(b"\n")
    with pytest.raises(json.JSONDecodeError, match="Extra data"):
        json.loads(raw[4])
    glued = lines(GLUED)[4]
    assert glued["type"] == "assistant" and lines(GLUED)[5]["type"] == "summary"
    assert sum(1 for r in raw if r.strip()) + 1 == len(lines(GLUED))
    doc = story(GLUED)
    text = next(b["text"] for b in glued["message"]["content"] if b["type"] == "text")
    assert sum(text in (t["msg"] or "") for t in doc["turns"] if t["src"] == "agent") == 1
    assert "gaps" not in doc["meta"]["claude-code"] and doc["meta"]["claude-code"]["counts"]["summary"] == 2
    # The next user message hangs from it through two progress lines; the resumed session (2.1.12) wrote the
    # message again with the same uuid (record 8): a copy, off the conversation, so its text is there once.
    records = lines(GLUED)
    assert [i for i, r in enumerate(records) if r.get("uuid") == glued["uuid"]] == [4, 8]
    assert records[11]["type"] == "user" and records[11]["message"]["content"] in [t["msg"] for t in doc["turns"]]
    assert doc["meta"]["claude-code"]["abandoned"] == [8]
    # Written back, each record on its own line: the same records.
    assert [json.loads(x) for x in claude_code.encode([doc]).splitlines()] == lines(GLUED)


def test_a_real_session_folder_with_its_subagent_and_its_compaction_sidechain_loads_linked():
    """marot/spotter's real 2.1.39 session folder, loaded as a user would (``data_dir``): the session (an excerpt:
    the response whose ``Task`` call spawned ``aac57f5`` and a parallel ``Skill`` call, their results, then a manual
    compaction), ``subagents/agent-aac57f5.jsonl`` and the compaction sidechain ``agent-acompact-946d2b.jsonl``,
    whose answer is the summary the session goes on from. Counted here from the lines."""
    session, agent, compact = lines(FOLDER_SESSION), lines(FOLDER_AGENT), lines(FOLDER_COMPACT)
    (spawn,) = [line for line in session if (line.get("toolUseResult") or {}).get("agentId") == "aac57f5"]
    spawn_call = blocks(spawn, "tool_result")[0]["tool_use_id"]
    ds = load_dataset("pchronicle", "auto", data_dir=str(FOLDER), split="train")
    docs = {row["session"]: pc.row_to_story(row) for row in ds}
    sid = session[0]["sessionId"]
    assert set(docs) == {sid, f"{sid}/agent-aac57f5", f"{sid}/agent-acompact-946d2b"}
    parent, child, sidechain = docs[sid], docs[f"{sid}/agent-aac57f5"], docs[f"{sid}/agent-acompact-946d2b"]
    # the parent: the Task call (written before the Skill call of the same response, which hangs from the Task's
    # agent_progress line) names its child; both results are on the response's turn
    calls = {c["tcid"]: c for t in parent["turns"] for c in t.get("tool_calls") or ()}
    assert {c["fn"] for c in calls.values()} == {"Task", "Skill"}
    assert calls[spawn_call]["fn"] == "Task" and calls[spawn_call]["extra"]["subagent"] == child["session"]
    assert parent["children"] == [child["session"]]
    results = [r["source_call_id"] for t in parent["turns"] for r in (t.get("observation") or {}).get("results", ())]
    assert sorted(results) == sorted(b["tool_use_id"] for line in session for b in blocks(line, "tool_result"))
    # the subagent: every call and result, its parent (no sidecar beside it: no scid)
    assert child["parent"] == {"psid": sid, "rel": "spawn"}
    assert len([c for t in child["turns"] for c in t.get("tool_calls") or ()]) == 12
    assert sum(len(blocks(line, "tool_use")) for line in agent) == 12
    assert [r["source_call_id"] for t in child["turns"] for r in (t.get("observation") or {}).get("results", ())] == [
        b["tool_use_id"] for line in agent for b in blocks(line, "tool_result")
    ]
    # the compaction sidechain: a child of rel compaction, flagged, its answer the summary the session goes on from
    assert sidechain["parent"] == {"psid": sid, "rel": "compaction"} and "compaction" in pc.flags(sidechain)
    answer = "".join(b["text"] for b in blocks(compact[-1], "text"))
    assert [t["src"] for t in sidechain["turns"]] == ["user", "agent"] and sidechain["turns"][1]["msg"] == answer
    summary = next(
        t for t in parent["turns"] if t.get("copied") and t["extra"]["claude_code"]["context"] == "compact_summary"
    )
    body = answer.split("<summary>")[-1].split("</summary>")[0].strip()
    assert body[:500] in summary["msg"] and body[-500:] in summary["msg"]
    # the boundary's logicalParentUuid names a line the excerpt does not hold: the session goes on through it
    (boundary,) = [i for i, line in enumerate(session) if line.get("subtype") == "compact_boundary"]
    assert session[boundary]["compactMetadata"] == {"trigger": "manual", "preTokens": 142431}
    assert "abandoned" not in parent["meta"]["claude-code"] and parent["turns"][0]["tool_calls"]
    for path in (FOLDER_SESSION, FOLDER_AGENT, FOLDER_COMPACT):
        messages = pc.to_messages(pc.story_to_row(story(path)))["messages"]
        assert len([m for m in messages if m["role"] == "tool"]) == sum(
            len(blocks(line, "tool_result")) for line in lines(path)
        )
