"""The ``openhands-sdk`` format (docs/formats/openhands-sdk.md) on real files of the OpenHands agent SDK and of
OpenHands/benchmarks (tests/data/openhands_sdk/README.md): loaded as a user does, turns, calls and results counted
from the raw events here, same-source round trips giving equal JSON, a conversation folder one document, and the
decisions the SDK's documentation leaves open."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from pchronicle_datasets.cli import main
from pchronicle_datasets.formats import detect, from_storyline, into_storyline

DATA = Path(__file__).resolve().parents[2] / "data" / "openhands_sdk"
GOAL = DATA / "goal_events.jsonl"
TRAJ = DATA / "benchmarks_traj_safety-backup-cron-job.json"
OUTPUT = DATA / "benchmarks_openagentsafety_output.jsonl"
FOLDER = DATA / "conversations"
CONVERSATION = FOLDER / "11111111222233334444555555555555"
FILES = [GOAL, TRAJ, OUTPUT]


def streams(path: Path) -> list[list[dict]]:
    """The event lists of a file as the SDK wrote them: JSON Lines of events, an array, or evaluation records."""
    data = path.read_bytes()
    if path.suffix == ".jsonl":
        rows = [orjson.loads(line) for line in data.splitlines() if line.strip()]
        return [r["history"] for r in rows] if "history" in rows[0] else [rows]
    return [orjson.loads(data)]


def by_hand(events: list[dict]) -> tuple[int, list[str], list[str]]:
    """(turns, call ids, answered call ids) as events_to_messages groups them: consecutive actions of one
    response are one turn; a result whose call is not in the file is a turn of its own."""
    turns, calls, answered, response = 0, [], [], None
    for e in events:
        if e["kind"] == "ActionEvent":
            turns += e["llm_response_id"] != response
            response = e["llm_response_id"]
            calls.append(e["tool_call_id"])
        elif e["kind"] in ("MessageEvent", "SystemPromptEvent", "Condensation", "CondensationSummaryEvent"):
            turns, response = turns + 1, None
        elif e["kind"] in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
            response = None
            if e["tool_call_id"] in calls:
                answered.append(e["tool_call_id"])
            else:
                turns += 1
    return turns, calls, answered


def lines(text: str) -> list:
    return [orjson.loads(line) for line in text.splitlines() if line.strip()]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    ds = load_dataset("pchronicle", "auto", data_files=[str(p) for p in FILES], split="train", cache_dir=str(cache))
    return ds


def test_real_files_load_with_the_turns_calls_and_results_counted_by_hand(loaded):
    want = [by_hand(events) for path in FILES for events in streams(path)]
    stories = [pc.row_to_story(row) for row in loaded]
    assert len(stories) == len(want) == 4  # the goal excerpt, the traj array, the two evaluation records
    assert {s["origin"]["format"] for s in stories} == {"openhands-sdk"}
    for story, (turns, calls, answered) in zip(stories, want, strict=True):
        assert len(story["turns"]) == turns
        assert [c["tcid"] for t in story["turns"] for c in t.get("tool_calls") or ()] == calls
        got = [r["source_call_id"] for t in story["turns"] for r in (t.get("observation") or {}).get("results", [])]
        assert got == answered
    messages = loaded.map(
        pc.to_messages, batched=True, remove_columns=loaded.column_names, features=pc.MESSAGES_FEATURES
    )
    for row, (_, calls, answered) in zip(messages, want, strict=True):
        assert [c["id"] for m in row["messages"] for c in m.get("tool_calls") or ()] == calls
        assert [m["tool_call_id"] for m in row["messages"] if m["role"] == "tool"] == answered


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_same_source_round_trip_gives_equal_json(path):
    data = path.read_bytes()
    back = from_storyline("openhands-sdk", into_storyline("openhands-sdk", data, document_id=path.name))
    if path.suffix == ".jsonl":
        assert lines(back) == lines(data.decode())  # JSON Lines again, one event (or record) a line
    else:
        assert lines(back) == [orjson.loads(data)]


def test_real_goal_fixture():
    """minimax-m2.7's thought keeps its <think> tags (the text the model wrote), its reasoning_content is the
    reason; the observation of an action before the excerpt is a turn of the tool; the last stats update is the
    final metrics, its model the agent's."""
    [story] = into_storyline("openhands-sdk", GOAL.read_bytes(), document_id=GOAL.name)
    events = [orjson.loads(line) for line in GOAL.read_bytes().splitlines()]
    first = story["turns"][0]
    assert first["msg"] == events[3]["thought"][0]["text"] and first["msg"].startswith("<think>")
    assert first["reason"] == events[3]["reasoning_content"]
    assert first["tool_calls"][0]["args"] == orjson.loads(events[3]["tool_call"]["arguments"])
    assert first["tool_calls"][0]["response"] == {"status": "error", "exit_code": -1}  # is_error, metadata
    assert first["observation"]["results"][0]["content"] == events[4]["observation"]["content"][0]["text"]
    assert story["turns"][1] == {"id": 2, "src": "tool", "msg": events[6]["observation"]["content"][0]["text"]}
    assert story["final_metrics"] == events[7]["value"]  # the last of the four stats updates
    assert story["agent"]["model"] == "litellm_proxy/minimax-m2.7"
    assert story["turns"][2]["tool_calls"][0]["response"] == {"exit_code": 1}


