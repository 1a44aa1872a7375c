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
  naming the option, unless asked to overwrite it. Each chunk's rows are stored with a checksum
  of the images they came from; a resumed run reads the done chunks' images again and refuses
  an input that changed, naming the chunk. Every output records the library version (and git
  commit) that wrote it, and a run of another version refuses to resume it unless told to.
* **Scale-out**: without a scheduler the chunks run in this process (the next chunk is read from
  disk while the current one computes). With a :class:`distributed.Client` each chunk is one
  task, ``client.submit(run_chunk, compute_chunk, ...)``, carrying only plain values (where to
  read, which rows, the options); each worker builds its plan once through the library's cached
  plan functions, and the client writes the rows as tasks finish. The workers are asked for
  their fastmoments version and modules before anything is submitted (:func:`check_workers`).
  If a worker dies, Dask reruns its tasks elsewhere; the writer is idempotent, so the result is
  the same.

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

import hashlib
import math
import os
import re
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["IMAGE_SUFFIXES", "FeatureOutput", "ImageSource", "RunReport", "check_workers",
           "compute_chunk", "input_checksum", "library_identity", "open_images", "open_output",
           "parse_orders", "read_features", "run_chunk", "run_features"]

from ._collection_cluster import check_workers
from ._collection_inputs import IMAGE_SUFFIXES, ImageSource, _zarr_cached, open_images, read_task
from ._collection_outputs import FeatureOutput, library_identity, open_output, read_features
from ._defaults import FAMILY, KIND, ORDERS

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


# --------------------------------------------------------------------------- compute

def compute_chunk(spec: dict[str, Any], options: dict[str, Any]) -> np.ndarray:
    """The feature rows of one chunk: read its images, then :func:`fastmoments.features`.

    ``spec`` and ``options`` are plain values (a task carries nothing else); the plan comes from
    the library's per-process cache, so each worker builds it once. Images with channels
    (``(n, C, N, N)``) give one row per image of ``C`` times the features, channel by channel.
    """
    from .recognition import features

    images = read_task(spec)
    channels = spec.get("channels")
    fs = features(images, family=options["family"], orders=options["orders"],
                  kind=options["kind"], k=options["k"], dtype=options["dtype"],
                  device=options["device"], progress=False,
                  **({} if channels is None else {"channel_axis": 1}))
    rows = np.asarray(fs.matrix)
    return rows if channels is None else rows.reshape(len(images), -1)


def _columns(family: str, orders: int | list[int], kind: str) -> list[str]:
    from .moments import column_names as _column_names
    from .moments import label as _label
    from .recognition.extract import moment_pairs

    return [_label(*c) for c in _column_names(moment_pairs(family, orders), kind)]


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


