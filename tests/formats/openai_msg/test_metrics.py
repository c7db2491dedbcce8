"""RFC-0009, the metrics table ("已知 metric 键组成 response turn 上的一个 /metrics 对象"): row-level metric keys
and ``meta_json.env_state`` metric keys go to the response turn's ``/metrics``; a row-level key wins."""

from __future__ import annotations

import pytest

from tests.formats.openai_msg.helpers import case, family, fields, one, turn


@pytest.mark.parametrize("key", family("row_metric"))
def test_row_metric_is_response_metrics(key: str) -> None:
    golden = case(f"row_metric/{key}")
    story = one(golden)
    assert turn(story, 2)["metrics"] == golden.expected["turn_2_metrics"]
    assert story["final_metrics"] == golden.expected["final_metrics"]
    assert fields(story) == golden.expected["fields"]


@pytest.mark.parametrize("key", family("env_state_metric"))
def test_env_state_metric_is_response_metrics(key: str) -> None:
    golden = case(f"env_state_metric/{key}")
    story = one(golden)
    assert turn(story, 2) == golden.expected["turn_2"]
    assert story["final_metrics"] == golden.expected["final_metrics"]
    assert "env" not in turn(story, 2) and "task" not in story  # metric keys never go to env
    assert fields(story) == golden.expected["fields"]


def test_row_level_metric_wins_over_env_state_and_consumes_it() -> None:
    golden = case("row_metric_wins")
    story = one(golden)
    assert turn(story, 2)["metrics"] == golden.expected["turn_2_metrics"]
    assert fields(story) == golden.expected["fields"]
