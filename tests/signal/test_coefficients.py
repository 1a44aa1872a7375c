"""Least-squares fits of the Gaussian and Morlet kernels: the paper's Table 1 and Eq. 66."""

from __future__ import annotations

import numpy as np
import pytest

from fastmoments.signal.coefficients import (
    default_gaussian_terms,
    fit_gaussian,
    fit_morlet,
    gaussian_kernel,
    gaussian_ratio,
    morlet_constants,
    morlet_kernel,
)
from fastmoments.signal.gaussian_kernels import _gaussian_bank

# Table 1 of Yamashita & Wakahara (2022): relative RMSE (%) of G, G_D, G_DD, K = 256, n0 = 10.
TABLE1_SFT = {2: (1.0, 5.1, 8.2), 3: (0.15, 0.90, 2.77), 4: (0.038, 0.24, 0.54),
              5: (0.0059, 0.043, 0.16), 6: (0.0015, 0.011, 0.031)}
TABLE1_ASFT = {2: (1.1, 5.4, 8.5), 3: (0.17, 1.02, 3.10), 4: (0.046, 0.30, 0.63),
               5: (0.017, 0.037, 0.12), 6: (0.0021, 0.016, 0.041)}


def _table_rmse(terms: int, method: str) -> np.ndarray:
    """Eq. 48 (window [-3K, 3K]) of the paper's fitted kernels (without the moment correction
    of the plans), at K = 256 and the paper's β."""
    sigma = 256 / gaussian_ratio(terms)
    shift = 10 if method == "asft" else 0
    out = []
    for order in (0, 1, 2):
        assert fit_gaussian(sigma, terms, 256).K == 256
        bank = _gaussian_bank(sigma, order, method, terms, shift, 4.0, exact_moments=False)
        assert bank.pad - shift == 256
        j = np.arange(-3 * 256, 3 * 256 + 1)
        exact = gaussian_kernel(j, sigma, order)
        err = bank.kernel(j)[0] - exact
        out.append(100 * np.sqrt(np.sum(err**2) / np.sum(exact**2)))
    return np.array(out)


@pytest.mark.parametrize("terms", [2, 3, 4, 5, 6])
def test_table1_sft(terms):
    ours = _table_rmse(terms, "sft")
    np.testing.assert_allclose(ours, TABLE1_SFT[terms], rtol=0.10)


@pytest.mark.parametrize("terms", [2, 3, 4, 6])
def test_table1_asft(terms):
    ours = _table_rmse(terms, "asft")
    np.testing.assert_allclose(ours, TABLE1_ASFT[terms], rtol=0.10)


def test_table1_asft_p5_row_differs_from_the_paper():
    # The paper's ASFT P = 5 row (0.017, 0.037, 0.12) is not monotone with its neighbours
    # (e(G) is 3x the SFT value while e(G_D) is below it); our values follow the other rows:
    # a little above SFT for every entry. Documented in docs/signal.md.
    ours = _table_rmse(5, "asft")
    sft = np.array(TABLE1_SFT[5])
    assert np.all(ours > sft * 0.95) and np.all(ours < sft * 1.6)


def test_fit_is_least_squares():
    # the residual of an LS fit is orthogonal to the basis (normal equations, Eq. 12)
    fit = fit_gaussian(40.0, 4)
    k = np.arange(-fit.K, fit.K + 1)
    cos = np.cos(fit.beta * np.outer(k, np.arange(5)))
    resid = cos @ fit.a - gaussian_kernel(k, 40.0, 0)
    assert np.max(np.abs(cos.T @ resid)) < 1e-14


def test_fit_cached_on_plain_values():
    assert fit_gaussian(33.0, 4) is fit_gaussian(33.0, 4)


def test_default_terms_reach_target():
    for order in (0, 1, 2):
        terms = default_gaussian_terms(order)
        sigma = 256 / gaussian_ratio(terms)
        assert fit_gaussian(sigma, terms, 256).rmse[order] <= 1e-4
        sigma = 256 / gaussian_ratio(terms - 1)
        assert fit_gaussian(sigma, terms - 1, 256).rmse[order] > 1e-4


def test_morlet_constants_match_eq50_51():
    for xi in (1.0, 3.0, 6.0):
        c, kappa = morlet_constants(xi)
        assert kappa == pytest.approx(np.exp(-xi**2 / 2), rel=1e-15)
        # admissibility: the continuous wavelet has zero mean and unit energy
        t = np.linspace(-40, 40, 400001)
        psi = morlet_kernel(t, 1.0, xi)
        dt = t[1] - t[0]
        assert abs(np.sum(psi) * dt) < 1e-10
        assert np.sum(np.abs(psi) ** 2) * dt == pytest.approx(1.0, rel=1e-9)
        assert c > 0


@pytest.mark.parametrize("xi", [1.0, 2.0, 4.0, 6.0, 10.0, 15.0, 20.0])
def test_morlet_direct_fit_eq66(xi):
    # σ = 60 as in the paper's Sec. 5.1; default P_D reaches relative RMSE <= 1e-4
    from fastmoments.signal.morlet import MorletTransform

    plan = MorletTransform(60.0, xi)
    assert plan.rmse <= 1e-4
    fit = fit_morlet(60.0, xi, plan.terms)
    k = np.arange(-5 * fit.K, 5 * fit.K + 1)
    exact = morlet_kernel(k, 60.0, xi)
    inside = np.abs(k) <= fit.K
    p = np.arange(fit.first, fit.first + fit.terms)
    approx = inside * (np.cos(fit.beta * np.outer(k, p)) @ fit.m
                       + np.sin(fit.beta * np.outer(k, p)) @ fit.l)
    e = np.sqrt(np.sum(np.abs(approx - exact) ** 2) / np.sum(np.abs(exact) ** 2))
    assert e == pytest.approx(fit.rmse, rel=1e-9)
    # the real part is even and fitted by cosines only, the imaginary part by sines only
    assert np.max(np.abs(fit.m.imag)) < 1e-12 * np.max(np.abs(fit.m))
    assert np.max(np.abs(fit.l.real)) < 1e-12 * np.max(np.abs(fit.l))


def test_optimum_first_order_grows_with_xi():
    # the paper's Fig. 7: the best P_S increases with ξ
    firsts = [fit_morlet(60.0, xi, 11).first for xi in (4.0, 8.0, 12.0, 16.0, 20.0)]
    assert firsts == sorted(firsts) and firsts[-1] > firsts[0]


@pytest.mark.parametrize("xi", [1e-3, 1e-8, 1e-38, 1e-100])
def test_morlet_normalisation_keeps_its_precision_at_small_xi(xi):
    """1 + e^{-xi^2} - 2 e^{-3 xi^2 / 4} = xi^2/2 - xi^4/16 + O(xi^6): the plain sum cancels to 0
    below xi ~ 1e-8 (ZeroDivisionError in the normalisation before); the constant must follow
    the series to rounding."""
    from fastmoments.signal.coefficients import morlet_constants

    c, _ = morlet_constants(xi)
    series = xi * xi / 2 - xi**4 / 16
    assert c == pytest.approx(series**-0.5, rel=1e-12)
    with pytest.raises(ValueError, match=r"xi=.* is too small"):
        morlet_constants(1e-200)
