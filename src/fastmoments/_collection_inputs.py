"""Inputs of :mod:`fastmoments.collections`: image collections opened and read chunk by chunk."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["IMAGE_SUFFIXES", "ImageSource", "open_images", "read_task"]

#: File-name endings read from an image folder (case-insensitive).
IMAGE_SUFFIXES = (".png", ".tif", ".tiff", ".jpg", ".jpeg")


@dataclass(frozen=True)
class ImageSource:
    """A collection of square images, read chunk by chunk (made by :func:`open_images`).

    Attributes
    ----------
    kind : {"zarr", "folder", "npy"}
    path : str
        The absolute path of the input.
    n : int
        Number of images.
    side : int
        Side ``N`` of the ``N x N`` images (after resampling for a folder with ``size``).
    dtype : str
        NumPy dtype of the images as read.
    array : str or None
        The array inside a Zarr group.
    size : int or None
        Resampled side of a folder's images.
    files : tuple of str or None
        A folder's file names, in image order.
    grey : bool
        A folder's colour images are converted to grey (see :func:`fastmoments.data.load_image`).
    pixel_types : tuple of str or None
        A folder's pixel types as stored (``("uint16", "float32")``); its images are read
        into float64, which holds every one of them exactly.
    channels : int or None
        Colour channels kept per image (``channel_axis`` given), else ``None`` (grey images).
    channel_axis : int or None
        The stored array's channel axis (an ``.npy`` or Zarr input with channels).
    labels : tuple of str
        The one-value-per-image arrays of the Zarr group that holds the images (``font``,
        ``angle``, ...): they are copied to the output beside the features.
    """

    kind: str
    path: str
    n: int
    side: int
    dtype: str
    array: str | None = None
    size: int | None = None
    files: tuple[str, ...] | None = field(default=None, repr=False)
    grey: bool = False
    pixel_types: tuple[str, ...] | None = None
    labels: tuple[str, ...] = ()
    channels: int | None = None
    channel_axis: int | None = None

    def task(self, start: int, stop: int, chunk: int | None = None) -> dict[str, Any]:
        """The plain values a worker needs to read images ``start:stop`` (output chunk
        ``chunk``, named in error messages)."""
        spec: dict[str, Any] = {"kind": self.kind, "path": self.path, "array": self.array,
                                "size": self.size, "side": self.side, "start": int(start),
                                "stop": int(stop), "grey": self.grey, "chunk": chunk,
                                "channels": self.channels, "channel_axis": self.channel_axis}
        if self.files is not None:
            spec["files"] = list(self.files[start:stop])
        return spec

    def read(self, start: int, stop: int) -> np.ndarray:
        """Images ``start:stop`` as an ``(stop - start, N, N)`` array (``(stop - start, C, N,
        N)`` with channels)."""
        return read_task(self.task(start, stop))


def open_images(path: str | os.PathLike, *, array: str | None = None,
                size: int | None = None, grey: bool = False,
                channel_axis: int | None = None) -> ImageSource:
    """Open a collection of images: a Zarr store, a folder of image files or an ``.npy`` stack.

    Parameters
    ----------
    path : path-like
        A Zarr array or group (a directory with ``zarr.json`` or ``.zarray``/``.zgroup``), a
        folder of PNG/TIFF/JPEG files, or an ``.npy`` file holding ``(n, N, N)`` images (or one
        ``(N, N)`` image).
    array : str, optional
        The array inside a Zarr group (needed when the group holds several arrays).
    size : int, optional
        A folder's images resampled to ``size x size`` (then they may differ in size).
    grey : bool
        Convert a folder's colour images to grey (``0.299 R + 0.587 G + 0.114 B``, in float64);
        without it a colour image is refused, naming the file.
    channel_axis : int, optional
        Keep the colour channels: the features are computed per channel (columns
        ``"|A[2,0]| [channel 1]"``, channel by channel). For a folder ``-1`` (the files hold
        ``(H, W, C)``; every file must have as many channels); for an ``.npy`` or Zarr array of
        ``(n, C, N, N)`` or ``(n, N, N, C)`` images, the array's axis: ``1`` or ``-1``.

    Notes
    -----
    A folder's files are read at their own bit depth and type (:func:`fastmoments.data.
    load_image`: tifffile for TIFF, Pillow for PNG and JPEG), into float64, which holds every
    8-, 16- and 32-bit integer and every float32 exactly; NaN or infinite pixels are refused,
    naming the file. Zarr and ``.npy`` images are read at their stored dtype.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        An empty folder, images of different sizes (naming the first file that differs from the
        first image), non-square images, an array that is not ``(n, N, N)``, an unknown Zarr
        array name, ``size``, ``grey`` or ``array`` given for an input they do not apply to,
        a colour image in a folder without ``grey``, an empty or damaged ``.npy`` file.
    """
    if not isinstance(grey, bool):
        raise TypeError(f"--grey must be True or False, got {grey!r}")
    if channel_axis is not None:
        from ._validate import check_int

        channel_axis = check_int("--channel-axis", channel_axis, minimum=None)
        if grey:
            raise ValueError("--grey and --channel-axis cannot be given together: convert the "
                             "colour to grey, or keep the channels")
    if "://" in str(path):
        raise ValueError(f"INPUT {str(path)!r} is a URL: only local paths are read (Zarr stores "
                         "on fsspec URLs such as s3:// are not supported); copy or mount the "
                         "store")
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"INPUT {str(path)!r} does not exist")
    if size is not None:
        from ._validate import check_int

        size = check_int("--size", size, minimum=2)
    if p.is_file():
        if p.suffix.lower() != ".npy":
            raise ValueError(f"INPUT {str(path)!r} must be a Zarr store, a folder of images or "
                             f"an .npy file, got a {p.suffix or 'suffix-less'} file")
        _refuse(array=array, size=size, grey=grey, kind="an .npy stack")
        if p.stat().st_size == 0:
            raise ValueError(f"INPUT {str(path)!r} is an empty file (0 bytes), not an .npy "
                             "stack")
        try:
            arr = np.load(p, mmap_mode="r")
        except MemoryError:
            raise
        except Exception as exc:
            raise ValueError(f"INPUT {str(path)!r} is not a readable .npy file: "
                             f"{type(exc).__name__}: {exc}") from None
        n, side, channels, ax = _stack_layout(arr.shape, arr.dtype, str(path), channel_axis)
        return ImageSource("npy", str(p.resolve()), n, side, str(arr.dtype), channels=channels,
                           channel_axis=ax)
    if _is_zarr(p):
        _refuse(size=size, grey=grey, kind="a Zarr store")
        arr, name = _zarr_array(p, array)
        n, side, channels, ax = _stack_layout(arr.shape, np.dtype(arr.dtype), str(path),
                                              channel_axis)
        return ImageSource("zarr", str(p.resolve()), n, side, str(np.dtype(arr.dtype)),
                           array=name, labels=_zarr_labels(p, name, n), channels=channels,
                           channel_axis=ax)
    _refuse(array=array, kind="a folder of images")
    if channel_axis is not None and channel_axis not in (-1, 2):
        raise ValueError(f"--channel-axis must be -1 for a folder of images (the files hold "
                         f"(H, W, C)), got {channel_axis}")
    return _open_folder(p, size, grey, channel_axis is not None)


def _stack_layout(shape: tuple[int, ...], dtype: np.dtype, where: str,
                  channel_axis: int | None) -> tuple[int, int, int | None, int | None]:
    """``(n, N, channels, channel axis)`` of a stored ``(n, N, N)`` array, or ``(n, C, N, N)``
    / ``(n, N, N, C)`` with ``channel_axis``."""
    if channel_axis is None:
        return (*_check_stack_shape(shape, dtype, where), None, None)
    if len(shape) != 4:
        raise ValueError(f"--channel-axis {channel_axis}: INPUT {where!r} must hold images with "
                         f"channels as (n, C, N, N) or (n, N, N, C), got shape {tuple(shape)}")
    if not -4 <= channel_axis < 4 or channel_axis % 4 not in (1, 3):
        raise ValueError(f"--channel-axis must be 1 or -1 (the axis of C in (n, C, N, N) or "
                         f"(n, N, N, C)), got {channel_axis}")
    ax = channel_axis % 4
    n, side = _check_stack_shape(tuple(d for i, d in enumerate(shape) if i != ax), dtype, where)
    return n, side, int(shape[ax]), ax


def _zarr_labels(p: Path, name: str | None, n: int) -> tuple[str, ...]:
    """The 1-D arrays of length ``n`` beside the images in their Zarr group."""
    if name is None:
        return ()
    import zarr

    group = zarr.open_group(str(p), mode="r")
    return tuple(sorted(k for k in group.array_keys()
                        if k != name and group[k].shape == (n,)
                        and np.dtype(group[k].dtype).kind in "biufUS"))


def _refuse(*, kind: str, array: str | None = None, size: int | None = None,
            grey: bool = False) -> None:
    if grey:
        raise ValueError(f"--grey converts the colour images of a folder; INPUT is {kind}")
    if array is not None:
        raise ValueError(f"--array names an array inside a Zarr group; INPUT is {kind}")
    if size is not None:
        raise ValueError(f"--size resamples the images of a folder; INPUT is {kind}")


def _check_stack_shape(shape: tuple[int, ...], dtype: np.dtype, where: str) -> tuple[int, int]:
    if np.dtype(dtype).kind not in "biuf":
        raise ValueError(f"INPUT {where!r} must hold real numbers, got dtype {dtype}")
    if len(shape) == 2:
        shape = (1, *shape)
    if len(shape) != 3:
        hint = (" (multi-dimensional images such as an OME-Zarr array with axes t, c, z, y, x "
                "are not read: store the images as one (n, N, N) array)" if len(shape) > 3
                else "")
        raise ValueError(f"INPUT {where!r} must hold images as (n, N, N), got shape "
                         f"{shape}{hint}")
    if shape[1] != shape[2]:
        raise ValueError(f"INPUT {where!r} must hold square images (n, N, N), got shape {shape}; "
                         "crop or pad them first")
    if shape[0] == 0:
        raise ValueError(f"INPUT {where!r} holds no images (shape {shape})")
    return int(shape[0]), int(shape[1])


def _is_zarr(p: Path) -> bool:
    return p.is_dir() and any((p / f).is_file() for f in ("zarr.json", ".zarray", ".zgroup"))


def _zarr_array(p: Path, array: str | None) -> tuple[Any, str | None]:
    import zarr

    node = zarr.open(str(p), mode="r")
    if isinstance(node, zarr.Array):
        if array is not None:
            raise ValueError(f"--array {array!r} was given but INPUT {str(p)!r} is a single "
                             "Zarr array, not a group")
        return node, None
    names = sorted(node.array_keys())
    if array is None:
        if len(names) != 1:
            raise ValueError(f"INPUT {str(p)!r} is a Zarr group with {len(names)} arrays "
                             f"{names[:8]}; choose one with --array NAME")
        array = names[0]
    try:
        arr = node[array]
    except KeyError:
        arr = None
    if not isinstance(arr, zarr.Array):
        raise ValueError(f"--array {array!r} is not an array of the Zarr group {str(p)!r} "
                         f"(its arrays: {names[:8]})")
    return arr, array


def _open_folder(p: Path, size: int | None, grey: bool, keep: bool) -> ImageSource:
    from .data import image_header

    files = sorted(f.name for f in p.iterdir()
                   if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise ValueError(f"INPUT folder {str(p)!r} holds no image files "
                         f"({', '.join(IMAGE_SUFFIXES)})")
    first = None
    types: set[str] = set()
    for name in files:
        try:
            h, w, channels, dtype = image_header(p / name)
        except (ValueError, OSError) as exc:
            raise ValueError(f"INPUT file {name!r} in {str(p)!r} is not a readable image: "
                             f"{exc}") from None
        if w != h:
            raise ValueError(f"INPUT file {name!r} is {w}x{h}, not square; every image must be "
                             "N x N (crop or pad them first)")
        if keep:
            if first is not None and channels != first[2]:
                raise ValueError(f"INPUT file {name!r} has {channels} channels but "
                                 f"{first[0]!r} (the first image) has {first[2]}; with "
                                 "--channel-axis every image must have as many")
        elif channels > 1 and not grey:
            raise ValueError(f"INPUT file {name!r} in {str(p)!r} is a colour image ({channels} "
                             "channels); pass --grey (grey=True) to convert the colour images "
                             "to grey (0.299 R + 0.587 G + 0.114 B)")
        types.add(dtype.name)
        if first is None:
            first = (name, w, channels)
        elif w != first[1] and size is None:
            raise ValueError(f"INPUT file {name!r} is {w}x{h} but {first[0]!r} (the first "
                             f"image) is {first[1]}x{first[1]}; all images must have one size, "
                             "or pass --size N to resample them")
    assert first is not None
    side = size if size is not None else first[1]
    return ImageSource("folder", str(p.resolve()), len(files), side, "float64", size=size,
                       files=tuple(files), grey=grey, pixel_types=tuple(sorted(types)),
                       channels=first[2] if keep else None, channel_axis=-1 if keep else None)


@lru_cache(maxsize=8)
def _zarr_cached(path: str, array: str | None) -> Any:
    import zarr

    node = zarr.open(path, mode="r")
    return node if array is None else node[array]


@lru_cache(maxsize=8)
def _npy_cached(path: str) -> np.ndarray:
    return np.load(path, mmap_mode="r")


def _where(spec: dict[str, Any]) -> str:
    chunk = spec.get("chunk")
    what = f"INPUT {spec['path']!r}" + (f" (array {spec['array']!r})" if spec.get("array") else "")
    rows = f"images {spec['start']}:{spec['stop']}"
    return f"{what}, {rows}" + (f" (output chunk {chunk})" if chunk is not None else "")


def _read_zarr(spec: dict[str, Any]) -> np.ndarray:
    """Images ``start:stop`` of a Zarr array; a chunk that cannot be read or decoded is named
    (its key in the store) instead of the codec's bare error."""
    arr = _zarr_cached(spec["path"], spec["array"])
    start, stop = spec["start"], spec["stop"]
    try:
        if arr.ndim == 2:  # one image
            return np.asarray(arr[:])[None][start:stop]
        return np.asarray(arr[start:stop])
    except MemoryError:
        raise
    except Exception as exc:
        raise ValueError(f"{_where(spec)}: {_bad_chunk(arr, start, stop, exc)}") from exc


def _bad_chunk(arr: Any, start: int, stop: int, exc: BaseException) -> str:
    """Which stored chunk of ``arr`` fails, read one at a time, and why."""
    reason = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    if arr.ndim != 3:
        return f"cannot read the Zarr array ({reason})"
    c0 = int(arr.chunks[0])
    for j in range(start // c0, (stop - 1) // c0 + 1):
        try:
            arr[j * c0:min(arr.shape[0], (j + 1) * c0)]
        except Exception as one:
            sep = "/" if getattr(arr.metadata, "zarr_format", 3) == 3 else "."
            key = sep.join(["c", str(j), "0", "0"] if sep == "/" else [str(j), "0", "0"])
            return (f"Zarr chunk {key!r} (images {j * c0}:{min(arr.shape[0], (j + 1) * c0)}) "
                    f"is damaged or truncated ({type(one).__name__}: "
                    f"{' '.join(str(one).split())}); rewrite it or remove the store")
    return f"cannot read the Zarr array ({reason})"


def _check_finite(images: np.ndarray, spec: dict[str, Any]) -> None:
    if images.dtype.kind == "f" and not np.isfinite(images).all():
        j = int(np.flatnonzero(~np.isfinite(images.reshape(len(images), -1)).all(axis=1))[0])
        raise ValueError(f"{_where(spec)}: image {spec['start'] + j} holds NaN or infinite "
                         "values")


def read_task(spec: dict[str, Any]) -> np.ndarray:
    """Read the images a task names (see :meth:`ImageSource.task`); opened arrays are cached
    per process.

    Raises
    ------
    ValueError
        Naming the input, the images and the output chunk: for a damaged Zarr chunk (with its
        key), NaN or infinite values (with the image's index), a folder's file that changed.
    """
    if spec["kind"] == "preloaded":  # in-process runs read ahead in a thread
        return spec["images"]
    start, stop, side = spec["start"], spec["stop"], spec["side"]
    if spec["kind"] == "npy":
        arr = _npy_cached(spec["path"])
        if arr.ndim == 2:
            arr = arr[None]
        try:
            out = _channels_second(np.array(arr[start:stop]), spec)
        except MemoryError:
            raise
        except Exception as exc:
            raise ValueError(f"{_where(spec)}: cannot read the .npy file "
                             f"({type(exc).__name__}: {exc})") from exc
    elif spec["kind"] == "zarr":
        out = _channels_second(_read_zarr(spec), spec)
    else:
        out = _read_folder(spec, start, stop, side)
    _check_finite(out, spec)
    return out


def _channels_second(images: np.ndarray, spec: dict[str, Any]) -> np.ndarray:
    """A stored array's channel axis moved next to the image axis: ``(n, C, N, N)``."""
    ax = spec.get("channel_axis")
    if spec.get("channels") is None or ax is None or ax == 1:
        return images
    return np.ascontiguousarray(np.moveaxis(images, ax, 1))


def _read_folder(spec: dict[str, Any], start: int, stop: int, side: int) -> np.ndarray:
    from .data import load_image

    channels = spec.get("channels")
    lead = (stop - start,) if channels is None else (stop - start, channels)
    out = np.empty((*lead, side, side), dtype=np.float64)
    for i, name in enumerate(spec["files"]):
        path = os.path.join(spec["path"], name)
        try:
            img = load_image(path, size=spec["size"], grey=bool(spec.get("grey")),
                             channel_axis=None if channels is None else 0)
        except (ValueError, OSError) as exc:
            raise ValueError(f"INPUT file {name!r} in {spec['path']!r} (image {start + i}): "
                             f"{str(exc).removeprefix(f'path {path!r} ')}") from exc
        if img.shape != out.shape[1:]:
            raise ValueError(f"INPUT file {name!r} is {img.shape[-1]}x{img.shape[-2]}"
                             f"{'' if channels is None else f' with {img.shape[0]} channels'}, "
                             f"expected {side}x{side} (did the folder change during the run?)")
        out[i] = img
    return out
