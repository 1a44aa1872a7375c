"""``convention="cellprofiler"`` against centrosome, the code CellProfiler runs (skipped when
centrosome is not installed)."""

from __future__ import annotations

import numpy as np
import pytest

from fastmoments.disk.labels import label_geometry, object_moments

from .test_objects_labels import ellipses

centrosome_zernike = pytest.importorskip("centrosome.zernike")
cpmorphology = pytest.importorskip("centrosome.cpmorphology")


def awkward_objects():
    """Ellipses, plus a line, a column, an L, a single pixel and a square (four pixel
    centres on one circle), with labels not contiguous."""
    lab = ellipses(shape=(120, 144), seed=21, step=24).astype(np.int32)
    lab[0, 0:11] = 900
    lab[3:14, 143] = 901
    lab[119, 143] = 902
    lab[110:119, 2:4] = 903
    lab[117:119, 2:12] = 903
    lab[100:106, 120:126] = 904
    return lab


def grid_of_ellipses(size, step, seed):
    """One random ellipse or disk (radii 4 to step/2 - 2) per step x step cell."""
    rng = np.random.default_rng(seed)
    lab = np.zeros((size, size), np.int32)
    half = step // 2
    yy, xx = np.mgrid[-half:half, -half:half].astype(np.float64)
    label = 0
    for cy in range(half, size - half + 1, step):
        for cx in range(half, size - half + 1, step):
            label += 1
            a = rng.uniform(4, half - 2)
            b = a if rng.random() < 0.3 else rng.uniform(4, half - 2)
            t = rng.uniform(0, np.pi)
            dy, dx = yy - rng.uniform(-0.5, 0.5), xx - rng.uniform(-0.5, 0.5)
            u = dy * np.cos(t) + dx * np.sin(t)
            v = -dy * np.sin(t) + dx * np.cos(t)
            win = lab[cy - half : cy + half, cx - half : cx + half]
            win[(u / a) ** 2 + (v / b) ** 2 <= 1] = label
    return lab


def test_enclosing_circles_break_ties_as_centrosome_does():
    # two of these 256 objects have vertices that see the side under the same computed
    # angle; the vertex taken decides the last bit of the radius, and so which pixels on
    # the circle CellProfiler keeps
    lab = grid_of_ellipses(640, 40, seed=1)
    g = label_geometry(lab)
    centres, radii = cpmorphology.minimum_enclosing_circle(lab, g.labels)
    np.testing.assert_array_equal(g.centre, centres)
    np.testing.assert_array_equal(g.radius, radii)


def test_enclosing_circles_equal_centrosomes_to_the_bit():
    # bits are the property: CellProfiler keeps the pixels with rho^2 <= 1 as computed, so
    # the pixels on the circle are kept or dropped by the rounding of centre and radius
    lab = awkward_objects()
    g = label_geometry(lab)
    centres, radii = cpmorphology.minimum_enclosing_circle(lab, g.labels)
    np.testing.assert_array_equal(g.centre, centres)
    np.testing.assert_array_equal(g.radius, radii)


def test_convex_hulls_equal_centrosomes():
    from fastmoments.disk.enclosing import convex_hulls

    lab = awkward_objects()
    ids = np.unique(lab)[1:]
    rows, cols = np.nonzero(lab)
    obj = np.searchsorted(ids, lab[rows, cols])
    keys, inv = np.unique(obj * lab.shape[1] + cols, return_inverse=True)
    rmin = np.full(len(keys), lab.shape[0])
    rmax = np.full(len(keys), -1)
    np.minimum.at(rmin, inv, rows)
    np.maximum.at(rmax, inv, rows)
    pts, counts = convex_hulls(keys // lab.shape[1], keys % lab.shape[1], rmin, rmax, len(ids))
    ref, ref_counts = cpmorphology.convex_hull(lab, ids)
    np.testing.assert_array_equal(counts, ref_counts)
    np.testing.assert_array_equal(pts, ref[:, 1:])


@pytest.mark.parametrize("degree, method", [(9, "numba"), (9, "torch"), (4, "numba")])
def test_shape_zernikes_equal_centrosome(degree, method):
    lab = awkward_objects()
    om = object_moments(lab, order=degree, convention="cellprofiler", method=method)
    indexes = centrosome_zernike.get_zernike_indexes(degree + 1)
    assert [tuple(p) for p in indexes] == list(om.pairs)
    with np.errstate(invalid="ignore", divide="ignore"):
        ref = centrosome_zernike.zernike(indexes, lab, om.labels)
    assert om.features.shape == ref.shape == (len(om.labels), len(indexes))
    one_pixel = om.geometry.area == 1
    assert np.isnan(ref[one_pixel]).all() and np.isnan(om.features[one_pixel]).all()
    np.testing.assert_allclose(om.features[~one_pixel], ref[~one_pixel], rtol=0, atol=1e-10)


@pytest.mark.parametrize("method", ["numba", "torch"])
def test_intensity_zernikes_equal_cellprofilers_computation(method):
    """MeasureObjectIntensityDistribution's intensity Zernikes, computed as that module does
    with centrosome's functions (minimum enclosing circle, construct_zernike_polynomials,
    sums per label, magnitude over the pixel count, phase atan2(real, imag))."""
    import scipy.ndimage

    lab = awkward_objects()
    lab[lab == 902] = 0  # a single pixel gives NaN there too; keep the comparison finite
    img = np.random.default_rng(11).random(lab.shape)
    om = object_moments(lab, img, order=9, convention="cellprofiler", image_name="DNA",
                        method=method)
    indexes = centrosome_zernike.get_zernike_indexes(10)
    ids = om.labels
    centres, radii = cpmorphology.minimum_enclosing_circle(lab, ids)
    rows, cols = np.nonzero(lab)
    lab_px = lab[rows, cols]
    k = np.searchsorted(ids, lab_px)
    yx = (np.stack([rows, cols], 1) - centres[k]) / radii[k][:, None]
    z = centrosome_zernike.construct_zernike_polynomials(yx[:, 1], yx[:, 0], indexes)
    area = scipy.ndimage.sum(np.ones(len(lab_px)), labels=lab_px, index=ids)
    K = len(indexes)
    for i, (n, m) in enumerate(indexes):
        vr = scipy.ndimage.sum(img[rows, cols] * z[:, i].real, labels=lab_px, index=ids)
        vi = scipy.ndimage.sum(img[rows, cols] * z[:, i].imag, labels=lab_px, index=ids)
        assert om.names[i] == f"RadialDistribution_ZernikeMagnitude_DNA_{n}_{m}"
        assert om.names[K + i] == f"RadialDistribution_ZernikePhase_DNA_{n}_{m}"
        np.testing.assert_allclose(om.features[:, i], np.sqrt(vr * vr + vi * vi) / area,
                                   rtol=0, atol=1e-10)
        # a phase is defined where the sum is not zero (m = 0 of a real kernel: the
        # imaginary part is zero in both, atan2(vr, 0) = +-pi/2 from the sign of vr)
        ok = np.hypot(vr, vi) > 1e-9
        np.testing.assert_allclose(om.features[ok, K + i], np.arctan2(vr, vi)[ok], rtol=0,
                                   atol=1e-10)
