"""Real test data shipped by installed packages (no downloads at run time)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from ._validate import check_choice, check_int

__all__ = ["GREY_WEIGHTS", "PPG_SAMPLING_RATE", "TIFF_SUFFIXES", "image_header", "load_image",
           "ppg_recording", "read_image", "sample_image"]

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


#: File-name endings read with tifffile (every other format is read with Pillow).
TIFF_SUFFIXES = (".tif", ".tiff")

#: Luminance weights of the grey conversion (ITU-R BT.601, the weights of Pillow's ``"L"``),
#: applied in float64 without rounding.
GREY_WEIGHTS = (0.299, 0.587, 0.114)

_PILLOW_DTYPES = {"I;16": "uint16", "I;16L": "uint16", "I;16B": "uint16", "I;16N": "uint16",
                  "I": "int32", "F": "float32"}
_PILLOW_TO_RGB = ("CMYK", "YCbCr", "LAB", "HSV")
_OPEN_ERRORS = (FileNotFoundError, IsADirectoryError, PermissionError, MemoryError)


def _fail(path: Any, what: str) -> ValueError:
    return ValueError(f"path {os.fspath(path)!r} {what}")


def _check_path(path: Any) -> None:
    if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a file name (str or os.PathLike), got {path!r}")


def _is_tiff(path: Any) -> bool:
    return os.fspath(path).lower().endswith(TIFF_SUFFIXES)


def _png_colour_depth(path: Any) -> tuple[int, int] | None:
    """(bit depth, colour type) from a PNG header, or ``None`` for another file."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(26)
    except OSError:
        return None
    if len(head) < 26 or head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return head[24], head[25]


def _tiff_layout(path: Any, axes: str, shape: tuple[int, ...]) -> list[tuple[str, int]]:
    """The axes of a TIFF series that are kept: Y, X and colour samples S (length-1 axes of
    any other kind are dropped; longer ones are refused)."""
    kept = [(a, n) for a, n in zip(axes, shape, strict=True) if n != 1 or a in "YX"]
    if "".join(a for a, _ in kept) not in ("YX", "YXS", "SYX"):
        raise _fail(path, f"holds an array of shape {tuple(shape)} (axes {axes}); one 2-D "
                          "image (with or without colour samples) per file is expected")
    return kept


@contextmanager
def _tiff(path: Any) -> Iterator[Any]:
    """``tifffile.TiffFile(path)`` whose failures, in opening or in the block, become the
    library's error naming the file (the errors of opening a path and our own, which start
    with "path ", pass as they are)."""
    import tifffile

    try:
        with tifffile.TiffFile(path) as tif:
            yield tif
    except _OPEN_ERRORS:
        raise
    except ValueError as exc:
        if str(exc).startswith("path "):
            raise
        raise _fail(path, f"is not a TIFF file that tifffile can read: {exc}") from exc
    except Exception as exc:
        raise _fail(path, f"is not a TIFF file that tifffile can read: {exc}") from exc


def _read_tiff(path: Any) -> tuple[np.ndarray, str]:
    """A TIFF file's first series at its own dtype, as ``(H, W)`` or ``(H, W, C)``."""
    with _tiff(path) as tif:
        series = tif.series[0]
        kept = _tiff_layout(path, series.axes, series.shape)
        arr = series.asarray()
        photometric = getattr(tif.pages[0].photometric, "name", "")
    arr = arr.reshape([n for _, n in kept])
    if kept[0][0] == "S":
        arr = np.moveaxis(arr, 0, -1)
    if arr.ndim == 2:
        return arr, "grey"
    return arr, {"MINISBLACK": "samples"}.get(photometric, photometric or "samples")


