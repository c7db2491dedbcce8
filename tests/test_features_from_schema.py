"""``STORYLINE_FEATURES`` is derived from schema.py's table (each field typed once): the columns come out
exactly as they were when they were typed by hand (``tests/data/features/storyline_features_v1.expected.json``, written
from the hand-typed table before it was removed), in the same order, so every Parquet file keeps its schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pchronicle_datasets import features, schema

PINNED = json.loads((Path(__file__).parent / "data" / "features" / "storyline_features_v1.expected.json").read_text())


def test_the_features_are_todays():
    assert json.dumps(features.STORYLINE_FEATURES.to_dict()) == json.dumps(PINNED["features"])


def test_the_training_view_is_todays():
    assert json.loads(json.dumps(features._TRAINING_VIEW)) == PINNED["training_view"]


def test_a_field_added_to_the_schema_gets_its_column(monkeypatch):
    fields = {**schema.TURN.fields, "new_field": (schema.INT, False)}
    monkeypatch.setattr(schema.TURN, "fields", fields)
    assert features._columns(schema.TURN)[-1] == ("new_field", features.INT)


@pytest.mark.parametrize("name", ["task", "env"])
def test_lenient_objects_are_json_text(name):
    holder = schema.ROOT if name == "task" else schema.TURN
    assert features._kind(holder.fields[name][0]) == features.J
