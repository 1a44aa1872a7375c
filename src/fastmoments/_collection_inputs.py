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
    """

    kind: str
    path: str
    n: int
    side: int
    dtype: str
    array: str | None = None
    size: int | None = None
    files: tuple[str, ...] | None = field(default=None, repr=False)

    def task(self, start: int, stop: int) -> dict[str, Any]:
        """The plain values a worker needs to read images ``start:stop``."""
        spec: dict[str, Any] = {"kind": self.kind, "path": self.path, "array": self.array,
                                "size": self.size, "side": self.side, "start": int(start),
                                "stop": int(stop)}
        if self.files is not None:
            spec["files"] = list(self.files[start:stop])
        return spec

    def read(self, start: int, stop: int) -> np.ndarray:
        """Images ``start:stop`` as an ``(stop - start, N, N)`` array."""
        return read_task(self.task(start, stop))


def open_images(path: str | os.PathLike, *, array: str | None = None,
                size: int | None = None) -> ImageSource:
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

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        An empty folder, images of different sizes (naming the first file that differs from the
        first image), non-square images, an array that is not ``(n, N, N)``, an unknown Zarr
        array name, ``size`` or ``array`` given for an input they do not apply to.
    """
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
        _refuse(array=array, size=size, kind="an .npy stack")
        try:
            arr = np.load(p, mmap_mode="r")
        except (ValueError, OSError) as exc:
            raise ValueError(f"INPUT {str(path)!r} is not a readable .npy file: {exc}") from None
        n, side = _check_stack_shape(arr.shape, arr.dtype, str(path))
        return ImageSource("npy", str(p.resolve()), n, side, str(arr.dtype))
    if _is_zarr(p):
        _refuse(size=size, kind="a Zarr store")
        arr, name = _zarr_array(p, array)
        n, side = _check_stack_shape(arr.shape, np.dtype(arr.dtype), str(path))
        return ImageSource("zarr", str(p.resolve()), n, side, str(np.dtype(arr.dtype)),
                           array=name)
    _refuse(array=array, kind="a folder of images")
    return _open_folder(p, size)


def _refuse(*, kind: str, array: str | None = None, size: int | None = None) -> None:
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
        raise ValueError(f"INPUT {where!r} must hold images as (n, N, N), got shape {shape}")
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


def _open_folder(p: Path, size: int | None) -> ImageSource:
    from PIL import Image

    files = sorted(f.name for f in p.iterdir()
                   if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise ValueError(f"INPUT folder {str(p)!r} holds no image files "
                         f"({', '.join(IMAGE_SUFFIXES)})")
    first = None
    for name in files:
        try:
            with Image.open(p / name) as im:
                w, h = im.size
        except OSError as exc:
            raise ValueError(f"INPUT file {name!r} in {str(p)!r} is not a readable image: "
                             f"{exc}") from None
        if w != h:
            raise ValueError(f"INPUT file {name!r} is {w}x{h}, not square; every image must be "
                             "N x N (crop or pad them first)")
        if first is None:
            first = (name, w)
        elif w != first[1] and size is None:
            raise ValueError(f"INPUT file {name!r} is {w}x{h} but {first[0]!r} (the first "
                             f"image) is {first[1]}x{first[1]}; all images must have one size, "
                             "or pass --size N to resample them")
    assert first is not None
    side = size if size is not None else first[1]
    return ImageSource("folder", str(p.resolve()), len(files), side, "float64", size=size,
                       files=tuple(files))


@lru_cache(maxsize=8)
def _zarr_cached(path: str, array: str | None) -> Any:
    import zarr

    node = zarr.open(path, mode="r")
    return node if array is None else node[array]


@lru_cache(maxsize=8)
def _npy_cached(path: str) -> np.ndarray:
    return np.load(path, mmap_mode="r")


def read_task(spec: dict[str, Any]) -> np.ndarray:
    """Read the images a task names (see :meth:`ImageSource.task`); opened arrays are cached
    per process."""
    if spec["kind"] == "preloaded":  # in-process runs read ahead in a thread
        return spec["images"]
    start, stop, side = spec["start"], spec["stop"], spec["side"]
    if spec["kind"] == "npy":
        arr = _npy_cached(spec["path"])
        if arr.ndim == 2:
            arr = arr[None]
        return np.array(arr[start:stop])
    if spec["kind"] == "zarr":
        arr = _zarr_cached(spec["path"], spec["array"])
        if arr.ndim == 2:  # one image
            return np.asarray(arr[:])[None][start:stop]
        return np.asarray(arr[start:stop])
    from .data import load_image

    out = np.empty((stop - start, side, side), dtype=np.float64)
    for i, name in enumerate(spec["files"]):
        img = load_image(os.path.join(spec["path"], name), size=spec["size"])
        if img.shape != (side, side):
            raise ValueError(f"INPUT file {name!r} is {img.shape[1]}x{img.shape[0]}, expected "
                             f"{side}x{side} (did the folder change during the run?)")
        out[i] = img
    return out


