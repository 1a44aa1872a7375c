"""Running a filter bank along one axis of a batch: extension, chunking, output kind."""

from __future__ import annotations

import math
import numbers
import threading
from typing import Any

import numpy as np
import torch

from .._array import (
    ArrayKind,
    as_tensor,
    clear_unless_finite,
    complex_dtype,
    finite_flag,
    input_shape,
    to_output,
)
from .._cuda_graph import MAX_BYTES, graph_cache, plain_key
from .._memory import below_minimum, memory_budget, rows_per_chunk
from .._progress import progress_bar
from .._route import Route
from .._triton import on_tensor_device
from .._validate import check_choice
from . import cuda_sft, triton_sft
from .boundary import MODES, extend
from .chunked import chunked_apply, fused_eligible
from .direct import DirectBank
from .routes import DEFAULT_ENGINE, numba_available, sft_backend
from .sliding import ENGINES, SFTBank

__all__ = [
    "DEFAULT_ENGINE",
    "BankPlan",
    "apply_bank",
    "as_signal",
    "bank_units",
    "check_budget",
    "check_cval",
    "check_grad_out",
    "deferred_flag",
    "give_flag",
    "graph_cache",
    "job_bar",
    "normalize_axis",
    "numba_available",
    "numpy_result",
    "output_buffer",
    "output_target",
    "require_finite",
    "resolve_engine",
    "result_dtype",
]

# chunk length of the torch chunked engine per device (CPU: larger products run faster)
_CHUNK = {"cpu": 64, "cuda": 32}

# Output values from which a call may show a progress bar (``progress=None``; it then appears
# only after a second): about 10 ms of work on one CPU core, 2 ms on an H100.
_LARGE_JOB = {"cpu": 1 << 22}
_LARGE_JOB_ACCELERATOR = 1 << 28


def as_signal(x: Any, check_finite: bool = True) -> tuple[torch.Tensor, Any, torch.Tensor | None]:
    """:func:`~fastmoments._array.as_tensor` for signals, refusing 0-d input by name.

    Returns the tensor, its kind and a device flag telling whether it is finite (``None`` when
    ``check_finite`` is false); callers queue their work and then call :func:`require_finite`
    (so that on a GPU the check's synchronisation overlaps the filtering instead of preceding
    it).
    """
    ndim = len(input_shape(x, "x"))
    if ndim < 1:
        raise ValueError("x must have at least 1 dimension (a signal), got a scalar")
    t, kind = as_tensor(x, "x", min_ndim=1, check_finite=False)
    return t, kind, (finite_flag(t) if check_finite else None)


class _Flags:
    """Device flag bytes known to hold 1, reused by the calls that check their input with a
    deferred flag (:func:`deferred_flag`): a call takes one (allocated and set by one fill
    launch only when none is free), and gives it back (:func:`give_flag`) once it has read
    it as 1 after its synchronisation, when nothing queued can write it any more. A flag that
    was cleared, or never read (an exception between the launch and the read), is not given
    back. On an H200 the fill's launch was the batch call's largest host cost after the wait
    (about 95 µs of 0.69 ms for 1000 × 102400 samples, torch.profiler)."""

    def __init__(self, keep: int = 8) -> None:
        self.keep = keep
        self._free: dict[torch.device, list[torch.Tensor]] = {}
        self._lock = threading.Lock()

    def take(self, device: torch.device) -> torch.Tensor:
        with self._lock:
            free = self._free.get(device)
            if free:
                return free.pop()
        with torch.inference_mode(False):  # an ordinary tensor, written in any mode
            return torch.ones((), dtype=torch.uint8, device=device)

    def give(self, flag: torch.Tensor) -> None:
        with self._lock:
            free = self._free.setdefault(flag.device, [])
            if len(free) < self.keep:
                free.append(flag)


_FLAGS = _Flags()


def deferred_flag(t: torch.Tensor, engine: str, check_finite: bool = True
                  ) -> torch.Tensor | None:
    """The NaN/inf flag on ``t`` for :func:`apply_bank` to clear, when the chunked engine runs
    ``t`` on a GPU: a ``uint8`` device byte holding 1, which its fused kernels clear as they
    read the samples, instead of a separate pass over the input (measured on an H100:
    ``git show a8e7402:benchmarks/results/signal_batch_public.md``, a result removed from the
    tree with the benchmark's other runs); reused from call to call (:class:`_Flags`:
    read it with :func:`require_finite` and give it back with :func:`give_flag`). ``None``
    elsewhere (or without the check): the caller checks with
    :func:`~fastmoments._array.finite_flag`."""
    if (not check_finite or engine != "chunked" or not t.is_cuda
            or (t.requires_grad and torch.is_grad_enabled())
            or torch.cuda.is_current_stream_capturing()):
        return None
    return _FLAGS.take(t.device)


