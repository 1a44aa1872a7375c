"""Per-object moment features (fastmoments.recognition.objects) on a real image: scikit-image's
coins, thresholded and labelled as in its gallery."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import ndimage
from skimage import data, draw, filters, measure, morphology

from fastmoments.recognition import features
from fastmoments.recognition.objects import object_features, regionprops_property

ORDERS = 8
SIZE = 48


@pytest.fixture(scope="module")
def coins():
    img = data.coins()
    mask = img > filters.threshold_otsu(img)
    mask = morphology.closing(mask, morphology.footprint_rectangle((3, 3)))
    mask = morphology.remove_small_objects(mask, max_size=64)
    lab = measure.label(mask)
    assert lab.max() >= 20  # the coins (23 regions with these steps)
    return lab, img.astype(np.float64)


def _by_hand(lab, img, label, radius="enclosing", size=SIZE, kind="magnitude"):
    """One object alone: regionprops' centroid, the radius by brute force over pixel corners,
    scipy's bilinear interpolation of the masked object, then features()."""
    (region,) = [r for r in measure.regionprops(lab) if r.label == label]
    cr, cc = region.centroid
    rows, cols = np.nonzero(lab == label)
    if radius == "enclosing":
        corners = [np.hypot(rows + dr - cr, cols + dc - cc)
                   for dr in (-0.5, 0.5) for dc in (-0.5, 0.5)]
        rad = np.max(corners)
    else:
        rad = region.equivalent_diameter_area / 2
    obj = (lab == label).astype(np.float64) * (1.0 if img is None else img)
    t = (2 * np.arange(size) + 1 - size) / size
    rr, cc2 = np.meshgrid(cr + rad * t, cc + rad * t, indexing="ij")
    patch = ndimage.map_coordinates(obj, [rr, cc2], order=1, mode="grid-constant", cval=0.0)
    return features(patch, family="zernike", orders=ORDERS, kind=kind,
                    dtype="float64").matrix[0], rad


def test_rows_follow_regionprops(coins):
    lab, img = coins
    of = object_features(lab, img, orders=ORDERS, size=SIZE, dtype="float64")
    regions = measure.regionprops(lab)
    np.testing.assert_array_equal(of.labels, [r.label for r in regions])
    np.testing.assert_allclose(of.centroids, [r.centroid for r in regions], rtol=0,
                               atol=1e-10)
    assert of.matrix.shape == (len(regions), len(of.names))
    assert of.names == features(np.zeros((SIZE, SIZE)), family="zernike", orders=ORDERS,
                                kind="magnitude").names
    area = object_features(lab, orders=2, size=8, radius="area")
    np.testing.assert_allclose(area.radii, [r.equivalent_diameter_area / 2 for r in regions],
                               rtol=1e-13)
    np.testing.assert_array_equal(np.asarray(of), of.matrix)


@pytest.mark.parametrize("radius", ["enclosing", "area"])
@pytest.mark.parametrize("with_image", [True, False])
def test_each_object_equals_by_hand(coins, radius, with_image):
    lab, img = coins
    im = img if with_image else None
    of = object_features(lab, im, orders=ORDERS, size=SIZE, radius=radius, dtype="float64")
    for i, label in enumerate(of.labels[::4]):
        want, rad = _by_hand(lab, im, label, radius=radius)
        row = of.matrix[4 * i]
        assert of.radii[4 * i] == pytest.approx(rad, rel=1e-13)
        # float64 throughout: the only differences are rounding in the interpolation weights
        np.testing.assert_allclose(row, want, rtol=0, atol=1e-10 * np.abs(want).max())


def test_complex_kind_by_hand(coins):
    lab, img = coins
    of = object_features(lab, img, orders=ORDERS, size=SIZE, kind="complex", dtype="float64")
    want, _ = _by_hand(lab, img, of.labels[3], kind="complex")
    np.testing.assert_allclose(of.matrix[3], want, rtol=0, atol=1e-10 * np.abs(want).max())


@pytest.mark.parametrize("turns", [1, 2, 3])
def test_rotation_by_quarter_turns(coins, turns):
    lab, img = coins
    of = object_features(lab, img, orders=ORDERS, size=SIZE, dtype="float64")
    rot = object_features(np.rot90(lab, turns), np.rot90(img, turns), orders=ORDERS,
                          size=SIZE, dtype="float64")
    np.testing.assert_array_equal(rot.labels, of.labels)
    # the centroid turns exactly, the radius is the same, the sampling grid is symmetric under
    # quarter turns and bilinear interpolation commutes with them: each resampled object is
    # turned exactly, so |A_nm| agree to float64 rounding (no resampling error at all)
    np.testing.assert_allclose(rot.matrix, of.matrix, rtol=0,
                               atol=1e-11 * np.abs(of.matrix).max())


def test_translation(coins):
    lab, img = coins
    of = object_features(lab, img, orders=ORDERS, size=SIZE, dtype="float64")
    pad = ((13, 4), (7, 22))
    moved = object_features(np.pad(lab, pad), np.pad(img, pad), orders=ORDERS, size=SIZE,
                            dtype="float64")
    np.testing.assert_allclose(moved.centroids, of.centroids + np.array([13, 7]), rtol=0, atol=1e-9)
    # integer shifts leave every interpolation weight the same
    np.testing.assert_allclose(moved.matrix, of.matrix, rtol=0,
                               atol=1e-11 * np.abs(of.matrix).max())


