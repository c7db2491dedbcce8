"""Reading Qwen Code sessions (docs/formats/qwen-code.md): the real files counted by hand, detection, the
conversation chain, calls and results, and the decisions where the source is silent."""

from __future__ import annotations

import pytest

from pchronicle_datasets.errors import FormatError, NoConversationError
from pchronicle_datasets.formats import detect, into_storyline, iter_records
from pchronicle_datasets.linking import tool_outcomes
from tests.formats.qwen_code.cases import BY_HAND, FILES, call, lines, model, raw_records, rec, result, user


def read(text: str) -> dict:
    [story] = into_storyline("qwen-code", text, document_id="chats/s1.jsonl")
    return story


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:8])
def test_real_files_counted_by_hand(path):
    n, users, agents, results, system, calls, thoughts, prompt, completion, statuses = BY_HAND[path.name[:8]]
    raw = raw_records(path)
    assert len(raw) == n
    assert [sum(r["type"] == kind for r in raw) for kind in ("user", "assistant", "tool_result")] == [
        users,
        agents,
        results,
    ]
    [story] = into_storyline("auto", path.read_bytes(), document_id=path.name)
    assert story["origin"]["format"] == "qwen-code"
    assert story["session"] == path.stem
    turns = story["turns"]
    assert [t["src"] for t in turns] == ["user"] * users + ["agent"] * agents
    got_calls = [c for t in turns for c in t.get("tool_calls") or ()]
    assert len(got_calls) == calls and all("result" in c for c in got_calls)  # every result on its call
    assert [c["response"]["status"] for c in got_calls] == statuses
    assert sum("reason" in t for t in turns) == thoughts
    assert sum(t["metrics"]["prompt_tokens"] for t in turns if "metrics" in t) == prompt
    assert sum(t["metrics"]["completion_tokens"] for t in turns if "metrics" in t) == completion
    assert all(t["model"] == "qwen3:0.6b" for t in turns if t["src"] == "agent")
    assert story["agent"] == {"id": "qwen-code", "name": "Qwen Code", "ver": "0.21.6"}
    assert story["task"] == {"env": {"state": {"cwd": "/work"}}}
    hints = story["meta"]["qwen-code"]
    assert (hints["records"], hints["system"], hints["off_chain"], hints["orphan_results"]) == (n, system, 0, 0)
    assert sum(failed for _fn, _content, failed, _call in tool_outcomes(story)) == statuses.count("error")


def test_a_real_failed_call_keeps_its_error_response():
    path = next(p for p in FILES if p.name.startswith("c190cd9d"))
    story = read(path.read_text(encoding="utf-8"))
    first = story["turns"][1]["tool_calls"][0]
    assert (first["tcid"], first["fn"], first["args"]) == ("call_y31gsjhj", "read_file", {"file_path": "src/orders.py"})
    assert first["result"] == {
        "error": "File path must be absolute, but was relative: src/orders.py. You must provide an absolute path."
    }


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:8])
def test_auto_detects_qwen_code_not_claude_code(path):
    assert detect(path.read_bytes()).NAME == "qwen-code"


def test_claude_code_records_stay_claude_code():
    claude = {
        "type": "user",
        "uuid": "u",
        "parentUuid": None,
        "sessionId": "s",
        "message": {"role": "user", "content": "hi"},
    }
    system = {"type": "system", "uuid": "u", "sessionId": "s", "subtype": "turn_duration", "durationMs": 3}
    assert detect(lines(claude)).NAME == "claude-code"
    assert detect(lines(system)).NAME == "claude-code"
    # a Qwen Code file that starts with a system record (a title set before the first prompt)
    qwen_system = rec("a", None, "system", subtype="custom_title", systemPayload={"customTitle": "t"})
    assert detect(lines(qwen_system, user("b", "a", "hi"))).NAME == "qwen-code"


def test_telemetry_is_not_a_second_result():
    tel = rec(
        "t1",
        "m1",
        "system",
        subtype="ui_telemetry",
        systemPayload={"uiEvent": {"event.name": "qwen-code.tool_call", "call_id": "c1", "function_args": {}}},
    )
    story = read(
        lines(user("u1", None, "go"), model("m1", "u1", call("c1")), tel, result("r1", "t1", "c1", {"output": "x"}))
    )
    [c] = story["turns"][1]["tool_calls"]
    assert c["result"] == {"output": "x"} and c["response"] == {"status": "success"}
    assert story["meta"]["qwen-code"]["system"] == {"ui_telemetry": 1}


