"""Per-object moment features (fastmoments.object_features, regionprops_property) on a real
image: scikit-image's coins, thresholded and labelled as in its gallery. The reference is a
plain per-object sum of the definition in float64."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from skimage import data, filters, measure, morphology

from fastmoments.disk.labels import object_moments
from fastmoments.recognition import moment_pairs
from fastmoments.recognition.objects import object_features, regionprops_property

ORDER = 8


@pytest.fixture(scope="module")
def coins():
    img = data.coins()
    mask = img > filters.threshold_otsu(img)
    mask = morphology.closing(mask, morphology.footprint_rectangle((3, 3)))
    mask = morphology.remove_small_objects(mask, max_size=64)
    lab = measure.label(mask)
    assert lab.max() >= 20  # the coins (23 regions with these steps)
    return lab, img.astype(np.float64)


def zernike_radial(n, m, r):
    """R_nm(r) by the factorial sum (exact enough in float64 at these orders)."""
    out = np.zeros_like(r)
    for s in range((n - m) // 2 + 1):
        c = ((-1) ** s * math.factorial(n - s)
             / (math.factorial(s) * math.factorial((n + m) // 2 - s)
                * math.factorial((n - m) // 2 - s)))
        out += c * r ** (n - 2 * s)
    return out


def by_hand(lab, img, label, centre, radius):
    """The standard A_nm (n <= ORDER, m >= 0) of one object by the sum of the definition:
    (n + 1) / (pi R^2) sum_p f_p R_nm(rho_p) exp(-i m theta_p) over the closed unit disk,
    theta measured from the columns towards the rows going up."""
    rows, cols = np.nonzero(lab == label)
    f = np.ones(len(rows)) if img is None else img[rows, cols]
    dy, dx = (rows - centre[0]) / radius, (cols - centre[1]) / radius
    rho2 = dx ** 2 + dy ** 2
    inside = rho2 <= 1 + 1e-10
    rho, theta = np.sqrt(rho2[inside]), np.arctan2(-dy[inside], dx[inside])
    pairs = [(n, m) for n in range(ORDER + 1) for m in range(n % 2, n + 1, 2)]
    return pairs, np.array([(n + 1) / (np.pi * radius ** 2)
                            * np.sum(f[inside] * zernike_radial(n, m, rho)
                                     * np.exp(-1j * m * theta)) for n, m in pairs])


def test_rows_follow_regionprops(coins):
    lab, img = coins
    regions = measure.regionprops(lab)
    of = object_features(lab, img, orders=ORDER, centre="centroid-enclosing",
                         dtype="float64")
    np.testing.assert_array_equal(of.labels, [r.label for r in regions])
    np.testing.assert_allclose(of.geometry.centre, [r.centroid for r in regions], rtol=0,
                               atol=1e-10)
    assert of.features.shape == (len(regions), len(of.names)) == (len(regions), 25)
    assert of.names[:3] == ["|A[0,0]|", "|A[1,1]|", "|A[2,0]|"]
    np.testing.assert_array_equal(np.asarray(of), of.features)
    area = object_features(lab, orders=2, centre="area")
    np.testing.assert_allclose(area.geometry.radius,
                               [r.equivalent_diameter_area / 2 for r in regions], rtol=1e-13)
    frame = of.to_frame()
    assert list(frame.columns[:5]) == ["label", "area", "centre_row", "centre_col", "radius"]
    np.testing.assert_array_equal(frame["|A[2,0]|"].to_numpy(), of.features[:, 2])


@pytest.mark.parametrize("centre", ["enclosing", "centroid-enclosing", "area"])
@pytest.mark.parametrize("with_image", [True, False])
def test_each_object_equals_the_definition(coins, centre, with_image):
    lab, img = coins
    im = img if with_image else None
    of = object_features(lab, im, orders=ORDER, centre=centre, kind="complex",
                         dtype="float64")
    mag = object_features(lab, im, orders=ORDER, centre=centre, dtype="float64")
    regions = {r.label: r for r in measure.regionprops(lab)}
    for k in range(0, len(of), 3):
        label = of.labels[k]
        c, rad = of.geometry.centre[k], of.geometry.radius[k]
        if centre != "enclosing":  # the centroid, and the radius by brute force
            np.testing.assert_allclose(c, regions[label].centroid, rtol=0, atol=1e-10)
            rows, cols = np.nonzero(lab == label)
            want_r = (np.sqrt(regions[label].area / np.pi) if centre == "area" else
                      np.max(np.hypot(np.abs(rows - c[0]) + 0.5, np.abs(cols - c[1]) + 0.5)))
            assert rad == pytest.approx(want_r, rel=1e-13)
        pairs, want = by_hand(lab, im, label, c, rad)
        assert list(of.pairs) == pairs
        scale = np.abs(want).max()
        np.testing.assert_allclose(of.values[k], want, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(of.features[k], np.r_[want.real, want.imag], rtol=0,
                                   atol=1e-12 * scale)
        np.testing.assert_allclose(mag.features[k], np.abs(want), rtol=0, atol=1e-12 * scale)


@pytest.mark.parametrize("turns", [1, 2, 3])
@pytest.mark.parametrize("centre", ["enclosing", "centroid-enclosing"])
def test_rotation_by_quarter_turns(coins, turns, centre):
    lab, img = coins
    of = object_features(lab, img, orders=ORDER, centre=centre, dtype="float64")
    rot = object_features(np.rot90(lab, turns), np.rot90(img, turns), orders=ORDER,
                          centre=centre, dtype="float64")
    # a quarter turn maps pixel centres onto pixel centres: each object keeps its pixels and
    # its disk, and |A_nm| agree to float64 rounding of the sums
    order = np.argsort(rot.labels)
    np.testing.assert_array_equal(rot.labels[order], of.labels)
    np.testing.assert_allclose(rot.features[order], of.features, rtol=0,
                               atol=1e-12 * np.abs(of.features).max())


def test_translation(coins):
    lab, img = coins
    of = object_features(lab, img, orders=ORDER, kind="complex", dtype="float64")
    pad = ((13, 4), (7, 22))
    moved = object_features(np.pad(lab, pad), np.pad(img, pad), orders=ORDER, kind="complex",
                            dtype="float64")
    np.testing.assert_allclose(moved.geometry.centre, of.geometry.centre + np.array([13, 7]),
                               rtol=0, atol=1e-9)
    np.testing.assert_allclose(moved.features, of.features, rtol=0,
                               atol=1e-12 * np.abs(of.features).max())


def test_orders_select_columns_and_z00(coins):
    lab, img = coins
    full = object_features(lab, img, orders=5, kind="complex", dtype="float64")
    some = object_features(lab, img, orders=[2, 5], kind="complex", dtype="float64")
    keep = [k for k, (n, _m) in enumerate(full.pairs) if n in (2, 5)]
    assert list(some.pairs) == [full.pairs[k] for k in keep]
    K = len(full.pairs)
    cols = keep + [K + k for k in keep]
    assert some.names == [full.names[c] for c in cols]
    np.testing.assert_array_equal(some.features, full.features[:, cols])
    z = object_features(lab, img, orders=[2, 5], normalize="z00", dtype="float64")
    want = np.abs(full.values[:, keep]) / np.abs(full.values[:, :1])
    np.testing.assert_allclose(z.features, want, rtol=1e-13)
    assert z.normalize == "z00"
    # a family with negative orders: an order names both signs
    pc = object_features(lab, family="pcet", orders=2, kind="complex", dtype="float64")
    two = object_features(lab, family="pcet", orders=[2], kind="complex", dtype="float64")
    assert sorted(two.pairs) == sorted(moment_pairs("pcet", [2]))
    keep = [k for k, (n, _m) in enumerate(pc.pairs) if abs(n) == 2]
    np.testing.assert_array_equal(two.values, pc.values[:, keep])
    with pytest.raises(ValueError, match="family='pst' does not have"):
        object_features(lab, family="pst", orders=2, normalize="z00")
    dark = np.where(lab == 3, 0.0, img)
    with pytest.raises(ValueError, match=r"\|A\[0,0\]\|, which is 0 for the label\(s\) \[3\]"):
        object_features(lab, dark, orders=2, normalize="z00")


@pytest.mark.parametrize("with_image", [False, True])
def test_cellprofiler_convention_is_the_engines(coins, with_image):
    lab, img = coins
    im = img if with_image else None
    of = object_features(lab, im, convention="cellprofiler", image_name="DNA")
    om = object_moments(lab, im, order=9, convention="cellprofiler", image_name="DNA")
    # the same computation: the bits are the property
    assert of.names == om.names
    assert len(of.names) == 30 * (2 if with_image else 1)
    assert of.names[0] == ("RadialDistribution_ZernikeMagnitude_DNA_0_0" if with_image
                           else "Zernike_0_0")
    np.testing.assert_array_equal(of.features, om.features)
    np.testing.assert_array_equal(of.geometry.radius, om.geometry.radius)


@pytest.mark.parametrize("with_image", [False, True])
def test_regionprops_extra_property(coins, with_image):
    lab, img = coins
    im = img if with_image else None
    prop = regionprops_property(orders=ORDER, dtype="float64", intensity=with_image)
    assert prop.__name__ == "zernike_magnitude"
    regions = measure.regionprops(lab, intensity_image=im, extra_properties=[prop])
    rows = np.array([r.zernike_magnitude for r in regions])
    of = object_features(lab, im, orders=ORDER, dtype="float64")
    np.testing.assert_allclose(rows, of.features, rtol=0,
                               atol=1e-12 * np.abs(of.features).max())
    table = measure.regionprops_table(lab, properties=["label"], extra_properties=[prop],
                                      intensity_image=im)
    np.testing.assert_allclose(table["zernike_magnitude-3"], of.features[:, 3], rtol=0,
                               atol=1e-12 * np.abs(of.features).max())
    assert regionprops_property(family="pseudo-zernike", kind="complex").__name__ == \
        "pseudo_zernike_complex"
    assert regionprops_property(convention="cellprofiler").__name__ == "zernike_cellprofiler"
    assert regionprops_property(name="zm").__name__ == "zm"


def test_torch_bool_empty_and_float32(coins):
    lab, img = coins
    t = object_features(torch.from_numpy(lab), torch.from_numpy(img), orders=4)
    assert isinstance(t.features, torch.Tensor) and t.features.dtype == torch.float64
    n = object_features(lab, img, orders=4)
    np.testing.assert_allclose(t.features.numpy(), n.features, rtol=0,
                               atol=1e-12 * np.abs(n.features).max())
    f32 = object_features(lab, img.astype(np.float32), orders=4)
    assert f32.features.dtype == np.float32
    np.testing.assert_allclose(f32.features, n.features, rtol=0,
                               atol=2e-6 * np.abs(n.features).max())
    one = object_features(lab == 5, orders=4, dtype="float64")
    np.testing.assert_array_equal(one.labels, [1])
    ref = object_features(lab, orders=4, dtype="float64")
    np.testing.assert_allclose(one.features[0], ref.features[4], rtol=0,
                               atol=1e-12 * np.abs(ref.features[4]).max())
    empty = object_features(np.zeros((10, 10), dtype=int), orders=3)
    assert empty.features.shape == (0, 6) and len(empty.labels) == 0
    lab2, img2 = lab.copy(), img.copy()
    object_features(lab2, img2, orders=2, normalize="z00")
    np.testing.assert_array_equal(lab2, lab)
    np.testing.assert_array_equal(img2, img)


def test_errors(coins):
    lab, img = coins
    with pytest.raises(TypeError, match="labels"):
        object_features(lab.astype(float))
    bad = lab.copy()
    bad[0, 0] = -3
    with pytest.raises(ValueError, match=r"labels.*-3"):
        object_features(bad)
    with pytest.raises(ValueError, match="labels"):
        object_features(lab[None])
    with pytest.raises(ValueError, match=r"image must have the shape of labels"):
        object_features(lab, img[:-1])
    with pytest.raises(TypeError, match="image must hold real numbers"):
        object_features(lab, img.astype(complex))
    nan = img.copy()
    nan[5, 5] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        object_features(lab, nan)
    with pytest.raises(ValueError, match="centre must be one of"):
        object_features(lab, centre="feret")
    with pytest.raises(ValueError, match="kind must be one of"):
        object_features(lab, kind="abs")
    with pytest.raises(ValueError, match="normalize must be one of"):
        object_features(lab, normalize="pixels")
    with pytest.raises(ValueError, match="standard convention"):
        object_features(lab, convention="cellprofiler", normalize="z00")
    with pytest.raises(ValueError, match="family must be 'zernike'"):
        object_features(lab, family="pcet", convention="cellprofiler")
    with pytest.raises(TypeError, match="orders"):
        object_features(lab, orders=2.5)
    with pytest.raises(TypeError, match="size"):
        object_features(lab, size=32)
    with pytest.raises(TypeError, match="intensity must be True or False"):
        regionprops_property(intensity=1)
    with pytest.raises(ValueError, match="name must be a Python identifier"):
        regionprops_property(name="a-b")
    with pytest.raises(TypeError, match="order"):
        regionprops_property(order=3)
    with pytest.raises(TypeError, match="channel_axis"):
        regionprops_property(channel_axis=-1)
