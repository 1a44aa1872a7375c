"""Continuous wavelet transform over many scales at once (PyWavelets-style interface): the
Morlet (its SFT bank, here) and the derivatives of Gaussians (:mod:`.dog`), every sample or
every ``hop``-th (:mod:`.hop`)."""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .._array import complex_dtype, to_output
from .._cache import plan_cache
from .._memory import format_bytes, free_memory
from .._memory import memory_budget as _budget
from .._progress import progress_bar
from .._route import Route
from .._threads import cpu_call, per_value
from .._validate import check_choice, check_int, check_positive_float
from ..parallel.plans import batched, free_axis
from ._apply import (
    _numpy_dtype,
    apply_bank,
    as_signal,
    check_budget,
    check_cval,
    graphed_call,
    job_bar,
    normalize_axis,
    output_target,
    require_finite,
    resolve_engine,
)
from .boundary import MODES
from .direct import DirectBank
from .dog import _dog_cwt, check_dog_scales
from .gaussian import MAX_SIGMA, GaussianFilter, _cached_plan
from .hop import cwt_hop, cwt_hop_prefix, prefix_hop_applies
from .morlet import (
    APPROXIMATIONS,
    METHODS,
    MorletTransform,
    complex_call,
    is_complex_input,
    resolve_method,
)
from .morse import GeneralizedMorse, morse_cwt
from .routes import cwt_hop_route, cwt_route, cwt_simd, morse_route
from .sliding import SFTBank
from .wavelets import DerivativeOfGaussian, Morlet

__all__ = ["CWT", "cwt"]

#: Scales from which building a plan's filters shows a progress bar (after a second): a fit
#: takes milliseconds, so thousands of new scales take minutes.
FIT_BAR_SCALES = 64


Wavelet = Morlet | DerivativeOfGaussian | GeneralizedMorse


def _check_wavelet(wavelet: Any) -> Wavelet:
    """The wavelet of a CWT: ``Morlet()`` for ``None``, a :class:`Morlet`, a
    :class:`DerivativeOfGaussian` (:class:`MexicanHat` included) or a
    :class:`GeneralizedMorse`."""
    if wavelet is None:
        return Morlet()
    if not isinstance(wavelet, (Morlet, DerivativeOfGaussian, GeneralizedMorse)):
        raise TypeError(f"wavelet must be a fastmoments.Morlet, a fastmoments."
                        f"DerivativeOfGaussian (MexicanHat) or a fastmoments.GeneralizedMorse, "
                        f"got {wavelet!r}")
    return wavelet


def _morse_options(method: str, approximation: str) -> None:
    if method != "auto" or approximation != "direct":
        raise ValueError(f"method and approximation are options of the Morlet and DoG "
                         f"wavelets; a GeneralizedMorse runs in the frequency domain and takes "
                         f"method='auto' and approximation='direct' only, got method="
                         f"{method!r}, approximation={approximation!r}")


def _dog_options(approximation: str) -> None:
    if approximation != "direct":
        raise ValueError(f"approximation is an option of the Morlet wavelet (its kernel's "
                         f"approximation); a DerivativeOfGaussian takes 'direct' only, got "
                         f"{approximation!r}")


def _stack_banks(banks: Sequence[Any]):
    """One bank whose channel ``i`` is the single channel of ``banks[i]``."""
    if isinstance(banks[0], DirectBank):
        w = max(b.pad for b in banks)
        taps = np.zeros((len(banks), 2 * w + 1), dtype=np.complex128)
        for i, b in enumerate(banks):
            taps[i, w - b.pad: w + b.pad + 1] = b.taps[0]
        return DirectBank(taps, complex_output=True)
    cat = {name: np.concatenate([getattr(b, name) for b in banks])
           for name in ("omega", "alpha", "half", "shift", "mu", "nu")}
    channel = np.concatenate([np.full(b.n_rows, i, dtype=np.int64) for i, b in enumerate(banks)])
    return SFTBank(**cat, channel=channel, n_channels=len(banks), complex_output=True)


