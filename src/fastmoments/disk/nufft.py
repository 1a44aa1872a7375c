r"""The polar harmonic transforms as a 2-D type-1 non-uniform FFT (``method="nufft"``).

At the sample points :math:`(r_p, \theta_p)` of the disk engine the PCET sum is

.. math:: F_{nl} = \sum_p c_p\, e^{-i(n x_p + l y_p)}, \qquad
          x_p = a r_p^s,\; y_p = \theta_p,\; c_p = w_p \sqrt{s r_p^{s-2}/2}\, f_p,

a type-1 NUFFT with :math:`a = 2\pi` (PCET, :math:`M_{nl} = F_{nl}/\pi`). For PCT and PST
:math:`a = \pi` and the cosine and sine are split into exponentials:
:math:`M^C_{nl} = \Omega_n (F_{nl} + F_{-n,l})/2`,
:math:`M^S_{nl} = \Omega_n (F_{-n,l} - F_{nl})/(2i)`. The cost is :math:`O(P + K \log K)` per
image instead of the :math:`O(PK)` of the direct sum; the result matches the direct sum to
the requested ``eps`` (relative to the 2-norm of the sources, the guarantee of finufft).

The CPU library ``finufft`` (Barnett, Magland and af Klinteberg) is imported lazily. When it is
missing the plan computes with the two-stage engine instead and warns once. On a CUDA device
the points are sent to the host library (a warning says so once): the GPU library
``cufinufft`` is not used yet.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from .._memory import memory_budget
from .sampling import plan_points

if TYPE_CHECKING:  # pragma: no cover
    from .pht_plan import PolarHarmonicTransform

__all__ = ["have_finufft", "nufft_forward"]

_WARNED: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=4)


def _finufft() -> Any:
    try:
        import finufft
    except ImportError:
        return None
    return finufft


def have_finufft() -> bool:
    """Whether the ``finufft`` package can be imported."""
    return _finufft() is not None


class _Geometry:
    """Points, source weights and the gather tables of one plan (built once, on the host)."""

    def __init__(self, plan: PolarHarmonicTransform) -> None:
        fam = plan.family
        r, theta, w, pix = plan_points(plan)
        self.x = np.ascontiguousarray(fam.freq * r**fam.s)
        self.y = np.ascontiguousarray(theta)
        amp = 1.0 if fam.s == 2.0 else np.sqrt(0.5 * fam.s * r ** (fam.s - 2.0))
        self.w = np.asarray(w * amp, dtype=np.float64)
        self.pix = pix
        idx = plan.index
        pairs = idx.pairs()
        self.valid = torch.as_tensor(idx.valid_mask())
        n = np.array([p[0] for p in pairs])
        m = np.array([p[1] for p in pairs])
        self.nabs = int(np.abs(n).max())
        self.lmax = int(m.max())
        self.modes = (2 * self.nabs + 1, 2 * self.lmax + 1)
        self.pos = torch.as_tensor((n + self.nabs) * self.modes[1] + (m + self.lmax))
        self.neg = torch.as_tensor((-n + self.nabs) * self.modes[1] + (m + self.lmax))
        self.norm = torch.as_tensor(fam.norm(idx)[idx.valid_mask()])
        self.kind = fam.kind
        self.plans: dict[int, Any] = {}


def _geometry(plan: PolarHarmonicTransform) -> _Geometry:
    if plan._nufft is None:
        plan._nufft = _Geometry(plan)
    return plan._nufft


def _run(plan: PolarHarmonicTransform, x: torch.Tensor) -> torch.Tensor:
    """Forward NUFFT of ``x`` (B, N*N) -> (B, cols, rows) complex on ``plan.device``."""
    fin = _finufft()
    geo = _geometry(plan)
    double = plan.dtype == torch.float64
    cdt = np.complex128 if double else np.complex64
    rdt = np.float64 if double else np.float32
    B = x.shape[0]
    P = geo.x.shape[0]
    F = geo.modes[0] * geo.modes[1]
    per_image = 16 * (P + 5 * F) if double else 8 * (P + 5 * F)
    budget = memory_budget(torch.device("cpu"), plan._budget)
    chunk = int(max(1, min(B, budget // max(per_image, 1))))
    xs = x.detach().to("cpu", torch.float64 if double else torch.float32).numpy()
    w = geo.w.astype(rdt)
    out = np.empty((B, F), dtype=cdt)
    for b0 in range(0, B, chunk):
        b1 = min(B, b0 + chunk)
        nt = b1 - b0
        fp = geo.plans.get(nt)
        if fp is None:
            fp = fin.Plan(1, geo.modes, n_trans=nt, eps=plan.eps, isign=-1,
                          dtype="complex128" if double else "complex64")
            fp.setpts(geo.x.astype(rdt), geo.y.astype(rdt))
            if len(geo.plans) >= 4:
                geo.plans.pop(next(iter(geo.plans)))
            geo.plans[nt] = fp
        c = np.ascontiguousarray(xs[b0:b1][:, geo.pix] * w, dtype=cdt)
        res = fp.execute(c if nt > 1 else c[0])
        out[b0:b1] = res.reshape(nt, F)
    Ft = torch.from_numpy(out)
    if geo.kind == "pcet":
        vals = Ft[:, geo.pos]
    elif geo.kind == "pct":
        vals = 0.5 * (Ft[:, geo.pos] + Ft[:, geo.neg])
    else:
        vals = (Ft[:, geo.neg] - Ft[:, geo.pos]) * (-0.5j)
    vals = vals * geo.norm.to(vals.real.dtype)
    coef = torch.zeros(B, plan.index.n_cols, plan.index.n_rows, dtype=vals.dtype)
    coef[:, geo.valid] = vals
    return coef.to(plan.device)


class _NufftFunction(torch.autograd.Function):
    """Forward through the NUFFT; backward through the engine's adjoint (same linear map)."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, plan: Any) -> torch.Tensor:  # type: ignore[override]
        ctx.plan = plan
        return _run(plan, x)

    @staticmethod
    def backward(ctx: Any, g: torch.Tensor) -> tuple[torch.Tensor, None]:  # type: ignore[override]
        plan = ctx.plan
        ones = torch.ones(plan.index.n_cols, device=plan.device)
        grad = plan.engine.synthesize(g, gamma=ones, weighted=True, normalized=True)
        return grad, None


def nufft_forward(plan: PolarHarmonicTransform, x: torch.Tensor) -> torch.Tensor:
    """Moments of ``x`` (B, N*N) through the type-1 NUFFT, or the engine if finufft is
    missing (with a warning, once)."""
    if not have_finufft():
        _warn_once("missing", "method='nufft' needs the 'finufft' package, which is not "
                   "installed; computing with the two-stage engine instead")
        return plan.engine.forward(x)
    if plan.device.type == "cuda":
        _warn_once("cuda", "method='nufft' on a CUDA device runs finufft on the host "
                   "(cufinufft is not used); the images are copied to the CPU")
    return _NufftFunction.apply(x, plan)
