"""RFC-0009, the constants and file identity without a JSON source pointer ("没有 JSON 源 pointer 的常量与文件身份"):
``/origin``, the residual's ``source_document_id``, and ``src`` / ``copied`` / ``kind`` of context, request
and response turns."""

from __future__ import annotations

from tests.formats.openai_msg.helpers import case, fields, one


def test_constants_without_document_id() -> None:
    story = one(case("minimal"), doc=None)
    assert story["origin"] == {"format": "openai-msg"}
    assert story["unknown_fields"]["sources"]["openai-msg"]["source_document_id"] == ""


def test_context_turn_src_kind_and_copied_per_role() -> None:
    golden = case("context_kinds")
    story = one(golden)
    # RFC: a row's tool-role messages are that row's response-turn observation results.
    assert story["turns"] == golden.expected["turns"]
    assert fields(story) == golden.expected["fields"]


def test_request_and_response_constants() -> None:
    golden = case("response_kinds")
    story = one(golden)
    assert story["turns"] == golden.expected["turns"]