def give_flag(flag: torch.Tensor | None) -> None:
    """Give a flag of :func:`deferred_flag` back for reuse, after :func:`require_finite` read
    it as 1 (``None``: nothing to give)."""
    if flag is not None:
        _FLAGS.give(flag)


def require_finite(flag: torch.Tensor | None, name: str = "x") -> None:
    """Raise the input error for a false finiteness flag (``None``: the check was off)."""
    if flag is not None and not bool(flag):
        raise ValueError(f"{name} contains NaN or infinity")


def _overlaps(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether the memory spans of two tensors intersect (conservative, like
    :func:`numpy.may_share_memory`)."""
    if a.numel() == 0 or b.numel() == 0 or a.device != b.device:
        return False

    def span(t: torch.Tensor) -> tuple[int, int]:
        lo = t.data_ptr() + t.element_size() * sum(
            (n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True) if s < 0)
        hi = t.data_ptr() + t.element_size() * (1 + sum(
            (n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True) if s > 0))
        return lo, hi

    (a0, a1), (b0, b1) = span(a), span(b)
    return a0 < b1 and b0 < a1


def output_buffer(out: Any, x: Any, kind: ArrayKind, shape: tuple[int, ...],
                  dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """Check a caller's ``out=`` array and return it as a tensor sharing its memory.

    Parameters
    ----------
    out : numpy.ndarray or torch.Tensor
        The caller's preallocated output: a NumPy array for NumPy input, a tensor (on the
        input's device) for tensor input; exactly ``shape`` and ``dtype``, writeable, not
        overlapping ``x`` and (tensor) not requiring grad. Any strides are accepted (NumPy:
        no negative ones); C-contiguous ones let the engine write straight into it.
    x : array_like or torch.Tensor
        The caller's input, for the overlap check.
    kind : ArrayKind
        What the caller passed in.
    shape : tuple of int
        The result's shape.
    dtype : torch.dtype
        The result's dtype.
    device : torch.device
        The result's device.

    Returns
    -------
    torch.Tensor
        ``out`` itself (tensor) or a tensor view of it (NumPy).

    Raises
    ------
    TypeError
        For the wrong kind of array or the wrong dtype.
    ValueError
        For the wrong shape or device, a read-only or overlapping ``out``, negative NumPy
        strides, or an ``out`` tensor that requires grad.
    """
    want = _numpy_dtype(dtype) if kind.numpy else dtype
    if kind.numpy:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"out must be a numpy.ndarray for NumPy input, got "
                            f"{type(out).__name__}")
        if out.dtype != want:
            raise TypeError(f"out must have dtype {want}, got {out.dtype}")
    else:
        if not isinstance(out, torch.Tensor):
            raise TypeError(f"out must be a torch.Tensor for tensor input, got "
                            f"{type(out).__name__}")
        if out.dtype != dtype:
            raise TypeError(f"out must have dtype {dtype}, got {out.dtype}")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"out must have shape {tuple(shape)}, got {tuple(out.shape)}")
    if kind.numpy:
        if any(st < 0 for st in out.strides):
            raise ValueError("out must not have negative strides")
        if not out.flags.writeable:
            raise ValueError("out is read-only")
        if isinstance(x, np.ndarray) and np.may_share_memory(x, out):
            raise ValueError("out must not overlap the input x")
        return torch.from_numpy(out)
    if out.device != device:
        raise ValueError(f"out must be on {device} like the input, got {out.device}")
    if out.requires_grad:
        raise ValueError("out must not require grad (it is written in place)")
    if isinstance(x, torch.Tensor) and _overlaps(x, out):
        raise ValueError("out must not overlap the input x")
    return out


def _numpy_dtype(dtype: torch.dtype) -> np.dtype:
    """The NumPy dtype that torch maps ``dtype`` to."""
    return torch.empty(0, dtype=dtype).numpy().dtype


def numpy_result(shape: tuple[int, ...], dtype: torch.dtype) -> np.ndarray:
    """An uninitialised NumPy array for a result going back to a NumPy caller, 64-byte aligned.

    Allocated by NumPy rather than torch because NumPy advises the kernel to back large arrays
    with transparent huge pages (Linux), which makes their first touch several times cheaper: a
    52 MB CWT output costs ~5 ms instead of ~18 ms of page faults on the development machine.
    Aligned to 64 bytes (a view into a slightly larger buffer; NumPy itself guarantees 16) so
    that the CPU CWT kernels can write it with streaming stores (:mod:`._numba_cwt`: 27
    instead of 50 ms for a 64-scale CWT of 102400 float32 samples, which writes 52 MB).
    """
    dt = _numpy_dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
    raw = np.empty(nbytes + 64, dtype=np.uint8)
    start = (-raw.ctypes.data) % 64
    return raw[start: start + nbytes].view(dt).reshape(shape)


def result_dtype(bank, dtype: torch.dtype) -> torch.dtype:
    """The dtype of ``bank`` applied to signals of ``dtype``."""
    return complex_dtype(dtype) if getattr(bank, "complex_output", False) else dtype


def check_grad_out(t: torch.Tensor, out: Any) -> None:
    """Refuse ``out`` while a gradient is recorded for the working tensor ``t`` (as torch's own
    ``out=`` functions do)."""
    if out is not None and torch.is_grad_enabled() and t.requires_grad:
        raise ValueError("out cannot be used while a gradient is recorded for x (the result "
                         "would not be differentiable); call without out, or under "
                         "torch.no_grad()")


def output_target(out: Any, x: Any, t: torch.Tensor, kind: ArrayKind, shape: tuple[int, ...],
                  dtype: torch.dtype) -> tuple[Any, torch.Tensor | None]:
    """Where a call writes its result: ``(returned, target)``.

    With ``out``: the caller's array, checked (:func:`check_grad_out`, :func:`output_buffer`),
    and a tensor sharing its memory. Without it, for NumPy input: a fresh NumPy array
    (:func:`numpy_result`) and its tensor view. Otherwise ``(None, None)``: the engine
    allocates, and the caller converts its result with :func:`~fastmoments._array.to_output`.
    """
    if out is not None:
        check_grad_out(t, out)
        return out, output_buffer(out, x, kind, shape, dtype, t.device)
    if kind.numpy:
        res = numpy_result(shape, dtype)
        return res, torch.from_numpy(res)
    return None, None


def check_budget(budget: Any) -> float | None:
    """``memory_budget``: ``None``, or a finite real number > 0 (bytes, or a fraction ≤ 1 of
    the free memory)."""
    if budget is None:
        return None
    if isinstance(budget, (bool, np.bool_)) or not isinstance(
            budget, (int, float, np.integer, np.floating)):
        raise TypeError(f"memory_budget must be a real number or None, got {budget!r}")
    if not (np.isfinite(budget) and budget > 0):
        raise ValueError(f"memory_budget must be finite and > 0, got {budget}")
    return float(budget)


def check_cval(cval: Any) -> float:
    """``cval`` as a float: a finite real number (not a bool or a string)."""
    if isinstance(cval, (bool, np.bool_)) or not isinstance(
            cval, (int, float, np.integer, np.floating)):
        raise TypeError(f"cval must be a real number, got {cval!r}")
    cval = float(cval)
    if not math.isfinite(cval):
        raise ValueError(f"cval must be finite, got {cval}")
    return cval


def normalize_axis(axis: Any, ndim: int, name: str = "axis") -> int:
    """Check an axis index against ``ndim`` and make it non-negative."""
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {axis!r}")
    axis = int(axis)  # NumPy's integers too
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}={axis} is out of range for an input with {ndim} dimensions")
    return axis % ndim


def resolve_engine(engine: str, method: str, device: torch.device, bank=None) -> str:
    """The engine to use: ``"auto"`` takes the route table's (:func:`.routes.sft_backend`:
    the numba recursions for a real bank on the CPU, when ``bank`` is given, else
    :data:`~.routes.DEFAULT_ENGINE`)."""
    check_choice("engine", engine, ("auto", *ENGINES))
    if method == "direct":
        return "direct"
    if engine == "auto":
        real = isinstance(bank, SFTBank) and not bank.complex_output
        if sft_backend(method, device.type, real).backend == "numba":
            return "numba"
        return DEFAULT_ENGINE.get((device.type, method), "chunked")
    if engine == "prefix" and method == "asft":
        raise ValueError("engine='prefix' computes the plain SFT only; with method='asft' use "
                         "engine='chunked', 'numba', 'recursive' or 'sliding' (or 'auto')")
    if engine == "numba" and device.type != "cpu":
        raise ValueError(f"engine='numba' runs on the CPU only, got a tensor on {device}; use "
                         f"engine='auto' or 'chunked'")
    if engine == "numba" and not numba_available():
        raise ValueError("engine='numba' needs the numba package (pip install numba); use "
                         "engine='auto' or 'chunked'")
    return engine


def apply_bank(bank, t: torch.Tensor, *, axis: int, mode: str, cval: float, engine: str,
               budget: int | float | None = None, out: torch.Tensor | None = None,
               progress: bool | None = None, desc: str = "filtering",
               tick=None, flag: torch.Tensor | None = None) -> torch.Tensor:
    """Apply ``bank`` along ``axis`` of the tensor ``t``.

    Returns ``(n_channels, *t.shape)`` (channel axis first), real or complex: ``out`` when
    given (a checked tensor of that shape and dtype; see :func:`output_buffer`). The chunked
    engine writes straight into ``out`` when the time axis is its last (contiguous) axis;
    otherwise the result is copied into it.

    ``progress`` shows a tqdm bar labelled ``desc`` that counts (signal, row group) pairs, one
    row group per output channel for a CWT (see :func:`fastmoments._progress.progress_bar`;
    ``None``: for large jobs that run longer than a second). A caller with a bar of its own
    passes its ``update`` as ``tick`` instead.

    ``flag`` (see :func:`deferred_flag`): a verdict that is cleared when ``t`` holds NaN or
    infinity, checked by the fused kernels as they read ``t`` (one torch pass on the other
    paths); nothing waits for it.

    A batch that one fused kernel takes whole (:func:`_fused_engine`) runs in one piece: those
    kernels need little scratch beyond the result, so the free memory is not asked for.
    """
    check_choice("mode", mode, MODES)
    axis = normalize_axis(axis, t.ndim)
    last = axis == t.ndim - 1  # the usual case: no axis moves (each costs ~5 µs of dispatch)
    moved = t if last else torch.movedim(t, axis, -1)
    shape = moved.shape
    n = shape[-1]
    if t.numel() == 0:  # no signals, or signals of no samples: an empty result, as scipy
        res = torch.empty((bank.n_channels, *t.shape), dtype=result_dtype(bank, t.dtype),
                          device=t.device)
        if torch.is_grad_enabled() and t.requires_grad:
            res = res + 0 * t.sum()  # keeps the (empty) graph connected to x
        return res if out is None else out
    rows = moved.reshape(-1, n)
    fused = None
    if engine == "chunked" and t.is_cuda and not rows.requires_grad:
        fused = _fused_engine(bank, rows, mode, cval)
    pad = bank.pad
    m = n + 2 * pad
    item = 16 if t.dtype == torch.float64 or engine == "prefix" else 8
    out_items = bank.n_channels * n * (2 if getattr(bank, "complex_output", False) else 1)
    if out is not None and engine in ("chunked", "numba") and last:
        out_items = 0  # written straight into the caller's out (a memmap: no RAM needed)
    if engine in ("chunked", "numba"):
        per_row = item * (2 * m + 2 * out_items) + 8 * m  # + float64 anchors
    else:
        n_rows = getattr(bank, "max_group_rows", 2 * bank.n_channels)
        per_row = item * (n_rows * (m + 1) * (6 if engine != "direct" else 1) + 2 * out_items)
    if fused is not None or below_minimum(per_row * rows.shape[0], budget):
        chunk = rows.shape[0]
    else:
        chunk = rows_per_chunk(per_row, memory_budget(t.device, budget), rows.shape[0],
                               what=f"filtering signals of {n} samples with "
                                    f"{bank.n_channels} output channels")
    n_groups = bank_units(bank)
    bar = None
    if tick is None:
        bar = job_bar(rows.shape[0] * n_groups, rows.shape[0] * n * bank.n_channels, t.device,
                      progress, desc, "signal" if n_groups == 1 else "group")
        tick = bar.update
    try:
        return _apply_rows(bank, t, rows, shape, axis=axis, last=last, mode=mode, cval=cval,
                           engine=engine, chunk=chunk, out=out, n_groups=n_groups, tick=tick,
                           flag=flag, fused=fused)
    finally:
        if bar is not None:
            bar.close()


def bank_units(bank) -> int:
    """Progress units per signal of ``bank``: its row groups (one per scale of a CWT), or the
    channels of a direct (convolution) bank."""
    return len(bank.groups) if hasattr(bank, "groups") else bank.n_channels


def job_bar(total: int, values: int, device: torch.device, progress: bool | None, desc: str,
            unit: str = "signal"):
    """The progress bar of a job of ``total`` units writing ``values`` output values
    (automatic: only from :data:`_LARGE_JOB` values, see :func:`~fastmoments._progress.
    progress_bar`)."""
    large = values >= _LARGE_JOB.get(device.type, _LARGE_JOB_ACCELERATOR)
    return progress_bar(total, desc=desc, show=progress, large=large, unit=unit)


def _apply_rows(bank, t: torch.Tensor, rows: torch.Tensor, shape: torch.Size, *, axis: int,
                last: bool, mode: str, cval: float, engine: str, chunk: int,
                out: torch.Tensor | None, n_groups: int, tick,
                flag: torch.Tensor | None = None, fused=None) -> torch.Tensor:
    """The body of :func:`apply_bank`: ``rows`` ``(B, N)`` (``t`` with time last, flattened)
    in blocks of ``chunk`` signals; ``tick(k)`` reports ``k`` more (signal, group) pairs.
    ``fused``: what :func:`_fused_engine` chose for all of ``rows`` (``chunk`` is then all of
    them)."""
    n = shape[-1]
    if flag is not None and engine != "chunked":  # only the fused kernels check on the way
        clear_unless_finite(flag, rows)
        flag = None
    grad = torch.is_grad_enabled() and t.requires_grad
    if engine == "numba" and grad:  # compiled loops record no graph: the torch engine does
        engine = "chunked"
    res = direct = None  # direct: the result as (rows, n_channels, n), written straight in
    if engine in ("chunked", "numba") and not grad:
        res, direct = _direct_target(bank, t, shape, axis, last, out)
    run = _numba if engine == "numba" else _chunked
    checked = {} if flag is None else {"flag": flag}
    if fused is not None:
        checked["fused"] = fused
    if direct is not None:
        if chunk >= rows.shape[0]:  # one block (no slicing: each view costs dispatch time)
            run(bank, rows, mode, cval, out=direct, tick=tick, **checked)
        else:
            for i in range(0, rows.shape[0], chunk):
                run(bank, rows[i:i + chunk], mode, cval, out=direct[i:i + chunk], tick=tick,
                    **checked)
        if out is not None or last:
            return out if out is not None else res
        return torch.movedim(res, -1, axis + 1)
    outs = []
    for i in range(0, rows.shape[0], chunk):
        part = rows[i:i + chunk]
        if engine in ("chunked", "numba"):
            outs.append(run(bank, part, mode, cval, tick=tick, **checked))
        else:
            xp = extend(part, bank.pad, bank.pad, mode, cval)
            outs.append(bank.apply(xp, n, engine))
            tick(part.shape[0] * n_groups)
    y = torch.cat(outs, dim=0) if len(outs) > 1 else outs[0]  # (B, C, n)
    y = y.reshape(*shape[:-1], bank.n_channels, n)
    y = torch.movedim(y, -2, 0)  # (C, *batch, n)
    y = torch.movedim(y, -1, axis + 1)
    if out is not None:
        return out.copy_(y)
    return y


def _direct_target(bank, t: torch.Tensor, shape: torch.Size, axis: int, last: bool,
                   out: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The result of :func:`_apply_rows` (``out``, or a new tensor allocated with time last
    and returned as a view with time at ``axis``) and, when the products can be written
    straight into it, its view ``(rows, n_channels, n)`` (else ``None``)."""
    n = shape[-1]
    if out is None:  # allocated with time last; returned as a view with time at axis
        res = torch.empty((bank.n_channels, *shape), dtype=result_dtype(bank, t.dtype),
                          device=t.device)
    else:
        res = out if last else torch.movedim(out, axis + 1, -1)
    # (*batch, channels, n); one channel: moving it changes no memory order
    o = res if res.ndim == 2 or bank.n_channels == 1 else torch.movedim(res, 0, -2)
    if o.stride(-1) == 1 or n == 1:
        try:
            return res, o.view(-1, bank.n_channels, n)
        except RuntimeError:  # batch axes that cannot be merged: compute, then copy
            pass
    return res, None