def run_features(source: ImageSource, out: str | os.PathLike, *, family: str = FAMILY,
                 orders: int | Sequence[int] = ORDERS, kind: str = KIND, k: int = 1,
                 dtype: str | None = None, device: Any = None, batch: int | None = None,
                 client: Any = None, overwrite: bool = False, progress: bool | None = None,
                 on_chunk: Callable[[int, int, int], None] | None = None,
                 chunk_function: ChunkFunction | None = None,
                 other_version: bool = False, worker_timeout: float = 60.0) -> RunReport:
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
        Run one task per chunk on its workers; ``None`` runs in this process. Before anything
        is submitted, every worker is asked for its fastmoments version and for the modules
        the tasks need (:func:`check_workers`).
    overwrite : bool
        Replace an output made with other parameters (or another library version) instead of
        refusing.
    progress : bool, optional
        A progress bar over chunks (``None``: shown for long runs).
    on_chunk : callable, optional
        Called as ``on_chunk(i, done, total)`` after chunk ``i`` is on disk, from a writing
        thread (with a ``client``, from one of several: one call at a time).
    chunk_function : callable, optional
        Replaces :func:`compute_chunk` (same signature; must be picklable for a client), for
        instrumentation and tests. It is given the chunk's images already read (``spec["kind"]
        == "preloaded"``, ``spec["images"]``).
    other_version : bool
        Resume an output that another version (or git commit) of fastmoments began (refused
        by default: its chunks would hold the values of two versions).
    worker_timeout : float
        With a ``client`` whose cluster has no worker yet: seconds to wait for one.

    Returns
    -------
    RunReport
        ``computed`` is 0 when the output was already complete.

    Raises
    ------
    ValueError
        Bad options (naming them); an output made with other parameters or another library
        version; an input that changed since a chunk of the output was computed from it
        (naming the chunk); workers that cannot run the job.
    TypeError
        A ``source`` that is not an :class:`ImageSource`, ``orders`` that are not integers, a
        ``client`` that is not a :class:`distributed.Client`.
    """
    from ._progress import progress_bar

    family, orders, kind, k, dtype, batch = _check_options(source, family, orders, kind, k,
                                                           dtype, batch, client)
    columns = _columns(family, orders, kind)
    if source.channels is not None:
        columns = [f"{c} [channel {j}]" for j in range(source.channels) for c in columns]
    params = {"input": source.path, "array": source.array, "size": source.size,
              "grey": source.grey, "channels": source.channels, "n_images": source.n,
              "side": source.side, "family": family,
              "orders": _order_list(orders), "kind": kind, "k": k, "dtype": dtype,
              "batch": batch}
    writer = open_output(out, params, columns, source.files, overwrite=overwrite,
                         labels=_read_labels(source), other_version=other_version)
    done = writer.done()
    todo = [i for i in range(writer.n_chunks) if i not in done]
    report = RunReport(str(out), source.n, writer.n_chunks, len(done), 0, columns)
    if not todo:
        return report
    if client is not None:
        check_workers(client, timeout=worker_timeout)
    if done:
        _verify_inputs(source, writer, client)
    options = {"family": family, "orders": orders, "kind": kind, "k": k, "dtype": dtype,
               "device": device}
    fn = chunk_function or compute_chunk
    bar = progress_bar(writer.n_chunks, desc=f"{family} features", show=progress, unit="chunk",
                       large=len(todo) > 8)
    if done:
        bar.update(len(done))
    width = len(columns)
    n_done = len(done)

    counting = threading.Lock()  # (a Dask run writes chunks from several threads)

    def finish(i: int, rows: np.ndarray, checksum: str) -> None:
        nonlocal n_done
        s, e = writer._rows(i)
        rows = np.asarray(rows)
        if rows.shape != (e - s, width):
            raise ValueError(f"chunk {i} gave features of shape {rows.shape}, expected "
                             f"{(e - s, width)}")
        try:
            writer.write(i, rows.astype(dtype, copy=False), checksum)
        except OSError as exc:
            raise ValueError(f"--out {str(out)!r}: cannot write chunk {i} (images {s}:{e}): "
                             f"{exc.strerror or exc}"
                             + (f" ({exc.filename})" if exc.filename else "")) from exc
        with counting:
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


def _check_options(source: Any, family: Any, orders: Any, kind: Any, k: Any, dtype: Any,
                   batch: Any, client: Any) -> tuple[str, int | list[int], str, int, str, int]:
    """The options of :func:`run_features`, checked (their errors name the CLI's options)."""
    from ._validate import check_choice, check_int
    from .disk.families import get_family
    from .moments import KINDS

    if not isinstance(source, ImageSource):
        raise TypeError(f"source must be an ImageSource from open_images(path), got "
                        f"{type(source).__name__} {source!r}"[:200])
    if client is not None and not callable(getattr(client, "submit", None)):
        raise TypeError(f"client must be a distributed.Client (or None to run in this "
                        f"process), got {type(client).__name__}")
    family = get_family(family).name if isinstance(family, str) else family
    if not isinstance(family, str):
        raise TypeError(f"--family must be a name, got {family!r}")
    kind = check_choice("--kind", kind, KINDS)
    k = check_int("--k", k, minimum=1)
    if isinstance(orders, (int, np.integer)) and not isinstance(orders, bool):
        orders = check_int("--orders", orders, minimum=0)
    elif isinstance(orders, (str, bytes)) or not isinstance(orders, Iterable):
        raise TypeError(f"--orders must be an integer T (orders 0..T) or a list of integers, "
                        f"got {type(orders).__name__} {orders!r}")
    else:
        orders = [check_int("--orders", n, minimum=0) for n in orders]
        if not orders:
            raise ValueError("--orders must list at least one order, got an empty list")
    if dtype is None:
        dtype = "float64" if np.dtype(source.dtype) == np.float64 else "float32"
    dtype = check_choice("--dtype", dtype, ("float32", "float64"))
    if batch is None:
        batch = _default_batch(source)
    batch = check_int("--batch", batch, minimum=1)
    return family, orders, kind, k, dtype, batch


def _read_labels(source: ImageSource) -> dict[str, np.ndarray]:
    """The per-image label arrays of a Zarr input's group (copied to the output)."""
    if not source.labels:
        return {}
    import zarr

    group = zarr.open_group(source.path, mode="r")
    return {name: np.asarray(group[name][:]) for name in source.labels}


def input_checksum(images: np.ndarray) -> str:
    """A 128-bit BLAKE2b checksum (32 hex digits) of images as read: dtype, shape and bytes.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.zeros((2, 4, 4), dtype=np.uint8)
    >>> input_checksum(a) == input_checksum(a.copy()), input_checksum(a) == input_checksum(a + 1)
    (True, False)
    """
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{images.dtype.str}{images.shape}".encode())
    h.update(memoryview(np.ascontiguousarray(images)).cast("B"))
    return h.hexdigest()


def _task_checksum(spec: dict[str, Any]) -> str:
    return input_checksum(read_task(spec))


def run_chunk(fn: ChunkFunction, spec: dict[str, Any],
              options: dict[str, Any]) -> tuple[np.ndarray, str]:
    """One chunk's task: read its images once, checksum them, compute their rows with ``fn``."""
    images = read_task(spec)
    rows = fn({**spec, "kind": "preloaded", "images": images}, options)
    return np.asarray(rows), input_checksum(images)


def _verify_inputs(source: ImageSource, writer: FeatureOutput, client: Any) -> None:
    """Refuse to add chunks to an output whose done chunks came from other images: each done
    chunk's input is read again and its checksum compared with the one recorded."""
    recorded = {i: c for i, c in writer.checksums().items() if c is not None}
    if not recorded:
        return
    order = sorted(recorded)
    specs = [source.task(*writer._rows(i), chunk=i) for i in order]
    if client is None:
        now = [_task_checksum(spec) for spec in specs]
    else:
        now = client.gather(client.map(_task_checksum, specs, pure=False))
    for i, new in zip(order, now, strict=True):
        if new != recorded[i]:
            s, e = writer._rows(i)
            raise ValueError(
                f"INPUT {source.path!r} changed since output chunk {i} (images {s}:{e}) of "
                f"--out {str(writer.path)!r} was computed from it (input checksum "
                f"{recorded[i][:12]}..., now {new[:12]}...): resuming would mix features of "
                "two inputs; pass --overwrite to compute every chunk again")


def _default_batch(source: ImageSource) -> int:
    if source.kind == "zarr":
        chunk = int(_zarr_cached(source.path, source.array).chunks[0])
        return chunk * max(1, math.ceil(256 / chunk))
    return 1024


#: Chunks read ahead (each by its own thread, at most one thread fewer than the CPUs the
#: process may use) while one computes, in a run in this process:
#: the reads (Zarr decompression, the input checksum) release the GIL, and one reader could
#: not keep up with a GPU (128^2 glyphs on an H200: 82 ms to read and checksum a chunk of
#: 2,048 images on the 2-core development machine, 20 ms to compute their features).
READ_AHEAD = 2


def _run_local(source: ImageSource, writer: FeatureOutput, todo: list[int],
               options: dict[str, Any], fn: ChunkFunction,
               finish: Callable[[int, np.ndarray, str], None]) -> None:
    """In this process, as a pipeline: the next :data:`READ_AHEAD` chunks are read from disk
    (and checksummed) while chunk ``i`` computes, and chunk ``i - 1`` is written (one writing
    thread, in order: ``finish`` and ``on_chunk`` run there). An error of a write is raised
    here once the chunk after it has computed; a chunk computed but not written is computed
    again on resume."""

    def load(i: int) -> tuple[dict[str, Any], str]:
        spec = source.task(*writer._rows(i), chunk=i)
        images = read_task(spec)
        return {**spec, "kind": "preloaded", "images": images}, input_checksum(images)

    from ._threads import usable_cpus  # (imports torch: not before the run's checks)

    ahead = max(1, min(READ_AHEAD, len(todo), usable_cpus() - 1))
    with ThreadPoolExecutor(max_workers=ahead) as readers, \
            ThreadPoolExecutor(max_workers=1) as writing:
        reads = deque(readers.submit(load, i) for i in todo[:ahead])
        written = None
        try:
            for j, i in enumerate(todo):
                spec, checksum = reads.popleft().result()
                if j + ahead < len(todo):
                    reads.append(readers.submit(load, todo[j + ahead]))
                rows = fn(spec, options)
                if written is not None:
                    written.result()
                written = writing.submit(finish, i, rows, checksum)
            if written is not None:
                written.result()
        finally:
            for f in reads:
                f.cancel()


#: Chunks a Dask run's client writes at once, each in its own thread: every chunk goes to
#: files of its own (a Zarr chunk of each array, or a Parquet part), and a write waits mostly
#: on the disk's ``fsync``. With one writing thread the client wrote 16,900 glyph images/s
#: on 2 x H200 while the workers computed 27,000 (``benchmarks/collection_gpu.py``).
CLIENT_WRITERS = 4


def _run_client(client: Any, source: ImageSource, writer: FeatureOutput, todo: list[int],
                options: dict[str, Any], fn: ChunkFunction,
                finish: Callable[[int, np.ndarray, str], None]) -> None:
    """One task per chunk on a Dask cluster; the client writes each result as it comes, in
    up to :data:`CLIENT_WRITERS` writing threads, while it fetches the next ones (``finish``
    and ``on_chunk`` run there; as in :func:`_run_local`, an error of a write is raised once
    later results have come, and a chunk computed but not written is computed again on
    resume)."""
    from distributed import as_completed

    token = uuid.uuid4().hex[:8]
    futures = {}
    for i in todo:
        spec = source.task(*writer._rows(i), chunk=i)
        fut = client.submit(run_chunk, fn, spec, options,
                            key=f"fastmoments-chunk-{token}-{i}", pure=False)
        futures[fut] = i
    try:
        with ThreadPoolExecutor(max_workers=CLIENT_WRITERS) as writing:
            written: deque = deque()
            for fut in as_completed(list(futures)):
                rows, checksum = fut.result()
                fut.release()
                if len(written) == CLIENT_WRITERS:  # (at most that many results held here)
                    written.popleft().result()
                written.append(writing.submit(finish, futures[fut], rows, checksum))
            while written:
                written.popleft().result()
    finally:
        client.cancel([f for f in futures if not f.done()])
