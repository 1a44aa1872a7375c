"""``channel_axis`` (scikit-image's convention) on every image function: the
channels become the last batch axis of the moments and of the feature rows, reconstructions
put them back where they were, and a colour image given without ``channel_axis`` gets an
error about colour channels."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.box import JacobiTransform
from fastmoments.disk import PolarHarmonicTransform, ZernikeTransform
from fastmoments.recognition import features, object_features

RNG = np.random.default_rng(11)
RGB = RNG.random((24, 24, 3))         # one colour image, channels last
BATCH = RNG.random((2, 24, 24, 4))    # two RGBA images, channels last

DISK = {
    "zernike": lambda x, **kw: fm.zernike_moments(x, 6, dtype="float64", **kw),
    "pseudo-zernike": lambda x, **kw: fm.pseudo_zernike_moments(x, 5, dtype="float64", **kw),
    "pcet": lambda x, **kw: fm.pcet(x, 2, 3, dtype="float64", **kw),
    "pct": lambda x, **kw: fm.pct(x, 2, 2, dtype="float64", **kw),
    "pst": lambda x, **kw: fm.pst(x, 2, 2, dtype="float64", **kw),
}


@pytest.mark.parametrize("family", DISK)
def test_disk_channels_are_the_last_batch_axis(family):
    f = DISK[family]
    A = f(RGB, channel_axis=-1)
    assert A.batch_shape == (3,) and A.shape[:1] == (3,)
    for c in range(3):
        np.testing.assert_allclose(A.values()[c], f(RGB[..., c]).values(), rtol=1e-13,
                                   atol=1e-15)
    rec = A.reconstruct()
    assert rec.shape == RGB.shape
    for c in range(3):
        np.testing.assert_allclose(rec[..., c], f(RGB[..., c]).reconstruct(), atol=1e-12)
    B = f(BATCH, channel_axis=3)
    assert B.batch_shape == (2, 4)
    np.testing.assert_allclose(B.values()[1, 2], f(BATCH[1, ..., 2]).values(), rtol=1e-13,
                               atol=1e-15)
    assert B.reconstruct().shape == BATCH.shape
    # channels first, in the middle of the batch: the same moments
    first = np.moveaxis(BATCH, -1, 1)  # (2, 4, 24, 24)
    F = f(first, channel_axis=1)
    np.testing.assert_allclose(F.values(), B.values(), rtol=1e-13, atol=1e-15)
    assert F.reconstruct().shape == first.shape


def test_plans_take_channel_axis_and_torch_input():
    plan = ZernikeTransform(24, 5, dtype=torch.float64)
    t = torch.as_tensor(RGB)
    A = plan.forward(t, channel_axis=-1)
    assert isinstance(A.values(), torch.Tensor) and A.batch_shape == (3,)
    np.testing.assert_allclose(A.values()[1].numpy(), plan(RGB[..., 1]).values(), rtol=1e-13)
    assert tuple(A.reconstruct().shape) == RGB.shape
    pht = PolarHarmonicTransform("pcet", 24, 2, 2, dtype=torch.float64)
    M = pht(RGB, channel_axis=2)
    np.testing.assert_allclose(M.values()[2], pht(RGB[..., 2]).values(), rtol=1e-13)
    assert RGB.flags.writeable and RGB.shape == (24, 24, 3)  # input untouched


def test_features_rows_are_image_then_channel():
    fs = features(BATCH, family="zernike", orders=4, kind="magnitude", channel_axis=-1,
                  dtype="float64")
    assert fs.matrix.shape == (2 * 4, 9)
    per = features(np.moveaxis(BATCH, -1, 1).reshape(8, 24, 24), family="zernike", orders=4,
                   kind="magnitude", dtype="float64")
    np.testing.assert_allclose(fs.matrix, per.matrix, rtol=1e-13)
    side = fs.matrix.reshape(2, -1)  # each image's channels side by side
    np.testing.assert_allclose(side[1, 9:18], per.matrix[5], rtol=1e-13)
    # same numbers as the moments' invariants, column by column
    A = fm.zernike_moments(BATCH, 4, channel_axis=-1, dtype="float64")
    np.testing.assert_allclose(fs.matrix, A.invariants().reshape(8, -1), rtol=1e-12)


def test_object_features_with_a_colour_image():
    lab = np.zeros((30, 30), dtype=int)
    lab[3:12, 4:20] = 1
    lab[15:28, 10:14] = 2
    img = RNG.random((30, 30, 3))
    of = object_features(lab, img, orders=3, dtype="float64", channel_axis=-1)
    assert of.features.shape == (2, 3 * 6) and of.channels == 3
    assert of.values.shape == (2, 3, 6)
    assert of.names[6] == "|A[0,0]| (channel 1)"
    for c in range(3):
        one = object_features(lab, img[..., c], orders=3, dtype="float64")
        np.testing.assert_allclose(of.features[:, 6 * c: 6 * (c + 1)], one.features,
                                   rtol=1e-12)
    first = object_features(lab, np.moveaxis(img, -1, 0), orders=3, dtype="float64",
                            channel_axis=0)
    np.testing.assert_allclose(first.features, of.features, rtol=1e-12)
    with pytest.raises(ValueError, match="channel_axis=-1"):
        object_features(lab, img, orders=3)
    with pytest.raises(ValueError, match="give image="):
        object_features(lab, orders=3, channel_axis=-1)


@pytest.mark.parametrize("func", [
    lambda x, **kw: fm.legendre_moments(x, 4, **kw),
    lambda x, **kw: fm.gegenbauer_moments(x, 4, lam=1.0, **kw),
    lambda x, **kw: fm.jacobi_moments(x, 4, alpha=0.3, beta=0.2, **kw),
])
def test_box_2d_channels(func):
    x = RNG.random((20, 28, 3))
    J = func(x, channel_axis=-1)
    assert J.batch_shape == (3,) and J.shape == (3, 5, 5) and np.asarray(J).shape == J.shape
    for c in range(3):
        np.testing.assert_allclose(J.numpy()[c], func(x[..., c]).numpy(), rtol=1e-13)
    assert J.reconstruct().shape == x.shape
    np.testing.assert_allclose(J.reconstruct()[..., 1], func(x[..., 1]).reconstruct(),
                               atol=1e-12)
    # an integer region drops its axis; the channels stay last
    assert J.reconstruct(region=(4, slice(None))).shape == (28, 3)
    with pytest.raises(ValueError, match="channel_axis=-1"):
        func(x)
    plan = JacobiTransform((20, 28), 4, dtype=torch.float64)
    P = plan.forward(x, channel_axis=-1)
    np.testing.assert_allclose(P.numpy(), plan.forward(np.moveaxis(x, -1, 0)).numpy(),
                               rtol=1e-13)
    assert P.reconstruct().shape == x.shape


@pytest.mark.parametrize("call", [
    lambda x: fm.zernike_moments(x, 4),
    lambda x: fm.pseudo_zernike_moments(x, 4),
    lambda x: fm.pcet(x, 2, 2),
    lambda x: features(x),
    lambda x: ZernikeTransform(32, 3).forward(x),
])
@pytest.mark.parametrize("channels", [3, 4])
def test_colour_image_without_channel_axis_says_so(call, channels):
    with pytest.raises(ValueError, match=r"colour channels.*channel_axis=-1"):
        call(np.zeros((32, 40, channels)))


@pytest.mark.parametrize("call", [lambda x: fm.zernike_moments(x, 4), lambda x: features(x)])
def test_grey_non_square_keeps_the_crop_message_and_stacks_stay_valid(call):
    with pytest.raises(ValueError, match="crop or pad") as err:
        call(np.zeros((32, 40)))
    assert "colour" not in str(err.value)
    out = call(np.ones((3, 16, 16)))  # three square images, not one colour image
    assert len(np.asarray(out)) == 3


@pytest.mark.parametrize("bad, exc", [(2.0, TypeError), (True, TypeError), ("-1", TypeError),
                                      (3, ValueError), (-4, ValueError)])
def test_bad_channel_axis_names_it(bad, exc):
    for call in (lambda: fm.zernike_moments(RGB, 3, channel_axis=bad),
                 lambda: features(RGB, channel_axis=bad),
                 lambda: fm.legendre_moments(RGB, 3, channel_axis=bad),
                 lambda: fm.pct(RGB, 2, 2, channel_axis=bad)):
        with pytest.raises(exc, match="channel_axis"):
            call()
    with pytest.raises(ValueError, match="channel_axis=-1 is out of range"):
        fm.zernike_moments(np.ones((8, 8)), 3, channel_axis=-1)
