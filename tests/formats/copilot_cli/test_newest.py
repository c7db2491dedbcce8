"""The newest Copilot CLI events (docs/formats/copilot-cli.md, "Checked (2026-12)"): a subagent's events and user
messages the user did not type, written inline in the shape of the CLI's event schema (github/copilot-sdk
``nodejs/src/generated/session-events.ts`` @cc0438d6, MIT): no public events file of a 1.0.8x/1.0.9x session with a
subagent or a skill was found. Counted from the lines, not by the reader; the same-source writer gives every line
back."""

from __future__ import annotations

import json

import pchronicle_datasets as pc
from pchronicle_datasets.formats import from_storyline, into_storyline


def _events(*specs):
    """Events with ids, timestamps and the ``parentId`` chain, as the CLI writes them; ``(type, data)`` or
    ``(type, data, agentId)``."""
    out = []
    for n, (kind, data, *agent) in enumerate(specs):
        ev = {"type": kind, "data": data, "id": f"e{n}", "timestamp": f"2026-10-07T10:21:{n:02d}.000Z"}
        ev["parentId"] = out[-1]["id"] if out else None
        if agent:
            ev["agentId"] = agent[0]
        out.append(ev)
    return out


START = (
    "session.start",
    {
        "sessionId": "5d1e2f3a-0000-4000-8000-000000000092",
        "version": 1,
        "producer": "copilot-agent",
        "copilotVersion": "1.0.92",
        "startTime": "2026-10-07T10:21:00.000Z",
        "context": {"cwd": "/repo", "branch": "main"},
    },
)
TASK = {"toolCallId": "call_task1", "name": "task", "arguments": {"prompt": "grep for flaky", "agent_type": "explore"}}


def _subagent(marker):
    """A main agent that delegates to a subagent whose events carry ``marker``: ``"agentId"`` (the top-level key of
    1.0.5x on) or ``"parentToolCallId"`` (the deprecated data key)."""

    def sub(kind, data):
        if marker == "agentId":
            return (kind, data, "call_task1")
        return (kind, {**data, "parentToolCallId": "call_task1"})

    return _events(
        START,
        ("system.message", {"role": "system", "content": "You are the GitHub Copilot CLI."}),
        ("user.message", {"content": "find the flaky test", "source": "user", "agentMode": "interactive"}),
        ("assistant.turn_start", {"turnId": "0"}),
        ("assistant.message", {"messageId": "m1", "content": "I'll delegate.", "toolRequests": [TASK]}),
        ("tool.execution_start", {"toolCallId": "call_task1", "toolName": "task", "arguments": TASK["arguments"]}),
        ("subagent.started", {"toolCallId": "call_task1", "agentName": "explore"}, "call_task1"),
        sub("user.message", {"content": "grep for flaky"}),
        sub(
            "assistant.message",
            {"messageId": "m2", "content": "", "toolRequests": [{"toolCallId": "g1", "name": "grep", "arguments": {}}]},
        ),
        sub("tool.execution_complete", {"toolCallId": "g1", "success": True, "result": {"content": "tests/a.py:3"}}),
        sub("assistant.message", {"messageId": "m3", "content": "tests/a.py", "toolRequests": []}),
        ("subagent.completed", {"toolCallId": "call_task1", "agentName": "explore"}, "call_task1"),
        ("tool.execution_complete", {"toolCallId": "call_task1", "success": True, "result": {"content": "tests/a.py"}}),
        ("assistant.message", {"messageId": "m4", "content": "It is tests/a.py.", "toolRequests": []}),
        ("assistant.turn_end", {"turnId": "0"}),
    )


def _read_all(evs):
    """Every document of the events (the main one first, then its subagents'), checked to give every line back."""
    text = "".join(json.dumps(e) + "\n" for e in evs)
    stories = into_storyline("auto", text.encode(), document_id="events.jsonl")
    for given in (stories[:1], stories):  # the main document alone, or with its subagents' (views of its events)
        with pc.collect_losses() as losses:
            out = from_storyline("copilot-cli", given)
        assert not losses
        assert [json.loads(line) for line in out.splitlines()] == evs  # every line back, the subagent's too
    return stories


def _read(evs):
    return _read_all(evs)[0]


def _main(evs):
    """The main agent's message events, counted from the lines: neither key of a subagent."""
    return [
        e for e in evs if e["type"].endswith(".message") and "agentId" not in e and "parentToolCallId" not in e["data"]
    ]


def test_a_subagents_events_stay_out_of_the_main_conversation():
    for marker in ("agentId", "parentToolCallId"):
        evs = _subagent(marker)
        story = _read(evs)
        main = _main(evs)
        assert len(main) == 4, marker
        assert [t["msg"] for t in story["turns"]] == [e["data"]["content"] for e in main], marker
        calls = [c for t in story["turns"] for c in t.get("tool_calls", ())]
        assert [(c["tcid"], c["result"]) for c in calls] == [("call_task1", "tests/a.py")], marker
        chat = pc.to_messages(pc.story_to_row(story))["messages"]
        assert [m["role"] for m in chat] == ["system", "user", "assistant", "tool", "assistant"], marker
        assert "tests/a.py:3" not in json.dumps(chat), marker  # the subagent's own grep result