def _fused_engine(bank, rows: torch.Tensor, mode: str, cval: float, cuda: bool = True):
    """The fused GPU engine for ``rows`` ``(B, N)`` (float32/float64 on CUDA, no gradient
    recorded), as a function ``f(bank, rows, mode, cval, *, out, flag)``; ``None`` for the
    torch engine. Large float32 batches of a one-channel filter take the CUDA C++ kernel of
    :mod:`.cuda_sft` when CuPy is installed (:func:`~fastmoments.signal.cuda_sft.takes`; not
    while launches are recorded for replay or a graph is captured, nor with ``cuda=False``),
    other calls the Triton kernels of :mod:`.triton_sft` when they apply."""
    if cuda and not torch.cuda.is_current_stream_capturing():
        run = _cuda_kernel(bank, rows, mode)
        if run is not None:
            return run
    if (triton_sft.available() and triton_sft.takes(rows.dtype, mode, cval)
            and fused_eligible(bank, triton_sft.FUSED_CHUNK)):
        return _triton_fused
    return None


def _cuda_kernel(bank, rows: torch.Tensor, mode: str):
    """The CUDA C++ kernel of :mod:`.cuda_sft` for ``rows`` as a function ``f(bank, rows, mode,
    cval, *, out, flag)``, or ``None`` when it does not take them
    (:func:`~fastmoments.signal.cuda_sft.takes`)."""
    lay = cuda_sft.eligible_layout(bank, rows, mode)
    return None if lay is None else cuda_sft.Launch(lay)


