"""Orthonormal Jacobi recurrence and per-axis matrices against independent references."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import torch
from scipy.special import eval_gegenbauer, eval_jacobi, gamma, roots_jacobi

from fastmoments.box.polynomials import (
    gegenbauer_scale,
    jacobi_norms,
    jacobi_orthonormal,
    jacobi_recurrence,
)
from fastmoments.box.quadrature import analysis_matrix, subpoints, synthesis_matrix

PARAMS = [(0.0, 0.0), (0.3, 0.3), (0.3, 0.7), (-0.5, -0.5), (-0.9, 2.5), (1.5, -0.4)]


def rho_direct(n: int, a: float, b: float) -> float:
    """Eq. 16 written out with Gamma functions (n = 0 through Eq. 17b)."""
    if n == 0:
        return 2 ** (a + b + 1) * gamma(a + 1) * gamma(b + 1) / gamma(a + b + 2)
    return (2 ** (a + b + 1) / (2 * n + a + b + 1) * gamma(n + a + 1) * gamma(n + b + 1)
            / (gamma(n + a + b + 1) * math.factorial(n)))


@pytest.mark.parametrize(("a", "b"), PARAMS)
def test_norms_match_gamma_formula(a, b):
    got = jacobi_norms(40, a, b)
    ref = np.array([rho_direct(n, a, b) for n in range(41)])
    np.testing.assert_allclose(got, ref, rtol=1e-12)


@pytest.mark.parametrize(("a", "b"), PARAMS)
def test_orthonormal_matches_scipy_low_order(a, b):
    x = np.linspace(-1, 1, 41)
    p = jacobi_orthonormal(30, a, b, torch.from_numpy(x)).numpy()
    rho = jacobi_norms(30, a, b)
    for n in range(31):
        ref = eval_jacobi(n, a, b, x) / math.sqrt(rho[n])
        scale = max(1.0, np.abs(ref).max())
        np.testing.assert_allclose(p[n], ref, rtol=0, atol=2e-12 * scale)


@pytest.mark.parametrize(("a", "b"), [(0.3, 0.3), (0.3, 0.7), (-0.7, 1.2)])
def test_degree_2000_matches_mpmath(a, b):
    """At n = 2000 the recurrence agrees with 30-digit hypergeometric evaluation."""
    xs = [-0.97, -0.31, 0.0, 0.5, 0.999]
    p = jacobi_orthonormal(2000, a, b, torch.tensor(xs, dtype=torch.float64))
    assert bool(torch.isfinite(p).all())
    with mpmath.workdps(30):
        n = 2000
        rho = (mpmath.mpf(2) ** (a + b + 1) / (2 * n + a + b + 1) * mpmath.gamma(n + a + 1)
               * mpmath.gamma(n + b + 1) / (mpmath.gamma(n + a + b + 1) * mpmath.factorial(n)))
        for i, x in enumerate(xs):
            ref = float(mpmath.jacobi(n, a, b, x) / mpmath.sqrt(rho))
            assert abs(float(p[n, i]) - ref) <= 1e-10 * max(1.0, abs(ref))


@pytest.mark.parametrize(("a", "b"), [(0.3, 0.3), (0.3, 0.7), (-0.5, 0.5)])
@pytest.mark.parametrize(("n_max", "tol"), [(100, 1e-12), (2000, 5e-10)])
def test_orthonormal_by_gauss_jacobi(a, b, n_max, tol):
    """sum_i w_i p_m(x_i) p_n(x_i) = delta_mn for all m, n <= n_max (exact quadrature).

    The tolerance at n = 2000 reflects the rounding of scipy's nodes (an error dx in a node
    moves p_n by about n^2 dx near the ends); a wrong recurrence gives O(1) errors.
    """
    x, w = roots_jacobi(n_max + 1, a, b)
    p = jacobi_orthonormal(n_max, a, b, torch.from_numpy(x))
    gram = (p * torch.from_numpy(w)) @ p.T
    err = float((gram - torch.eye(n_max + 1, dtype=torch.float64)).abs().max())
    assert err < tol


def test_recurrence_handles_alpha_plus_beta_minus_one():
    a, sb = jacobi_recurrence(5, -0.5, -0.5)   # Chebyshev: b_1 = 1/2, b_n = 1/4
    np.testing.assert_allclose(sb[1:] ** 2, [0.5, 0.25, 0.25, 0.25, 0.25, 0.25], rtol=1e-14)
    np.testing.assert_allclose(a, 0.0, atol=1e-16)


def test_gegenbauer_scale_against_scipy():
    x = np.linspace(-0.95, 0.95, 9)
    for lam in (0.25, 1.0, 2.5, -0.3):
        c = gegenbauer_scale(25, lam)
        for n in range(26):
            ref = eval_gegenbauer(n, lam, x)
            got = c[n] * eval_jacobi(n, lam - 0.5, lam - 0.5, x)
            np.testing.assert_allclose(got, ref, rtol=1e-11, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("bad", [-1.0, -2.0, float("nan"), float("inf")])
def test_bad_parameters_name_themselves(bad):
    with pytest.raises(ValueError, match="alpha"):
        jacobi_norms(3, bad, 0.0)
    with pytest.raises(ValueError, match="beta"):
        jacobi_recurrence(3, 0.0, bad)
    with pytest.raises(ValueError, match="lam"):
        gegenbauer_scale(3, -0.5 if bad == -1.0 else bad)


def test_subpoints_follow_eq34():
    n, k = 5, 3
    x, w = subpoints(n, k, "midpoint")
    delta = 2.0 / n
    for i in range(n):
        for r in range(k):
            assert x[i, r] == pytest.approx(-1 + (i * k + r + 0.5) * delta / k, abs=1e-15)
    np.testing.assert_allclose(w, delta / k)
    xg, wg = subpoints(n, 4, "gauss")
    assert np.all((xg[:, 0] > -1 + np.arange(n) * delta) & (xg[:, -1] < -1 + (np.arange(n) + 1)
                                                           * delta))
    np.testing.assert_allclose(wg.sum(), delta, rtol=1e-14)
    with pytest.raises(ValueError, match=r"quadrature.*'midpoint', 'gauss'"):
        subpoints(4, 2, "simpson")


def test_legendre_gauss_matrix_is_exact_pixel_integral():
    """Legendre, Gauss with 2k-1 >= n: rows equal (2n+1)/2 * int_pixel P_n exactly."""
    n_pix, order, k = 12, 9, 5
    A = analysis_matrix(n_pix, order, 0.0, 0.0, k, "gauss")
    edges = -1 + 2 * np.arange(n_pix + 1) / n_pix
    for n in range(order + 1):
        if n == 0:
            integ = np.diff(edges)
        else:
            anti = (eval_jacobi(n + 1, 0, 0, edges) - eval_jacobi(n - 1, 0, 0, edges)) / (2 * n + 1)
            integ = np.diff(anti)
        np.testing.assert_allclose(A[n], (2 * n + 1) / 2 * integ, rtol=0, atol=1e-14)


@pytest.mark.parametrize(("a", "b"), [(0.3, 0.3), (0.3, 0.7)])
def test_matrices_match_direct_sums(a, b):
    """Eq. 33 and 38: A[n, i] = 1/rho_n sum_r (Delta/k) P_n(x_ir) w(x_ir); S = P_n(centres)."""
    n_pix, order, k = 9, 7, 4
    A = analysis_matrix(n_pix, order, a, b, k, "midpoint")
    S = synthesis_matrix(n_pix, order, a, b)
    delta = 2.0 / n_pix
    for n in range(order + 1):
        rho = rho_direct(n, a, b)
        for i in range(n_pix):
            xs = np.array([-1 + (i * k + r + 0.5) * delta / k for r in range(k)])
            ref = np.sum(delta / k * eval_jacobi(n, a, b, xs) * (1 - xs) ** a * (1 + xs) ** b)
            assert A[n, i] == pytest.approx(ref / rho, rel=1e-12, abs=1e-14)
            assert S[n, i] == pytest.approx(eval_jacobi(n, a, b, -1 + (i + 0.5) * delta),
                                            rel=1e-12, abs=1e-14)


def test_matrices_are_cached_read_only():
    A = analysis_matrix(16, 5, 0.3, 0.3, 2, "midpoint")
    assert analysis_matrix(16, 5, 0.3, 0.3, 2, "midpoint") is A
    with pytest.raises(ValueError):
        A[0, 0] = 1.0


@pytest.mark.parametrize(("a", "b"), [(0.3, 0.7), (-0.8, -0.8)])
def test_matrix_rows_at_order_2000(a, b):
    """Analysis and synthesis rows of degree 2000 agree with a direct mpmath evaluation."""
    n_pix, order, k = 16, 2000, 2
    A = analysis_matrix(n_pix, order, a, b, k, "midpoint")
    S = synthesis_matrix(n_pix, order, a, b)
    assert np.isfinite(A).all() and np.isfinite(S).all()
    delta = 2.0 / n_pix
    with mpmath.workdps(30):
        n = order
        rho = (mpmath.mpf(2) ** (a + b + 1) / (2 * n + a + b + 1) * mpmath.gamma(n + a + 1)
               * mpmath.gamma(n + b + 1) / (mpmath.gamma(n + a + b + 1) * mpmath.factorial(n)))
        for i in (0, 5, 15):
            tot = mpmath.mpf(0)
            for r in range(k):
                x = mpmath.mpf(-1) + (i * k + r + mpmath.mpf(1) / 2) * delta / k
                tot += delta / k * mpmath.jacobi(n, a, b, x) * (1 - x) ** a * (1 + x) ** b
            ref = float(tot / rho)
            assert abs(A[n, i] - ref) <= 1e-9 * max(abs(ref), 1e-3)
            centre = mpmath.mpf(-1) + (i + mpmath.mpf(1) / 2) * delta
            ref_s = float(mpmath.jacobi(n, a, b, centre))
            assert abs(S[n, i] - ref_s) <= 1e-9 * max(abs(ref_s), 1.0)