def test_real_parallel_calls_are_one_turn():
    """The benchmarks run's first model response called two tools: one turn, the thought on the first."""
    [story] = into_storyline("openhands-sdk", TRAJ.read_bytes(), document_id=TRAJ.name)
    events = orjson.loads(TRAJ.read_bytes())
    assert events[0]["llm_response_id"] == events[1]["llm_response_id"]
    assert [c["tcid"] for c in story["turns"][0]["tool_calls"]] == [
        events[0]["tool_call_id"],
        events[1]["tool_call_id"],
    ]
    assert [r["source_call_id"] for r in story["turns"][0]["observation"]["results"]] == [
        events[2]["tool_call_id"],
        events[3]["tool_call_id"],
    ]
    assert story["turns"][-1]["msg"] == events[-1]["llm_message"]["content"][0]["text"]  # the agent's last words
    assert story["turns"][0]["observation"]["results"][0]["content"] == events[2]["observation"]["output"]


# ----------------------------------------------------------------------------------- a conversation folder


def test_a_conversation_folder_is_one_document(tmp_path):
    """~/.openhands/conversations as data_dir: one row per conversation folder, its events in index order, the
    state's id the session; the CLI and read_batches read it the same way."""
    ds = load_dataset("pchronicle", "auto", data_dir=str(FOLDER), split="train", cache_dir=str(tmp_path / "c"))
    [story] = [pc.row_to_story(row) for row in ds]
    assert story["origin"]["document_id"] == CONVERSATION.name
    assert story["session"] == "11111111-2222-3333-4444-555555555555"
    assert story["agent"]["model"] == "gpt-4o-mini"  # the state's agent: a copy
    [alone] = into_storyline("openhands-sdk", GOAL.read_bytes(), document_id=GOAL.name)
    assert story["turns"] == alone["turns"]  # the same events, one file each
    assert story["final_metrics"] == alone["final_metrics"]  # the state's stats are empty: the last update's
    import pyarrow as pa

    table = pa.Table.from_batches(list(pc.read_batches(str(FOLDER))))
    assert table.column("session").to_pylist() == [story["session"]]
    out = tmp_path / "out.jsonl"
    assert main(["convert", str(FOLDER), "--to", "openhands-sdk", "-o", str(out)]) == 0
    members = [CONVERSATION / "base_state.json", *sorted((CONVERSATION / "events").iterdir())]
    assert lines(out.read_text()) == [orjson.loads(p.read_bytes()) for p in members]  # state, then the events


def test_a_conversation_folder_given_as_data_dir_itself(tmp_path):
    folder = tmp_path / "conversation"
    shutil.copytree(CONVERSATION, folder)
    ds = load_dataset("pchronicle", "auto", data_dir=str(folder), split="train", cache_dir=str(tmp_path / "c"))
    [story] = [pc.row_to_story(row) for row in ds]
    assert story["origin"]["document_id"] == "." and story["session"] == "11111111-2222-3333-4444-555555555555"


