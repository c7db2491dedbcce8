"""Codex rollouts beyond the real files (tests/data/codex/*.written.jsonl, written from codex-rs's types):
rollbacks applied, subagent links (alone and loaded together), the pre-wrapper layout, every hosted call type,
failed exit codes as tool_stats failures, unknown lines kept, ``.jsonl.zst``, detection and the builder."""

from __future__ import annotations

from pathlib import Path

import datasets
import orjson
import pytest
import zstandard

import pchronicle_datasets as pc
from pchronicle_datasets import NoConversationError
from pchronicle_datasets.formats import codex, detect
from pchronicle_datasets.formats.residual import source_fields
from pchronicle_datasets.linking import answered_by_provider

DATA = Path(__file__).parents[2] / "data" / "codex"
CHILD = DATA / "rollback-subagent.written.jsonl"
PARENT = DATA / "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.excerpt.jsonl"
BARE = DATA / "pre-wrapper.written.jsonl"


def _one(path: Path) -> dict:
    (story,) = codex.decode(path.read_bytes(), path.name)
    return story


def _lines(path: Path) -> list:
    return [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]


def test_a_rollback_drops_the_rolled_back_turn_and_keeps_its_lines():
    story = _one(CHILD)
    texts = [t["msg"] for t in story["turns"] if t["src"] == "user"]
    assert texts == ["second try"]  # "first try" was rolled back
    assert story["meta"]["codex"]["rolled_back"] == {"turns": 1, "lines": 6}
    assert all(c["tcid"] != "ls_1" for t in story["turns"] for c in t.get("tool_calls") or ())
    fields = source_fields(story, "codex")["fields"]
    assert fields["/2"]["payload"]["content"][0]["text"] == "first try"  # kept whole, written back
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == _lines(CHILD)
    # the usage of the rolled-back response is not a turn's
    assert [t["metrics"] for t in story["turns"] if "metrics" in t] == [{"prompt_tokens": 200, "completion_tokens": 20}]


def test_every_hosted_call_type_is_a_call_and_binary_results_stay_residual():
    story = _one(CHILD)
    calls = [c for t in story["turns"] for c in t.get("tool_calls") or ()]
    assert [(c["fn"], c.get("kind")) for c in calls] == [
        ("tool_search", "tool_search"),
        ("image_generation", "image_generation"),
    ]
    assert source_fields(story, "codex")["fields"]["/12/payload/result"] == "iVBORw0KGgo="
    (user,) = [t for t in story["turns"] if t["src"] == "user"]
    assert user["extra"]["media"][0]["image_url"].startswith("data:image/png")  # the image by reference
    (compaction,) = [t for t in story["turns"] if (t.get("extra") or {}).get("compaction") == "item"]
    assert compaction["kind"] == "context"
    assert source_fields(story, "codex")["fields"]["/16"]["type"] == "world_state"  # an unknown line, kept
    late = [r for t in story["turns"] for r in (t.get("observation") or {}).get("results") or ()]
    assert late == [{"content": "late", "source_call_id": "nobody"}]  # an output no call of the file answers
    # the image came back in its own item (residual): answered by the provider; the tool search, whose output this
    # written file leaves out, is what keeps the flag
    assert [answered_by_provider(c) for c in calls] == [False, True]
    del story["turns"][1]["tool_calls"][0]
    assert "tool_call_unanswered" not in pc.flags(story)


def test_a_child_says_its_parent_alone_and_the_parent_lists_it_when_loaded_together(tmp_path):
    child = _one(CHILD)
    assert child["parent"] == {"psid": "019c8a59-e9dd-71f0-9ae3-4079fe9726a9", "rel": "spawn"}
    parent = _one(PARENT)
    assert "children" not in parent
    assert codex.link([parent, child])[0]["children"] == ["child-0001"]
    folder = tmp_path / "sessions" / "2026" / "03" / "01"
    folder.mkdir(parents=True)
    (folder / CHILD.name).write_bytes(CHILD.read_bytes())
    (folder / (PARENT.name + ".zst")).write_bytes(zstandard.ZstdCompressor().compress(PARENT.read_bytes()))
    for config in ("codex", "auto"):
        ds = datasets.load_dataset(
            "pchronicle", config, data_dir=str(tmp_path / "sessions"), split="train", cache_dir=str(tmp_path / config)
        )
        rows = {r["session"]: r for r in ds}
        assert rows["019c8a59-e9dd-71f0-9ae3-4079fe9726a9"]["children"] == ["child-0001"]
        assert rows["child-0001"]["parent"]["psid"] == "019c8a59-e9dd-71f0-9ae3-4079fe9726a9"
        back = pc.row_to_story(rows["019c8a59-e9dd-71f0-9ae3-4079fe9726a9"])
        assert [orjson.loads(x) for x in codex.encode([back]).splitlines()] == _lines(PARENT)


def test_jsonl_zst_reads_like_the_plain_file():
    data = PARENT.read_bytes()
    packed = zstandard.ZstdCompressor().compress(data)
    (plain,) = pc.into_storyline("codex", data, document_id="r.jsonl")
    (zst,) = pc.into_storyline("codex", packed, document_id="r.jsonl")
    assert zst == plain


