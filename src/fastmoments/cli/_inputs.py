"""Reading the files the commands are given: one function per kind of file.

Each turns every way a file can fail to be read (missing, a folder, unreadable, empty,
truncated, another format) into a :class:`UsageError` that names the file and says what was
expected, and refuses what would otherwise be silently changed (complex values cast to real,
one array of several picked at random, NaN). The parsers belong to other libraries (Pillow,
NumPy, nibabel, scipy.io.wavfile) and fail on bad bytes with many exception types
(``OSError``, ``EOFError``, ``struct.error``, ``IndexError``, ``zipfile.BadZipFile``, ...), so
only the calls that parse the file are guarded, and they are guarded against any
:class:`Exception` (except :class:`MemoryError`, which stays an out-of-memory error).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import numpy as np

from ._errors import UsageError, require

__all__ = ["load_image_file", "load_signal_file", "load_volume_file", "readable_path"]

VOLUME_SUFFIXES = (".npy", ".npz", ".nii", ".nii.gz")
SIGNAL_SUFFIXES = (".wav", ".csv", ".txt", ".dat")


def _reason(exc: BaseException) -> str:
    """The parser's own words, on one line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def readable_path(path: str | os.PathLike, what: str, *, folder: bool = False) -> Path:
    """``path`` checked before any work: it exists and can be read (a folder, where
    ``folder`` allows one, can be listed); a :class:`UsageError` naming ``what`` otherwise.
    Imports nothing heavy: every command calls it first."""
    p = Path(path)
    if not p.exists():
        hint = " (a broken link)" if os.path.lexists(p) else ""
        raise UsageError(f"{what} {str(p)!r} does not exist{hint}")
    if p.is_dir():
        if not folder:
            raise UsageError(f"{what} {str(p)!r} is a folder, not a file")
        if not os.access(p, os.R_OK | os.X_OK):
            raise UsageError(f"{what} {str(p)!r} is a folder that cannot be read")
    elif not os.access(p, os.R_OK):
        raise UsageError(f"{what} {str(p)!r} is not readable")
    return p


_existing_file = readable_path


def _unreadable(what: str, path: Path, expected: str, exc: BaseException) -> UsageError:
    """The usage error for a parser's failure (a :class:`MemoryError` is raised again as it
    is: the file may be fine and the memory short)."""
    if isinstance(exc, MemoryError):
        raise exc
    return UsageError(f"{what} {str(path)!r} could not be read as {expected}: {_reason(exc)}")


def load_image_file(path: str | os.PathLike, *, size: int | None = None, grey: bool = False,
                    what: str = "IMAGE") -> tuple[np.ndarray, str]:
    """An image file as :func:`fastmoments.data.load_image` reads it (at its own bit depth and
    type, square), as float64 (exact for every 8-, 16- and 32-bit integer and float32), and
    what was done to its colour (``"grey"``, or ``"grey from RGB"`` with ``grey``).

    Raises
    ------
    UsageError
        If the file is missing, is not an image its reader can decode to the end, is a colour
        image without ``grey``, holds NaN or infinite values, or is smaller than 3 x 3 pixels
        (and ``size`` does not enlarge it).
    """
    from ..data import image_header, read_image
    from ._args import MIN_IMAGE_SIDE

    p = _existing_file(path, what)
    prefix = f"path {str(p)!r} "
    try:
        height, width, channels, _ = image_header(p)
        if channels > 1 and not grey:
            raise UsageError(f"{what} {str(p)!r} is a colour image ({channels} channels); pass "
                             "--grey to convert it to grey (0.299 R + 0.587 G + 0.114 B)")
        if size is None and min(width, height) < MIN_IMAGE_SIDE:
            raise UsageError(f"{what} {str(p)!r} is {width} x {height} pixels; the square crop "
                             f"must be at least {MIN_IMAGE_SIDE} x {MIN_IMAGE_SIDE} (or give "
                             "--size)")
        _, colour = read_image(p, grey=grey)  # decodes every pixel: truncated files fail here
    except UsageError:
        raise
    except ValueError as exc:
        raise UsageError(f"{what} {str(p)!r} {str(exc).removeprefix(prefix)}") from None
    except Exception as exc:
        raise _unreadable(what, p, "an image", exc) from exc
    from ..data import load_image

    return load_image(p, size=size, grey=grey).astype(np.float64), colour


