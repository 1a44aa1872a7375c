"""The 3-D Zernike functions against mpmath, to order 500, and their closed forms."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest

from fastmoments.ball.functions import (
    lm_index,
    radial,
    radial_table,
    spherical_harmonics,
    zernike3d,
)

mp.mp.dps = 40

RADII = np.array([0.0, 0.013, 0.1, 0.31, 0.5, 0.77, 0.9, 0.999, 1.0])


def radial_reference(n: int, l: int, r: float) -> float:
    k = (n - l) // 2
    r = mp.mpf(r)
    return float(mp.sqrt(2 * n + 3) * r**l * mp.jacobi(k, 0, l + mp.mpf(1) / 2, 2 * r * r - 1))


@pytest.mark.parametrize("n, l", [(0, 0), (7, 3), (40, 12), (151, 1), (300, 100), (450, 0),
                                  (500, 0), (500, 250), (498, 496), (499, 99)])
def test_radial_against_mpmath(n, l):
    got = radial(n, l, RADII)
    ref = np.array([radial_reference(n, l, r) for r in RADII])
    # relative where the value is large (r -> 0 with small l), else to the scale sqrt(2n+3)
    scale = np.maximum(np.abs(ref), math.sqrt(2 * n + 3))
    assert np.max(np.abs(got - ref) / scale) <= 1e-12


def test_radial_closed_forms():
    r = np.linspace(0, 1, 11)
    assert np.allclose(radial(0, 0, r), math.sqrt(3), rtol=0, atol=1e-15)
    assert np.allclose(radial(1, 1, r), math.sqrt(5) * r, rtol=0, atol=1e-15)
    # R_20 = sqrt(7) * P_1^{(0, 1/2)}(2r^2 - 1) = sqrt(7) (5 r^2 - 3) / 2
    assert np.allclose(radial(2, 0, r), math.sqrt(7) * (5 * r**2 - 3) / 2, rtol=0, atol=1e-14)


def test_radial_orthonormal_by_gauss_quadrature():
    order = 30
    x, w = np.polynomial.legendre.leggauss(64)
    r = (x + 1) / 2
    tab = radial_table(order, order, r)
    for l in (0, 5, 16):
        R = tab[l].numpy()
        gram = (R * (w * r**2 / 2)[:, None]).T @ R
        assert np.abs(gram - np.eye(R.shape[1])).max() < 1e-13


def harmonic_reference(l: int, m: int, x: float, y: float, z: float) -> complex:
    x, y, z = mp.mpf(x), mp.mpf(y), mp.mpf(z)  # the float64 point, exactly
    return complex(mp.spherharm(l, m, mp.atan2(mp.hypot(x, y), z), mp.atan2(y, x)))


@pytest.mark.parametrize("l, m", [(0, 0), (5, 3), (100, 50), (250, 7), (500, 0), (500, 1),
                                  (500, 3), (500, 100), (500, 250), (500, 499), (500, 500),
                                  (333, 332)])
def test_harmonics_against_mpmath(l, m):
    th = np.array([0.001, 0.1, 0.5, 1.2, math.pi / 2, 2.5, 3.1, 3.14, math.pi])
    ph = np.array([0.3, 1.0, 2.0, -2.0, 3.0, -0.1, 0.7, -3.0, 0.0])
    x, y, z = np.sin(th) * np.cos(ph), np.sin(th) * np.sin(ph), np.cos(th)
    Y = spherical_harmonics(l, x, y, z)[:, lm_index(l, m)].numpy()
    got = Y[:, 0] + 1j * Y[:, 1]
    ref = np.array([harmonic_reference(l, m, *p) for p in zip(x, y, z, strict=True)])
    scale = math.sqrt((2 * l + 1) / (4 * math.pi))  # max |Y_l^m| is at most this
    assert np.max(np.abs(got - ref)) / scale <= 1e-12


def test_harmonics_condon_shortley_and_negative_m():
    # Y_1^1 = -sqrt(3/(8 pi)) sin(theta) e^{i phi}: the Condon-Shortley sign
    v = zernike3d(1, 1, 1, [0.5], [0.0], [0.0])[0]
    y11 = -math.sqrt(3 / (8 * math.pi)) * 1.0
    assert abs(v - math.sqrt(4 * math.pi / 3) * math.sqrt(5) * 0.5 * y11) < 1e-15
    pts = np.random.default_rng(0).uniform(-0.5, 0.5, (3, 5))
    for m in (1, 2, 3):
        pos = zernike3d(5, 3, m, *pts)
        neg = zernike3d(5, 3, -m, *pts)
        assert np.allclose(neg, (-1) ** m * np.conj(pos), rtol=0, atol=1e-14)


@pytest.mark.parametrize("args, match", [((1, 0, 0), "even"), ((2, 3, 0), "even"),
                                         ((2, 2, 3), r"\|m\|")])
def test_bad_indices(args, match):
    with pytest.raises(ValueError, match=match):
        zernike3d(*args, [0.1], [0.1], [0.1])
    with pytest.raises(TypeError, match="n must be an integer"):
        radial(2.0, 0, [0.5])