def _triton_fused(bank, rows: torch.Tensor, mode: str, cval: float, *,
                  out: torch.Tensor | None = None,
                  flag: torch.Tensor | None = None) -> torch.Tensor:
    """:func:`~fastmoments.signal.triton_sft.fused_apply` (``flag``: the NaN/inf byte)."""
    return triton_sft.fused_apply(bank, rows, mode, cval, out=out, flag=flag)


def _chunked(bank, rows: torch.Tensor, mode: str, cval: float,
             out: torch.Tensor | None = None, tick=None,
             flag: torch.Tensor | None = None, fused=None) -> torch.Tensor:
    """The chunked engine: the fused GPU kernels of :func:`_fused_engine` when they apply (on
    CUDA, with no gradient needed; ``fused``: the caller's choice for these rows), else the
    torch implementation (which writes into ``out``, ``(B, n_channels, N)``, when given).
    ``tick(k)`` reports ``k`` more (signal, group) pairs; ``flag`` is cleared when ``rows``
    holds NaN or infinity (see :func:`apply_bank`)."""
    if rows.device.type == "cuda" and not rows.requires_grad:
        contiguous = out is None or out.stride(-1) == 1  # (the CUDA C++ kernel's output)
        if fused is None or not contiguous:
            fused = _fused_engine(bank, rows, mode, cval, cuda=contiguous)
    if fused is not None:
        y = fused(bank, rows, mode, cval, out=out, flag=flag)
        if tick is not None:
            tick(rows.shape[0] * bank_units(bank))
        return y
    if flag is not None:
        clear_unless_finite(flag, rows)
    return chunked_apply(bank, rows, mode, cval, chunk=_CHUNK.get(rows.device.type, 32),
                         out=out, tick=tick)


