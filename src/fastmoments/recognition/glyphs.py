r"""Deterministic 24 x 24 binary renderings of the GB2312 hanzi (the data set of chapter 6 of the
:ref:`Zernike thesis <bib-zernike-thesis>`).

The thesis uses the 6,763 simplified Chinese characters of GB2312 (levels 1 and 2, bytes
``0xB0A1``-``0xF7FE``) as 24 x 24 binary images from a bitmap font that it does not name. We
render them from a real CJK outline font, WenQuanYi Micro Hei (Debian package
``fonts-wqy-microhei``), the same way every time:

1. **Characters**: every two-byte sequence ``hi lo`` with ``0xB0 <= hi <= 0xF7`` and
   ``0xA1 <= lo <= 0xFE`` that Python's ``gb2312`` codec decodes (6,763 of the 6,768 slots;
   five slots of row ``0xD7`` are unassigned), in byte order.
2. **Outline to pixels**: the glyph is drawn with FreeType (Pillow) at ``supersample * size``
   pixels per em (default 4 x 24 = 96) on a square canvas of that side: the horizontal origin is
   the left edge of the advance box (the ideographs of this font advance by one em) and the
   baseline sits at ``round(0.875 * em)`` from the top, so the canvas is the font's ideographic em
   box (about 1/8 em of descent below the baseline, the usual CJK layout). No centring on the
   ink: the position of a character inside its em box is part of its shape (日 vs 曰).
3. **Pixels to binary**: the 8-bit coverage is averaged over ``supersample x supersample``
   blocks and thresholded: a pixel is ink when the mean coverage is at least ``threshold``
   (default 0.5).

The result is a boolean array, ``True`` for ink. The thesis stores the character as 0 and the
background as 1 (Sec. 6.1); :func:`fastmoments.recognition.experiment.glyph_images` turns the masks
into either convention.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from .._validate import check_int, check_positive_float

__all__ = ["FONT_PACKAGE", "find_font", "gb2312_characters", "render_glyphs"]

#: Debian/Ubuntu package that provides the font.
FONT_PACKAGE = "fonts-wqy-microhei"

_FONT_CANDIDATES = (
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/wqy-microhei/wqy-microhei.ttc",
    "/usr/local/share/fonts/wqy-microhei.ttc",
)


def find_font(path: str | os.PathLike | None = None) -> Path:
    """The WenQuanYi Micro Hei font file.

    Parameters
    ----------
    path : path-like, optional
        An explicit font file. Otherwise the places where Debian and other distributions
        install the font.

    Raises
    ------
    FileNotFoundError
        If ``path`` is not a file, or none is given and the font is not installed; the
        message says how to install it.
    """
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"font file {str(p)!r} does not exist")
        return p
    for cand in _FONT_CANDIDATES:
        if Path(cand).is_file():
            return Path(cand)
    raise FileNotFoundError(
        "the CJK font WenQuanYi Micro Hei was not found; install it with "
        f"'sudo apt-get install -y {FONT_PACKAGE}' (Debian/Ubuntu), or pass a "
        "wqy-microhei.ttc file as font= (--font on the command line)")


@lru_cache(maxsize=1)
def _all_gb2312() -> tuple[str, ...]:
    chars = []
    for hi in range(0xB0, 0xF8):
        for lo in range(0xA1, 0xFF):
            try:
                chars.append(bytes((hi, lo)).decode("gb2312"))
            except UnicodeDecodeError:
                continue
    return tuple(chars)


def gb2312_characters(limit: int | None = None) -> list[str]:
    """The GB2312 hanzi (levels 1 and 2) in byte order.

    Parameters
    ----------
    limit : int, optional
        Only the first ``limit`` characters.

    Examples
    --------
    >>> chars = gb2312_characters()
    >>> len(chars), chars[0], chars[-1]
    (6763, '啊', '齄')
    """
    chars = list(_all_gb2312())
    if limit is not None:
        chars = chars[: check_int("limit", limit, minimum=1)]
    return chars


@lru_cache(maxsize=4)
def _render_cached(chars: tuple[str, ...], size: int, supersample: int, threshold: float,
                   font: str) -> np.ndarray:
    from PIL import Image, ImageDraw, ImageFont

    em = size * supersample
    face = ImageFont.truetype(font, em, index=0)
    baseline = round(0.875 * em)
    out = np.empty((len(chars), size, size), dtype=bool)
    canvas = Image.new("L", (em, em), 0)
    draw = ImageDraw.Draw(canvas)
    for i, ch in enumerate(chars):
        draw.rectangle((0, 0, em, em), fill=0)
        draw.text((0, baseline), ch, font=face, fill=255, anchor="ls")
        cov = np.asarray(canvas, dtype=np.float64) / 255.0
        cov = cov.reshape(size, supersample, size, supersample).mean(axis=(1, 3))
        out[i] = cov >= threshold
    out.setflags(write=False)
    return out


def render_glyphs(chars: str | list[str], *, size: int = 24, supersample: int = 4,
                  threshold: float = 0.5, font: str | os.PathLike | None = None) -> np.ndarray:
    """Binary images of characters, ``True`` for ink (see the module notes for the method).

    Parameters
    ----------
    chars : str or list of str
        The characters (a string is split into its characters).
    size : int
        Image side in pixels (24 in the thesis).
    supersample : int
        Rendering resolution per output pixel and axis.
    threshold : float
        Mean coverage in ``(0, 1]`` from which a pixel counts as ink.
    font : path-like, optional
        Font file (default: :func:`find_font`).

    Returns
    -------
    numpy.ndarray
        ``(len(chars), size, size)`` bool (a fresh copy; renderings are cached).

    Raises
    ------
    FileNotFoundError
        If the font is missing (the message says how to install it).
    ValueError
        For an empty character list, bad sizes or a threshold outside ``(0, 1]``.
    """
    chars = list(chars)
    if not chars:
        raise ValueError("chars must name at least one character")
    bad = [c for c in chars if not isinstance(c, str) or len(c) != 1]
    if bad:
        raise ValueError(f"chars must be single characters, got {bad[:3]!r}")
    size = check_int("size", size, minimum=2)
    supersample = check_int("supersample", supersample, minimum=1)
    threshold = check_positive_float("threshold", threshold)
    if threshold > 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    path = str(find_font(font))
    return _render_cached(tuple(chars), size, supersample, threshold, path).copy()
