"""Sidecar files: small files beside a trajectory file that are not documents but inform its reader (Claude Code
2.1.x writes ``agent-<id>.meta.json`` beside a subagent's ``agent-<id>.jsonl``: the call that started it).

A format that has them says so with ``SIDECAR = True`` and ``sidecar_of(name) -> name | None`` (the sidecar of
a file); its ``iter_records`` then takes ``sidecar=`` (the sidecar's bytes). The builder and the CLI list the
files of a folder through ``pair``: a sidecar listed beside its file is taken out of the documents and given to
the file's reader instead, so it is never read as a document of its own.

A format may also say that several files of a folder are one document (``MEMBERS = True`` and ``member_of(name)
-> document id | None``: an OpenHands conversation folder, ``<id>/base_state.json`` and ``<id>/events/event-*.json``,
one event per file): ``groups`` finds them, ``pair`` keeps only the first of each group as a document, and
``join_members`` makes the document's bytes, one JSON Lines line per member in name order, which every loader
(builder, CLI, ``read_batches``, Spark) reads as one file named by the document id.

A format may also name files its harness writes beside the sessions that hold none (``INDEX_FILES``: Claude
Code's ``sessions-index.json``; a key ending in ``/`` names a folder, every file below a folder of that name:
Claude Code's ``tool-results/``): ``pair`` leaves them out of the documents, and ``index_files`` says what each
is, for the builder and the CLI to report, so a folder loads without stopping on a file no reader takes.

A SQLite database (``opencode.db``: ``DATABASE_EXTENSIONS``) has the write-ahead log SQLite keeps beside it
(``opencode.db-wal``: the changes a running harness has not folded into the file yet) as its sidecar, whatever its
format (``sidecar_names``): every loader gives the log to the database's reader, which opens the two together
(``formats.database``); the shared-memory index (``-shm``) is never read (SQLite rebuilds it). Neither is listed as a
document (their names end in no reader's extension).

>>> pair(["s.jsonl", "s/subagents/agent-a1.jsonl", "s/subagents/agent-a1.meta.json", "x.meta.json"])
([0, 1, 3], {1: 2})
>>> pair(["p/sessions-index.json", "p/s.jsonl"]), index_files(["p/sessions-index.json", "p/s.jsonl"])[0][:21]
(([1], {}), 'the index of the proj')
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Sequence

__all__ = [
    "DATABASE_EXTENSIONS",
    "FOLDER_EXTENSIONS",
    "WAL_SUFFIX",
    "copies_note",
    "folder_files",
    "groups",
    "index_files",
    "index_note",
    "join_members",
    "pair",
    "read_sidecar",
    "sidecar_names",
]

#: The files of a folder given to the CLI that are read (what the builder takes from a ``data_dir`` too): every
#: format's ``EXTENSION`` (SWE-agent writes ``.traj``) and the compressed files.
#: The names SQLite databases of harnesses end in (``opencode.db``, Goose's ``sessions.db``): a folder's listing takes
#: them (a database is recognised by its first bytes, not its name: given by name, any database is read).
DATABASE_EXTENSIONS = (".db",)
FOLDER_EXTENSIONS = (".json", ".jsonl", ".traj", *DATABASE_EXTENSIONS, ".gz", ".zst", ".bz2", ".xz")
#: In an ``INDEX_FILES`` name, what separates the file's name from the file that must lie beside it (``index_files``).
BESIDE = " beside "
#: The write-ahead log SQLite keeps beside a database in WAL mode: ``<database>-wal``.
WAL_SUFFIX = "-wal"


def sidecar_names(name: str) -> list[str]:
    """The sidecars that may inform the file ``name``, one per format that has them; of a database, its write-ahead
    log (SQLite's own naming, the same for every harness).

    >>> sidecar_names("share/opencode/opencode.db")
    ['share/opencode/opencode.db-wal']
    """
    from .formats import capability, formats

    out = [name + WAL_SUFFIX] if name.endswith(DATABASE_EXTENSIONS) else []
    for module in formats():
        if capability(module, "sidecars") is not None:
            found = module.sidecar_of(name)
            if found is not None and found not in out:
                out.append(found)
    return out


def index_files(names: Sequence[str]) -> dict[int, str]:
    """The files of ``names`` that a format's ``INDEX_FILES`` names, each with what it is. A name is a file's base
    name, or its last path parts when it holds a ``/`` (``sessions/x.json``: only in a folder ``sessions``), with
    ``*`` standing for any part of a name (OpenClaw's ``<session id>.trajectory.jsonl``); a name ending in ``/`` is
    a folder, every file below it at any depth (Claude Code's ``tool-results/``). A name with more path parts is
    tried first: it says more of where the file lies. A name ``<name> beside <file>`` (``BESIDE``) matches only
    when ``<file>`` is listed in the same folder too (Goose's session files from before its database, which it
    imported into the ``sessions.db`` beside them and left there: the same sessions twice).

    >>> list(index_files(["a/sessions/s1.trajectory-path.json", "a/s1.trajectory-path.json", "p/logs.json"]))
    [0, 2]
    >>> sorted(index_files(["g/20250801_1.jsonl", "g/sessions.db", "h/20250801_2.jsonl"]))
    [0]
    >>> found = index_files(["p/s.jsonl", "p/s/tool-results/toolu_01.json", "p/s/tool-results/p1/page-1.json"])
    >>> sorted(found), found[1]
    ([1, 2], 'a tool output Claude Code kept apart, too big for the conversation')
    """
    from .formats import capability, formats

    known: dict[str, str] = {}
    for module in formats():
        if capability(module, "index_files") is not None:
            known.update(module.INDEX_FILES)
    folders = {key.rstrip("/"): what for key, what in known.items() if key.endswith("/")}
    # the most specific name first: a Kimi CLI subagent's subagents/*/meta.json is not Qwen Code's meta.json; of as
    # many parts, the one that spells more of them (Kimi Code's sessions/wd_*/session_*/state.json before Kimi CLI's
    # sessions/*/*/state.json)
    files = sorted(
        ((k, w) for k, w in known.items() if not k.endswith("/")),
        key=lambda kw: (-kw[0].count("/"), -len(kw[0].replace("*", ""))),
    )
    listed = {name.replace(os.sep, "/") for name in names}
    out: dict[int, str] = {}
    for i, name in enumerate(names):
        parts = name.replace(os.sep, "/").split("/")
        found = next((folders[p] for p in parts[:-1] if p in folders), None)
        if found is None:
            found = next(
                (what for pattern, what in files if _matches(parts, *pattern.partition(BESIDE)[::2], listed)),
                None,
            )
        if found is not None:
            out[i] = found
    return out


def _matches(parts: list[str], pattern: str, beside: str, listed: set[str]) -> bool:
    """Whether a file's path ``parts`` match an ``INDEX_FILES`` name (``pattern``, and the file that must be
    ``beside`` it in ``listed``, when the name says so)."""
    if not fnmatch.fnmatchcase("/".join(parts[-(pattern.count("/") + 1) :]), pattern):
        return False
    return not beside or "/".join([*parts[:-1], beside]) in listed


def index_note(names: Sequence[str], paths: Sequence[str] | None = None) -> str | None:
    """What the builder, ``read_batches`` and the CLI say of the index files ``pair`` left out of ``names``.

    >>> index_note(["p/sessions-index.json", "p/s.jsonl"])[:62]
    'left out 1 file that holds no session: p/sessions-index.json ('
    """
    found = index_files(names if paths is None else paths)
    if not found:
        return None
    first = min(found)
    more = f" and {len(found) - 1} more" if len(found) > 1 else ""
    return (
        f"left out {len(found)} file{'s' if len(found) > 1 else ''} that hold{'' if len(found) > 1 else 's'} no "
        f"session: {names[first]} ({found[first]}){more}"
    )


def groups(names: Sequence[str]) -> dict[int, tuple[str, list[int]]]:
    """The files of ``names`` that are the members of one document (a format's ``member_of``), for each group of two
    or more: its first member's index → (the document id, every member's index in name order). A lone member is
    read as the file it is (its reader says what it lacks).

    >>> groups(["c1/base_state.json", "c1/events/event-00001-0123abcd.json", "c1/events/event-00000-89abcdef.json"])
    {0: ('c1', [0, 2, 1])}
    """
    from .formats import capability, formats

    declaring = [m for m in formats() if capability(m, "members") is not None]
    found: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        for module in declaring:
            group = module.member_of(name.replace(os.sep, "/"))
            if group is not None:
                found.setdefault(group, []).append(i)
                break
    out: dict[int, tuple[str, list[int]]] = {}
    for group, members in found.items():
        if len(members) > 1:
            members.sort(key=lambda i: names[i])
            out[members[0]] = (group, members)
    return out


def join_members(values: Sequence[bytes]) -> bytes:
    """One document's bytes from its member files' (``groups``): each a JSON value on a line of its own. A raw
    line break in a JSON text is white space between tokens (a string holds it escaped), so a pretty-printed member
    becomes one line with the same value.

    >>> join_members([b'{"a":\\n 1}', b'{"b": 2}\\n'])
    b'{"a":  1}\\n{"b": 2} \\n'
    """
    return b"".join(v.replace(b"\r", b" ").replace(b"\n", b" ") + b"\n" for v in values)


def pair(names: Sequence[str], paths: Sequence[str] | None = None) -> tuple[list[int], dict[int, int]]:
    """``(documents, sidecars)``: the indices of the files that are documents, and for each of those that has a
    sidecar among ``names``, the sidecar's index. A file is a sidecar only when the file it informs is listed
    too: a lone ``x.meta.json`` stays a document (and detection says what it is). The members of a group
    (``groups``) but the first are no documents: the first's reader gets them all. An index file (``index_files``)
    is no document; ``paths`` (the same files as given, when ``names`` are ids relative to a ``data_dir``) keep
    the folders an index file's name may require."""
    where = {name: i for i, name in enumerate(names)}
    sidecars: dict[int, int] = {}
    for i, name in enumerate(names):
        for side in sidecar_names(name):
            if side in where and where[side] != i:
                sidecars[i] = where[side]
                break
    taken = set(sidecars.values()) | set(index_files(names if paths is None else paths))
    taken |= {j for _, members in groups(names).values() for j in members[1:]}  # read with their group's first
    return [i for i in range(len(names)) if i not in taken], sidecars


def folder_files(paths: Sequence[str]) -> list[str]:
    """``paths`` with each local folder replaced by its files (``FOLDER_EXTENSIONS``, recursively, in sorted
    order): the CLI reads ``~/.claude/projects`` as it lies on disk.

    >>> folder_files(["a.jsonl"])
    ['a.jsonl']
    """
    out: list[str] = []
    for path in paths:
        if "://" not in path and os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                out.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(FOLDER_EXTENSIONS))
        else:
            out.append(path)
    return out


def copies_note(names: Sequence[str], folder: str, read_them: str) -> str | None:
    """What a folder's listing says of the files below ``folder`` it leaves out whose name holds a reader's
    extension without ending with it (``datasets`` takes such a name: OpenClaw's ``<id>.jsonl.bak-<pid>-<ms>``,
    a copy of a session, would be read as a session of its own); ``read_them``: how to read them anyway. None
    when ``names`` holds none.

    >>> copies_note(["a/s.jsonl", "a/s.jsonl.bak-1-2", "a/t.txt"], "a", "name them").split(", e.g. ")[1]
    'a/s.jsonl.bak-1-2: name them'
    """
    copies = [
        n
        for n in names
        if not n.endswith(FOLDER_EXTENSIONS)
        and any("." + part in FOLDER_EXTENSIONS for part in n.replace(os.sep, "/").rsplit("/", 1)[-1].split(".")[1:])
    ]
    if not copies:
        return None
    return (
        f"left out {len(copies)} file(s) below {folder} whose name holds a reader's extension without ending with "
        f"it (copies or archives a harness keeps), e.g. {copies[0]}: {read_them}"
    )


def read_sidecar(path: str) -> bytes | None:
    """The bytes of the sidecar of a local file ``path`` when it exists beside it (a subagent file loaded alone
    still says which call started it), else None."""
    if "://" in path or "::" in path:
        return None
    for side in sidecar_names(path.replace(os.sep, "/")):
        try:
            with open(side, "rb") as f:
                return f.read()
        except OSError:
            continue
    return None
