"""Fields that choose what a record is — a role, a type, a kind — given an empty string, an unknown string or a
value of another type, in every registered format (issue 28, item 6).

Readers look these values up in tables (``ROLE_SRC[role]``, ``kind in HOSTED_FN``): an empty role reached a
``KeyError: ''`` and a list or object an unhashable ``TypeError``, past every bad-record policy. Each record must
now come out as a document or a ``PchronicleError`` with its pointer: never another exception.

The seeds are the real files of each format (``tests/data/<format>/``, the shipped samples); each field named in
``FIELDS`` is replaced, one at a time, at its first place per pointer pattern and original value (a role
``user`` and a role ``tool`` take different branches; the hundredth ``user`` takes none new).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from pchronicle_datasets.cli import main
from pchronicle_datasets.errors import FormatError, PchronicleError
from pchronicle_datasets.formats import formats, iter_records
from pchronicle_datasets.pointer import parse
from tests.fuzz_strategies import replace_at

ROOT = Path(__file__).resolve().parents[2]
#: The keys whose values readers dispatch on, in any format (other keys are covered by tests/test_fuzz.py).
FIELDS = frozenset(
    {"role", "type", "kind", "from", "src", "source", "speaker", "event", "action", "observation", "author"}
    | {"sender", "subtype", "status", "itemType", "mode", "name", "tool", "agent", "state", "category"}
)
WRONG = {"empty": "", "unknown": "zz-unknown", "number": 0, "list": [], "object": {}}
MAX_SEED_BYTES = 200_000  # the bigger real files add time, not branches


def _seeds(fmt: str) -> list[Path]:
    folder = fmt.replace("-", "_")
    found = []
    for base in (ROOT / "tests" / "data" / folder, ROOT / "pchronicle_datasets" / "samples" / folder):
        if base.is_dir():
            found += [
                p
                for p in sorted(base.rglob("*"))
                if p.is_file()
                and p.name != "README.md"
                and ".expected." not in p.name
                and p.stat().st_size <= MAX_SEED_BYTES
            ]
    return found


def _values(data: bytes) -> tuple[bool, list[Any]] | None:
    """``(whole, values)``: the file as one JSON document, or as JSON Lines; None when it is neither."""
    try:
        return True, [orjson.loads(data)]
    except orjson.JSONDecodeError:
        try:
            return False, [orjson.loads(line) for line in data.splitlines() if line.strip()]
        except orjson.JSONDecodeError:
            return None


def _fields(value: Any, path: tuple = ()) -> Any:
    if isinstance(value, dict):
        for key, child in value.items():
            if key in FIELDS:
                yield (*path, key), child
            yield from _fields(child, (*path, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _fields(child, (*path, i))


def _pattern(path: tuple, old: Any) -> tuple:
    what = type(old).__name__ if isinstance(old, (dict, list)) else json.dumps(old)[:40]
    return tuple("*" if isinstance(t, int) else t for t in path), what


def _mutants(fmt: str) -> Any:
    seen: set[tuple] = set()
    for seed in _seeds(fmt):
        parsed = _values(seed.read_bytes())
        if parsed is None:
            continue
        whole, values = parsed
        for i, value in enumerate(values):
            for path, old in _fields(value):
                if (key := _pattern(path, old)) in seen:
                    continue
                seen.add(key)
                for name, new in WRONG.items():
                    if type(old) is type(new) and old == new:
                        continue
                    changed = [*values[:i], replace_at(value, path, new), *values[i + 1 :]]
                    text = json.dumps(changed[0]) if whole else "".join(json.dumps(v) + "\n" for v in changed)
                    yield f"{seed.name} value {i + 1} /{'/'.join(map(str, path))} = {name}", text.encode()


FORMATS = sorted({m.NAME for m in formats()})


@pytest.mark.parametrize("fmt", FORMATS)
def test_dispatch_fields_given_empty_unknown_or_wrong_values(fmt):
    failures: dict[str, list[str]] = {}
    tried = 0
    for where, data in _mutants(fmt):
        tried += 1
        try:
            for rec in iter_records(fmt, data, f"seed.{fmt}"):
                if rec.error is not None:
                    assert isinstance(rec.error, PchronicleError)
                    parse(rec.error.pointer)  # a valid JSON Pointer
        except PchronicleError:
            pass
        except Exception as exc:  # what this test is for: nothing else may come out of a reader
            failures.setdefault(f"{type(exc).__name__}: {str(exc)[:80]}", []).append(where)
    assert tried, f"no seed of {fmt} has a dispatch field"
    report = "\n".join(f"{len(w)}x {sig}\n    e.g. {'; '.join(w[:3])}" for sig, w in sorted(failures.items()))
    assert not failures, f"{fmt}: {report}"


EMPTY_ROLE = (
    b'{"messages":[{"role":"","content":"hi"},{"role":"assistant","content":"yo"}]}\n'
    b'{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"yo"}]}\n'
)


def test_an_empty_chat_role_is_a_format_error_with_its_pointer_and_line(tmp_path, capsys):
    [bad, good] = list(iter_records("chat", EMPTY_ROLE, "r.jsonl"))
    assert isinstance(bad.error, FormatError) and bad.error.pointer == "/messages/0/role" and bad.error.line == 1
    assert good.error is None and [t["msg"] for t in good.story["turns"]] == ["hi", "yo"]
    path = tmp_path / "r.jsonl"
    path.write_bytes(EMPTY_ROLE)
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr()
    assert "/messages/0/role: a message's role is empty" in out.out and f"{path} line 1" in out.out
    assert "1 valid document(s), 1 problem(s)" in out.err
    q, out_file = tmp_path / "q.jsonl", tmp_path / "out.jsonl"
    argv = ["convert", str(path), "--to", "storyline", "-o", str(out_file), "--on-bad-records", "skip"]
    assert main([*argv, "--quarantine", str(q)]) == 0
    assert len(out_file.read_text().splitlines()) == 1  # line 2 loaded
    [entry] = [json.loads(line) for line in q.read_text().splitlines()]
    assert (entry["line"], entry["pointer"], entry["error_type"]) == (1, "/messages/0/role", "FormatError")
