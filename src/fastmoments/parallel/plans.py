"""Plans and one-call functions on a list of devices.

:class:`ParallelPlan` stands for a plan built with ``device=[...]``: it holds one replica of
the plan per device entry (built once, on first use, and kept) and splits the work:

* **batches** (``B >= number of devices``): the flattened batch is cut into nearly equal
  contiguous pieces, one per device, results concatenated in input order on the first device;
* **one large job** (``B < number of devices``), for plans whose family gives a work split
  (:class:`~.protocol.WorkSplit`: disk and box plans): the moment set is partitioned (columns
  of repetitions for disk transforms, blocks of first-axis degrees for box transforms,
  balanced by :mod:`.partition`) and gathered; reconstructions are the sum of the partial
  reconstructions, gathered on the first device.

:func:`multi_device` is the class decorator that lets a plan's constructor return a
:class:`ParallelPlan` when ``device=`` names several devices (a single device builds the
plan exactly as before). :func:`batched` does the same for one-call functions.
"""

from __future__ import annotations

import copy
import functools
import inspect
import math
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from .._array import ArrayKind, resolve_device
from .devices import device_list, is_multi
from .partition import even_splits
from .protocol import WorkSplit
from .runner import (
    SUB_BATCH_BYTES,
    gather_tensors,
    run_parts,
    to_device,
    to_host,
    transfer_batches,
)

__all__ = ["ParallelPlan", "batched", "finish", "for_replica", "multi_device"]

SPLITS = ("auto", "batch", "work")

def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape) if hasattr(x, "shape") else tuple(np.shape(x))


def _kind(x: Any) -> ArrayKind:
    if isinstance(x, torch.Tensor):
        return ArrayKind(numpy=False, device=x.device)
    return ArrayKind(numpy=True, device=torch.device("cpu"))


def _itemsize(x: Any) -> int:
    if isinstance(x, torch.Tensor):
        return x.element_size()
    return int(np.asarray(x).dtype.itemsize) if not hasattr(x, "dtype") else int(
        np.dtype(x.dtype).itemsize)


def _reshape(x: Any, shape: tuple[int, ...]) -> Any:
    return x.reshape(shape) if isinstance(x, torch.Tensor) else np.asarray(x).reshape(shape)


def finish(t: torch.Tensor, kind: ArrayKind) -> Any:
    """The result in the caller's kind: NumPy for NumPy input, else the tensor."""
    return t.detach().cpu().numpy() if kind.numpy else t


def _gather_moments(parts: list[Any], plan: Any, dev0: torch.device, lead: tuple[int, ...],
                    kind: ArrayKind) -> Any:
    data = gather_tensors([p.data for p in parts], dev0)
    out = copy.copy(parts[0])
    out._data = data.reshape(*lead, *data.shape[1:])
    out.plan = plan
    out.kind = kind
    return out