def test_a_subagents_events_are_a_linked_document_of_their_own():
    for marker in ("agentId", "parentToolCallId"):
        evs = _subagent(marker)
        main, child = _read_all(evs)
        theirs = [e for e in evs if e["type"].endswith(".message") and e not in _main(evs)]  # counted from the lines
        assert len(theirs) == 3, marker
        assert child["session"] == f"{main['session']}/call_task1", marker
        assert child["parent"] == {"psid": main["session"], "rel": "subagent", "scid": "call_task1", "ptid": 3}
        assert main["children"] == [child["session"]], marker
        assert [t["msg"] for t in child["turns"]] == [e["data"]["content"] for e in theirs], marker
        [call] = [c for t in child["turns"] for c in t.get("tool_calls", ())]
        assert (call["tcid"], call["fn"], call["result"]) == ("g1", "grep", "tests/a.py:3"), marker
        assert "unknown_fields" not in child  # a view: the main document holds every value of these events
        assert child["meta"]["copilot-cli"]["lines"] == [i for i, e in enumerate(evs) if e in _theirs(evs)], marker
        assert pc.flags(child) == ["subagent"], marker
        chat = pc.to_messages(pc.story_to_row(child), arguments="object")["messages"]
        assert [m["role"] for m in chat] == ["user", "assistant", "tool", "assistant"], marker
        # written alone (not beside its main file), it is a session of its own, what it cannot hold counted
        with pc.collect_losses() as losses:
            alone = from_storyline("copilot-cli", [child])
        assert [json.loads(line)["type"] for line in alone.splitlines()][:2] == ["session.start", "user.message"]
        assert "not in copilot-cli: /parent" in losses.counts, marker


def _theirs(evs):
    """The subagent's events, counted from the lines: a top-level agentId or data.parentToolCallId."""
    return [e for e in evs if "agentId" in e or "parentToolCallId" in e["data"]]


def test_a_user_message_the_user_did_not_type_is_a_context_turn():
    evs = _events(
        START,
        ("user.message", {"content": "review my diff", "source": "user"}),
        ("user.message", {"content": "<skill>Read PDFs with pdftotext.</skill>", "source": "skill-pdf"}),
        ("user.message", {"content": "Findings from the other agent", "source": "agent-explore-2"}),
        ("user.message", {"content": "Continue toward the objective.", "isAutopilotContinuation": True}),
        ("user.message", {"content": "/review", "source": "command-review"}),
        ("assistant.message", {"messageId": "m1", "content": "Done.", "toolRequests": []}),
    )
    story = _read(evs)
    got = [(t["msg"], t.get("copied", False), (t.get("extra") or {}).get("copilot_cli")) for t in story["turns"]]
    assert got == [
        ("review my diff", False, None),
        ("<skill>Read PDFs with pdftotext.</skill>", True, {"context": "skill-pdf"}),
        ("Findings from the other agent", True, {"context": "agent-explore-2"}),
        ("Continue toward the objective.", True, {"context": "autopilot"}),
        ("/review", False, None),
        ("Done.", False, None),
    ]
    assert all(t["kind"] == "context" for t in story["turns"] if t.get("copied"))
    assert pc.story_to_row(story)["num_copied_turns"] == 3


def test_the_system_prompt_written_again_is_a_copy():
    prompt = {"role": "system", "content": "You are the GitHub Copilot CLI."}
    evs = _events(
        START,
        ("system.message", {**prompt, "interactionId": "i1"}),
        ("user.message", {"content": "first", "interactionId": "i1"}),
        ("assistant.message", {"messageId": "m1", "content": "one", "toolRequests": []}),
        ("session.resume", {"eventCount": 4, "resumeTime": "2026-10-07T11:00:00.000Z"}),
        ("system.message", {**prompt, "interactionId": "i2"}),
        ("user.message", {"content": "second", "interactionId": "i2"}),
        ("assistant.message", {"messageId": "m2", "content": "two", "toolRequests": []}),
        ("system.message", {"role": "system", "content": "You are the GitHub Copilot CLI, in plan mode."}),
        ("user.message", {"content": "third"}),
    )
    story = _read(evs)
    systems = [e["data"]["content"] for e in evs if e["type"] == "system.message"]
    assert [t["msg"] for t in story["turns"] if t["src"] == "system"] == systems  # every one kept
    assert [t.get("copied", False) for t in story["turns"] if t["src"] == "system"] == [False, True, False]
    assert story["turns"][3]["extra"] == {"copilot_cli": {"context": "repeated"}}
    row = pc.story_to_row(story)
    roles = [m["role"] for m in pc.to_messages(row, drop_copied=True)["messages"]]
    assert roles == ["system", "user", "assistant", "user", "assistant", "system", "user"]


def test_a_compactions_summary_is_a_context_turn():
    summary = "The user asked for the flaky test; tests/a.py was found."
    evs = _events(
        START,
        ("user.message", {"content": "find the flaky test"}),
        ("assistant.message", {"messageId": "m1", "content": "tests/a.py", "toolRequests": []}),
        ("session.compaction_start", {}),
        (
            "session.compaction_complete",
            {"success": True, "summaryContent": summary, "preCompactionTokens": 90000, "checkpointNumber": 1},
        ),
        ("session.compaction_complete", {"success": False, "error": "the model call failed"}),
        ("user.message", {"content": "now fix it"}),
    )
    story = _read(evs)
    assert [(t["src"], t["msg"], t.get("copied", False)) for t in story["turns"]] == [
        ("user", "find the flaky test", False),
        ("agent", "tests/a.py", False),
        ("user", summary, True),
        ("user", "now fix it", False),
    ]
    assert story["turns"][2]["kind"] == "context"
    assert story["turns"][2]["extra"] == {"copilot_cli": {"context": "compaction"}}
    assert story["turns"][2]["ts"] == evs[4]["timestamp"]
    assert story["meta"]["copilot-cli"]["layout"] == ["start", "turn", "turn", None, "compaction", None, "turn"]