def test_the_pre_wrapper_layout():
    story = _one(BARE)
    assert story["session"] == "5973b6c0-94b8-487b-a530-2aeb6098ae0e"
    assert story["meta"]["codex"]["layout"] == "bare" and detect(BARE.read_bytes()) is codex
    assert [t["src"] for t in story["turns"]] == ["user", "agent", "agent"]
    (call,) = story["turns"][1]["tool_calls"]
    assert (call["fn"], call["args"], call["response"]) == ("shell", {"command": ["ls"]}, {"exit_code": 0})
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == _lines(BARE)


def test_a_failed_exit_code_counts_as_a_failure():
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
         "payload": {"type": "function_call", "name": "exec_command", "arguments": "{}", "call_id": "c"}},
        {"timestamp": "2026-01-01T00:00:02Z", "type": "response_item",
         "payload": {"type": "function_call_output", "call_id": "c", "output": "Process exited with code 1\nno"}},
    ]  # fmt: skip
    (story,) = codex.decode("".join(orjson.dumps(x).decode() + "\n" for x in lines), "f.jsonl")
    assert story["turns"][0]["tool_calls"][0]["response"] == {"exit_code": 1, "status": "error"}
    assert pc.compute_tool_stats(story) == [{"tool": "exec_command", "count": 1, "success": 0, "failure": 1}]


def test_refusals_name_the_line():
    with pytest.raises(NoConversationError, match="only its header and events"):
        codex.decode(b'{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}\n{"timestamp":"t",'
                     b'"type":"event_msg","payload":{"type":"task_started"}}\n', "f.jsonl")  # fmt: skip
    records = list(codex.iter_records(b'{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}\nnot json\n'
                                      b'{"timestamp":"t","type":"response_item","payload":{"type":"message",'
                                      b'"role":"user","content":"hi"}}\n', "f.jsonl"))  # fmt: skip
    assert [r.error.line for r in records if r.error] == [2]
    assert [t["msg"] for r in records if r.story for t in r.story["turns"]] == ["hi"]


