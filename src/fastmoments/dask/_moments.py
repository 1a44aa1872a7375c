"""The flat coefficients of any disk or box plan over a chunked batch (dask arrays)."""

from __future__ import annotations

import string
from typing import Any

import dask.array as da
import numpy as np
import torch

from ..box.api import JacobiTransform
from ..disk.pht import PolarHarmonicTransform
from ..disk.transform import DiskTransform
from ._features import DEVICE_LIST_HINT, _check_darr, _single_chunk_tail
from ._workers import cached_factory, configure_threads

__all__ = ["flat_index", "moments", "recipe"]


def _dtype_name(dtype: torch.dtype) -> str:
    return "float64" if dtype == torch.float64 else "float32"


def recipe(plan: Any) -> tuple:
    """The plain values that rebuild ``plan`` on a worker (what every task carries).

    Parameters
    ----------
    plan : DiskTransform, PolarHarmonicTransform or JacobiTransform
        Any disk plan (Zernike, pseudo-Zernike, polar harmonic) or box plan (Legendre,
        Gegenbauer, Jacobi; 2-D or 3-D).

    Returns
    -------
    tuple
        Hashable: strings, numbers and tuples only (the key of the worker's plan cache).

    Raises
    ------
    TypeError
        For any other object.

    Examples
    --------
    >>> from fastmoments.disk import ZernikeTransform
    >>> recipe(ZernikeTransform(16, 2))[:3]
    ('disk', 'zernike', 16)
    """
    dev = str(plan.device) if hasattr(plan, "device") else None
    if isinstance(plan, PolarHarmonicTransform):
        return ("pht", plan.kind, int(plan.size), tuple(sorted(plan.index.pairs())), float(plan.s),
                int(plan.k), plan.quadrature, plan.rule, plan.requested_method,
                float(plan.eps), _dtype_name(plan.dtype), dev, plan._budget)
    if isinstance(plan, DiskTransform):
        return ("disk", plan.family.name, int(plan.size), tuple(sorted(plan.index.pairs())),
                int(plan.k), plan.quadrature, plan.rule, plan.method,
                _dtype_name(plan.dtype), dev, plan._budget)
    if isinstance(plan, JacobiTransform):
        return ("box", tuple(int(s) for s in plan.shape), int(plan.order), float(plan.alpha),
                float(plan.beta), int(plan.k), plan.quadrature, plan.truncation,
                plan.normalization, _dtype_name(plan.dtype), dev, int(plan.block),
                bool(plan.symmetric), plan.memory_budget)
    if type(plan).__name__ == "ParallelPlan":
        raise TypeError(f"plan must be a plan on one device, got a ParallelPlan over "
                        f"{getattr(plan, 'devices', 'several devices')}: {DEVICE_LIST_HINT}")
    raise TypeError(f"plan must be a disk plan (DiskTransform, ZernikeTransform, "
                    f"PseudoZernikeTransform, PolarHarmonicTransform) or a box plan "
                    f"(JacobiTransform), got {type(plan).__name__}")


def _box_mask(shape: tuple[int, ...], order: int, truncation: str) -> np.ndarray:
    grids = np.indices(shape)
    if truncation == "total":
        return grids.sum(axis=0) <= order
    return np.ones(shape, dtype=bool)


def flat_index(plan: Any) -> list[tuple[int, ...]]:
    """Which moment each column of :func:`moments` holds: ``(n, m)`` for disk plans (sorted
    by ``n``, then ``m``: the order of :meth:`DiskMoments.values`), ``(p, q)`` or
    ``(p, q, r)`` for box plans (C order over the stored indices).

    Examples
    --------
    >>> from fastmoments.box import JacobiTransform
    >>> flat_index(JacobiTransform((8, 8), 1))
    [(0, 0), (0, 1), (1, 0)]
    """
    r = recipe(plan)
    if r[0] == "box":
        data_shape = (plan.order + 1,) * plan.ndim
        mask = _box_mask(data_shape, plan.order, plan.truncation)
        return [tuple(int(v) for v in ix) for ix in np.argwhere(mask)]
    return [tuple(p) for p in r[3]]


