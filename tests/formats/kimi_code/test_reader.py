"""Reading Kimi Code journals (docs/formats/kimi-code.md): the real files counted by hand, detection, the turns of
messages and model steps, and the decisions where the source is silent."""

from __future__ import annotations

import json

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.errors import FormatError, NoConversationError
from pchronicle_datasets.formats import detect, into_storyline
from pchronicle_datasets.linking import tool_outcomes
from tests.formats.kimi_code.cases import (
    BY_HAND,
    FILES,
    META,
    SMALL,
    SYSTEM,
    document_id,
    event,
    key,
    lines,
    raw_records,
    step,
    text,
    think,
    user,
)

DOC = "wd_p_1/session_1/agents/main/wire.jsonl"


def read(data: str, doc: str = DOC) -> dict:
    [story] = into_storyline("kimi-code", data, document_id=doc)
    return story


def _by_hand(raw: list) -> tuple:
    """The counts of BY_HAND, over the raw records."""
    prompts, own, cli, compactions, steps, calls, results, thinks, failed = [], 0, 0, 0, set(), 0, 0, 0, 0
    for r in raw:
        if isinstance(r.get("systemPrompt"), str) and r["systemPrompt"] not in prompts:
            prompts.append(r["systemPrompt"])
        if r["type"] == "context.append_message":
            origin = r["message"].get("origin", {})
            mine = origin.get("kind") == "user" or origin == {"kind": "system_trigger", "name": "subagent"}
            own, cli = own + mine, cli + (not mine)
        compactions += r["type"] == "context.apply_compaction"
        ev = r.get("event") or {}
        if ev.get("type") in ("content.part", "tool.call"):
            steps.add(ev["stepUuid"])
        calls += ev.get("type") == "tool.call"
        results += ev.get("type") == "tool.result"
        thinks += ev.get("type") == "content.part" and ev["part"]["type"] == "think"
        failed += ev.get("type") == "tool.result" and ev["result"].get("isError") is True
    return (len(raw), len(prompts), own, cli, compactions, len(steps), calls, results, thinks, failed)


@pytest.mark.parametrize("path", FILES, ids=key)
def test_real_files_counted_by_hand(path):
    n, prompts, own, cli, compactions, steps, calls, results, thinks, errors = BY_HAND[key(path)]
    raw = raw_records(path)
    assert _by_hand(raw) == BY_HAND[key(path)]
    [story] = into_storyline("auto", path.read_bytes(), document_id=document_id(path))
    pc.validate(story)
    assert story["origin"]["format"] == "kimi-code"
    turns = story["turns"]
    srcs = [t["src"] for t in turns]
    assert srcs.count("system") == prompts and turns[0]["src"] == "system"
    assert sum(t["src"] == "user" and t.get("kind") != "context" for t in turns) == own
    assert sum(t.get("kind") == "context" and not t.get("extra", {}).get("compaction") for t in turns) == cli
    assert sum(t.get("extra", {}).get("compaction") == "summary" for t in turns) == compactions
    assert srcs.count("agent") == steps  # one turn per step that streamed something
    assert len([c for t in turns for c in t.get("tool_calls") or ()]) == calls
    outcomes = list(tool_outcomes(story))
    assert len(outcomes) == results  # every result linked to its call
    assert sum(failed for _fn, _content, failed, _call in outcomes) == errors
    assert sum("reason" in t for t in turns) == thinks  # one think part per step in these files
    assert story["agent"] == {"id": "kimi-code", "name": "Kimi Code", "model": "kimi-k2.7-code"}
    assert story["meta"]["kimi-code"]["records"] == n
    assert story["extra"] == {"kimi_code": {"work_dir": "wd_project_ac3bb318f98e"}}


