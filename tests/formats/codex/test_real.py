"""Real Codex rollouts (tests/data/codex/README.md): every call and result, counted here from the JSON lines
without the reader; names resolved; usage per turn summed once; the compaction not a user turn of the training
text; developer messages kept as developer; each file written back as equal JSON lines. What datasets + teich
give for the same files is measured beside (docs/formats/codex.md, "what datasets+teich lose").

``PCHRONICLE_CODEX_CORPUS=<folder>`` adds every ``*.jsonl*`` file of a folder (a whole ~/.codex/sessions).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.compression import decompress
from pchronicle_datasets.formats import codex, detect

DATA = Path(__file__).parents[2] / "data" / "codex"
CALLS = {"function_call", "custom_tool_call", "local_shell_call", "web_search_call", "tool_search_call",
         "image_generation_call"}  # fmt: skip
OUTPUTS = {"function_call_output", "custom_tool_call_output"}
names_of = ("function_call", "custom_tool_call")


def _files() -> list[Path]:
    files = sorted(p for p in DATA.glob("*.jsonl") if ".written." not in p.name)
    corpus = os.environ.get("PCHRONICLE_CODEX_CORPUS")
    if corpus:
        files += sorted(p for p in Path(corpus).rglob("*.jsonl*") if p.is_file())
    return files


FILES = _files()


def _text(path: Path) -> bytes:
    """A corpus file's text (a ``.jsonl.zst`` decompressed: ``decompress`` gives ``(text, error)``)."""
    text, error = decompress(path.read_bytes())
    assert error is None, error
    return text


def _lines(path: Path) -> list[dict]:
    data = _text(path) if path.suffix != ".jsonl" else path.read_bytes()
    return [orjson.loads(x) for x in data.splitlines() if x.strip()]


def _items(lines: list[dict]) -> list[dict]:
    if lines and "type" not in lines[0]:  # pre-wrapper: a header, then bare items and {"record_type"} lines
        return [x for x in lines[1:] if isinstance(x.get("type"), str)]
    return [x["payload"] for x in lines if x.get("type") == "response_item"]


def _story(path: Path) -> dict:
    data = _text(path) if path.suffix != ".jsonl" else path.read_bytes()
    (story,) = codex.decode(data, path.name)
    return story


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:40])
def test_every_call_and_result_with_its_name(path):
    items, story = _items(_lines(path)), _story(path)
    calls = [c for t in story["turns"] for c in t.get("tool_calls") or ()]
    assert len(calls) == sum(i["type"] in CALLS for i in items)
    outputs = [i for i in items if i["type"] in OUTPUTS]
    results = [r for t in story["turns"] for r in (t.get("observation") or {}).get("results") or ()]
    assert len(results) == len(outputs)
    names = {i["call_id"]: i["name"] for i in items if i["type"] in ("function_call", "custom_tool_call")}
    by_tcid = {c["tcid"]: c for c in calls}
    for out, res in zip(outputs, results, strict=True):
        assert res["source_call_id"] == out["call_id"] and res["content"] == out["output"]
        assert by_tcid[res["source_call_id"]]["fn"] == names[out["call_id"]]  # the result's name, resolved
    hosted = {"local_shell_call": "local_shell", "web_search_call": "web_search", "tool_search_call": "tool_search",
              "image_generation_call": "image_generation"}  # fmt: skip
    counted = Counter(
        i.get("name") if i["type"] in names_of else hosted[i["type"]] for i in items if i["type"] in CALLS
    )
    assert {s["tool"]: s["count"] for s in pc.compute_tool_stats(story)} == dict(counted)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:40])
def test_usage_per_turn_is_each_distinct_token_count_once(path):
    lines, story = _lines(path), _story(path)
    expected, previous = {"input_tokens": 0, "output_tokens": 0}, None
    for x in lines:
        info = (
            x["payload"].get("info")
            if x.get("type") == "event_msg" and x["payload"].get("type") == "token_count"
            else None
        )
        if not isinstance(info, dict) or info.get("total_token_usage") == previous:
            continue
        previous = info.get("total_token_usage")
        for key in expected:
            expected[key] += (info.get("last_token_usage") or {}).get(key, 0)
    turns = story["turns"]
    unattributed = story["meta"]["codex"].get("unattributed_usage", {})
    got_in = sum(t.get("metrics", {}).get("prompt_tokens", 0) for t in turns) + unattributed.get("input_tokens", 0)
    got_out = sum(t.get("metrics", {}).get("completion_tokens", 0) for t in turns) + unattributed.get(
        "output_tokens", 0
    )
    assert (got_in, got_out) == (expected["input_tokens"], expected["output_tokens"])
    assert all(t["src"] == "agent" for t in turns if "metrics" in t)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:40])