def _read_pillow(path: Any) -> tuple[np.ndarray, str]:
    """An image that Pillow reads, at its own depth, as ``(H, W)`` or ``(H, W, C)``."""
    from PIL import Image, UnidentifiedImageError

    depth = _png_colour_depth(path)
    if depth is not None and depth[0] == 16 and depth[1] in (2, 4, 6):
        raise _fail(path, "is a 16-bit colour PNG, which Pillow reads at 8 bits per channel "
                          "only; save it as a 16-bit TIFF (read exactly) or as 16-bit grey")
    try:
        with Image.open(path) as im:
            if getattr(im, "n_frames", 1) > 1:
                raise _fail(path, f"holds {im.n_frames} frames; one image per file is expected")
            mode = im.mode
            palette = mode in ("P", "PA")
            if palette:
                im = im.convert("RGBA" if mode == "PA" or "transparency" in im.info else "RGB")
            elif mode in _PILLOW_TO_RGB:
                im = im.convert("RGB")
            mode = im.mode
            arr = np.asarray(im)
    except _OPEN_ERRORS:
        raise
    except ValueError as exc:
        if str(exc).startswith("path "):
            raise
        raise _fail(path, f"is not an image file that Pillow can read: {exc}") from exc
    except (UnidentifiedImageError, OSError, SyntaxError, EOFError) as exc:
        raise _fail(path, f"is not an image file that Pillow can read: {exc}") from exc
    if arr.dtype == bool:  # 1-bit images: 0 and 1
        arr = arr.astype(np.uint8)
    if arr.dtype.byteorder not in ("=", "|"):
        arr = arr.astype(arr.dtype.newbyteorder("="))
    if palette and mode == "RGB" and np.array_equal(arr[..., 0], arr[..., 1]) \
            and np.array_equal(arr[..., 0], arr[..., 2]):
        return np.ascontiguousarray(arr[..., 0]), "grey"  # a palette of grey colours
    return arr, "grey" if arr.ndim == 2 else mode


def image_header(path: str | os.PathLike[str]) -> tuple[int, int, int, np.dtype]:
    """``(height, width, channels, dtype)`` of an image file from its header, without decoding
    its pixels: what :func:`read_image` gives (a palette of grey colours is one channel).

    Raises
    ------
    ValueError
        When the file is not an image its reader can parse (the message names it).
    """
    _check_path(path)
    if _is_tiff(path):
        with _tiff(path) as tif:
            series = tif.series[0]
            kept = dict(_tiff_layout(path, series.axes, series.shape))
            dtype = np.dtype(series.dtype)
        return kept["Y"], kept["X"], kept.get("S", 1), dtype
    from PIL import Image

    try:
        with Image.open(path) as im:
            w, h = im.size
            mode = im.mode
            channels = len(im.getbands())
            if mode in ("P", "PA"):  # read as RGB(A); as grey for grey colours, no alpha
                pal = np.asarray(im.getpalette() or [0, 0, 0]).reshape(-1, 3)
                alpha = mode == "PA" or "transparency" in im.info
                channels = 4 if alpha else 1 if bool((pal == pal[:, :1]).all()) else 3
            elif mode in _PILLOW_TO_RGB:
                channels = 3
    except _OPEN_ERRORS:
        raise
    except Exception as exc:
        raise _fail(path, f"is not an image file that Pillow can read: {exc}") from exc
    return h, w, channels, np.dtype(_PILLOW_DTYPES.get(mode, "uint8"))


def _to_grey(arr: np.ndarray) -> np.ndarray:
    """Luminance of a colour image in float64 (alpha and extra channels dropped)."""
    if arr.shape[-1] < 3:  # grey and alpha
        return arr[..., 0].astype(np.float64)
    return arr[..., :3].astype(np.float64) @ np.asarray(GREY_WEIGHTS)


def read_image(path: str | os.PathLike[str], *, grey: bool = False,
               channel_axis: int | None = None) -> tuple[np.ndarray, str]:
    """An image file as stored: its pixel values at their own type and depth.

    TIFF files (``.tif``, ``.tiff``) are read with tifffile, every other format with Pillow.
    See :func:`load_image` for the options and the types; this one neither crops nor resizes.

    Returns
    -------
    image : numpy.ndarray
        ``(H, W)``, or with the channels on ``channel_axis``.
    colour : str
        ``"grey"`` for a grey file, ``"grey from RGB"`` (say) after a grey conversion, or the
        colour mode of the channels kept (``"RGB"``).

    Raises
    ------
    ValueError, TypeError, OSError
        As :func:`load_image`.
    """
    _check_path(path)
    if not isinstance(grey, bool):
        raise TypeError(f"grey must be True or False, got {grey!r}")
    if channel_axis is not None:
        if grey:
            raise ValueError("grey=True and channel_axis cannot be given together: convert the "
                             "colour to grey, or keep the channels on channel_axis")
        channel_axis = check_int("channel_axis", channel_axis, minimum=None)
        if channel_axis not in (-3, -1, 0, 2):
            raise ValueError(f"channel_axis must be 0 or -1 (or 2, -3) for an image file, got "
                             f"{channel_axis}")
    arr, colour = (_read_tiff if _is_tiff(path) else _read_pillow)(path)
    if arr.size == 0:
        raise _fail(path, "holds an empty image")
    if arr.dtype.kind not in "biuf":
        raise _fail(path, f"holds {arr.dtype} pixels; real numbers are expected")
    if arr.dtype.kind == "f" and not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise _fail(path, f"holds NaN or infinite pixel values (the first at row {bad[0]}, "
                          f"column {bad[1]})")
    if arr.ndim == 3:
        if grey:
            return _to_grey(arr), f"grey from {colour}"
        if channel_axis is None:
            raise _fail(path, f"is a colour image ({colour}, {arr.shape[-1]} channels); pass "
                              "grey=True (--grey) to convert it to grey, or channel_axis to "
                              "keep its channels")
    elif channel_axis is not None:
        arr = arr[..., None]
    if channel_axis in (0, -3):
        arr = np.moveaxis(arr, -1, 0)
    return arr, colour


