r"""Jacobi, Legendre and Gegenbauer moments of images and volumes: the plan and one-call functions.

The moments follow the thesis (``jacobi-3d-gpu-thesis``), Eq. 21/24 discretised as Eq. 31-44:

.. math:: J_{m,n} = \frac{1}{\rho_m\rho_n}\sum_{i,j} f_{ij}
          \int_{\text{pixel } i}\!\!P_m(x) w(x)\,dx \int_{\text{pixel } j}\!\!P_n(y) w(y)\,dy,
          \qquad w(x) = (1-x)^\alpha(1+x)^\beta,

with each pixel integral computed by a k-point rule (``quadrature="midpoint"``: the thesis's
k x k sub-regions, Eq. 33-34; ``"gauss"``: Gauss-Legendre per pixel), and likewise with a third
factor for volumes. For an array ``(..., H, W)`` the first index runs along H and the second
along W (``J[p, q, r]`` along D, H, W for ``(..., D, H, W)``); on every axis the coordinate goes
from -1 at index 0 to +1 at the last index, pixel ``i`` of ``N`` covering
:math:`[-1 + 2i/N, -1 + 2(i+1)/N]`. Rectangular images and volumes are allowed.

Reconstruction is the truncated series (Eq. 23/26)
:math:`\hat f(x, y) = \sum J_{m,n} P_m(x) P_n(y)` evaluated at pixel centres, over the same
index set: ``truncation="total"`` keeps :math:`m + n (+ o) \le` order (the thesis's set) and
``"box"`` keeps every index :math:`\le` order.

Gegenbauer moments use :math:`G_n^{(\lambda)} = c_n P_n^{(\lambda-1/2,\lambda-1/2)}` (Eq. 20) and
its own norm :math:`c_n^2\rho_n`, so :math:`J^G_{m,n} = J_{m,n}/(c_m c_n)` and the
reconstruction is unchanged. Legendre moments are Jacobi moments with
:math:`\alpha=\beta=0`.

**Precision.** Tables are computed in float64 (orthonormal recurrence) and cast once. In
float32 (TF32 off) the moments satisfy ``max|J32 - J64| <= 1e-5 * max|J64|`` and the
reconstruction from them ``max|f32 - f64| <= 1e-4 * max|f64|`` (measured up to 5e-7 and
1.4e-5 on a 512 x 512 photograph at order 500, k = 23, for several alpha, beta; tested in
``tests/test_box_moments.py``). With TF32 matrix products on a GPU expect about 1e-3 instead.
"""

from __future__ import annotations

import math
import numbers
import os
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from .._array import (
    ArrayKind,
    as_tensor,
    forget_largest,
    keep_largest,
    kept_largest,
    largest_magnitude_value,
    move_channels,
    real_dtype,
    require_finite,
    resolve_device,
    to_output,
)
from .._memory import (
    below_minimum,
    check_memory_budget,
    format_bytes,
    memory_budget,
    rows_per_chunk,
)
from .._validate import check_channel_axis, check_choice, check_int, check_real, check_shape
from ..moments import Moments
from ..parallel import device_key, is_multi, multi_device
from . import fold_kernels, replay, triton_gemm
from .clip import as_planes, clip_boxes
from .engine import HALVES_MIN, PRECISIONS, AxisOp, analyze, matmul_precision, synthesize
from .moments import BoxMoments
from .quadrature import (
    _CHUNK_VALUES,
    NORMALIZATIONS,
    QUADRATURES,
    analysis_matrix,
    synthesis_matrix,
)
from .split import BoxSplit

__all__ = [
    "TRUNCATIONS",
    "JacobiTransform",
    "gegenbauer_moments",
    "jacobi_moments",
    "legendre_moments",
]

TRUNCATIONS = ("total", "box")


#: Largest ``alpha + beta`` accepted. Beyond it the float64 tables leave the float64 range:
#: the normalisation :math:`\rho_0` holds :math:`2^{\alpha+\beta+1}` and the weight reaches
#: :math:`2^{\alpha}` near -1, so ``alpha = 1100, beta = 0`` overflows in ``exp`` and
#: ``alpha = beta = 2000`` gives NaN in the analysis matrix (measured); ``alpha = 1000,
#: beta = 0`` still agrees with mpmath to 3e-13 at order 20.
MAX_ALPHA_PLUS_BETA = 1000.0


def _check_param(name: str, value: Any, *, greater: float) -> float:
    """A finite real number > ``greater`` (the shared :func:`~fastmoments._validate.check_real`)."""
    return check_real(name, value, minimum=greater, strict_minimum=True)


def _check_alpha_beta(alpha: float, beta: float, what: str = "alpha + beta") -> None:
    if alpha + beta > MAX_ALPHA_PLUS_BETA:
        raise ValueError(f"{what} must be <= {MAX_ALPHA_PLUS_BETA:g} (alpha, beta > -1 with "
                         f"alpha + beta <= {MAX_ALPHA_PLUS_BETA:g}: beyond it the weight and "
                         f"norms leave the float64 range), got alpha={alpha}, beta={beta}")