class ParallelPlan:
    """A plan replicated over several devices (see the module notes).

    Parameters
    ----------
    cls : type
        The plan class.
    args, kwargs
        Its constructor's arguments (``device`` excluded).
    devices : tuple of torch.device
        One entry per worker (repeats allowed); results are gathered on ``devices[0]``.
    split : callable, optional
        ``split(first_replica)`` gives the family's :class:`~.protocol.WorkSplit`, which
        lets one job be spread over the devices; without it only batches are spread.

    Attributes not defined here (``size``, ``index``, ``order``, ``mask``, ``shape`` ...) are
    those of the first replica.
    """

    def __init__(self, cls: type, args: tuple, kwargs: dict, devices: tuple[torch.device, ...],
                 split: Callable[[Any], WorkSplit] | None = None):
        self._cls = cls
        self._args = args
        self._kwargs = dict(kwargs)
        self.devices = devices
        self._replicas: list[Any] = [None] * len(devices)
        self._parts: list[list[Any]] | None = None
        self._locks = [threading.Lock() for _ in devices]
        self._parts_lock = threading.Lock()
        self._replicas[0] = self._make(0)  # builds (and validates) at construction time
        self._split = split(self._replicas[0]) if split is not None else None

    # ------------------------------------------------------------------ replicas
    def _make(self, i: int) -> Any:
        plan = object.__new__(self._cls)
        plan.__init__(*self._args, **{**self._kwargs, "device": self.devices[i]})
        return plan

    def replica(self, i: int) -> Any:
        """The plan replica of device entry ``i`` (built on first use, then kept)."""
        with self._locks[i]:
            if self._replicas[i] is None:
                self._replicas[i] = self._make(i)
            return self._replicas[i]

    def arguments(self) -> dict[str, Any]:
        """The plan constructor's arguments by name (``device`` excluded)."""
        bound = inspect.signature(self._cls.__init__).bind(None, *self._args, **self._kwargs)
        kw = {k: v for k, v in bound.arguments.items() if k != "self"}
        kw.update(kw.pop("kwargs", {}))
        return kw

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_replicas", "_cls", "_split"):
            raise AttributeError(name)
        return getattr(self._replicas[0], name)

    def __repr__(self) -> str:
        devs = ", ".join(str(d) for d in self.devices)
        return f"ParallelPlan({self._replicas[0]!r}, devices=[{devs}])"

    @property
    def device(self) -> torch.device:
        """The first device: where results are gathered."""
        return self.devices[0]

    @property
    def core_ndim(self) -> int:
        """Trailing dimensions of one item (2 for images, 3 for volumes)."""
        return self._split.core_ndim if self._split is not None else 2

    def mode(self, split: str, batch: int) -> str:
        """How ``batch`` items run: ``"one"`` (on the first device), ``"batch"`` (items over
        the devices) or ``"work"`` (every device a piece of every item's moment set)."""
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        n = len(self.devices)
        can_work = self._split is not None
        if batch == 0:
            return "one"
        if split == "work" and can_work:
            return "work"
        if split == "batch" or batch >= n or not can_work:
            return "batch" if batch > 1 else "one"
        assert self._split is not None
        if split == "auto" and batch * self._split.item_cost() < self._split.min_cost:
            return "one"  # too small to gain from a split: the first device does it
        return "work"

    # ------------------------------------------------------------------ batch split
    def batched(self, method: str, x: Any, core: int, kind: ArrayKind | None = None,
                **options: Any) -> Any:
        """Run the replicas' ``method`` on nearly equal pieces of the flattened batch (one
        piece per device) and gather the results in input order on the first device."""
        shape = _shape(x)
        lead, item = shape[:-core], shape[-core:]
        b = math.prod(lead)
        kind = kind or _kind(x)
        flat = _reshape(x, (b, *item))
        spans = even_splits(b, len(self.devices))
        item_bytes = math.prod(item) * _itemsize(x)

        def work(i: int, a: int, z: int) -> list[Any]:
            rep = self.replica(i)
            return transfer_batches(flat[a:z], self.devices[i], i,
                                    lambda t: getattr(rep, method)(t, **options), item_bytes,
                                    host_out=kind.numpy and method != "forward")

        res = run_parts(self.devices[:len(spans)],
                        [functools.partial(work, i, a, z) for i, (a, z) in enumerate(spans)],
                        what=f"{method} of {b} items split over {len(spans)} devices")
        parts = [p for r in res for p in r]
        if hasattr(parts[0], "data") and hasattr(parts[0], "plan"):
            return _gather_moments(parts, self, self.devices[0], lead, kind)
        t = gather_tensors([p if isinstance(p, torch.Tensor) else torch.as_tensor(p)
                            for p in parts], None if kind.numpy else self.devices[0])
        return finish(t.reshape(*lead, *t.shape[1:]), kind)

    # ------------------------------------------------------------------ transforms
    def forward(self, x: Any, *, split: str = "auto", **options: Any) -> Any:
        """Moments of a batch, split over the devices.

        Parameters
        ----------
        x : array_like or torch.Tensor
            As the plan's ``forward``.
        split : {"auto", "batch", "work"}
            ``"batch"``: items go to different devices; ``"work"``: every device computes a
            part of the moment set of every item; ``"auto"``: batches when there are at
            least as many items as devices, else the moment set.
        **options
            The plan's own ``forward`` options (e.g. ``progress=``), passed to each replica;
            a split moment set runs its parts without them.
        """
        shape = _shape(x)
        core = self.core_ndim
        if len(shape) < core:
            return self._replicas[0].forward(x, **options)  # the plan's own error
        mode = self.mode(split, math.prod(shape[:-core]))
        if mode == "one":
            return self._replicas[0].forward(x, **options)
        if mode == "batch":
            return self.batched("forward", x, core, **options)
        assert self._split is not None
        return self._split.forward(self, x, _kind(x))

    __call__ = forward

    def _forward_tensor(self, t: torch.Tensor, kind: ArrayKind) -> Any:
        """Entry used by the box one-call functions (``t`` already validated)."""
        out = self.forward(t)
        out.kind = kind
        return out

    def adjoint(self, y: Any) -> Any:
        """The plan's adjoint, batches split over the devices."""
        data = y.data if hasattr(y, "plan") else y
        ncoef = self._split.coef_ndim if self._split is not None else 2
        kind = y.kind if hasattr(y, "plan") else _kind(y)
        if math.prod(_shape(data)[:-ncoef]) < 2 or len(self.devices) == 1:
            return self._replicas[0].adjoint(data if not hasattr(y, "plan") else
                                             for_replica(y, self._replicas[0]))
        return self.batched("adjoint", data, ncoef, kind)

    def synthesize(self, *args: Any, **kwargs: Any) -> Any:
        """The family's reconstruction entry, split by its :class:`~.protocol.WorkSplit`
        when it has one (disk plans: from ``(B, cols, rows)`` coefficients)."""
        return self._family_entry("synthesize", args, kwargs)

    def inverse(self, *args: Any, **kwargs: Any) -> Any:
        """The family's reconstruction entry, split by its :class:`~.protocol.WorkSplit`
        when it has one (box plans: batches or blocks of degrees)."""
        return self._family_entry("inverse", args, kwargs)

    def _family_entry(self, name: str, args: tuple, kwargs: dict) -> Any:
        entry = getattr(self._split, name, None)
        if entry is None:
            return getattr(self._replicas[0], name)(*args, **kwargs)
        return entry(self, *args, **kwargs)

    # ------------------------------------------------------------------ work split
    def parts(self) -> list[list[Any]]:
        """The partition of one job: ``[device entry, slot for the family's cache, piece]``
        with the piece as the family's :meth:`~.protocol.WorkSplit.pieces` cut it (a list of
        columns for disk transforms, a ``(start, stop)`` block of degrees for box ones)."""
        if self._split is None:
            raise TypeError(f"{self._cls.__name__} does not split one job over devices")
        with self._parts_lock:
            if self._parts is None:
                pieces = self._split.pieces(len(self.devices))
                self._parts = [[i, None, piece] for i, piece in enumerate(pieces)]
            return self._parts