def load_image(path: str | os.PathLike[str], size: int | None = None, *, grey: bool = False,
               channel_axis: int | None = None) -> np.ndarray:
    """Read an image file at its own bit depth and type, centre-cropped to a square.

    ======================  ========================================================
    file                    array
    ======================  ========================================================
    8-bit PNG, JPEG, BMP    ``uint8`` (1-bit images: ``uint8`` 0 and 1)
    16-bit grey PNG         ``uint16``
    TIFF (tifffile)         its own dtype: ``uint8``, ``uint16``, ``int32``,
                            ``float32``, ``float64``, ...
    32-bit Pillow modes     ``int32`` (``"I"``), ``float32`` (``"F"``)
    ======================  ========================================================

    Integers are kept exact; nothing is scaled or clipped. A palette image is expanded to its
    colours (grey when every colour of the palette is grey). A colour image is refused unless
    ``grey`` or ``channel_axis`` says what to do with its channels. 16-bit colour PNGs are
    refused (Pillow reads them at 8 bits per channel): save them as TIFF.

    Parameters
    ----------
    path : str or path-like
        The file. ``.tif`` / ``.tiff`` are read with tifffile, other formats with Pillow.
    size : int, optional
        Resize the square to ``size x size`` (bilinear with anti-aliasing, in float64: the
        result is float64).
    grey : bool
        Convert a colour image to grey, ``0.299 R + 0.587 G + 0.114 B`` in float64
        (:data:`GREY_WEIGHTS`, no rounding; alpha is dropped). A grey file is returned as it is.
    channel_axis : int, optional
        Keep the channels on this axis (``-1``: ``(N, N, C)``, ``0``: ``(C, N, N)``), as
        :func:`fastmoments.features` takes them; a grey file gets one channel.

    Returns
    -------
    numpy.ndarray
        ``(N, N)`` (or with the channel axis), at the file's dtype (float64 after a grey
        conversion or a resize).

    Raises
    ------
    FileNotFoundError, IsADirectoryError, PermissionError
        When the file cannot be opened (the message names it).
    ValueError
        When the file is not an image its reader can decode (empty, truncated, another
        format, several frames), is a colour image without ``grey`` or ``channel_axis``, holds
        NaN or infinite values, is a 16-bit colour PNG, or for a ``size`` < 1. The message
        names the file.
    TypeError
        For a ``path`` that is not a string or path, a ``size`` that is not an integer.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from PIL import Image
    >>> path = os.path.join(tempfile.mkdtemp(), "deep.png")
    >>> Image.fromarray(np.full((4, 6), 40000, dtype=np.uint16)).save(path)
    >>> img = load_image(path)
    >>> img.shape, img.dtype, int(img.max())
    ((4, 4), dtype('uint16'), 40000)
    """
    _check_path(path)
    size = _check_size(size)
    arr, _ = read_image(path, grey=grey, channel_axis=channel_axis)
    moved = channel_axis in (0, -3)
    if moved:
        arr = np.moveaxis(arr, 0, -1)
    h, w = arr.shape[:2]
    s = min(h, w)
    arr = arr[(h - s) // 2:(h - s) // 2 + s, (w - s) // 2:(w - s) // 2 + s]
    if size is not None and size != s:
        from skimage import transform

        arr = transform.resize(arr.astype(np.float64), (size, size, *arr.shape[2:]), order=1,
                               anti_aliasing=True, preserve_range=True)
    if moved:
        arr = np.moveaxis(arr, -1, 0)
    return np.ascontiguousarray(arr)


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