class CWT:
    """Plan for the continuous wavelet transform at a set of scales (Morlet, derivative of
    Gaussian or generalized Morse).

    Morlet: all scales share one bank of SFT rows: the chunked engine (the default) runs every
    scale in one pass (two fused kernels on a GPU); the row-by-row engines process the scales
    in groups that fit the memory budget. Derivative of Gaussian: one Gaussian derivative
    filter per scale (:func:`cwt`, Notes). Generalized Morse: the frequency domain
    (:mod:`~fastmoments.signal.morse`).

    Parameters
    ----------
    scales : sequence of float
        Scales σ in samples (the standard deviation of each wavelet's envelope).
    wavelet : Morlet, DerivativeOfGaussian or GeneralizedMorse
        The wavelet (default ``Morlet(xi=6.0)``).
    method, approximation, terms, truncate
        As in :class:`~fastmoments.signal.MorletTransform`, used at every scale
        (``method="auto"``, the default, runs the SFT, whose chunked engine applies
        short-window scales as Toeplitz products where that is faster:
        :func:`~fastmoments.signal.morlet.resolve_method`).

    Attributes
    ----------
    method : str
        The method run (``"sft"`` for ``"auto"``); ``requested``: the one given.
    plans : list of MorletTransform or GaussianFilter
        One plan per scale (their ``rmse`` is the accuracy at that scale); for a
        derivative-of-Gaussian wavelet, the Gaussian derivative filter of each scale.
    rmse : float
        The largest relative RMSE (Eq. 66) over the scales.
    """

    def __init__(self, scales: Sequence[float], wavelet: Morlet | None = None, *,
                 method: str = "auto", approximation: str = "direct", terms: int | None = None,
                 truncate: float = 4.0) -> None:
        wavelet = _check_wavelet(wavelet)
        self.scales = check_scales(scales)
        self.wavelet = wavelet
        self.requested = check_choice("method", method, METHODS)
        self.approximation = check_choice("approximation", approximation, APPROXIMATIONS)
        self._dog = isinstance(wavelet, DerivativeOfGaussian)
        self._morse = isinstance(wavelet, GeneralizedMorse)
        if self._dog:
            _dog_options(self.approximation)
            check_dog_scales(self.scales)
        if self._morse:
            _morse_options(self.requested, self.approximation)
        # the Gaussians pick their route per call for "auto"; the Morlet's resolves here; the
        # Morse wavelets run in the frequency domain (routes.morse_route)
        self.method = (self.requested if self._dog else "fft" if self._morse
                       else resolve_method(self.requested))
        self.terms = None if terms is None else check_int("terms", terms, minimum=1, maximum=64)
        self.truncate = check_positive_float("truncate", truncate)

    @functools.cached_property
    def plans(self) -> list[MorletTransform] | list[GaussianFilter]:
        """One plan per scale, built on first use (a call checks the result's size first);
        none for a :class:`GeneralizedMorse` (its transform needs no plan per scale)."""
        if self._morse:
            return []
        if self._dog:
            return [_cached_plan(s, self.wavelet.order, self.method, self.terms, None,
                                 self.truncate) for s in self.scales]
        # a fit per scale (milliseconds each, or read from the fit cache): thousands of
        # scales take minutes, so a bar with its estimate of the time left comes up once
        # they have run for a second
        bar = progress_bar(len(self.scales), desc="fitting the wavelet's filters",
                           large=len(self.scales) >= FIT_BAR_SCALES, unit="scale")
        plans = []
        try:
            for s in self.scales:
                plans.append(_plan(s, self.wavelet.xi, self.method, self.approximation,
                                   self.terms, self.truncate))
                bar.update(1)
        finally:
            bar.close()
        return plans

    @property
    def rmse(self) -> float:
        """The largest relative RMSE (Eq. 66) over the scales (0 for a
        :class:`GeneralizedMorse`: its transform is exact up to rounding)."""
        if self._morse:
            return 0.0
        return max(p.rmse for p in self.plans)

    @property
    def route(self) -> Route | None:
        """The :class:`~fastmoments._route.Route` of the plan's latest call (``None`` before
        the first; :func:`~fastmoments.signal.routes.cwt_route`)."""
        return self.__dict__.get("_route")

    def __repr__(self) -> str:
        route = f", route={str(self.route)!r}" if self.route is not None else ""
        return (f"CWT({len(self.scales)} scales from {min(self.scales):g} to "
                f"{max(self.scales):g}, {self.wavelet!r}, method={self.method!r}{route})")

    def frequencies(self, sampling_period: float = 1.0) -> np.ndarray:
        """The wavelet's centre frequency over each scale, per ``sampling_period``:
        ``ξ / (2π σ)`` for the Morlet (PyWavelets' convention), ``√p / (2π σ)`` (the peak of
        the response) for a derivative of Gaussian of order ``p``, ``(β/γ)^{1/γ} / (2π s)``
        (the peak) for a generalized Morse wavelet."""
        dt = check_positive_float("sampling_period", sampling_period)
        return np.array([self.wavelet.center_frequency / s / dt for s in self.scales])

    def _groups(self, which: Sequence[int], n: int, itemsize: int, device: torch.device,
                budget) -> list[list[int]]:
        """Groups of the scales ``which`` run together by the row engines (by window size)."""
        room = _budget(device, budget)
        order = sorted(which, key=lambda i: self.plans[i].bank.pad)
        groups, cur, cur_rows, cur_pad = [], [], 0, 0
        for i in order:
            b = self.plans[i].bank
            rows = getattr(b, "n_rows", 2) // 4  # work is done row group by row group
            pad = max(cur_pad, b.pad)
            need = 8 * itemsize * (cur_rows + rows) * (n + 2 * pad + 1)
            if cur and need > room:
                groups.append(cur)
                cur, cur_rows, pad = [], 0, b.pad
            cur.append(int(i))
            cur_rows += rows
            cur_pad = pad
        groups.append(cur)
        return [sorted(g) for g in groups]  # each in the caller's order (see _runs)

    def _run(self, t: torch.Tensor, which: list[int], target: torch.Tensor | None, *, ax: int,
             eng: str, mode: str, cval: float, budget, tick) -> torch.Tensor:
        """Coefficients of the scales ``which`` (increasing positions) into ``target``
        (``(len(which), *t.shape)``; allocated when ``None``)."""
        itemsize = 16 if (t.dtype == torch.float64 or eng == "prefix") else 8
        if eng in ("chunked", "numba"):  # one bank for every scale; apply_bank splits the batch
            groups = [list(which)]
        else:
            groups = self._groups(which, t.shape[ax], itemsize, t.device, budget)
        # plans whose kernel is applied directly (small σ) form groups of their own
        split = []
        for group in groups:
            for want in (False, True):
                part = [i for i in group if isinstance(self.plans[i].bank, DirectBank) == want]
                if part:
                    split.append(part)
        pos = {i: k for k, i in enumerate(which)}  # scale -> row of target
        for group in split:
            bank = _group_bank(tuple(self.plans[i] for i in group))
            runs = _runs([pos[i] for i in group])
            if target is None and len(group) < len(which):
                target = torch.empty((len(which), *t.shape), dtype=complex_dtype(t.dtype),
                                     device=t.device)
            if len(runs) == 1:  # a block of consecutive scales: written in place
                a, b, _ = runs[0]
                y = apply_bank(bank, t, axis=ax, mode=mode, cval=cval,
                               engine=_engine(bank, eng), budget=budget,
                               out=None if target is None else target[a:b], tick=tick)
                if target is None:
                    target = y
                continue
            y = apply_bank(bank, t, axis=ax, mode=mode, cval=cval, engine=_engine(bank, eng),
                           budget=budget, tick=tick)
            if target is None:
                target = torch.empty((len(which), *y.shape[1:]), dtype=y.dtype,
                                     device=y.device)
            for a, b, c in runs:
                target[a:b] = y[c:c + b - a]
        return target

    @cpu_call(per_value(lambda self, *a, **k: 16 * len(self.scales), arg=1))
    def __call__(self, x: Any, *, axis: int = -1, mode: str = "reflect", cval: float = 0.0,
                 engine: str = "auto", memory_budget: float | None = None,
                 check_finite: bool = True, hop: int = 1, out: Any = None,
                 progress: bool | None = None) -> Any:
        """Coefficients ``(n_scales, *x.shape)``, complex (real for a derivative of Gaussian);
        NumPy in, NumPy out.

        The parameters are those of :meth:`~fastmoments.signal._apply.BankPlan.__call__`
        (``check_finite=False`` lets a call be captured in a CUDA graph).

        Parameters
        ----------
        x : array_like or torch.Tensor
            Real or complex signals (complex: the real and imaginary parts are transformed and
        combined, ``W(a + ib) = W(a) + i W(b)``); never modified.
        axis, mode, cval, engine, memory_budget, check_finite, progress
            As in :meth:`~fastmoments.signal._apply.BankPlan.__call__` (the bar counts
            (signal, scale) pairs). A derivative-of-Gaussian plan always checks ``x``.
        hop : int
            Keep the coefficients at every ``hop``-th sample only (default 1: all), in memory
            proportional to ``N / hop`` (:func:`cwt`, Notes).
        out : numpy.ndarray, torch.Tensor, numpy.memmap or zarr.Array, optional
            Preallocated coefficients, written in place and returned (like NumPy's ``out=``):
            any object with ``shape``, ``dtype`` and slice assignment (a zarr array) is
            filled block by block of scales, each block's coefficients and scratch within
            ``memory_budget`` (as is an array larger than the room for a result, such as a
            memmap larger than memory); otherwise
            a NumPy array for NumPy input, a tensor on the input's device for tensor input,
            of shape ``(n_scales, *x.shape)`` and dtype complex64 (float32 input) or
            complex128, not overlapping ``x``; written straight into when C-contiguous (else
            through a temporary). Reusing one ``out`` saves
            allocating (and first touching) the output on every call: on the CPU that is
            about a fifth of a 64-scale transform. Not allowed while a gradient is recorded
            for ``x``.

        Returns
        -------
        numpy.ndarray or torch.Tensor
            Coefficients ``(n_scales, *x.shape)``, the time axis ``ceil(N / hop)`` long
            (``out`` when given).

        Raises
        ------
        TypeError
            For an ``out`` of the wrong kind or dtype, or a ``progress`` other than ``True``,
            ``False`` or ``None``.
        ValueError
            For a bad option, NaN or infinity in ``x``, or an ``out`` of the wrong shape or
            device, read-only, overlapping ``x``, or given while a gradient is recorded or
            with ``hop > 1``.
        MemoryError
            Without ``out``, when the result is larger than ``memory_budget`` (default: the
            free memory), before any plan is built; the message gives the size needed.
        """
        if type(hop) is not int or hop != 1:  # (the common call skips the check)
            hop = check_int("hop", hop, minimum=1)
        if self._morse:
            self._route = morse_route(_device_of(x), mode, hop, _records_grad(x))
            return morse_cwt(x, self.scales, self.wavelet, axis, mode=mode, hop=hop, out=out,
                             memory_budget=check_budget(memory_budget),
                             check_finite=check_finite,
                             tables=self.__dict__.setdefault("_morse_tables", {}))
        if is_complex_input(x):
            return self._complex(x, axis=axis, mode=mode, cval=cval, engine=engine,
                                 memory_budget=memory_budget, check_finite=check_finite,
                                 hop=hop, out=out, progress=progress)
        if hop > 1:
            if out is not None:
                raise ValueError(f"out must not be given with hop={hop} (the decimated "
                                 f"coefficients are assembled block by block)")
            if not self._dog and self.requested in ("auto", "sft"):
                banks = [p.bank for p in self.plans]
                if prefix_hop_applies(banks):
                    return self._prefix_hop(x, banks, hop, axis=axis, mode=mode, cval=cval,
                                            check_finite=check_finite)
            self._route = cwt_hop_route(False)
            return cwt_hop(self._full, x, self.scales, self.wavelet, hop, axis,
                           truncate=self.truncate, method=self.requested, mode=mode,
                           cval=cval, engine=engine, memory_budget=memory_budget)[0]
        if self._dog:
            return _dog_cwt(x, self.scales, self.wavelet, axis, mode=mode, cval=cval,
                            truncate=self.truncate, out=out, progress=progress,
                            method=self.method, terms=self.terms, engine=engine,
                            memory_budget=memory_budget)[0]
        return graphed_call(self, x, self._call, axis=axis, mode=mode, cval=cval,
                            engine=engine, memory_budget=memory_budget,
                            check_finite=check_finite, out=out, progress=progress,
                            bytes_per_sample=16 * len(self.scales))

    def _prefix_hop(self, x: Any, banks: list, hop: int, *, axis: int, mode: str,
                    cval: float, check_finite: bool) -> Any:
        """Every ``hop``-th coefficient of a Morlet plan whose banks have no attenuation,
        computing only those (:func:`~fastmoments.signal.hop.cwt_hop_prefix`)."""
        t, kind, finite = as_signal(x, check_finite)
        ax = normalize_axis(axis, t.ndim)
        check_choice("mode", mode, MODES)
        cval = check_cval(cval)
        require_finite(finite)
        self._route = cwt_hop_route(True)
        tl = t.movedim(ax, -1)
        flat = tl.reshape(-1, tl.shape[-1])
        coef = cwt_hop_prefix(flat, banks, hop, mode=mode, cval=cval)
        coef = coef.reshape(len(banks), *tl.shape[:-1], coef.shape[-1])
        coef = coef.to(complex_dtype(t.dtype)).movedim(-1, ax + 1)
        return to_output(coef, kind)

    def _complex(self, x: Any, *, hop: int, out: Any, **kw: Any) -> Any:
        """The transform of complex signals: ``W(a + ib) = W(a) + i W(b)`` (linear), the real
        and imaginary parts transformed as two real calls."""
        if hop > 1 and out is not None:
            raise ValueError(f"out must not be given with hop={hop} (the decimated "
                             f"coefficients are assembled block by block)")
        return complex_call(self, x, out, hop=hop, **kw)

    def _full(self, x: Any, scales: tuple[float, ...], wavelet: Any, *, truncate: float,
              method: str, **kw: Any) -> tuple[Any, np.ndarray]:
        """The transform of one block of :func:`~fastmoments.signal.hop.cwt_hop`: the plan of
        ``scales`` (a group of this plan's, by increasing σ) with this plan's options."""
        plan = _cwt_plan(scales, wavelet, method, self.approximation, self.terms, truncate)
        return plan(x, **kw), plan.frequencies()

    def _call(self, x: Any, *, axis: int = -1, mode: str = "reflect", cval: float = 0.0,
              engine: str = "auto", memory_budget: float | None = None,
              check_finite: bool = True, out: Any = None,
              progress: bool | None = None) -> Any:
        """The eager body of :meth:`__call__`."""
        t, kind, finite = as_signal(x, check_finite)
        ax = normalize_axis(axis, t.ndim)
        eng = resolve_engine(engine, self.method, t.device)
        check_choice("mode", mode, MODES)
        cval = check_cval(cval)
        memory_budget = check_budget(memory_budget)
        n_s = len(self.scales)
        cdt = complex_dtype(t.dtype)
        shape = (n_s, *t.shape)
        per_scale = t.numel() * torch.empty((), dtype=cdt).element_size()
        if out is None:  # before any plan is built and anything allocated
            room = _result_room(t.device, memory_budget)
            if n_s * per_scale > room:
                raise MemoryError(
                    f"the CWT of x with shape {tuple(t.shape)} at {n_s} scales needs "
                    f"{format_bytes(n_s * per_scale)} for its result ({cdt}) but "
                    f"{format_bytes(room)} is available (memory_budget); pass out= a "
                    f"preallocated array of shape {shape} and dtype {_numpy_dtype(cdt)}, such "
                    f"as a numpy.memmap or a zarr array (anything with shape, dtype and slice "
                    f"assignment), and the scales are streamed into it block by block")
        if out is None or isinstance(out, (np.ndarray, torch.Tensor)):
            user_out, target = output_target(out, x, t, kind, shape, cdt)
            # a caller's array larger than the room (a memmap) is filled block by block
            stream = out is not None and n_s * per_scale > _result_room(t.device,
                                                                        memory_budget)
        else:
            check_stream_out(out, shape, _numpy_dtype(cdt))
            user_out, target, stream = out, None, True
        if stream:
            room = _budget(t.device, memory_budget)
            block = int(room // (2 * max(per_scale, 1)))  # half the budget for scratch
            if block < 1:
                raise MemoryError(
                    f"streaming the CWT of x with shape {tuple(t.shape)} needs "
                    f"{format_bytes(2 * per_scale)} per scale (one scale's coefficients and "
                    f"scratch) but the memory budget is {format_bytes(room)}; raise "
                    f"memory_budget or pass shorter signals")
        grad = torch.is_grad_enabled() and t.requires_grad
        simd = engine == "auto" and cwt_simd(t.device.type, self.method, n_s,
                                             t.numel() * n_s, grad)
        if simd:
            eng = "numba"
        self._route = cwt_route(self.method, eng, simd, t.device.type, grad)
        n_sig = t.numel() // max(t.shape[ax], 1)
        units = sum(len(self.plans[i].bank.groups) if hasattr(self.plans[i].bank, "groups")
                    else 1 for i in range(n_s))
        bar = job_bar(n_sig * units, t.numel() * n_s, t.device, progress, "CWT", "scale")
        kw = dict(ax=ax, eng=eng, mode=mode, cval=cval, budget=memory_budget,
                  tick=bar.update)
        try:
            if stream:
                for a in range(0, n_s, block):
                    b = min(a + block, n_s)
                    y = self._run(t, list(range(a, b)), None, **kw)
                    if target is not None:
                        target[a:b].copy_(y)
                    else:
                        out[a:b] = y.detach().cpu().numpy()
            else:
                target = self._run(t, list(range(n_s)), target, **kw)
        finally:
            bar.close()
        require_finite(finite)
        return user_out if user_out is not None else to_output(target, kind)


def check_scales(scales: Any) -> tuple[float, ...]:
    """Scales as a tuple of floats: a real number or a non-empty 1-D sequence of real numbers
    (not bool, not str), each finite and > 0.

    Raises
    ------
    TypeError
        For a bool, a string, ``None`` or another non-number.
    ValueError
        For an empty or multi-dimensional sequence, or a scale that is NaN, infinite or ≤ 0.
    """
    if isinstance(scales, (str, bytes)) or scales is None:
        raise TypeError(f"scales must be a real number or a sequence of them, got {scales!r}")
    if isinstance(scales, torch.Tensor):
        scales = scales.detach().cpu().numpy()
    if (isinstance(scales, np.ndarray) and scales.ndim == 1 and scales.size
            and scales.dtype.kind in "fiu"):  # a real array: checked at once (64 scales one by
        values = scales.astype(np.float64)  # one cost ~0.4 ms per call)
        if (np.isfinite(values).all() and (values > 0).all()
                and (values <= MAX_SIGMA).all()):
            return tuple(values.tolist())
    items = list(scales) if isinstance(scales, (Sequence, np.ndarray)) else [scales]
    if isinstance(scales, np.ndarray) and scales.ndim != 1:
        if scales.ndim == 0:
            items = [scales.item()]
        else:
            raise ValueError(f"scales must be 1-D, got shape {scales.shape}")
    if not items:
        raise ValueError("scales must not be empty")
    out = tuple(check_positive_float("scales", s) for s in items)
    for s in out:
        if s > MAX_SIGMA:
            raise ValueError(f"scales must be <= {MAX_SIGMA:g} (a plan's tables grow with the "
                             f"scale), got {s:g}")
    return out


def check_stream_out(out: Any, shape: tuple[int, ...], dtype: np.dtype) -> None:
    """Check an ``out=`` that is neither a NumPy array nor a tensor (a zarr array, ...): it
    needs ``shape``, ``dtype`` and slice assignment, and must be writeable."""
    if not (hasattr(out, "shape") and hasattr(out, "dtype") and hasattr(out, "__setitem__")):
        raise TypeError(f"out must be a numpy.ndarray, a torch.Tensor or an array with shape, "
                        f"dtype and slice assignment (numpy.memmap, zarr.Array), got "
                        f"{type(out).__name__}")
    if tuple(out.shape) != tuple(shape):
        raise ValueError(f"out must have shape {tuple(shape)}, got {tuple(out.shape)}")
    try:
        got = np.dtype(out.dtype)
    except TypeError:
        got = out.dtype
    if got != dtype:
        raise TypeError(f"out must have dtype {dtype}, got {out.dtype}")
    if getattr(out, "read_only", False):
        raise ValueError("out is read-only")


def _result_room(device: torch.device, budget) -> int:
    """Bytes a result may take: the explicit ``memory_budget`` (or the environment's), else
    the free memory of the device (the budget's default caps scratch, not results)."""
    if budget is not None or os.environ.get("FASTMOMENTS_MEMORY_BUDGET"):
        return _budget(device, budget)
    return free_memory(device)


def _device_of(x: Any) -> str:
    """The device type of ``x``: a tensor's, ``"cpu"`` for anything else."""
    return x.device.type if isinstance(x, torch.Tensor) else "cpu"


def _records_grad(x: Any) -> bool:
    """Whether a gradient is recorded for ``x`` (a tensor that requires one)."""
    return isinstance(x, torch.Tensor) and x.requires_grad and torch.is_grad_enabled()


def _engine(bank, engine: str) -> str:
    """The engine for one group's bank: ``"direct"`` for explicit kernels."""
    return "direct" if isinstance(bank, DirectBank) else engine


def _runs(group: Sequence[int]) -> list[tuple[int, int, int]]:
    """The one map from a bank's channels to the caller's scale order.

    ``group`` lists, in increasing order, the positions (in the order the caller gave the
    scales) of the scales whose bank is applied together; channel ``c`` of that bank is scale
    ``group[c]``. Returns the runs of consecutive positions as ``(start, stop, channel)``:
    channels ``channel .. channel + stop - start - 1`` go to ``out[start:stop]``.
    """
    runs: list[tuple[int, int, int]] = []
    for c, i in enumerate(group):
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1, runs[-1][2])
        else:
            if runs and i < runs[-1][1]:
                raise AssertionError("scale groups must be in increasing order")  # pragma: no cover
            runs.append((i, i + 1, c))
    return runs