def _numba(bank, rows: torch.Tensor, mode: str, cval: float,
           out: torch.Tensor | None = None, tick=None) -> torch.Tensor:
    """The numba engine (imported here on first use), writing into ``out`` ``(B, n_channels,
    N)`` when given: the SIMD kernels of :mod:`._numba_cwt` for a complex bank of several
    channels with one row group each (a CWT), the float64 recursions of :mod:`._numba_sft`
    otherwise. ``tick(k)`` reports ``k`` more (signal, group) pairs."""
    if bank.complex_output and bank.n_channels > 1:
        from ._numba_cwt import eligible, numba_cwt_apply

        if eligible(bank):
            y = numba_cwt_apply(bank, rows, mode, cval, out=out)
            if tick is not None:
                tick(rows.shape[0] * bank_units(bank))
            return y
    from ._numba_sft import numba_apply

    y = numba_apply(bank, rows, mode, cval, out=out)
    if tick is not None:
        tick(rows.shape[0] * bank_units(bank))
    return y


def filter_along(bank, method: str, x: Any, *, axis: int, mode: str, cval: float, engine: str,
                 memory_budget: float | None, check_finite: bool = True,
                 out: Any = None, progress: bool | None = None,
                 desc: str = "filtering") -> Any:
    """Apply a plan's bank to ``x`` along one axis: the shared body of the plans' ``__call__``
    (input checks, engine choice, boundary extension, output in the caller's kind, or written
    into ``out``, progress bar)."""
    t, kind, _ = as_signal(x, check_finite=False)
    normalize_axis(axis, t.ndim)
    eng = resolve_engine(engine, method, t.device, bank)
    if isinstance(bank, DirectBank):  # a plan whose kernel is applied directly (tiny σ)
        eng = "direct"
    flag = deferred_flag(t, eng, check_finite)
    finite = finite_flag(t) if check_finite and flag is None else None
    out, target = output_target(out, x, t, kind, tuple(t.shape), result_dtype(bank, t.dtype))
    check_choice("mode", mode, MODES)
    y = apply_bank(bank, t, axis=axis, mode=mode, cval=check_cval(cval), engine=eng,
                   budget=check_budget(memory_budget), out=None if target is None else target[None],
                   progress=progress, desc=desc, flag=flag)[0]
    if check_finite:
        require_finite(finite if flag is None else flag)
        give_flag(flag)  # read as 1: reused by the next call
    return out if out is not None else to_output(y, kind)


