"""Repeated calls on large GPU batches: the route the first call took, kept per call key.

A call whose input and result exceed :data:`~fastmoments.signal.graphs.MAX_BYTES` (a
thousand signals of 10^5 samples, say) is neither recorded nor captured into a graph
(:mod:`.graphs`). Each such call used to run the general path:

* check the options;
* choose the method and the engine;
* ask :func:`~fastmoments.signal.cuda_sft.eligible_layout` whether the CUDA C++ batch kernel
  takes the rows;
* make its one launch.

On the H100's host, at σ = 16, ``plan(x)`` took 0.64 ms where the bare allocation, launch
and wait took 0.55 ms, for a kernel of 0.46 ms
(an H100 measurement). ``benchmarks/signal_batch_cuda.py``
times routed calls against the general path in the same run.

Every one of those decisions depends on the call's *key* only: the plan, the input's shape,
dtype and device, the options with their types, and the kernel's environment switches.
So :func:`routed_batch` watches the first call of a key on the general path. The plan keeps
a :class:`BatchRoute` for the key when that call did exactly this:

* it made one launch of the batch kernel;
* it launched on the caller's own tensor;
* it returned the kernel's result, untouched.

Later calls of the key make that launch directly: the same kernel, the same arguments,
the same bits, and the same NaN/inf verdict (:func:`launch_queued`). When the launch can
prepare itself (:meth:`fastmoments.signal.cuda_sft.Launch.prepare`), the route keeps that
:class:`~fastmoments.signal.cuda_sft.Prepared` launch, whose decisions (the result's shape,
the tiles, the driver's handle) are made once for the key. A first call that did
anything else keeps its key on the general path: the FIR, the Triton kernels, several
launches, or work on the result. The routes live in the plan's
:class:`~fastmoments.signal.graphs.GraphCache`, so ``FASTMOMENTS_CUDA_GRAPHS=0`` and
:func:`~fastmoments.signal.graphs.clear_all` govern them as they govern the graphs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

from .._launches import recording
from . import cuda_sft
from .graphs import MAX_GRAPHS, _capturing, plan_cache
from .verdict import Verdict, require_finite

__all__ = ["BatchRoute", "launch_queued", "note_launch", "routed_batch"]

#: ``launch(bank, rows, mode, cval, flag=...)``: the batch kernel with its decisions made
#: (:class:`fastmoments.signal.cuda_sft.Launch`: :func:`~fastmoments.signal.cuda_sft.apply`
#: with its layout).
Launch = Callable[..., torch.Tensor]

_WATCH = threading.local()


class _Seen:
    """What the batch kernel reported while a first call was watched."""

    __slots__ = ("launches", "result", "route", "source", "version")

    def __init__(self) -> None:
        self.launches = 0
        self.route: BatchRoute | None = None
        self.source: torch.Tensor | None = None
        self.result: torch.Tensor | None = None
        self.version: int | None = -1


@contextmanager
def _watching() -> Iterator[_Seen]:
    """Collect the batch kernel's reports (:func:`note_launch`) of this thread."""
    seen = _Seen()
    outer = getattr(_WATCH, "seen", None)
    _WATCH.seen = seen
    try:
        yield seen
    finally:
        _WATCH.seen = outer


class BatchRoute:
    """One key's launch of the batch kernel: ``launch(bank, rows, mode, cval, flag=...)`` on
    the caller's input viewed as ``rows`` (shape ``(signals, samples)``).

    ``remembered`` is what the plan's ``remember()`` gave after the first call; each routed
    call hands it to the plan's ``replayed`` (a Gaussian filter's ``method``, say)."""

    __slots__ = ("bank", "cval", "launch", "mode", "prepared", "remembered", "rows")

    def __init__(self, launch: Launch, bank: Any, rows: tuple[int, int], mode: str,
                 cval: float) -> None:
        self.launch, self.bank, self.rows = launch, bank, rows
        self.mode, self.cval = mode, cval
        self.remembered: Any = None
        #: ``prepared(x, check_finite)``: the launch with its decisions made, or ``None``
        self.prepared: Callable[..., Any] | None = None

    def prepare(self, x: torch.Tensor) -> None:
        """Keep the launch's prepared form for inputs like ``x`` (when it has one)."""
        prepare = getattr(self.launch, "prepare", None)
        if prepare is not None:
            self.prepared = prepare(self.bank, x, self.mode, self.cval)

    def __call__(self, x: torch.Tensor, check_finite: bool
                 ) -> tuple[torch.Tensor, Verdict | None] | None:
        """Queue the call on ``x``: its result and the verdict still to be read
        (:func:`~fastmoments.signal.verdict.require_finite`), or ``None`` when ``x`` cannot
        take the route now (the general path then runs): ``x`` not C-contiguous, a gradient
        recorded for it, a negated view, or a recording or a graph capture under way."""
        if (not x.is_contiguous() or x.requires_grad or x.is_neg() or recording() is not None
                or _capturing()):
            return None
        prepared = self.prepared
        if prepared is not None:
            queued = prepared(x, check_finite)
            if queued is not None:
                return queued
        rows = x if x.dim() == 2 else x.view(self.rows)  # (a view costs a few µs)
        return launch_queued(self.launch, self.bank, rows, self.mode, self.cval, check_finite,
                             x.shape)


