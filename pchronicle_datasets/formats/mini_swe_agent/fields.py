"""The mini-SWE-agent trajectory ↔ Storyline tables (docs/formats/mini-swe-agent.md is their prose), held once for
reader and writer.

>>> SRC_ROLE["agent"], INFO["submission"], INVERSE["tool_role"]("agent")
('assistant', 'final_answer', 'tool')
"""

from __future__ import annotations

NAME = "mini-swe-agent"

#: message role → Storyline ``src`` (every other role is its own source); and back
ROLE_SRC = {"assistant": "agent"}
SRC_ROLE = {"agent": "assistant"}
#: How the same-source writer gives back a value the pointer map derived (``formats/layout.py``): by rule name.
#: ``shown_role``: the text protocol's ``user`` message that shows the model an action's output, a result (below).
INVERSE = {"role": lambda src: SRC_ROLE.get(src, src), "tool_role": lambda _: "tool", "shown_role": lambda _: "user"}
#: The key of an assistant message that holds the model's reasoning: litellm's ``Message`` (``reasoning_content``, a
#: string for reasoning models such as deepseek-reasoner, else ``null``), which mini-swe-agent saves as it is.
REASONING = "reasoning_content"
#: ``info`` key → ``/task/result`` key (non-empty strings); ``info.model_stats`` is ``/final_metrics``,
#: ``info.mini_version`` ``/agent/ver``.
INFO = {"exit_status": "status", "submission": "final_answer"}
STATS = "model_stats"
VERSION = "mini_version"
#: Where ``info`` names the model (a copy in ``/agent/model``: ``info.config`` stays residual).
MODEL_PATH = ("config", "model", "model_name")

#: An ``exit`` message of a run the model's API ended: mini-swe-agent's ``DefaultAgent.handle_uncaught_exception``
#: writes ``extra {exit_status: type(e).__name__, exception_str, traceback}``; the exception is the API's when its
#: traceback passes through the model's query (``minisweagent/models/``) or its text is LiteLLM's
#: (``litellm.Timeout: …``, ``litellm.RateLimitError: …``). Its turn gets ``extra.mini-swe-agent.api_error: true``
#: (derived; ``pc.flags``: ``api_error``); an environment's or a limit's exit does not.
EXIT_ROLE = "exit"
API_ERROR_FRAMES = ("minisweagent/models/", "minisweagent\\models\\")
API_ERROR_PREFIX = "litellm."

#: What documents not read from mini-swe-agent are written as (``trajectory_format``).
WRITTEN_FORMAT = "mini-swe-agent-1.1"
#: What the writer for documents of other formats writes (``layout.report_unwritten`` counts every other value).
WRITTEN = {
    "": ("session", "turns", "task", "final_metrics", "unknown_fields"),
    "agent": ("id", "name", "ver", "model"),
    "task": ("/task/result/status", "/task/result/final_answer"),
    "turn": ("id", "src", "msg", "tool_calls", "observation"),
    "call": ("tcid", "fn", "args"),
    "result": ("content", "source_call_id"),
}