def test_a_rewound_branch_is_off_the_chain_and_kept():
    text = lines(
        user("a", None, "first"),
        model("b", "a", {"text": "abandoned"}),
        user("c", None, "again"),  # a rewind re-roots the chain
        model("d", "c", {"text": "kept"}),
    )
    story = read(text)
    assert [t["msg"] for t in story["turns"]] == ["again", "kept"]
    assert story["meta"]["qwen-code"]["off_chain"] == 2
    assert story["unknown_fields"]["sources"]["qwen-code"]["fields"]["/1"]["message"]["parts"] == [
        {"text": "abandoned"}
    ]


def test_a_repeated_call_id_is_renamed_and_its_results_stay_linked():
    text = lines(
        user("a", None, "go"),
        model("b", "a", call("c0")),
        result("c", "b", "c0", {"output": "one"}),
        model("d", "c", call("c0")),
        result("e", "d", "c0", {"output": "two"}, status="error"),
    )
    story = read(text)
    first, second = (t["tool_calls"][0] for t in story["turns"][1:])
    assert (first["tcid"], first["result"]) == ("c0", {"output": "one"})
    assert (second["tcid"], second["result"], second["response"]) == ("c0#2", {"output": "two"}, {"status": "error"})
    assert story["meta"]["source_call_ids"] == {"c0#2": "c0"}


def test_text_and_thought_parts():
    several = model(
        "b", "a", {"text": "t1", "thought": True}, {"text": "t2", "thought": True}, {"text": "x"}, {"text": "y"}
    )
    story = read(lines(user("a", None, "go"), several))
    turn = story["turns"][1]
    assert turn["reason"] == "t1\n\nt2"  # derived: the thought parts stay as written (residual)
    assert turn["msg"] == [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]
    only_calls = read(lines(user("a", None, "go"), model("b", "a", call("c1"))))
    assert only_calls["turns"][1]["msg"] is None


def test_a_result_that_answers_no_call_is_kept():
    story = read(lines(user("a", None, "go"), result("b", "a", "nope", {"output": "x"})))
    assert story["meta"]["qwen-code"]["orphan_results"] == 1
    assert "/1/message/parts/0" in story["unknown_fields"]["sources"]["qwen-code"]["fields"]


def test_only_system_records_is_no_conversation():
    text = lines(rec("a", None, "system", subtype="custom_title", systemPayload={"customTitle": "t"}))
    with pytest.raises(NoConversationError):
        read(text)


def test_a_user_record_without_parts_is_refused():
    text = lines(rec("a", None, "user", message={"role": "user", "content": "hi"}))
    with pytest.raises(FormatError, match="Gemini parts") as got:
        read(text)
    assert got.value.pointer == "/0/message"


def test_a_line_that_is_not_json_is_its_own_error_record():
    text = lines(user("a", None, "go")) + "{not json\n" + lines(model("b", "a", {"text": "ok"}))
    records = list(iter_records("qwen-code", text, "s1.jsonl"))
    assert [r.error is not None for r in records] == [True, False]
    assert records[0].line == 2
    assert [t["msg"] for t in records[1].story["turns"]] == ["go", "ok"]


def test_a_user_record_that_is_not_the_users_words_is_a_context_turn():
    note = rec(
        "b",
        "a",
        "user",
        subtype="notification",
        provenance="system",
        systemPayload={"displayText": "task done"},
        message={"role": "user", "parts": [{"text": "task done"}]},
    )
    typed = rec(
        "c", "b", "user", subtype="mid_turn_user_message", message={"role": "user", "parts": [{"text": "also"}]}
    )
    goal = rec("d", "c", "user", provenance="goal_runtime", message={"role": "user", "parts": [{"text": "go on"}]})
    story = read(lines(user("a", None, "go"), note, typed, goal))
    first, context, words, runtime = story["turns"]
    assert "copied" not in first and "copied" not in words  # the user's own words (real_user, typed mid-turn)
    assert (context["copied"], context["kind"], context["extra"]) == (
        True,
        "context",
        {"qwen_code": {"context": "notification"}},
    )
    assert runtime["extra"] == {"qwen_code": {"context": "goal_runtime"}}


def test_a_sub_session_names_its_parent():
    link = rec("p", None, "system", subtype="parent_session", systemPayload={"parentSessionId": "s0"})
    story = read(lines(link, user("a", "p", "go")))
    assert story["parent"] == {"psid": "s0", "rel": "sub_session"}
    assert "/0" in story["unknown_fields"]["sources"]["qwen-code"]["fields"]  # the record itself stays
    assert "parent" not in read(lines(user("a", None, "go")))