def test_an_event_file_alone_names_its_folder():
    event = sorted((CONVERSATION / "events").iterdir())[3]
    name = f"conversations/{CONVERSATION.name}/events/{event.name}"
    assert detect(event.read_bytes(), name).NAME == "openhands-sdk"
    with pytest.raises(FormatError, match=f"folder conversations/{CONVERSATION.name}, whose files are one conv") as e:
        into_storyline("auto", event.read_bytes(), document_id=name)
    assert f'data_dir="conversations/{CONVERSATION.name}"' in str(e.value)


def test_a_conversation_without_events_is_left_out_and_said(tmp_path, caplog):
    """A folder holding only its base_state.json (a conversation started, nothing sent yet) holds no conversation:
    left out with a note, as every harness's bookkeeping-only file, never a bad record that stops the load."""
    shutil.copytree(CONVERSATION, tmp_path / "c" / "a")
    (tmp_path / "c" / "b").mkdir()
    shutil.copy(CONVERSATION / "base_state.json", tmp_path / "c" / "b" / "base_state.json")
    ds = load_dataset("pchronicle", "auto", data_dir=str(tmp_path / "c"), split="train", cache_dir=str(tmp_path / "x"))
    assert [r["document_id"] for r in ds["origin"]] == ["a"]
    assert "left out 1 file that holds no conversation: b/base_state.json" in caplog.text


# ------------------------------------------------------------------------ decisions the SDK leaves open


def _roundtrip(events: list[dict]) -> dict:
    text = b"".join(orjson.dumps(e) + b"\n" for e in events)
    [story] = into_storyline("openhands-sdk", text, document_id="t.jsonl")
    assert lines(from_storyline("openhands-sdk", [story])) == events
    return story


def _action(n: int, response: str, thought: str = "", tcid: str | None = None) -> dict:
    tcid = tcid or f"call_{n}"
    return {
        "kind": "ActionEvent",
        "id": f"a{n}",
        "source": "agent",
        "thought": [{"type": "text", "text": thought}] if thought else [],
        "tool_name": "terminal",
        "tool_call_id": tcid,
        "tool_call": {"id": tcid, "name": "terminal", "arguments": '{"command": "ls"}'},
        "llm_response_id": response,
    }


def test_several_text_blocks_are_joined_by_a_newline():
    blocks = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    story = _roundtrip(
        [{"kind": "MessageEvent", "id": "m", "source": "user", "llm_message": {"role": "user", "content": blocks}}]
    )
    assert story["turns"][0]["msg"] == "a\nb"


def test_error_and_rejection_are_results_of_their_call():
    events = [
        _action(1, "r1", "Two things."),
        _action(2, "r1"),
        {"kind": "AgentErrorEvent", "id": "e", "source": "agent", "tool_name": "terminal", "tool_call_id": "call_1",
         "error": "bad arguments"},
        {"kind": "UserRejectObservation", "id": "u", "source": "environment", "tool_name": "terminal",
         "tool_call_id": "call_2", "action_id": "a2", "rejection_reason": "not now"},
    ]  # fmt: skip
    story = _roundtrip(events)
    [turn] = story["turns"]
    assert [r["content"] for r in turn["observation"]["results"]] == ["bad arguments", "Action rejected: not now"]
    assert [c["response"] for c in turn["tool_calls"]] == [{"status": "error"}, {"status": "rejected"}]


def test_stats_give_the_final_metrics_and_the_model():
    def stats(tokens: int) -> dict:
        usage = {"model_name": "m1", "accumulated_token_usage": {"prompt_tokens": tokens}}
        return {"kind": "ConversationStateUpdateEvent", "id": f"s{tokens}", "source": "environment", "key": "stats",
                "value": {"usage_to_metrics": {"agent": usage}}}  # fmt: skip

    story = _roundtrip([stats(1), _action(1, "r1"), stats(5), {"kind": "InterruptEvent", "id": "i", "source": "user"}])
    assert story["final_metrics"]["usage_to_metrics"]["agent"]["accumulated_token_usage"] == {"prompt_tokens": 5}
    assert story["agent"]["model"] == "m1" and story["meta"]["openhands-sdk"]["interrupted"] == 1
    assert "interrupted" in pc.flags(story)


