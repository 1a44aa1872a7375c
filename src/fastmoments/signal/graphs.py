"""CUDA graphs of repeated calls: a plan records the kernels of a call once and replays them.

A signal transform of one GPU signal (10^5 samples) is a few kernels of some microseconds each,
behind a few hundred microseconds of Python: the argument checks, the choice of the method,
allocations and one launch per kernel. Users call the same transform on signal after signal of
one shape, so a plan keeps a :class:`GraphCache`: the third time it sees a call of the same
*key* (shape, dtype, device, stream and options, the input C-contiguous), it runs that call once
more while capturing it into a :class:`torch.cuda.CUDAGraph`, with a static input buffer, the
static result, and a finiteness flag computed from the input inside the graph (one Triton
kernel, :mod:`fastmoments._finite_kernel`, where Triton runs; the graph also copies the flag
into pinned host memory). From then on that call costs one copy into the static input, one
graph replay, one copy of the result into a fresh tensor and, unless ``check_finite=False``,
one host synchronisation to read the flag (the error for NaN or infinity is raised as before,
never a silently poisoned result).

A call that is nothing but Triton launches (a Gaussian or Morlet transform of one
signal, say) is first *recorded* instead (:mod:`fastmoments._launches`): its launches are
replayed straight through Triton's launcher on the caller's input and a fresh result, with no
copy in or out, and the kernels clear a flag byte in pinned host memory on NaN or infinity.
When the last launch that checks writes its verdict before its work is done (the one-launch
SFT kernel of :mod:`.triton_sft` writes it at its barrier, after reading every sample), a
checked replay returns as soon as the verdict is in, while the output tiles are still being
computed: work queued on the stream afterwards waits for them, as after any torch call.
A call that does any other work is captured into a graph at the next call.
``FASTMOMENTS_LAUNCH_REPLAY=0`` keeps the graphs only.

The replayed kernels are those of the eager call, so the result is the same to the last bit.
Calls that are not captured: CPU tensors and NumPy input, non-contiguous input, a gradient
being recorded, ``out=``, ``progress=`` or ``memory_budget=`` given, while another capture
is under way, results larger than :data:`MAX_BYTES`, and calls whose capture failed (a
code path that synchronises, say; they stay eager, remembered per key). Calls too large to
capture may instead keep the launch their first call made (:mod:`.batch_route`, through
:func:`replayed_call`'s ``large`` hook). Set the environment variable
``FASTMOMENTS_CUDA_GRAPHS=0`` to switch the mechanism off, routes included.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

import torch

from .._launches import host_flag, recording, replayable_call
from .._triton import on_tensor_device

__all__ = [
    "ENV",
    "LAUNCHES_ENV",
    "MAX_BYTES",
    "MAX_GRAPHS",
    "WARM_CALLS",
    "GraphCache",
    "clear_all",
    "eligible",
    "enabled",
    "env_value",
    "launches_enabled",
    "plain_key",
    "plan_cache",
]

#: Environment variable that switches the replayed graphs off (``0``, ``false``, ``off``).
ENV = "FASTMOMENTS_CUDA_GRAPHS"

#: Environment variable that switches the replay of recorded launches off (``0``): repeated
#: calls are then always captured into CUDA graphs.
LAUNCHES_ENV = "FASTMOMENTS_LAUNCH_REPLAY"

#: Eager calls of one key before the next one is captured (the first call of a shape may
#: compile kernels and fill caches; capturing only repeated calls keeps one-off shapes cheap).
WARM_CALLS = 2

#: Graphs (or remembered keys) kept per cache; the least recently used is dropped.
MAX_GRAPHS = 8

#: Largest input plus result, in bytes, of a captured call (a graph holds its buffers for as
#: long as it is kept; the per-call overhead it removes matters for small calls only).
MAX_BYTES = 256 << 20

_FAILED = "failed"  # a capture that failed: the key stays eager
_CAPTURING = "capturing"  # another thread is capturing the key: this call runs eagerly


def env_value(name: str) -> str | None:
    """``os.environ.get(name)``, read through the encoded mapping behind CPython's
    ``os.environ`` when there is one: ``os.environ.get`` costs about a microsecond per call of
    encoding and decoding, and the switches are read on every call (so that they can be
    changed at run time)."""
    data = getattr(os.environ, "_data", None)
    encode = getattr(os.environ, "encodekey", None)
    if data is None or encode is None:  # pragma: no cover - another Python
        return os.environ.get(name)
    raw = data.get(_ENCODED.get(name) or _ENCODED.setdefault(name, encode(name)))
    return None if raw is None else os.environ.decodevalue(raw)


def _switch(name: str) -> bool:
    """Whether the environment variable ``name`` leaves its mechanism on (unset, or anything
    but ``0``, ``false``, ``off``, ``no``), read on every call (:func:`env_value`)."""
    value = env_value(name)
    return value is None or value.strip().lower() not in ("0", "false", "off", "no")


_ENCODED: dict[str, Any] = {}


def enabled() -> bool:
    """Whether replayed CUDA graphs are on (the environment variable :data:`ENV`)."""
    return _switch(ENV)


def launches_enabled() -> bool:
    """Whether calls are first tried as recorded launches (the environment variable
    :data:`LAUNCHES_ENV`; the graphs must be on too)."""
    return _switch(LAUNCHES_ENV)


def eligible(x: Any, out: Any, progress: Any, memory_budget: Any) -> bool:
    """The cheap first test of a call for :meth:`GraphCache.call`: a CUDA tensor and none of
    the options that need the eager path."""
    return (type(x) is torch.Tensor and x.is_cuda and out is None and progress is None
            and memory_budget is None)


_SCALAR_NAMES = {int: "int", float: "float", str: "str", bool: "bool", type(None): "NoneType"}


def plain_key(*values: Any) -> tuple | None:
    """A cache key of plain option values, each with its type (so that ``True``, ``1`` and
    ``1.0`` stay apart); lists and tuples become tuples; ``None`` when a value is not plain
    (an array, say), and the call then runs eagerly."""
    out = []
    for v in values:
        name = _SCALAR_NAMES.get(type(v))
        if name is None:
            if not isinstance(v, (list, tuple)):
                return None
            v = plain_key(*v)
            if v is None:
                return None
            name = "tuple"
        out.append((name, v))
    return tuple(out)


def plan_cache(plan: Any) -> GraphCache:
    """The :class:`GraphCache` of ``plan`` (made on first use; a pickled plan travels
    without its graphs)."""
    cache = plan.__dict__.get("_graph_cache")
    if cache is None:
        cache = plan.__dict__.setdefault("_graph_cache", GraphCache())
    return cache


@on_tensor_device
def replayed_call(plan: Any, x: Any, run: Callable[..., Any], *, axis: Any, mode: Any,
                  cval: Any, engine: Any, memory_budget: Any, check_finite: bool, out: Any,
                  progress: Any, bytes_per_sample: int,
                  remember: Callable[[], Any] | None = None,
                  replayed: Callable[[Any], None] | None = None,
                  large: Callable[..., Any] | None = None) -> Any:
    """A one-axis plan's ``__call__``: ``run(x, axis=..., mode=..., cval=..., engine=...,
    memory_budget=..., check_finite=..., out=..., progress=...)``, replayed from a graph in
    :func:`plan_cache` ``(plan)`` when :meth:`GraphCache.call` can (the result holds
    ``bytes_per_sample`` bytes per input sample), else run eagerly. On a replay,
    ``replayed(remembered)`` is called first with what ``remember`` gave at the capture.
    Calls too large to be replayed, with the plain options, go to ``large(plan, x, run, axis,
    mode, cval, engine, check_finite, remember, replayed)`` when it is given (the batch
    routes of :func:`fastmoments.signal.batch_route.routed_batch`) and the graphs are on.
    A tensor on a CUDA device that is not the current one is worked on with its device made
    current for the call (:func:`~fastmoments._triton.on_tensor_device`)."""
    hit = None
    if not eligible(x, out, progress, memory_budget):
        key = None
    elif (x.element_size() + bytes_per_sample) * x.numel() > MAX_BYTES:
        if large is not None and enabled():
            return large(plan, x, run, axis, mode, cval, engine, check_finite, remember,
                         replayed)
        key = None  # (too large to be replayed: GraphCache.call would refuse it)
    elif (type(axis) is int and type(mode) is str and type(cval) is float
          and type(engine) is str):  # the usual options: exact types, so a flat tuple is a key
        key = ("call", axis, mode, cval, engine)
    else:
        key = plain_key("call", axis, mode, cval, engine)
    if key is not None:
        hit = plan_cache(plan).call(
            x, key, lambda t: run(t, axis=axis, mode=mode, cval=cval, engine=engine,
                                  memory_budget=None, check_finite=False, out=None,
                                  progress=None),
            check_finite, bytes_per_sample * x.numel(), remember)
    if hit is not None:
        if replayed is not None:
            replayed(hit[1])
        return hit[0]
    return run(x, axis=axis, mode=mode, cval=cval, engine=engine, memory_budget=memory_budget,
               check_finite=check_finite, out=out, progress=progress)


class _Graph:
    """One captured call: the graph, its static buffers and what the call reported.

    ``flag`` is the finiteness flag computed inside the graph; the graph also copies it into
    the pinned host byte ``host_flag`` (when pinned memory could be had), which is read after
    ``stream`` is synchronised, cheaper than reading a device scalar."""

    __slots__ = ("flag", "graph", "host_flag", "lock", "remembered", "static_in", "static_out",
                 "stream")

    def __init__(self, graph: torch.cuda.CUDAGraph, static_in: torch.Tensor,
                 static_out: torch.Tensor, flag: torch.Tensor, remembered: Any,
                 stream: torch.cuda.Stream, host_flag: Any = None) -> None:
        self.graph, self.static_in, self.static_out = graph, static_in, static_out
        self.flag, self.remembered, self.stream = flag, remembered, stream
        self.host_flag = host_flag
        self.lock = threading.Lock()

    def finite(self) -> bool:
        """Whether the input of the last replay was finite (waits for the replay)."""
        if self.host_flag is None:
            return bool(self.flag)
        self.stream.synchronize()
        return bool(self.host_flag[()])


class _Launches:
    """One recorded call replayed launch by launch (:class:`fastmoments._launches.
    LaunchProgram`): the result is a fresh tensor, the input is read in place, and a checked
    replay's flag is the pinned host byte ``host`` that the kernels write through unified
    addressing (set to 1 before the launches, read after the stream is synchronised); an
    unchecked replay hands the kernels a device byte nobody reads."""

    __slots__ = ("host", "lock", "program", "remembered", "scratch", "stream")

    def __init__(self, program: Any, host: tuple[torch.Tensor, Any],
                 stream: torch.cuda.Stream, remembered: Any) -> None:
        self.program, self.host, self.stream = program, host, stream
        self.remembered = remembered
        self.scratch = torch.ones((), dtype=torch.uint8, device=stream.device)
        self.lock = threading.Lock()

    def replay(self, x: torch.Tensor, stream: int, check_finite: bool) -> torch.Tensor:
        """The call's result on ``x`` (raises for NaN/inf input when ``check_finite``)."""
        with self.lock:  # one caller at a time: the flag and the scratch are shared
            if not check_finite:
                return self.program(x, stream, self.scratch.data_ptr())
            tensor, view = self.host
            if self.program.signals:  # the kernel writes 1 or 0 over PENDING mid-way
                view[()] = _PENDING
                y = self.program(x, stream, tensor.data_ptr())
                _await_verdict(view, self.stream)
            else:  # the kernels clear 1 on NaN/inf: the verdict is known when they are done
                view[()] = 1
                y = self.program(x, stream, tensor.data_ptr())
                self.stream.synchronize()
            if not view[()]:
                raise ValueError("x contains NaN or infinity")
            return y


