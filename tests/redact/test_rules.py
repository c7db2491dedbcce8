"""Each rule against a valid-looking sample and against near misses; placeholders, allowlists, denylists."""

from __future__ import annotations

import re

import pytest

from pchronicle_datasets.redact import RULES, RedactionConfig, RedactionError, Redactor
from pchronicle_datasets.redact.engine import PLACEHOLDER
from tests.redact.planted import MORE_PATHS, NEAR_MISSES, PLANTED


def test_every_rule_has_a_sample_and_its_metadata():
    assert set(PLANTED) == {r.id for r in RULES}
    for r in RULES:
        assert r.description and r.provenance and re.fullmatch(r"[a-z0-9-]+", r.kind), r.id


@pytest.mark.parametrize("rule_id", sorted(PLANTED))
def test_rule_finds_its_sample(rule_id):
    text, secret = PLANTED[rule_id]
    r = Redactor(key="k")
    out = r.text(text, file="f", pointer="/turns/0/msg")
    assert secret not in out
    assert r.report.by_rule() == {rule_id: 1}, r.report.counts
    placeholder = PLACEHOLDER.search(out).group(0)
    kind = next(x.kind for x in RULES if x.id == rule_id)
    assert placeholder.startswith(f"<REDACTED:{kind}:")


@pytest.mark.parametrize("text", NEAR_MISSES, ids=lambda t: t[:40])
def test_near_misses_survive(text):
    r = Redactor(key="k")
    assert r.text(text) == text, r.report.counts


@pytest.mark.parametrize("path", sorted(MORE_PATHS))
def test_user_paths(path):
    out = Redactor(key="k").text(path)
    assert MORE_PATHS[path] not in out and "<REDACTED:user-name:" in out


def test_same_value_same_placeholder_two_values_two():
    r = Redactor(key="k")
    a, b = PLANTED["github-classic-token"][1], PLANTED["huggingface-token"][1]
    first = r.text(f"{a} then {a} and {b}")
    found = PLACEHOLDER.findall(first)
    assert found[0] == found[1] != found[2]
    # A placeholder is stable within a run and with a given key, and differs between keys.
    assert Redactor(key="k").text(a) == r.text(a) != Redactor(key="other").text(a)
    assert Redactor().text(a) != Redactor().text(a)  # random per-run keys


def test_placeholder_is_a_keyed_hash_not_a_bare_one():
    import hashlib

    secret = PLANTED["github-classic-token"][1]
    suffix = Redactor(key="k").text(secret).rsplit(":", 1)[1][:-1]
    assert suffix not in (hashlib.sha256(secret.encode()).hexdigest()[:8], hashlib.md5(secret.encode()).hexdigest()[:8])


def test_suffix_collisions_get_longer_suffixes():
    r = Redactor(key="k")
    r._taken["deadbeef"] = "f" * 64  # a suffix taken by another value
    r._suffix.clear()
    import hashlib
    import hmac

    digest = hmac.new(b"k", b"v", hashlib.sha256).hexdigest()
    r._taken[digest[:8]] = "0" * 64
    assert r.placeholder("secret", "v") == f"<REDACTED:secret:{digest[:12]}>"


def test_allowlists():
    token = PLANTED["github-classic-token"][1]
    cfg = RedactionConfig(allow=(token,), allow_regex=(r"^Pw",), allow_email=("acme-corp.io", "ops@"))
    r = Redactor(cfg)
    assert r.text(token) == token
    text, _pw = PLANTED["url-password"]
    assert r.text(text) == text
    assert r.text("alice.liddell@acme-corp.io, bob@eu.acme-corp.io, ops@other.org") == (
        "alice.liddell@acme-corp.io, bob@eu.acme-corp.io, ops@other.org"
    )
    assert "<REDACTED:email:" in r.text("carol@elsewhere.org")


def test_denylist_values_and_secrets_file(tmp_path):
    env = tmp_path / ".env"
    env.write_text('DB_HOST=db.internal\nexport API_PASSPHRASE="correct horse battery"\nPORT=5432\n')
    r = Redactor(RedactionConfig(secrets=("plainword7",), secrets_files=(str(env),)))
    out = r.text("use plainword7 and correct horse battery on db.internal:5432")
    assert "plainword7" not in out and "correct horse battery" not in out and "db.internal" not in out
    assert ":5432" in out  # short values and numbers are never denylisted
    assert r.report.by_rule() == {"denylisted-secret": 3}
    with pytest.raises(RedactionError, match="shorter than"):
        Redactor(RedactionConfig(secrets=("abc",)))


def test_config_file_and_bad_config(tmp_path):
    f = tmp_path / "redact.yaml"
    f.write_text("key: stable\nallow_email: [acme-corp.io]\ndisable: [user-path]\n")
    cfg = RedactionConfig.from_file(f)
    r = Redactor(cfg)
    assert r.text("/home/alicel/x alice.liddell@acme-corp.io") == "/home/alicel/x alice.liddell@acme-corp.io"
    assert Redactor(cfg).text("x@y.org") == r.text("x@y.org")  # the config's key: stable across runs
    f.write_text("allow_emails: [x]\n")
    with pytest.raises(RedactionError, match="unknown key"):
        RedactionConfig.from_file(f)
    with pytest.raises(RedactionError, match="unknown rule"):
        RedactionConfig(disable=("nope",))
    with pytest.raises(RedactionError, match="not a regular expression"):
        RedactionConfig(allow_regex=("(",))


def test_long_inputs_scan_in_linear_time():
    # Shapes that make a backtracking pattern explode (long runs of one class, many separators); the
    # patterns are bounded, so each of these returns (a hang fails the suite).
    for text in ("a" * 200_000, "a_" * 100_000, "key" * 50_000, "x@" * 50_000 + "y", "/home/" * 30_000):
        assert Redactor(key="k").text(text) is not None


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("~/.claude/projects/-home-bobsmith-dev-app/s.jsonl", "bobsmith-dev-app"),
        ("~/.claude/projects/C--Users-carol-dev-app/s.jsonl", "carol-dev-app"),
        ("~/.pi/agent/sessions/--home-dave.k-src-app--/2026.jsonl", "dave.k-src-app--"),
        ("~/.pi/agent/sessions/--C--Users-erin-src--/2026.jsonl", "erin-src--"),
    ],
)
def test_a_home_folder_written_as_a_folder_name_goes_with_the_rest_of_the_name(text, value):
    # Claude Code and Pi name a session's folder after its working directory: the user name's end cannot be told
    redacted = Redactor().text(text)
    assert value not in redacted and value.split("-")[0] not in redacted and "<REDACTED:user-name:" in redacted
