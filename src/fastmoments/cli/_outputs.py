"""Where the commands write: an output folder (``--out DIR``) or one output file
(``--out FILE.png``), checked before any work and cleaned up if the run fails.

The check happens when the object is made, before the command reads its inputs; the folders
are created on entering the ``with`` block, once the inputs are read; if the block fails, every
folder (and the file) that this run created is removed again. Nothing that existed before the run
is ever removed.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from types import TracebackType

from ._errors import UsageError

__all__ = ["OutputFile", "OutputFolder"]

#: errno values that mean the place, not the program, is at fault.
_PLACE_ERRORS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM}


def _writable(path: Path) -> bool:
    return os.access(path, os.W_OK | os.X_OK)


def _missing_top(path: Path, option: str, shown: str) -> Path | None:
    """Check that ``path`` is, or can be made, a writable folder; return the topmost folder
    that must be created (``None`` if ``path`` exists)."""
    if path.exists():
        if not path.is_dir():
            raise UsageError(f"{option} {shown!r}: {str(path)!r} is a file, not a folder")
        if not _writable(path):
            raise UsageError(f"{option} {shown!r}: folder {str(path)!r} is not writable")
        return None
    top, parent = path, path.parent
    while not parent.exists() and parent != parent.parent:
        top, parent = parent, parent.parent
    if os.path.lexists(top):
        raise UsageError(f"{option} {shown!r}: {str(top)!r} is a broken link")
    if not parent.is_dir():
        raise UsageError(f"{option} {shown!r}: {str(parent)!r} is a file, not a folder")
    if not _writable(parent):
        raise UsageError(f"{option} {shown!r}: folder {str(parent)!r} is not writable")
    return top


class _Output:
    """What :class:`OutputFolder` and :class:`OutputFile` share: creation and clean-up."""

    option: str
    folder: Path
    _created: Path | None

    def _make_folder(self) -> None:
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{self.option} {str(self.path)!r}: cannot create folder "
                             f"{str(self.folder)!r} ({exc.strerror or exc})") from exc

    def _undo(self) -> None:
        if self._created is not None:
            shutil.rmtree(self._created, ignore_errors=True)

    def _translate(self, exc: BaseException) -> UsageError | None:
        """An OSError on a path under the output, or one that says the disk or permissions
        are at fault, is the place's fault: a :class:`UsageError` naming the option."""
        if not isinstance(exc, OSError):
            return None
        name = exc.filename
        inside = False
        if isinstance(name, (str, os.PathLike)):
            target = Path(os.path.abspath(name))
            root = Path(os.path.abspath(self.folder))
            inside = target == root or root in target.parents
        if inside or exc.errno in _PLACE_ERRORS:
            where = f" {str(name)!r}" if name else ""
            return UsageError(f"{self.option} {str(self.path)!r}: cannot write{where} "
                              f"({exc.strerror or exc})")
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc is None:
            return
        self._undo()
        usage = self._translate(exc)
        if usage is not None:
            raise usage from exc


class OutputFolder(_Output):
    """The output folder of a command (``--out DIR``).

    Parameters
    ----------
    path : path-like
        The folder; it may exist (files in it are overwritten) or not (it is created, with its
        missing parents, when the ``with`` block starts).
    option : str
        The option that named it, for messages.

    Raises
    ------
    UsageError
        If ``path`` or one of its parents is a file, or the folder to write in is not writable.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> base = pathlib.Path(tempfile.mkdtemp())
    >>> out = OutputFolder(base / "results" / "run1")   # checked, not created yet
    >>> (base / "results").exists()
    False
    >>> try:
    ...     with out as folder:
    ...         _ = (folder / "table.csv").write_text("1,2\\n")
    ...         raise ValueError("the run failed")
    ... except ValueError:
    ...     pass
    >>> (base / "results").exists()                      # what this run made is gone again
    False
    >>> import shutil; shutil.rmtree(base)
    """

    def __init__(self, path: str | os.PathLike, option: str = "--out") -> None:
        self.path = self.folder = Path(path)
        self.option = option
        self._created = _missing_top(self.folder, option, str(path))

    def __enter__(self) -> Path:
        self._created = _missing_top(self.folder, self.option, str(self.path))
        self._make_folder()
        return self.folder


class OutputFile(_Output):
    """The output file of a command (``--out FIGURE.png``).

    Parameters
    ----------
    path : path-like
        The file; an existing file is overwritten, missing parent folders are created when the
        ``with`` block starts.
    option : str
        The option that named it, for messages.
    suffixes : collection of str, optional
        The file name suffixes accepted (lower case, with the dot), e.g. the image formats
        matplotlib writes.

    Raises
    ------
    UsageError
        If ``path`` is a folder, has a suffix not in ``suffixes``, is not writable, or its folder
        cannot be created or written.
    """

    def __init__(self, path: str | os.PathLike, option: str = "--out",
                 suffixes: tuple[str, ...] | None = None) -> None:
        self.path = Path(path)
        self.option = option
        self.folder = self.path.parent
        if self.path.is_dir():
            raise UsageError(f"{option} {str(path)!r} is a folder; give a file name")
        if suffixes is not None and self.path.suffix.lower() not in suffixes:
            raise UsageError(f"{option} {str(path)!r} must end in one of "
                             f"{', '.join(sorted(suffixes))}")
        self._check()

    def _check(self) -> None:
        if self.path.is_dir():
            raise UsageError(f"{self.option} {str(self.path)!r} is a folder; give a file name")
        self._created = _missing_top(self.folder, self.option, str(self.path))
        self._existed = self.path.exists()
        if self._existed and not os.access(self.path, os.W_OK):
            raise UsageError(f"{self.option} {str(self.path)!r} exists and is not writable")

    def __enter__(self) -> Path:
        self._check()
        self._make_folder()
        return self.path

    def _undo(self) -> None:
        super()._undo()
        if self._created is None and not self._existed:
            try:
                self.path.unlink()
            except OSError:
                pass
