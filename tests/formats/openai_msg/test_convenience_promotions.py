"""RFC-0009, "便利提升" (convenience promotions): ``latency_ms`` / ``ttft_ms`` from the metrics, and
``/final_metrics`` as a copy of the session's last response turn metrics."""

from __future__ import annotations

import pytest

from tests.formats.openai_msg.helpers import case, family, one, turn


@pytest.mark.parametrize("member", family("latency"))
def test_latency_and_ttft_promoted_only_when_integers(member: str) -> None:
    golden = case(f"latency/{member}")
    story = one(golden)
    promoted = golden.expected["turn_2_promoted"]
    response = turn(story, 2)
    assert response["metrics"] == golden.expected["turn_2_metrics"]
    assert response.get("latency_ms") == promoted and response.get("ttft_ms") == promoted
    assert ("latency_ms" in response) == (promoted is not None)


def test_final_metrics_copies_the_last_response_turn_metrics() -> None:
    golden = case("final_metrics")
    story = one(golden)
    assert turn(story, 2)["metrics"] == golden.expected["turn_2_metrics"]
    assert turn(story, 4)["metrics"] == golden.expected["turn_4_metrics"]
    assert story["final_metrics"] == golden.expected["final_metrics"]
    golden = case("no_final_metrics")
    story = one(golden)
    assert turn(story, 2)["metrics"] == golden.expected["turn_2_metrics"]
    assert "final_metrics" not in story  # only the last response turn is copied