def for_replica(moments: Any, plan: Any) -> Any:
    """A moments object of a parallel plan, as seen by one of its replicas."""
    if hasattr(moments, "plan") and isinstance(moments.plan, ParallelPlan):
        out = copy.copy(moments)
        out.plan = plan
        out._data = moments.data.to(plan.device)
        return out
    return moments


# ---------------------------------------------------------------------- decorators
def multi_device(cls: type | None = None, *,
                 split: Callable[[Any], WorkSplit] | None = None) -> Any:
    """Class decorator: ``cls(..., device=[...])`` builds a :class:`ParallelPlan`.

    Used bare (``@multi_device``: batches are spread over the devices) or with the family's
    work split (``@multi_device(split=DiskSplit)``: one job can be spread too). A single
    device (or none) builds the plan exactly as before: the only cost is one ``isinstance``
    test in ``__new__``.
    """
    if cls is None:
        return functools.partial(multi_device, split=split)
    base_new = cls.__new__
    if split is not None:
        _stream_host_batches(cls, split)

    def __new__(klass, *args: Any, **kwargs: Any):
        device = kwargs.get("device")
        if device is not None and is_multi(device):
            rest = {k: v for k, v in kwargs.items() if k != "device"}
            return ParallelPlan(klass, args, rest, device_list(device), split)
        if base_new is object.__new__:
            return object.__new__(klass)
        return base_new(klass, *args, **kwargs)

    cls.__new__ = staticmethod(__new__)  # type: ignore[assignment]
    return cls