def test_the_main_journal_in_detail():
    path = next(p for p in FILES if "1bcbe023" in str(p) and p.parent.name == "main")
    story = read(path.read_text(encoding="utf-8"), document_id(path))
    turns = story["turns"]
    # 24 step.begin, 22 turns: the first two prompts' steps streamed nothing (retried, then answered together)
    assert sum(json.loads(x).get("event", {}).get("type") == "step.begin" for x in path.read_text().splitlines()) == 24
    first_answer = next(t for t in turns if t["src"] == "agent")
    assert turns[1]["ts"] == "2026-08-01T19:33:32.820Z"  # the user's "hi": time 1785612812820
    assert first_answer["ts"] == "2026-08-01T19:50:01.102Z"  # its step's first part (the think part)
    assert first_answer["msg"] == "Hi there! How can I help you today?" and first_answer["reason"].startswith(
        "The user"
    )
    assert first_answer["metrics"] == {
        "prompt_tokens": 9431 + 14848,
        "completion_tokens": 42,
        "cached_tokens": 14848,
        "extra": {"cache_write_tokens": 0},
    }
    failed = [r for t in turns for r in (t.get("observation") or {}).get("results", ()) if r.get("is_error")]
    assert [r["content"][:20] for r in failed] == ["cat: /nonexistent-fi"]
    reminders = [t for t in turns if t.get("extra", {}).get("kimi_code", {}).get("context") == "injection"]
    assert {t["extra"]["kimi_code"]["variant"] for t in reminders} == {"plan_mode", "todo_list_reminder"}
    assert all(t["copied"] and t["msg"].startswith("<system-reminder>") for t in reminders)
    [summary] = [t for t in turns if t.get("extra", {}).get("compaction")]
    assert summary["msg"].startswith("The conversation so far has been compacted")  # contextSummary, what the model saw


def test_detection_claims_the_journal_not_its_first_line():
    journal = lines(META, SYSTEM, user("hi"))
    assert detect(journal.encode(), "wire.jsonl").NAME == "kimi-code"
    # Kimi CLI's wire.jsonl opens with the same metadata line: neither format claims it
    kimi_cli_wire = lines(META, {"timestamp": 1.5, "message": {"type": "TurnBegin", "payload": {"user_input": "hi"}}})
    with pytest.raises(FormatError, match="not recognised"):
        detect(kimi_cli_wire.encode(), "wire.jsonl")


def test_origins():
    story = read(
        lines(
            META,
            SYSTEM,
            user("<git-context>…</git-context>\ncount the files", {"kind": "system_trigger", "name": "subagent"}),
            user("<system-reminder>\nPlan mode is active…", {"kind": "injection", "variant": "plan_mode"}),
            user("/review", {"kind": "skill_activation", "activationId": "a1", "skillName": "review"}),
            {"type": "context.append_message", "message": {"role": "user", "content": [text("no origin")]}},
        )
    )
    turns = story["turns"][1:]
    assert [t.get("kind") for t in turns] == [None, "context", "context", None]
    assert turns[1]["copied"] is True
    assert turns[1]["extra"] == {"kimi_code": {"context": "injection", "variant": "plan_mode"}}
    assert turns[2]["extra"] == {"kimi_code": {"context": "skill_activation"}}


def test_a_rebound_system_prompt_is_one_turn():
    bound = {"type": "profile.bind", "systemPrompt": SYSTEM["systemPrompt"], "time": 9}
    changed = {"type": "config.update", "systemPrompt": "You are Kimi Code CLI, v2.", "time": 10}
    story = read(lines(META, SYSTEM, user("hi"), bound, user("again"), changed))
    assert [(t["src"], t["msg"]) for t in story["turns"]] == [
        ("system", "You are Kimi Code CLI."),
        ("user", "hi"),
        ("user", "again"),
        ("system", "You are Kimi Code CLI, v2."),
    ]