#: The host flag's value while a signalling replay has not written its verdict yet.
_PENDING = 3

#: Reads of the host flag before :func:`_await_verdict` falls back to a stream synchronisation
#: (about 0.1 µs each: a few tens of microseconds, longer than a small call's kernels take).
SPIN_READS = 400


def _await_verdict(view: Any, stream: torch.cuda.Stream) -> None:
    """Wait until the kernels have written their NaN/inf verdict over :data:`_PENDING` in the
    pinned host byte ``view``: read it in a loop for a short while (the kernel writes it at
    its barrier, before the output tiles, so the call returns while they are computed;
    later work on the result is ordered after them on the stream), then wait for the stream
    (which lets other threads run; a stream that ends without the write is an error)."""
    for _ in range(SPIN_READS):
        if view[()] != _PENDING:
            return
    stream.synchronize()
    if view[()] == _PENDING:  # the kernel did not run to its barrier
        raise RuntimeError("the replayed kernels did not report their NaN/inf check")


def _pinned_flag() -> torch.Tensor | None:
    """A pinned host byte for the graph's copy of its flag (``None`` if none can be had)."""
    try:
        return torch.ones((), dtype=torch.bool, pin_memory=True)
    except RuntimeError:  # pragma: no cover - no pinned memory
        return None