def test_training_text_roles_compaction_and_developer(path):
    items, story = _items(_lines(path)), _story(path)
    messages = pc.to_messages(story, arguments="object")["messages"]
    roles = [m["role"] for m in messages]
    # a message between agents (``agent_message``, 0.156.1) is read by the model as a user-side message
    source_roles = [i.get("role") if i["type"] == "message" else "user" for i in items
                    if i["type"] in ("message", "agent_message")]  # fmt: skip
    # every user message of the training text is a user message of the source: a compaction is not one
    assert roles.count("user") == source_roles.count("user")
    assert roles.count("developer") == source_roles.count("developer")  # developer stays developer
    compactions = [t for t in story["turns"] if (t.get("extra") or {}).get("compaction")]
    assert len(compactions) == sum(x.get("type") == "compacted" for x in _lines(path)) + sum(
        i["type"] in ("compaction", "compaction_summary", "context_compaction") for i in items
    )
    for turn in compactions:
        assert turn["kind"] == "context" and turn["src"] == "system"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:40])
def test_same_source_writer_gives_equal_json_lines(path):
    lines, story = _lines(path), _story(path)
    back = [orjson.loads(x) for x in codex.encode([story]).splitlines()]
    assert back == lines
    data = path.read_bytes() if path.suffix == ".jsonl" else _text(path)
    assert detect(data) is codex


def test_the_compacted_line_keeps_its_replacement_history():
    path = DATA / "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.excerpt.jsonl"
    (line,) = [x for x in _lines(path) if x["type"] == "compacted"]
    (turn,) = [t for t in _story(path)["turns"] if (t.get("extra") or {}).get("compaction") == "compacted"]
    assert turn["extra"]["replacement_history"] == line["payload"]["replacement_history"]
    assert turn["msg"] == line["payload"]["message"] and turn["ts"] == line["timestamp"]


def test_what_datasets_and_teich_lose_on_the_same_file(tmp_path):
    """The measured half of docs/formats/codex.md's loss table: datasets' json builder (teich) on the excerpt."""
    pytest.importorskip("teich")
    datasets = pytest.importorskip("datasets")
    path = DATA / "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.excerpt.jsonl"
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / path.name).write_bytes(path.read_bytes())
    row = datasets.load_dataset(
        "json", data_files=str(tmp_path / "in" / "*.jsonl"), split="train", cache_dir=str(tmp_path / "c")
    )[0]
    items, story = _items(_lines(path)), _story(path)
    if "num_tool_calls" not in row:
        pytest.skip("datasets did not hand the file to teich")
    ours = pc.story_to_row(story)["num_tool_calls"]
    assert int(row["num_tool_calls"]) == sum(i["type"] == "function_call" for i in items) < ours
    roles = [m["role"] for m in row["messages"]]
    assert "developer" not in roles and roles.count("system") >= sum(i.get("role") == "developer" for i in items)
    assert "usage" not in str(row["metadata"]) and any("metrics" in t for t in story["turns"])
    assert "web_search" not in str(row["messages"]) and "compacted" not in str(row["messages"])


MODEL_SIDE = CALLS | {"reasoning"}


