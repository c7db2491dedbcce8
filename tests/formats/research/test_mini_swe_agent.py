"""The ``mini-swe-agent`` format (docs/formats/mini-swe-agent.md): text-protocol and tool-calling
trajectories; counted from the source here; same-source round trips give equal JSON."""

from __future__ import annotations

import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from pchronicle_datasets.formats import detect

from .common import DATA, calls, load_auto, records, results, written

FILES = sorted((DATA / "mini_swe_agent").glob("*.traj.json"))


def test_load_dataset_auto_reads_every_call_result_and_message(tmp_path):
    stories = load_auto(FILES, tmp_path)
    by_file = {s["origin"]["document_id"].rsplit("/", 1)[-1]: s for s in stories}
    for path in FILES:
        story = by_file[path.name]
        [source] = records(path)
        assert story["origin"] == {
            "format": "mini-swe-agent",
            "schema_version": "mini-swe-agent-1.1",
            "document_id": story["origin"]["document_id"],
        }
        # The text protocol: the user messages right after an assistant message with actions show the model their
        # output, one per action in order: each is the result of its action's call, not a turn.
        src = source["messages"]
        shown = {}
        for m, msg in enumerate(src):
            if msg["role"] == "assistant" and not msg.get("tool_calls"):
                k = m + 1
                for a in range(len(msg["extra"]["actions"])):
                    if k < len(src) and src[k]["role"] == "user":
                        shown[k] = f"action-{m}-{a}"
                        k += 1
        messages = [msg for m, msg in enumerate(src) if msg["role"] != "tool" and m not in shown]
        assert [t["msg"] for t in story["turns"]] == [m["content"] for m in messages]
        want = []
        for m, msg in enumerate(src):
            if msg.get("tool_calls"):
                want += [
                    (c["id"], c["function"]["name"], orjson.loads(c["function"]["arguments"]))
                    for c in msg["tool_calls"]
                ]
            elif msg["role"] == "assistant":
                want += [
                    (f"action-{m}-{a}", "bash", {"command": x["command"]})
                    for a, x in enumerate(msg["extra"]["actions"])
                ]
        assert calls(story) == want
        assert results(story) == [
            (msg["tool_call_id"], msg["content"]) if msg["role"] == "tool" else (shown[m], msg["content"])
            for m, msg in enumerate(src)
            if msg["role"] == "tool" or m in shown
        ]
        assert story["task"]["result"]["status"] == source["info"]["exit_status"]
        assert story["final_metrics"] == source["info"]["model_stats"]
        assert story["agent"]["ver"] == source["info"]["mini_version"]
    text = by_file["text_protocol.traj.json"]
    assert text["agent"]["model"] == "deepseek/deepseek-chat"
    assert [t["src"] for t in text["turns"]] == ["system", "user", "agent", "agent", "exit"]
    assert (
        sum(m["role"] == "user" for m in records(DATA / "mini_swe_agent" / "text_protocol.traj.json")[0]["messages"])
        == 2
    )
    assert [m["role"] for m in pc.to_messages(text)["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "system",
    ]
    assert text["turns"][2]["ts"] == 1766000000.25
    assert by_file["tool_calling.traj.json"]["session"] == "astropy__astropy-12907"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_same_source_round_trip_is_equal_json(path):
    stories = pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    assert written(pc.from_storyline("mini-swe-agent", stories)) == records(path)


def test_a_bare_message_list_is_chat_and_a_named_format_is_not():
    [source] = records(FILES[0])
    assert detect(orjson.dumps(source["messages"])).NAME == "chat"
    assert detect(orjson.dumps(source)).NAME == "mini-swe-agent"


def test_other_documents_are_written_as_trajectories():
    chat = {
        "id": "s1",
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "a.py"},
        ],
    }
    [story] = pc.into_storyline("chat", orjson.dumps(chat), document_id="c.json")
    [back] = pc.into_storyline("auto", pc.from_storyline("mini-swe-agent", [story]), document_id="c.traj.json")
    assert back["session"] == "s1" and calls(back) == [("c1", "bash", {"command": "ls"})]
    assert results(back) == [("c1", "a.py")]


def test_a_message_that_is_not_one_is_refused_with_its_pointer():
    bad = {"messages": [{"role": "user", "content": "x"}, 3], "trajectory_format": "mini-swe-agent-1"}
    with pytest.raises(FormatError, match=r"/messages/1: a message is an object with a string role, got integer"):
        pc.into_storyline("auto", orjson.dumps(bad), document_id="m.traj.json")