def test_a_step_is_one_turn_and_a_step_of_nothing_none():
    story = read(
        lines(
            META,
            user("hi"),
            event(type="step.begin", uuid="s0"),  # cancelled: streamed nothing
            {"type": "turn.cancel", "time": 4},
            *step(
                "s1",
                think("a"),
                think("b"),
                text("one"),
                text("two"),
                calls=(("Bash_0", "Bash", {"command": "ls"}), ("Bash_0", "Bash", {"command": "pwd"})),
                results=(("Bash_0", {"output": "/w"}), ("Bash_0", {"output": "a.py", "isError": False, "note": "n"})),
            ),
        )
    )
    [_user, agent] = story["turns"]
    assert agent["reason"] == "a\n\nb" and agent["msg"] == [text("one"), text("two")]
    assert [c["tcid"] for c in agent["tool_calls"]] == ["Bash_0", "Bash_0#2"]
    assert story["meta"]["source_call_ids"] == {"Bash_0#2": "Bash_0"}
    # a result answers the latest call of its id not yet answered
    assert [(r["source_call_id"], r["content"]) for r in agent["observation"]["results"]] == [
        ("Bash_0#2", "/w"),
        ("Bash_0", "a.py"),
    ]


def test_undo_and_clear_keep_the_turns():
    story = read(
        lines(
            META,
            user("hi"),
            *step("s1", text("Hello")),
            {"type": "context.undo", "agentId": "main", "count": 1, "time": 5},
            user("bye"),
            {"type": "context.clear", "agentId": "main", "time": 6},
        )
    )
    assert [t["msg"] for t in story["turns"]] == ["hi", "Hello", "bye"]
    assert story["meta"]["kimi-code"]["undo"] == 1 and story["meta"]["kimi-code"]["clear"] == 1


def test_a_turn_the_user_cancelled_is_interrupted():
    """docs/formats/kimi-code.md, "Interruptions": a ``turn.cancel`` of the running turn is the user's stop. The real
    0.29.1 session 9eb1bf57 (agent-sessions' small.jsonl): the user typed ``stop`` as a steer, then cancelled twice;
    no step streamed anything. Counted by hand: 2 ``turn.cancel`` records."""
    path = next(p for p in FILES if SMALL in str(p))
    raw = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    assert sum(r.get("type") == "turn.cancel" for r in raw) == 2
    [story] = into_storyline("kimi-code", path.read_bytes(), document_id=document_id(path))
    assert story["meta"]["kimi-code"]["interrupted"] == 2
    assert pc.flags(story) == ["incomplete", "interrupted"]
    cancel = {"type": "turn.cancel", "agentId": "main", "turnId": 0, "time": 7}
    for extra, counted in [
        ({}, 1),
        ({"target": "active", "reason": "user_cancelled"}, 1),  # agent-core-v2's TurnCancel of the running turn
        ({"target": "queued", "reason": "user_cancelled"}, 0),  # a prompt still waiting: no turn was stopped
        ({"target": "active", "reason": "aborted"}, 0),  # not the user's cancel
    ]:
        got = read(lines(META, user("hi"), *step("s1", text("Hello")), {**cancel, **extra}))
        assert got["meta"]["kimi-code"].get("interrupted", 0) == counted
        assert ("interrupted" in pc.flags(got)) == bool(counted)


def test_a_subagents_result_names_its_journal():
    result = {"output": "agent_id: agent-0\nactual_subagent_type: explore\nstatus: completed\n\n[summary]\n3 files"}
    story = read(
        lines(
            META,
            user("go"),
            *step("s1", calls=(("Agent_0", "Agent", {"prompt": "count"}),), results=(("Agent_0", result),)),
        )
    )
    assert story["children"] == ["session_1/agents/agent-0"]
    assert story["turns"][1]["tool_calls"][0]["extra"] == {"subagent": "session_1/agents/agent-0"}
    sub = read(
        lines(META, user("count", {"kind": "system_trigger", "name": "subagent"}), *step("s2", text("3"))),
        "wd_p_1/session_1/agents/agent-0/wire.jsonl",
    )
    assert sub["session"] == "session_1/agents/agent-0"
    assert sub["parent"] == {"psid": "session_1", "rel": "subagent"}