def test_a_reused_call_id_is_renamed_and_given_back():
    result = {"kind": "ObservationEvent", "id": "o", "source": "environment", "tool_name": "terminal",
              "tool_call_id": "c", "action_id": "a2", "observation": {"content": "x"}}  # fmt: skip
    story = _roundtrip([_action(1, "r1", tcid="c"), _action(2, "r2", tcid="c"), result])
    assert [t["tool_calls"][0]["tcid"] for t in story["turns"]] == ["c", "c#2"]
    assert story["turns"][1]["observation"]["results"][0] == {"content": "x", "source_call_id": "c#2"}


def test_a_condensation_is_a_context_turn():
    story = _roundtrip(
        [{"kind": "Condensation", "id": "k", "source": "environment", "forgotten_event_ids": ["a1"],
          "summary": "The user asked for ls.", "summary_offset": 1, "llm_response_id": "r9"}]
    )  # fmt: skip
    assert story["turns"] == [
        {"id": 1, "src": "system", "msg": "The user asked for ls.", "kind": "context",
         "extra": {"compaction": "condensation"}}
    ]  # fmt: skip


def test_an_evaluation_record_without_events_is_refused_and_the_others_read():
    rows = OUTPUT.read_bytes().splitlines()
    empty = orjson.loads(rows[0])
    empty["history"] = []
    text = orjson.dumps(empty) + b"\n" + rows[1] + b"\n"
    records = list(pc.formats.get_format("openhands-sdk").iter_records(text, "output.jsonl"))
    assert [r.error is None for r in records] == [False, True]
    assert records[0].error.pointer == "/history" and records[0].error.line == 1


def test_an_event_without_a_kind_is_refused_with_its_line():
    message = {"kind": "MessageEvent", "id": "m", "source": "user", "llm_message": {"role": "user", "content": []}}
    text = orjson.dumps(message) + b"\n" + orjson.dumps([{"kind": 3, "id": "x"}]) + b"\n"
    records = list(pc.formats.get_format("openhands-sdk").iter_records(text, "t.jsonl"))
    errors = [r.error for r in records if r.error is not None]
    assert [(e.line, e.pointer) for e in errors] == [(2, "/0")] and records[1].story is not None


def test_the_legacy_stream_and_the_sdk_events_are_never_both_claimed():
    legacy = (DATA.parent / "openhands" / "basic_interactions.json").read_bytes()
    assert detect(legacy, "x.json").NAME == "openhands"
    for path in FILES:
        assert detect(path.read_bytes(), path.name).NAME == "openhands-sdk"


def test_other_documents_are_written_as_events_that_read_back():
    legacy = DATA.parent / "openhands" / "wrong_initial_state.json"
    [story] = into_storyline("openhands", legacy.read_bytes(), document_id=legacy.name)
    with pc.collect_losses():
        text = from_storyline("openhands-sdk", [story])
    assert detect(text.encode()).NAME == "openhands-sdk"
    [back] = into_storyline("openhands-sdk", text, document_id="w.jsonl")
    assert [(t["src"], t["msg"]) for t in back["turns"]] == [(t["src"], t["msg"]) for t in story["turns"]]
    assert [t.get("tool_calls") for t in back["turns"]] == [
        [{k: c[k] for k in ("tcid", "fn", "args")} for c in t["tool_calls"]] if t.get("tool_calls") else None
        for t in story["turns"]
    ]


def test_text_the_agent_context_added_follows_what_it_was_added_to():
    """extended_content (path-scoped rules, skills) is sent after the message or the tool's output
    (to_llm_message): appended, a newline before each block; the blocks themselves stay residual."""
    rule = [{"type": "text", "text": "Rule: never edit generated files."}]
    result = {"kind": "ObservationEvent", "id": "o", "source": "environment", "tool_name": "terminal",
              "tool_call_id": "call_1", "action_id": "a1", "observation": {"content": [{"type": "text", "text": "ok"}]},
              "extended_content": rule}  # fmt: skip
    message = {"kind": "MessageEvent", "id": "m", "source": "user", "extended_content": rule,
               "llm_message": {"role": "user", "content": [{"type": "text", "text": "fix it"}]}}  # fmt: skip
    story = _roundtrip([message, _action(1, "r1"), result])
    assert story["turns"][0]["msg"] == "fix it\nRule: never edit generated files."
    assert story["turns"][1]["observation"]["results"][0]["content"] == "ok\nRule: never edit generated files."


