"""Provider tool definitions → OpenAI function tools (``/agent/tools``), and back.

Anthropic ``{"name", "description", "input_schema"}``, Responses ``{"type": "function", "name", "description",
"parameters", "strict"}`` and Gemini ``[{"functionDeclarations": [{"name", "description", "parameters" |
"parametersJsonSchema"}]}]`` each become ``{"type": "function", "function": {"name", "description",
"parameters"}}``; an OpenAI function tool stays as it is; anything else (server tools such as Anthropic's
``web_search_20250305``, Gemini's ``googleSearch``) is kept in the list as written. The hint says how each was
spelled, so ``tools_back`` gives the source list back.

>>> tools, hint = tools_to_openai([{"name": "ls", "description": "List.", "input_schema": {"type": "object"}}])
>>> tools
[{'type': 'function', 'function': {'name': 'ls', 'description': 'List.', 'parameters': {'type': 'object'}}}]
>>> tools_back(tools, hint)
[{'name': 'ls', 'description': 'List.', 'input_schema': {'type': 'object'}}]
>>> tools_to_openai([{"type": "function", "function": {"name": "ls"}}])[1] is None  # already OpenAI's
True
"""

from __future__ import annotations

from typing import Any

__all__ = ["tools_back", "tools_to_openai"]

#: The key that holds the JSON schema, per spelling.
_SCHEMA_KEY = {"a": "input_schema", "r": "parameters", "g": "parameters", "j": "parametersJsonSchema"}
_FUNCTION_KEYS = ("name", "description")


def _named(tool: Any) -> bool:
    return isinstance(tool, dict) and isinstance(tool.get("name"), str) and bool(tool["name"])


def _convert(tool: dict, code: str) -> tuple[dict, list]:
    """One tool → an OpenAI function tool and its hint ``[code, [keys as written in order]]``."""
    schema_key = _SCHEMA_KEY[code]
    fn: dict[str, Any] = {}
    for key, val in tool.items():
        if key == schema_key:
            fn["parameters"] = val
        elif key != "type" or code != "r":
            fn[key] = val
    return {"type": "function", "function": fn}, [code, list(tool)]


def tools_to_openai(tools: Any) -> tuple[Any, Any]:
    """``(OpenAI function tools, hint)``; hint None when nothing was converted (the tools are as they were)."""
    if not isinstance(tools, list):
        return tools, None
    out: list[Any] = []
    hint: list[Any] = []
    changed = False
    for tool in tools:
        if isinstance(tool, dict) and isinstance(tool.get("functionDeclarations"), list):
            decls = tool["functionDeclarations"]
            if all(_named(d) for d in decls) and set(tool) == {"functionDeclarations"}:
                group = []
                for d in decls:
                    code = "j" if "parametersJsonSchema" in d else "g"
                    converted, h = _convert(d, code)
                    out.append(converted)
                    group.append(h)
                hint.append(["G", group])
                changed = True
                continue
        elif _named(tool) and "input_schema" in tool and "function" not in tool:
            converted, h = _convert(tool, "a")
            out.append(converted)
            hint.append(h)
            changed = True
            continue
        elif _named(tool) and tool.get("type") == "function" and "function" not in tool:
            converted, h = _convert(tool, "r")
            out.append(converted)
            hint.append(h)
            changed = True
            continue
        out.append(tool)
        hint.append(None)
    return (out, hint) if changed else (tools, None)


def tools_back(tools: list, hint: list) -> list:
    """The source tool list from ``tools_to_openai``'s output and hint."""
    it = iter(tools)
    out: list[Any] = []
    for h in hint:
        if h is None:
            out.append(next(it))
        elif h[0] == "G":
            out.append({"functionDeclarations": [_back(next(it), g) for g in h[1]]})
        else:
            out.append(_back(next(it), h))
    return out


def _back(tool: dict, h: list) -> dict:
    code, keys = h
    fn = tool["function"]
    schema_key = _SCHEMA_KEY[code]
    out: dict[str, Any] = {}
    for key in keys:
        if key == schema_key:
            out[key] = fn["parameters"]
        elif key == "type" and code == "r":
            out[key] = "function"
        else:
            out[key] = fn[key]
    return out
