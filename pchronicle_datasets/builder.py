"""The ``datasets`` builder: ``load_dataset("pchronicle", <format or "auto">, data_files=…)``.

Importing ``pchronicle_datasets`` registers this module as the packaged module ``"pchronicle"`` (datasets >= 4
no longer runs dataset scripts), so it loads the way ``load_dataset("json", …)`` does:

    import pchronicle_datasets
    from datasets import load_dataset
    ds = load_dataset("pchronicle", "openai-msg", data_files="captures/*.jsonl", split="train")

Each file gives rows of ``STORYLINE_FEATURES``, one per Storyline document. The builder owns I/O: it opens
files through datasets' file layer (local, ``hf://``, ``s3://``…, streaming or not), decompresses them itself
(gzip member by member, zstd, bzip2, xz) as it reads, and hands the stream to the format modules, so memory
is bounded by the largest document, not the file. Files are the shards, so ``num_proc`` and streaming work
per file; with ``num_proc`` > 1, a big plain JSON Lines file of a format that can be split (openai-msg) is
also several shards, its byte ranges (``docs/builder.md``, "One big capture").

Skip policy and the quarantine file (``quarantine.py``): each ``load_dataset`` call that generates is one run
with its own id, carried by every entry it appends. A streaming dataset iterated again is the same run: its
entries are written once (in each process), its counts logged again. A load served from ``datasets``' cache
generates nothing and so appends nothing; it logs how many records the cached split left out (kept with the
cache, in ``pchronicle_skipped/``) and the run whose entries describe them.
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import multiprocessing
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

import datasets
from datasets.builder import Key
from datasets.exceptions import DatasetGenerationError
from datasets.utils.file_utils import xopen
from datasets.utils.py_utils import classproperty

from .compression import MAX_DECOMPRESSED_SIZE
from .errors import BadRecordError, NoConversationError
from .features import STORYLINE_FEATURES
from .formats import format_names
from .formats.base import as_bytes
from .formats.source import MAX_RECORD_SIZE
from .loading.batches import check_options, file_records, read_error, tables
from .loading.folder import install as install_folder_rule
from .loading.ids import document_ids, resolved_dir
from .loading.policy import BadRecords, no_conversation_note, prepare_quarantine
from .loading.ranges import byte_range
from .loading.split import HEAD, SplitKind, split_kind
from .quarantine import MAX_EXAMPLES, Quarantine, QuarantineError, new_run_id
from .session_links import parent_links
from .sidecars import FOLDER_EXTENSIONS, groups, index_note, join_members, pair, read_sidecar

logger = datasets.utils.logging.get_logger(__name__)

__all__ = ["BadRecordError", "Pchronicle", "PchronicleConfig", "QuarantineWriteError", "register"]

MODULE_NAME = "pchronicle"
SKIPPED_DIR = "pchronicle_skipped"  # in a prepared dataset's cache folder: what each file's generation skipped
#: A capture is split into byte ranges of at least this size (so from twice it). Each part passes over the whole
#: file, but lines outside its range cost it a few microseconds each (formats/openai_msg/parts.py): a 106 MB
#: capture loads in 1.6 s on two cores instead of 2.0 s in one (benchmarks/results.md).
SPLIT_MIN = 16 << 20
#: A file of standalone lines is split into parts of at least this size: a part reads only its own lines, after
#: counting those before it at C speed (loading.line_parts).
LINES_SPLIT_MIN = 8 << 20
PARALLEL_MIN = 16 << 20  # with no num_proc given, inputs of this size or more are read on every core (docs/builder.md)
PARALLEL_FILES = 256  # and so are this many files or more, whatever their size (each file costs its own work)
FIRST_BATCH = 8  # documents in a file's first Arrow batch (the next ones hold batch_size)
_quarantined: set[tuple[str, str]] = set()  # (run, file) whose entries this process has written


class QuarantineWriteError(QuarantineError, DatasetGenerationError):
    """The quarantine file could not be written: the message names its path and the cause (``load_dataset``
    lets it through as it is, like ``BadRecordError``)."""


@dataclass
class PchronicleConfig(datasets.BuilderConfig):
    """Configuration: the config name is the format (``auto``, ``storyline``, ``openai-msg``, ``sharegpt``…).

    ``on_bad_records``: ``"error"`` (stop at the first bad record, naming file, line and pointer) or ``"skip"``
    (leave out the smallest unit that keeps the rest correct — a JSON Lines line that is not JSON, a session
    that breaks a rule, an invalid document — log the count, and append each one with its error to
    ``quarantine_file`` when given). ``batch_size``: documents per Arrow batch. ``max_decompressed_size``: the
    most bytes one compressed file may decompress to (``compression.MAX_DECOMPRESSED_SIZE``, 64 GiB, by
    default); beyond it the file ends with a ``DecompressionLimitError`` naming the file and the limit (files
    are read as streams, so a bomb costs time, never memory). ``max_record_size``: the most bytes one record
    may hold — a JSON Lines line, or a file that is one JSON value (``source.MAX_RECORD_SIZE``, 512 MiB, by
    default); a longer one is a ``RecordTooLargeError`` bad record naming the file and line, never held in
    memory (under ``"skip"`` it is counted and quarantined without its text).
    """

    name: str = "auto"
    on_bad_records: Literal["error", "skip"] = "error"
    quarantine_file: str | None = None
    batch_size: int = 256
    max_decompressed_size: int = MAX_DECOMPRESSED_SIZE
    max_record_size: int = MAX_RECORD_SIZE

    def __post_init__(self) -> None:
        super().__post_init__()
        self.check()

    def check(self) -> None:
        """Refuse options that make no sense. Also run when the builder starts: datasets copies a predefined
        config and sets the user's options with setattr, which skips ``__post_init__``."""
        check_options(self.name, self.on_bad_records, self.batch_size, self.max_decompressed_size, self.max_record_size)


