"""Build the real-data image collection: GB2312 glyphs of every CJK font, rotated, in Zarr.

One command builds it (docs/collections.md)::

    python benchmarks/build_glyph_store.py --out glyphs.zarr

Every image is one of the 6,763 GB2312 hanzi (``fastmoments.recognition.gb2312_characters``) drawn
by one CJK outline font and turned by one angle, as a ``size x size`` uint8 grey image (FreeType's
anti-aliased coverage, 0 background, 255 ink). With the four fonts of the Debian packages
``fonts-wqy-microhei``, ``fonts-wqy-zenhei``, ``fonts-arphic-ukai`` and ``fonts-arphic-uming`` and
24 angles (0, 15, ..., 345 degrees) that is 4 x 6,763 x 24 = 649,248 images of 128 x 128
(10.6 GB raw; Zarr's default Zstandard compression stores far less).

Layout of one image (deterministic: same fonts, Pillow and FreeType give the same bytes):

1. The font's em square is scaled to ``em = round(7/8 * size)`` pixels and centred on the
   ``size x size`` canvas (a margin of ``size/16`` on each side keeps descenders and most rotated
   corners inside); the character is drawn with its left side bearing origin at the em box's
   left edge and its baseline at ``7/8`` of the em box from its top (the usual CJK em layout,
   as in :mod:`fastmoments.recognition.glyphs`). Face index 0 of a ``.ttc`` collection.
2. The image is turned counter-clockwise by the angle about the canvas centre (Pillow
   ``Image.rotate``, bilinear, background 0).

Order of the images: font, then character (GB2312 byte order), then angle; image ``i`` is font
``i // (n_chars * n_angles)``, character ``(i // n_angles) % n_chars``, angle ``i % n_angles``.

The Zarr group holds ``images`` ``(n, size, size)`` uint8 chunked along the image axis, and the
labels ``font`` (int16), ``char`` (int32 code point) and ``angle`` (int16 degrees) per image; its
attributes name the fonts (family, style, file, Debian package), the angles and the layout.
Chunks are written as they are made, each followed by a mark in ``done``, so an interrupted
build resumes where it stopped. Features of the collection::

    fastmoments features glyphs.zarr --array images --out glyph-features.zarr --orders 20
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import lru_cache
from pathlib import Path

import numpy as np

#: Debian packages of CJK outline fonts and where they install face 0 (the first found wins).
KNOWN_FONTS = (
    ("fonts-wqy-microhei", "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"),
    ("fonts-wqy-zenhei", "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc"),
    ("fonts-arphic-ukai", "/usr/share/fonts/truetype/arphic/ukai.ttc"),
    ("fonts-arphic-uming", "/usr/share/fonts/truetype/arphic/uming.ttc"),
    ("fonts-noto-cjk", "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
    ("fonts-noto-cjk", "/usr/share/fonts/opentype/noto/NotoSerifCJK-Regular.ttc"),
)


def installed_fonts() -> list[str]:
    """The font files of :data:`KNOWN_FONTS` present on this machine."""
    return [path for _, path in KNOWN_FONTS if Path(path).is_file()]


def parse_angles(text: str) -> list[int]:
    """``"0:360:15"`` (start:stop:step, stop excluded) or ``"0,90,180"`` -> degrees."""
    try:
        if ":" in text:
            a, b, c = (int(v) for v in text.split(":"))
            if c <= 0:
                raise ValueError
            angles = list(range(a, b, c))
        else:
            angles = [int(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(f"--rotations must be START:STOP:STEP or a list of integer degrees, "
                         f"got {text!r}") from None
    if not angles:
        raise ValueError(f"--rotations {text!r} gives no angle")
    return angles


@lru_cache(maxsize=8)
def _face(path: str, em: int):
    from PIL import ImageFont

    return ImageFont.truetype(path, em, index=0)


@lru_cache(maxsize=64)
def _glyph(path: str, char: str, size: int):
    from PIL import Image, ImageDraw

    em = round(7 * size / 8)
    off = (size - em) // 2
    canvas = Image.new("L", (size, size), 0)
    ImageDraw.Draw(canvas).text((off, off + round(0.875 * em)), char, font=_face(path, em),
                                fill=255, anchor="ls")
    return canvas


def render(path: str, char: str, size: int, angle: int) -> np.ndarray:
    """One image of the collection (module notes)."""
    from PIL import Image

    img = _glyph(path, char, size)
    if angle % 360:
        img = img.rotate(angle, resample=Image.BILINEAR, fillcolor=0)
    return np.asarray(img, dtype=np.uint8)


def _build_chunk(out: str, j: int, chunk: int, n: int, fonts: list[str], chars: str,
                 angles: list[int], size: int) -> int:
    import zarr

    s, e = j * chunk, min(n, (j + 1) * chunk)
    block = np.empty((e - s, size, size), dtype=np.uint8)
    na, nc = len(angles), len(chars)
    for i in range(s, e):
        f, c, a = i // (nc * na), (i // na) % nc, i % na
        block[i - s] = render(fonts[f], chars[c], size, angles[a])
    zarr.open_group(out, mode="r+")["images"][s:e] = block
    return j


def _font_info(path: str) -> dict:
    from PIL import ImageFont

    family, style = ImageFont.truetype(path, 16, index=0).getname()
    package = next((p for p, f in KNOWN_FONTS if f == path), None)
    return {"file": path, "family": family, "style": style, "debian_package": package}


def build(out: str | Path, *, fonts: list[str] | None = None, size: int = 128,
          angles: list[int] | None = None, limit: int | None = None, chunk: int = 1024,
          jobs: int = 1, progress: bool | None = None) -> dict:
    """Build (or finish building) the glyph store at ``out``; returns its attributes."""
    import zarr

    from fastmoments._progress import progress_bar
    from fastmoments.recognition import gb2312_characters

    fonts = [str(Path(f).resolve()) for f in (fonts or installed_fonts())]
    if not fonts:
        raise ValueError("no CJK font found; install fonts-wqy-microhei (and fonts-wqy-zenhei, "
                         "fonts-arphic-ukai, fonts-arphic-uming) or pass --fonts FILE ...")
    for f in fonts:
        if not Path(f).is_file():
            raise FileNotFoundError(f"--fonts: {f!r} does not exist")
    angles = angles if angles is not None else list(range(0, 360, 15))
    chars = "".join(gb2312_characters(limit))
    n = len(fonts) * len(chars) * len(angles)
    n_chunks = math.ceil(n / chunk)
    attrs = {"fonts": [_font_info(f) for f in fonts], "characters": chars,
             "angles_degrees": angles, "size": size, "n_images": n, "chunk": chunk,
             "order": "font, character (GB2312 byte order), angle",
             "layout": "em = round(7/8 size) centred; baseline 7/8 em from the em box top; "
                       "turned counter-clockwise about the centre, bilinear, background 0",
             "builder": "benchmarks/build_glyph_store.py"}
    out = str(out)
    store = Path(out)
    if store.exists():
        old = dict(zarr.open_group(out, mode="r").attrs.get("glyph_store", {}))
        if old != attrs:
            raise ValueError(f"--out {out!r} exists and was built with other settings; remove "
                             "it or choose another name")
    else:
        g = zarr.open_group(out, mode="w")
        g.create_array("images", shape=(n, size, size), chunks=(chunk, size, size),
                       dtype="uint8", fill_value=0)
        idx = np.arange(n)
        na, nc = len(angles), len(chars)
        g.create_array("font", shape=(n,), chunks=(chunk * 64,), dtype="int16")[:] = \
            idx // (nc * na)
        g.create_array("char", shape=(n,), chunks=(chunk * 64,), dtype="int32")[:] = \
            np.array([ord(c) for c in chars], dtype=np.int32)[(idx // na) % nc]
        g.create_array("angle", shape=(n,), chunks=(chunk * 64,), dtype="int16")[:] = \
            np.asarray(angles, dtype=np.int16)[idx % na]
        g.create_array("done", shape=(n_chunks,), chunks=(1,), dtype="uint8", fill_value=0,
                       compressors=None)
        g.attrs["glyph_store"] = attrs
    group = zarr.open_group(out, mode="r+")
    done = group["done"]
    todo = [j for j in range(n_chunks) if not done[j]]
    bar = progress_bar(n_chunks, desc="glyph store", show=progress, unit="chunk")
    bar.update(n_chunks - len(todo))
    args = (chunk, n, fonts, chars, angles, size)
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            for j in pool.map(_build_chunk, [out] * len(todo), todo,
                              *[[a] * len(todo) for a in args]):
                done[j] = 1
                bar.update(1)
    else:
        for j in todo:
            _build_chunk(out, j, *args)
            done[j] = 1
            bar.update(1)
    bar.close()
    return attrs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="the Zarr store to build (e.g. glyphs.zarr)")
    p.add_argument("--fonts", nargs="+", default=None, metavar="FILE",
                   help="font files (default: every installed font of KNOWN_FONTS)")
    p.add_argument("--size", type=int, default=128, help="image side (default 128)")
    p.add_argument("--rotations", default="0:360:15",
                   help="angles in degrees, START:STOP:STEP or a list (default 0:360:15)")
    p.add_argument("--limit", type=int, default=None,
                   help="only the first LIMIT GB2312 characters (for tests)")
    p.add_argument("--chunk", type=int, default=1024, help="images per Zarr chunk")
    p.add_argument("--jobs", type=int, default=1, help="processes drawing chunks")
    a = p.parse_args(argv)
    try:
        angles = parse_angles(a.rotations)
        t0 = time.perf_counter()
        attrs = build(a.out, fonts=a.fonts, size=a.size, angles=angles, limit=a.limit,
                      chunk=a.chunk, jobs=a.jobs)
    except (ValueError, FileNotFoundError) as exc:
        print(f"build_glyph_store: error: {exc}", file=sys.stderr)
        return 2
    fonts = ", ".join(f["family"] for f in attrs["fonts"])
    print(f"{a.out}: {attrs['n_images']} images of {a.size}x{a.size} ({len(attrs['fonts'])} "
          f"fonts: {fonts}; {len(attrs['characters'])} characters; {len(angles)} angles) in "
          f"{time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
