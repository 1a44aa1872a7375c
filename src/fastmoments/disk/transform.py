"""Plans for disk transforms: built once for a geometry, applied to batches ``(..., N, N)``."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from .._array import as_tensor, real_dtype, resolve_device, to_output
from .._validate import check_choice, check_int
from ..parallel import device_key, multi_device
from .engine import DiskEngine
from .families import DiskFamily, get_family
from .indexing import IndexSet
from .sampling import QUADRATURES, RULES, disk_sampling

__all__ = ["DiskTransform", "PseudoZernikeTransform", "ZernikeTransform", "cached_transform"]

#: Named subsets of repetitions for partial reconstruction (thesis Fig. 5.7 / 5.13).
REPETITION_SETS = ("all", "positive", "negative", "zero", "nonnegative", "nonpositive")


@multi_device
class DiskTransform:
    r"""A transform on the unit disk for ``N x N`` images, built once and applied to batches.

    Parameters
    ----------
    family : str
        ``"zernike"`` or ``"pseudo-zernike"`` (the polar harmonic families register more).
    size : int
        Image side ``N``.
    order : int
        Highest order ``T`` (ignored when ``pairs`` is given).
    k : int
        Sample points per pixel and axis (thesis Eq. 3.19-3.23).
    quadrature : {"midpoint", "gauss"}
        Sub-pixel rule: the thesis's k x k midpoint sub-regions or Gauss-Legendre.
    rule : {"inscribed", "centre"}
        Which pixels are used: those entirely inside the disk (thesis) or whose centre is.
    method : str, optional
        Radial method (:mod:`fastmoments.disk.radial`); default ``"deng"`` (the thesis's
        recurrence) for full sets on the CPU, ``"jacobi"`` for selections and for full sets
        on a CUDA device with Triton (it runs in the fused kernels of
        :mod:`fastmoments.disk.triton_radial`).
    repetitions : sequence of int, optional
        Compute only these repetitions (all orders of each).
    pairs : sequence of (n, m), optional
        Compute only these moments (selected moments).
    dtype : torch.dtype or str
        Working precision: float32 (default) or float64.
    device : str or torch.device, optional
        Where the work runs (default CPU).
    memory_budget : int or float, optional
        Scratch memory in bytes (or a fraction of free memory if <= 1).

    Notes
    -----
    Moments follow the thesis's normalization (Eq. 2.10 / 3.23):
    :math:`A_{nm} = \frac{n+1}{\pi} \sum f\, V^*_{nm}\, \Delta x \Delta y` with
    :math:`\Delta x = \Delta y = 2/(Nk)`; the two-stage engine is described in
    :mod:`fastmoments.disk.engine`.
    """

    def __init__(self, family: str | DiskFamily, size: int, order: int = 0, *, k: int = 1,
                 quadrature: str = "midpoint", rule: str = "inscribed", method: str | None = None,
                 repetitions: Sequence[int] | None = None,
                 pairs: Sequence[tuple[int, int]] | None = None,
                 dtype: torch.dtype | str = torch.float32, device: Any = None,
                 memory_budget: float | None = None, index: IndexSet | None = None) -> None:
        self.family = get_family(family) if isinstance(family, str) else family
        self.size = check_int("size", size, minimum=1)
        self.k = check_int("k", k, minimum=1)
        self.quadrature = check_choice("quadrature", quadrature, QUADRATURES)
        self.rule = check_choice("rule", rule, RULES)
        self.dtype = real_dtype(dtype)
        self.device = resolve_device(device)
        selection = pairs is not None or repetitions is not None
        self.method = self.family.check_method(method, selection=selection, device=self.device)
        if index is not None:
            self.index = index
        elif pairs is not None:
            pairs = list(pairs)
            if not pairs:
                raise ValueError("pairs must name at least one (n, m)")
            self.index = self.family.selection(pairs)
        else:
            order = check_int("order", order, minimum=0)
            if repetitions is not None:
                reps = [check_int("repetitions", m, minimum=None) for m in repetitions]
                bad = [m for m in reps if abs(m) > order]
                if bad:
                    raise ValueError(f"repetitions must satisfy |m| <= order={order}, got {bad}")
                self.index = self.family.full(order, reps)
            else:
                self.index = self.family.full(order)
        self.order = self.index.max_order
        self._budget = memory_budget
        self.sampling = disk_sampling(self.size, self.k, self.quadrature, self.rule)
        self.engine = DiskEngine(self.sampling, self.family, self.index, self.method,
                                 self.dtype, self.device, memory_budget)
        self._recon_engine: DiskEngine | None = None

    # ------------------------------------------------------------------ helpers
    @property
    def mask(self) -> np.ndarray:
        """Pixels used by the transform (``(N, N)`` bool)."""
        return self.sampling.mask

    def _images(self, image: Any) -> tuple[torch.Tensor, Any, tuple[int, ...]]:
        x, kind = as_tensor(image, "image", min_ndim=2, dtype=self.dtype, device=self.device)
        if x.shape[-1] != x.shape[-2]:
            raise ValueError(f"image must be square (..., N, N) to map onto the unit disk, got "
                             f"shape {tuple(x.shape)}; crop or pad it first")
        if x.shape[-1] != self.size:
            raise ValueError(f"image must be {self.size}x{self.size} for this plan, got shape "
                             f"{tuple(x.shape)}")
        batch = tuple(x.shape[:-2])
        return x.reshape(-1, self.size * self.size), kind, batch

    def recon_engine(self) -> DiskEngine:
        """Engine on the pixel centres (one point per pixel) for reconstruction."""
        if self._recon_engine is None and self.k == 1 and self.quadrature == "midpoint":
            self._recon_engine = self.engine  # the sample points are the pixel centres
        if self._recon_engine is None:
            centre = disk_sampling(self.size, 1, "midpoint", self.rule)
            self._recon_engine = DiskEngine(centre, self.family, self.index, self.method,
                                            self.dtype, self.device, self._budget)
        return self._recon_engine

    # ------------------------------------------------------------------ transforms
    def forward(self, image: Any):
        """Moments of ``image`` shaped ``(..., N, N)``; returns :class:`DiskMoments`."""
        from .moments import DiskMoments

        x, kind, batch = self._images(image)
        coef = self.engine.forward(x)
        coef = coef.reshape(*batch, self.index.n_cols, self.index.n_rows)
        return DiskMoments(coef, self, kind)

    __call__ = forward

    def _coef_tensor(self, moments: Any) -> tuple[torch.Tensor, Any, tuple[int, ...]]:
        from .moments import DiskMoments

        if isinstance(moments, DiskMoments):
            if moments.plan.index != self.index:
                raise ValueError("moments were computed by a plan with another set of moments")
            return moments.data, moments.kind, moments.batch_shape
        t, kind = as_tensor(moments, "moments", min_ndim=2, allow_complex=True,
                            dtype=self.dtype, device=self.device)
        shape = (self.index.n_cols, self.index.n_rows)
        if tuple(t.shape[-2:]) != shape:
            raise ValueError(f"moments must have shape (..., {shape[0]}, {shape[1]}), got "
                             f"{tuple(t.shape)}")
        return t, kind, tuple(t.shape[:-2])

    def adjoint(self, moments: Any) -> Any:
        r"""The adjoint of :meth:`forward` for the real inner product on images and
        :math:`\mathrm{Re}\langle a, b\rangle` on the stored coefficients."""
        coef, kind, batch = self._coef_tensor(moments)
        gamma = torch.ones(self.index.n_cols, device=self.device)
        img = self.engine.synthesize(coef.reshape(-1, *coef.shape[-2:]), gamma=gamma,
                                     weighted=True, normalized=True)
        return to_output(img.reshape(*batch, self.size, self.size), kind)

    def synthesize(self, coef: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
        """Reconstruct at pixel centres from ``(B, cols, rows)`` coefficients (unmasked
        pixels are 0)."""
        eng = self.recon_engine()
        return eng.synthesize(coef, gamma=gamma, weighted=False, normalized=False)


class ZernikeTransform(DiskTransform):
    """Zernike moments plan: ``ZernikeTransform(size, order, k=..., ...)``.

    Examples
    --------
    >>> import numpy as np
    >>> plan = ZernikeTransform(32, 10)
    >>> A = plan.forward(np.ones((32, 32)))
    >>> # A_00 of a constant image is (0+1)/pi times the area of the used pixels
    >>> bool(np.isclose(A[0, 0].real * np.pi, plan.mask.sum() * (2 / 32) ** 2))
    True
    """

    def __init__(self, size: int, order: int = 0, **kwargs: Any) -> None:
        super().__init__("zernike", size, order, **kwargs)


class PseudoZernikeTransform(DiskTransform):
    """Pseudo-Zernike moments plan: ``PseudoZernikeTransform(size, order, k=..., ...)``."""

    def __init__(self, size: int, order: int = 0, **kwargs: Any) -> None:
        super().__init__("pseudo-zernike", size, order, **kwargs)


@lru_cache(maxsize=8)
def _cached(family: str, size: int, order: int, k: int, quadrature: str, rule: str,
            method: str | None, repetitions: tuple[int, ...] | None,
            pairs: tuple[tuple[int, int], ...] | None, dtype: torch.dtype, device: str,
            budget: float | None) -> DiskTransform:
    return DiskTransform(family, size, order, k=k, quadrature=quadrature, rule=rule,
                         method=method, repetitions=repetitions, pairs=pairs, dtype=dtype,
                         device=device, memory_budget=budget)


def cached_transform(family: str, size: int, order: int, *, k: int, quadrature: str, rule: str,
                     method: str | None, repetitions: Sequence[int] | None,
                     pairs: Sequence[tuple[int, int]] | None, dtype: torch.dtype,
                     device: torch.device, memory_budget: float | None) -> DiskTransform:
    """A plan from a small cache keyed on plain values (never tensors)."""
    reps = None if repetitions is None else tuple(int(m) for m in repetitions)
    prs = None if pairs is None else tuple((int(n), int(m)) for n, m in pairs)
    return _cached(family, size, order, k, quadrature, rule, method, reps, prs, dtype,
                   device_key(device), memory_budget)