@multi_device(split=BoxSplit)
class JacobiTransform:
    r"""A plan for Jacobi (Legendre, Gegenbauer) moments of images or volumes of one shape.

    The per-axis analysis and synthesis matrices are computed once in float64 and cast to
    ``dtype`` on ``device``; :meth:`forward` then costs one GEMM per axis (see
    :mod:`fastmoments.box.engine`).

    Parameters
    ----------
    shape : tuple of int
        ``(H, W)`` for images or ``(D, H, W)`` for volumes; this decides 2-D or 3-D.
    order : int
        Maximum order (>= 0).
    alpha, beta : float
        Jacobi parameters, both > -1 with ``alpha + beta <= 1000`` (default 0, 0: Legendre);
        real numbers only (a bool or a string is a TypeError).
    k : int
        Points per pixel and axis of the integration rule (k x k, or k x k x k, per pixel).
    quadrature : {'midpoint', 'gauss'}
        ``'midpoint'``: the thesis's equal sub-regions (Eq. 34); ``'gauss'``: Gauss-Legendre.
    truncation : {'total', 'box'}
        ``'total'``: indices with sum <= order; ``'box'``: each index <= order.
    normalization : {'jacobi', 'gegenbauer'}
        Polynomial scaling: :math:`P_n^{(\alpha,\beta)}` or the Gegenbauer
        :math:`G_n^{(\alpha+1/2)}` (needs ``alpha == beta``).
    dtype : torch.dtype or str
        Working precision, float32 (default) or float64. Inputs are converted to it.
    device : str or torch.device, optional
        Where the matrices live and the work runs (default CPU).
    block : int, optional
        Degrees per block of the total-degree saving. Default: 256 for volumes with parity or
        ``precision="fp16x3"``, 128 for other volumes, none for images (where the saving
        touches only the cheaper second product and measured slower on an H100). A value
        above the order turns the blocking off.
    parity : bool, optional
        Use the symmetry :math:`P_n(-x) = (-1)^n P_n(x)` (Eq. 18) to halve the GEMM work:
        the input is folded along every axis at once and each of the parity classes is
        transformed on half of the pixels per axis (:func:`fastmoments.box.engine.fold`).
        ``True`` needs ``alpha == beta``. Default (``None``): on for volumes with
        ``alpha == beta`` where the folds run as one Triton pass (CUDA), with
        ``precision="float32"``, or with ``precision="fp16x3"`` for volumes of 2^26
        samples or more, whose classes run as one batch on float16 halves
        (:mod:`fastmoments.box.parity_batch`; the fastest setting of the 512^3 job on an
        H100, table ``box_tensor_cores``). Off otherwise: smaller ``"fp16x3"`` volumes would
        run the classes one by one, ``"tf32x3"`` gained nothing from it, on the CPU (one
        numba pass there) it measured faster for large volumes at high orders only and
        slower for small ones, and images are bound by launch costs
        (``benchmarks/results/box_tensor_cores.md``).
    memory_budget : float, optional
        Scratch bytes (or fraction of free memory if <= 1) for splitting batches; the plan's
        tables are checked against it too.
    precision : {"float32", "fp16x3", "tf32x3"}, optional
        How float32 products run on CUDA: ``"float32"`` (cuBLAS on CUDA cores),
        ``"fp16x3"`` (float16 tensor cores: each operand kept as two scaled float16 halves,
        three products summed; the stages hand each other their results as halves,
        :func:`fastmoments.box.triton_gemm.halves_product`) or ``"tf32x3"`` (TF32 tensor
        cores, three TF32 products). Both tensor-core schemes keep float32 accuracy and are
        more accurate than cuBLAS's float32 products here. On volumes without parity,
        ``"fp16x3"`` is the fastest setting measured on an H100 (table ``box_tensor_cores``
        of the benchmarks page, ``benchmarks/results/box_tensor_cores.md``); with
        ``parity=True`` ``"tf32x3"`` is slower (8 parity classes, each its own products)
        and ``"fp16x3"`` faster (the classes as one batch, on large jobs).
        Default (``None``): ``"fp16x3"`` for float32 volumes on CUDA (with Triton),
        ``"float32"`` otherwise (images: their small products measured faster with
        cuBLAS, table ``box_batches_gpu``). Ignored on the CPU, in float64 and while a
        gradient is recorded (the torch products are used there). Large ``"fp16x3"`` jobs
        on a GPU are recorded once per input geometry and then replayed as their launches
        (:mod:`fastmoments.box.replay`; the same bits, without the engine's Python).

    Raises
    ------
    TypeError
        For a parameter of the wrong type: non-integer ``shape`` entries, ``order``, ``k`` or
        ``block`` (bools and floats included), non-real ``alpha``/``beta``, a ``dtype`` that
        is not a floating-point dtype.
    ValueError
        For out-of-range values (the message names the parameter), conflicting options
        (``normalization='gegenbauer'`` or ``parity=True`` with ``alpha != beta``), and
        ``alpha, beta, order`` whose tables leave the float64 or the working dtype's range.
    MemoryError
        If the tables do not fit ``memory_budget`` (said before building them), and from
        :meth:`forward`/:meth:`inverse` when one batch element does not fit.

    Notes
    -----
    **Which moments a plan accepts.** Moments are tied to their basis: ``shape``, ``order``,
    ``alpha``, ``beta``, ``truncation`` and ``normalization`` (:attr:`BASIS_FIELDS`). A
    :class:`BoxMoments` is valid input to :meth:`inverse` and :meth:`adjoint` of any plan with
    the same basis, whatever its ``k``, ``quadrature`` (these only change how the analysis
    integrals are approximated), ``dtype``, ``device``, ``block`` or ``parity``; any other
    plan raises a ValueError naming the fields that differ.

    Examples
    --------
    >>> import numpy as np
    >>> plan = JacobiTransform((32, 48), 10, alpha=0.3, beta=0.7, k=3)
    >>> img = np.random.default_rng(0).random((2, 32, 48))
    >>> J = plan.forward(img)
    >>> J.batch_shape, J.numpy().shape
    ((2,), (2, 11, 11))
    >>> plan.inverse(J).shape
    (2, 32, 48)
    """

    def __init__(self, shape: Any, order: int, *, alpha: float = 0.0, beta: float = 0.0,
                 k: int = 1, quadrature: str = "midpoint", truncation: str = "total",
                 normalization: str = "jacobi", dtype: Any = torch.float32,
                 device: Any = None, block: int | None = None, parity: bool | None = None,
                 memory_budget: float | None = None, precision: str | None = None) -> None:
        self.shape = check_shape("shape", shape, ndim=(2, 3))
        self.ndim = len(self.shape)
        self.order = check_int("order", order, minimum=0)
        self.alpha = _check_param("alpha", alpha, greater=-1.0)
        self.beta = _check_param("beta", beta, greater=-1.0)
        _check_alpha_beta(self.alpha, self.beta)
        self.k = check_int("k", k, minimum=1)
        self.quadrature = check_choice("quadrature", quadrature, QUADRATURES)
        self.truncation = check_choice("truncation", truncation, TRUNCATIONS)
        self.normalization = check_choice("normalization", normalization, NORMALIZATIONS)
        if self.normalization == "gegenbauer":
            if self.alpha != self.beta:
                raise ValueError("normalization='gegenbauer' needs alpha == beta "
                                 f"(= lam - 1/2), got alpha={self.alpha}, beta={self.beta}")
            if self.alpha == -0.5:
                raise ValueError("lam must be != 0 for Gegenbauer moments (alpha = beta = -1/2)")
        self.dtype = real_dtype(dtype)
        self.device = resolve_device(device)
        self.memory_budget = check_memory_budget(memory_budget)
        if precision is None:  # measured: tensor cores for volumes on a GPU (see above)
            precision = ("fp16x3" if self.ndim == 3 and self.device.type == "cuda"
                         and self.dtype == torch.float32 and triton_gemm.available(self.device)
                         else "float32")
        self.precision = check_choice("precision", precision, PRECISIONS)
        if parity is None:
            parity = (self.alpha == self.beta and self.ndim == 3
                      and fold_kernels.triton_on(self.device)
                      and (self.precision == "float32"
                           or (self.precision == "fp16x3"
                               and math.prod(self.shape) >= HALVES_MIN)))
        elif not isinstance(parity, bool):
            raise TypeError(f"parity must be True, False or None, got {parity!r}")
        elif parity and self.alpha != self.beta:
            raise ValueError("parity=True needs alpha == beta (the symmetry P(-x) = (-1)^n P(x)),"
                             f" got alpha={self.alpha}, beta={self.beta}")
        self.symmetric = parity
        if block is None:
            if self.ndim == 3 and self.truncation == "total":
                block = 256 if parity or self.precision == "fp16x3" else 128
            else:
                block = self.order + 2
        self.block = min(check_int("block", block, minimum=1), self.order + 2)
        self.block += self.block % 2
        if self.normalization == "gegenbauer":
            self.family = "gegenbauer"
        elif self.alpha == 0.0 and self.beta == 0.0:
            self.family = "legendre"
        else:
            self.family = "jacobi"
        self._check_table_memory()
        self._analysis: dict[int, AxisOp] = {}
        self._synthesis: dict[int, AxisOp] = {}
        for n in sorted(set(self.shape)):
            a = analysis_matrix(n, self.order, self.alpha, self.beta, self.k, self.quadrature,
                                self.normalization)
            s = synthesis_matrix(n, self.order, self.alpha, self.beta, self.normalization)
            ca, cs = self._cast(a), self._cast(s)
            for name, t64, t in (("analysis", a, ca), ("synthesis", s, cs)):
                if not (np.isfinite(t64).all() and bool(torch.isfinite(t).all())):
                    where = "float64" if not np.isfinite(t64).all() else str(self.dtype)
                    raise ValueError(
                        f"alpha={self.alpha}, beta={self.beta} at order {self.order} give "
                        f"{name} tables outside the {where} range (values up to "
                        f"{np.nanmax(np.abs(t64)):.3g}); lower alpha, beta or order"
                        + (", or use dtype=torch.float64" if where != "float64" else ""))
            self._analysis[n] = AxisOp.build(ca, self.symmetric)
            self._synthesis[n] = AxisOp.build(cs, self.symmetric)
        self._outside: dict[int, torch.Tensor | None] = {}
        self._replays: dict[tuple, Any] = {}  # recorded GPU jobs (:mod:`.replay`), by key
        # per job geometry: the scales of the last call, and whether the call before had
        # the same and its job checks its input on the way (then a call may run on them)
        self._guesses: dict[tuple, tuple[tuple, bool]] = {}
        # replayable job geometries that ran: one item of them fits the memory as it did
        # (no budget query, which took 25-125 µs of the host's time per call on an H100
        # machine, benchmarks/results/box_runs/session28/README.md; batches still ask)
        self._warm: set[tuple] = set()

    # ---------------------------------------------------------------- helpers
    def _cast(self, a: Any) -> torch.Tensor:
        return torch.from_numpy(a.copy()).to(device=self.device, dtype=self.dtype)

    @property
    def total(self) -> bool:
        return self.truncation == "total"

    @property
    def coef_shape(self) -> tuple[int, ...]:
        return (self.order + 1,) * self.ndim

    def __repr__(self) -> str:
        return (f"JacobiTransform(shape={self.shape}, order={self.order}, alpha={self.alpha}, "
                f"beta={self.beta}, k={self.k}, quadrature={self.quadrature!r}, "
                f"truncation={self.truncation!r}, normalization={self.normalization!r}, "
                f"dtype={self.dtype}, device={self.device})")

    def outside(self, order: int | None = None) -> torch.Tensor | None:
        """Boolean mask of the coefficients not in the set for ``order`` (``None``: all are)."""
        m = self.order if order is None else order
        if m not in self._outside:
            if not self.total and m == self.order:
                mask = None
            else:
                idx = torch.arange(self.order + 1, device=self.device, dtype=torch.int32)
                if self.total:
                    if self.ndim == 2:
                        mask = idx[:, None] + idx[None, :] > m
                    else:
                        qr = idx[:, None] + idx[None, :]
                        mask = torch.stack([qr > m - p for p in range(self.order + 1)])
                else:
                    big = idx > m
                    mask = big[:, None] | big[None, :]
                    if self.ndim == 3:
                        mask = mask[None, :, :] | big[:, None, None]
            # keep the plan's own mask and the last partial order only (each is P^ndim bytes)
            for key in [k for k in self._outside if k != self.order]:
                del self._outside[key]
            self._outside[m] = mask
        return self._outside[m]

    def _budget_or_none(self, need: int) -> int | None:
        """The budget in bytes, or ``None`` when ``need`` fits any default budget."""
        if below_minimum(need, self.memory_budget):
            return None
        return memory_budget(self.device, self.memory_budget)

    def table_bytes(self) -> int:
        """Bytes the plan needs to build and hold its tables (an upper estimate).

        Per distinct axis length ``n`` and ``P = order + 1`` degrees: the float64 analysis and
        synthesis matrices (kept in the table cache) and the scratch of their recurrence, two
        copies in the working dtype (two more with ``parity``), and the ``n x k`` integration
        nodes; plus one chunk of polynomial values (at least ``P x k``).
        """
        p = self.order + 1
        item = torch.finfo(self.dtype).bits // 8
        chunk = max(_CHUNK_VALUES, p * self.k)
        total = 3 * 8 * max(min(chunk, n * p * self.k) for n in self.shape)
        for n in set(self.shape):
            total += p * n * (4 * 8 + 2 * item * (2 if self.symmetric else 1)) + 2 * 8 * n * self.k
        return total

    def _check_table_memory(self) -> None:
        need = self.table_bytes()
        budget = self._budget_or_none(need)
        if budget is not None and need > budget:
            raise MemoryError(
                f"JacobiTransform(shape={self.shape}, order={self.order}, k={self.k}) needs "
                f"at least {format_bytes(need)} for its tables but the budget is "
                f"{format_bytes(budget)}; lower order or k, free memory or raise memory_budget")

    def _chunk(self, batch: int, order: int | None = None) -> int:
        """Batch elements per chunk; checked for every batch size, one included.

        Raises
        ------
        MemoryError
            If not even one element fits the budget, with the memory the job needs.
        """
        p = self.order + 1
        n = self.shape
        item = torch.finfo(self.dtype).bits // 8
        if self.ndim == 2:
            per = 3 * n[0] * n[1] + 2 * n[0] * p + 3 * p * p
        else:
            per = 3 * math.prod(n) + 2 * n[0] * n[1] * p + 2 * n[0] * p * p + 3 * p**3
        m = self.order if order is None else order
        # the boolean mask of the coefficients outside the set (built on first use), twice
        # while it is built
        built = (not self.total and m == self.order) or m in self._outside
        fixed = 0 if built else 2 * p**self.ndim
        budget = self._budget_or_none(per * item * batch + fixed)
        if budget is None:
            return batch
        return rows_per_chunk(per * item, budget, batch, fixed_bytes=fixed,
                              what=f"moments of order {self.order} of a {n} array")

    def _ranges(self, region: tuple[Any, ...] | None) -> tuple[list[range | None], list[int]]:
        """Per axis the pixel indices ``region`` selects (``None``: all), and the dropped axes."""
        ranges: list[range | None] = []
        drop = []
        for ax, n in enumerate(self.shape):
            sel = None if region is None else region[ax]
            if sel is None or (isinstance(sel, slice) and sel == slice(None)):
                ranges.append(None)
                continue
            if isinstance(sel, tuple) and len(sel) == 2:
                sel = slice(*sel)
            if isinstance(sel, slice):
                for part in (sel.start, sel.stop, sel.step):
                    if part is not None and (isinstance(part, bool)
                                             or not isinstance(part, numbers.Integral)):
                        raise TypeError(f"region entry for axis {ax} must have integer bounds, "
                                        f"got {region[ax]!r}")
                if sel.step == 0:
                    raise ValueError(f"region entry for axis {ax} has step 0: {region[ax]!r}")
                cols = range(n)[sel]
            elif isinstance(sel, int) and not isinstance(sel, bool):
                check_int("region index", sel, minimum=-n, maximum=n - 1)
                cols = range(n)[sel:sel + 1 if sel != -1 else None]
                drop.append(ax)
            else:
                raise TypeError(f"region entries must be slices, (start, stop) pairs or "
                                f"integers, got {sel!r} for axis {ax}")
            if len(cols) == 0:
                raise ValueError(f"region selects no pixel along axis {ax} (size {n}): {sel!r}")
            ranges.append(cols)
        return ranges, drop

    def _ops(self, table: dict[int, AxisOp], region: tuple[Any, ...] | None):
        ranges, drop = self._ranges(region)
        ops, out_shape = [], []
        for n, cols in zip(self.shape, ranges, strict=True):
            if cols is None:
                ops.append(table[n])
                out_shape.append(n)
                continue
            idx = torch.as_tensor(list(cols), device=self.device)
            ops.append(AxisOp.build(table[n].full.index_select(1, idx), False))
            out_shape.append(len(cols))
        return ops, out_shape, drop

    def _replayable(self, t: torch.Tensor) -> bool:
        """Whether the job on ``t`` (one chunk) may be recorded and replayed
        (:mod:`.replay`): float16 halves products (``precision="fp16x3"``, a job of at
        least :data:`~.engine.HALVES_MIN` elements: Triton launches only) on a GPU."""
        return (self.precision == "fp16x3" and t.numel() >= HALVES_MIN
                and replay.enabled(t))

    def _replay_where(self, what: str, t: torch.Tensor, *extra: Any) -> tuple | None:
        """Everything a job's launches depend on besides the addresses of ``t`` and the
        scales of its halves (:meth:`_replay_key`): its geometry, alignment and device, the
        settings read from the environment, and ``extra`` (the reconstruction's order);
        ``None`` when the job is not replayed (:meth:`_replayable`)."""
        if not self._replayable(t):
            return None
        return (what, *extra, tuple(t.shape), t.stride(), t.dtype, t.device, t.data_ptr() % 16,
                os.environ.get("FASTMOMENTS_BOX_TMA"), os.environ.get("FASTMOMENTS_BOX_TILE"))

    def _step(self, b: int, where: tuple | None, order: int | None = None) -> int:
        """Batch items per chunk (:meth:`_chunk`); one item of a replayed job's geometry
        that ran already fits as it did (no budget query: ``_warm``)."""
        return 1 if b == 1 and where in self._warm else self._chunk(b, order)

    def _replay_key(self, where: tuple, t: torch.Tensor) -> tuple:
        """The key of a job on ``t``: :meth:`_replay_where` and the scales from the largest
        magnitude of ``t`` (read once and kept for the job, which then reads no more)."""
        return (*where, replay.scale_key(largest_magnitude_value(t, keep=True)))

    def _forward_on_guess(self, flat: torch.Tensor, where: tuple,
                          source: Any) -> tuple[torch.Tensor | None, bool]:
        """The moments of the unchecked ``flat`` by the program of the scales of the last
        calls on this geometry, checked after the work: the job's fold finds ``max |x|`` on
        the way, which is read once at the end (no reduction and no wait before the work).
        NaN or infinity raise the input check's error. Returns the moments (``None`` when
        there is no such program, or when ``max |x|`` asks for other scales: the caller
        then runs the job for them) and whether ``flat`` was checked (its largest
        magnitude kept: no second pass)."""
        guess = self._guesses.get(where)
        if guess is None or not guess[1]:
            return None, False
        prog = self._replays.get((*where, guess[0]))
        if not isinstance(prog, replay.JobProgram):
            return None, False
        data, top, seen = prog(flat)
        # the one host read, once the work is queued: the input's largest magnitude (its
        # check) and the moments' (for their reconstruction, which then reads nothing)
        both = torch.stack((seen.max(), seen.max() if top is None else top.max())).tolist()
        value = both[0]
        if not value < math.inf:  # the check's own error (it reads x again: errors only)
            require_finite(flat, "x", source)
            return None, False  # pragma: no cover - x changed meanwhile: checked again
        keep_largest(flat, seen, value)
        if replay.scale_key(value) != guess[0]:  # no more guesses until two calls agree
            self._guesses.pop(where, None)
            return None, True
        if top is not None:
            keep_largest(data, top, both[1])
        return data, True

    # ---------------------------------------------------------------- transforms
    def _forward_tensor(self, t: torch.Tensor, kind: ArrayKind,
                        source: Any = None) -> BoxMoments:
        """The moments of ``t`` (the plan's trailing shape); ``source``: when given, ``t``
        is not checked for NaN and infinity yet (``source`` is what the caller passed, for
        the error), and is checked here, before the work or on the way."""
        if t.ndim < self.ndim or tuple(t.shape[-self.ndim:]) != self.shape:
            what = "(..., H, W)" if self.ndim == 2 else "(..., D, H, W)"
            raise ValueError(f"x must have shape {what} = (..., {', '.join(map(str, self.shape))})"
                             f" for this plan, got {tuple(t.shape)}")
        t = t.to(device=self.device, dtype=self.dtype)
        batch = tuple(t.shape[:-self.ndim])
        b = math.prod(batch)
        if b == 0:
            return BoxMoments(t.new_zeros((*batch, *self.coef_shape)), self, kind)
        flat = t.reshape(b, *self.shape)
        ops = [self._analysis[n] for n in self.shape]
        out = []
        where = self._replay_where("forward", flat)
        step = self._step(b, where)

        def job(part: torch.Tensor, found: dict | None = None) -> torch.Tensor:
            with matmul_precision(self.precision):
                return analyze(part, ops, self.order, self.total, self.block, self.outside(),
                               found)

        def recorded() -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
            # the moments; their largest magnitude and the input's, when the job found
            # them on the way (kept for a reconstruction from them, after a replay too;
            # the input's checks it when a later call runs on a guess)
            found: dict = {}
            c = job(flat, found)
            return c, kept_largest(c), found.get("input")

        if where is not None and step >= b:
            data, checked = (None, True) if source is None else self._forward_on_guess(
                flat, where, source)
            if data is None:
                if not checked:
                    require_finite(flat, "x", source)
                key = self._replay_key(where, flat)
                data, top, seen = replay.replayed(self._replays, key, flat, recorded)
                if top is not None:
                    keep_largest(data, top)
                last = self._guesses.get(where)
                self._guesses[where] = (key[-1], seen is not None and last is not None
                                        and last[0] == key[-1])
                self._warm.add(where)
            out.append(data)
        else:
            if source is not None:
                require_finite(flat, "x", source)
            out.extend(job(flat[i:i + step]) for i in range(0, b, step))
        data = out[0] if len(out) == 1 else torch.cat(out)
        return BoxMoments(data.reshape(*batch, *self.coef_shape), self, kind)

    def forward(self, x: Any, *, channel_axis: int | None = None) -> BoxMoments:
        """Moments of ``x`` of shape ``(..., *shape)`` (NumPy or torch; never modified).

        ``channel_axis`` (scikit-image's convention): the axis of ``x`` holding colour
        channels, e.g. ``-1`` for ``(H, W, 3)``. Each channel is transformed as an item of the
        batch: the channels become the last batch axis of the moments, and
        :meth:`BoxMoments.reconstruct` puts them back where they were.

        Raises
        ------
        ValueError
            If the trailing shape is not the plan's, or ``x`` holds NaN or infinity.
        """
        t, kind = as_tensor(x, "x", min_ndim=self.ndim, dtype=self.dtype, device=self.device,
                            check_finite=False)  # checked by _forward_tensor
        axis = check_channel_axis(channel_axis, t.ndim, self.ndim, "x")
        t, move = move_channels(t, axis, self.ndim)
        out = self._forward_tensor(t, kind, source=x)
        out.channels = move
        return out

    __call__ = forward

    #: The plan fields that define the basis of the coefficients. Two plans that agree on
    #: them expand in the same functions on the same pixel grid, so moments of one are valid
    #: input to the other's :meth:`inverse`, :meth:`adjoint` and to reconstruction.
    BASIS_FIELDS = ("shape", "order", "alpha", "beta", "truncation", "normalization")

    @property
    def basis(self) -> tuple[Any, ...]:
        """The values of :attr:`BASIS_FIELDS`: equal bases mean interchangeable moments.

        ``k`` and ``quadrature`` only change how the analysis integrals are approximated,
        and ``dtype``, ``device``, ``block``, ``parity`` and ``memory_budget`` only how the
        work is done; none of them changes which function a coefficient multiplies.
        """
        return tuple(getattr(self, f) for f in self.BASIS_FIELDS)

    def check_compatible(self, moments: BoxMoments, name: str = "coeffs") -> None:
        """Raise :class:`ValueError` if ``moments`` were computed in another basis.

        Raises
        ------
        ValueError
            Naming every field of :attr:`BASIS_FIELDS` that differs, with both values.
        """
        other = moments.plan
        if other is self:
            return
        diff = [f"{f}={getattr(other, f)!r} (this plan: {getattr(self, f)!r})"
                for f in self.BASIS_FIELDS if getattr(other, f) != getattr(self, f)]
        if diff:
            raise ValueError(
                f"{name} were computed in another basis: {', '.join(diff)}. Moments are valid "
                f"input only to a plan with the same {', '.join(self.BASIS_FIELDS)} (k, "
                "quadrature, dtype, device, block and parity may differ); use the plan that "
                f"made them ({name}.plan) or its reconstruct()")

    def _coeffs(self, coeffs: Any, name: str) -> tuple[torch.Tensor, ArrayKind]:
        if isinstance(coeffs, BoxMoments):
            self.check_compatible(coeffs, name)
            return coeffs.data.to(device=self.device, dtype=self.dtype), coeffs.kind
        if isinstance(coeffs, Moments):
            raise TypeError(f"{name} must be box moments (BoxMoments) or an array, got "
                            f"{type(coeffs).__name__} ({coeffs.family})")
        t, kind = as_tensor(coeffs, name, min_ndim=self.ndim, dtype=self.dtype,
                            device=self.device)
        if tuple(t.shape[-self.ndim:]) != self.coef_shape:
            raise ValueError(f"{name} must have shape (..., {', '.join(map(str, self.coef_shape))})"
                             f", got {tuple(t.shape)}")
        return t, kind

    def _region(self, region: Any) -> tuple[Any, ...] | None:
        if region is not None:
            if not isinstance(region, (tuple, list)) or len(region) != self.ndim:
                raise ValueError(f"region must give one entry per spatial axis ({self.ndim}), "
                                 f"got {region!r}")
            region = tuple(region)
        return region

    def _synth(self, c: torch.Tensor, table: dict[int, AxisOp], order: int,
               region: Any) -> tuple[torch.Tensor, list[int]]:
        region = self._region(region)
        ops, out_shape, drop = self._ops(table, region)
        batch = tuple(c.shape[:-self.ndim])
        b = math.prod(batch)
        if b == 0:
            out = c.new_zeros((*batch, *out_shape))
            for ax in sorted(drop, reverse=True):
                out = out.squeeze(len(batch) + ax)
            return out, drop
        flat = c.reshape(b, *self.coef_shape)
        where = self._replay_where("inverse", flat, order) if region is None else None
        step = self._step(b, where, order)

        def job(part: torch.Tensor, found: dict | None = None) -> torch.Tensor:
            with matmul_precision(self.precision):
                return synthesize(part, ops, order, self.total, self.block,
                                  self.outside(order), found)

        def recorded() -> tuple[torch.Tensor, torch.Tensor | None]:
            found: dict = {}
            y = job(flat, found)
            return y, found.get("input")

        def one_chunk() -> tuple[torch.Tensor, torch.Tensor | None]:
            if where is None:
                return recorded()
            return replay.replayed(self._replays, self._replay_key(where, flat), flat,
                                   recorded)

        if step >= b:
            y, seen = one_chunk()
            if seen is not None and not float(seen.max()) <= largest_magnitude_value(flat):
                # the scale came from a value kept for these moments (their forward found it)
                # and the moments changed since where torch does not see it (CuPy, DLPack):
                # again with their largest magnitude read now (NaN: as before the check)
                forget_largest(flat)
                y, _ = one_chunk()
            if where is not None:
                self._warm.add(where)
            parts = [y]
        else:
            parts = [job(flat[i:i + step]) for i in range(0, b, step)]
        out = parts[0] if len(parts) == 1 else torch.cat(parts)
        out = out.reshape(*batch, *out_shape)
        for ax in sorted(drop, reverse=True):
            out = out.squeeze(len(batch) + ax)
        return out, drop

    def inverse(self, coeffs: Any, *, order: int | None = None, region: Any = None,
                clip: Any = None, fill: float = math.nan) -> Any:
        """Reconstruct from moments (Eq. 23/26) at pixel centres: whole, partial or a region,
        optionally clipped by planes.

        Parameters
        ----------
        coeffs : BoxMoments or array_like
            Moments from a plan with the same :attr:`basis` (shape, order, alpha, beta,
            truncation, normalization; ``k``, quadrature, dtype, device, block and parity may
            differ), or an array ``(..., *coef_shape)``.
        order : int, optional
            Use only moments up to this order (default: the plan's order).
        region : tuple, optional
            Per spatial axis a ``slice``, a ``(start, stop)`` pair or an integer index (which
            drops the axis); only those pixels are computed.
        clip : Plane, 4 numbers ``(nx, ny, nz, d)`` or a sequence of them, optional
            Volumes only. Keep the voxels on the kept side of every plane (``n.x <= d`` by
            default; see :class:`~fastmoments.box.clip.Plane` for the coordinates, ``x`` along
            W, ``y`` along H, ``z`` along D, each in ``[-1, 1]``). The output keeps the shape
            of the volume (or of ``region``); only the bounding box of the kept voxels (split
            into slabs where that pays) is reconstructed, and the voxels clipped away are set
            to ``fill``. See :mod:`fastmoments.box.clip` for what that saves.
        fill : float
            The value of clipped voxels (with ``clip``). Default NaN: a clipped voxel has no
            value, NaN cannot be mistaken for one (a mean over the volume becomes NaN instead
            of silently counting zeros; use ``np.nanmean``), and plotting libraries draw NaN
            as empty. Use ``fill=0`` for arithmetic (sums, FFTs, thresholds).

        Returns
        -------
        array or tensor
            Same kind as the input that made the moments (or as ``coeffs``).

        Raises
        ------
        ValueError
            If ``coeffs`` are moments of another basis (the message names what differs), or
            an array of the wrong shape; if ``clip`` is given for images (2-D) or holds an
            invalid plane (zero normal, NaN or infinity, not 3 + 1 numbers).
        TypeError
            If ``coeffs`` are moments of another geometry (disk moments); if ``clip`` is not
            planes or numbers, or ``fill`` is not a real number.
        MemoryError
            If the clipped output does not fit the memory budget (said before allocating).
        """
        c, kind = self._coeffs(coeffs, "coeffs")
        m = self.order if order is None else check_int("order", order, minimum=0,
                                                       maximum=self.order)
        if clip is not None or not _is_nan(fill):
            planes = self._check_clip(clip, fill)
            out = self._clipped(c, m, region, planes, float(fill))
            return to_output(out, kind)
        out, _ = self._synth(c, self._synthesis, m, region)
        return to_output(out, kind)

    def _check_clip(self, clip: Any, fill: Any) -> tuple[Any, ...]:
        if isinstance(fill, bool) or not isinstance(fill, numbers.Real):
            raise TypeError(f"fill must be a real number (NaN allowed), got "
                            f"{type(fill).__name__} {fill!r}")
        if clip is None:
            raise ValueError(f"fill={fill!r} is the value of clipped voxels and needs clip "
                             "(planes); without clip nothing is filled")
        if self.ndim != 3:
            raise ValueError(f"clip needs 3-D moments (a volume (D, H, W)), got {self.ndim}-D "
                             f"moments of shape {self.shape}; use region= for part of an image")
        return as_planes(clip, "clip")

    def _clipped(self, c: torch.Tensor, order: int, region: Any, planes: tuple[Any, ...],
                 fill: float) -> torch.Tensor:
        """The volume (or ``region``) with the voxels outside ``planes`` set to ``fill``."""
        ranges, drop = self._ranges(self._region(region))
        frame = [range(n) if r is None else r for n, r in zip(self.shape, ranges, strict=True)]
        batch = tuple(c.shape[:-self.ndim])
        fshape = [len(r) for r in frame]
        voxels = math.prod(fshape)
        item = torch.finfo(self.dtype).bits // 8
        # the output, one box's reconstruction and its masked copy (each at most the output),
        # the box's mask (bytes) and the rows' bounds (a few float64/int64 per row along W)
        need = 3 * math.prod(batch) * voxels * item + voxels + 48 * fshape[0] * fshape[1]
        budget = self._budget_or_none(need)
        if budget is not None and need > budget:
            raise MemoryError(
                f"a clipped reconstruction of {batch + tuple(fshape)} voxels needs at least "
                f"{format_bytes(need)} but the budget is {format_bytes(budget)}; clip a region "
                "(region=), fewer volumes at a time, or raise memory_budget")
        boxes: list[Any] = []
        if math.prod(batch) > 0:
            # each call re-reads and copies the coefficient blocks: about one voxel's work
            # per coefficient (measured: slabs lost to one box below that)
            axis, boxes, rows, hull = clip_boxes(self.shape, planes, ranges=frame,
                                                 call_cost=float(self.order + 1) ** 3,
                                                 device=self.device)
            if boxes:
                assert hull is not None
                perm = _contraction_order(axis, hull, fshape)
                outside = self.outside(order)
                if outside is not None:           # once, not once per box
                    c = c.masked_fill(outside, 0.0)
                # the coefficient axes in contraction order (the total-degree set and the box
                # set are symmetric in the axes), once for every box
                nb = len(batch)
                c = c.permute(*range(nb), *(nb + a for a in perm)).contiguous()
        whole = [(0, n) for n in fshape]
        if len(boxes) == 1 and list(boxes[0]) == whole:
            out = None                            # the box is the frame: no copy
        else:
            out = torch.full((*batch, *fshape), fill, dtype=self.dtype, device=self.device)
        for box in boxes:
            sub = tuple(_as_slice(frame[ax][a:b], n)
                        for ax, ((a, b), n) in enumerate(zip(box, self.shape, strict=True)))
            rec = self._synth_box(c, order, sub, perm)
            if not rows.full(box):
                rec.masked_fill_(rows.outside(box), fill)
            if out is None:
                out = rec
            else:
                out[(Ellipsis, *(slice(a, b) for a, b in box))] = rec
        assert out is not None
        for ax in sorted(drop, reverse=True):
            out = out.squeeze(len(batch) + ax)
        return out

    def _synth_box(self, c: torch.Tensor, order: int, region: tuple[slice, ...],
                   perm: tuple[int, ...]) -> torch.Tensor:
        """Reconstruct the box ``region`` (slices in array axis order) from coefficients
        already masked to the set and permuted to the contraction order ``perm``."""
        ops, out_shape, _drop = self._ops(self._synthesis, region)
        ops = [ops[a] for a in perm]
        batch = tuple(c.shape[:-self.ndim])
        b = math.prod(batch)
        flat = c.reshape(b, *self.coef_shape)
        step = self._chunk(b, order)
        with matmul_precision(self.precision):
            parts = [synthesize(flat[i:i + step], ops, order, self.total, self.block, None)
                     for i in range(0, b, step)]
        out = parts[0] if len(parts) == 1 else torch.cat(parts)
        back = [perm.index(a) for a in range(self.ndim)]
        out = out.permute(0, *(1 + a for a in back))
        return out.reshape(*batch, *out_shape)

    def adjoint(self, y: Any) -> Any:
        """The adjoint of :meth:`forward`: ``<forward(x), y> = <x, adjoint(y)>``.

        Coefficients outside the truncation set are ignored.
        """
        c, kind = self._coeffs(y, "y")
        out, _ = self._synth(c, self._analysis, self.order, None)
        return to_output(out, kind)

    def analysis_matrices(self) -> list[torch.Tensor]:
        """The per-axis analysis matrices ``(order + 1, N_axis)`` in the plan's dtype."""
        return [self._analysis[n].full for n in self.shape]

    def synthesis_matrices(self) -> list[torch.Tensor]:
        """The per-axis synthesis matrices ``(order + 1, N_axis)`` in the plan's dtype."""
        return [self._synthesis[n].full for n in self.shape]


