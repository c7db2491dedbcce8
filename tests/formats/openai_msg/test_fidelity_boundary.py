"""The fidelity boundary helper itself (RFC-0009, "保真边界"): it ignores only what the RFC normalises."""

from __future__ import annotations

import copy

from tests.formats.openai_msg.boundary import boundary
from tests.formats.openai_msg.helpers import assistant, call, row, user


def test_boundary_helper_ignores_only_what_the_rfc_normalises() -> None:
    a = [row(1, [user("q", name=None)], assistant(None, tool_calls=[call("c", "f", '{"a": 1}')]), blob_manifest=[])]
    b = [
        row(
            1, [user("q")], assistant(None, tool_calls=[{"id": "c", "function": {"name": "f", "arguments": '{"a":1}'}}])
        )
    ]
    assert boundary(a) == boundary(b)
    c = copy.deepcopy(b)
    c[0]["response"]["tool_calls"][0]["function"]["arguments"] = {"a": 1}  # string vs object counts
    assert boundary(c) != boundary(b)
    d = copy.deepcopy(b)
    d[0]["messages"][0]["name"] = "alice"  # a non-empty value counts
    assert boundary(d) != boundary(b)
    # A history copy may lose its reasoning; a new message may not.
    r1 = row(1, [user("q")], assistant("A", reasoning_content="why"))
    copy_ok = row(2, [user("q"), assistant("A"), user("q2")], assistant("B"))
    copy_full = row(2, [user("q"), assistant("A", reasoning_content="why"), user("q2")], assistant("B"))
    assert boundary([r1, copy_ok]) == boundary([r1, copy_full])
    assert boundary([row(1, [user("q")], assistant("A", reasoning_content="x"))]) != boundary(
        [row(1, [user("q")], assistant("A"))]
    )