def _raw_stream(index: int) -> int:
    """The current CUDA stream of device ``index`` as a number (the cheap way Triton's
    launcher uses, with the public call as the fallback)."""
    try:
        return torch._C._cuda_getCurrentRawStream(index)
    except AttributeError:  # pragma: no cover - a torch without it
        return torch.cuda.current_stream(index).cuda_stream


def _capturing() -> bool:
    """``torch.cuda.is_current_stream_capturing()``, without its Python wrapper."""
    try:
        return torch._C._cuda_isCurrentStreamCapturing()
    except AttributeError:  # pragma: no cover - a torch without it
        return torch.cuda.is_current_stream_capturing()


def _graph_flag(t: torch.Tensor) -> torch.Tensor:
    """The finiteness flag of ``t`` computed inside a graph: one Triton kernel where it runs
    (:mod:`fastmoments._finite_kernel`), else one ``aminmax`` pass."""
    from .._array import finite_flag

    try:
        from .._finite_kernel import fused_finite_flag, usable
    except ImportError:  # pragma: no cover - Triton is broken
        return finite_flag(t)
    return fused_finite_flag(t) if usable(t) else finite_flag(t)


_CACHES: weakref.WeakSet[GraphCache] = weakref.WeakSet()


def clear_all() -> None:
    """Drop the graphs and recorded launches of every cache in the process (their memory
    returns to torch's allocator; the next calls are recorded or captured afresh)."""
    for cache in list(_CACHES):
        cache.clear()