@pytest.mark.parametrize("path", [p for p in FILES if "type" in _lines(p)[0]], ids=lambda p: p.name[:40])
def test_each_response_gets_its_own_token_count(path):
    """Counted from the lines: a model response is a run of model-side items; its usage is the token_count that
    closes it. Codex 0.58 (AcidicSoil/codex-session-view's rollout) writes the response's token_count *before* its
    items (they were recorded when the response completed), the newer builds after: the order is the file's own,
    seen at its first count."""
    lines, story = _lines(path), _story(path)
    runs: list[int | None] = []  # each response's input_tokens, in order
    first, pending, open_run, previous = None, None, False, None
    for x in lines:
        kind, p = x.get("type"), x.get("payload") or {}
        info = p.get("info") if kind == "event_msg" and p.get("type") == "token_count" else None
        if isinstance(info, dict) and info.get("total_token_usage") != previous:
            previous, last = info.get("total_token_usage"), (info.get("last_token_usage") or {}).get("input_tokens")
            if first is None:
                first = "before" if not runs else "after"
            if first == "before":
                pending = last
            elif runs and runs[-1] is None:
                # the latest response, when it has no count yet: a message can come between (codex-cli 0.156.1
                # writes a hook's developer message between a call and its response's count, the exec excerpt)
                runs[-1] = last
            open_run = False
        elif kind == "response_item" and (
            p.get("type") in MODEL_SIDE or (p.get("type") == "message" and p.get("role") == "assistant")
        ):
            if not open_run:
                runs.append(pending if first == "before" else None)
                pending, open_run = None, True
        elif kind == "compacted" or (kind == "response_item" and p.get("type") in ("message", "compaction")):
            pending, open_run = None, False
    agent = [(t.get("metrics") or {}).get("prompt_tokens") for t in story["turns"] if t["src"] == "agent"]
    assert agent == runs


def test_codex_058_usage_goes_to_the_response_after_its_count():
    path = DATA / "rollout-2025-11-17T15-30-28-019a93b9-f380-7600-98ff-940e6b99603c.excerpt.jsonl"
    agent = [t for t in _story(path)["turns"] if t["src"] == "agent"]
    # line 8's token_count (input 10128) comes before the first response's reasoning and call (lines 9, 10)
    assert agent[0]["metrics"]["prompt_tokens"] == 10128 and agent[0]["tool_calls"][0]["args"]["command"][-1] == "ls"
    assert agent[1]["metrics"]["prompt_tokens"] == 10334


def test_codex_failure_texts_mark_the_call_failed():
    """Codex's own words for a failed call (the pre-wrapper excerpt): a sandbox refusal, ``failed in sandbox … with
    execution error: sandbox denied exec error, exit code: N, …`` (codex-rs ``SandboxErr::Denied``), and an MCP
    call's ``tool call error: …`` (codex-rs ``mcp_tool_call``). Both are failures, as a JSON output's non-zero
    ``metadata.exit_code`` is."""
    path = DATA / "pre-wrapper-2025-09-10-cf4def41.excerpt.jsonl"
    items, story = _items(_lines(path)), _story(path)
    outputs = {i["call_id"]: i["output"] for i in items if i["type"] == "function_call_output"}
    calls = {c["tcid"]: c for t in story["turns"] for c in t.get("tool_calls") or ()}
    denied = [k for k, v in outputs.items() if v.startswith("failed in sandbox ")]
    mcp = [k for k, v in outputs.items() if v.startswith("tool call error: ")]
    assert len(denied) == 1 and len(mcp) == 2
    assert calls[denied[0]]["response"] == {"exit_code": 2, "status": "error"}  # "exit code: 2, stdout: , …"
    assert all(calls[k]["response"] == {"status": "error"} for k in mcp)
    stats = {s["tool"]: s for s in pc.compute_tool_stats(story)}
    assert stats["memory__add_observations"]["failure"] == 2 and stats["shell"]["failure"] == 1


