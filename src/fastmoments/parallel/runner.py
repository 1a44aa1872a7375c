"""Running one piece of work per device, concurrently, and gathering the results.

One Python thread per device entry (torch releases the GIL inside its kernels), each with
its own CUDA stream on a GPU. Host data go through pinned memory with ``non_blocking``
copies on a separate copy stream, in sub-batches, so that the copy of the next sub-batch
overlaps the compute of the current one. Out-of-memory errors are turned into a
:class:`MemoryError` that names the device and the memory that was needed.
"""

from __future__ import annotations

import queue
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import torch

from .._array import native_array
from .._memory import format_bytes

__all__ = ["gather_tensors", "run_parts", "settle", "sub_batches", "to_device", "transfer_batches"]

#: Host bytes per sub-batch of a pipelined host-to-device transfer.
SUB_BATCH_BYTES = 512 * 2**20
#: Halvings of the first sub-batches (see :func:`sub_batches`).
RAMP = 3

_streams: dict[tuple[int, int, str], Any] = {}
_lock = threading.Lock()


def _stream(dev: torch.device, slot: int, role: str):
    key = (dev.index or 0, slot, role)
    with _lock:
        if key not in _streams:
            _streams[key] = torch.cuda.Stream(device=dev)
        return _streams[key]


_executor: ThreadPoolExecutor | None = None
_workers = 0


def _pool(n: int) -> ThreadPoolExecutor:
    """A kept pool of at least ``n`` threads (no thread start per call)."""
    global _executor, _workers
    with _lock:
        if _executor is None or _workers < n:
            _workers = max(n, 8)
            _executor = ThreadPoolExecutor(max_workers=_workers,
                                           thread_name_prefix="fastmoments-device")
        return _executor


def _oom_bytes(message: str) -> float:
    """Bytes that an allocation asked for, read from torch's out-of-memory message."""
    m = re.search(r"(?:[Tt]ried to allocate|allocate)\s+([\d.]+)\s*(GiB|MiB|KiB|bytes|B)\b",
                  message)
    if not m:
        return 0.0
    scale = {"GiB": 2**30, "MiB": 2**20, "KiB": 2**10, "bytes": 1, "B": 1}[m.group(2)]
    return float(m.group(1)) * scale


def memory_error(dev: torch.device, exc: BaseException, what: str) -> MemoryError:
    """A :class:`MemoryError` naming ``dev`` and the memory that was needed."""
    asked = _oom_bytes(str(exc))
    held = 0
    total = None
    if dev.type == "cuda":
        try:
            held = torch.cuda.memory_allocated(dev)
            total = torch.cuda.get_device_properties(dev).total_memory
        except Exception:  # pragma: no cover - a broken device
            pass
    need = held + asked
    have = f" of the {format_bytes(total)} it has" if total else ""
    return MemoryError(
        f"device {dev} ran out of memory for its part of the work ({what}): it needed about "
        f"{format_bytes(need)} ({format_bytes(held)} held + {format_bytes(asked)} asked)"
        f"{have}; spread the work over more devices, pass smaller batches or set "
        f"memory_budget")


def run_parts(devices: Sequence[torch.device], work: Sequence[Callable[[], Any]],
              what: str = "") -> list[Any]:
    """Run ``work[i]`` on ``devices[i]`` concurrently; results in the same order.

    A GPU entry runs in ``torch.cuda.device`` and its own stream, and waits for that stream
    before returning, so results are complete when this returns. The first error (in device
    order) is raised; out-of-memory errors become :class:`MemoryError` naming the device.
    """
    n = len(work)
    results: list[Any] = [None] * n
    errors: list[BaseException | None] = [None] * n

    def one(i: int) -> None:
        dev = devices[i]
        try:
            if dev.type == "cuda":
                with torch.cuda.device(dev), torch.cuda.stream(_stream(dev, i, "compute")):
                    results[i] = work[i]()
                    torch.cuda.current_stream().synchronize()
            else:
                results[i] = work[i]()
        except torch.OutOfMemoryError as exc:
            errors[i] = memory_error(dev, exc, what)
        except MemoryError as exc:
            errors[i] = MemoryError(f"device {dev}: {exc}")
        except RuntimeError as exc:
            if "can't allocate memory" in str(exc) or "out of memory" in str(exc).lower():
                errors[i] = memory_error(dev, exc, what)
            else:
                errors[i] = exc
        except BaseException as exc:  # re-raised in the caller's thread
            errors[i] = exc

    if n == 1:
        one(0)
    else:  # the caller's thread takes the first part, the pool the others
        futures = [_pool(n - 1).submit(one, i) for i in range(1, n)]
        one(0)
        for f in futures:
            f.result()
    for e in errors:
        if e is not None:
            raise e
    return results