#: The staging slot (:func:`~.runner.transfer_batches`) of single-device plans' streams.
STREAM_SLOT = -1


def _stream_host_batches(cls: type, split: Callable[[Any], WorkSplit]) -> None:
    """Let a single-device plan's ``forward`` stream a large host batch to its GPU.

    A NumPy array or CPU tensor of at least two sub-batches
    (:data:`~.runner.SUB_BATCH_BYTES`) given to a plan on a CUDA device runs in sub-batches
    whose uploads, through pinned buffers, overlap the compute
    (:func:`~.runner.transfer_batches`, as a ``device=[dev]`` plan runs it), instead of one
    upload of the whole batch from pageable memory before any compute. The moments are
    gathered into one object of the plan; they equal the whole batch's to rounding (the
    products run on fewer items at a time). On an H200, 2,048 volumes of 100³ to order 20
    took 1.31 s uploaded whole; streamed, 0.39 s in a later run on another host
    (``benchmarks/results/multigpu.md``, job e, holds the later run).
    Calls with options other than ``progress`` (``channel_axis``, say) run as before. A plan
    that shows a progress bar shows one over the whole batch (its items), not one per
    sub-batch. Subclasses that define their own ``forward`` (the polar harmonic plans) are
    wrapped when they are made.
    """
    _wrap_forward(cls, split)

    def init_subclass(sub: type, **kwargs: Any) -> None:
        super(cls, sub).__init_subclass__(**kwargs)
        if "forward" in sub.__dict__:
            _wrap_forward(sub, split)

    cls.__init_subclass__ = classmethod(init_subclass)  # type: ignore[assignment]


def _wrap_forward(cls: type, split: Callable[[Any], WorkSplit]) -> None:
    """``cls.forward`` (and ``__call__`` where it is the same) wrapped as
    :func:`_stream_host_batches` says."""
    base = cls.forward
    bar = "progress" in inspect.signature(base).parameters

    @functools.wraps(base)
    def forward(self: Any, *args: Any, **options: Any) -> Any:
        if len(args) == 1 and _streams(self, args[0], options):
            core = split(self).core_ndim
            if len(_shape(args[0])) > core:
                return _streamed_forward(self, base, args[0], core, options, bar)
        return base(self, *args, **options)

    cls.forward = forward
    if cls.__dict__.get("__call__") is base:
        cls.__call__ = forward


def _streams(plan: Any, x: Any, options: dict) -> bool:
    """Whether ``plan.forward(x, **options)`` streams ``x`` (see
    :func:`_stream_host_batches`)."""
    if set(options) - {"progress"}:
        return False
    dev = getattr(plan, "device", None)
    if not isinstance(dev, torch.device) or dev.type != "cuda":
        return False
    if type(x) is torch.Tensor:
        if x.device.type != "cpu" or x.requires_grad:
            return False
        nbytes = x.numel() * x.element_size()
    elif type(x) is np.ndarray:
        nbytes = x.nbytes
    else:
        return False
    return nbytes >= 2 * SUB_BATCH_BYTES


def _streamed_forward(plan: Any, base: Callable, x: Any, core: int, options: dict,
                      bar: bool) -> Any:
    """``base(plan, x)`` over sub-batches of the flattened batch whose uploads overlap the
    compute, the moments gathered on the plan's device into one object of ``plan``; with
    ``bar`` (the plan shows progress bars), one bar over the batch's items."""
    from .._progress import progress_bar

    shape = _shape(x)
    lead, item = shape[:-core], shape[-core:]
    b = math.prod(lead)
    steps = progress_bar(b, desc=f"{type(plan).__name__}.forward", unit="item",
                         show=options.get("progress") if bar else False)

    def part(t: torch.Tensor) -> Any:
        out = base(plan, t, **({**options, "progress": False} if bar else options))
        steps.update(int(t.shape[0]))
        return out

    try:
        parts = transfer_batches(_reshape(x, (b, *item)), plan.device, STREAM_SLOT, part,
                                 math.prod(item) * _itemsize(x))
    finally:
        steps.close()
    return _gather_moments(parts, plan, plan.device, lead, _kind(x))