def test_documents_of_other_formats_are_written_as_a_rollout():
    story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
        {"id": 1, "src": "developer", "msg": "be brief"}, {"id": 2, "src": "user", "msg": "ls?"},
        {"id": 3, "src": "agent", "msg": "", "reason": "list", "tool_calls": [{"tcid": "c1", "fn": "ls", "args": {}}],
         "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]}}]}  # fmt: skip
    text = pc.from_storyline("codex", [story])
    (back,) = pc.into_storyline("codex", text, document_id="x.jsonl")
    assert [(t["src"], t["msg"]) for t in back["turns"]] == [("developer", "be brief"), ("user", "ls?"), ("agent", "")]
    assert back["turns"][2]["reason"] == "list" and back["turns"][2]["tool_calls"][0]["fn"] == "ls"


# codex-rs/protocol ResponseItem::ToolSearchCall {id, call_id, status, execution, arguments} and
# ToolSearchOutput {call_id, status, execution, tools}, as Codex 0.146 persists them (the shape of
# jazzyalex/agent-sessions Resources/Fixtures/stage0/agents/codex/small.jsonl lines 12-13).
TOOL_SEARCH = [
    {"timestamp": "2026-08-03T10:48:56.000Z", "type": "session_meta",
     "payload": {"id": "ts-thread", "cli_version": "0.146.0"}},
    {"timestamp": "2026-08-03T10:48:56.100Z", "type": "response_item",
     "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "add an event"}]}},
    {"timestamp": "2026-08-03T10:48:57.000Z", "type": "response_item",
     "payload": {"type": "tool_search_call", "id": "ts-1", "call_id": "call-3", "status": "completed",
                 "execution": "local", "arguments": {"query": "calendar"}}},
    {"timestamp": "2026-08-03T10:48:57.100Z", "type": "response_item",
     "payload": {"type": "tool_search_output", "id": "tso-1", "call_id": "call-3", "status": "completed",
                 "execution": "local", "tools": [{"type": "function", "name": "create_event", "parameters": {}}]}},
]  # fmt: skip


def test_a_tool_search_reads_its_arguments_and_its_output_answers_it():
    text = b"\n".join(orjson.dumps(x) for x in TOOL_SEARCH) + b"\n"
    (story,) = codex.decode(text, "tool-search.jsonl")
    (turn,) = [t for t in story["turns"] if t.get("tool_calls")]
    assert turn["tool_calls"] == [
        {"tcid": "call-3", "fn": "tool_search", "args": {"query": "calendar"}, "kind": "tool_search"}
    ]
    (result,) = turn["observation"]["results"]
    assert result == {"content": TOOL_SEARCH[3]["payload"]["tools"], "source_call_id": "call-3"}
    fields = source_fields(story, "codex")["fields"]
    assert fields["/3/payload/execution"] == "local" and fields["/2/payload/status"] == "completed"
    messages = pc.to_messages(pc.story_to_row(story))["messages"]
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ["call-3"]  # not an unanswered call
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == TOOL_SEARCH


def test_a_server_tool_search_without_call_id_is_answered_by_the_output_after_it():
    # execution "server": the Responses API gives the search and its output ids but no call_id
    lines = [
        TOOL_SEARCH[0],
        TOOL_SEARCH[1],
        {"timestamp": "2026-09-01T10:00:02Z", "type": "response_item",
         "payload": {"type": "tool_search_call", "id": "tsc_server_1", "execution": "server", "status": "completed",
                     "arguments": {"goal": "Find the weather tool"}}},
        {"timestamp": "2026-09-01T10:00:02Z", "type": "response_item",
         "payload": {"type": "tool_search_output", "id": "tso_server_1", "execution": "server", "status": "completed",
                     "tools": [{"type": "function", "name": "get_weather", "parameters": {}}]}},
    ]  # fmt: skip
    (story,) = codex.decode(b"\n".join(orjson.dumps(x) for x in lines) + b"\n", "server-search.jsonl")
    (turn,) = [t for t in story["turns"] if t.get("tool_calls")]
    assert turn["observation"]["results"][0]["source_call_id"] == "tsc_server_1"
    messages = pc.to_messages(pc.story_to_row(story))["messages"]
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ["tsc_server_1"]
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == lines  # no call_id written back


def test_a_turn_the_user_interrupted_is_counted_and_flagged():
    # Codex's TurnAbortedEvent {reason} (TurnAbortReason: interrupted, replaced, review_ended; newer builds add
    # turn_id): only "interrupted" is the user stopping the agent.
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s", "cwd": "/w"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "run the tests"}]}},
        {"timestamp": "2026-01-01T00:00:02Z", "type": "event_msg",
         "payload": {"type": "turn_aborted", "turn_id": "t1", "reason": "interrupted"}},
        {"timestamp": "2026-01-01T00:00:03Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "use pytest -x"}]}},
        {"timestamp": "2026-01-01T00:00:04Z", "type": "event_msg",
         "payload": {"type": "turn_aborted", "turn_id": "t2", "reason": "replaced"}},
        {"timestamp": "2026-01-01T00:00:05Z", "type": "response_item",
         "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}},
    ]  # fmt: skip
    (story,) = codex.decode("".join(orjson.dumps(x).decode() + "\n" for x in lines), "f.jsonl")
    assert story["meta"]["codex"]["interrupted"] == 1
    assert pc.flags(story) == ["interrupted"]
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == lines  # the events stay residual
    replaced = [line for line in lines if line["payload"].get("reason") != "interrupted"]
    (other,) = codex.decode("".join(orjson.dumps(x).decode() + "\n" for x in replaced), "f.jsonl")
    assert "interrupted" not in other["meta"]["codex"] and pc.flags(other) == []


@pytest.mark.parametrize(
    ("text", "context"),
    [  # the texts of codex-rs's own tests of its contextual user fragments
        ("<environment_context>\n<cwd>/tmp</cwd>\n</environment_context>", "environment_context"),
        ("# AGENTS.md instructions for /tmp\n\n<INSTRUCTIONS>\nbody\n</INSTRUCTIONS>", "agents_md"),
        ("<SUBAGENT_NOTIFICATION>{}</subagent_notification>", "subagent_notification"),
        ("<user_shell_command>echo hi</user_shell_command>", "user_shell_command"),
        ("<skill>\n<name>demo</name>\n<path>skills/demo/SKILL.md</path>\nbody\n</skill>", "skill"),
        ("<turn_aborted>\n  <turn_id>t-1</turn_id>\n  <reason>interrupted</reason>\n</turn_aborted>", "turn_aborted"),
        # codex-cli 0.160.0, a Stop hook's block reason as Codex wrote it (a real rollout's line, path shortened)
        (
            '<hook_prompt hook_run_id="stop:3:/tmp/codex-home/hooks.json">kit-blocker: one more step before stopping.'
            " Run the shell command `sleep 12` with your shell tool, then reply with the single line: kit-blocker"
            " acknowledged.</hook_prompt>",
            "hook_prompt",
        ),
        (
            '<hook_prompt hook_run_ids="[&quot;hook-run-1&quot;,&quot;hook-run-2&quot;]">Retry with care &amp; joy.'
            "</hook_prompt>",
            "hook_prompt",
        ),
        (
            "<recommended_plugins>\nHere is a list of plugins that are available but not installed.\n\n- Box"
            " (box@openai-curated-remote)\n</recommended_plugins>",
            "recommended_plugins",
        ),
        ('<codex_internal_context source="goals">\nKeep going.\n</codex_internal_context>', "internal_context"),
        ('<external_context source="hook" kind="untrusted">\nbuild is red\n</external_context>', "external_context"),
        ("hello", None),
        ("<hook_prompt> is what Codex writes for a hook", None),
        ("fix the <skill> parser", None),
        ("<environment_context> is the tag to parse", None),  # a start marker without its end: the user's words
    ],
)
def test_a_message_codex_writes_itself_is_a_context_turn(text, context):
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s", "cwd": "/w"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}},
        {"timestamp": "2026-01-01T00:00:02Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]}},
        {"timestamp": "2026-01-01T00:00:03Z", "type": "response_item",
         "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}},
    ]  # fmt: skip
    (story,) = codex.decode("".join(orjson.dumps(x).decode() + "\n" for x in lines), "f.jsonl")
    first, prompt = story["turns"][:2]
    assert first["src"] == prompt["src"] == "user" and "copied" not in prompt
    if context is None:
        assert "copied" not in first and "extra" not in first
    else:
        assert first["copied"] is True and first["kind"] == "context"
        assert first["extra"] == {"codex": {"context": context}}
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == lines
    row = pc.story_to_row(story)
    kept = [m["content"] for m in pc.to_messages(row, drop_copied=True)["messages"] if m["role"] == "user"]
    assert kept == (["fix it"] if context else [text, "fix it"])
    # A session prefix is not a reason to leave the conversation out; a hook's or a skill's text is (``injected``,
    # as Claude Code's isMeta lines: docs/training.md, "Flags").
    injected = context in ("hook_prompt", "external_context", "skill")
    assert pc.flags(story) == (["injected"] if injected else [])


@pytest.mark.parametrize(
    ("kinds", "context"),
    [  # codex-cli 0.15x tags each part (real: environment contexts, a plugin list, user.text, a hook prompt's unknown)
        (["app.context"], "app.context"),  # a fragment no marker names: codex-rs's own tags say Codex wrote it
        (["plugins.recommendations", "environments.environment_context"], "plugins.recommendations"),
        (["user.text"], None),
        (["unknown"], None),
        (["app.context", "user.text"], None),  # one part the user's: the message is the user's
        (["app.context", "app.context", "app.context"], None),  # more kinds than parts: codex-rs stays conservative
        ([], None),
    ],
)
def test_codex_s_own_part_tags_make_a_message_context(kinds, context):
    parts = [
        {"type": "input_text", "text": "<app-context>ide: vscode</app-context>"},
        {"type": "input_text", "text": "x"},
    ]
    payload = {"type": "message", "role": "user", "content": parts[: max(1, min(len(kinds), 2))]}
    payload["internal_chat_message_metadata_passthrough"] = {"content_item_kinds": kinds}
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s", "cli_version": "0.156.1"}},
        {"timestamp": "2026-01-01T00:00:01Z", "type": "response_item", "payload": payload},
        {"timestamp": "2026-01-01T00:00:02Z", "type": "response_item",
         "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}},
    ]  # fmt: skip
    (story,) = codex.decode("".join(orjson.dumps(x).decode() + "\n" for x in lines), "f.jsonl")
    first = story["turns"][0]
    if context is None:
        assert "copied" not in first
    else:
        assert first["copied"] is True and first["extra"] == {"codex": {"context": context}}
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == lines


SEAT = DATA / "rollout-2026-09-28T13-01-37-01a0e81b-4af7-7330-a113-bad47ba77c3e.excerpt.jsonl"
ROOT = DATA / "rollout-2026-09-28T13-01-29-01a0e81b-2a8b-7240-b94c-ad2ada7813da.excerpt.jsonl"


def test_a_message_between_agents_is_a_context_turn_of_its_text():
    # codex-cli 0.156.1 (real lines): the task the parent gave the subagent is an ``agent_message`` item, the only
    # thing of the subagent's conversation before its call; it was an unknown item, kept whole as residual.
    story, lines = _one(SEAT), _lines(SEAT)
    task = story["turns"][1]
    assert task["src"] == "user" and task["kind"] == "context" and task["copied"] is True
    assert task["msg"] == "Message Type: NEW_TASK\nTask name: /root/echo_task\nSender: /root\nPayload:\n"
    assert task["extra"] == {"codex": {"context": "agent_message", "author": "/root", "recipient": "/root/echo_task"}}
    assert task["ts"] == "2026-09-28T13:01:39.543Z"
    fields = source_fields(story, "codex")["fields"]
    assert fields["/3/payload/content/1"]["type"] == "encrypted_content"  # the opaque payload, residual in place
    assert fields["/3/payload/author"] == "/root" and fields["/3/payload/recipient"] == "/root/echo_task"
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == lines
    messages = pc.to_messages(pc.story_to_row(story))["messages"]
    assert [m["role"] for m in messages] == ["developer", "user", "assistant", "tool", "assistant"]
    assert [m["role"] for m in pc.to_messages(pc.story_to_row(story), drop_copied=True)["messages"]] == [
        "developer", "assistant", "tool", "assistant"]  # fmt: skip


def test_the_newest_subagent_and_its_parent_link_when_loaded_together(tmp_path):
    for path in (SEAT, ROOT):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    ds = datasets.load_dataset("pchronicle", "auto", data_dir=str(tmp_path), split="train")
    stories = {s["session"]: s for s in map(pc.row_to_story, ds)}
    root, seat = stories["01a0e81b-2a8b-7240-b94c-ad2ada7813da"], stories["01a0e81b-4af7-7330-a113-bad47ba77c3e"]
    assert root["children"] == [seat["session"]] and seat["parent"] == {"psid": root["session"], "rel": "spawn"}
    (spawn,) = root["turns"][0]["tool_calls"]
    assert spawn["fn"] == "spawn_agent"  # its ``namespace`` ("collaboration") stays residual
    assert source_fields(root, "codex")["fields"]["/1/payload/namespace"] == "collaboration"


@pytest.mark.parametrize(
    ("kind", "extra"), [("context_compaction", "context_compaction"), ("compaction_summary", "item")]
)
def test_every_compaction_item_is_a_compaction_turn(kind, extra):
    # codex-rs ResponseItem::ContextCompaction (persisted by policy.rs in late 2026) and Compaction's older name
    # ``compaction_summary`` (a serde alias): unknown items before, so the compaction was no turn at all.
    lines = [
        {"timestamp": "2026-10-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s", "cli_version": "0.156.1"}},
        {"timestamp": "2026-10-01T00:00:01Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go on"}]}},
        {"timestamp": "2026-10-01T00:00:02Z", "type": "response_item",
         "payload": {"type": kind, "id": "cmp_1", "encrypted_content": "gAAAA-opaque"}},
        {"timestamp": "2026-10-01T00:00:03Z", "type": "response_item",
         "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}},
    ]  # fmt: skip
    (story,) = codex.decode("".join(orjson.dumps(x).decode() + "\n" for x in lines), "f.jsonl")
    turn = story["turns"][1]
    assert (turn["src"], turn["kind"], turn["msg"], turn["extra"]) == ("system", "context", "", {"compaction": extra})
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == lines
    same = [{**x, "payload": {**x["payload"], "type": "compaction"}} if i == 2 else x for i, x in enumerate(lines)]
    (plain,) = codex.decode("".join(orjson.dumps(x).decode() + "\n" for x in same), "f.jsonl")
    messages = pc.to_messages(pc.story_to_row(story))["messages"]
    assert messages == pc.to_messages(pc.story_to_row(plain))["messages"]  # the training text of a compaction
    assert [m["role"] for m in messages].count("user") == 1  # never a user turn


def test_an_inter_agent_communication_line_stays_residual_whole():
    # codex-rs history ``RolloutItemWire::InterAgentCommunication {payload: {author, recipient, other_recipients,
    # content, trigger_turn}}``: the mailbox's delivery record. What the model reads of it is the ``agent_message``
    # item (mapped above); mapping both would give the message twice, so this line is kept whole (a decision:
    # docs/formats/codex.md, "Events and context lines").
    lines = [
        {"timestamp": "2026-10-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
        {"timestamp": "2026-10-01T00:00:01Z", "type": "inter_agent_communication",
         "payload": {"author": "/root", "recipient": "/root/w", "other_recipients": [], "content": "do x",
                     "trigger_turn": True}},
        {"timestamp": "2026-10-01T00:00:02Z", "type": "response_item",
         "payload": {"type": "agent_message", "author": "/root", "recipient": "/root/w",
                     "content": [{"type": "input_text", "text": "do x"}]}},
    ]  # fmt: skip
    (story,) = codex.decode("".join(orjson.dumps(x).decode() + "\n" for x in lines), "f.jsonl")
    assert [(t["src"], t["msg"]) for t in story["turns"]] == [("user", "do x")]
    assert source_fields(story, "codex")["fields"]["/1"] == lines[1]
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == lines


@pytest.mark.parametrize(
    "meta",
    [
        {"id": "child", "forked_from_id": "parent", "cwd": "/tmp/new"},  # a fork (``codex fork``, /fork)
        {"id": "child", "session_id": "parent", "parent_thread_id": "parent",  # a subagent given the parent's context
         "source": {"subagent": {"thread_spawn": {"parent_thread_id": "parent", "depth": 1}}}},
    ],
)  # fmt: skip
def test_a_forked_rollout_that_replays_its_parents_history_is_one_session(meta):
    # A forked rollout replays the history it came from after its own session_meta, starting with that history's
    # session_meta (codex-rs reads the FIRST session_meta as the thread and keeps every item; the shape of the
    # tests of four session readers, e.g. "first_session_meta_id_wins_over_replayed_session_meta"). It was split
    # at the second meta: a first document with no turn (refused) and a second one under the parent's session.
    lines = [
        {"timestamp": "2026-05-18T05:09:14.748Z", "type": "session_meta", "payload": meta},
        {"timestamp": "2026-05-17T14:16:11.000Z", "type": "session_meta",
         "payload": {"id": "parent", "forked_from_id": "grandparent", "cwd": "/tmp/old"}},
        {"timestamp": "2026-05-17T14:16:11.000Z", "type": "session_meta", "payload": {"id": "grandparent"}},
        {"timestamp": "2026-05-17T14:16:11.500Z", "type": "turn_context", "payload": {"model": "gpt-5.5"}},
        {"timestamp": "2026-05-17T14:16:12.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "old"}]}},
        {"timestamp": "2026-05-18T05:09:15.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hello"}]}},
    ]  # fmt: skip
    (story,) = codex.decode("".join(orjson.dumps(x).decode() + "\n" for x in lines), "f.jsonl")
    assert story["session"] == "child" and [t["msg"] for t in story["turns"]] == ["old", "hello"]
    # a fork names where it came from; a subagent its spawner
    assert story["parent"] == {"psid": "parent", "rel": "fork" if "forked_from_id" in meta else "spawn"}
    # no line of such a replay says where it ends (no ordinals): its turns are not marked (codex.md, "Forks")
    assert not any(t.get("copied") for t in story["turns"])
    fields = source_fields(story, "codex")["fields"]
    assert fields["/1"] == lines[1] and fields["/2"] == lines[2]  # the replayed metas, residual whole
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == lines
    # what the writer gives for several documents still reads back as as many: the child's turns come first
    other = {**story, "session": "parent", "meta": {}, "unknown_fields": {}, "origin": {"format": "chat"}}
    other.pop("parent", None)
    assert [d["session"] for d in codex.decode(codex.encode([story, other]), "two.jsonl")] == ["child", "parent"]


