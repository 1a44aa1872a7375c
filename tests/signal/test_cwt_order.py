"""CWT rows follow the caller's scale order on every engine, method and output path.

The reference is an independent float64 direct convolution per scale (Eq. 52, support wide
enough that truncation is below 1e-16), with scipy.ndimage's "reflect" extension (NumPy's
"symmetric" padding).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.signal import CWT

ORDERS = {
    "descending": (64.0, 16.0, 4.0),
    "unsorted": (16.0, 4.0, 64.0, 7.0),
    "repeated": (8.0, 3.0, 8.0, 3.0, 30.0),
}
CASES = [  # (method, engine)
    ("sft", "auto"), ("sft", "chunked"), ("sft", "prefix"), ("sft", "recursive"),
    ("sft", "sliding"), ("asft", "chunked"), ("asft", "recursive"), ("asft", "sliding"),
    ("direct", "auto"),
]


def reference(x: np.ndarray, sigma: float, xi: float = 6.0) -> np.ndarray:
    """``W[n] = Σ_k ψ[k] x[n - k]`` in float64, ``ψ`` of Eq. 52 on ``|k| ≤ 10σ``."""
    c = (1.0 + math.exp(-xi * xi) - 2.0 * math.exp(-0.75 * xi * xi)) ** -0.5
    kappa = math.exp(-0.5 * xi * xi)
    w = math.ceil(10 * sigma)
    k = np.arange(-w, w + 1, dtype=np.float64)
    psi = (c * math.pi ** -0.25 / math.sqrt(sigma) * np.exp(-0.5 * (k / sigma) ** 2)
           * (np.exp(1j * xi * k / sigma) - kappa))
    n = len(x)
    reps = -(-w // n) + 1
    xp = np.pad(x, reps * n, mode="symmetric")  # scipy.ndimage "reflect", any length
    off = reps * n
    out = np.zeros(n, dtype=np.complex128)
    for j, h in zip(k.astype(int), psi, strict=True):
        out += h * xp[off - j: off - j + n]
    return out


def relerr(a, b) -> float:
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.fixture(scope="module")
def signal():
    return np.random.default_rng(7).standard_normal(700)


@pytest.fixture(scope="module")
def refs(signal):
    scales = sorted({s for v in ORDERS.values() for s in v})
    return {s: reference(signal, s) for s in scales}


def _check(coef, scales, plan, refs):
    assert coef.shape[0] == len(scales)
    for i, s in enumerate(scales):
        tol = 3 * plan.plans[i].rmse + 1e-12  # the kernel's relative RMSE (Eq. 66)
        assert relerr(np.asarray(coef[i]), refs[s]) <= tol, (i, s)


@pytest.mark.parametrize("order", sorted(ORDERS))
@pytest.mark.parametrize(("method", "engine"), CASES)
def test_rows_follow_given_scales(signal, refs, order, method, engine):
    scales = ORDERS[order]
    coef, freqs = fm.cwt(signal, scales, method=method, engine=engine)
    plan = CWT(scales, method=method)
    _check(coef, scales, plan, refs)
    np.testing.assert_allclose(freqs, 6.0 / (2 * np.pi * np.asarray(scales)), rtol=1e-15)
    # the plan, a small budget (scales split into groups), out= and tensor input
    _check(plan(signal, engine=engine, memory_budget=2**22), scales, plan, refs)
    out = np.full((len(scales), len(signal)), np.nan, dtype=np.complex128)
    assert plan(signal, engine=engine, out=out) is out
    _check(out, scales, plan, refs)
    tout = torch.empty(len(scales), len(signal), dtype=torch.complex128)
    got = plan(torch.from_numpy(signal), engine=engine, out=tout)
    assert got is tout
    _check(tout.numpy(), scales, plan, refs)
