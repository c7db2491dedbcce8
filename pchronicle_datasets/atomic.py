"""Outputs that are complete or absent: written under a temporary name next to the final path, then renamed.

``AtomicOutput(path)`` creates the temporary file (or, with ``folder=True``, folder) at once — so an output
location that cannot be written fails before any input is read — and yields its path. When the block ends
without an exception the temporary is renamed into place (one ``rename``: readers see the old output or the
new one, never a part); on an exception, a write error, ``KeyboardInterrupt`` or ``SystemExit`` (the CLI turns
SIGTERM into one) it is removed and nothing is left at the final path. A run killed with SIGKILL can leave only
the temporary, a hidden ``.NAME.pchronicle-tmp-…`` next to the output, never a partial output.

A folder output replaces an existing folder only when everything in it is a regular file this output could
have written (``replaceable``): a previous run's output is replaced whole, anything else — a symbolic link, a
subfolder, another file — makes it refuse, naming the entry. Nothing is ever written through a link.

``check_output`` is that rule on its own, for every engine (the Spark engine checks its folders with it too), with
two more refusals: an output that is one of the inputs (the same file, through links too, or a folder output
holding an input), which the rename would replace with its own conversion; and an existing output that is
read-only, which a rename would replace although its owner protected it.

>>> import tempfile, pathlib
>>> out = pathlib.Path(tempfile.mkdtemp()) / "all.jsonl"
>>> with AtomicOutput(out) as tmp:
...     _ = tmp.write_text("{}\\n")
...     out.exists()
False
>>> out.read_text(), sorted(p.name for p in out.parent.iterdir())
('{}\\n', ['all.jsonl'])
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

__all__ = [
    "DATASET_FILES",
    "TEMP_MARK",
    "AtomicOutput",
    "OutputError",
    "check_not_input",
    "check_output",
    "discard_unfinished",
    "is_dataset_file",
    "is_inside",
    "same_path",
]

TEMP_MARK = ".pchronicle-tmp-"
#: The files of a ``datasets`` folder (``Dataset.save_to_disk``): what a previous ``convert --to dataset`` of either
#: engine wrote, so a folder holding only these is replaced whole.
DATASET_FILES = re.compile(r"(data-\d{5}-of-\d{5}\.arrow|dataset_info\.json|state\.json)")


def is_dataset_file(name: str) -> bool:
    """Whether ``name`` is one of a ``datasets`` folder's files (``replaceable`` for a ``--to dataset`` output).

    >>> is_dataset_file("data-00000-of-00001.arrow"), is_dataset_file("notes.txt")
    (True, False)
    """
    return bool(DATASET_FILES.fullmatch(name))


class OutputError(Exception):
    """An output cannot be written: the message names the final path and the cause."""

    def __init__(self, path: str | os.PathLike, cause: str) -> None:
        self.path = str(path)
        self.cause = cause
        super().__init__(f"cannot write {self.path}: {cause}")


def _cause(exc: OSError) -> str:
    return f"{exc.strerror or exc} [{type(exc).__name__}]"


def _local(path: str | os.PathLike) -> str | None:
    """``path`` as a local path (a ``file://`` URL too), or None for another URL (``s3://``…), which no rule
    here can look at."""
    text = os.fspath(path)
    if text.startswith("file://"):
        return text[len("file://") :]
    return None if "://" in text or "::" in text else text


def _input_paths(inputs: Iterable[str | os.PathLike]) -> Iterator[str]:
    """Every local path the inputs name: each input, what its glob pattern matches (the Spark engine takes
    patterns), and the files of each folder (what the CLI reads of a folder: ``sidecars.FOLDER_EXTENSIONS``)."""
    from .sidecars import FOLDER_EXTENSIONS  # imports nothing at module level: no cycle

    for item in inputs:
        local = _local(item)
        if local is None:
            continue
        for path in glob.glob(local, recursive=True) if glob.has_magic(local) else [local]:
            yield path
            if os.path.isdir(path):
                for root, _dirs, files in os.walk(path):
                    yield from (os.path.join(root, f) for f in files if f.endswith(FOLDER_EXTENSIONS))


def same_path(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two local paths name the same file: through links, hard links and relative paths (``samefile``),
    or, for a path not created yet, the same resolved name."""
    la, lb = _local(a), _local(b)
    if la is None or lb is None:
        return False
    try:
        return os.path.samefile(la, lb)
    except OSError:  # one of them does not exist (or cannot be looked at)
        return os.path.realpath(la) == os.path.realpath(lb)


def is_inside(path: str | os.PathLike, folder: str | os.PathLike) -> bool:
    """Whether the local ``path`` lies inside ``folder`` (links resolved)."""
    lp, lf = _local(path), _local(folder)
    if lp is None or lf is None:
        return False
    return os.path.realpath(lp).startswith(os.path.realpath(lf).rstrip(os.sep) + os.sep)


def check_not_input(path: str | os.PathLike, inputs: Iterable[str | os.PathLike], *, folder: bool = False) -> None:
    """Refuse an output that is one of ``inputs``, or (``folder``) a folder that holds one: writing it would
    replace the data being read with its own conversion."""
    if _local(path) is None:
        return
    for given in _input_paths(inputs):
        inside = folder and is_inside(given, path)
        if inside or same_path(path, given):
            what = "it holds the input" if inside else "it is the input"
            raise OutputError(
                path,
                f"{what} {given}: writing it would replace the data being read; name another output path",
            )


def _read_only(st: os.stat_result, path: str | os.PathLike) -> bool:
    # The mode bits, not only os.access: root may write anything, yet a file its owner made read-only
    # (chmod a-w) is one they meant to keep.
    return not st.st_mode & 0o222 or not os.access(path, os.W_OK, follow_symlinks=False)


def check_output(
    path: str | os.PathLike,
    *,
    folder: bool = False,
    replaceable: Callable[[str], bool] | None = None,
    inputs: Iterable[str | os.PathLike] = (),
) -> None:
    """Raise ``OutputError`` unless an output may be written at ``path``: not one of ``inputs``; when it exists,
    the right kind (a file, or with ``folder`` a folder), not read-only, and for a folder one that holds only
    regular files ``replaceable`` accepts (a previous run's output, replaced whole)."""
    check_not_input(path, inputs, folder=folder)
    replaceable = replaceable or (lambda name: False)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise OutputError(path, _cause(exc)) from None
    if stat.S_ISLNK(st.st_mode) and folder:
        raise OutputError(path, "it is a symbolic link: name the folder itself")
    if not folder:
        if stat.S_ISDIR(st.st_mode):
            raise OutputError(path, "it is a folder; a file is written here")
        if stat.S_ISREG(st.st_mode) and _read_only(st, path):
            raise OutputError(
                path, "it exists and is read-only: refusing to replace it (make it writable or name another path)"
            )
        return  # a file (or a link, which the rename replaces: its target is never written)
    if not stat.S_ISDIR(st.st_mode):
        raise OutputError(path, "it exists and is not a folder")
    for entry in sorted(os.scandir(path), key=lambda e: e.name):
        if entry.is_symlink():
            raise OutputError(path, f"{entry.name} in it is a symbolic link: refusing to write through or replace it")
        if not entry.is_file(follow_symlinks=False) or not replaceable(entry.name):
            raise OutputError(
                path,
                f"the folder holds {entry.name!r}, which this output does not write: refusing to replace it "
                "(write to a new or empty folder)",
            )
        if _read_only(entry.stat(follow_symlinks=False), entry.path):
            raise OutputError(
                path,
                f"{entry.name} in it is read-only: refusing to replace it (make it writable or name another path)",
            )


class AtomicOutput:
    """A file (or folder) output written under a temporary name in the same folder and renamed into place.

    ``inputs``: the paths the command reads (files, folders, patterns); an output among them is refused."""

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        folder: bool = False,
        replaceable: Callable[[str], bool] | None = None,
        inputs: Iterable[str | os.PathLike] = (),
    ) -> None:
        self.path = Path(path)
        self.folder = folder
        self.replaceable = replaceable or (lambda name: False)
        check_output(self.path, folder=folder, replaceable=self.replaceable, inputs=inputs)
        parent = self.path.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(self.path, _cause(exc)) from None
        # The temporary is named and recorded before it exists: a SIGTERM (which the CLI turns into SystemExit
        # wherever the program is) that lands while it is created still finds it to remove (discard_unfinished).
        self.tmp = self._temporary_name()
        _UNFINISHED.add(self)
        while True:
            try:
                _create(self.tmp, folder)
                return
            except FileExistsError:
                self.tmp = self._temporary_name()  # (another output's name: never this one's to remove)
            except OSError as exc:
                _UNFINISHED.discard(self)
                raise OutputError(self.path, _cause(exc)) from None

    def _temporary_name(self) -> Path:
        return self.path.parent / f".{self.path.name}{TEMP_MARK}{secrets.token_hex(8)}"

    def __enter__(self) -> Path:
        return self.tmp

    def __exit__(self, kind, exc, tb) -> bool:
        if kind is not None:
            self.discard()
            if isinstance(exc, OSError):
                raise OutputError(self.path, _cause(exc)) from None
            return False
        try:
            self.commit()
        except OSError as err:
            self.discard()
            raise OutputError(self.path, _cause(err)) from None
        return False

    def discard(self) -> None:
        """Remove the temporary (the final path is left as it was)."""
        _UNFINISHED.discard(self)
        if self.folder:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                self.tmp.unlink()

    def commit(self) -> None:
        """Rename the temporary into place (a folder: the old one is moved aside first, then removed)."""
        self._rename_into_place()
        _UNFINISHED.discard(self)  # after: a stop before the rename still finds the temporary to remove

    def _rename_into_place(self) -> None:
        if not self.folder:
            with open(self.tmp, "rb+") as f:
                os.fsync(f.fileno())  # the bytes are on disk before the name points at them
            os.chmod(self.tmp, 0o666 & ~_umask())
            os.replace(self.tmp, self.path)
            return
        os.chmod(self.tmp, 0o777 & ~_umask())
        if not os.path.lexists(self.path):
            os.rename(self.tmp, self.path)
            return
        # It may have changed while the inputs were read (the inputs were checked before: they are read now).
        check_output(self.path, folder=True, replaceable=self.replaceable)
        old = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.pchronicle-old-", dir=self.path.parent))
        os.rename(self.path, old / "out")
        try:
            os.rename(self.tmp, self.path)
        except OSError:
            os.rename(old / "out", self.path)
            raise
        finally:
            shutil.rmtree(old, ignore_errors=True)


#: Outputs created and neither committed nor discarded: what ``discard_unfinished`` removes (held strongly: an
#: output dropped before its ``with`` block still has its temporary on disk).
_UNFINISHED: set[AtomicOutput] = set()


def _create(path: Path, folder: bool) -> None:
    """Create the temporary ``path`` (only this user may read it until the commit sets the final mode)."""
    if folder:
        os.mkdir(path, 0o700)
    else:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


def discard_unfinished() -> None:
    """Remove the temporary of every output created and not yet committed or discarded.

    A stop that lands between creating an output and entering its ``with`` block (the CLI turns SIGTERM into
    ``SystemExit`` wherever the program is) skips ``__exit__``; the CLI calls this as it ends so such a temporary
    is removed too."""
    for output in list(_UNFINISHED):
        output.discard()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