def _contraction_order(axis: int, hull: Any, frame: list[int]) -> tuple[int, ...]:
    """Axes in the order the synthesis contracts them: ``axis`` (the slab axis, which the box
    shrinks most) first, then the others by how much the box shrinks them. The first
    products of the engine cost the most per output voxel (measured: a region of a quarter
    of the first axis took 0.45 of the full time, a quarter of the last 0.86, 128^3 at
    order 100 on one CPU thread), so the largest cut goes first."""
    rest = sorted((a for a in range(3) if a != axis),
                  key=lambda a: ((hull[a][1] - hull[a][0]) / frame[a], a))
    return (axis, *rest)


def _is_nan(value: Any) -> bool:
    return (not isinstance(value, bool) and isinstance(value, numbers.Real)
            and math.isnan(value))


def _as_slice(r: range, n: int) -> slice:
    """A ``range`` of indices on an axis of ``n`` as the slice that selects it."""
    if r == range(n):
        return slice(None)
    return slice(r.start, r.stop if r.stop >= 0 else None, r.step)


# -------------------------------------------------------------------- one-call functions
@lru_cache(maxsize=8)
def _plan(shape: tuple[int, ...], order: int, alpha: float, beta: float, k: int,
          quadrature: str, truncation: str, normalization: str, dtype: torch.dtype,
          device: str) -> JacobiTransform:
    return JacobiTransform(shape, order, alpha=alpha, beta=beta, k=k, quadrature=quadrature,
                           truncation=truncation, normalization=normalization, dtype=dtype,
                           device=device)


