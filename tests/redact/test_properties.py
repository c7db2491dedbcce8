"""Redaction keeps any valid document valid and changes nothing when there is nothing to redact; with
secrets spliced into its strings, none survives (hypothesis, the project's Storyline strategy)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pchronicle_datasets as pc
from tests.redact.planted import PLANTED
from tests.strategies import storylines

SECRET_TEXTS = st.sampled_from(sorted(PLANTED))


def _splice(value, secret_text: str):
    """Every string of a value's free text (msg, reason, results) with the planted text appended."""
    if isinstance(value, dict):
        return {
            k: _splice(v, secret_text) if k in ("msg", "reason", "content", "result") else v for k, v in value.items()
        }
    if isinstance(value, list):
        return [_splice(v, secret_text) for v in value]
    return value + " " + secret_text if isinstance(value, str) else value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(storylines())
def test_any_valid_document_stays_valid(story):
    r = pc.Redactor(key="k")
    out = r.story(story)
    pc.validate(out)
    if not r.report:
        assert out == story  # nothing found: nothing changed, to the type of every value


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(storylines(), SECRET_TEXTS)
def test_planted_secrets_never_survive(story, rule_id):
    text, secret = PLANTED[rule_id]
    ids = {t["id"] for t in story["turns"]}
    next_id = next(i for i in range(len(ids) + 1) if i not in ids)  # ids are unique, not ordered
    turns = [_splice(t, text) for t in story["turns"]] + [{"id": next_id, "src": "user", "msg": text}]
    story = {**story, "turns": turns}
    pc.validate(story)
    out = pc.Redactor(key="k").story(story)
    assert secret not in json.dumps(out, ensure_ascii=False)