def to_device(x: Any, dev: torch.device) -> torch.Tensor:
    """``x`` (NumPy or tensor) on ``dev``: host data through pinned memory, non-blocking.

    Never modifies ``x``; NumPy data that need no conversion are not copied on the CPU.
    """
    if isinstance(x, torch.Tensor):
        if x.device == dev:
            return x
        if dev.type == "cuda" and x.device.type == "cpu":
            return x.pin_memory().to(dev, non_blocking=True)
        return x.to(dev, non_blocking=dev.type == "cuda")
    # native byte order, C order, writeable (the shared conversion; copies only when needed)
    t = torch.from_numpy(native_array(x, "input"))
    if dev.type == "cuda":
        return t.pin_memory().to(dev, non_blocking=True)
    return t


_staging: dict[tuple, list[torch.Tensor]] = {}

#: Pinned host buffers per device entry for :func:`transfer_batches`.
STAGING_BUFFERS = 2


_slot_locks: dict[tuple, threading.Lock] = {}


def _slot_lock(dev: torch.device, slot: int) -> threading.Lock:
    """The lock held while a stream uses the staging buffers of ``(dev, slot)`` (two threads
    streaming through the same single-device plan's slot take turns)."""
    with _lock:
        return _slot_locks.setdefault((dev.index, slot), threading.Lock())


def _buffers(dev: torch.device, slot: int, shape: tuple[int, ...], dtype: torch.dtype
             ) -> list[torch.Tensor]:
    """:data:`STAGING_BUFFERS` pinned host buffers per device entry, kept for the next call of
    the same shape."""
    key = (dev.index, slot)
    with _lock:
        bufs = _staging.get(key)
        if bufs is None or bufs[0].dtype != dtype or tuple(bufs[0].shape) != shape:
            bufs = [torch.empty(shape, dtype=dtype, pin_memory=True)
                    for _ in range(STAGING_BUFFERS)]
            _staging[key] = bufs
        return bufs


def _host_tensor(x: Any) -> torch.Tensor | None:
    """``x`` as a CPU tensor without a copy where possible (None: needs a conversion)."""
    if isinstance(x, torch.Tensor):
        return x if x.device.type == "cpu" else None
    arr = np.asarray(x)
    if arr.dtype.kind not in "iuf" or not arr.dtype.isnative or not arr.flags.c_contiguous:
        return None  # the conversion of to_device (native_array)
    return torch.from_numpy(arr) if arr.flags.writeable else torch.from_numpy(arr.copy())