@on_tensor_device
def graphed_call(plan: Any, x: Any, run, *, axis: Any, mode: Any, cval: Any, engine: Any,
                 memory_budget: Any, check_finite: bool, out: Any, progress: Any,
                 bytes_per_sample: int) -> Any:
    """A one-axis plan's ``__call__``: ``run(x, axis=..., mode=..., cval=..., engine=...,
    memory_budget=..., check_finite=..., out=..., progress=...)``, replayed from a CUDA graph
    of :func:`graph_cache` ``(plan)`` from the third call of a key (a C-contiguous CUDA tensor,
    plain options, no ``out``, ``progress`` or ``memory_budget``; the result holds
    ``bytes_per_sample`` bytes per input sample), else run eagerly. A replay restores the
    plan's ``route`` and ``method`` of the captured call. A tensor on a CUDA device that is
    not the current one is worked on with its device made current for the call
    (:func:`~fastmoments._triton.on_tensor_device`)."""
    if (type(x) is torch.Tensor and x.is_cuda and out is None and progress is None
            and memory_budget is None
            and (x.element_size() + bytes_per_sample) * x.numel() <= MAX_BYTES):
        key = plain_key("call", axis, mode, cval, engine)
        if key is not None:
            hit = graph_cache(plan).call(
                x, key, lambda t: run(t, axis=axis, mode=mode, cval=cval, engine=engine,
                                      memory_budget=None, check_finite=False, out=None,
                                      progress=None),
                check_finite, bytes_per_sample * x.numel(),
                lambda: {k: plan.__dict__[k] for k in ("_route", "method")
                         if k in plan.__dict__})
            if hit is not None:
                plan.__dict__.update(hit[1])  # the route (and method) of the captured call
                return hit[0]
    return run(x, axis=axis, mode=mode, cval=cval, engine=engine, memory_budget=memory_budget,
               check_finite=check_finite, out=out, progress=progress)


