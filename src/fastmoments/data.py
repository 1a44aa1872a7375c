"""Real test data shipped by installed packages (no downloads at run time)."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ._validate import check_choice, check_int

__all__ = ["load_image", "sample_image"]

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
