r"""Jacobi, Legendre and Gegenbauer moments of images and volumes: the plan.

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
``tests/box/test_moments.py``). With TF32 matrix products on a GPU expect about 1e-3 instead.

The one-call functions are in :mod:`.api`, the clipped reconstruction in :mod:`.clipped`,
and every decision about how a job runs in :mod:`.routes`.
"""

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
from .._route import Route
from .._threads import cpu_call, per_value
from .._validate import check_channel_axis, check_choice, check_int, check_real, check_shape
from ..moments import Moments
from ..parallel import multi_device
from . import clipped, routes
from .engine import PRECISIONS, AxisOp, analyze, matmul_precision, synthesize
from .moments import BoxMoments
from .quadrature import (
    _CHUNK_VALUES,
    NORMALIZATIONS,
    QUADRATURES,
    analysis_matrix,
    synthesis_matrix,
)
from .split import BoxSplit
from .triton_gemm import largest_magnitude

__all__ = ["MAX_ALPHA_PLUS_BETA", "TRUNCATIONS", "JacobiTransform"]

TRUNCATIONS = ("total", "box")

#: Routes a plan keeps (:attr:`JacobiTransform.routes`); later keys are decided on each call,
#: by the same table and so with the same result.
_MAX_ROUTES = 256


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
        H100 and an H200, ``benchmarks/box_tensor_cores.py``). Off otherwise: smaller
        ``"fp16x3"`` volumes would run the classes one by one, on the CPU (torch folds
        there) it measured faster for large volumes at high orders only and slower for
        small ones, and images are bound by launch costs (:func:`.routes.default_parity`).
    memory_budget : float, optional
        Scratch bytes (or fraction of free memory if <= 1) for splitting batches; the plan's
        tables are checked against it too.
    precision : {"float32", "fp16x3"}, optional
        How float32 products run on CUDA: ``"float32"`` (cuBLAS on CUDA cores) or
        ``"fp16x3"`` (float16 tensor cores: each operand kept as two scaled float16 halves,
        three products summed; the stages hand each other their results as halves,
        :func:`fastmoments.box.triton_gemm.halves_product`). ``"fp16x3"`` keeps float32
        accuracy, is more accurate than cuBLAS's float32 products here and, on volumes,
        faster (``benchmarks/box_tensor_cores.py``). Default (``None``): ``"fp16x3"`` for
        float32 volumes on CUDA (with Triton), ``"float32"`` otherwise (images: their small
        products measured faster with cuBLAS; :func:`.routes.default_precision`). Ignored
        on the CPU, in float64 and while a gradient is recorded (the torch products are
        used there). Which kernels a call takes is :attr:`route` (:mod:`.routes`).

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
        if precision is None:
            precision = routes.default_precision(self.ndim, self.dtype, self.device)
        self.precision = check_choice("precision", precision, PRECISIONS)
        if parity is None:
            parity = routes.default_parity(self.shape, self.alpha, self.beta, self.precision,
                                           self.device)
        elif not isinstance(parity, bool):
            raise TypeError(f"parity must be True, False or None, got {parity!r}")
        elif parity and self.alpha != self.beta:
            raise ValueError("parity=True needs alpha == beta (the symmetry P(-x) = (-1)^n P(x)),"
                             f" got alpha={self.alpha}, beta={self.beta}")
        self.symmetric = parity
        if block is None:
            block = routes.default_block(self.ndim, self.order, self.truncation, parity,
                                         self.precision)
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
        self._outside: dict[int, torch.Tensor] = {}
        self._outside_lock = threading.Lock()
        # the route of each (direction, chunk elements, dtype, device, grad) key, decided
        # on its first call (:mod:`.routes`); the plan's own route decided now
        self._routes: dict[tuple, Route] = {}
        self._route = self._route_of("forward", math.prod(self.shape), self.dtype,
                                     self.device, False)

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
                f"dtype={self.dtype}, device={self.device}, route={self.route})")

    @property
    def route(self) -> Route:
        """The route of a forward call on one item in the plan's dtype, decided when the
        plan was built (:func:`.routes.route`: products, folds, kernels, and why)."""
        return self._route

    @property
    def routes(self) -> dict[tuple, Route]:
        """Every route taken so far, by key ``(direction, chunk elements, dtype, device,
        grad)``: a copy."""
        return dict(self._routes)

    def _route_of(self, direction: str, elements: int, dtype: torch.dtype,
                  device: torch.device, grad: bool) -> Route:
        """The route of a key, decided on its first call and kept (:func:`.routes.route`;
        the same for every call of the key, so concurrent first calls agree)."""
        key = (direction, elements, dtype, device, grad)
        hit = self._routes.get(key)
        if hit is None:
            hit = routes.route(self, direction, elements, dtype, device, grad=grad)
            if len(self._routes) < _MAX_ROUTES:  # (batch sizes are many: a bounded record)
                hit = self._routes.setdefault(key, hit)
        return hit

    def _run(self, direction: str, part: torch.Tensor, ops: list[AxisOp], order: int,
             outside: torch.Tensor | None, top: float | None = None) -> torch.Tensor:
        """One chunk through the engine, on its route (kept in :attr:`routes`); ``top``:
        ``max |part|`` when the input check read it."""
        self._route_of(direction, part.numel(), part.dtype, part.device,
                       torch.is_grad_enabled() and part.requires_grad)
        with matmul_precision(self.precision):
            if direction == "forward":
                return analyze(part, ops, self.order, self.total, self.block, outside, top)
            return synthesize(part, ops, order, self.total, self.block, outside)

    def outside(self, order: int | None = None) -> torch.Tensor | None:
        """Boolean mask of the coefficients not in the set for ``order`` (``None``: all are).

        Built once per order and kept (the plan's own order, and the last partial order
        asked for: each is ``(order + 1)^ndim`` bytes); safe to call from several threads
        on one plan (the cache is changed under a lock, and a caller keeps the mask it got).
        """
        m = self.order if order is None else order
        if not self.total and m == self.order:
            return None
        with self._outside_lock:
            mask = self._outside.get(m)
            if mask is None:
                mask = self._mask(m)
                self._outside = {k: v for k, v in self._outside.items() if k == self.order}
                self._outside[m] = mask
        return mask

    def _mask(self, m: int) -> torch.Tensor:
        """The mask of :meth:`outside` for order ``m``, built anew."""
        idx = torch.arange(self.order + 1, device=self.device, dtype=torch.int32)
        if self.total:
            if self.ndim == 2:
                return idx[:, None] + idx[None, :] > m
            qr = idx[:, None] + idx[None, :]
            return torch.stack([qr > m - p for p in range(self.order + 1)])
        big = idx > m
        mask = big[:, None] | big[None, :]
        if self.ndim == 3:
            mask = mask[None, :, :] | big[:, None, None]
        return mask

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


    # ---------------------------------------------------------------- transforms
    # work: the first axis's matrix product dominates, (order + 1) k multiply-adds per value,
    # a matrix product's multiply-add being about a quarter of the unit of GRAIN
    @cpu_call(per_value(lambda self, *a, **k: self.k * (self.order + 1) / 4, arg=1))
    def _forward_tensor(self, t: torch.Tensor, kind: ArrayKind,
                        source: Any = None) -> BoxMoments:
        """The moments of ``t`` (the plan's trailing shape); ``source``: when given, ``t``
        is not checked for NaN and infinity yet (``source`` is what the caller passed, for
        the error), and is checked here, before the work."""
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
        top = None
        if source is not None:  # one reduction: the check, and the scale of one chunk
            top = largest_magnitude(flat)
            if not math.isfinite(top):
                require_finite(flat, "x", source)  # the check's own error
        ops = [self._analysis[n] for n in self.shape]
        step = self._chunk(b)
        outside = self.outside()
        out = [self._run("forward", flat[i:i + step], ops, self.order, outside,
                         top if step >= b else None)
               for i in range(0, b, step)]
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
        step = self._chunk(b, order)
        outside = self.outside(order)
        parts = [self._run("inverse", flat[i:i + step], ops, order, outside)
                 for i in range(0, b, step)]
        out = parts[0] if len(parts) == 1 else torch.cat(parts)
        out = out.reshape(*batch, *out_shape)
        for ax in sorted(drop, reverse=True):
            out = out.squeeze(len(batch) + ax)
        return out, drop

    @cpu_call(per_value(lambda self, *a, **k: math.prod(self.shape)
                        / (4 * (self.order + 1) ** (self.ndim - 1)), arg=1))
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
        if clip is not None or not clipped.is_nan(fill):
            planes = clipped.check_clip(self, clip, fill)
            out = clipped.reconstruct(self, c, m, region, planes, float(fill))
            return to_output(out, kind)
        out, _ = self._synth(c, self._synthesis, m, region)
        return to_output(out, kind)


    @cpu_call(per_value(lambda self, *a, **k: math.prod(self.shape)
                        / (4 * (self.order + 1) ** (self.ndim - 1)), arg=1))
    def adjoint(self, y: Any) -> Any:
        """The adjoint of :meth:`forward`: ``<forward(x), y> = <x, adjoint(y)>``.

        Coefficients outside the truncation set are ignored.
        """
        c, kind = self._coeffs(y, "y")
        out, _ = self._synth(c, self._analysis, self.order, None)
        return to_output(out, kind)

    def analysis_matrices(self) -> list[torch.Tensor]:
        """The per-axis analysis matrices ``(order + 1, N_axis)`` in the plan's dtype (copies:
        the plan's own tables, and what it derives from them, never change)."""
        return [self._analysis[n].full.clone() for n in self.shape]

    def synthesis_matrices(self) -> list[torch.Tensor]:
        """The per-axis synthesis matrices ``(order + 1, N_axis)`` in the plan's dtype
        (copies, as :meth:`analysis_matrices`)."""
        return [self._synthesis[n].full.clone() for n in self.shape]


