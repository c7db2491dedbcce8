"""The measurement of docs/redaction.md on real files, pinned: what each rule redacts in each real file of
tests/data (provenance in each folder's README.md). Every other file of tests/data has nothing redacted."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from pchronicle_datasets.redact import RULES, Redactor
from pchronicle_datasets.redact.walk import redact_value

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(ROOT / "scripts"))
from redaction_false_positives import values  # noqa: E402

# file -> redactions per rule, each looked at (docs/redaction.md, "False positives measured on real files")
EXPECTED = {
    # OpenCode 2.0.26's databases as SQL dumps (dspv/caprock): the project folder /home/dev/proj in the sessions' rows
    "opencode/v2/opencode-1.15.10-then-2.0.26.sql": {"user-path": 6},
    "opencode/v2/opencode-2.0.26.sql": {"user-path": 6},
    "chat/corpus/openhands_sdk_fncall-llm-message.json": {"user-path": 8, "email": 2},
    "chat/corpus/openhands_sdk_nonfncall-llm-message.json": {"user-path": 9, "email": 2},
    "chat/corpus/openhands_sdk_litellm_log_deepseek-chat_nonfncall_1757015076.651.json": {"user-path": 16, "email": 4},
    "chat/reference/openhands_sdk_fncall-llm-message.reference.json": {"user-path": 8},
    "chat/reference/openhands_sdk_nonfncall-llm-message.reference.json": {"user-path": 9},
    "chat/reference/openhands_sdk_litellm_log_deepseek-chat_nonfncall_1757015076.651.reference.json": {"user-path": 8},
    "atif/harbor_golden_openhands_hello-world.trajectory.json": {"email": 2},
    # OpenHands' system prompt names "openhands@all-hands.dev" (twice: the system action's content and message);
    # the issue text quotes its reporter's /Users/<name>/… paths
    "openhands/multi_swe_bench_output.excerpt.jsonl": {"email": 2, "user-path": 5},
    # the benchmark's fictional colleague mark@the-agent-company.com, whom the agent mails the report (6 times:
    # the command in the call's arguments, the action and the observation): a true email
    "openhands_sdk/benchmarks_openagentsafety_output.jsonl": {"email": 6},
    "atif/harbor_golden_openhands_hello-world.no_function_calling.trajectory.json": {"email": 2},
    "sharegpt/llamafactory_glaive_toolcall_en_demo.json": {"email": 21, "password-assignment": 8},
    "sharegpt/llamafactory_reason_tool_use_demo_50.jsonl": {"email": 10},
    # The files other branches added (issues #21, #22): opaque reasoning payloads (signatures, encrypted
    # content: stripped by design) and the real home folders of real session logs.
    "chat/anthropic_blocks.expected.json": {"opaque-reasoning": 1},
    "chat/anthropic_blocks.input.jsonl": {"opaque-reasoning": 2},
    "chat/gemini_contents.input.jsonl": {"opaque-reasoning": 1},
    "chat/responses_items.expected.json": {"opaque-reasoning": 1},
    "chat/responses_items.input.jsonl": {"opaque-reasoning": 1},
    "chat/shapes/anthropic_vercel-ai_issue-13430-thinking-tool-call.json": {"opaque-reasoning": 1},
    "chat/shapes/gemini_vercel-ai_google-tool-call-gemini3.json": {"opaque-reasoning": 1},
    "chat/shapes/responses_vercel-ai_openai-reasoning-encrypted-content.1.json": {"opaque-reasoning": 1},
    # Kimi Code's session state (agent-sessions' capture, a file a folder's load leaves out): the capturer's home
    # folder in the main agent's homedir; the journals' /private/tmp/… paths are no home folder
    (
        "kimi_code/kimi-code-home/sessions/wd_project_ac3bb318f98e/"
        "session_9eb1bf57-c1af-48a5-b658-0e8d9fe794f5/state.json"
    ): {"user-path": 1},
    "claude_code/entire_2.0.76/488c5296-fc78-4fdf-8cfd-f1cae9454bd0.jsonl": {"user-path": 35, "opaque-reasoning": 6},
    "claude_code/entire_2.1.1_task/c01ff5a5-0d50-40b0-9169-a0302770e8ff.jsonl": {"user-path": 8, "opaque-reasoning": 2},
    # the two forks of that session (the 6 copied records, 2 of their own): its paths and signatures, and the own
    # records' cwd
    "claude_code/fork_2.1.1/c01ff5a5-f02c-4b7e-9d1a-5b2a7e0c1f01.written.jsonl": {
        "user-path": 10,
        "opaque-reasoning": 2,
    },
    "claude_code/fork_2.1.1/c01ff5a5-f02c-4b7e-9d1a-5b2a7e0c1f02.written.jsonl": {
        "user-path": 10,
        "opaque-reasoning": 2,
    },
    "claude_code/entire_2.1.36_compact/53ea1606-cf60-417b-928a-068324ecc7b3.excerpt.jsonl": {
        "user-path": 29,
        "opaque-reasoning": 2,
    },
    "claude_code/spotter_2.1.39/4d5611e5-241a-462a-8d15-5122611a9569.excerpt.jsonl": {"opaque-reasoning": 1},
    # the test fixture's address (test@test.com) a session's test code writes, 4 times: a true email
    "claude_code/entire_2.1.29_interrupt/1ecba475-5b18-4058-a0cb-e87703f6f792.jsonl": {
        "email": 4,
        "opaque-reasoning": 8,
        "user-path": 57,
    },
    "claude_code/entire_2.1.7_glued/130d7b7e-5801-4345-9bd6-f32fd9b8429b.excerpt.jsonl": {
        "opaque-reasoning": 4,
        "user-path": 180,
    },
    "claude_code/entire_2.1.17_api_error/a032db5a-df02-44d7-ab1e-fb024213ecc4.excerpt.jsonl": {
        "user-path": 10,
        "opaque-reasoning": 2,
    },
    "claude_code/entire_2.1.15_synthetic/0cf3db51-1c73-43bb-8d05-dc02739514a5.excerpt.jsonl": {
        "user-path": 11,
        "opaque-reasoning": 2,
    },
    "codex/rollback-subagent.written.jsonl": {"opaque-reasoning": 2},
    # a Cline history written in the shape of its native tool-calling storage: the thinking block's signature
    "cline/tasks/1777080000000/api_conversation_history.json": {"opaque-reasoning": 1},
    # Cline's SDK fixtures (cline/cline, a real session of its desktop app): /Users/example/…, the home of the user
    # "example" as the fixtures publish it, in the paths of every file read and edited
    "cline/sdk_fixtures/agentic.compaction.json": {"user-path": 10},
    "cline/sdk_fixtures/basic.compaction.json": {"user-path": 12},
    "cline/sessions/1784094124598_rruoq/1784094124598_rruoq.messages.json": {"user-path": 36},
    "codex/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.excerpt.jsonl": {"opaque-reasoning": 5},
    "codex/rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl": {"opaque-reasoning": 1},
    # real unredacted rollouts (AcidicSoil): their reasoning's encrypted_content; the cwd is /home/user/…, a
    # placeholder home the user-path rule leaves alone
    "codex/rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.excerpt.jsonl": {"opaque-reasoning": 16},
    "codex/pre-wrapper-2025-09-10-cf4def41.excerpt.jsonl": {"opaque-reasoning": 2},
    # codex-cli 0.156.1: the encrypted_content part of an agent_message (the task a parent gave its subagent)
    # Codex 0.156.1 excerpts: a publisher's scratch path /tmp/claude-1000/-home-<name>-…/ (Claude Code's encoded
    # project folder of a real user name: encoded-user-path)
    "codex/rollout-2026-09-28T13-01-37-01a0e81b-4af7-7330-a113-bad47ba77c3e.excerpt.jsonl": {
        "encoded-user-path": 1,
        "opaque-reasoning": 1,
    },
    "codex/rollout-2026-09-28T13-01-29-01a0e81b-2a8b-7240-b94c-ad2ada7813da.excerpt.jsonl": {"encoded-user-path": 1},
    # codex-cli 0.156.1 exec run (same publisher): the same scratch path in a Stop hook's run id, written twice (the
    # <hook_prompt hook_run_id="…"> text and its HookPrompt item_completed event)
    "codex/exec-0.156.1-hooks-01a0e956-923c-7d01-92e9-2157903d3dc3.excerpt.jsonl": {
        "encoded-user-path": 2,
        "user-path": 2,
    },
    # the same author's code-mode cell that failed to spawn the sandbox: its error quotes his PATH, four entries under
    # /home/<name>/
    "codex/rollout-2026-09-28T18-45-50-01a0e956-6bb5-7370-9458-d1fcebfadc20.excerpt.jsonl": {"user-path": 4},
    # real Copilot CLI 1.0.78 sessions (WildChildForLife/lantern): the session-state folder under /home/agent, the
    # container user's home, once each: a true user path
    "copilot_cli/lantern/session-state/049410b4-c1df-44ee-87a5-caa1c349091e/events.jsonl": {"user-path": 1},
    "copilot_cli/lantern/session-state/f27af309-ccf3-41da-8f07-b3dcbffd4c90/events.jsonl": {"user-path": 1},
    # a real OpenClaw state folder (Pi's session format): its author's Windows home, C:\\Users\\<name>, in each
    # file that names the session's folder or cwd: true user paths; and a Claude Code 2.1.39 thinking signature
    "pi/openclaw/agents/main/sessions/2db7f8ba-f951-4f31-b133-aece0caaf3aa.jsonl.bak-23636-1777818040170": {
        "user-path": 1
    },
    "pi/openclaw/agents/main/sessions/3f35a4dc-2619-432e-bd98-572fd1b34d63.jsonl.reset.2026-05-04T04-28-18.495Z": {
        "user-path": 1
    },
    "pi/openclaw/agents/main/sessions/a4ecf754-58c6-4d18-b047-12a40e604950.jsonl": {
        "opaque-reasoning": 1,
        "user-path": 1,
    },
    "pi/openclaw/agents/main/sessions/a4ecf754-58c6-4d18-b047-12a40e604950.trajectory-path.json": {"user-path": 1},
    "pi/openclaw/agents/main/sessions/a4ecf754-58c6-4d18-b047-12a40e604950.trajectory.jsonl": {"user-path": 3},
    "claude_code/spotter_2.1.39_folder/ae4a77f8-aedd-4bc1-888f-c94edc91af04.excerpt.jsonl": {"opaque-reasoning": 1},
    "pi/before-compaction.excerpt.jsonl": {"user-path": 11, "opaque-reasoning": 1, "encoded-user-path": 1},
    "pi/large-session.excerpt.jsonl": {"user-path": 1},
    "pi/tree-v3.written.jsonl": {"opaque-reasoning": 1},
    "swe_agent/6e44b9__sweagenttestrepo-1c2844.traj": {"user-path": 1},
    # marshmallow's setup.py, shown 7 times in the trajectory, names its author's public address: a true email
    "swe_agent/marshmallow-code__marshmallow-1867.traj": {"email": 7},
    # Roo Code's reasoning items of their own (OpenAI's encrypted reasoning; a history written for the tests in the
    # shape of Roo's builds of 2025-11-12 to -14, tests/data/cline/README.md): opaque payloads, stripped by design
    "cline/roo/rooveterinaryinc.roo-cline/tasks/4c8e1d2f-9a3b-4f6e-8d1c-7b5a3e2f1d09/api_conversation_history.json": {
        "opaque-reasoning": 2
    },
    # the home folder (/home/agent) of the container lantern ran Qwen Code in, in the telemetry of the memory
    # agent's three tool calls
    "qwen_code/qwen-home/projects/-work/chats/a719f84a-209d-406a-8e6c-dc671c9c0192.jsonl": {"user-path": 3},
}


def _measure(path: Path) -> dict[str, int]:
    r = Redactor(key="measure")
    for value in values(path):
        redact_value(r, value, file=str(path))
    return r.report.by_rule()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_redactions_on_real_files(name):
    assert _measure(DATA / name) == EXPECTED[name]


def test_no_other_file_of_tests_data_has_anything_redacted():
    others = [
        p
        for p in sorted(DATA.rglob("*"))
        if p.is_file() and p.suffix != ".md" and str(p.relative_to(DATA)) not in EXPECTED
    ]
    assert len(others) > 400
    found = {str(p.relative_to(DATA)): got for p in others if (got := _measure(p))}
    assert found == {}


def test_a_database_is_measured_as_the_sessions_a_load_reads():
    """A SQLite store is measured on what its reader reads (each session as OpenCode's export prints it), not its
    pages: the real OpenCode database has nothing to redact (its credential and account tables are empty, checked
    row by row when it was added: tests/data/opencode/README.md)."""
    exports = list(values(DATA / "opencode" / "db" / "opencode.db"))
    assert [e["info"]["id"][:12] for e in exports] == ["ses_03156b77", "ses_031559a7", "ses_031541bf"]
    assert sum(len(e["messages"]) for e in exports) == 7
    assert _measure(DATA / "opencode" / "db" / "opencode.db") == {}


def test_docs_list_every_rule():
    doc = (ROOT / "docs" / "redaction.md").read_text(encoding="utf-8")
    for rule in RULES:
        assert re.search(rf"^\| `{re.escape(rule.id)}` \| `{re.escape(rule.kind)}` \|", doc, re.M), rule.id