def launch_queued(launch: Launch, bank: Any, rows: torch.Tensor, mode: str, cval: float,
                  check_finite: bool, shape: torch.Size) -> tuple[torch.Tensor, Verdict | None]:
    """Queue ``launch(bank, rows, mode, cval, flag=...)``: its result viewed as ``shape``, and
    the NaN/inf verdict that its kernel forms when ``check_finite`` (else ``None``). The
    caller reads the verdict with :func:`~fastmoments.signal.verdict.require_finite` (which
    waits for the kernel, then raises :class:`ValueError` naming ``x``) once its own work on
    the host is done, so that this work overlaps the kernel."""
    flag = Verdict(rows.device) if check_finite else None
    return launch(bank, rows, mode, cval, flag=flag).view(shape), flag


def note_launch(launch: Launch, bank: Any, x: torch.Tensor, rows: tuple[int, int], mode: str,
                cval: float, result: torch.Tensor) -> None:
    """Report to a watching :func:`routed_batch` (if any) that the batch kernel ran on ``x``,
    the tensor the plan was called with, viewed as ``rows``, and returned ``result``."""
    seen = getattr(_WATCH, "seen", None)
    if seen is not None:
        seen.launches += 1
        seen.route = BatchRoute(launch, bank, rows, mode, cval)
        seen.source, seen.result = x, result
        # (an inference tensor has no version counter: then nothing tells it untouched)
        seen.version = None if result.is_inference() else result._version


def routed_batch(plan: Any, x: torch.Tensor, run: Callable[..., Any], axis: Any, mode: Any,
                 cval: Any, engine: Any, check_finite: bool,
                 remember: Callable[[], Any] | None,
                 replayed: Callable[[Any], None] | None) -> Any:
    """A one-axis plan's call on a CUDA tensor too large for the replays of
    :func:`~fastmoments.signal.graphs.replayed_call`, with the plain options (its ``large``
    hook): the key's :class:`BatchRoute` when the plan keeps one, else ``run(x, ...)`` (the
    general path), watched on the key's first call (see the module notes). ``run``,
    ``remember`` and ``replayed`` are as in ``replayed_call``."""
    routes = plan_cache(plan).routes
    # the options with their types (1, 1.0 and True hash alike but are checked apart)
    key = (x.shape, x.dtype, x.device, type(axis), axis, type(mode), mode, type(cval), cval,
           type(engine), engine, cuda_sft._options())
    try:
        route = routes.get(key)
    except TypeError:  # an unhashable option: the general path reports it
        route = False
    if route:
        queued = route(x, check_finite)
        if queued is not None:
            if replayed is not None:
                replayed(route.remembered)
            require_finite(queued[1])
            return queued[0]
    kw = dict(axis=axis, mode=mode, cval=cval, engine=engine, memory_budget=None,
              check_finite=check_finite, out=None, progress=None)
    if route is not None or recording() is not None or _capturing():
        return run(x, **kw)
    with _watching() as seen:  # the key's first call
        y = run(x, **kw)
    if seen.launches and seen.version is None:  # under inference mode: decide on a later call
        return y
    kept: BatchRoute | bool = False
    if (seen.launches == 1 and seen.source is x and seen.result is y
            and y._version == seen.version):
        kept = seen.route
        kept.remembered = remember() if remember is not None else None
        kept.prepare(x)
    while len(routes) >= MAX_GRAPHS:
        routes.popitem(last=False)
    routes[key] = kept
    return y