def test_a_repeated_tool_call_id_is_renamed_and_its_result_stays_linked():
    def turn(cid: str, command: str, out: str) -> list[dict]:
        args = orjson.dumps({"command": command}).decode()
        call = {"id": cid, "type": "function", "function": {"name": "bash", "arguments": args}}
        return [
            {"role": "assistant", "content": "", "tool_calls": [call]},
            {"role": "tool", "content": out, "tool_call_id": cid},
        ]

    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "fix"}]
    messages += turn("c1", "ls", "a") + turn("c1", "pwd", "/r") + turn("c1", "id", "u")
    record = {"info": {"exit_status": "Submitted"}, "messages": messages, "trajectory_format": "mini-swe-agent-1.1"}
    [story] = pc.into_storyline("auto", orjson.dumps(record), document_id="r.traj.json")
    assert calls(story) == [("c1", "bash", {"command": "ls"}), ("c1#2", "bash", {"command": "pwd"}),
                            ("c1#3", "bash", {"command": "id"})]  # fmt: skip
    assert results(story) == [("c1", "a"), ("c1#2", "/r"), ("c1#3", "u")]
    assert written(pc.from_storyline("mini-swe-agent", [story])) == [record]


def test_a_reasoning_model_s_reasoning_is_the_turn_s_reason():
    """docs/formats/mini-swe-agent.md, decisions: litellm's ``reasoning_content`` of an assistant message (a real
    deepseek-reasoner run) is the turn's ``reason``, which the training outputs show; a null one stays residual."""
    path = DATA / "mini_swe_agent" / "pvlib__pvlib-python-1606.traj.json"
    [source] = records(path)
    [story] = pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    wanted = [m["reasoning_content"] for m in source["messages"] if m["role"] == "assistant"]
    assert len(wanted) == 4 and all(wanted)
    assert [t["reason"] for t in story["turns"] if t["src"] == "agent"] == wanted
    shown = [m for m in pc.to_messages(pc.story_to_row(story))["messages"] if m["role"] == "assistant"]
    assert [m.get("reasoning_content") for m in shown] == wanted
    assert written(pc.from_storyline("mini-swe-agent", [story])) == [source]


@pytest.mark.parametrize(
    ("name", "flags"),
    [  # two real deepseek-reasoner runs the model's API ended (LiteLLM's timeout, a provider's 500), two that submitted
        ("pvlib__pvlib-python-1154.traj.json", ["incomplete", "failed", "api_error"]),
        ("pvlib__pvlib-python-1606.traj.json", ["api_error"]),
        ("tool_calling.traj.json", []),
        ("text_protocol.traj.json", ["tool_call_unanswered"]),  # its last action, whose output ends the run
    ],
)
def test_a_run_the_model_s_api_ended_is_an_api_error(name, flags):
    """docs/formats/mini-swe-agent.md, decisions: an ``exit`` message whose traceback passes through the model's
    query (``minisweagent/models/``) or whose ``exception_str`` is LiteLLM's (``litellm.Timeout: …``) ended the run
    on an API error, as Codex's ``task_complete`` errors do; its turn says so, the file is written back whole."""
    path = DATA / "mini_swe_agent" / name
    [source] = records(path)
    exit_extra = source["messages"][-1]["extra"]
    by_hand = "minisweagent/models/" in exit_extra.get("traceback", "")
    assert by_hand == ("api_error" in flags)
    [story] = pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    assert pc.flags(story) == flags
    assert pc.flags(pc.story_to_row(story)) == flags
    assert written(pc.from_storyline("mini-swe-agent", [story])) == [source]
    # an exception the environment raised (no model frame, not LiteLLM's text) is no API error
    exit_extra.update(traceback='  File "src/minisweagent/environments/docker.py", line 9', exception_str="boom")
    [other] = pc.into_storyline("mini-swe-agent", orjson.dumps(source), document_id=path.name)
    assert "api_error" not in pc.flags(other)
    exit_extra.update(traceback="", exception_str="litellm.RateLimitError: RateLimitError: slow down")
    [limited] = pc.into_storyline("mini-swe-agent", orjson.dumps(source), document_id=path.name)
    assert "api_error" in pc.flags(limited)