def _resolve_ndim(ndim: Any, shape: tuple[int, ...], channels: bool = False) -> int:
    if ndim is None:
        if len(shape) == 2 or (channels and len(shape) == 3):
            return 2
        hint = ""
        if len(shape) == 3 and shape[-1] in (3, 4) and not channels:
            hint = (f"; if x is one colour image with {shape[-1]} channels last, pass "
                    "channel_axis=-1")
        raise ValueError("ndim must be given (2: x is images (..., H, W); 3: x is volumes "
                         f"(..., D, H, W)) when x has 3 or more dimensions, got shape {shape}"
                         f"{hint}")
    nd = check_int("ndim", ndim, minimum=2, maximum=3)
    if len(shape) < nd:
        raise ValueError(f"x must have at least {nd} dimensions for ndim={nd}, got shape {shape}")
    return nd


def _moments(x: Any, order: int, alpha: Any, beta: Any, ndim: Any, k: int, quadrature: str,
             truncation: str, normalization: str, device: Any,
             channel_axis: Any = None) -> BoxMoments:
    t, kind = as_tensor(x, "x", min_ndim=2, device=None if is_multi(device) else device)
    nd = _resolve_ndim(ndim, tuple(t.shape), channels=channel_axis is not None)
    axis = check_channel_axis(channel_axis, t.ndim, nd, "x")
    t, move = move_channels(t, axis, nd)
    if min(t.shape[-nd:]) < 1:
        raise ValueError(f"x must have non-empty spatial axes (the last {nd}), got shape "
                         f"{tuple(t.shape)}")
    order = check_int("order", order, minimum=0)
    alpha = _check_param("alpha", alpha, greater=-1.0)
    beta = _check_param("beta", beta, greater=-1.0)
    _check_alpha_beta(alpha, beta)
    k = check_int("k", k, minimum=1)
    check_choice("quadrature", quadrature, QUADRATURES)
    check_choice("truncation", truncation, TRUNCATIONS)
    plan = _plan(tuple(t.shape[-nd:]), order, alpha, beta, k, quadrature, truncation,
                 normalization, t.dtype, device_key(device, t.device))
    out = plan._forward_tensor(t, kind)
    out.channels = move
    return out