def test_hook_messages_of_a_0_156_1_exec_run_and_a_0_160_0_stop_hook():
    """codex-cli 0.156.1 (``codex exec``, real lines): hooks add developer messages (``content_item_kinds``
    ``hooks.additional_context``), one of them between the call and its output, and a Stop hook blocks the end of
    the turn with a ``<hook_prompt hook_run_id=…>`` user-role message the model answers; codex-cli 0.160.0 writes
    the same (a line-level ``metadata.retained_source``). By hand: 1 prompt, 2 developer messages, 1 call and its
    output, 3 answers (a commentary with the call, 2 final), 3 new token counts, 1 hook prompt."""
    story = _story(DATA / "exec-0.156.1-hooks-01a0e956-923c-7d01-92e9-2157903d3dc3.excerpt.jsonl")
    turns = story["turns"]
    assert [t["src"] for t in turns] == ["user", "developer", "agent", "developer", "agent", "user", "agent"]
    hook = turns[5]
    assert hook["copied"] is True and hook["extra"] == {"codex": {"context": "hook_prompt"}}
    assert [(t.get("metrics") or {}).get("prompt_tokens") for t in turns if t["src"] == "agent"] == [
        17022,
        17348,
        17454,
    ]
    roles = [m["role"] for m in pc.to_messages(story)["messages"]]
    assert roles == ["user", "developer", "assistant", "tool", "developer", "assistant", "user", "assistant"]
    # The hooks' developer messages are the hooks' text, not Codex's instructions: context turns, as the
    # ``<hook_prompt>`` is (docs/formats/codex.md, "Hooks"); ``injected``, as Claude Code's isMeta lines are.
    assert [turns[i]["extra"] for i in (1, 3)] == [{"codex": {"context": "hooks.additional_context"}}] * 2
    assert all(turns[i]["copied"] is True and turns[i]["kind"] == "context" for i in (1, 3))
    kept = pc.to_messages(story, drop_copied=True)["messages"]
    assert [m["role"] for m in kept] == ["user", "assistant", "tool", "assistant", "assistant"]  # hooks' words out
    assert [m["content"] for m in kept if m["role"] == "user"] == [turns[0]["msg"]]
    assert pc.flags(story) == ["injected"]
    path = DATA / "exec-0.156.1-hooks-01a0e956-923c-7d01-92e9-2157903d3dc3.excerpt.jsonl"
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == _lines(path)  # the same file back
    (newest,) = codex.decode(
        (DATA / "rollout-2026-10-02T23-50-15-01a0ff06-91f2-72a2-9e94-51f14fc820f5.excerpt.jsonl").read_bytes(), "f"
    )
    assert [(t["src"], t.get("kind")) for t in newest["turns"]] == [("user", "context"), ("agent", None)]
    assert pc.flags(newest) == ["injected"]  # a Stop hook's block reason: the hook's words, not the user's


def test_a_turn_the_api_failed_is_counted_as_an_api_error():
    """codex-cli 0.160.0 (real lines): a provider's HTTP 500 on a session's second prompt ends the turn with a
    ``task_complete`` that holds ``error {message, codex_error_info}`` and ``last_agent_message: null``; nothing
    else in the rollout says the prompt got no answer. By hand: 1 prompt, 0 answers, 1 failed turn."""
    path = DATA / "rollout-2026-10-03T03-47-59-01a0ffe0-35ff-75b3-88ba-177ce3b1052d.excerpt.jsonl"
    story = _story(path)
    assert [(t["src"], t["msg"]) for t in story["turns"]] == [("user", "Reply with the single word: again.")]
    assert story["meta"]["codex"]["counts"] == {"task_complete/api_error": 1}
    assert pc.flags(story) == ["incomplete", "api_error"]
    assert [orjson.loads(x) for x in codex.encode([story]).splitlines()] == _lines(path)  # the event stays whole
    lines = _lines(path)
    del lines[-1]["payload"]["error"]  # the same turn ended without an error: no count
    (ok,) = codex.decode(b"".join(orjson.dumps(x) + b"\n" for x in lines), path.name)
    assert "counts" not in ok["meta"]["codex"] and "api_error" not in pc.flags(ok)


def test_a_code_mode_cell_s_status_and_exit_codes_make_its_outcome():
    """codex-cli 0.156.1 code mode (real lines): the first ``exec`` cell fails to spawn the sandbox (``Script
    failed`` + ``Script error: exec_command failed: CreateProcess …``), the escalated retry leaves a cell running
    (``Script running with cell ID 6``, a plain string output), then the answer. By hand: 1 prompt, 2 calls, 2
    outputs (1 failed), 1 commentary and 1 answer, 3 new token counts → 4 turns; tool_stats exec 2 calls, 1 failure.
    The exec run's output (a JSON part with ``exit_code`` 0) gives exit code 0."""
    story = _story(DATA / "rollout-2026-09-28T18-45-50-01a0e956-6bb5-7370-9458-d1fcebfadc20.excerpt.jsonl")
    calls = [c for t in story["turns"] for c in t.get("tool_calls") or ()]
    assert [c.get("response") for c in calls] == [{"status": "error"}, None]
    assert pc.story_to_row(story)["tool_stats"] == [{"tool": "exec", "count": 2, "success": 1, "failure": 1}]
    assert [(t.get("metrics") or {}).get("prompt_tokens") for t in story["turns"]] == [None, 25140, 25383, 25496]
    run3 = _story(DATA / "exec-0.156.1-hooks-01a0e956-923c-7d01-92e9-2157903d3dc3.excerpt.jsonl")
    (call,) = [c for t in run3["turns"] for c in t.get("tool_calls") or ()]
    assert call["response"] == {"exit_code": 0}