def transfer_batches(x: Any, dev: torch.device, slot: int, fn: Callable[[torch.Tensor], Any],
                     item_bytes: int, host_out: bool = False) -> list[Any]:
    """Apply ``fn`` to ``x`` (leading axis = items) on ``dev``, in sub-batches whose copies
    overlap the compute.

    On a GPU a staging thread copies host sub-batches (with torch's CPU threads) into one of
    :data:`STAGING_BUFFERS` kept pinned buffers and sends each by a non-blocking copy on a
    copy stream, while this thread runs ``fn`` on the sub-batches already sent; the compute
    stream waits for its sub-batch's copy only. The staging runs ahead by at most one
    sub-batch. Staging in its own thread matters because ``fn`` may synchronise (the
    finiteness checks do): staged in this thread, the host copy of the next sub-batch would
    find the device idle. ``host_out`` brings tensor results back to the host in this thread
    (so that several devices copy back in parallel). Runs inside :func:`run_parts`.
    """
    n = int(x.shape[0])
    src = _host_tensor(x)

    def out(r: Any) -> Any:
        return to_host(r) if host_out else r

    per = max(1, int(SUB_BATCH_BYTES // max(item_bytes, 1)))
    per = max(per, -(-n // 64))  # at most 64 sub-batches (after the ramp)
    if dev.type != "cuda" or src is None or n <= 1 or per >= n:
        return [out(fn(to_device(x, dev)))]
    with _slot_lock(dev, slot):
        return _staged(src, dev, slot, fn, out, per)


def _staged(src: torch.Tensor, dev: torch.device, slot: int, fn: Callable[[torch.Tensor], Any],
            out: Callable[[Any], Any], per: int) -> list[Any]:
    """The body of :func:`transfer_batches` on a GPU (its staging buffers held)."""
    n = int(src.shape[0])
    compute = torch.cuda.current_stream(dev)
    copy = _stream(dev, slot, "copy")
    bufs = _buffers(dev, slot, (per, *src.shape[1:]), src.dtype)
    ready: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()

    def stage() -> None:
        done: list[Any] = [None] * len(bufs)
        try:
            with torch.cuda.device(dev):
                for k, (s, e) in enumerate(sub_batches(n, per)):
                    j = k % len(bufs)
                    if done[j] is not None:
                        done[j].synchronize()  # the upload out of this buffer has finished
                    if stop.is_set():
                        return
                    buf = bufs[j][:e - s]
                    buf.copy_(src[s:e])
                    with torch.cuda.stream(copy):
                        xs = buf.to(dev, non_blocking=True)
                        ev = torch.cuda.Event()
                        ev.record(copy)
                    done[j] = ev
                    ready.put((xs, ev))
            ready.put(None)
        except BaseException as exc:  # handed to the computing thread
            ready.put(exc)

    worker = threading.Thread(target=stage, name=f"fastmoments-staging-{dev}", daemon=True)
    worker.start()
    outs = []
    try:
        while (item := ready.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            xs, ev = item
            compute.wait_event(ev)
            xs.record_stream(compute)
            outs.append(out(fn(xs)))
            del xs
    finally:
        stop.set()
        while worker.is_alive():  # unblock a staging thread waiting for room in the queue
            try:
                ready.get(timeout=0.05)
            except queue.Empty:
                pass
        worker.join()
    return outs


def sub_batches(n: int, per: int, ramp: int = RAMP) -> list[tuple[int, int]]:
    """``(start, stop)`` of the sub-batches of :func:`transfer_batches`: ``per`` items each,
    after a ramp of ``per/2^ramp, per/2^(ramp-1), ..., per/2`` items.

    Nothing overlaps the first sub-batch's host copy and upload, nor the last one's compute:
    starting small shortens that head (by ``2^ramp`` times) while the later sub-batches stay
    large enough to keep the device busy.
    """
    sizes = [max(1, per >> r) for r in range(ramp, 0, -1)]
    spans = []
    s = 0
    for size in sizes:
        if s >= n:
            break
        spans.append((s, min(n, s + size)))
        s = spans[-1][1]
    while s < n:
        spans.append((s, min(n, s + per)))
        s = spans[-1][1]
    return spans


def settle(dev: torch.device) -> None:
    """Wait for the caller's stream on ``dev``: tensors that the device threads allocated on
    their own streams may be freed (and reused by those streams) once this returns."""
    if dev.type == "cuda":
        torch.cuda.current_stream(dev).synchronize()


def to_host(r: Any) -> Any:
    """A tensor result (or the first entry of a tuple result) copied to the host."""
    if isinstance(r, torch.Tensor):
        return r.cpu()
    if isinstance(r, tuple) and r and isinstance(r[0], torch.Tensor):
        return (r[0].cpu(), *r[1:])
    return r


def gather_tensors(parts: Sequence[torch.Tensor], dev: torch.device | None,
                   dim: int = 0) -> torch.Tensor:
    """Concatenate ``parts`` (possibly on several devices) on ``dev`` (None: the host), in new
    memory of the caller's stream."""
    target = dev if dev is not None else torch.device("cpu")
    moved = [p if p.device == target else p.to(target) for p in parts]
    out = torch.cat(moved, dim=dim) if len(moved) > 1 else moved[0].clone()
    settle(target)
    return out
