"""3-D Zernike moments of every object of a label volume against zernike3d_moments of each
object alone (cropped, with the same centre and radius)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.ball.labels import object_moments3d


def ellipsoids(shape=(20, 24, 28), seed=0, gaps=True):
    """Random ellipsoids on a grid, labels not contiguous (steps of 5) when ``gaps``."""
    rng = np.random.default_rng(seed)
    lab = np.zeros(shape, np.int32)
    dd, hh, ww = np.mgrid[: shape[0], : shape[1], : shape[2]]
    value = 0
    for cd in (5, 14):
        for ch in (6, 17):
            for cw in (7, 20):
                value += 5 if gaps else 1
                a = rng.uniform(1.5, 4.5, 3)
                c = np.array([cd, ch, cw]) + rng.uniform(-0.5, 0.5, 3)
                inside = (((dd - c[0]) / a[0]) ** 2 + ((hh - c[1]) / a[1]) ** 2
                          + ((ww - c[2]) / a[2]) ** 2) <= 1
                lab[inside] = value
    return lab


def per_object(lab, img, om, order):
    """Each object's moments by zernike3d_moments of its bounding box holding it alone."""
    out = []
    for i, label in enumerate(om.labels):
        b = om.bbox[i]
        sl = tuple(slice(b[a], b[a + 3]) for a in range(3))
        f = np.ones(lab.shape) if img is None else img
        crop = np.where(lab[sl] == label, f[sl], 0.0)
        ref = fm.zernike3d_moments(crop, order, center=tuple(om.centre[i] - b[:3]),
                                   radius=float(om.radius[i]), dtype=torch.float64)
        out.append(ref.values())
    return np.array(out)


@pytest.mark.parametrize("centre", ["centroid-enclosing", "volume"])
@pytest.mark.parametrize("weighted", [False, True])
def test_every_object_equals_zernike3d_moments_of_the_object_alone(centre, weighted):
    lab = ellipsoids(seed=1)
    img = np.random.default_rng(2).random(lab.shape) if weighted else None
    om = object_moments3d(lab, img, order=6, centre=centre, kind="complex", dtype="float64")
    ref = per_object(lab, img, om, 6)
    # float64 sums of a few hundred voxels, |Omega| up to ~1: rounding only
    np.testing.assert_allclose(om.values, ref, rtol=0, atol=1e-13)


def test_geometry_equals_a_plain_per_object_computation():
    lab = ellipsoids(seed=3)
    om = object_moments3d(lab, order=2)
    for i, label in enumerate(om.labels):
        pts = np.argwhere(lab == label)
        assert om.volume[i] == len(pts)
        np.testing.assert_allclose(om.centroid[i], pts.mean(0), rtol=0, atol=1e-12)
        np.testing.assert_array_equal(om.bbox[i], [*pts.min(0), *(pts.max(0) + 1)])
        far = np.sqrt(((np.abs(pts - om.centroid[i]) + 0.5) ** 2).sum(1)).max()
        assert om.radius[i] == pytest.approx(far, rel=1e-14)


def test_invariants_are_those_of_zernike3d_moments_and_survive_quarter_turns():
    lab = ellipsoids(seed=4)
    om = object_moments3d(lab, order=5, dtype="float64")
    b = om.bbox[0]
    sl = tuple(slice(b[a], b[a + 3]) for a in range(3))
    ref = fm.zernike3d_moments((lab[sl] == om.labels[0]).astype(np.float64), 5,
                               center=tuple(om.centre[0] - b[:3]), radius=float(om.radius[0]))
    np.testing.assert_allclose(om.features[0], ref.invariants(), rtol=0, atol=1e-13)
    assert om.names == ref.names()
    turned = object_moments3d(np.rot90(lab, 1, axes=(1, 2)), order=5, dtype="float64")
    np.testing.assert_array_equal(turned.labels, om.labels)
    np.testing.assert_allclose(turned.features, om.features, rtol=0, atol=1e-13)


def test_a_small_budget_tensors_and_float32():
    lab = ellipsoids(seed=5, gaps=False)
    img = np.random.default_rng(6).random(lab.shape)
    a = object_moments3d(lab, img, order=4, dtype="float64")
    b = object_moments3d(lab, img, order=4, dtype="float64", memory_budget=2**21)
    np.testing.assert_allclose(b.features, a.features, rtol=0, atol=1e-14)
    t = object_moments3d(torch.from_numpy(lab), torch.from_numpy(img), order=4)
    assert isinstance(t.features, torch.Tensor) and t.features.dtype == torch.float64
    f32 = object_moments3d(lab, img.astype(np.float32), order=4)
    assert f32.features.dtype == np.float32
    np.testing.assert_allclose(f32.features, a.features, rtol=0, atol=1e-6)


def test_bad_input_names_the_parameter():
    lab = ellipsoids()
    lab0 = lab.copy()
    object_moments3d(lab, order=2)
    np.testing.assert_array_equal(lab, lab0)
    with pytest.raises(ValueError, match="labels must be a 3-D"):
        object_moments3d(lab[0])
    with pytest.raises(TypeError, match="labels must hold integers"):
        object_moments3d(lab.astype(float))
    with pytest.raises(ValueError, match="labels must be >= 0"):
        object_moments3d(-lab)
    with pytest.raises(ValueError, match="image must have the shape"):
        object_moments3d(lab, np.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        object_moments3d(lab, np.full(lab.shape, np.nan))
    with pytest.raises(ValueError, match="centre"):
        object_moments3d(lab, centre="enclosing")
    empty = object_moments3d(np.zeros((4, 4, 4), np.uint8), order=3)
    assert len(empty) == 0 and empty.features.shape == (0, len(empty.names))