def test_the_tools_offered_are_written_in_the_system_prompt_event():
    tools = [{"name": "terminal", "description": "Run a command"}]
    turns = [{"id": 1, "src": "system", "msg": "Be brief."}, {"id": 2, "src": "user", "msg": "hi"}]
    story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a", "tools": tools}, "turns": turns}
    with pc.collect_losses() as losses:
        [back] = into_storyline("openhands-sdk", from_storyline("openhands-sdk", [story]), document_id="w.jsonl")
    assert back["agent"]["tools"] == tools and "not in openhands-sdk: /agent/tools" not in losses.counts


def _acp(n: int, tcid: str, status: str, title: str = "Terminal", **fields) -> dict:
    """An ``ACPToolCallEvent`` as ``ACPAgent`` persists it (every field of the model, nulls included)."""
    event = {"kind": "ACPToolCallEvent", "id": f"acp{n}", "timestamp": "2026-08-20T10:00:0{n}", "source": "agent",
             "tool_call_id": tcid, "title": title, "status": status, "tool_kind": "execute", "raw_input": None,
             "raw_output": None, "content": None, "is_error": status == "failed"}  # fmt: skip
    return {**event, **fields}


#: An ACP conversation as ``ACPAgent`` writes one (openhands-sdk/openhands/sdk/agent/acp_agent.py): its placeholder
#: system prompt, the user's task, for each tool call the server ran an early ``started`` event and a terminal one
#: (claude-code-acp sends ``{}`` as the input when a call starts), and the turn closed by a ``finish`` action.
ACP_CONVERSATION = [
    {"kind": "SystemPromptEvent", "id": "sp", "timestamp": "2026-08-20T10:00:00", "source": "agent",
     "system_prompt": {"type": "text", "text": "This conversation is powered by an ACP server. The system prompt and "
                       "tools are managed by the ACP server and are not available for display."},
     "tools": [], "dynamic_context": None},
    {"kind": "MessageEvent", "id": "m1", "timestamp": "2026-08-20T10:00:00", "source": "user",
     "llm_message": {"role": "user", "content": [{"type": "text", "text": "What does the README say?"}]}},
    _acp(1, "toolu_1", "pending", "Read", tool_kind="read", raw_input={}),
    {"kind": "ConversationStateUpdateEvent", "id": "s1", "source": "environment", "key": "execution_status",
     "value": "running"},
    _acp(2, "toolu_1", "completed", "Read README.md", tool_kind="read", raw_input={"file_path": "README.md"},
         content=[{"type": "content", "content": {"type": "text", "text": "# Demo", "annotations": None,
                                                   "field_meta": None}}]),
    _acp(3, "toolu_2", "pending", "`ls`", raw_input={"command": "ls"}),
    _acp(4, "toolu_3", "pending", "`cat missing`", raw_input={"command": "cat missing"}),
    _acp(5, "toolu_2", "completed", "`ls`", raw_input={"command": "ls"}, raw_output="README.md\nsrc"),
    _acp(6, "toolu_3", "failed", "`cat missing`", raw_input={"command": "cat missing"},
         raw_output={"stderr": "cat: missing: No such file"}),
    _acp(7, "toolu_4", "pending", "Write notes.md", tool_kind="edit"),
    {"kind": "ActionEvent", "id": "fin", "source": "agent", "thought": [], "reasoning_content": "Done reading.",
     "action": {"message": "It says: # Demo", "kind": "FinishAction"}, "tool_name": "finish", "tool_call_id": "f1",
     "tool_call": {"id": "f1", "name": "finish", "arguments": "{\"message\": \"It says: # Demo\"}",
                   "origin": "completion"}, "llm_response_id": "r1"},
    {"kind": "ObservationEvent", "id": "fo", "source": "environment", "tool_name": "finish", "tool_call_id": "f1",
     "action_id": "fin", "observation": {"kind": "FinishObservation", "content": [{"type": "text",
                                         "text": "It says: # Demo"}], "is_error": False}},
]  # fmt: skip


