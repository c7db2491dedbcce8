"""The ``openhands`` format (docs/formats/openhands.md) on OpenHands' own replay fixtures: message actions are
turns, every other action a call with the model's arguments, observations results linked by ``cause``; counted
from the source here; same-source round trips give equal JSON."""

from __future__ import annotations

import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from pchronicle_datasets.losses import collect_losses

from .common import DATA, calls, load_auto, records, results, written

FILES = sorted((DATA / "openhands").glob("*.json"))


def _expected(events):
    """Turns, calls and results as the mapping table says, computed from the events themselves."""
    turns, want_calls, want_results, by_id = [], [], [], {}
    for e in events:
        if "action" in e:
            if e["action"] == "message":
                turns.append((e["source"], e["args"]["content"]))
                continue
            meta = e["tool_call_metadata"]
            [call] = [
                c
                for c in meta["model_response"]["choices"][0]["message"]["tool_calls"]
                if c["id"] == meta["tool_call_id"]
            ]
            thought = e["args"].get("thought") or (e["message"] if e["action"] == "finish" else "")
            turns.append((e["source"], thought))
            want_calls.append(
                (meta["tool_call_id"], meta["function_name"], orjson.loads(call["function"]["arguments"]))
            )
            by_id[e["id"]] = meta["tool_call_id"]
        else:
            want_results.append((by_id[e["cause"]], e["content"]))
    return turns, want_calls, want_results


def test_load_dataset_auto_reads_every_call_result_and_message(tmp_path):
    stories = load_auto(FILES, tmp_path)
    by_file = {s["origin"]["document_id"].rsplit("/", 1)[-1]: s for s in stories}
    assert len(stories) == len(FILES)
    for path in FILES:
        story = by_file[path.name]
        assert story["origin"]["format"] == "openhands"
        [events] = records(path)
        turns, want_calls, want_results = _expected(events)
        assert [(t["src"], t["msg"]) for t in story["turns"]] == turns
        assert calls(story) == want_calls
        assert results(story) == want_results
    [run] = [
        c
        for t in by_file["wrong_initial_state.json"]["turns"]
        for c in t.get("tool_calls") or ()
        if c["fn"] == "execute_bash"
    ]
    assert run["response"] == {"exit_code": 0}
    assert (
        len(calls(by_file["wrong_initial_state.json"])) == 4 and len(results(by_file["wrong_initial_state.json"])) == 3
    )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_same_source_round_trip_is_equal_json(path):
    stories = pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    assert written(pc.from_storyline("openhands", stories)) == records(path)


def test_observations_are_not_written_twice():
    path = DATA / "openhands" / "wrong_initial_state.json"
    [story] = pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    fields = story["unknown_fields"]["sources"]["openhands"]["fields"]
    # the observation's copy of the call id and name maps onto the call, not into the residual
    assert "/2/tool_call_metadata/tool_call_id" not in fields and "/2/tool_call_metadata/function_name" not in fields
    assert "/0/args/content" not in fields and "/0/message" not in fields  # message == args.content: one value
    out = pc.to_messages(story)["messages"]
    assert sum(len(m.get("tool_calls") or ()) for m in out) == 4


def test_other_documents_are_written_as_events_with_their_losses_counted():
    chat = {
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": "look",
                "reasoning_content": "hm",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": '{"d": 1}'}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        ]
    }
    [story] = pc.into_storyline("chat", orjson.dumps(chat), document_id="c.json")
    with collect_losses() as report:
        text = pc.from_storyline("openhands", [story])
    assert report.counts["not in openhands: /turns/*/reason"] == 1
    [back] = pc.into_storyline("openhands", text, document_id="c.json")
    assert calls(back) == [("c1", "ls", {"d": 1})] and results(back) == [("c1", "a.py")]
    # the system prompt is written as OpenHands' `system` action and read back as the system turn
    assert [(t["src"], t["msg"]) for t in back["turns"]] == [("system", "be brief"), ("user", "hi"), ("agent", "look")]


def test_an_event_without_action_or_observation_is_refused_with_its_pointer():
    events = [{"id": 0, "source": "user", "action": "message", "args": {"content": "hi"}}, {"id": 1, "source": "agent"}]
    with pytest.raises(FormatError, match=r"^/1: an OpenHands event has an action or an observation"):
        pc.into_storyline("auto", orjson.dumps(events), document_id="e.json")


EVAL = DATA / "openhands" / "multi_swe_bench_output.excerpt.jsonl"


def test_an_evaluation_record_reads_its_history_and_its_system_prompt(tmp_path):
    # OpenHands' evaluation output (`output.jsonl`: one object per instance, the event stream in `history`) was
    # refused as "not an array"; its first event, the `system` action (SystemMessageAction, OpenHands >= 0.3x), was
    # read as a call named `system` whose arguments were the whole prompt and the tool list.
    [record] = records(EVAL)
    events = record["history"]
    [story] = load_auto([EVAL], tmp_path)
    assert story["origin"]["format"] == "openhands" and story["session"] == record["instance_id"]
    system = events[0]
    assert system["action"] == "system"
    assert (story["turns"][0]["src"], story["turns"][0]["msg"]) == ("system", system["args"]["content"])
    assert "tool_calls" not in story["turns"][0]
    assert story["agent"]["tools"] == system["args"]["tools"]
    assert story["agent"]["ver"] == system["args"]["openhands_version"] == "0.35.0"
    assert story["final_metrics"] == record["metrics"]
    agent_actions = [e for e in events if e["source"] == "agent" and e.get("action") not in (None, "system")]
    assert calls(story) == [
        (
            e["tool_call_metadata"]["tool_call_id"],
            e["tool_call_metadata"]["function_name"],
            orjson.loads(
                next(
                    c["function"]["arguments"]
                    for c in e["tool_call_metadata"]["model_response"]["choices"][0]["message"]["tool_calls"]
                    if c["id"] == e["tool_call_metadata"]["tool_call_id"]
                )
            ),
        )
        for e in agent_actions
    ]
    by_id = {e["id"]: e["tool_call_metadata"]["tool_call_id"] for e in agent_actions}
    answered = [e for e in events if "observation" in e and e.get("cause") in by_id]
    assert results(story) == [(by_id[e["cause"]], e["content"]) for e in answered]
    assert (len(agent_actions), len(answered)) == (15, 14)  # counted by hand: finish has no observation
    out = pc.to_messages(story)["messages"]
    assert (out[0]["role"], out[0]["content"], out[0]["tool_calls"]) == ("system", system["args"]["content"], None)
    assert sum(len(m.get("tool_calls") or ()) for m in out) == 15
    assert sum(m["role"] == "tool" for m in out) == 14
    assert written(pc.from_storyline("openhands", [story])) == [record]
