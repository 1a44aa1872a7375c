"""Issue 13 findings for the box moments: each test failed before its fix."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastmoments.box import JacobiTransform

# ---------------------------------------------------------------- 1. moments know their basis
_BASE = {"alpha": 0.3, "beta": 0.7, "k": 2, "quadrature": "midpoint", "truncation": "total",
         "normalization": "jacobi", "dtype": torch.float64}


@pytest.mark.parametrize(("field", "value"), [
    ("alpha", 0.0), ("beta", 0.3), ("truncation", "box"), ("shape", (10, 12)), ("order", 7),
])
def test_inverse_refuses_moments_of_another_basis(field, value, rng):
    """Before: shape and order matching was enough, and alpha=0 gave a result 53% off."""
    kw = dict(_BASE)
    shape, order = (12, 10), 6
    if field == "shape":
        shape = value
    elif field == "order":
        order = value
    else:
        kw[field] = value
    src = JacobiTransform((12, 10), 6, **_BASE)
    other = JacobiTransform(shape, order, **kw)
    J = src.forward(rng.random((12, 10)))
    with pytest.raises(ValueError, match=f"another basis: {field}="):
        other.inverse(J)
    with pytest.raises(ValueError, match=f"another basis: {field}="):
        other.adjoint(J)


def test_gegenbauer_and_jacobi_normalizations_are_different_bases(rng):
    a = JacobiTransform((8, 8), 5, alpha=0.5, beta=0.5, dtype=torch.float64)
    g = JacobiTransform((8, 8), 5, alpha=0.5, beta=0.5, normalization="gegenbauer",
                        dtype=torch.float64)
    with pytest.raises(ValueError, match="normalization='jacobi'"):
        g.inverse(a.forward(rng.random((8, 8))))


@pytest.mark.parametrize(("field", "value"), [
    ("k", 5), ("quadrature", "gauss"), ("dtype", torch.float32), ("block", 2), ("parity", None),
])
def test_inverse_accepts_moments_of_the_same_basis(field, value, rng):
    """k, quadrature, dtype, block and parity change how, not what: same reconstruction."""
    base = dict(_BASE, alpha=0.4, beta=0.4, parity=True)
    src = JacobiTransform((12, 10), 6, **base)
    other = JacobiTransform((12, 10), 6, **dict(base, **{field: value}))
    J = src.forward(rng.random((12, 10)))
    ref = src.inverse(J)
    got = other.inverse(J)
    # float32 tables: relative rounding of a sum of 49 terms of size <= max|J| max|S|
    tol = 1e-5 if other.dtype == torch.float32 else 1e-13
    np.testing.assert_allclose(got, ref, rtol=0, atol=tol * np.abs(ref).max())
    assert other.basis == src.basis


def test_inverse_refuses_disk_moments():
    import fastmoments as fm

    A = fm.zernike_moments(np.ones((16, 16)), 4)
    plan = JacobiTransform((5, 5), 4)
    with pytest.raises(TypeError, match="coeffs must be box moments"):
        plan.inverse(A)