class _PlanJob:
    """A worker's copy of a plan, rebuilt from its recipe, and how to read the flat
    coefficients in the client's column order."""

    def __init__(self, rec: tuple) -> None:
        kind = rec[0]
        if kind == "pht":
            (_, k_, size, pairs, s, k, quad, rule, method, eps, dt, dev, budget) = rec
            self.plan = PolarHarmonicTransform(k_, size, pairs=list(pairs), s=s, k=k,
                                               quadrature=quad, rule=rule, method=method,
                                               eps=eps, dtype=dt, device=dev,
                                               memory_budget=budget)
        elif kind == "disk":
            (_, fam, size, pairs, k, quad, rule, method, dt, dev, budget) = rec
            self.plan = DiskTransform(fam, size, k=k, quadrature=quad, rule=rule,
                                      method=method, pairs=list(pairs), dtype=dt, device=dev,
                                      memory_budget=budget)
        else:
            (_, shape, order, alpha, beta, k, quad, trunc, norm, dt, dev, block, sym,
             budget) = rec
            self.plan = JacobiTransform(shape, order, alpha=alpha, beta=beta, k=k,
                                        quadrature=quad, truncation=trunc,
                                        normalization=norm, dtype=dt, device=dev,
                                        block=block, parity=sym, memory_budget=budget)
        self.kind = kind
        if kind == "box":
            shape = (self.plan.order + 1,) * self.plan.ndim
            self.mask = torch.as_tensor(_box_mask(shape, self.plan.order, self.plan.truncation))
        else:
            mine = {p: i for i, p in enumerate(sorted(self.plan.index.pairs()))}
            self.perm = torch.as_tensor([mine[tuple(p)] for p in rec[3]], dtype=torch.long)

    def __call__(self, block: np.ndarray) -> np.ndarray:
        res = self.plan.forward(block)
        data = res.data
        if self.kind == "box":
            flat = data[..., self.mask.to(data.device)]
        else:
            flat = res._flat().resolve_conj()
            flat = flat.index_select(-1, self.perm.to(flat.device))
        return flat.detach().cpu().numpy()


@cached_factory("moments", maxsize=32)
def _plan_job(rec: tuple) -> _PlanJob:
    return _PlanJob(rec)


def _moments_block(block: np.ndarray, rec: tuple, n_coef: int, dtype: str) -> np.ndarray:
    if block.size == 0:
        nd = 3 if rec[0] == "box" and len(rec[1]) == 3 else 2
        return np.empty((*block.shape[:-nd], n_coef), dtype=dtype)
    configure_threads()
    return _plan_job(rec)(block)


def moments(plan: Any, darr: Any, *, rechunk: bool = True) -> da.Array:
    r"""The flat coefficients of ``plan`` for every image (or volume) of a chunked batch.

    Parameters
    ----------
    plan : DiskTransform, PolarHarmonicTransform or JacobiTransform
        Any disk plan (Zernike, pseudo-Zernike, polar harmonic) or box plan (Legendre,
        Gegenbauer, Jacobi, 2-D or 3-D). Only its plain parameters (:func:`recipe`) enter the
        graph; each worker process rebuilds it once.
    darr : dask.array.Array
        ``(..., N, N)`` for a disk plan of size ``N``, ``(..., H, W)`` or ``(..., D, H, W)``
        for a box plan of that shape; chunked along the batch axes.
    rechunk : bool
        Merge split image (volume) axes into one chunk (default); ``False`` raises instead.

    Returns
    -------
    dask.array.Array
        ``(..., n_coefficients)``: complex (complex64 for a float32 plan, complex128 for
        float64) for disk plans, in the order of ``plan.index.pairs()`` (as
        :meth:`DiskMoments.values`); real (the plan's dtype) for box plans, the stored
        ``J[p, q(, r)]`` in C order. :func:`flat_index` names the columns. Chunks follow
        ``darr``'s batch chunks.

    Raises
    ------
    TypeError
        ``plan`` not a disk or box plan; ``darr`` not a dask array of real numbers.
    ValueError
        Image axes that do not match the plan, too few dimensions, split image axes with
        ``rechunk=False``.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from fastmoments.disk import ZernikeTransform
    >>> plan = ZernikeTransform(16, 3, dtype="float64")
    >>> x = np.random.default_rng(2).random((5, 16, 16))
    >>> A = moments(plan, da.from_array(x, chunks=(2, 16, 16)))
    >>> A.shape, A.dtype, A.chunks[0]
    ((5, 6), dtype('complex128'), (2, 2, 1))
    >>> bool(np.allclose(A.compute(scheduler="sync"), plan.forward(x).values(), rtol=1e-12))
    True
    """
    rec = recipe(plan)
    if rec[0] == "box":
        tail = tuple(plan.shape)
        what = f"{'volumes' if len(tail) == 3 else 'images'} of shape {tail}"
        dtype = rec[9]
    else:
        tail = (plan.size, plan.size)
        what = f"images of shape {tail}"
        dtype = "complex128" if rec[-3] == "float64" else "complex64"
    nd = len(tail)
    darr = _check_darr(darr, min_ndim=nd)
    if tuple(darr.shape[-nd:]) != tail:
        raise ValueError(f"darr must hold {what} for this plan (shape (..., "
                         f"{', '.join(map(str, tail))})), got shape {darr.shape}")
    darr = _single_chunk_tail(darr, nd, rechunk, what)
    n_coef = len(flat_index(plan))
    batch = string.ascii_letters[: darr.ndim - nd]
    img = "xyz"[:nd]
    # rec, n_coef and the dtype travel as plain positional values (index None)
    return da.blockwise(_moments_block, batch + "c", darr, batch + img, rec, None, n_coef,
                        None, dtype, None, new_axes={"c": n_coef}, concatenate=True,
                        meta=np.empty((0,) * (darr.ndim - nd + 1), dtype=dtype),
                        token="fastmoments-moments")
