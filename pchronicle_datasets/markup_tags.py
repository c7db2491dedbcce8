"""The byte formats of the tagged blocks in training text, spelled once: the tag pairs and the templates.

The ShareGPT rendering (``render/sharegpt.py``), its fast path for plain rows (``training/sharegpt_rows.py``),
the ShareGPT reader's parser and the gateway reader's text-call parser all take their tags from here, so a
block the renderer writes is a block the readers find. The templates are the reference converter's bytes
(hermes-agent, ``docs/formats/sharegpt.md``). This module sits outside both ``formats/`` and ``training/``
because both use it (a format package never imports ``training/``).

>>> tool_call_block('"ls"', "{}")
'<tool_call>\\n{"name": "ls", "arguments": {}}\\n</tool_call>\\n'
>>> from pchronicle_datasets.formats.markup import blocks
>>> [inner for _, _, inner in blocks(think_block("why") + "ok", *THINK)]
['\\nwhy\\n']
"""

from __future__ import annotations

__all__ = [
    "EMPTY_THINK",
    "FUNCTION",
    "LLAMAFACTORY_CALL_WORDS",
    "LLAMAFACTORY_THOUGHT_WORDS",
    "PARAMETER",
    "SCRATCHPAD",
    "SCRATCHPAD_MARK",
    "SYSTEM_TEMPLATE",
    "THINK",
    "THINK_PARTS",
    "TOOLS",
    "TOOL_CALL",
    "TOOL_CALL_PARTS",
    "TOOL_RESPONSE",
    "TOOL_RESPONSE_PARTS",
    "think_block",
    "tool_call_block",
    "tool_response_block",
]

# ---------------------------------------------------------------------------------------------- tag pairs
#: Reasoning, as the reference converter writes it in a gpt value.
THINK = ("<think>", "</think>")
#: One tool call (JSON ``{"name", "arguments"}``), in a gpt value or an assistant's text.
TOOL_CALL = ("<tool_call>", "</tool_call>")
#: One tool result (JSON ``{"tool_call_id", "name", "content"}``), in a tool value.
TOOL_RESPONSE = ("<tool_response>", "</tool_response>")
#: The tool definitions in the function-calling system prompt.
TOOLS = ("<tools>", "</tools>")
#: Hermes' older spelling of reasoning, rewritten to ``THINK`` by the renderer.
SCRATCHPAD = ("<REASONING_SCRATCHPAD>", "</REASONING_SCRATCHPAD>")
#: What both scratchpad tags hold: one search finds either (most texts have neither).
SCRATCHPAD_MARK = "REASONING_SCRATCHPAD>"
#: The XML tool calls some models write in text (``<function=name><parameter=key>value</parameter></function>``):
#: opening tags that carry a name up to ``>``.
FUNCTION = ("<function=", "</function>")
PARAMETER = ("<parameter=", "</parameter>")

#: LLaMA-Factory's default ``thought_words`` and ``tool_call_words`` (its ``template.py``, ``register_template``):
#: a reasoning block in these words is what its templates recognise (and drop from history turns where the
#: model's template does), the tool-call words what its ``FunctionFormatter`` looks for in a ``function_call``.
LLAMAFACTORY_THOUGHT_WORDS = (THINK[0] + "\n", "\n" + THINK[1] + "\n\n")
LLAMAFACTORY_CALL_WORDS = TOOL_CALL

# ---------------------------------------------------------------------------------------------- templates
# Each block is its fixed parts with the values between them, so a hot loop binds the parts to locals and
# writes a block as one f-string (a ``%`` template costs three times as much, a function call as much again).

#: A gpt value's reasoning block: ``f"{open}{reason}{close}"``.
THINK_PARTS = (THINK[0] + "\n", "\n" + THINK[1] + "\n")
#: The block a gpt value without reasoning starts with (the reference always writes one).
EMPTY_THINK = THINK[0] + "\n" + THINK[1] + "\n"
#: A tool call between its parts: name as JSON, arguments as JSON — the bytes of
#: ``json.dumps({"name", "arguments"})`` in its block, each block ending in a newline.
TOOL_CALL_PARTS = (TOOL_CALL[0] + '\n{"name": ', ', "arguments": ', "}\n" + TOOL_CALL[1] + "\n")
#: A tool result between its parts: tool_call_id, name and content, each as JSON; blocks are joined by "\n".
TOOL_RESPONSE_PARTS = (
    TOOL_RESPONSE[0] + '\n{"tool_call_id": ',
    ', "name": ',
    ', "content": ',
    "}\n" + TOOL_RESPONSE[1],
)


def think_block(reason: str) -> str:
    """The reasoning block of a gpt value."""
    return f"{THINK_PARTS[0]}{reason}{THINK_PARTS[1]}"


def tool_call_block(name_json: str, arguments_json: str) -> str:
    """One ``<tool_call>`` block (with its trailing newline) of a name and arguments written as JSON."""
    a, b, c = TOOL_CALL_PARTS
    return f"{a}{name_json}{b}{arguments_json}{c}"


def tool_response_block(call_id_json: str, name_json: str, content_json: str) -> str:
    """One ``<tool_response>`` block of a call id, a name and a content written as JSON."""
    a, b, c, d = TOOL_RESPONSE_PARTS
    return f"{a}{call_id_json}{b}{name_json}{c}{content_json}{d}"


#: The seed's function-calling system prompt (``str.format`` with ``tools``: the definitions as JSON).
SYSTEM_TEMPLATE = (
    "You are a function calling AI model. You are provided with function signatures within <tools> </tools> XML "
    "tags. You may call one or more functions to assist with the user query. If available tools are not relevant "
    "in assisting with user query, just respond in natural conversational language. Don't make assumptions about "
    "what values to plug into functions. After calling & executing the functions, you will be provided with "
    "function results within <tool_response> </tool_response> XML tags. Here are the available tools:\n"
    "<tools>\n{tools}\n</tools>\n"
    "For each function call return a JSON object, with the following pydantic model json schema for each:\n"
    "{{'title': 'FunctionCall', 'type': 'object', 'properties': {{'name': {{'title': 'Name', 'type': 'string'}}, "
    "'arguments': {{'title': 'Arguments', 'type': 'object'}}}}, 'required': ['name', 'arguments']}}\n"
    "Each function call should be enclosed within <tool_call> </tool_call> XML tags.\n"
    "Example:\n<tool_call>\n{{'name': <function-name>,'arguments': <args-dict>}}\n</tool_call>"
)