def jacobi_moments(x: Any, order: int, *, alpha: float, beta: float, ndim: int | None = None,
                   k: int = 1, quadrature: str = "midpoint", truncation: str = "total",
                   device: Any = None, channel_axis: int | None = None) -> BoxMoments:
    r"""Jacobi moments :math:`J_{m,n}` / :math:`J_{m,n,o}` of images or volumes (Eq. 21/24, 31-44).

    Parameters
    ----------
    x : array_like or torch.Tensor
        Images ``(..., H, W)`` or volumes ``(..., D, H, W)``; never modified. float32 stays
        float32, float64 stays float64, integers are computed in float32.
    order : int
        Maximum order.
    alpha, beta : float
        Jacobi parameters, > -1.
    ndim : {2, 3}, optional
        2 if ``x`` holds images, 3 if it holds volumes. Required when ``x`` has 3 or more
        dimensions (a 3-D array could be a batch of images or one volume); a 2-D ``x`` is an
        image.
    k : int
        Integration points per pixel and axis.
    quadrature : {'midpoint', 'gauss'}
        Per-pixel rule (``'midpoint'`` is the thesis's k x k sub-regions).
    truncation : {'total', 'box'}
        Keep indices with sum <= order (thesis) or each index <= order.
    device : str or torch.device, optional
        Where to compute (default: where ``x`` is).
    channel_axis : int, optional
        The axis of ``x`` holding colour channels (scikit-image's convention), e.g. ``-1``
        for an ``(H, W, 3)`` image (``ndim`` then defaults to 2). Each channel is transformed
        as an item of the batch: the channels become the last batch axis of the moments
        (``J.batch_shape == (3,)``, ``J[p, q]`` has one value per channel), and
        ``J.reconstruct()`` puts them back where they were (``(H, W, 3)``). The same holds
        for :func:`legendre_moments` and :func:`gegenbauer_moments`.

    Returns
    -------
    BoxMoments
        Indexed ``J[p, q]`` (p along H, q along W) or ``J[p, q, r]`` (along D, H, W);
        ``J.reconstruct()`` rebuilds the input. See :mod:`fastmoments.box.api` for the
        conventions and the float32 error bound.

    Raises
    ------
    ValueError
        For alpha or beta <= -1 or ``alpha + beta > 1000``, a missing or wrong ``ndim``, NaN
        or infinity in ``x``, an empty spatial axis, an unknown ``quadrature`` or
        ``truncation``, a negative ``order``.
    TypeError
        For ``order``, ``k`` or ``ndim`` that are not integers (bools and floats included),
        and ``alpha``/``beta`` that are not real numbers (bools and strings included); all
        checked before the plan cache is consulted.
    MemoryError
        If the tables or one batch element do not fit the memory budget (from
        ``FASTMOMENTS_MEMORY_BUDGET`` or the free memory), before anything is allocated.

    Examples
    --------
    >>> import numpy as np
    >>> img = np.outer(np.ones(64), np.linspace(0, 1, 64))
    >>> J = jacobi_moments(img, 8, alpha=0.3, beta=0.3, k=3)
    >>> float(J[0, 0].round(3)), float(J[1, 0].round(12))   # mean along W; nothing along H
    (0.5, 0.0)
    >>> rec = J.reconstruct()
    >>> bool(np.abs(rec - img).mean() < 2e-3)    # the error shrinks as k grows
    True
    """
    return _moments(x, order, alpha, beta, ndim, k, quadrature, truncation, "jacobi", device,
                    channel_axis)


