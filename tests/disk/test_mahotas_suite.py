"""mahotas' Zernike features from fastmoments: mahotas' own tests run with fastmoments in
place of ``mahotas.features.zernike_moments``, and both against an independent float64
direct sum in mahotas' conventions.

mahotas' ``zernike_moments(im, radius, degree=8, cm=None)`` takes the disk of ``radius``
pixels around ``cm`` (default: the image's centre of mass), pixel ``(i, j)`` at the point
``(i, j)``, the pixels whose centre lies in the closed disk and whose value is positive, and
returns :math:`|Z_{nl}| = \\frac{n+1}{\\pi} |\\sum_p f_p R_{nl}(\\rho_p) e^{-il\\theta_p}| /
\\sum_p f_p` for ``n <= degree``, ``0 <= l <= n``, ``n - l`` even, in that order. In
fastmoments' normalisation (:math:`A_{nm} = \\frac{n+1}{\\pi}\\sum_p f_p V^*_{nm} / R^2`)
that is :math:`|A_{nl}| / (\\pi A_{00})`, the moments of the image with its negative values
set to 0, at mahotas' centre, with ``rule="centre"``: :func:`like_mahotas`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import fastmoments as fm

from ..reference_disk import radial_exact

mahotas = pytest.importorskip("mahotas")
mahotas_features = pytest.importorskip("mahotas.features")
suite = pytest.importorskip("mahotas.tests.test_zernike")


def like_mahotas(im, radius, degree=8, cm=None):
    """``mahotas.features.zernike_moments(im, radius, degree, cm)`` by fastmoments (the
    recipe of docs/disk.md)."""
    im = np.asarray(im, dtype=np.float64)
    centre = fm.disk.centroid(im) if cm is None else cm  # mahotas: of the whole image
    A = fm.zernike_moments(np.clip(im, 0, None), degree, center=tuple(centre),
                           radius=radius, rule="centre", dtype="float64")
    return A.invariants() / (np.pi * A[0, 0].real)


def exact(im, radius, degree=8, cm=None):
    """mahotas' features by their definition, summed directly with the exact radial
    polynomials (mpmath) over the pixels of positive value whose centre is in the disk."""
    im = np.asarray(im, dtype=np.float64)
    rows, cols = np.mgrid[:im.shape[0], :im.shape[1]]
    if cm is None:
        cm = ((im * rows).sum() / im.sum(), (im * cols).sum() / im.sum())
    dy, dx = rows - cm[0], cols - cm[1]
    keep = (im > 0) & (np.hypot(dx, dy) <= radius)
    f, rho, theta = im[keep], np.hypot(dx, dy)[keep] / radius, np.arctan2(dy, dx)[keep]
    out = []
    for n in range(degree + 1):
        for l in range(n % 2, n + 1, 2):
            s = np.sum(f * radial_exact("zernike", n, l, rho) * np.exp(-1j * l * theta))
            out.append((n + 1) / math.pi * abs(s) / f.sum())
    return np.array(out)


@pytest.fixture
def calls(monkeypatch):
    """Put :func:`like_mahotas` where mahotas' tests call mahotas, and record the calls."""
    seen = []

    def substitute(im, radius, degree=8, cm=None):
        seen.append((np.array(im), radius, degree, cm))
        return like_mahotas(im, radius, degree, cm)

    monkeypatch.setattr(suite, "zernike_moments", substitute)
    monkeypatch.setattr(mahotas_features, "zernike_moments", substitute)
    return seen


MAHOTAS_TESTS = sorted(name for name in dir(suite) if name.startswith("test_"))


def test_the_suite_is_there():
    assert {"test_zernike", "test_zernike_cm", "test_not_nan"} <= set(MAHOTAS_TESTS)


@pytest.mark.parametrize("name", MAHOTAS_TESTS)
def test_mahotas_own_tests(name, calls):
    """mahotas' test passes with fastmoments in place, and every call it made gives
    mahotas' numbers, and those at mahotas' defaults (centre of mass, degree 8), to within
    mahotas' own error against the exact sums (plus 1e-14)."""
    getattr(suite, name)()
    assert calls, f"{name} made no call"
    for im, radius, degree, cm in calls:
        for args in ((radius, degree, cm), (radius,)):
            got = like_mahotas(im, *args)
            theirs = _original(im, *args)
            ref = exact(im, *args)
            assert got.shape == theirs.shape
            np.testing.assert_allclose(got, ref, rtol=0, atol=1e-14)
            assert np.all(np.abs(got - theirs) <= np.abs(theirs - ref) + 1e-14)


def _original(im, *args):
    """mahotas' own function (its module's name is left in place by the fixture)."""
    from mahotas.features.zernike import zernike_moments

    return zernike_moments(im, *args)


NON_SQUARE = [
    ((37, 53), 15.0, 8), ((29, 41), 11.0, 20), ((30, 70), 25.0, 12),
    ((21, 64), 14.5, 12),  # the disk pokes out of the image: mahotas ignores that part
]


@pytest.mark.parametrize("shape,radius,degree", NON_SQUARE)
def test_non_square_at_mahotas_defaults(shape, radius, degree, rng):
    im = rng.random(shape)
    got = like_mahotas(im, radius, degree)
    theirs = _original(im, radius, degree)
    ref = exact(im, radius, degree)
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-14)
    assert np.all(np.abs(got - theirs) <= np.abs(theirs - ref) + 1e-14)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.int32])
def test_integer_images(dtype, rng):
    im = rng.integers(0, 200, (40, 29)).astype(dtype)
    im[:4] = 0
    np.testing.assert_allclose(like_mahotas(im, 11, 12), _original(im, 11, 12), rtol=0,
                               atol=1e-12)


def test_negative_values_are_left_out(rng):
    """mahotas sums only the pixels of positive value (its centre of mass takes them all)."""
    im = rng.standard_normal((31, 40)) + 2.0
    np.testing.assert_allclose(like_mahotas(im, 12, 10), _original(im, 12, 10), rtol=0,
                               atol=1e-12)


def test_a_batch_at_mahotas_defaults(rng):
    """One call for a batch: every image at its own centre of mass."""
    imgs = rng.random((4, 26, 33)) ** 2
    A = fm.zernike_moments(imgs, 10, center="centroid", radius=9.0, rule="centre",
                           dtype="float64")
    got = A.invariants() / (np.pi * A[0, 0].real[:, None])
    for i, im in enumerate(imgs):
        np.testing.assert_allclose(got[i], _original(im, 9.0, 10), rtol=0, atol=1e-12)
