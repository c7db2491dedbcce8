"""What ``load_dataset("pchronicle", …, data_dir=FOLDER)`` reads of a folder given without ``data_files``: the
files the CLI reads of it (``sidecars.FOLDER_EXTENSIONS``), split as ``datasets`` infers splits only when that
leaves no file out.

``datasets`` resolves a ``data_dir`` for every packaged module alike: every file below it (a Claude Code
project's ``tool-results/*.txt`` too, which no reader takes: the load stopped on it), and splits inferred from
words in the paths (``test``, ``eval``, ``dev``, ``valid``…), keeping only the files of the splits it finds. A
corpus laid out as ``data/train.jsonl`` and ``data/test.jsonl`` splits as its author meant; but a session folder
is named after the working directory of each session (``~/.claude/projects/-home-me-dev-app``), so one project
under a ``test`` or ``dev`` folder made the whole load that one project's split and dropped every other session
without a word. Here the inferred splits are kept when every file of the folder is in one of them; otherwise
every file goes to ``train``, and a warning says which splits were inferred and how many files they left out.
``data_files`` given by the user (with or without ``data_dir``) are read as given.

Either way, the write-ahead log beside a database (``opencode.db-wal``) is part of what the prepared cache is known
by (``_with_log``): a running harness adds sessions to the log, not to the database file, whose time then stays the
same, and a load served from the cache would not see them.

A word in a folder that names a working directory, as harnesses write one (Claude Code and Qwen Code:
``-home-me-dev-app``, ``C--Users-me-test``; Pi: ``--home-me-dev-app--``; Kimi Code: ``wd_test_ac3bb318f98e``), is
no split either: one project at ``~/dev/app`` made every session of the folder a ``validation`` split, and a user's
``ds["train"]`` a KeyError. Such a folder name starts with ``-`` (or ``X--``, a Windows drive), or is ``wd_``, the
project's name and a 12-digit hash; a corpus author names a split folder or file otherwise.

>>> split_folder({"test": ["p/test/s.jsonl"]}, ["p/app/s.jsonl", "p/test/s.jsonl"])
({'train': ['p/app/s.jsonl', 'p/test/s.jsonl']}, 1)
>>> split_folder({"train": ["d/train.jsonl"], "test": ["d/test.jsonl", "d/a.txt"]}, ["d/test.jsonl", "d/train.jsonl"])
({'train': ['d/train.jsonl'], 'test': ['d/test.jsonl']}, 0)
>>> split_folder({"validation": ["p/-home-me-dev-app/s.jsonl"]}, ["p/-home-me-dev-app/s.jsonl"], "p")
({'train': ['p/-home-me-dev-app/s.jsonl']}, 0)
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from ..sidecars import DATABASE_EXTENSIONS, FOLDER_EXTENSIONS, WAL_SUFFIX, copies_note
from .ids import resolved_dir

__all__ = ["install", "split_folder"]


# datasets' split words (data_files.SPLIT_KEYWORDS) and what may stand beside one (NON_WORDS_CHARS)
_SPLIT_WORDS = {
    "train": ("train", "training"),
    "validation": ("validation", "valid", "dev", "val"),
    "test": ("test", "testing", "eval", "evaluation"),
}
_BESIDE = r"[-._ 0-9]"
# A folder a harness named after a working directory: -home-me-app (Claude Code, Qwen Code), C--Users-me (Windows),
# --home-me-app-- (Pi), wd_<project>_<12 hex digits> (Kimi Code: wd_test_ac3bb318f98e)
_WORKING_DIRECTORY = re.compile(r"-|[A-Za-z]--|wd_.*_[0-9a-f]{12}$")


def split_folder(
    inferred: Mapping[str, Sequence[str]], every: Sequence[str], base: str | None = None
) -> tuple[dict[str, list[str]], int]:
    """``(splits, left out)``: ``inferred`` (``datasets``' splits of the folder) restricted to ``every`` (the files the
    CLI reads of it) when they cover all of ``every``, else ``{"train": every}`` and how many files the inferred
    splits left out. A split none of whose files has its word outside a working directory's folder name (paths
    below ``base``) is no split."""
    readable = set(every)
    inferred = {
        split: files
        for split, files in inferred.items()
        if any(_named_split(f, split, base) for f in files if f in readable)
    }
    if not inferred:
        return {"train": list(every)}, 0
    kept = {split: [f for f in files if f in readable] for split, files in inferred.items()}
    kept = {split: files for split, files in kept.items() if files}
    covered = {f for files in kept.values() for f in files}
    if covered == readable or not readable:
        return kept, 0
    return {"train": list(every)}, len(readable - covered)


def _named_split(path: str, split: str, base: str | None) -> bool:
    """Whether ``path`` has a word of ``split`` in a part that is not a working directory's folder name (a split
    datasets knows no word of is taken as named)."""
    words = _SPLIT_WORDS.get(split)
    if words is None:
        return True
    rel = PurePosixPath(path)
    if base is not None and rel.is_relative_to(base):
        rel = rel.relative_to(base)
    word = re.compile(rf"(?:^|{_BESIDE})(?:{'|'.join(words)})(?:{_BESIDE}|$)", re.IGNORECASE)
    return any(word.search(part) for part in rel.parts if not _WORKING_DIRECTORY.match(part))


def _with_log(path: str, meta: tuple) -> tuple:
    """A file's origin metadata, with the size and time of the write-ahead log beside a local database: a running
    harness writes there, not in the database, until it checkpoints, so the database's own time stays the same while
    sessions are added, and a load served from the cache would not see them.

    >>> _with_log("/nowhere/opencode.db", ("1.0",))
    ('1.0',)
    """
    if "://" in path or not path.endswith(DATABASE_EXTENSIONS):
        return meta
    try:
        stat = os.stat(path + WAL_SUFFIX)
    except OSError:
        return meta
    return (*meta, f"wal:{stat.st_size}:{stat.st_mtime_ns}")


def _logs_in_origin(files: Any) -> Any:
    """``datasets``' resolved ``data_files`` with each database's log in its origin metadata (``_with_log``)."""
    from datasets.data_files import DataFilesDict, DataFilesList

    if not isinstance(files, DataFilesDict):
        return files
    return DataFilesDict(
        {
            split: DataFilesList(
                list(found),
                origin_metadata=[_with_log(f, m) for f, m in zip(found, found.origin_metadata, strict=True)],
            )
            for split, found in files.items()
        }
    )


def _folder_data_files(inferred: Any, base_path: str, download_config: Any) -> Any:
    """``split_folder`` on ``datasets``' own objects: ``inferred`` a ``DataFilesDict`` of the folder."""
    from datasets.data_files import DataFilesDict, DataFilesList
    from datasets.utils import logging

    try:
        listed = DataFilesList.from_patterns(["**"], base_path=base_path, allowed_extensions=list(FOLDER_EXTENSIONS),
                                             download_config=download_config)  # fmt: skip
    except FileNotFoundError:
        listed = DataFilesList([], origin_metadata=[])
    # Each file's origin (its modification time, an ETag) is what datasets fingerprints the prepared cache with.
    origin = {f: _with_log(f, meta) for f, meta in zip(listed, listed.origin_metadata, strict=True)}
    # datasets takes a file whose name holds an extension anywhere in it: the copies and archives a harness keeps
    # beside a session (OpenClaw's `<id>.jsonl.bak-<pid>-<ms>`, `<id>.jsonl.reset.<time>`) were read as sessions of
    # their own, the same conversation many times over. The CLI's rule (sidecars.folder_files): the name's end.
    every = [f for f in listed if f.endswith(FOLDER_EXTENSIONS)]
    if not every:
        raise FileNotFoundError(
            f"no file with a {', '.join(FOLDER_EXTENSIONS)} extension below {base_path} (the files the readers take)"
        )
    if note := copies_note(list(listed), base_path, "give them as data_files to read them"):
        logging.get_logger(__name__).warning(f"pchronicle: {note}")
    splits, left_out = split_folder({str(k): list(v) for k, v in inferred.items()}, every, base_path)
    if left_out:
        named = ", ".join(str(k) for k in inferred)
        logging.get_logger(__name__).warning(
            f"pchronicle: datasets inferred the split(s) {named} from words in the paths below {base_path}, but they "
            f"leave out {left_out} of its {len(every)} files: every file is read into the train split. To split the "
            'folder, name the splits: data_files={"train": …, "test": …}.'
        )
    return DataFilesDict(
        {split: DataFilesList(files, origin_metadata=[origin[f] for f in files]) for split, files in splits.items()}
    )


def install(module_name: str) -> None:
    """Make ``datasets``' resolution of a ``data_dir`` given without ``data_files`` follow this module's rule for the
    packaged module ``module_name`` (idempotent; other modules are left as they are)."""
    from datasets import load

    factory = getattr(load, "PackagedDatasetModuleFactory", None)
    if factory is None or getattr(factory.get_module, "_pchronicle", False):
        return
    resolve = factory.get_module

    def get_module(self: Any) -> Any:
        module = resolve(self)
        if self.name != module_name:
            return module
        if self.data_files is not None or not self.data_dir:  # files the user named: only their logs are added
            module.builder_kwargs["data_files"] = _logs_in_origin(module.builder_kwargs["data_files"])
            return module
        base_path = resolved_dir(self.data_dir)  # as datasets resolves it
        module.builder_kwargs["data_files"] = _folder_data_files(
            module.builder_kwargs["data_files"], base_path, self.download_config
        )
        return module

    get_module._pchronicle = True  # type: ignore[attr-defined]
    factory.get_module = get_module
