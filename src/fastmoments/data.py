"""Real test data shipped by installed packages (no downloads at run time)."""

from __future__ import annotations

import numpy as np

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

    Examples
    --------
    >>> sample_image("camera", 64).shape
    (64, 64)
    """
    from skimage import color, data, transform

    from ._validate import check_choice

    check_choice("name", name, _SAMPLES)
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


def load_image(path: str, size: int | None = None) -> np.ndarray:
    """Read an image file (any format Pillow reads) as a grey-level float64 array in [0, 255].

    Non-square images are centre-cropped to a square; ``size`` resizes the square.
    """
    from PIL import Image

    with Image.open(path) as im:
        arr = np.asarray(im.convert("L"), dtype=np.float64)
    h, w = arr.shape
    s = min(h, w)
    arr = arr[(h - s) // 2:(h - s) // 2 + s, (w - s) // 2:(w - s) // 2 + s]
    if size is not None and size != s:
        from skimage import transform

        arr = transform.resize(arr, (size, size), order=1, anti_aliasing=True,
                               preserve_range=True)
    return arr