SplitAxis = Callable[[tuple[int, ...], dict], "int | None"]


def _norm_axis(ax: Any, ndim: int) -> int | None:
    if isinstance(ax, bool) or not isinstance(ax, (int, np.integer)) or not -ndim <= ax < ndim:
        return None
    return int(ax) % ndim


def free_axis(filtered: Callable[[dict], Any]) -> SplitAxis:
    """Split along the first axis that the transform does not run along (None: every axis
    is filtered, or the axes are invalid and the function's own check will say so)."""

    def pick(shape: tuple[int, ...], arguments: dict) -> int | None:
        axes = filtered(arguments)
        axes = [axes] if not isinstance(axes, (list, tuple)) else list(axes)
        norm = [_norm_axis(a, len(shape)) for a in axes]
        if any(a is None for a in norm):
            return None
        free = [a for a in range(len(shape)) if a not in norm]
        return free[0] if free else None

    return pick


def batched(*, name: str, split_axis: SplitAxis, out_offset: int = 0,
            gather: Callable | None = None, prepare: Callable | None = None) -> Callable:
    """Decorator for one-call functions: a device list spreads the batch over the devices.

    Parameters
    ----------
    name : str
        The input argument.
    split_axis : callable
        ``(shape, arguments) -> axis or None``: the axis to split.
    out_offset : int
        Where the split axis sits in the output, relative to the input's.
    gather : callable, optional
        ``(results, axis, dev0, kind, state) -> result``; default: concatenate tensors and
        moments objects along the split axis.
    prepare : callable, optional
        ``(arguments) -> state``: adjusts the per-part arguments (e.g. defers a selection
        that needs every item) and returns what ``gather`` needs.

    A function without a ``device`` parameter gains one (``None``: unchanged call; one
    device: the input goes there and the result comes back from there).
    """

    def deco(fn: Callable) -> Callable:
        sig = inspect.signature(fn)
        has_device = "device" in sig.parameters

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            # (device is keyword-only in every one-call function: no binding without it)
            device = kwargs.get("device") if has_device else kwargs.pop("device", None)
            if device is None:
                return fn(*args, **kwargs)
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError:  # a bad call: the function's own error, naming it
                return fn(*args, **kwargs)
            if has_device and not is_multi(device):
                dev = resolve_device(device)
                bound.apply_defaults()
                if not _pipelined_upload(bound.arguments, name, dev, split_axis):
                    return fn(*args, **kwargs)
                return _run(fn, bound, (dev,))
            devs = device_list(device) if is_multi(device) else (resolve_device(device),)
            bound.apply_defaults()
            return _run(fn, bound, devs)

        def _run(fn: Callable, bound: inspect.BoundArguments, devs: tuple) -> Any:
            x = bound.arguments[name]
            if not isinstance(x, torch.Tensor):
                x = np.asarray(x)
            kind = _kind(x)
            shape = _shape(x)
            ax = split_axis(shape, bound.arguments)
            out = bound.arguments.get("out")
            if out is not None:
                bound.arguments["out"] = None
            state = prepare(bound.arguments) if prepare else None
            n = shape[ax] if ax is not None else 0
            spans = even_splits(n, len(devs)) if n > 1 else [(0, n)]

            def call(dev: torch.device, t: torch.Tensor) -> Any:
                args = dict(bound.arguments)
                args[name] = t
                if has_device:
                    args["device"] = dev
                ba = inspect.BoundArguments(sig, args)  # type: ignore[arg-type]
                return fn(*ba.args, **ba.kwargs)

            def work(i: int, a: int, z: int) -> list[Any]:
                dev = devs[i]
                if ax is None or (len(spans) == 1 and n == shape[ax]):
                    piece = x
                else:
                    piece = x[(slice(None),) * ax + (slice(a, z),)]
                if ax == 0 and n > 1:  # sub-batches: copies overlap the compute
                    item = math.prod(shape[1:]) * _itemsize(x)
                    return transfer_batches(piece, dev, i, functools.partial(call, dev), item,
                                            host_out=kind.numpy)
                r = call(dev, to_device(piece, dev))
                return [to_host(r) if kind.numpy else r]

            parts = run_parts(devs[:len(spans)],
                              [functools.partial(work, i, a, z) for i, (a, z) in
                               enumerate(spans)], what=f"{fn.__name__} of a part of the batch")
            res = [r for part in parts for r in part]
            if gather is not None:
                result = gather(res, ax, devs[0], kind, state)
            else:
                result = _gather_default(res, (ax or 0) + out_offset, devs[0], kind)
            if out is not None:
                target = result[0] if isinstance(result, tuple) else result
                if isinstance(out, torch.Tensor):
                    out.copy_(torch.as_tensor(target).to(out.device))
                else:
                    out[...] = np.asarray(target)
                result = (out, *result[1:]) if isinstance(result, tuple) else out
            return result

        if not has_device:
            wrapper.__doc__ = _document_device(fn.__doc__)
        wrapper.__signature__ = sig if has_device else sig.replace(  # type: ignore[attr-defined]
            parameters=[*sig.parameters.values(),
                        inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY,
                                          default=None)])
        return wrapper

    return deco


