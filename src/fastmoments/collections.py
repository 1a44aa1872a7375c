r"""Moment features of large image collections, chunk by chunk, resumable.

This is the engine behind ``fastmoments features INPUT --out OUTPUT``:

* **Inputs** (:func:`open_images`): a Zarr array (or an array inside a Zarr group), a folder of
  image files (PNG, TIFF, JPEG; read with :func:`fastmoments.data.load_image`, in sorted
  file-name order) or an ``.npy`` stack (memory-mapped). Every input is read one chunk of images
  at a time, so a collection larger than memory runs in bounded memory.
* **Outputs** (:func:`open_output`): a Zarr group (``OUTPUT.zarr`` or any other directory name)
  holding the ``(n_images, n_features)`` array ``features`` with the column names in its
  attributes, or a Parquet dataset (``OUTPUT.parquet``, a folder of one Parquet file per chunk)
  with one row per image, the columns ``index`` (and ``file`` for a folder input) and one named
  column per feature.
* **Resuming** (:func:`run_features`): the images are cut into chunks of ``batch`` images.
  A chunk counts as done only once its rows are on disk: in Zarr, the rows are written, flushed
  to disk (``fsync``), and only then is the chunk's byte in the marker array ``done`` set (Zarr's
  local store writes every chunk file through a temporary file and an atomic rename); in
  Parquet, the chunk's file is written under a temporary name, flushed and renamed into place.
  A run that stops for any reason (Ctrl-C, a killed process or worker, a dead machine) and is
  started again with the same parameters computes only the chunks that are not done; a chunk
  rewritten after a crash between its data and its marker gets the same bytes again, so no row
  is ever missing or duplicated. A run against an output made with other parameters refuses,
  naming the option, unless asked to overwrite it.
* **Scale-out**: without a scheduler the chunks run in this process (the next chunk is read from
  disk while the current one computes). With a :class:`distributed.Client` each chunk is one
  task, ``client.submit(compute_chunk, ...)``, carrying only plain values (where to read, which
  rows, the options); each worker builds its plan once through the library's cached plan
  functions, and the client writes the rows as tasks finish. If a worker dies, Dask reruns its
  tasks elsewhere; the writer is idempotent, so the result is the same.

Examples
--------
>>> import numpy as np, tempfile, os
>>> from fastmoments.collections import open_images, run_features, read_features
>>> d = tempfile.mkdtemp()
>>> np.save(os.path.join(d, "stack.npy"), np.zeros((10, 16, 16), dtype=np.uint8))
>>> src = open_images(os.path.join(d, "stack.npy"))
>>> rep = run_features(src, os.path.join(d, "f.zarr"), family="zernike", orders=2,
...                    kind="magnitude", batch=4, progress=False)
>>> rep.computed, rep.n_chunks
(3, 3)
>>> table, names = read_features(os.path.join(d, "f.zarr"))
>>> table.shape, names[:2]
((10, 4), ['|A[0,0]|', '|A[1,1]|'])
>>> run_features(src, os.path.join(d, "f.zarr"), family="zernike", orders=2,
...              kind="magnitude", batch=4, progress=False).computed
0
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["IMAGE_SUFFIXES", "FeatureOutput", "ImageSource", "RunReport", "compute_chunk",
           "open_images", "open_output", "parse_orders", "read_features", "run_features"]

#: File-name endings read from an image folder (case-insensitive).
IMAGE_SUFFIXES = (".png", ".tif", ".tiff", ".jpg", ".jpeg")

#: The attribute (Zarr) or manifest key holding the run's parameters.
_META = "fastmoments"
_MANIFEST = "_fastmoments.json"
_FORMAT = 1


# --------------------------------------------------------------------------- options

def parse_orders(text: str) -> int | list[int]:
    """``--orders`` text as :func:`fastmoments.features` takes it.

    ``"20"`` is every order ``0..20`` (the int 20); ``"0-20"`` the same as a list; ``"2,4,6"``
    those orders; parts combine (``"0-4,8"``).

    Raises
    ------
    ValueError
        Naming ``--orders``, for anything else (negative orders, a range that runs backwards,
        words).

    Examples
    --------
    >>> parse_orders("6"), parse_orders("2,4,6"), parse_orders("0-3,8")
    (6, [2, 4, 6], [0, 1, 2, 3, 8])
    """
    if not isinstance(text, str):
        raise TypeError(f"--orders must be text such as '0-20', '20' or '2,4,6', got {text!r}")
    parts = [p.strip() for p in text.split(",")]
    if len(parts) == 1 and re.fullmatch(r"\d+", parts[0]):
        return int(parts[0])
    out: list[int] = []
    for p in parts:
        m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", p)
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            if hi < lo:
                raise ValueError(f"--orders range {p!r} runs backwards (expected LOW-HIGH)")
            out.extend(range(lo, hi + 1))
        elif re.fullmatch(r"\d+", p):
            out.append(int(p))
        else:
            raise ValueError(f"--orders must be 'T' (orders 0..T), 'LOW-HIGH' or a comma-separated "
                             f"list of non-negative integers such as '2,4,6', got {text!r}")
    return sorted(set(out))


def _order_list(orders: int | Sequence[int]) -> list[int]:
    if isinstance(orders, (int, np.integer)) and not isinstance(orders, bool):
        return list(range(int(orders) + 1))
    return sorted({int(n) for n in orders})


# --------------------------------------------------------------------------- inputs

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


# --------------------------------------------------------------------------- compute

def compute_chunk(spec: dict[str, Any], options: dict[str, Any]) -> np.ndarray:
    """The feature rows of one chunk: read its images, then :func:`fastmoments.features`.

    ``spec`` and ``options`` are plain values (a task carries nothing else); the plan comes from
    the library's per-process cache, so each worker builds it once.
    """
    from .recognition import features

    images = read_task(spec)
    fs = features(images, family=options["family"], orders=options["orders"],
                  kind=options["kind"], k=options["k"], dtype=options["dtype"],
                  device=options["device"], progress=False)
    return np.asarray(fs.matrix)


def _columns(family: str, orders: int | list[int], kind: str) -> list[str]:
    from .moments import column_names as _column_names
    from .moments import label as _label
    from .recognition.extract import moment_pairs

    return [_label(*c) for c in _column_names(moment_pairs(family, orders), kind)]


# --------------------------------------------------------------------------- outputs

_OPTION_NAMES = {"input": "INPUT", "array": "--array", "size": "--size", "n_images":
                 "INPUT (number of images)", "side": "INPUT (image size)", "family": "--family",
                 "orders": "--orders", "kind": "--kind", "k": "--k", "dtype": "--dtype",
                 "batch": "--batch", "format": "the output format"}


class FeatureOutput:
    """A resumable feature output: a Zarr group or a Parquet dataset (see :func:`open_output`).

    ``done()`` lists the chunks on disk; ``write(i, rows)`` stores chunk ``i`` durably and then
    marks it done. Writing a chunk twice stores the same rows in the same place.
    """

    path: Path
    params: dict[str, Any]
    n_chunks: int

    def done(self) -> set[int]:
        raise NotImplementedError

    def write(self, i: int, rows: np.ndarray) -> None:
        raise NotImplementedError

    def _rows(self, i: int) -> tuple[int, int]:
        b, n = self.params["batch"], self.params["n_images"]
        return i * b, min(n, (i + 1) * b)


def _fsync(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class _ZarrOutput(FeatureOutput):
    def __init__(self, path: Path, params: dict[str, Any]) -> None:
        import zarr

        self.path = path
        self.params = params
        self.n_chunks = math.ceil(params["n_images"] / params["batch"])
        group = zarr.open_group(str(path), mode="r+")
        self._features = group["features"]
        self._done = group["done"]

    @staticmethod
    def create(path: Path, params: dict[str, Any], columns: list[str],
               files: Sequence[str] | None) -> None:
        import zarr

        n, b = params["n_images"], params["batch"]
        group = zarr.open_group(str(path), mode="w")
        feats = group.create_array("features", shape=(n, len(columns)), chunks=(b, len(columns)),
                                   dtype=params["dtype"], fill_value=np.nan)
        feats.attrs["columns"] = list(columns)
        feats.attrs.update({k: params[k] for k in ("family", "orders", "kind", "k", "input")})
        if files is not None:
            feats.attrs["files"] = list(files)
        group.create_array("done", shape=(math.ceil(n / b),), chunks=(1,), dtype="uint8",
                           fill_value=0, compressors=None)
        group.attrs[_META] = params

    def done(self) -> set[int]:
        return {int(i) for i in np.flatnonzero(self._done[:])}

    def write(self, i: int, rows: np.ndarray) -> None:
        s, e = self._rows(i)
        self._features[s:e] = rows
        # chunk files of the Zarr v3 default key encoding: features/c/<i>/0, done/c/<i>
        _fsync(self.path / "features" / "c" / str(i) / "0")
        _fsync(self.path / "features" / "c" / str(i))
        self._done[i] = 1
        _fsync(self.path / "done" / "c" / str(i))
        _fsync(self.path / "done" / "c")


class _ParquetOutput(FeatureOutput):
    def __init__(self, path: Path, params: dict[str, Any], columns: list[str],
                 files: Sequence[str] | None) -> None:
        self.path = path
        self.params = params
        self.columns = columns
        self.files = files
        self.n_chunks = math.ceil(params["n_images"] / params["batch"])

    @staticmethod
    def create(path: Path, params: dict[str, Any], columns: list[str],
               files: Sequence[str] | None) -> None:
        path.mkdir(parents=True)
        manifest = {_META: params, "columns": columns}
        if files is not None:
            manifest["files"] = list(files)
        (path / _MANIFEST).write_text(json.dumps(manifest))

    def _part(self, i: int) -> Path:
        return self.path / f"part-{i:08d}.parquet"

    def done(self) -> set[int]:
        out = set()
        for f in self.path.iterdir():
            m = re.fullmatch(r"part-(\d{8})\.parquet", f.name)
            if m:
                out.add(int(m.group(1)))
        return out

    def write(self, i: int, rows: np.ndarray) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        s, e = self._rows(i)
        cols: dict[str, Any] = {"index": pa.array(np.arange(s, e, dtype=np.int64))}
        if self.files is not None:
            cols["file"] = pa.array(list(self.files[s:e]), type=pa.string())
        for j, name in enumerate(self.columns):
            cols[name] = pa.array(np.ascontiguousarray(rows[:, j]))
        tmp = self.path / f".part-{i:08d}.{uuid.uuid4().hex}.tmp"
        try:
            with open(tmp, "wb") as fh:
                pq.write_table(pa.table(cols), fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self._part(i))
        finally:
            tmp.unlink(missing_ok=True)
        _fsync(self.path)


def _output_format(out: Path) -> str:
    return "parquet" if out.suffix.lower() == ".parquet" else "zarr"


def _existing_params(out: Path, fmt: str) -> dict[str, Any] | None:
    """The parameters of an existing fastmoments output at ``out`` (None if it is not one)."""
    try:
        if fmt == "parquet":
            return json.loads((out / _MANIFEST).read_text())[_META]
        import zarr

        return dict(zarr.open_group(str(out), mode="r").attrs[_META])
    except Exception:  # anything unreadable is "not ours"
        return None


def open_output(out: str | os.PathLike, params: dict[str, Any], columns: list[str],
                files: Sequence[str] | None = None, *, overwrite: bool = False) -> FeatureOutput:
    """Create the output, or reopen it to resume when it was made with the same parameters.

    The format follows the name: ``*.parquet`` is a Parquet dataset (a folder), anything else a
    Zarr group. A new output is built under a temporary name and renamed into place, so a crash
    while creating it leaves nothing half made.

    Raises
    ------
    ValueError
        If ``out`` exists with other parameters (naming the first option that differs) and
        ``overwrite`` is false, or exists and is not a fastmoments output.
    """
    out = Path(out)
    fmt = _output_format(out)
    params = {**params, "format": fmt, "version": _FORMAT}
    if out.exists():
        old = _existing_params(out, fmt)
        if old is None:
            what = "folder" if out.is_dir() else "file"
            if out.is_dir() and not any(out.iterdir()):
                out.rmdir()
            else:
                raise ValueError(f"--out {str(out)!r} exists and is a {what} that is not a "
                                 f"fastmoments {fmt} output; remove it or choose another name")
        elif old != json.loads(json.dumps(params)):
            if not overwrite:
                key = next(k for k in (*_OPTION_NAMES, "version")
                           if old.get(k) != json.loads(json.dumps(params.get(k))))
                raise ValueError(
                    f"--out {str(out)!r} holds features made with other parameters: "
                    f"{_OPTION_NAMES.get(key, key)} was {old.get(key)!r}, now "
                    f"{params.get(key)!r}; rerun with the same options to resume, or pass "
                    "--overwrite to replace it")
            shutil.rmtree(out)
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex}.tmp")
        try:
            cls = _ParquetOutput if fmt == "parquet" else _ZarrOutput
            cls.create(tmp, params, columns, files)
            os.replace(tmp, out)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)
    if fmt == "parquet":
        return _ParquetOutput(out, params, columns, files)
    return _ZarrOutput(out, params)


def read_features(out: str | os.PathLike) -> tuple[np.ndarray, list[str]]:
    """The ``(n_images, n_features)`` matrix and column names of a finished output.

    Raises
    ------
    ValueError
        If ``out`` is not a fastmoments output, or some chunks are not done yet.
    """
    out = Path(out)
    fmt = _output_format(out)
    params = _existing_params(out, fmt)
    if params is None:
        raise ValueError(f"{str(out)!r} is not a fastmoments features output")
    n_chunks = math.ceil(params["n_images"] / params["batch"])
    if fmt == "parquet":
        import pyarrow.parquet as pq

        cols = json.loads((out / _MANIFEST).read_text())["columns"]
        parts = sorted(out.glob("part-*.parquet"))
        if len(parts) != n_chunks:
            raise ValueError(f"{str(out)!r} is incomplete: {len(parts)} of {n_chunks} chunks")
        table = pq.read_table([str(p) for p in parts], columns=cols) if parts else None
        mat = np.column_stack([table.column(c).to_numpy() for c in cols])
        return mat, cols
    import zarr

    group = zarr.open_group(str(out), mode="r")
    done = int(np.count_nonzero(group["done"][:]))
    if done != n_chunks:
        raise ValueError(f"{str(out)!r} is incomplete: {done} of {n_chunks} chunks")
    return np.asarray(group["features"][:]), list(group["features"].attrs["columns"])


# --------------------------------------------------------------------------- running

@dataclass
class RunReport:
    """What :func:`run_features` did."""

    out: str
    n_images: int
    n_chunks: int
    already_done: int
    computed: int
    columns: list[str]


ChunkFunction = Callable[[dict[str, Any], dict[str, Any]], np.ndarray]


def run_features(source: ImageSource, out: str | os.PathLike, *, family: str = "zernike",
                 orders: int | Sequence[int] = 10, kind: str = "magnitude", k: int = 1,
                 dtype: str | None = None, device: Any = None, batch: int | None = None,
                 client: Any = None, overwrite: bool = False, progress: bool | None = None,
                 on_chunk: Callable[[int, int, int], None] | None = None,
                 chunk_function: ChunkFunction | None = None) -> RunReport:
    """Compute the features of every image of ``source`` into ``out``, resuming a stopped run.

    Parameters
    ----------
    source : ImageSource
        From :func:`open_images`.
    out : path-like
        ``*.parquet``: a Parquet dataset; otherwise a Zarr group (module notes).
    family, orders, kind, k
        As in :func:`fastmoments.features`.
    dtype : {"float32", "float64"}, optional
        Working precision; default float64 for float64 images (and image folders), else float32.
    device : str or list, optional
        Passed to :func:`fastmoments.features` (``"cpu"``, ``"cuda:1"``, a list of devices,
        ``"cuda:all"``); with a ``client``, the device each worker uses.
    batch : int, optional
        Images per chunk (default: the Zarr input's chunk length rounded up to at least 256
        images, else 1024).
    client : distributed.Client, optional
        Run one task per chunk on its workers; ``None`` runs in this process.
    overwrite : bool
        Replace an output made with other parameters instead of refusing.
    progress : bool, optional
        A progress bar over chunks (``None``: shown for long runs).
    on_chunk : callable, optional
        Called as ``on_chunk(i, done, total)`` after chunk ``i`` is on disk.
    chunk_function : callable, optional
        Replaces :func:`compute_chunk` (same signature; must be picklable for a client), for
        instrumentation and tests.

    Returns
    -------
    RunReport
        ``computed`` is 0 when the output was already complete.

    Raises
    ------
    ValueError
        Bad options (naming them) or an output made with other parameters.
    """
    from ._progress import progress_bar
    from ._validate import check_choice, check_int
    from .disk.families import get_family
    from .moments import KINDS

    family = get_family(family).name if isinstance(family, str) else family
    if not isinstance(family, str):
        raise TypeError(f"--family must be a name, got {family!r}")
    kind = check_choice("--kind", kind, KINDS)
    k = check_int("--k", k, minimum=1)
    if isinstance(orders, (int, np.integer)) and not isinstance(orders, bool):
        orders = check_int("--orders", orders, minimum=0)
    else:
        orders = [check_int("--orders", n, minimum=0) for n in orders]
    if dtype is None:
        dtype = "float64" if np.dtype(source.dtype) == np.float64 else "float32"
    dtype = check_choice("--dtype", dtype, ("float32", "float64"))
    if batch is None:
        batch = _default_batch(source)
    batch = check_int("--batch", batch, minimum=1)
    columns = _columns(family, orders, kind)
    params = {"input": source.path, "array": source.array, "size": source.size,
              "n_images": source.n, "side": source.side, "family": family,
              "orders": _order_list(orders), "kind": kind, "k": k, "dtype": dtype,
              "batch": batch}
    writer = open_output(out, params, columns, source.files, overwrite=overwrite)
    done = writer.done()
    todo = [i for i in range(writer.n_chunks) if i not in done]
    report = RunReport(str(out), source.n, writer.n_chunks, len(done), 0, columns)
    if not todo:
        return report
    options = {"family": family, "orders": orders, "kind": kind, "k": k, "dtype": dtype,
               "device": device}
    fn = chunk_function or compute_chunk
    bar = progress_bar(writer.n_chunks, desc=f"{family} features", show=progress, unit="chunk",
                       large=len(todo) > 8)
    if done:
        bar.update(len(done))
    width = len(columns)
    n_done = len(done)

    def finish(i: int, rows: np.ndarray) -> None:
        nonlocal n_done
        s, e = writer._rows(i)
        rows = np.asarray(rows)
        if rows.shape != (e - s, width):
            raise ValueError(f"chunk {i} gave features of shape {rows.shape}, expected "
                             f"{(e - s, width)}")
        writer.write(i, rows.astype(dtype, copy=False))
        n_done += 1
        report.computed += 1
        bar.update(1)
        if on_chunk is not None:
            on_chunk(i, n_done, writer.n_chunks)

    try:
        if client is None:
            _run_local(source, writer, todo, options, fn, finish)
        else:
            _run_client(client, source, writer, todo, options, fn, finish)
    finally:
        bar.close()
    return report


def _default_batch(source: ImageSource) -> int:
    if source.kind == "zarr":
        chunk = int(_zarr_cached(source.path, source.array).chunks[0])
        return chunk * max(1, math.ceil(256 / chunk))
    return 1024


def _run_local(source: ImageSource, writer: FeatureOutput, todo: list[int],
               options: dict[str, Any], fn: ChunkFunction,
               finish: Callable[[int, np.ndarray], None]) -> None:
    """In this process: chunk ``i + 1`` is read from disk while chunk ``i`` computes."""

    def load(i: int) -> dict[str, Any]:
        s, e = writer._rows(i)
        spec = source.task(s, e)
        return {**spec, "kind": "preloaded", "images": read_task(spec)}

    with ThreadPoolExecutor(max_workers=1) as pool:
        nxt = pool.submit(load, todo[0])
        for j, i in enumerate(todo):
            spec = nxt.result()
            if j + 1 < len(todo):
                nxt = pool.submit(load, todo[j + 1])
            finish(i, fn(spec, options))


def _run_client(client: Any, source: ImageSource, writer: FeatureOutput, todo: list[int],
                options: dict[str, Any], fn: ChunkFunction,
                finish: Callable[[int, np.ndarray], None]) -> None:
    """One task per chunk on a Dask cluster; the client writes each result as it comes."""
    from distributed import as_completed

    token = uuid.uuid4().hex[:8]
    futures = {}
    for i in todo:
        s, e = writer._rows(i)
        fut = client.submit(fn, source.task(s, e), options, key=f"fastmoments-chunk-{token}-{i}",
                            pure=False)
        futures[fut] = i
    try:
        for fut in as_completed(list(futures)):
            rows = fut.result()
            finish(futures[fut], rows)
            fut.release()
    finally:
        client.cancel([f for f in futures if not f.done()])
