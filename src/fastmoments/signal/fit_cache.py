"""A persistent cache of the least-squares fits, in the user's cache directory.

Fitting the Morlet wavelet at one scale costs 10-70 ms of float64 least squares
(:func:`~fastmoments.signal.coefficients.fit_morlet`), so a 64-scale :func:`~fastmoments.signal.cwt`
spent seconds fitting on every first call, and the command line paid it on every invocation.
The fits depend only on plain values (σ, ξ, the number of terms, the shift), so they are
stored once on disk and read back in well under a millisecond each.

* **Where.** ``$FASTMOMENTS_CACHE_DIR`` if set (an empty value, ``0`` or ``off`` turns the
  cache off), else ``platformdirs.user_cache_dir("fastmoments")`` (``~/.cache/fastmoments``
  on Linux; that path is used when platformdirs is not installed), in a sub-folder
  ``fits-v{FORMAT_VERSION}``.
* **Keys.** The function's name, :data:`FIT_VERSION`, the SHA-256 of the source file that
  defines the function and of the modules it names in ``depends`` (any change to the code
  that computes a value starts afresh, even without a new version) and the ``repr`` of its
  arguments (floats round-trip exactly through ``repr``).
  One file per key (``.fit``: a JSON header line with the key, the scalars and the arrays'
  layout, then the arrays' raw little-endian bytes), named by the key's SHA-256; the key
  and a SHA-256 of the key, scalars and bytes are stored inside and checked on read.
* **Safe.** Files are written to a temporary name in the same folder and renamed into place
  (``os.replace`` is atomic), so concurrent writers of the same key leave one complete file
  and readers never see half of one. A file that cannot be read, or holds another key or
  format, is ignored and rewritten. A folder that cannot be written is not an error: the fit
  is then computed as without a cache. Nothing is unpickled or evaluated.
* **Bounded.** :data:`MAX_SIZE` caps the space the cache takes on disk (256 MiB; a program
  that wants another cap sets ``fit_cache.MAX_SIZE`` before its first cached call). Every
  file counts its allocated blocks (a fit of ~850 bytes takes one 4 KiB block on most file
  systems: about 65 000 fits in 256 MiB),
  including the folders of older formats (``fits-v0``, ...) beside the current one. A read
  marks its file as used (its modification time), and when a process that writes finds the
  folder over the cap it deletes the least recently used files until the folder is at
  three quarters of it (:func:`prune`). The cap is checked by each process when it first
  writes and again whenever what it wrote since could have reached it, so several processes
  writing at once may overshoot it by what the others wrote since their last check. Pruning
  never disturbs a reader: a file removed while it is open is still read whole (POSIX), and
  one removed before it is opened is simply a miss (recomputed); a temporary file is removed
  only when it is an hour old (a writer that died), never while it may still be renamed.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FIT_VERSION", "FORMAT_VERSION", "MAX_SIZE", "cache_dir", "clear", "persistent",
           "prune", "usage"]

#: Layout of the files (bump when the encoding changes).
FORMAT_VERSION = 1
#: Version of the fits themselves (bump when a fit's algorithm or target changes).
FIT_VERSION = 1

#: Cap on the space the cache takes on disk, in bytes (read at every write, so a program may
#: set it): about 65 000 fits of one 4 KiB block each.
MAX_SIZE = 256 * 2**20
#: Pruning leaves the folder at this fraction of the cap (so that it is not pruned at every
#: write once full).
LOW_WATER = 0.75
#: A temporary file older than this (seconds) was left by a writer that died.
STALE_TEMPORARY = 3600.0

_OFF = ("", "0", "off", "false", "no")
_DIR_ENV = "FASTMOMENTS_CACHE_DIR"


def cache_dir() -> Path | None:
    """The folder holding the fits, or ``None`` when the cache is turned off.

    >>> folder = cache_dir()
    >>> folder is None or folder.name == f"fits-v{FORMAT_VERSION}"
    True
    """
    return _cache_dir(os.environ.get(_DIR_ENV), os.environ.get("XDG_CACHE_HOME"))


@functools.lru_cache(maxsize=8)
def _cache_dir(env: str | None, xdg: str | None) -> Path | None:
    """:func:`cache_dir` for one value of ``$FASTMOMENTS_CACHE_DIR`` (``None``: unset) and
    of ``$XDG_CACHE_HOME`` (which platformdirs reads on Linux); remembered, since it is asked
    on every cached call (platformdirs costs ~50 µs)."""
    if env is not None:
        if env.strip().lower() in _OFF:
            return None
        base = Path(env).expanduser()
    else:
        try:
            import platformdirs
        except ImportError:  # pragma: no cover - platformdirs is a dependency
            base = Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")).expanduser() / "fastmoments"
        else:
            base = Path(platformdirs.user_cache_dir("fastmoments", appauthor=False))
    return base / f"fits-v{FORMAT_VERSION}"


def _max_size() -> int:
    """:data:`MAX_SIZE`, checked (a program may have set it).

    Raises
    ------
    ValueError
        For a :data:`MAX_SIZE` that is not a positive integer number of bytes.
    """
    size = MAX_SIZE
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size <= 0:
        raise ValueError(
            f"fastmoments.signal.fit_cache.MAX_SIZE must be a positive integer number of "
            f"bytes, such as 256 * 2**20; got {size!r} (to turn the cache off, set "
            f"{_DIR_ENV}=off)")
    return int(size)


def _entries(base: Path) -> list[tuple[float, int, str, bool]]:
    """``(mtime, bytes on disk, path, temporary)`` of every file the cache wrote under
    ``base``: ``*.fit`` in the ``fits-v*`` folders (this format's and older ones), nothing
    else (a folder set by ``$FASTMOMENTS_CACHE_DIR`` may hold other files)."""
    out = []
    try:
        folders = [e.path for e in os.scandir(base)
                   if e.name.startswith("fits-v") and e.is_dir(follow_symlinks=False)]
    except OSError:
        return out
    for folder in folders:
        try:
            with os.scandir(folder) as it:
                for e in it:
                    if not e.name.endswith(".fit"):
                        continue
                    try:
                        st = e.stat(follow_symlinks=False)
                    except OSError:  # removed meanwhile
                        continue
                    size = max(st.st_size, 512 * getattr(st, "st_blocks", 0))
                    out.append((st.st_mtime, size, e.path, e.name.startswith(".tmp-")))
        except OSError:
            continue
    return out


def usage() -> tuple[int, int]:
    """``(files, bytes on disk)`` of the cache (both ``0`` when it is off or empty).

    >>> files, size = usage()
    >>> files >= 0 and size >= 0
    True
    """
    folder = cache_dir()
    if folder is None:
        return 0, 0
    entries = _entries(folder.parent)
    return len(entries), sum(e[1] for e in entries)


def prune(limit: int | None = None) -> int:
    """Delete the least recently used files until the cache takes at most ``limit`` bytes
    on disk (default: :data:`LOW_WATER` times :data:`MAX_SIZE`) and every temporary file
    left by a writer that died; returns the bytes freed.

    A file another process is reading stays readable (or is a miss, recomputed); a file that
    is gone already is skipped. Temporary files younger than :data:`STALE_TEMPORARY` seconds
    (a writer may still rename them into place) are counted but never removed.

    Raises
    ------
    TypeError
        For a ``limit`` that is not an integer (bools included).
    ValueError
        For a negative ``limit``.
    """
    if limit is None:
        limit = int(LOW_WATER * _max_size())
    elif isinstance(limit, bool) or not isinstance(limit, (int, np.integer)):
        raise TypeError(f"limit must be an integer number of bytes, got {limit!r}")
    elif limit < 0:
        raise ValueError(f"limit must be >= 0 bytes, got {limit}")
    folder = cache_dir()
    return 0 if folder is None else _prune(folder.parent, limit)


def _prune(base: Path, limit: int) -> int:
    """:func:`prune` of the cache folder ``base``."""
    entries = _entries(base)
    total = sum(e[1] for e in entries)
    now = time.time()
    freed = 0
    for mtime, size, path, temporary in sorted(entries):  # least recently used first
        stale = temporary and now - mtime > STALE_TEMPORARY
        if not stale and (temporary or total <= limit):
            continue
        try:
            os.unlink(path)
        except OSError:  # removed by another process, or not ours to remove
            continue
        total -= size
        freed += size
    _ledger.reset(base, total)
    return freed


class _Ledger:
    """What this process knows of the cache's size, per cache folder: the total at its last
    scan plus what it has written since. A write that takes it over the cap rescans (other
    processes write and prune too) and prunes if the folder really is over."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.totals: dict[str, int] = {}  # unknown until the first write to a folder

    def reset(self, base: Path, total: int | None) -> None:
        with self.lock:
            if total is None:
                self.totals.pop(str(base), None)
            else:
                self.totals[str(base)] = total

    def wrote(self, base: Path, size: int) -> None:
        cap = _max_size()
        with self.lock:
            total = self.totals.get(str(base))
            if total is not None:
                self.totals[str(base)] = total = total + size
                if total <= cap:
                    return
        entries = _entries(base)  # first write of this process, or over the cap
        total = sum(e[1] for e in entries)
        if total > cap:
            _prune(base, int(LOW_WATER * cap))
        else:
            self.reset(base, total)


_ledger = _Ledger()


def clear() -> int:
    """Delete the cached fits; returns how many files were removed."""
    folder = cache_dir()
    if folder is None or not folder.is_dir():
        return 0
    n = 0
    for f in folder.glob("*.fit"):
        try:
            f.unlink()
            n += 1
        except OSError:  # pragma: no cover - removed by another process
            pass
    _ledger.reset(folder.parent, None)
    return n


_MAGIC = b"fastmoments-fit\n"


def _encode(value: Any) -> dict[str, Any]:
    """``{name: value}`` for a fit: a dataclass's fields, a tuple's items or one scalar."""
    if dataclasses.is_dataclass(value):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return {f"t{i}": v for i, v in enumerate(value)}
    return {"v": value}


def _decode(fields: dict[str, Any], kind: type | None) -> Any:
    if kind is not None:
        return kind(**{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})
    if "v" in fields:
        return fields["v"]
    return tuple(fields[f"t{i}"] for i in range(len(fields)))


def _dumps(key: str, value: Any) -> bytes:
    """One file: a magic line, a JSON header line (key, format, scalars, array layout and the
    payload's SHA-256), then the arrays' raw bytes (little-endian float64 / complex128)."""
    head: dict[str, Any] = {}
    blobs: list[bytes] = []
    offset = 0
    for name, v in _encode(value).items():
        if isinstance(v, np.ndarray):
            dt = "<c16" if np.iscomplexobj(v) else "<f8"
            b = np.ascontiguousarray(v, dtype=dt).tobytes()
            head[name] = {"dtype": dt, "shape": list(v.shape), "offset": offset,
                          "nbytes": len(b)}
            blobs.append(b)
            offset += len(b)
        elif isinstance(v, (bool, np.bool_)):
            head[name] = bool(v)
        elif isinstance(v, (int, np.integer)):
            head[name] = int(v)
        elif isinstance(v, (float, np.floating)):
            head[name] = float(v)
        elif isinstance(v, tuple):
            head[name] = [float(x) for x in v]
        else:  # pragma: no cover - the fits hold nothing else
            raise TypeError(f"cannot store {type(v).__name__} in the fit cache")
    payload = b"".join(blobs)
    meta = {"key": key, "format": FORMAT_VERSION, "fields": head,
            "sha256": _digest(key, head, payload)}
    return _MAGIC + json.dumps(meta, allow_nan=True).encode() + b"\n" + payload


def _digest(key: str, head: dict, payload: bytes) -> str:
    """SHA-256 of the key, the scalars and layout, and the arrays' bytes."""
    text = json.dumps([key, head], sort_keys=True, allow_nan=True).encode()
    return hashlib.sha256(text + b"\0" + payload).hexdigest()


def _loads(raw: bytes, key: str, kind: type | None) -> Any:
    if not raw.startswith(_MAGIC):
        raise ValueError("not a fit file")
    line_end = raw.index(b"\n", len(_MAGIC))
    meta = json.loads(raw[len(_MAGIC):line_end])
    payload = raw[line_end + 1:]
    if (meta["key"] != key or meta["format"] != FORMAT_VERSION
            or _digest(key, meta["fields"], payload) != meta["sha256"]):
        raise ValueError("another key, another format or a damaged file")
    fields = {}
    for name, v in meta["fields"].items():
        if isinstance(v, dict):
            a = np.frombuffer(payload, dtype=v["dtype"], count=int(np.prod(v["shape"])),
                              offset=v["offset"]).reshape(v["shape"]).copy()
            a.setflags(write=False)
            fields[name] = a
        else:
            fields[name] = v
    return _decode(fields, kind)


def _source_hash(func: Callable) -> str:
    import inspect

    try:
        return hashlib.sha256(Path(inspect.getfile(func)).read_bytes()).hexdigest()[:16]
    except (OSError, TypeError):  # pragma: no cover - no source file (frozen)
        return "nosource"


def _module_hash(name: str) -> str:
    """SHA-256 (16 hex digits) of a module's source file, found without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
        origin = None if spec is None else spec.origin
        return hashlib.sha256(Path(origin).read_bytes()).hexdigest()[:16]  # type: ignore[arg-type]
    except (OSError, TypeError, ValueError, ImportError):  # pragma: no cover - frozen
        return "nosource"


def _path(folder: Path, key: str) -> Path:
    return folder / (hashlib.sha256(key.encode()).hexdigest()[:32] + ".fit")


def _store(folder: Path, path: Path, data: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".fit")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:
        size = os.stat(path)
        _ledger.wrote(folder.parent, max(size.st_size, 512 * getattr(size, "st_blocks", 0)))
    except OSError:  # pruned or replaced meanwhile: nothing to count
        pass


def _touch(path: Path) -> None:
    """Mark a file as just used (its modification time: the order :func:`prune` follows;
    access times are often not kept). A read-only folder or a file pruned meanwhile is
    fine."""
    try:
        os.utime(path)
    except OSError:
        pass


def persistent(kind: type | None = None, depends: tuple[str, ...] = ()
               ) -> Callable[[Callable], Callable]:
    """Decorator: cache a fit function's results on disk (see the module's docstring).

    ``kind`` is the dataclass the function returns (``None`` for a scalar or a tuple of
    scalars and arrays). The arguments must be plain values whose ``repr`` determines them
    (numbers, strings, ``None``); pass them in one canonical form (floats as ``float``), since
    ``fit(2, ...)`` and ``fit(2.0, ...)`` are different keys. ``depends`` names further
    modules (``"fastmoments.signal.chunked"``) whose code decides the value: their source
    hashes join the key, so that editing any of them starts afresh.
    """
    def wrap(func: Callable) -> Callable:
        name = f"{func.__module__}.{func.__qualname__}"
        source: list[str] = []  # the defining file's hash, read on first use

        @functools.wraps(func)
        def cached(*args: Any, **kwargs: Any) -> Any:
            folder = cache_dir()
            if folder is None:
                return func(*args, **kwargs)
            _max_size()  # a bad MAX_SIZE is an error on every call, before any work
            if not source:
                source.append(":".join([_source_hash(func),
                                        *(_module_hash(m) for m in depends)]))
            key = repr((name, FIT_VERSION, source[0], args, sorted(kwargs.items())))
            path = _path(folder, key)
            try:
                value = _loads(path.read_bytes(), key, kind)
            except Exception:  # missing, corrupt, truncated, another key: recompute
                pass
            else:
                _touch(path)
                return value
            value = func(*args, **kwargs)
            try:
                _store(folder, path, _dumps(key, value))
            except OSError:  # read-only or full: work without the cache
                pass
            return value

        cached.uncached = func  # type: ignore[attr-defined]
        return cached

    return wrap