def _pipelined_upload(arguments: dict, name: str, dev: torch.device,
                      split_axis: SplitAxis) -> bool:
    """Whether a one-device call should stream its host batch to the GPU in sub-batches
    (:func:`~.runner.transfer_batches`) rather than upload it whole before computing.

    Large host batches (NumPy or CPU tensors of at least two sub-batches) bound for a CUDA
    device: there the copies then overlap the compute, as with a device list (measured on
    an H200 in ``benchmarks/results/multigpu.md``: a whole upload of 6.5 GB before the
    compute took about twice as long as the pipelined transfer).
    """
    if dev.type != "cuda":
        return False
    x = arguments.get(name)
    if isinstance(x, torch.Tensor):
        if x.device.type != "cpu":
            return False
        nbytes = x.numel() * x.element_size()
    elif isinstance(x, np.ndarray):
        nbytes = x.nbytes
    else:
        return False
    if nbytes < 2 * SUB_BATCH_BYTES:
        return False
    return split_axis(tuple(x.shape), arguments) == 0


_DEVICE_DOC = """    device : str, torch.device, sequence of them or "cuda:all", optional
        Where to compute: ``None`` (default) where the input is; one device moves the work
        there; a list spreads the batch over the devices and gathers the result on the first
        (:mod:`fastmoments.parallel`, ``docs/multigpu.md``).

"""


def _document_device(doc: str | None) -> str | None:
    """The docstring with the ``device`` parameter that :func:`batched` adds, before Returns."""
    if not doc:
        return doc
    mark = "\n    Returns\n    -------"
    if mark not in doc:
        return doc
    head, tail = doc.split(mark, 1)
    return head.rstrip("\n") + "\n" + _DEVICE_DOC + mark.lstrip("\n") + tail


def _gather_default(res: list[Any], dim: int, dev0: torch.device, kind: ArrayKind) -> Any:
    first = res[0]
    if isinstance(first, tuple):  # (per-item result, descriptions such as frequencies)
        return (_gather_default([r[0] for r in res], dim, dev0, kind), *first[1:])
    if isinstance(first, torch.Tensor):
        return finish(gather_tensors(res, None if kind.numpy else dev0, dim=dim), kind)
    if isinstance(first, np.ndarray):
        return np.concatenate(res, axis=dim) if len(res) > 1 else first
    return first


def leading_axis(core: int) -> SplitAxis:
    """Split along axis 0 when there is a batch axis in front of ``core`` item axes."""

    def pick(shape: tuple[int, ...], arguments: dict) -> int | None:
        return 0 if len(shape) > core else None

    return pick