# A subagent given its parent's history in a build that numbers its lines (``ordinal``), in the shape of a public
# session viewer's fixture (flanksource/captain, pkg/session: a child meta with ``forked_from_id``,
# ``parent_thread_id`` and ``subagent_history_start_ordinal``, then the parent's meta, turn context and items
# replayed under the child's ordinals, then the child's own); the words and ids are made up.
INHERITING = [
    {"timestamp": "2026-08-20T09:29:32.898Z", "ordinal": 0, "type": "session_meta",
     "payload": {"id": "child-thread", "session_id": "root-thread", "forked_from_id": "root-thread",
                 "parent_thread_id": "root-thread", "thread_source": "subagent", "agent_path": "/root/contract",
                 "subagent_history_start_ordinal": 7}},
    {"timestamp": "2026-08-20T09:29:32.898Z", "ordinal": 1, "type": "session_meta",
     "payload": {"id": "root-thread", "session_id": "root-thread", "thread_source": "user"}},
    {"timestamp": "2026-08-20T09:29:32.899Z", "ordinal": 2, "type": "turn_context",
     "payload": {"turn_id": "root-turn", "model": "gpt-5.5", "effort": "medium"}},
    {"timestamp": "2026-08-20T09:29:32.899Z", "ordinal": 3, "type": "response_item",
     "payload": {"type": "message", "role": "user",
                 "content": [{"type": "input_text",
                              "text": "<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>"}]}},
    {"timestamp": "2026-08-20T09:29:32.899Z", "ordinal": 4, "type": "response_item",
     "payload": {"type": "message", "role": "user",
                 "content": [{"type": "input_text", "text": "check the contract"}]}},
    {"timestamp": "2026-08-20T09:29:32.900Z", "ordinal": 5, "type": "response_item",
     "payload": {"type": "function_call", "call_id": "call_1", "name": "spawn_agent", "arguments": "{}"}},
    {"timestamp": "2026-08-20T09:29:32.900Z", "ordinal": 6, "type": "response_item",
     "payload": {"type": "function_call_output", "call_id": "call_1", "output": "spawned"}},
    {"timestamp": "2026-08-20T09:29:35.000Z", "ordinal": 7, "type": "turn_context",
     "payload": {"turn_id": "child-turn", "model": "gpt-5.5", "effort": "medium"}},
    {"timestamp": "2026-08-20T09:29:35.001Z", "ordinal": 8, "type": "response_item",
     "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "read clause 4"}]}},
    {"timestamp": "2026-08-20T09:29:36.000Z", "ordinal": 9, "type": "response_item",
     "payload": {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "Clause 4 caps the fee."}]}},
]  # fmt: skip