class Pchronicle(datasets.ArrowBasedBuilder):
    """Reads trajectory files of any registered format into rows of ``STORYLINE_FEATURES``."""

    BUILDER_CONFIG_CLASS = PchronicleConfig
    DEFAULT_CONFIG_NAME = "auto"

    # One config per format, derived on each use rather than fixed at import (and not memoized, as datasets'
    # builder_configs is): a format registered at run time (formats.register) gets a config too.
    @classproperty
    @classmethod
    def BUILDER_CONFIGS(cls) -> list[PchronicleConfig]:
        return [PchronicleConfig(name=name) for name in ["auto", *format_names()]]

    @classproperty
    @classmethod
    def builder_configs(cls) -> dict[str, PchronicleConfig]:
        return {config.name: config for config in cls.BUILDER_CONFIGS}

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(
            description="LLM-agent trajectories as Storyline documents (pchronicle-datasets)",
            features=STORYLINE_FEATURES,
        )

    def _split_generators(self, dl_manager) -> list[datasets.SplitGenerator]:
        self.config.check()
        if not self.config.data_files:
            raise ValueError(f"At least one data file must be specified, but got data_files={self.config.data_files}")
        self._run = new_run_id()
        if self.config.on_bad_records == "skip" and self.config.quarantine_file:
            # Before any input is read (or downloaded), in the main process (workers only append).
            try:
                every = [p for paths in self.config.data_files.values() for p in paths]
                removed = prepare_quarantine(self.config.quarantine_file, every)
            except QuarantineError as exc:
                raise QuarantineWriteError(exc.reason, document_id=exc.document_id) from None
            if removed:
                logger.warning(
                    f"pchronicle: removed a partial last entry ({removed} bytes) an interrupted run left in "
                    f"{self.config.quarantine_file}"
                )
        # No extraction: compressed files are decompressed here as they are read, member by member.
        files = dl_manager.download(self.config.data_files)
        names = _document_ids(self.config.data_files, self.config.data_dir)  # the same ids as the CLI's and Spark's
        # Subagent files name their parent: the parents' /children come from the whole load (session_links.py).
        self._links = parent_links([p for paths in files.values() for p in paths], self.config.name)
        generators = []
        for split, paths in files.items():
            # A sidecar listed beside its file (sidecars.py) is no document: its file's reader gets it.
            given = [str(p) for p in self.config.data_files[split]]  # with their folders (an index file's name)
            keep, side = pair(names[split], given)
            grouped = groups(names[split])  # files that are one document: read as one, named by its id
            if note := index_note(names[split], given):
                logger.warning(f"pchronicle: {note}")
            generators.append(
                datasets.SplitGenerator(
                    name=split,
                    gen_kwargs={
                        "files": [paths[i] for i in keep],
                        "names": [grouped[i][0] if i in grouped else names[split][i] for i in keep],
                        "parts": [(0, 1)] * len(keep),  # (k, n): part k of n of the file; (0, 1) is the whole file
                        "sidecars": [paths[side[i]] if i in side else None for i in keep],
                        "members": [[paths[j] for j in grouped[i][1]] if i in grouped else None for i in keep],
                        "run": self._run,
                    },
                )
            )
        return generators

    def download_and_prepare(self, *args: Any, **kwargs: Any) -> None:
        self._run = None
        super().download_and_prepare(*args, **kwargs)
        if self._run is None:  # nothing generated: the cache was reused
            self._report_cached()
        elif note := no_conversation_note(_no_conversation(self._saved_skips(), self._run)):
            if not any(split.num_examples for split in self.info.splits.values()):
                # datasets would say 'Instruction "train" corresponds to no data!' instead
                raise NoConversationError(f"{note}: no file of this load holds a conversation (docs/builder.md)")
            logger.warning(f"pchronicle: {note}")  # one note for every file and worker of the generation

    def _prepare_split(self, split_generator, **kwargs: Any) -> None:
        if kwargs.get("num_proc") is None:  # not given: big inputs are read on every core (docs/builder.md)
            kwargs["num_proc"], split = _default_num_proc(
                split_generator.gen_kwargs, self.config.name, self.config.max_record_size
            )
            if split is not None:
                split_generator.gen_kwargs = split
        elif kwargs["num_proc"] > 1:
            split_generator.gen_kwargs = _split_big_files(
                split_generator.gen_kwargs, kwargs["num_proc"], self.config.name, self.config.max_record_size
            )
        # Set before datasets hands the builder to its workers: they write what they skipped here.
        self._skipped_dir = os.path.join(self._output_dir, SKIPPED_DIR)
        try:
            super()._prepare_split(split_generator, **kwargs)
        finally:
            self._skipped_dir = None

    def _generate_shards(
        self,
        files: list[str],
        names: list[str],
        run: str,
        parts: list[tuple[int, int]] | None = None,
        sidecars: list[str | None] | None = None,
        members: list[list[str] | None] | None = None,
    ) -> Iterator[str]:
        yield from names

    def _generate_tables(
        self,
        files: list[str],
        names: list[str],
        run: str,
        parts: list[tuple[int, int]] | None = None,
        sidecars: list[str | None] | None = None,
        members: list[list[str] | None] | None = None,
    ) -> Iterator[tuple[Key, Any]]:
        parts = parts or [(0, 1)] * len(files)
        sidecars = sidecars or [None] * len(files)
        members = members or [None] * len(files)
        for shard, (path, name, part, side, group) in enumerate(
            zip(files, names, parts, sidecars, members, strict=True)
        ):
            try:
                if group:  # the files of one document (sidecars.groups): one JSON Lines text
                    data = io.BytesIO(join_members([_read_whole(member) for member in group]))
                    yield from self._file_tables(shard, data, path, name, (0, 1), run, None, whole=False)
                    continue
                sidecar = _read_whole(side) if side is not None else read_sidecar(path)
                with xopen(path, "rb") as f:
                    yield from self._file_tables(shard, f, path, name, tuple(part), run, sidecar)
            except OSError as exc:
                raise read_error(exc, name) from None

    def _file_tables(
        self,
        shard: int,
        f: Any,
        path: str,
        name: str,
        part: tuple[int, int],
        run: str,
        sidecar: bytes | None = None,
        whole: bool = True,
    ) -> Iterator[tuple[Key, Any]]:
        k, n = part
        # A big plain JSON Lines file of a format that reads parts (_split_of): its reader gets the file itself,
        # which it can read again by offset (no spill file), and the part's byte range.
        records = file_records(
            f,
            name,
            self.config.name,
            sidecar=sidecar,
            links=getattr(self, "_links", None),
            split=_split_of(path, self.config.name, self.config.max_record_size) if whole else None,
            byte_range=_byte_range(path, k, n) if n > 1 else None,
            max_decompressed_size=self.config.max_decompressed_size,
            max_record_size=self.config.max_record_size,
        )
        key = (run, name) if n == 1 else (run, f"{name}#{k}/{n}")
        first_pass = key not in _quarantined
        bad_records = BadRecords(
            self.config.on_bad_records,
            Quarantine(
                self.config.quarantine_file,
                run=run,
                log=lambda message: logger.warning(f"pchronicle: {message}"),
                examples=MAX_EXAMPLES,
                write=first_pass,
            ),
        )
        try:
            # A small first batch: a streaming reader gets its first rows as soon as they are built.
            for batch, table in enumerate(tables(records, name, bad_records, self.config.batch_size, FIRST_BATCH)):
                yield Key(shard, batch), table
        except QuarantineError as exc:
            raise QuarantineWriteError(exc.reason, document_id=exc.document_id) from None
        _quarantined.add(key)
        bad = bad_records.quarantine
        if bad.count:
            again = "" if first_pass else " (again: this run already quarantined them)"
            logger.warning(f"pchronicle: {bad.summary(f' in {name}')}{again}")
        empty = bad_records.no_conversation
        if not self._save_skipped(name if n == 1 else f"{name}#{k}/{n}", run, bad.count, empty) and empty:
            logger.warning(f"pchronicle: {no_conversation_note(empty)}")  # streaming: no generation to sum up

    def _save_skipped(self, name: str, run: str, count: int, empty: list[tuple[str, str]]) -> bool:
        """Keep what this file's generation left out with the prepared dataset: the bad records' count and the
        files that hold no conversation (``download_and_prepare`` names them in one note, and a later load
        from the cache says it again). False when there is no prepared dataset to keep them with (streaming)."""
        folder = getattr(self, "_skipped_dir", None)
        if not folder or "://" in folder:
            return False
        if not count and not empty:
            return True
        record = {
            "run": run,
            "file": name,
            "skipped": count,
            "quarantine_file": self.config.quarantine_file,
            "no_conversation": empty,
        }
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        try:
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, f"{digest}.json"), "w", encoding="utf-8") as f:
                json.dump(record, f)
        except OSError as exc:  # the rows are what matters; the count is a courtesy for later loads
            logger.warning(f"pchronicle: cannot keep the skipped count of {name} with the cache: {exc}")
        return True

    def _saved_skips(self) -> list[dict[str, Any]]:
        """What ``_save_skipped`` kept in the prepared dataset's folder, in file order."""
        folder = os.path.join(self._output_dir, SKIPPED_DIR)
        saved = []
        for file in sorted(glob.glob(os.path.join(glob.escape(folder), "*.json"))):
            try:
                with open(file, encoding="utf-8") as f:
                    saved.append(json.load(f))
            except (OSError, ValueError):
                continue
        return sorted(saved, key=lambda r: str(r.get("file")))

    def _report_cached(self) -> None:
        """A load from the cache: say what the cached splits left out when they were generated."""
        saved = self._saved_skips()
        if note := no_conversation_note(_no_conversation(saved)):
            logger.warning(f"pchronicle: loaded from the cache: generating it {note}")
        skipped = sum(r.get("skipped", 0) for r in saved)
        if not skipped:
            return
        runs = sorted({r.get("run") for r in saved if r.get("skipped")} - {None})
        targets = sorted({r.get("quarantine_file") for r in saved if r.get("skipped")} - {None})
        where = f"; their entries are in {', '.join(targets)} (run {', '.join(runs)})" if targets else ""
        logger.warning(
            f"pchronicle: loaded from the cache: generating it skipped {skipped} bad record(s) in "
            f"{sum(1 for r in saved if r.get('skipped'))} file(s){where}; nothing new is quarantined "
            "(download_mode='force_redownload' generates again)"
        )