@functools.lru_cache(maxsize=64)
def _group_bank(plans: tuple[MorletTransform, ...]):
    return _stack_banks([p.bank for p in plans])


@plan_cache(maxsize=1024)
def _plan(sigma, xi, method, approximation, terms, truncate) -> MorletTransform:
    return MorletTransform(sigma, xi, method=method, approximation=approximation, terms=terms,
                           truncate=truncate)


@plan_cache(maxsize=32)
def _cwt_plan(scales, wavelet, method, approximation, terms, truncate) -> CWT:
    return CWT(scales, wavelet, method=method, approximation=approximation, terms=terms,
               truncate=truncate)


@batched(name="x", split_axis=free_axis(lambda a: a["axis"]), out_offset=1)
@cpu_call(per_value(lambda x, scales, *a, **k: 16 * np.size(scales)))
def cwt(x: Any, scales: Sequence[float] | float,
        wavelet: Wavelet | None = None, axis: int = -1, *,
        sampling_period: float = 1.0, mode: str = "reflect", cval: float = 0.0,
        method: str = "auto", approximation: str = "direct", terms: int | None = None,
        engine: str = "auto", truncate: float = 4.0, memory_budget: float | None = None,
        hop: int = 1, out: Any = None, progress: bool | None = None) -> tuple[Any, np.ndarray]:
    """Continuous wavelet transform, ``(coefficients, frequencies)`` as in PyWavelets: the
    Morlet or a derivative of Gaussian (the Mexican hat), at every sample or every ``hop``-th.

    Parameters
    ----------
    x : array_like or torch.Tensor
        Real or complex signals; transformed along ``axis``; never modified. Complex
        signals give ``W(a + ib) = W(a) + i W(b)`` (complex coefficients for every wavelet).
    scales : float or sequence of float
        Scales σ in samples: the standard deviation of the wavelet's Gaussian envelope
        (σ ≥ 1 for a derivative of Gaussian, :data:`~fastmoments.signal.dog.MIN_DOG_SCALE`).
    wavelet : Morlet or DerivativeOfGaussian, optional
        Default ``Morlet(xi=6.0)``; ``DerivativeOfGaussian(1)``, ``DerivativeOfGaussian(2)``
        or ``MexicanHat()`` (the same as order 2) for the real derivative-of-Gaussian
        wavelets; ``GeneralizedMorse(beta, gamma)`` for the generalized Morse wavelets
        (analytic; computed in the frequency domain, :mod:`~fastmoments.signal.morse`: their
        ``scales`` are ssqueezepy's, peak frequency ``(β/γ)^{1/γ} / (2π s)``).
    axis : int
        Axis of ``x`` holding time.
    sampling_period : float
        Sampling period used to express ``frequencies``.
    mode, cval, method, approximation, terms, engine, truncate, memory_budget, progress
        As in :func:`~fastmoments.signal.morlet_transform` (for a derivative of Gaussian as
        in :func:`~fastmoments.signal.gaussian_filter1d`; ``approximation`` is the Morlet's
        only).
    hop : int
        Keep the coefficients at samples ``0, hop, 2 hop, ...`` only (default 1: every
        sample), in memory proportional to ``N / hop`` (Notes).
    out : numpy.ndarray, torch.Tensor, numpy.memmap or zarr.Array, optional
        Preallocated coefficients ``(len(scales), *x.shape)``, complex64 (float32 input) or
        complex128 (float32 or float64 for a derivative of Gaussian, a NumPy array or a
        tensor), of the input's kind (and device), not overlapping ``x``:
        written in place and returned as ``coefficients`` (see :meth:`CWT.__call__`);
        ``hop=1`` only.

    Returns
    -------
    coefficients : numpy.ndarray or torch.Tensor
        ``(len(scales), *x.shape)``: ``W[i, ..., n] = Σ_k ψ_{σ_i}[k] x[..., n - k]`` with the
        wavelet at scale σ_i (unit energy at every scale); complex for the Morlet (Eq. 52),
        real for a derivative of Gaussian. With ``hop > 1`` the time axis is
        ``ceil(N / hop)`` long: ``cwt(x, scales)[0][..., ::hop]``. ``out`` when given.
    frequencies : numpy.ndarray
        ``ξ / (2π σ_i) / sampling_period`` for the Morlet, ``√p / (2π σ_i) /
        sampling_period`` (the peak of the response) for a derivative of Gaussian of order
        ``p``, ``(β/γ)^{1/γ} / (2π s_i) / sampling_period`` (the peak) for a generalized Morse
        wavelet.

    Raises
    ------
    ValueError
        For bad scales or options (``hop < 1``; a scale below 1 or an ``approximation`` other
        than ``"direct"`` with a derivative of Gaussian; a ``method`` other than ``"auto"`` or
        a ``mode`` other than ``"reflect"``, ``"mirror"``, ``"wrap"`` with a generalized
        Morse wavelet), NaN or infinity in ``x``, or a bad ``out`` (wrong shape or device,
        read-only, overlapping ``x``, or given while a gradient is recorded or with
        ``hop > 1``).
    TypeError
        For a wavelet that is not a :class:`Morlet`, a
        :class:`~fastmoments.signal.DerivativeOfGaussian` or a
        :class:`~fastmoments.signal.GeneralizedMorse`, a ``hop`` that is not an integer,
        an ``out`` of the wrong kind or dtype, or a ``progress`` other than ``True``,
        ``False`` or ``None``.

    Notes
    -----
    Each scale costs ``O(P_D N)`` whatever σ (Yamashita & Wakahara 2022, Secs. 3-4), so a
    scalogram of many large scales costs no more than one of small scales. Scales whose window
    is short (σ up to about 24 on the CPU) are applied as one Toeplitz product per chunk of
    the same fitted kernel, which is cheaper there and gives the same result up to rounding.
    The relative RMSE (Eq. 66) of every scale's wavelet is ≤ 1e-4 by default.

    **Scales and normalisation, compared with** ``pywt.cwt``. ``scales`` are σ, the standard
    deviation of the wavelet's Gaussian envelope in samples (not PyWavelets' dimensionless
    ``a``), and every scale's wavelet ``ψ_{σ,ξ}[n] = C_ξ π^{-1/4} σ^{-1/2} e^{-n²/(2σ²)}
    (e^{iξn/σ} - κ_ξ)`` has unit energy, so a sinusoid of amplitude 1 gives ``|W|`` growing
    as ``√σ``. PyWavelets' ``cmorB-C`` at scale ``a``, ``(πB)^{-1/2} e^{-t²/B} e^{2πiCt}`` at
    ``t = k/a``, is the same wavelet for ``ξ = πC√(2B)`` and ``σ = a√(B/2)``
    (:func:`~fastmoments.signal.scales.from_pywt_cmor`,
    :func:`~fastmoments.signal.scales.to_pywt_cmor`), and ``pywt.cwt`` returns
    ``(2πB)^{-1/4} / C_ξ`` times these coefficients
    (:func:`~fastmoments.signal.scales.pywt_cmor_factor`; 0.5707 for ``cmor1.5-1.0``), up to
    its discretisation: it differentiates an integrated wavelet, which multiplies the
    response at its carrier by ``sinc(C/a) = sin(πC/a)/(πC/a)`` (0.90 at ``a = 4C``), and with
    its default ``precision=10`` it is coarser than the samples beyond ``a = 64`` (use 14 to
    compare). Our ``κ_ξ`` term makes the wavelet zero-mean; ``cmor`` has none (``κ_ξ =
    e^{-ξ²/2}``, 1.5e-8 at ξ = 6). ``frequencies`` are the carrier's, ``ξ/(2πσ)`` per
    ``sampling_period`` (exactly ``C/a``; PyWavelets estimates ``C`` numerically, 0.8125 for
    ``cmor2.0-0.8``). A sinusoid's ``|W|`` peaks at the slightly larger scale of its Fourier
    frequency (``scale_to_frequency(..., kind="fourier")``, 1.4 % apart at ξ = 6). Log-spaced
    scales for a band: :func:`~fastmoments.signal.scales.scales_for_band`; edge-affected
    coefficients: :func:`~fastmoments.signal.scales.cone_of_influence` (``min(n, N-1-n) <
    √2 σ``, the e-folding time of the envelope, Torrence & Compo 1998).

    **Derivative of Gaussian.** ``W_p(σ, ·) = s_p c_p √(2π) σ^{p+1/2}
    gaussian_filter1d(x, σ, order=p)`` (:mod:`~fastmoments.signal.dog`): one Gaussian
    derivative per scale, whose cost does not grow with σ, of relative RMSE ≤ 1e-4 against
    the convolution with the sampled wavelet. PyWavelets' ``gaus1``, ``gaus2`` and ``mexh``
    map to these wavelets and scales by :func:`~fastmoments.signal.scales.from_pywt_dog`
    (see :class:`~fastmoments.signal.DerivativeOfGaussian`, Notes).

    **Generalized Morse.** ``W_j = IFFT(√s_j Ψ(s_j ω) FFT(x_e))`` over one period of the
    boundary extension ``x_e`` (``mode`` ``"reflect"``, ``"mirror"`` or ``"wrap"``; no other),
    exact up to rounding at ``O(N log N)`` per scale: the kernels decay only algebraically in
    time, so no σ-independent fit is used (:mod:`~fastmoments.signal.morse` says why and gives
    the factors to ssqueezepy's normalisations). ``method`` must be ``"auto"``; ``hop``
    folds the inverse FFTs, so time and memory per scale fall as ``N / hop``.

    **Hop.** With ``hop > 1`` the Morlet of ``method="auto"``/``"sft"`` computes only the
    kept samples (:func:`~fastmoments.signal.hop.cwt_hop_prefix`): each SFT row's window sum
    is a difference of two prefix sums, taken over segments of ``hop`` samples by one real
    matrix product per scale and window end, so the work is one BLAS pass over the samples
    plus ``O(J R N / hop)`` (``R`` rows per scale) and the memory ``J N / hop`` plus one
    scale's ``R N / hop`` scratch; equal to ``cwt(x, scales)[0][..., ::hop]`` to rounding
    (1e-12 relative at N = 4000, 1e-9 at N = 2^20: the prefix sums grow with N). Other
    wavelets and the ASFT (whose attenuated rows would overflow prefix sums) transform the
    scales in groups on blocks of the signal with a halo wider than the kernels
    (:func:`~fastmoments.signal.hop.cwt_hop`), keeping every ``hop``-th coefficient: memory
    ``J N / hop`` plus one block's scratch, time about that of the full transform. For a
    derivative of Gaussian, ``method="auto"`` runs the SFT on every block (the Gaussians'
    ``"auto"`` would pick a route per block length): equal to ``method="sft"``, and to
    ``"auto"`` to 1e-4. The Morse wavelets fold their inverse FFTs (see above).
    ``benchmarks/results/signal_hop.md`` measures time and memory against ``hop=1``.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.arange(4096)
    >>> x = np.sin(2 * np.pi * 0.05 * t)
    >>> coef, freqs = cwt(x, [5.0, 19.1, 60.0])
    >>> coef.shape, int(np.argmax(np.abs(coef[:, 2048])))
    ((3, 4096), 1)
    >>> round(float(freqs[1]), 4)
    0.05
    >>> from fastmoments.signal import MexicanHat
    >>> hat, f = cwt(x, [4.0, 4.5, 30.0], MexicanHat())  # the peak at √2 / (2π · 0.05) = 4.5
    >>> hat.dtype, int(np.argmax(np.abs(hat[:, 2048])))
    (dtype('float64'), 1)
    >>> cwt(x, [5.0, 19.1, 60.0], hop=16)[0].shape
    (3, 256)
    """
    scales_t = check_scales(scales)  # before the cache: True, 1 and 1.0 are one key there
    wavelet = _check_wavelet(wavelet)
    requested = check_choice("method", method, METHODS)
    plan = _cwt_plan(scales_t, wavelet,
                     requested if isinstance(wavelet, (DerivativeOfGaussian, GeneralizedMorse))
                     else resolve_method(requested),
                     check_choice("approximation", approximation, APPROXIMATIONS),
                     None if terms is None else check_int("terms", terms, minimum=1, maximum=64),
                     check_positive_float("truncate", truncate))
    freqs = plan.frequencies(sampling_period)
    coef = plan(x, axis=axis, mode=mode, cval=cval, engine=engine, memory_budget=memory_budget,
                hop=hop, out=out, progress=progress)
    return coef, freqs