def test_a_subagents_inherited_history_is_context_and_its_own_turns_are_not():
    text = "".join(orjson.dumps(x).decode() + "\n" for x in INHERITING)
    (story,) = codex.decode(text, "child.jsonl")
    pc.validate(story)
    # by hand: the items below ordinal 7 are 2 user messages and the call with its output (3 turns), the child's
    # own a question and an answer (2 turns)
    start = INHERITING[0]["payload"]["subagent_history_start_ordinal"]
    items = [x for x in INHERITING if x["type"] == "response_item"]
    assert sum(1 for x in items if x["ordinal"] < start) == 4 and sum(1 for x in items if x["ordinal"] >= start) == 2
    marks = [
        (t["src"], t.get("copied", False), t.get("extra", {}).get("codex", {}).get("context")) for t in story["turns"]
    ]
    assert marks == [("user", True, "environment_context"), ("user", True, "inherited"), ("agent", True, "inherited"),
                     ("user", False, None), ("agent", False, None)]  # fmt: skip
    assert story["parent"] == {"psid": "root-thread", "rel": "spawn"}  # a subagent: its spawner, also its source
    own = pc.to_messages(story, arguments="object", drop_copied=True)["messages"]
    assert [(m["role"], m["content"]) for m in own] == [
        ("user", "read clause 4"),
        ("assistant", "Clause 4 caps the fee."),
    ]
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == INHERITING


