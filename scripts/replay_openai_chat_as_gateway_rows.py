"""Replay public OpenAI-format conversations as gateway capture rows (the shipped openai-msg samples).

Run once by hand (not at test time); the outputs are committed under pchronicle_datasets/samples/openai_msg/:

    python scripts/replay_openai_chat_as_gateway_rows.py \
        ../shared/corpora/openai_chat pchronicle_datasets/samples/openai_msg

Each assistant message of a conversation becomes one row, as an API gateway logs one call: `messages` is
the whole history sent with the request, `response` the assistant message returned, and `meta_json`
carries the gateway's token counts and latencies (deterministic, made up: the conversations came without
them). `meta_json` is a JSON-encoded string on some rows and an object on others, as real gateways vary.

`tools` is the request's tool definitions, as a gateway logs them with every call: the litellm log's `tools`
(terminal, str_replace_editor, finish). Both runs were made by the same generator with the same tools
(OpenHands/software-agent-sdk, tests/fixtures/llm_data/data_generator.py), and every request log of both runs
in that folder (llm-logs/, nonfncall-llm-logs/ at commit 5e93f74c) holds this very `tools` array.
"""

import json
import random
import sys
from pathlib import Path

# The request log whose `tools` every row carries (see the module docs).
TOOLS_FROM = "openhands_sdk_litellm_log_deepseek-chat_nonfncall_1757015076.651.json"
SOURCES = {
    "openhands-fncall": ("openhands_sdk_fncall-llm-message.json", "claude-sonnet-4-20250514"),
    "openhands-nonfncall": ("openhands_sdk_nonfncall-llm-message.json", "deepseek-chat"),
    "openhands-litellm-log": ("openhands_sdk_litellm_log_deepseek-chat_nonfncall_1757015076.651.json", "deepseek-chat"),
}


def conversation(path: Path) -> list[dict]:
    data = json.loads(path.read_text())
    if isinstance(data, list):
        return data
    # A litellm log: the request's messages plus the response's message.
    return [*data["messages"], data["response"]["choices"][0]["message"]]


def rows_for(name: str, messages: list[dict], tools: list, model: str, rng: random.Random, t0: int) -> list[dict]:
    rows = []
    step = 0
    for i, msg in enumerate(messages):
        if msg.get("role") != "assistant":
            continue
        step += 1
        prompt_tokens = sum(len(str(m.get("content") or "")) for m in messages[:i]) // 4
        completion_tokens = max(1, len(str(msg.get("content") or "")) // 4)
        latency = rng.randint(400, 9000)
        env_state = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "finish_reason": "tool_calls" if msg.get("tool_calls") else "stop",
            "status_code": 200,
            "total_latency_ms": latency,
            "ttft_ms": rng.randint(80, latency),
            "upstream_base_url": "https://gateway.example/v1",
            "request_id": f"req-{name}-{step:03d}",
        }
        meta = {"source": "openhands", "group_id": f"{name}-group", "env_state": env_state}
        rows.append(
            {
                "session_id": f"{name}-session",
                "step_id": step,
                "run_id": "run-2026-11-30",
                "agent_model": model,
                "created_at": f"2026-11-30T09:{(t0 + step) // 60 % 60:02d}:{(t0 + step) % 60:02d}Z",
                "env_name": "openhands-workspace",
                "messages": messages[:i],
                "tools": tools,
                "response": msg,
                "meta_json": json.dumps(meta) if step % 2 else meta,
            }
        )
    return rows


def main(src: str, dst: str) -> None:
    rng = random.Random(20261130)
    out = Path(dst)
    out.mkdir(parents=True, exist_ok=True)
    all_rows = []
    tools = json.loads((Path(src) / TOOLS_FROM).read_text())["tools"]
    for t0, (name, (filename, model)) in enumerate(SOURCES.items()):
        all_rows.extend(rows_for(name, conversation(Path(src) / filename), tools, model, rng, t0 * 100))
    with open(out / "gateway_capture.jsonl", "w") as f:
        for row in all_rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    envelope = {
        "session_steps": [r for r in all_rows if r["session_id"].startswith("openhands-fncall")],
        "capture": {"gateway": "example-gateway", "exported_at": "2026-11-30T10:00:00Z"},
    }
    (out / "gateway_capture_envelope.json").write_text(json.dumps(envelope, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:3])