def test_scale():
    """An ellipse drawn at two sizes: the masks differ by rasterisation only."""
    lab = np.zeros((200, 200), dtype=np.int32)
    rr, cc = draw.ellipse(40, 40, 12, 24, rotation=0.4, shape=lab.shape)
    lab[rr, cc] = 1
    rr, cc = draw.ellipse(130, 120, 36, 72, rotation=0.4, shape=lab.shape)
    lab[rr, cc] = 2
    other = np.zeros_like(lab)
    other[100:124, 60:132] = 1  # a rectangle of about the size of the large ellipse
    # measured max difference / largest magnitude, small vs large ellipse: 2.1% (enclosing),
    # 1.4% (area); large ellipse vs rectangle: 32% (enclosing), 23% (area)
    for radius, tol in (("enclosing", 0.03), ("area", 0.02)):
        of = object_features(lab, orders=ORDERS, size=64, radius=radius, dtype="float64")
        small, big = of.matrix
        assert of.radii[1] == pytest.approx(3 * of.radii[0], rel=0.05)
        np.testing.assert_allclose(small, big, rtol=0, atol=tol * np.abs(big).max())
        rect = object_features(other, orders=ORDERS, size=64, radius=radius,
                               dtype="float64").matrix[0]
        assert np.abs(rect - big).max() > 0.15 * np.abs(big).max()


@pytest.mark.parametrize("with_image", [False, True])
def test_regionprops_extra_property(coins, with_image):
    lab, img = coins
    prop = regionprops_property(orders=ORDERS, size=SIZE, dtype="float64",
                                intensity=with_image)
    assert prop.__name__ == "zernike_magnitude"
    regions = measure.regionprops(lab, intensity_image=img if with_image else None,
                                  extra_properties=[prop])
    rows = np.array([r.zernike_magnitude for r in regions])
    of = object_features(lab, img if with_image else None, orders=ORDERS, size=SIZE,
                         dtype="float64")
    np.testing.assert_allclose(rows, of.matrix, rtol=0, atol=1e-12 * np.abs(of.matrix).max())
    table = measure.regionprops_table(lab, properties=["label"], extra_properties=[prop],
                                      intensity_image=img if with_image else None)
    np.testing.assert_allclose(table["zernike_magnitude-3"], of.matrix[:, 3], rtol=0,
                               atol=1e-12 * np.abs(of.matrix).max())
    named = regionprops_property(family="pseudo-zernike", orders=2, kind="real")
    assert named.__name__ == "pseudo_zernike_real"
    assert regionprops_property(name="zm").__name__ == "zm"


def test_torch_bool_empty_and_float32(coins):
    lab, img = coins
    t = object_features(torch.from_numpy(lab), torch.from_numpy(img), orders=4, size=24)
    assert isinstance(t.matrix, torch.Tensor) and t.matrix.dtype == torch.float64
    n = object_features(lab, img, orders=4, size=24)
    np.testing.assert_allclose(t.matrix.numpy(), n.matrix, rtol=1e-13, atol=1e-13)
    f32 = object_features(lab, img.astype(np.float32), orders=4, size=24)
    assert f32.matrix.dtype == np.float32
    np.testing.assert_allclose(f32.matrix, n.matrix, rtol=0,
                               atol=2e-5 * np.abs(n.matrix).max())
    mask = lab == 5
    one = object_features(mask, orders=4, size=24)
    np.testing.assert_array_equal(one.labels, [1])
    # float32 (a bool mask works in float32): alone or in a batch, the sums run in another
    # order (on a GPU notably), so the bound is float32's, as for f32 above
    ref = object_features(lab, orders=4, size=24).matrix[4]
    np.testing.assert_allclose(one.matrix[0], ref, rtol=0, atol=2e-5 * np.abs(ref).max())
    empty = object_features(np.zeros((10, 10), dtype=int), orders=3, size=8)
    assert empty.matrix.shape == (0, 6) and len(empty.labels) == 0
    lab2 = lab.copy()
    object_features(lab2, img, orders=2, size=8)
    np.testing.assert_array_equal(lab2, lab)


def test_errors(coins):
    lab, img = coins
    with pytest.raises(TypeError, match="labels must be an integer label image"):
        object_features(lab.astype(float))
    bad = lab.copy()
    bad[0, 0] = -3
    with pytest.raises(ValueError, match=r"labels must be >= 0.*-3"):
        object_features(bad)
    with pytest.raises(ValueError, match=r"labels must be a 2-D label image"):
        object_features(lab[None])
    with pytest.raises(ValueError, match=r"image must have the shape of labels"):
        object_features(lab, img[:-1])
    with pytest.raises(TypeError, match="image must hold real numbers"):
        object_features(lab, img.astype(complex))
    nan = img.copy()
    nan[5, 5] = np.nan
    with pytest.raises(ValueError, match="image contains NaN"):
        object_features(lab, nan)
    with pytest.raises(ValueError, match="radius must be one of"):
        object_features(lab, radius="feret")
    with pytest.raises(TypeError, match="size must be an integer"):
        object_features(lab, size=32.0)
    with pytest.raises(ValueError, match="kind must be one of"):
        object_features(lab, kind="abs")
    with pytest.raises(TypeError, match="intensity must be a bool"):
        regionprops_property(intensity=1)
    with pytest.raises(ValueError, match="name must be a Python identifier"):
        regionprops_property(name="a-b")
    with pytest.raises(TypeError, match="unknown options"):
        regionprops_property(order=3)
