"""CUDA graphs of a plan's repeated calls, through torch's public ``torch.cuda.CUDAGraph``.

A transform of one GPU signal or image is a few short kernels behind tens of microseconds of
Python (checks, allocations, one launch per kernel). Users call a plan on input after input of
one shape, so a plan may keep a :class:`GraphCache`: from the third call of a plain key (the
caller's options, the input's shape, dtype, device and current stream) it captures the call
into a graph with a static input buffer and its result, and replays it on later calls: one
copy in, one replay, one copy out. The NaN/infinity check of the input is captured too (a
flag the graph computes from the static input and copies into a pinned host byte), and read
after the replay when the caller asked for it, so that a bad input still raises: the stream's
synchronisation and a read of host memory, with no device-to-host copy of its own.

The replayed kernels are those of the eager call, on the same route (a plan decides its
route before the call is captured): the result is the eager result, bit for bit. Calls that
are never captured: anything but a C-contiguous CUDA tensor, a gradient being recorded,
results larger than :data:`MAX_BYTES`, calls made while a graph is being captured, and keys
whose capture failed (they stay eager, the reason kept in :attr:`GraphCache.failures`).

Set ``FASTMOMENTS_CUDA_GRAPHS=0`` (or ``false``, ``off``, ``no``) to switch graphs off.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import torch

__all__ = [
    "ENV",
    "MAX_BYTES",
    "MAX_GRAPHS",
    "WARM_CALLS",
    "GraphCache",
    "clear_all",
    "enabled",
    "graph_cache",
    "plain_key",
]

#: The environment variable that switches the graphs off (read on every call).
ENV = "FASTMOMENTS_CUDA_GRAPHS"

#: Eager calls of a key before the next one is captured: the first call of a shape may compile
#: kernels and fill caches, and one-off shapes should not pay for a capture.
WARM_CALLS = 2

#: Keys (graphs or call counts) kept per cache; the least recently used is dropped.
MAX_GRAPHS = 8

#: Largest input plus result, in bytes, of a captured call: a graph holds its buffers for as
#: long as it is kept, and the per-call overhead it removes matters for small calls only.
MAX_BYTES = 256 << 20

_FAILED = "failed"
_CAPTURING = "capturing"
_SCALARS = {int: "int", float: "float", str: "str", bool: "bool", type(None): "None"}


def enabled() -> bool:
    """Whether graphs are on: :data:`ENV` unset or anything but ``0``/``false``/``off``/``no``."""
    value = os.environ.get(ENV)
    return value is None or value.strip().lower() not in ("0", "false", "off", "no")


def plain_key(*values: Any) -> tuple | None:
    """A cache key of plain option values, each with its type (``True``, ``1`` and ``1.0`` stay
    apart; lists and tuples become tuples), or ``None`` when a value is not plain (an array,
    say: the call then runs eagerly).

    >>> plain_key(1, 1.0, "reflect", (0, 1))
    (('int', 1), ('float', 1.0), ('str', 'reflect'), ('tuple', (('int', 0), ('int', 1))))
    >>> plain_key([0.5, object()]) is None
    True
    """
    out = []
    for v in values:
        name = _SCALARS.get(type(v))
        if name is None:
            if not isinstance(v, (list, tuple)):
                return None
            v = plain_key(*v)
            if v is None:
                return None
            name = "tuple"
        out.append((name, v))
    return tuple(out)


def _finite_flag(t: torch.Tensor) -> torch.Tensor:
    """Whether every entry of ``t`` is finite, as a device scalar (no synchronisation): one
    Triton kernel where it runs (:mod:`fastmoments._finite_kernel`), else a torch reduction."""
    from ._array import finite_flag
    from ._finite_kernel import fused_finite_flag, usable

    return fused_finite_flag(t) if usable(t) else finite_flag(t)


class _Graph:
    """One captured call: the graph, its static input and result, and its finiteness flag
    (on the device, and its pinned host copy written by the graph when that could be
    captured: ``host``, a NumPy view of it, else ``None``)."""

    __slots__ = ("flag", "graph", "host", "lock", "pinned", "remembered", "static_in",
                 "static_out")

    def __init__(self, graph: torch.cuda.CUDAGraph, static_in: torch.Tensor,
                 static_out: torch.Tensor, flag: torch.Tensor, remembered: Any,
                 pinned: torch.Tensor | None = None) -> None:
        self.graph, self.static_in, self.static_out = graph, static_in, static_out
        self.flag, self.remembered = flag, remembered
        self.pinned = pinned  # (kept alive with the graph that writes it)
        self.host = None if pinned is None else pinned.numpy()
        self.lock = threading.Lock()

    def finite(self, stream: torch.cuda.Stream) -> bool:
        """Whether the input of the latest replay was finite (waits for ``stream``)."""
        if self.host is None:
            return bool(self.flag)
        stream.synchronize()
        return bool(self.host[0])


class GraphCache:
    """The captured calls of one plan (or one function), by key; see the module notes.

    Parameters
    ----------
    max_graphs : int
        Keys kept (least recently used first out).

    Examples
    --------
    >>> cache = GraphCache()
    >>> cache.call(torch.zeros(4), ("any",), lambda t: t + 1, True, 16) is None  # CPU: eager
    True
    """

    def __init__(self, max_graphs: int = MAX_GRAPHS) -> None:
        self.max_graphs = int(max_graphs)
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        #: Why the captures that failed did (key -> message).
        self.failures: dict[Hashable, str] = {}
        _CACHES.add(self)

    def __reduce__(self) -> tuple:  # graphs and locks do not travel: an empty cache does
        return (GraphCache, (self.max_graphs,))

    def __len__(self) -> int:
        return sum(type(e) is _Graph for e in self._entries.values())

    def clear(self) -> None:
        """Drop every graph (their memory returns to torch's allocator)."""
        with self._lock:
            self._entries.clear()
            self.failures.clear()

    def call(self, x: Any, key: Hashable, run: Callable[[torch.Tensor], torch.Tensor],
             check_finite: bool, result_bytes: int,
             remember: Callable[[], Any] | None = None) -> tuple[torch.Tensor, Any] | None:
        """The result of ``run(x)`` from a replayed graph, or ``None`` to run the call eagerly.

        Parameters
        ----------
        x : Any
            The caller's input; only a C-contiguous CUDA tensor with no gradient recorded is
            considered.
        key : hashable
            The call's options: everything but ``x`` that the result depends on.
        run : callable
            ``run(t)``: the eager call on the tensor ``t`` without its NaN/infinity check,
            returning a tensor.
        check_finite : bool
            Whether to raise when ``x`` holds NaN or infinity.
        result_bytes : int
            Size of the result (with the input's, at most :data:`MAX_BYTES`).
        remember : callable, optional
            Called after the capture; its value comes back with every replay (the route a
            plan took, say).

        Returns
        -------
        tuple or None
            ``(result, remembered)``, or ``None`` (not eligible, not yet warm, or a failed
            capture).

        Raises
        ------
        ValueError
            When ``check_finite`` and ``x`` holds NaN or infinity.
        """
        if (type(x) is not torch.Tensor or not x.is_cuda or not enabled()
                or (x.requires_grad and torch.is_grad_enabled()) or not x.is_contiguous()
                or x.numel() == 0
                or x.numel() * x.element_size() + result_bytes > MAX_BYTES):
            return None
        index = x.device.index
        if index != torch.cuda.current_device():  # (the device guard costs a few µs)
            with torch.cuda.device(index):
                return self._replay(x, index, key, run, check_finite, remember)
        return self._replay(x, index, key, run, check_finite, remember)

    def _replay(self, x: torch.Tensor, index: int, key: Hashable,
                run: Callable[[torch.Tensor], torch.Tensor], check_finite: bool,
                remember: Callable[[], Any] | None) -> tuple[torch.Tensor, Any] | None:
        """:meth:`call` on the tensor's device, made current."""
        if torch.cuda.is_current_stream_capturing():
            return None  # the caller captures a graph of its own
        stream = torch.cuda.current_stream(index)
        full = (key, tuple(x.shape), x.dtype, index, stream.cuda_stream)
        entry = self._lookup(full)
        if entry is None:
            return None
        if type(entry) is not _Graph:
            entry = self._capture(x, full, run, stream, remember)
            if entry is None:
                return None
        with entry.lock:  # one caller at a time per graph: the static buffers are shared
            entry.static_in.copy_(x)
            entry.graph.replay()
            y = entry.static_out.clone()
            if check_finite and not entry.finite(stream):
                raise ValueError("x contains NaN or infinity")
        return y, entry.remembered

    def _lookup(self, full: Hashable) -> _Graph | int | None:
        """The graph of ``full``, or ``WARM_CALLS`` when this call is to capture it, or
        ``None`` for an eager call (counting it)."""
        with self._lock:
            try:
                entry = self._entries.get(full, 0)
            except TypeError:  # an unhashable option: the eager call checks it
                return None
            if isinstance(entry, str):  # failed, or being captured by another thread
                return None
            if type(entry) is _Graph:
                self._entries.move_to_end(full)
                return entry
            if entry < WARM_CALLS:
                self._entries[full] = entry + 1
                self._entries.move_to_end(full)
                while len(self._entries) > self.max_graphs:
                    self._entries.popitem(last=False)
                return None
            self._entries[full] = _CAPTURING  # this thread captures; others run eagerly
            return entry

    def _capture(self, x: torch.Tensor, full: Hashable,
                 run: Callable[[torch.Tensor], torch.Tensor], stream: torch.cuda.Stream,
                 remember: Callable[[], Any] | None) -> _Graph | None:
        """Capture ``run`` on a static copy of ``x`` (after a warm-up run on a side stream, as
        torch advises); ``None`` when the call cannot be captured (the key stays eager)."""
        with torch.inference_mode(False):  # an ordinary tensor: copied into in either mode
            static_in = torch.empty_like(x)
        static_in.copy_(x)
        try:
            side = torch.cuda.Stream(x.device)
            side.wait_stream(stream)
            with torch.cuda.stream(side):
                run(static_in)
                probe = _finite_flag(static_in)  # compiles its kernel outside the capture
            stream.wait_stream(side)
            try:  # the flag copied to a pinned host byte by the graph itself
                graph, out, flag, pinned = self._record(run, static_in, side, probe.dtype)
            except Exception:  # a device-to-host copy that cannot be captured: read the flag
                torch.cuda.synchronize(x.device)
                graph, out, flag, pinned = self._record(run, static_in, side, None)
            if type(out) is not torch.Tensor:
                raise TypeError(f"the call returned {type(out).__name__}, not a tensor")
            stream.wait_stream(side)
            entry = _Graph(graph, static_in, out, flag, remember() if remember else None,
                           pinned)
        except Exception as exc:  # a call that cannot be captured stays eager
            torch.cuda.synchronize(x.device)
            with self._lock:
                self._entries[full] = _FAILED
                self.failures[full] = f"{type(exc).__name__}: {exc}"[:300]
            return None
        with self._lock:
            self._entries[full] = entry
            self._entries.move_to_end(full)
        return entry

    @staticmethod
    def _record(run: Callable[[torch.Tensor], torch.Tensor], static_in: torch.Tensor,
                side: torch.cuda.Stream, flag_dtype: torch.dtype | None) -> tuple:
        """Capture ``run(static_in)`` and the finiteness flag on ``side``; with ``flag_dtype``
        the graph also copies the flag into a new pinned host tensor (returned last, else
        ``None``)."""
        pinned = None
        if flag_dtype is not None:
            with torch.inference_mode(False):
                pinned = torch.ones(1, dtype=flag_dtype, pin_memory=True)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=side, capture_error_mode="thread_local"):
            out = run(static_in)
            flag = _finite_flag(static_in)
            if pinned is not None:
                pinned.copy_(flag.reshape(1), non_blocking=True)
        return graph, out, flag, pinned


_CACHES: weakref.WeakSet[GraphCache] = weakref.WeakSet()


def clear_all() -> None:
    """Drop the graphs of every cache in the process (their memory returns to torch's
    allocator; later calls are captured afresh)."""
    for cache in list(_CACHES):
        cache.clear()


def graph_cache(plan: Any) -> GraphCache:
    """The :class:`GraphCache` of ``plan`` (made on first use, kept in the plan's
    ``__dict__``; a pickled plan travels without its graphs)."""
    cache = plan.__dict__.get("_graph_cache")
    if cache is None:
        cache = plan.__dict__.setdefault("_graph_cache", GraphCache())
    return cache