class BankPlan:
    """Base of the one-axis plans (:class:`~fastmoments.signal.GaussianFilter`,
    :class:`~fastmoments.signal.MorletTransform`): a ``bank`` and a ``method`` applied along
    one axis of any batch."""

    bank: Any
    method: str

    def __call__(self, x: Any, *, axis: int = -1, mode: str = "reflect", cval: float = 0.0,
                 engine: str = "auto", memory_budget: float | None = None,
                 check_finite: bool = True, out: Any = None,
                 progress: bool | None = None) -> Any:
        """Filter ``x`` along ``axis``: same shape, real (Gaussian) or complex (Morlet) output;
        NumPy in gives NumPy out, torch in gives torch out on the same device.

        Parameters
        ----------
        x : array_like or torch.Tensor
            Real signals; never modified.
        axis : int
            The axis holding time.
        mode : {"reflect", "nearest", "mirror", "wrap", "constant"}
            Extension beyond the ends, as in :mod:`scipy.ndimage`.
        cval : float
            Value outside the signal for ``mode="constant"``.
        engine : {"auto", "chunked", "numba", "prefix", "recursive", "sliding"}
            How the SFT components are computed (``"auto"``: the measured default;
            ``"numba"``: compiled CPU loops, which fall back to ``"chunked"`` while a gradient
            is recorded).
        memory_budget : float, optional
            Scratch memory in bytes (or a fraction of the free memory).
        check_finite : bool
            Check ``x`` for NaN and infinity (default). ``False`` skips the check and its one
            host synchronisation, so that the call can be captured in a CUDA graph; non-finite
            input then gives non-finite output instead of an error.
        out : numpy.ndarray or torch.Tensor, optional
            Preallocated output, written in place and returned (like NumPy's ``out=``): a
            NumPy array for NumPy input, a tensor on the input's device for tensor input, of
            ``x``'s shape and the result dtype (float32/float64 for the Gaussian,
            complex64/complex128 for the Morlet transform), not overlapping ``x``; written
            straight into when C-contiguous (else through a temporary). Reusing one ``out``
            saves allocating (and first touching) the output on every call. Not allowed
            while a gradient is recorded for ``x``.
        progress : bool, optional
            Show a tqdm progress bar: ``True`` always, ``False`` never, ``None`` (default) for
            large jobs (about 10 ms of work and more on the CPU) once they have run for a
            second, so that short calls print nothing.

        Returns
        -------
        numpy.ndarray or torch.Tensor
            The filtered signals (``out`` when given).

        Raises
        ------
        TypeError
            For an ``out`` of the wrong kind or dtype, or a ``progress`` other than ``True``,
            ``False`` or ``None``.
        ValueError
            For a bad ``axis``/``mode``/``engine``, NaN or infinity in ``x``, or an ``out`` of
            the wrong shape or device, read-only, overlapping ``x``, or given while a gradient
            is recorded.
        """
        def run(t: Any, **kw: Any) -> Any:
            self._route = self.route_for(t, kw["engine"], kw["axis"])
            return filter_along(self.bank, self.method, t, desc=type(self).__name__, **kw)

        return graphed_call(self, x, run, axis=axis, mode=mode, cval=cval, engine=engine,
                            memory_budget=memory_budget, check_finite=check_finite, out=out,
                            progress=progress, bytes_per_sample=16)

    @property
    def route(self) -> Route | None:
        """The :class:`~fastmoments._route.Route` of the plan's latest call (``None`` before
        the first): the method, backend and kernel that ran, and why."""
        return self.__dict__.get("_route")

    def route_for(self, x: Any, engine: Any = "auto", axis: Any = -1) -> Route:
        """The route of a call on ``x`` along ``axis`` with ``engine``
        (:func:`.routes.sft_backend`; a large float32 CUDA batch that the CUDA C++ kernel
        takes, :func:`.cuda_sft.takes_shape`), decided once per (device, engine, gradient,
        batch kernel) and kept by the plan."""
        dev = x.device.type if isinstance(x, torch.Tensor) else "cpu"
        grad = isinstance(x, torch.Tensor) and x.requires_grad and torch.is_grad_enabled()
        eng = engine if type(engine) is str else "auto"
        big = False
        if dev == "cuda" and x.dtype == torch.float32 and x.ndim and type(axis) is int:
            n = x.shape[axis] if -x.ndim <= axis < x.ndim else 0
            big = (n > 0 and not isinstance(self.bank, DirectBank)
                   and cuda_sft.takes_shape(self.bank, x.numel() // n, n))
        routes = self.__dict__.setdefault("_routes", {})
        route = routes.get((dev, eng, grad, big))
        if route is None:
            bank = self.bank
            if isinstance(bank, DirectBank):
                route = Route(self.method, "torch", "direct", "a kernel of a few taps")
            else:
                fused = (dev == "cuda" and triton_sft.available()
                         and fused_eligible(bank, triton_sft.FUSED_CHUNK))
                route = sft_backend(self.method, dev, not bank.complex_output, eng, grad,
                                    fused)
                if big and route.backend == "triton":
                    route = Route(self.method, "cuda", "sft_rows", "cuda_batch")
            routes[(dev, eng, grad, big)] = route
        return route
