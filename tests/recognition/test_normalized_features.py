"""Normalised features of the re-layout paper: ``features(normalize="pixels")`` is
the paper's lambda_N normalization (Eq. 12-14: divide by the number of pixels mapped into the
unit disk) and ``normalize="z00"`` gives |Z_nm| / |Z_00|; both against a direct float64 sum
written from the paper's equations (pixel centres, one sample per pixel)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fastmoments.disk import pixel_mask
from fastmoments.recognition import features, object_features
from fastmoments.sklearn import ZernikeFeatures

from ..reference_disk import radial_exact


def _paper_moments(img: np.ndarray, pairs, rule: str) -> tuple[np.ndarray, int]:
    """Z_nm = (n+1)/lambda_N sum f R_nm(rho) e^{-i m theta} over the pixels mapped into the
    unit disk: centre inside (the paper's Fig. 3, ``rule="centre"``) or whole pixel inside
    (``"inscribed"``); x = 2 (i - N/2 + 0.5) / N (Eq. 14). Returns (moments, lambda_N)."""
    N = img.shape[-1]
    i = np.arange(N)
    c = 2 * (i - N / 2 + 0.5) / N
    x, y = np.meshgrid(c, c[::-1])  # x along columns, y up the rows
    if rule == "centre":
        inside = x**2 + y**2 <= 1 + 1e-12
    else:  # corners exactly on the circle count as inside (rounding of the coordinates)
        inside = (np.abs(x) + 1 / N) ** 2 + (np.abs(y) + 1 / N) ** 2 <= 1 + 1e-12
    lam = int(inside.sum())
    rho, theta, f = np.hypot(x, y)[inside], np.arctan2(y, x)[inside], img[..., inside]
    out = [(n + 1) / lam * np.sum(f * radial_exact("zernike", n, m, rho)
                                  * np.exp(-1j * m * theta), axis=-1) for n, m in pairs]
    return np.stack(out, axis=-1), lam


@pytest.mark.parametrize("rule", ["centre", "inscribed"])
def test_pixels_matches_the_papers_sum(rule):
    imgs = np.random.default_rng(3).random((3, 20, 20))
    fs = features(imgs, family="zernike", orders=6, kind="complex", rule=rule,
                  normalize="pixels", dtype="float64")
    ref, lam = _paper_moments(imgs, fs.pairs, rule)
    assert lam == int(pixel_mask(20, rule=rule).sum())  # the same pixels as the library's
    got = fs.complex_values()
    # magnitudes and the real m = 0 moments do not depend on the orientation of the axes
    np.testing.assert_allclose(np.abs(got), np.abs(ref), rtol=1e-12, atol=1e-14)
    zero = [j for j, (_n, m) in enumerate(fs.pairs) if m == 0]
    np.testing.assert_allclose(got[:, zero], ref[:, zero], rtol=1e-12, atol=1e-14)
    # Z_00 is the mean intensity of the mapped pixels
    np.testing.assert_allclose(got[:, 0].real, ref[:, 0].real, rtol=1e-13)


def test_z00_matches_the_papers_ratio():
    imgs = np.random.default_rng(4).random((4, 24, 24))
    pairs = [(2, 0), (3, 1), (4, 2), (5, 5)]  # (0, 0) left out: computed anyway
    fs = features(imgs, family="zernike", select=pairs, kind="magnitude", normalize="z00",
                  rule="centre", dtype="float64")
    assert fs.pairs == pairs and fs.names == [f"|A[{n},{m}]|" for n, m in pairs]
    ref, _ = _paper_moments(imgs, [(0, 0), *pairs], "centre")
    expect = np.abs(ref[:, 1:]) / np.abs(ref[:, :1])
    np.testing.assert_allclose(fs.matrix, expect, rtol=1e-12)
    # with (0, 0) among the columns it is 1, and the other columns are the same
    full = features(imgs, family="zernike", select=[(0, 0), *pairs], kind="magnitude",
                    normalize="z00", rule="centre", dtype="float64")
    np.testing.assert_allclose(full.matrix[:, 0], 1.0, rtol=1e-15)
    np.testing.assert_allclose(full.matrix[:, 1:], fs.matrix, rtol=1e-14)


def test_z00_is_contrast_invariant_and_pixels_is_a_fixed_factor():
    imgs = np.random.default_rng(5).random((2, 16, 16))
    a = features(imgs, family="pseudo-zernike", orders=4, kind="magnitude", normalize="z00",
                 dtype="float64").matrix
    b = features(3.5 * imgs, family="pseudo-zernike", orders=4, kind="magnitude",
                 normalize="z00", dtype="float64").matrix
    np.testing.assert_allclose(a, b, rtol=1e-13)
    plain = features(imgs, family="pcet", orders=2, dtype="float64")
    pix = features(imgs, family="pcet", orders=2, dtype="float64", normalize="pixels")
    N = 16
    c = 2 * (np.arange(N) - N / 2 + 0.5) / N
    inside = ((np.abs(c)[:, None] + 1 / N) ** 2 + (np.abs(c)[None, :] + 1 / N) ** 2
              <= 1 + 1e-12)
    lam = int(inside.sum())
    np.testing.assert_allclose(pix.matrix, plain.matrix * math.pi * N * N / (4 * lam),
                               rtol=1e-14)
    assert pix.normalize == "pixels" and "normalize='pixels'" in repr(pix)


def test_float32_agrees():
    imgs = np.random.default_rng(6).random((3, 16, 16))
    for norm in ("pixels", "z00"):
        a = features(imgs.astype(np.float32), orders=5, kind="magnitude", normalize=norm)
        b = features(imgs, orders=5, kind="magnitude", normalize=norm)
        assert a.matrix.dtype == np.float32
        np.testing.assert_allclose(a.matrix, b.matrix, atol=2e-5 * np.abs(b.matrix).max())


def test_bad_normalize():
    img = np.ones((16, 16))
    with pytest.raises(ValueError, match="normalize must be one of 'pixels', 'z00'"):
        features(img, normalize="area")
    with pytest.raises(ValueError, match="normalize must be one of"):
        features(img, normalize=True)
    with pytest.raises(ValueError, match=r"pst family has no moment \(0, 0\)"):
        features(img, family="pst", orders=2, normalize="z00")
    blank = np.zeros((2, 16, 16))
    blank[0] = 1.0
    with pytest.raises(ValueError, match=r"\|A\[0,0\]\|, which is 0 for image\(s\) \[1\]"):
        features(blank, normalize="z00")


def test_sklearn_and_objects_pass_it_through():
    imgs = np.random.default_rng(7).random((5, 12, 12))
    zf = ZernikeFeatures(orders=3, normalize="z00").fit(imgs)
    ref = features(imgs, family="zernike", orders=3, kind="magnitude", normalize="z00",
                   dtype="float64")
    np.testing.assert_allclose(zf.transform(imgs), ref.matrix, rtol=1e-14)
    with pytest.raises(ValueError, match="normalize"):
        ZernikeFeatures(orders=3, normalize="bogus").fit(imgs)
    lab = np.zeros((30, 30), dtype=int)
    lab[3:12, 4:20] = 1
    lab[15:28, 10:14] = 2
    a = object_features(lab, orders=3, dtype="float64", normalize="z00")
    b = object_features(lab, orders=3, dtype="float64")
    np.testing.assert_allclose(a.features, b.features / b.features[:, :1], rtol=1e-13)