def test_acp_tool_calls_are_calls_with_their_results(tmp_path):
    """docs/formats/openhands-sdk.md, decisions: a call an ACP server ran is a call (its first event; the name and
    input its last ones) answered by its terminal event, not residual; a call that never ended has no result."""
    story = _roundtrip(ACP_CONVERSATION)
    _, user, read, _, write, finish = story["turns"]
    assert (user["msg"], read["src"], read["msg"]) == ("What does the README say?", "agent", "")
    assert read["tool_calls"] == [{"tcid": "toolu_1", "fn": "Read README.md", "args": {"file_path": "README.md"}}]
    assert read["observation"]["results"] == [{"content": "# Demo", "source_call_id": "toolu_1"}]
    assert write["tool_calls"] == [{"tcid": "toolu_4", "fn": "Write notes.md", "args": None}]
    assert "observation" not in write and finish["tool_calls"][0]["fn"] == "finish"
    path = tmp_path / "acp.jsonl"
    path.write_bytes(b"".join(orjson.dumps(e) + b"\n" for e in ACP_CONVERSATION))
    ds = load_dataset("pchronicle", "auto", data_files=str(path), split="train", cache_dir=str(tmp_path / "c"))
    out = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    roles = [m["role"] for m in out[0]["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "tool", "assistant", "assistant",
                     "tool"]  # fmt: skip


def test_acp_calls_started_together_are_one_turn():
    """Calls started while another still runs (no terminal event between) are one turn, as parallel calls; a
    failed one is an error; a result that is no string is its JSON."""
    story = _roundtrip(ACP_CONVERSATION)
    run = story["turns"][3]
    assert [(c["tcid"], c["fn"], c.get("response")) for c in run["tool_calls"]] == [
        ("toolu_2", "`ls`", None), ("toolu_3", "`cat missing`", {"status": "error"})
    ]  # fmt: skip
    assert run["observation"]["results"] == [
        {"content": "README.md\nsrc", "source_call_id": "toolu_2"},
        {"content": '{"stderr":"cat: missing: No such file"}', "source_call_id": "toolu_3"},
    ]


def test_acp_ids_restarted_after_a_message_are_new_calls():
    """ACP servers restart their call ids in a new session: a MessageEvent parts two calls of one id (the SDK's
    _terminal_tool_indices), the second renamed; a progress frame between a call's first and last events stays
    residual and comes back."""
    message = {"kind": "MessageEvent", "id": "m2", "source": "user",
               "llm_message": {"role": "user", "content": [{"type": "text", "text": "again"}]}}  # fmt: skip
    frames = [_acp(1, "exec_1", "pending"), _acp(2, "exec_1", "in_progress", raw_output="a"),
              _acp(3, "exec_1", "completed", raw_output="ab")]  # fmt: skip
    story = _roundtrip([*frames, message, _acp(4, "exec_1", "completed", raw_input={"command": "ls"}, raw_output="c")])
    first, _, second = story["turns"]
    assert first["observation"]["results"] == [{"content": "ab", "source_call_id": "exec_1"}]
    assert second["tool_calls"][0]["tcid"] == "exec_1#2"
    assert second["observation"]["results"] == [{"content": "c", "source_call_id": "exec_1#2"}]


def test_a_sub_agent_session_s_calls_stay_residual():
    """An ACP event with an acp_session_id is a sub-agent session's (SDKs with ACPAgent.acp_subagents): not a call
    of the conversation's turns; kept whole and given back."""
    child = [_acp(1, "cell-a1", "pending", acp_session_id="child-a"),
             _acp(2, "cell-a1", "completed", acp_session_id="child-a", raw_output="done")]  # fmt: skip
    root = _acp(3, "tc-1", "completed", "Run ls", acp_session_id=None, raw_input={"command": "ls"}, raw_output="a")
    story = _roundtrip([*child, root])
    [turn] = story["turns"]
    assert turn["tool_calls"] == [{"tcid": "tc-1", "fn": "Run ls", "args": {"command": "ls"}}]


def test_a_call_of_another_source_is_a_turn_of_its_own():
    """One turn has one src: a call of the same response (or started while an ACP call runs) by another source
    opens its own turn, and each event's source comes back as it was (it was rewritten to the last one before)."""
    user_action = {**_action(2, "r1"), "source": "user"}
    story = _roundtrip([_action(1, "r1"), user_action])
    assert [(t["src"], len(t["tool_calls"])) for t in story["turns"]] == [("agent", 1), ("user", 1)]
    story = _roundtrip([_acp(1, "a", "pending"), _acp(2, "b", "pending", source="user")])
    assert [t["src"] for t in story["turns"]] == ["agent", "user"]
