"""The reference agent's ShareGPT conversations for the public chat files (golden files of the tests).

Run once by hand with the reference installed (not at test time: the reference is not a dependency, and CI
compares against the committed outputs):

    python3 -m venv /tmp/hermes && /tmp/hermes/bin/pip install hermes-agent==0.19.0
    /tmp/hermes/bin/python scripts/reference_sharegpt_for_chat_corpus.py \
        tests/data/chat/corpus tests/data/chat/reference

For each file of the corpus folder (one conversation each), the reference (hermes-agent 0.19.0's
``convert_to_trajectory_format``, the agent the ShareGPT seed describes) is given the conversation's messages
and tools as the agent holds them:

- the messages from the first user message on (the agent takes that message as the task, ``user_query``, and
  skips ``messages[0]``; its own system prompt is generated from the tools, so source system messages are
  not in its history); a litellm log's ``response.choices[0].message`` is the last message;
- each message as it is, except that a ``reasoning_content`` or ``thinking`` string is also given as
  ``reasoning``, the agent's internal field for native reasoning (none of the shipped files has one);
- the tools: the record's ``tools``, ``tool_definitions`` or ``available_tools`` (the first not null, as the
  chat reader tries them), else none; ``completed=True``.

Writes ``{stem}.reference.json`` per file: ``{"source", "converter", "conversations"}``, where
``conversations`` is exactly what the reference returned.
"""

import json
import sys
from pathlib import Path

from agent.agent_runtime_helpers import convert_to_trajectory_format
from agent.system_prompt import format_tools_for_system_message

CONVERTER = "hermes-agent 0.19.0, agent.agent_runtime_helpers.convert_to_trajectory_format"
TOOLS_KEYS = ("tools", "tool_definitions", "available_tools")


class Agent:
    """What the converter reads of the agent: its tools (and the method that formats them)."""

    def __init__(self, tools: list) -> None:
        self.tools = tools

    def _format_tools_for_system_message(self) -> str:
        return format_tools_for_system_message(self)


def conversation(path: Path) -> tuple[list[dict], list]:
    """The messages and tools of a corpus file's one conversation."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, list) and data and "messages" in data[0]:
        [data] = data  # a JSON array of one record
    if isinstance(data, list):
        return data, []  # a bare message list
    messages = list(data["messages"])
    if isinstance(data.get("response"), dict):
        messages.append(data["response"]["choices"][0]["message"])
    tools = next((data[k] for k in TOOLS_KEYS if data.get(k) is not None), [])
    return messages, tools


def as_agent_holds(message: dict) -> dict:
    if "reasoning" not in message:
        for key in ("reasoning_content", "thinking"):
            if isinstance(message.get(key), str):
                return {**message, "reasoning": message[key]}
    return message


def main(src: str, dst: str) -> None:
    out = Path(dst)
    out.mkdir(parents=True, exist_ok=True)
    for path in sorted(Path(src).glob("*.json")):
        messages, tools = conversation(path)
        first = next(i for i, m in enumerate(messages) if m.get("role") == "user")
        history = [as_agent_holds(m) for m in messages[first:]]
        conversations = convert_to_trajectory_format(Agent(tools), history, history[0]["content"], True)
        record = {"source": f"corpus/{path.name}", "converter": CONVERTER, "conversations": conversations}
        text = json.dumps(record, ensure_ascii=False, indent=1) + "\n"
        (out / f"{path.stem}.reference.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:3])