class GraphCache:
    """Captured calls of one plan (or one function), by key; see the module notes.

    Examples
    --------
    >>> cache = GraphCache()
    >>> cache.call(torch.zeros(4), ("any",), lambda t: t + 1, True, 32) is None  # CPU: eager
    True
    """

    def __init__(self, max_graphs: int = MAX_GRAPHS) -> None:
        self.max_graphs = int(max_graphs)
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()
        #: Why the captures that failed did (key -> message), for diagnostics.
        self.failures: dict[Hashable, str] = {}
        #: The batch kernel's routes of calls too large to replay, by key
        #: (:mod:`.batch_route`; ``False``: the key runs the general path).
        self.routes: OrderedDict[Hashable, Any] = OrderedDict()
        _CACHES.add(self)

    def kinds(self) -> list[str]:
        """How each kept call replays: ``"launches"`` (recorded Triton launches) or
        ``"graph"`` (a CUDA graph), least recently used first."""
        return ["launches" if type(e) is _Launches else "graph"
                for e in self._entries.values() if isinstance(e, (_Graph, _Launches))]

    def __reduce__(self) -> tuple:  # graphs and locks do not travel: an empty cache does
        return (GraphCache, (self.max_graphs,))

    def __len__(self) -> int:
        return sum(isinstance(e, (_Graph, _Launches)) for e in self._entries.values())

    def clear(self) -> None:
        """Drop every graph (their memory returns to torch's allocator) and every route."""
        with self._lock:
            self._entries.clear()
            self.failures.clear()
            self.routes.clear()

    @on_tensor_device
    def call(self, x: Any, key: Hashable, run: Callable[[torch.Tensor], Any],
             check_finite: bool, result_bytes: int,
             remember: Callable[[], Any] | None = None) -> tuple[torch.Tensor, Any] | None:
        """The result of ``run(x)`` from a replayed graph, or ``None`` to run eagerly.

        Parameters
        ----------
        x : Any
            The caller's input; only a C-contiguous CUDA tensor with no gradient recorded is
            considered.
        key : hashable
            The call's options (everything but ``x`` that the result depends on).
        run : callable
            ``run(t)``: the eager call on the tensor ``t`` (with ``check_finite=False``),
            returning a tensor.
        check_finite : bool
            Whether the caller asked for the NaN/infinity check.
        result_bytes : int
            Size of the result, to keep graphs small (:data:`MAX_BYTES`).
        remember : callable, optional
            Called after the capture; its value is returned with every replay (the method a
            plan chose, say).

        Returns
        -------
        tuple or None
            ``(result, remembered)``, or ``None`` when the caller runs the call eagerly (not
            eligible, not yet warm, or a capture that failed).

        Raises
        ------
        ValueError
            When ``check_finite`` and the input holds NaN or infinity.
        """
        if (type(x) is not torch.Tensor or not x.is_cuda or not enabled()
                or (x.requires_grad and torch.is_grad_enabled()) or not x.is_contiguous()
                or x.numel() == 0
                or x.numel() * x.element_size() + result_bytes > MAX_BYTES):
            return None
        if _capturing() or recording() is not None:
            return None  # the caller is capturing a graph, or recording its launches
        index = x.get_device()  # (current: see on_tensor_device)
        stream = _raw_stream(index)
        # the alignment: Triton specialises its kernels on 16-byte aligned pointers
        full = (key, x.shape, x.dtype, index, stream, x.data_ptr() % 16)
        with self._lock:
            try:
                entry = self._entries.get(full, 0)
            except TypeError:  # an unhashable option: the eager call checks it
                return None
            if type(entry) is _Graph or type(entry) is _Launches:
                self._entries.move_to_end(full)
            elif isinstance(entry, int):
                self._entries[full] = entry + 1
                self._entries.move_to_end(full)
                while len(self._entries) > self.max_graphs:
                    self._entries.popitem(last=False)
                if entry < WARM_CALLS:
                    return None
                # this thread captures; the others run eagerly meanwhile
                self._entries[full] = _CAPTURING
        if isinstance(entry, str):  # failed, or being captured by another thread
            return None
        if type(entry) is _Launches:
            return entry.replay(x, stream, check_finite), entry.remembered
        if isinstance(entry, int):
            if entry == WARM_CALLS and launches_enabled():
                done = self._record(x, full, run, index, check_finite, remember)
                if done is not None:
                    return done
            entry = self._capture(x, full, run, torch.cuda.current_stream(index), remember)
            if entry is None:
                return None
        with entry.lock:  # one caller at a time per graph: the static buffers are shared
            entry.static_in.copy_(x)
            entry.graph.replay()
            y = entry.static_out.clone()  # one allocation and copy, one call
            if check_finite and not entry.finite():
                raise ValueError("x contains NaN or infinity")
        return y, entry.remembered

    def _record(self, x: torch.Tensor, full: Hashable, run: Callable[[torch.Tensor], Any],
                index: int, check_finite: bool, remember: Callable[[], Any] | None
                ) -> tuple[torch.Tensor, Any] | None:
        """Run the call once, recording its launches (:mod:`fastmoments._launches`). Keeps a
        :class:`_Launches` entry when the call can be replayed launch by launch; otherwise the
        next call of the key is captured into a graph. Returns the call's result (checked for
        NaN/inf when asked), or ``None`` when the recorded call raised (the caller then runs
        it eagerly, which raises the same error)."""
        host = host_flag()  # (x's device is current: :meth:`call` is on_tensor_device)
        if host is None:  # pinned memory the GPU cannot write through unified addressing
            self.failures[full] = "not replayed launch by launch: no mapped host flag here"
            return None
        try:
            y, program, refused, flag = replayable_call(x, run)
        except Exception as exc:  # the eager call reports it
            with self._lock:
                self._entries[full] = _FAILED
                self.failures[full] = f"{type(exc).__name__}: {exc}"[:300]
            return None
        remembered = remember() if remember else None
        with self._lock:
            if program is None:
                self._entries[full] = WARM_CALLS + 1  # the next call captures a graph
                self.failures[full] = "not replayed launch by launch: " + ", ".join(refused)[:250]
            else:
                self._entries[full] = _Launches(program, host, torch.cuda.current_stream(index),
                                                remembered)
            self._entries.move_to_end(full)
        if check_finite:  # a program's kernels checked x; otherwise one pass does
            from .._array import finite_flag

            if not bool(flag if program is not None else finite_flag(x)):
                raise ValueError("x contains NaN or infinity")
        return y, remembered

    def _capture(self, x: torch.Tensor, full: Hashable, run: Callable[[torch.Tensor], Any],
                 stream: torch.cuda.Stream, remember: Callable[[], Any] | None) -> _Graph | None:
        with torch.inference_mode(False):  # an ordinary tensor: copied into in either mode
            static_in = torch.empty_like(x)
        static_in.copy_(x)
        try:
            side = torch.cuda.Stream(x.device)
            side.wait_stream(stream)
            with torch.cuda.stream(side):  # warm-up on a side stream, as torch recommends
                run(static_in)
            stream.wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            _graph_flag(static_in)  # compiles the flag's kernel outside the capture
            host = _pinned_flag()
            with torch.cuda.graph(graph, stream=side, capture_error_mode="thread_local"):
                out = run(static_in)
                flag = _graph_flag(static_in)
                if host is not None:
                    host.copy_(flag, non_blocking=True)
            if type(out) is not torch.Tensor:
                raise TypeError(f"the call returned {type(out).__name__}, not a tensor")
            stream.wait_stream(side)
            entry = _Graph(graph, static_in, out, flag, remember() if remember else None,
                           stream, None if host is None else host.numpy())
        except Exception as exc:  # a call that cannot be captured stays eager
            with self._lock:
                self._entries[full] = _FAILED
                self.failures[full] = f"{type(exc).__name__}: {exc}"[:300]
            torch.cuda.synchronize(x.device)
            return None
        with self._lock:
            self._entries[full] = entry
            self._entries.move_to_end(full)
        return entry