def test_a_fork_by_reference_names_its_parent_and_copies_nothing():
    # Newer builds fork by reference: the fork's meta names the thread and where its history ends there
    # (``forked_from_ordinal_exclusive``, ``history_base``), and the file holds only the fork's own lines.
    lines = [
        {"timestamp": "2026-10-02T08:00:00Z", "ordinal": 0, "type": "session_meta",
         "payload": {"id": "fork-1", "forked_from_id": "root-1", "forked_from_ordinal_exclusive": 15,
                     "history_base": {"thread_id": "root-1", "end_byte_offset": 4096, "end_ordinal_exclusive": 15}}},
        {"timestamp": "2026-10-02T08:00:01Z", "ordinal": 1, "type": "response_item",
         "payload": {"type": "message", "role": "user",
                     "content": [{"type": "input_text", "text": "try it the other way"}]}},
    ]  # fmt: skip
    (story,) = codex.decode("".join(orjson.dumps(x).decode() + "\n" for x in lines), "fork.jsonl")
    assert story["parent"] == {"psid": "root-1", "rel": "fork"} and pc.flags(story) == ["incomplete"]
    assert [(t["msg"], t.get("copied", False)) for t in story["turns"]] == [("try it the other way", False)]


# codex exec --json output of codex-cli 0.146.1 (modelled on real lines a public test quotes verbatim; the command
# output shortened): a CLI notice, a message, a command and a file change, the usage; then `codex exec resume`.
EXEC_146 = [
    {"type": "thread.started", "thread_id": "019fd9f6-3e33-72e0-89e8-49e33838d1cf"},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "error",
     "message": "Skill descriptions were shortened to fit the 2% skills context budget."}},
    {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "I'll do it in order."}},
    {"type": "item.started", "item": {"id": "item_2", "type": "command_execution", "command": "/bin/zsh -lc 'ls'",
     "aggregated_output": "", "exit_code": None, "status": "in_progress"}},
    {"type": "item.completed", "item": {"id": "item_2", "type": "command_execution", "command": "/bin/zsh -lc 'ls'",
     "aggregated_output": "notes.txt\n", "exit_code": 0, "status": "completed"}},
    {"type": "item.completed", "item": {"id": "item_3", "type": "reasoning", "text": "**Editing** the notes."}},
    {"type": "item.completed", "item": {"id": "item_4", "type": "file_change",
     "changes": [{"path": "/repo/notes.txt", "kind": "update"}], "status": "completed"}},
    {"type": "item.completed", "item": {"id": "item_5", "type": "mcp_tool_call", "server": "docs", "tool": "search",
     "arguments": {"q": "x"}, "result": {"content": [], "structured_content": None}, "error": None,
     "status": "completed"}},
    {"type": "item.completed", "item": {"id": "item_6", "type": "command_execution", "command": "make",
     "aggregated_output": "Error 2", "exit_code": 2, "status": "failed"}},
    {"type": "item.completed", "item": {"id": "item_7", "type": "agent_message", "text": "DONE"}},
    {"type": "turn.completed", "usage": {"input_tokens": 79281, "cached_input_tokens": 60416,
     "cache_write_input_tokens": 0, "output_tokens": 301, "reasoning_output_tokens": 19}},
    {"type": "thread.started", "thread_id": "019fd9f6-3e33-72e0-89e8-49e33838d1cf"},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": "notes.txt"}},
    {"type": "turn.completed", "usage": {"input_tokens": 99831, "output_tokens": 307}},
]  # fmt: skip