def legendre_moments(x: Any, order: int, *, ndim: int | None = None, k: int = 1,
                     quadrature: str = "midpoint", truncation: str = "total",
                     device: Any = None, channel_axis: int | None = None) -> BoxMoments:
    r"""Legendre moments: :func:`jacobi_moments` with :math:`\alpha=\beta=0` (Eq. 19).

    Examples
    --------
    >>> import numpy as np
    >>> vol = np.ones((2, 8, 8, 8))                 # two volumes: ndim=3 says so
    >>> L = legendre_moments(vol, 4, ndim=3)
    >>> L[0, 0, 0]
    array([1., 1.])
    """
    return _moments(x, order, 0.0, 0.0, ndim, k, quadrature, truncation, "jacobi", device,
                    channel_axis)


def gegenbauer_moments(x: Any, order: int, *, lam: float, ndim: int | None = None, k: int = 1,
                       quadrature: str = "midpoint", truncation: str = "total",
                       device: Any = None, channel_axis: int | None = None) -> BoxMoments:
    r"""Gegenbauer moments with :math:`G_n^{(\lambda)}` and weight :math:`(1-x^2)^{\lambda-1/2}`.

    Computed as Jacobi moments with :math:`\alpha=\beta=\lambda-1/2`, rescaled to the
    Gegenbauer polynomials (Eq. 20): :math:`J^G_{m,n} = J_{m,n}/(c_m c_n)`. ``lam`` must be
    > -1/2 and != 0.

    Examples
    --------
    >>> import numpy as np
    >>> one = np.ones((16, 16))                  # G_00 of a constant image is that constant
    >>> round(float(gegenbauer_moments(one, 4, lam=1.0)[0, 0]), 4)          # 1 point per pixel
    1.0096
    >>> round(float(gegenbauer_moments(one, 4, lam=1.0, k=16, quadrature="gauss")[0, 0]), 4)
    1.0
    """
    lam = _check_param("lam", lam, greater=-0.5)
    if lam == 0.0:
        raise ValueError("lam must be != 0 (G^(0) is degenerate); use jacobi_moments with "
                         "alpha = beta = -0.5 for Chebyshev moments")
    if 2 * lam - 1 > MAX_ALPHA_PLUS_BETA:
        raise ValueError(f"lam must be <= {(MAX_ALPHA_PLUS_BETA + 1) / 2:g} (alpha = beta = "
                         f"lam - 1/2 with alpha + beta <= {MAX_ALPHA_PLUS_BETA:g}; beyond it the "
                         f"float64 tables overflow), got lam={lam}")
    return _moments(x, order, lam - 0.5, lam - 0.5, ndim, k, quadrature, truncation,
                    "gegenbauer", device, channel_axis)
