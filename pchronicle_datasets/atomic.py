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
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["TEMP_MARK", "AtomicOutput", "OutputError"]

TEMP_MARK = ".pchronicle-tmp-"


class OutputError(Exception):
    """An output cannot be written: the message names the final path and the cause."""

    def __init__(self, path: str | os.PathLike, cause: str) -> None:
        self.path = str(path)
        self.cause = cause
        super().__init__(f"cannot write {self.path}: {cause}")


def _cause(exc: OSError) -> str:
    return f"{exc.strerror or exc} [{type(exc).__name__}]"


class AtomicOutput:
    """A file (or folder) output written under a temporary name in the same folder and renamed into place."""

    def __init__(
        self, path: str | os.PathLike, *, folder: bool = False, replaceable: Callable[[str], bool] | None = None
    ) -> None:
        self.path = Path(path)
        self.folder = folder
        self.replaceable = replaceable or (lambda name: False)
        self._check_target()
        parent = self.path.parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            prefix = f".{self.path.name}{TEMP_MARK}"
            if folder:
                self.tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
            else:
                fd, name = tempfile.mkstemp(prefix=prefix, dir=parent)
                os.close(fd)
                self.tmp = Path(name)
        except OSError as exc:
            raise OutputError(self.path, _cause(exc)) from None

    def _check_target(self) -> None:
        """Refuse a target that is the wrong kind, or a folder holding what this output would not write."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise OutputError(self.path, _cause(exc)) from None
        if stat.S_ISLNK(st.st_mode) and self.folder:
            raise OutputError(self.path, "it is a symbolic link: name the folder itself")
        if not self.folder:
            if stat.S_ISDIR(st.st_mode):
                raise OutputError(self.path, "it is a folder; a file is written here")
            return  # a file (or a link, which the rename replaces: its target is never written)
        if not stat.S_ISDIR(st.st_mode):
            raise OutputError(self.path, "it exists and is not a folder")
        for entry in sorted(os.scandir(self.path), key=lambda e: e.name):
            if entry.is_symlink():
                raise OutputError(
                    self.path, f"{entry.name} in it is a symbolic link: refusing to write through or replace it"
                )
            if not entry.is_file(follow_symlinks=False) or not self.replaceable(entry.name):
                raise OutputError(
                    self.path,
                    f"the folder holds {entry.name!r}, which this output does not write: refusing to replace it "
                    "(write to a new or empty folder)",
                )

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
        if self.folder:
            shutil.rmtree(self.tmp, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                self.tmp.unlink()

    def commit(self) -> None:
        """Rename the temporary into place (a folder: the old one is moved aside first, then removed)."""
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
        self._check_target()  # it may have changed while the inputs were read
        old = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.pchronicle-old-", dir=self.path.parent))
        os.rename(self.path, old / "out")
        try:
            os.rename(self.tmp, self.path)
        except OSError:
            os.rename(old / "out", self.path)
            raise
        finally:
            shutil.rmtree(old, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