def _no_conversation(saved: list[dict[str, Any]], run: str | None = None) -> list[tuple[str, str]]:
    """The files ``saved`` (``_saved_skips``; of ``run`` when given) left out as holding no conversation."""
    return [
        (file, why) for r in saved if run is None or r.get("run") == run for file, why in r.get("no_conversation") or ()
    ]


def _read_whole(path: str) -> bytes:
    with xopen(path, "rb") as f:
        return f.read()


def _head(path: str) -> bytes:
    with open(path, "rb") as f:
        return as_bytes(f.read(HEAD))


def _split_of(path: str, fmt: str, max_record_size: int = MAX_RECORD_SIZE) -> tuple[SplitKind, str] | None:
    """How a big local plain file may be read in parts (``loading.split``'s rule: kind and format), or None.
    Only local files at least twice their kind's part size (``SPLIT_MIN``, ``LINES_SPLIT_MIN``): a part is read
    by offset. Not under a ``max_record_size`` below the head the rule reads: the whole-file reader would refuse
    a first line the rule saw whole, and decide from the lines after it."""
    if "://" in path or "::" in path or not os.path.isfile(path) or max_record_size < HEAD:
        return None
    size = os.path.getsize(path)
    if size < 2 * min(SPLIT_MIN, LINES_SPLIT_MIN):
        return None
    split = split_kind(_head(path), fmt)
    return split if split is not None and size >= 2 * _part_min(split[0]) else None


