"""File names made from data, safe to write: they never leave the output folder and never clash.

Session ids are user data: ``../etc/passwd``, ``a/b``, ``C:\\x``, NUL bytes, ``CON``, 10,000 characters, or
two ids that differ only in case (one file on a case-insensitive disk). ``document_file_names`` maps each
id to a plain file name of safe characters; whenever that mapping had to change the id, or two ids would
meet on a case-insensitive disk, a short hash of the exact id keeps the names apart.

>>> document_file_names(["run-1", "../../etc/passwd", "Run-1"])
['run-1.storyline.json', 'etc_passwd-3754d6cb3a.storyline.json', 'Run-1-54c3241fc7.storyline.json']
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

__all__ = ["DOCUMENT_FILE_SUFFIX", "document_file_names", "safe_path"]

MAX_STEM = 100
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))}


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def _stem(name: str) -> str:
    stem = _UNSAFE.sub("_", name).strip("._-") or "document"
    if stem.split(".")[0].lower() in _RESERVED:
        stem = f"_{stem}"
    return stem[:MAX_STEM]


DOCUMENT_FILE_SUFFIX = ".storyline.json"  # RFC-0001's {session}.storyline.json


def document_file_names(names: Sequence[str], suffix: str = DOCUMENT_FILE_SUFFIX) -> list[str]:
    """One safe, distinct file name per entry of ``names`` (``{session}.storyline.json`` when the session id
    is already a plain, unique name), deterministic for the same list."""
    stems = [_stem(n) for n in names]
    folded: dict[str, int] = {}
    for stem in stems:
        folded[stem.lower()] = folded.get(stem.lower(), 0) + 1
    out: list[str] = []
    first_plain: set[str] = set()
    for name, stem in zip(names, stems, strict=True):
        plain = stem == name and folded[stem.lower()] == 1
        if not plain and stem == name and stem.lower() not in first_plain:
            # The first of several ids that meet on a case-insensitive disk keeps its plain name.
            first_plain.add(stem.lower())
            plain = True
        out.append(f"{stem}{suffix}" if plain else f"{stem}-{_digest(name)}{suffix}")
    # A crafted id could still spell another's hashed name: the last word on uniqueness is a counter.
    seen: set[str] = set()
    for i, name in enumerate(out):
        candidate, n = name, 1
        while candidate.lower() in seen:
            n += 1
            candidate = name.replace(suffix, f"-{n}{suffix}")
        seen.add(candidate.lower())
        out[i] = candidate
    return out


def safe_path(folder: str | Path, file_name: str) -> Path:
    """``folder / file_name``, refusing anything that would resolve outside ``folder``."""
    root = Path(folder).resolve()
    path = (root / file_name).resolve()
    if path.parent != root:
        raise ValueError(f"refusing to write {file_name!r} outside {root}")
    return path