def load_signal_file(path: str | os.PathLike, *, column: int = 0,
                     what: str = "SIGNAL") -> tuple[np.ndarray, float | None]:
    """A 1-D float64 signal and its sampling rate (``None`` for text files) from a ``.wav``
    file (channel ``column``) or a ``.csv`` / ``.txt`` / ``.dat`` file of numbers (column
    ``column``).

    Raises
    ------
    UsageError
        If the file is missing, unreadable as its suffix says, has no such ``--column``, holds
        NaN or infinite values, or has fewer than 8 samples.
    """
    p = _existing_file(path, what)
    ext = p.suffix.lower()
    if ext not in SIGNAL_SUFFIXES:
        raise UsageError(f"{what} {str(p)!r} must be a {', '.join(SIGNAL_SUFFIXES)} file "
                         "or 'chirp'")
    rate: float | None = None
    if ext == ".wav":
        from scipy.io import wavfile

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # scipy warns, then guesses, on damaged chunks
                rate, data = wavfile.read(p)
        except Exception as exc:
            raise _unreadable(what, p, "a WAV file", exc) from exc
        data = np.asarray(data)
        rate = float(rate)
        kind = "channel"
        if rate <= 0:
            raise UsageError(f"{what} {str(p)!r} has a sampling rate of {rate:g} Hz")
    else:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # NumPy only warns about an empty file
                data = np.loadtxt(p, delimiter="," if ext == ".csv" else None, ndmin=2)
        except Exception as exc:
            raise _unreadable(what, p, "columns of numbers", exc) from exc
        kind = "column"
    if data.ndim == 2:
        if column >= data.shape[1]:
            raise UsageError(f"--column {column} is out of range: {what} {str(p)!r} has "
                             f"{data.shape[1]} {kind}{'s' if data.shape[1] != 1 else ''}")
        data = data[:, column]
    elif column != 0:
        raise UsageError(f"--column {column} is out of range: {what} {str(p)!r} has 1 {kind}")
    x = data.astype(np.float64)
    if x.size < 8:
        raise UsageError(f"{what} {str(p)!r} must have at least 8 samples, got {x.size}")
    if not np.isfinite(x).all():
        raise UsageError(f"{what} {str(p)!r} holds NaN or infinite values")
    return x, rate


def _check_volume(arr: np.ndarray, p: Path, what: str) -> np.ndarray:
    if arr.ndim != 3:
        raise UsageError(f"{what} {str(p)!r} must hold a 3-D volume, got shape {arr.shape}")
    if arr.size == 0:
        raise UsageError(f"{what} {str(p)!r} is empty, shape {arr.shape}")
    if arr.dtype.kind == "c":
        raise UsageError(f"{what} {str(p)!r} holds complex values ({arr.dtype}); a real volume "
                         "is expected (save its real part or its magnitude)")
    if arr.dtype.kind not in "biuf":
        raise UsageError(f"{what} {str(p)!r} holds {arr.dtype} values; numbers are expected")
    if arr.dtype.kind in "biu":
        arr = arr.astype(np.float32)
    if not np.isfinite(arr).all():
        raise UsageError(f"{what} {str(p)!r} holds NaN or infinite values")
    return arr


def load_volume_file(path: str | os.PathLike, *, frame: int | None = None,
                     key: str | None = None, what: str = "VOLUME") -> np.ndarray:
    """A ``(D, H, W)`` volume from ``.npy``, ``.npz`` (the array ``key``; a file of one array
    needs none) or NIfTI (frame ``frame`` of a 4-D series, default its first), read as
    :func:`fastmoments.box.io.load_volume` reads it.

    Raises
    ------
    UsageError
        If the file is missing or damaged, is not 3-D (or a 4-D NIfTI series), holds complex,
        non-numeric, NaN or infinite values, an ``.npz`` holds no array or several and ``key``
        does not choose one, or ``frame`` / ``key`` are given where they do not apply.
    """
    p = _existing_file(path, what)
    name = p.name.lower()
    if not name.endswith(VOLUME_SUFFIXES):
        raise UsageError(f"{what} {str(p)!r} must end in {', '.join(VOLUME_SUFFIXES)} "
                         "(or be 'phantom')")
    is_npz = name.endswith(".npz")
    is_nifti = name.endswith((".nii", ".nii.gz"))
    if key is not None and not is_npz:
        raise UsageError(f"--key applies to .npz files only, not to {what} {str(p)!r}")
    if frame is not None and not is_nifti:
        raise UsageError(f"--frame applies to 4-D NIfTI series only, not to {what} {str(p)!r}")
    if is_nifti:
        require(["nibabel"], f"reading {what} {str(p)!r} (NIfTI)")
    from ..box.io import load_volume  # after the checks: the box package imports torch

    if is_npz:
        from ..box.io import NpzSelectionError, read_npz

        try:
            arr = read_npz(p, key, option="--key ")
        except NpzSelectionError as exc:
            raise UsageError(f"{what}: {exc}") from None
        except Exception as exc:
            raise _unreadable(what, p, "a NumPy .npz file", exc) from exc
        return _check_volume(np.asarray(arr), p, what)
    if is_nifti:
        import nibabel
        try:
            shape = nibabel.load(p).shape  # the header only
        except Exception as exc:
            raise _unreadable(what, p, "a NIfTI file", exc) from exc
        if frame is not None:
            if len(shape) != 4:
                raise UsageError(f"--frame applies to 4-D NIfTI series; {what} {str(p)!r} has "
                                 f"shape {shape}")
            if frame >= shape[3]:
                raise UsageError(f"--frame {frame} is out of range: {what} {str(p)!r} has "
                                 f"{shape[3]} frames")
        expected = "a NIfTI file"
    else:
        expected = "a NumPy .npy file"
    try:
        arr = load_volume(p, frame=frame or 0)
    except Exception as exc:
        raise _unreadable(what, p, expected, exc) from exc
    return _check_volume(np.asarray(arr), p, what)