def test_codex_exec_json_output_reads_as_one_session_and_writes_back():
    # `codex exec --json` prints an event stream, not a rollout: no prompt, no timestamps, a command's
    # aggregated_output as its only tool output. It was "not recognised" by any format.
    data = "".join(orjson.dumps(x).decode() + "\n" for x in EXEC_146)
    assert detect(data) is codex
    (story,) = codex.decode(data, "run.jsonl")
    assert story["session"] == "019fd9f6-3e33-72e0-89e8-49e33838d1cf"  # the resumed thread's second start: one
    turns = story["turns"]
    assert [(t["src"], t.get("kind"), t["msg"]) for t in turns] == [
        ("system", "error", "Skill descriptions were shortened to fit the 2% skills context budget."),
        ("agent", None, "I'll do it in order."),  # the message and the call it announced: one response
        ("agent", None, ""),  # the reasoning and the file change after it
        ("agent", None, ""),
        ("agent", None, ""),
        ("agent", None, "DONE"),
        ("agent", None, "notes.txt"),
    ]
    assert turns[2]["reason"] == "**Editing** the notes."
    calls = [c for t in turns for c in t.get("tool_calls") or ()]
    assert [(c["tcid"], c["fn"], c["args"], c.get("response")) for c in calls] == [
        ("item_2", "command_execution", {"command": "/bin/zsh -lc 'ls'"}, {"exit_code": 0}),
        ("item_4", "file_change", {"changes": [{"path": "/repo/notes.txt", "kind": "update"}]}, None),
        ("item_5", "search", {"q": "x"}, None),
        ("item_6", "command_execution", {"command": "make"}, {"exit_code": 2, "status": "error"}),
    ]
    results = [r for t in turns for r in (t.get("observation") or {}).get("results") or ()]
    assert [(r["source_call_id"], r["content"]) for r in results] == [
        ("item_2", "notes.txt\n"),
        ("item_4", "completed"),  # whether the patch applied: a file change's only result
        ("item_5", {"content": [], "structured_content": None}),
        ("item_6", "Error 2"),
    ]
    # the usage of each exec turn (all its model calls) on its last agent turn
    assert turns[5]["metrics"]["prompt_tokens"] == 79281 and turns[6]["metrics"]["prompt_tokens"] == 99831
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == EXEC_146
    stats = {s["tool"]: s for s in pc.story_to_row(story)["tool_stats"]}
    assert stats["command_execution"]["failure"] == 1 and stats["command_execution"]["count"] == 2
    roles = [m["role"] for m in pc.to_messages(pc.story_to_row(story))["messages"]]
    assert "user" not in roles and roles.count("tool") == 4  # the stream holds no prompt
    assert "tool_call_unanswered" not in pc.flags(story)  # every call answered, the file change by its status


def test_two_exec_streams_of_one_thread_written_together_read_back_as_two():
    (story,) = codex.decode("".join(orjson.dumps(x).decode() + "\n" for x in EXEC_146[:12]), "a.jsonl")
    with pc.collect_losses() as losses:
        text = codex.encode([story, story])
    assert [d["session"] for d in codex.decode(text, "two.jsonl")] == [story["session"], story["session"] + "#1"]
    assert dict(losses.counts) == {"session_renamed": 1}


