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
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FIT_VERSION", "FORMAT_VERSION", "cache_dir", "clear", "persistent"]

#: Layout of the files (bump when the encoding changes).
FORMAT_VERSION = 1
#: Version of the fits themselves (bump when a fit's algorithm or target changes).
FIT_VERSION = 1

_OFF = ("", "0", "off", "false", "no")


def cache_dir() -> Path | None:
    """The folder holding the fits, or ``None`` when the cache is turned off.

    >>> folder = cache_dir()
    >>> folder is None or folder.name == f"fits-v{FORMAT_VERSION}"
    True
    """
    env = os.environ.get("FASTMOMENTS_CACHE_DIR")
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
            if not source:
                source.append(":".join([_source_hash(func),
                                        *(_module_hash(m) for m in depends)]))
            key = repr((name, FIT_VERSION, source[0], args, sorted(kwargs.items())))
            path = _path(folder, key)
            try:
                return _loads(path.read_bytes(), key, kind)
            except Exception:  # missing, corrupt, truncated, another key: recompute
                pass
            value = func(*args, **kwargs)
            try:
                _store(folder, path, _dumps(key, value))
            except OSError:  # read-only or full: work without the cache
                pass
            return value

        cached.uncached = func  # type: ignore[attr-defined]
        return cached

    return wrap
