"""Measure redaction on real files: the number of values each rule would replace in each file (never the
values). Every string of each file is scanned as a decoded value (a JSON file whole, JSON Lines line by
line; other text files as one string; a SQLite database as the JSON its reader builds of each session, an
OpenCode database's exports), as push would scan them once read. docs/redaction.md lists the
results and what each redaction was.

    python scripts/redaction_false_positives.py tests/data ../shared/corpora
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

from pchronicle_datasets.formats import iter_records
from pchronicle_datasets.formats.database import is_database
from pchronicle_datasets.redact import Redactor
from pchronicle_datasets.redact.walk import redact_value


def values(path: Path):
    if is_database(path.read_bytes()[:16]):  # its rows are what a load reads: each session as its reader sees it
        for rec in iter_records("auto", path.read_bytes(), path.name):
            yield rec.value
        return
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        yield json.loads(text)
        return
    except ValueError:
        pass
    for line in text.splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            yield line


def main(roots: list[str]) -> int:
    files = sorted(p for root in roots for p in Path(root).rglob("*") if p.is_file() and p.suffix != ".md")
    quiet = 0
    totals: collections.Counter = collections.Counter()
    for path in files:
        r = Redactor(key="measure")
        for value in values(path):
            redact_value(r, value, file=str(path))
        if not r.report:
            quiet += 1
            continue
        totals.update(r.report.by_rule())
        rules = ", ".join(f"{k} {n}" for k, n in r.report.by_rule().items())
        print(f"{path}: {r.report.total} ({rules})")
    print(f"{len(files)} file(s); {quiet} with nothing redacted; by rule: {dict(totals)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["tests/data"]))