def test_an_exec_command_end_event_gives_its_call_the_exit_code():
    # codex-rs ExecCommandEndEvent {call_id, exit_code, aggregated_output, …}, persisted in the extended event mode
    # (0.146-0.149 rollouts carry it): the exit code of the call it names, also where the output's text says none.
    lines = [
        {"timestamp": "2026-08-03T10:48:56.000Z", "type": "session_meta", "payload": {"id": "s"}},
        {"timestamp": "2026-08-03T10:48:57.000Z", "type": "response_item",
         "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "build it"}]}},
        {"timestamp": "2026-08-03T10:48:58.000Z", "type": "response_item",
         "payload": {"type": "function_call", "name": "exec_command", "arguments": '{"cmd":"make"}', "call_id": "c1"}},
        {"timestamp": "2026-08-03T10:48:59.000Z", "type": "event_msg",
         "payload": {"type": "exec_command_end", "call_id": "c1", "command": ["make"], "aggregated_output": "error",
                     "exit_code": 2, "duration": {"secs": 1, "nanos": 0}, "status": "failed"}},
        {"timestamp": "2026-08-03T10:48:59.100Z", "type": "response_item",
         "payload": {"type": "function_call_output", "call_id": "c1", "output": "make: *** [all] Error 2"}},
        {"timestamp": "2026-08-03T10:49:00.000Z", "type": "event_msg",
         "payload": {"type": "exec_command_end", "call_id": "elsewhere", "exit_code": 0}},
    ]  # fmt: skip
    (story,) = codex.decode("".join(orjson.dumps(x).decode() + "\n" for x in lines), "f.jsonl")
    (call,) = story["turns"][1]["tool_calls"]
    assert call["response"] == {"exit_code": 2, "status": "error"}
    assert pc.story_to_row(story)["tool_stats"][0]["failure"] == 1
    assert source_fields(story, "codex")["fields"]["/3"] == lines[3]  # the event stays residual whole
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == lines


# Two real lines of a 2026-07-03 rollout quoted verbatim in a public test (the event written 4 ms before its item),
# then an open_page search whose item has no id (as a 2026-05-23 rollout quoted in another public test writes it)
# and its event, then the answer: docs/formats/codex.md, "Web search".
WEB_SEARCH = b"\n".join(
    [
        b'{"timestamp":"2026-07-03T14:50:40.000Z","type":"session_meta","payload":{"id":"ws-session","cli_version":"0.160.0","originator":"codex-tui"}}',
        b'{"timestamp":"2026-07-03T14:50:41.200Z","type":"response_item","payload":{"type":"message","role":"user"'
        b',"content":[{"type":"input_text","text":"what is argus?"}]}}',
        b'{"timestamp":"2026-07-03T14:50:46.915Z","type":"event_msg","payload":{"type":"web_search_end","call_id":"ws_0ba50992c17b4203016a47cc4297208191bb367cf8b5a7ba1e","query":"argus","action":{"type":"search","query":"argus","queries":["argus"]}}}',
        b'{"timestamp":"2026-07-03T14:50:46.919Z","type":"response_item","payload":{"type":"web_search_call","id":"ws_0ba50992c17b4203016a47cc4297208191bb367cf8b5a7ba1e","status":"completed","action":{"type":"search","query":"argus","queries":["argus"]}}}',
        b'{"timestamp":"2026-07-03T14:50:47.919Z","type":"response_item","payload":{"type":"web_search_call","status":"completed","action":{"type":"open_page","url":"https://example.org/argus"}}}',
        b'{"timestamp":"2026-07-03T14:50:47.920Z","type":"event_msg","payload":{"type":"web_search_end","call_id":"ws_2","query":"https://example.org/argus","action":{"type":"open_page","url":"https://example.org/argus"}}}',
        b'{"timestamp":"2026-07-03T14:50:49.000Z","type":"response_item","payload":{"type":"message","role":"assistant"'
        b',"content":[{"type":"output_text","text":"Argus is a giant."}],"phase":"final_answer"}}',
    ]
)


def test_a_hosted_web_search_has_no_result_and_is_not_unanswered():
    (story,) = codex.decode(WEB_SEARCH, "rollout-ws.jsonl")
    user, agent = story["turns"]
    assert (user["src"], agent["src"], agent["msg"]) == ("user", "agent", "Argus is a giant.")
    assert [(c["fn"], c["kind"], c["args"]["type"]) for c in agent["tool_calls"]] == [
        ("web_search", "web_search", "search"),
        ("web_search", "web_search", "open_page"),
    ]
    assert "observation" not in agent  # the results stayed with OpenAI: nothing answers the calls
    fields = source_fields(story, "codex")["fields"]
    assert fields["/2"]["payload"]["type"] == fields["/5"]["payload"]["type"] == "web_search_end"  # residual whole
    assert pc.flags(story) == []  # answered by the provider, not "tool_call_unanswered"
    (assistant,) = [m for m in pc.to_messages(story)["messages"] if m["role"] == "assistant"]
    assert [c["function"]["name"] for c in assistant["tool_calls"]] == ["web_search", "web_search"]
    assert [m["role"] for m in pc.to_messages(story)["messages"]] == ["user", "assistant"]  # no tool message
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == [
        orjson.loads(x) for x in WEB_SEARCH.splitlines()
    ]
    # a call the harness runs still waits for its result
    story["turns"][1]["tool_calls"].append({"tcid": "c1", "fn": "exec_command", "args": {}})
    assert pc.flags(story) == ["tool_call_unanswered"]
