"""Real test data shipped by installed packages (no downloads at run time)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ._validate import check_choice, check_int

__all__ = ["PPG_SAMPLING_RATE", "load_image", "ppg_recording", "sample_image"]

_SAMPLES = ("camera", "astronaut", "coffee", "moon", "brick", "coins")


def sample_image(name: str = "camera", size: int | None = 512) -> np.ndarray:
    """A grey-level photograph from scikit-image's bundled data, as float64 in [0, 255].

    Parameters
    ----------
    name : str
        One of ``"camera"``, ``"astronaut"``, ``"coffee"``, ``"moon"``, ``"brick"``, ``"coins"``.
    size : int or None
        Centre-crop to a square and resize to ``size`` x ``size`` (``None`` keeps the
        square crop at its own size).

    Raises
    ------
    ValueError
        For an unknown ``name`` or a ``size`` < 1.
    TypeError
        For a ``size`` that is not an integer (bools and floats included).

    Examples
    --------
    >>> sample_image("camera", 64).shape
    (64, 64)
    """
    from skimage import color, data, transform

    check_choice("name", name, _SAMPLES)
    size = _check_size(size)
    img = getattr(data, name)()
    if img.ndim == 3:
        img = color.rgb2gray(img[..., :3]) * 255.0
    img = np.asarray(img, dtype=np.float64)
    h, w = img.shape
    s = min(h, w)
    img = img[(h - s) // 2:(h - s) // 2 + s, (w - s) // 2:(w - s) // 2 + s]
    if size is not None and size != s:
        img = transform.resize(img, (size, size), order=1, anti_aliasing=True,
                               preserve_range=True)
    return img


def _check_size(size: Any) -> int | None:
    return None if size is None else check_int("size", size, minimum=1)


def load_image(path: str | os.PathLike[str], size: int | None = None) -> np.ndarray:
    """Read an image file (any format Pillow reads) as a grey-level float64 array in [0, 255].

    Non-square images are centre-cropped to a square; ``size`` resizes the square.

    Raises
    ------
    FileNotFoundError, IsADirectoryError, PermissionError
        When the file cannot be opened (the message names it).
    ValueError
        When the file is not an image Pillow can decode (empty, truncated, another format),
        or for a ``size`` < 1.
    TypeError
        For a ``path`` that is not a string or path, a ``size`` that is not an integer.
    """
    from PIL import Image, UnidentifiedImageError

    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file name (str or os.PathLike), got {path!r}")
    size = _check_size(size)
    try:
        with Image.open(path) as im:
            arr = np.asarray(im.convert("L"), dtype=np.float64)
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError) as exc:
        raise ValueError(f"path {os.fspath(path)!r} is not an image file that Pillow can "
                         f"read: {exc}") from exc
    if arr.size == 0:
        raise ValueError(f"path {os.fspath(path)!r} holds an empty image")
    h, w = arr.shape
    s = min(h, w)
    arr = arr[(h - s) // 2:(h - s) // 2 + s, (w - s) // 2:(w - s) // 2 + s]
    if size is not None and size != s:
        from skimage import transform

        arr = transform.resize(arr, (size, size), order=1, anti_aliasing=True,
                               preserve_range=True)
    return arr


#: Mean sampling rate in Hz of :func:`ppg_recording` (68,476 samples over its 681.9 s of
#: time stamps: 100.4 Hz; the logger's nominal rate is 100 Hz).
PPG_SAMPLING_RATE = 100.4

_PPG_FILE = ("heartpy", "data", "data3.csv")
_PPG_SAMPLES = 68476


def _ppg_path() -> str:
    import importlib.util

    spec = importlib.util.find_spec(_PPG_FILE[0])  # the package's folder, without importing it
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            "ppg_recording reads the recording that the heartpy package ships; install it with "
            "pip install heartpy (or pip install \"fastmoments[bench]\")")
    return os.path.join(next(iter(spec.submodule_search_locations)), *_PPG_FILE[1:])


def ppg_recording(tiles: int = 1) -> np.ndarray:
    """A real 11-minute photoplethysmogram (PPG) shipped by HeartPy, tiled end to end.

    The recording is ``heartpy/data/data3.csv`` of the ``heartpy`` wheel (HeartPy 1.2.7,
    P. van Gent, ``heartpy.load_exampledata(2)``; the wheel's LICENSE file is MIT): 68,476
    raw PPG readings (integers 0-978, column ``hr``) logged with time stamps over 681.9 s, so
    about 100 Hz (:data:`PPG_SAMPLING_RATE`; the stamps come in bursts of a few samples, the
    mean rate is what the samples stand for). It is read from the installed package's folder,
    without importing ``heartpy`` (which imports matplotlib), and needs no download.

    Parameters
    ----------
    tiles : int
        Copies of the recording laid end to end (default 1): ``tiles = 14604`` gives 10^9
        samples (8 GB in float64). The seams are real-signal jumps of at most one pulse
        amplitude, one per 68,476 samples.

    Returns
    -------
    numpy.ndarray
        ``(68476 * tiles,)`` float64, the raw readings (no scaling or filtering).

    Raises
    ------
    ModuleNotFoundError
        When ``heartpy`` is not installed (the message says how to install it).
    TypeError
        For a ``tiles`` that is not an integer (bools and floats included).
    ValueError
        For ``tiles`` < 1, or a file that is not the expected recording.

    Notes
    -----
    Why this one: the longest real recording that a package on PyPI ships inside its wheel
    (checked: ``pywt.data.ecg()``, 1,024 ECG samples; ``scipy.datasets.electrocardiogram``,
    which downloads its file with pooch; MNE's sample data, a download). See
    ``docs/collections.md``.

    Examples
    --------
    >>> x = ppg_recording(tiles=2)  # doctest: +SKIP
    >>> x.shape, x.dtype  # doctest: +SKIP
    ((136952,), dtype('float64'))
    >>> round(68476 / PPG_SAMPLING_RATE)  # seconds of one tile
    682
    """
    tiles = check_int("tiles", tiles, minimum=1)
    one = _ppg_one()
    return np.tile(one, tiles) if tiles > 1 else one.copy()


_PPG_CACHE: list[np.ndarray] = []


def _ppg_one() -> np.ndarray:
    if not _PPG_CACHE:
        path = _ppg_path()
        x = np.loadtxt(path, delimiter=",", skiprows=1, usecols=1, dtype=np.float64)
        if x.shape != (_PPG_SAMPLES,):
            raise ValueError(f"{path} holds {x.shape[0]} samples, expected {_PPG_SAMPLES} "
                             "(heartpy 1.2.7's data3.csv)")
        x.setflags(write=False)
        _PPG_CACHE.append(x)
    return _PPG_CACHE[0]