def test_no_conversation_and_refusals():
    with pytest.raises(NoConversationError):
        read(lines(META, SYSTEM, event(type="step.begin", uuid="s0"), {"type": "turn.cancel", "time": 4}))
    # calls without a step (a hand-written journal): Kimi Code's fold drops them, so they make no turn
    orphan_call = event(type="tool.call", uuid="c1", toolCallId="c1", name="Bash", args={"command": "ls"})
    with pytest.raises(FormatError, match="nothing to read as turns") as err:
        read(lines(orphan_call))
    assert err.value.pointer == "/0"
    story = read(lines(user("hi"), orphan_call, event(type="tool.result", toolCallId="c1", result={"output": "x"})))
    assert story["meta"]["kimi-code"]["unread"] == 1 and story["meta"]["kimi-code"]["orphan_results"] == 1


def test_odd_shapes_stay_residual():
    # hand-written journals (vshulcz/deja-vu, phnx-labs/agi-cli): a think part spelled with "text", a string content
    story = read(
        lines(
            {"type": "context.append_message", "message": {"role": "user", "content": "Deploy"}},
            *step("s1", {"type": "think", "text": "skipped"}, text("ok")),
        )
    )
    assert [(t["msg"], t.get("reason")) for t in story["turns"]] == [("Deploy", None), ("ok", None)]


def test_a_forked_subagents_copied_history_is_context():
    # agentLifecycle.fork: the starter's messages (its tool messages too) copied into the subagent's journal, then
    # its task; a subagent started without fork opens with its task
    call = {"type": "function", "id": "Bash_0", "name": "Bash", "arguments": '{"command":"ls"}'}
    answer = {"role": "assistant", "content": [text("listing")], "toolCalls": [call]}
    result = {"role": "tool", "content": [text("a.py")], "toolCalls": [], "toolCallId": "Bash_0"}
    story = read(
        lines(
            META,
            SYSTEM,
            user("list the files"),
            {"type": "context.append_message", "message": answer, "time": 3},
            {"type": "context.append_message", "message": result, "time": 4},
            user("The conversation above is not your own history…", {"kind": "system_trigger", "name": "subagent"}),
            *step("s1", text("done")),
        ),
        "wd_p_1/session_1/agents/agent-0/wire.jsonl",
    )
    turns = story["turns"]
    assert [(t["src"], t.get("kind"), t.get("copied")) for t in turns] == [
        ("system", None, None),
        ("user", "context", True),
        ("agent", "context", True),
        ("user", None, None),
        ("agent", None, None),
    ]
    assert turns[1]["extra"] == {"kimi_code": {"context": "inherited"}}
    assert turns[2]["tool_calls"][0]["args"] == {"command": "ls"}
    assert turns[2]["observation"]["results"] == [{"content": "a.py", "source_call_id": "Bash_0"}]
    assert "unread" not in story["meta"]["kimi-code"]


def test_an_agent_swarms_result_names_each_subagent():
    # agentSwarmTool.ts renders one <subagent …> line per subagent, agent_id an attribute
    output = (
        "<agent_swarm_result>\n<summary>2 completed</summary>\n"
        '<subagent agent_id="agent-1" item="a.py" outcome="completed">ok</subagent>\n'
        '<subagent mode="resume" agent_id="agent-2" outcome="completed">ok\n<subagent agent_id="x"> quoted</subagent>\n'
        "</agent_swarm_result>"
    )
    swarm = ("AgentSwarm_0", "AgentSwarm", {"items": ["a", "b"]})
    story = read(lines(META, user("go"), *step("s1", calls=(swarm,), results=(("AgentSwarm_0", {"output": output}),))))
    kids = ["session_1/agents/agent-1", "session_1/agents/agent-2", "session_1/agents/x"]
    assert story["children"] == kids  # a body's line that opens like one is read as one too: the result says no more
    assert story["turns"][1]["tool_calls"][0]["extra"] == {"subagents": kids}