def _part_min(kind: SplitKind) -> int:
    return SPLIT_MIN if kind == "range" else LINES_SPLIT_MIN


def _split_big_files(
    gen_kwargs: dict[str, Any], num_proc: int, fmt: str, max_record_size: int = MAX_RECORD_SIZE
) -> dict[str, Any]:
    """Each big splittable file as up to ``num_proc`` shards (its byte ranges, each at least its kind's part
    size), so that one big file keeps every worker busy."""
    files, names, parts, sidecars, members = [], [], [], [], []
    given = gen_kwargs.get("sidecars") or [None] * len(gen_kwargs["files"])
    groups = gen_kwargs.get("members") or [None] * len(gen_kwargs["files"])
    for path, name, part, side, group in zip(
        gen_kwargs["files"], gen_kwargs["names"], gen_kwargs["parts"], given, groups, strict=True
    ):
        whole = tuple(part) == (0, 1) and not group
        split = _split_of(path, fmt, max_record_size) if whole else None
        n = min(num_proc, os.path.getsize(path) // _part_min(split[0])) if split else 1
        pieces = [tuple(part)] if n <= 1 else [(k, n) for k in range(n)]
        files += [path] * len(pieces)
        names += [name] * len(pieces)
        parts += pieces
        sidecars += [side] * len(pieces)
        members += [group] * len(pieces)
    return {**gen_kwargs, "files": files, "names": names, "parts": parts, "sidecars": sidecars, "members": members}


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # the cores this process may use (a container's, a taskset's)
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _default_num_proc(
    gen_kwargs: dict[str, Any], fmt: str, max_record_size: int = MAX_RECORD_SIZE
) -> tuple[int | None, dict[str, Any] | None]:
    """``(num_proc, gen_kwargs split for it)`` when the caller gave none: one worker per core, up to one per shard,
    for at least ``PARALLEL_MIN`` bytes or ``PARALLEL_FILES`` local files in at least two shards (files, or the
    byte ranges of a big file); ``(None, None)`` (one process) otherwise.

    ``load_dataset("json")`` parses with pyarrow's threads on every core; reading a trajectory is Python, so
    its cores are processes: ``datasets``' own ``num_proc`` workers, forked (Linux only: elsewhere a worker
    starts a new interpreter, whose imports cost more than a small input's read). ``num_proc=1`` keeps one
    process."""
    cores = _cores()
    paths = gen_kwargs["files"]
    if cores < 2 or not sys.platform.startswith("linux") or multiprocessing.current_process().daemon:
        return None, None  # (a daemonic process, a pool's worker, may not start workers of its own)
    if any("://" in p or "::" in p or not os.path.isfile(p) for p in paths):
        return None, None
    if len(paths) < PARALLEL_FILES and sum(os.path.getsize(p) for p in paths) < PARALLEL_MIN:
        return None, None
    split = _split_big_files(gen_kwargs, cores, fmt, max_record_size)
    shards = len(split["files"])
    return (min(cores, shards), split) if shards > 1 else (None, None)


def _byte_range(path: str, k: int, n: int) -> tuple[int, int | None]:
    """Part ``k`` of ``n`` of a local file (``loading.ranges.byte_range``)."""
    with open(path, "rb") as f:
        return byte_range(f, os.path.getsize(path), k, n)


def _document_ids(data_files: dict[str, list[str]], data_dir: str | None) -> dict[str, list[str]]:
    """``loading.ids.document_ids`` of every split's files, relative to the same base for all splits."""
    every = [str(p) for paths in data_files.values() for p in paths]
    ids = iter(document_ids(every, resolved_dir(data_dir) if data_dir else None))  # datasets' files are resolved
    return {split: [next(ids) for _ in paths] for split, paths in data_files.items()}


def register() -> None:
    """Make ``load_dataset("pchronicle", …)`` find this builder (idempotent; done on import of the package)."""
    from datasets import packaged_modules

    if MODULE_NAME in packaged_modules._PACKAGED_DATASETS_MODULES:
        return
    # The cache key covers the whole package, so a change to any reader invalidates prepared datasets: one sha256
    # of every module's bytes (datasets' _hash_python_lines, line by line in Python, was half of this import).
    package = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for root, _, files in sorted(os.walk(package)):
        for file in sorted(f for f in files if f.endswith(".py")):
            digest.update(os.path.relpath(os.path.join(root, file), package).encode("utf-8", "surrogateescape"))
            with open(os.path.join(root, file), "rb") as f:
                digest.update(f.read())
    code_hash = digest.hexdigest()
    packaged_modules._PACKAGED_DATASETS_MODULES[MODULE_NAME] = (__name__, code_hash)
    install_folder_rule(MODULE_NAME)  # a data_dir without data_files: loading/folder.py
    packaged_modules._MODULE_TO_EXTENSIONS.setdefault(MODULE_NAME, list(FOLDER_EXTENSIONS))
    packaged_modules._MODULE_TO_METADATA_FILE_NAMES.setdefault(MODULE_NAME, [])
    packaged_modules._MODULE_TO_METADATA_EXTENSIONS.setdefault(MODULE_NAME, [])
