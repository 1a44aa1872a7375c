"""psnr against a float64 formula written here, and its errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import fastmoments as fm

RNG = np.random.default_rng(7)


def reference_psnr(f, g, mask, data_range):
    """Direct float64 formula, one image, plain Python sums."""
    f = np.asarray(f, dtype=np.float64)
    g = np.asarray(g, dtype=np.float64)
    mask = np.broadcast_to(np.asarray(mask, dtype=bool), f.shape)
    sq = [(a - b) ** 2 for a, b, k in zip(f.ravel(), g.ravel(), mask.ravel(), strict=True) if k]
    mse = math.fsum(sq) / len(sq)
    if data_range is None:
        sel = f[mask]
        data_range = float(sel.max() - sel.min())
    return math.inf if mse == 0 else 10 * math.log10(data_range**2 / mse)


def _pair(shape=(9, 11)):
    f = RNG.random(shape) * 200
    return f, f + RNG.standard_normal(shape) * 5


@pytest.mark.parametrize("data_range", [None, 255.0, 3, np.float32(100.0)])
@pytest.mark.parametrize("masked", [False, True])
def test_psnr_matches_the_formula(data_range, masked):
    f, g = _pair()
    mask = RNG.random(f.shape) > 0.3 if masked else np.ones(f.shape, bool)
    got = fm.psnr(f, g, mask=mask if masked else None, data_range=data_range)
    want = reference_psnr(f, g, mask, None if data_range is None else float(data_range))
    assert isinstance(got, float)
    assert got == pytest.approx(want, rel=1e-13)


def test_batch_and_torch_agree_with_the_formula():
    f, g = _pair((3, 8, 8))
    mask = RNG.random((8, 8)) > 0.5
    got = fm.psnr(f, g, mask=mask)
    want = [reference_psnr(f[i], g[i], mask, None) for i in range(3)]
    np.testing.assert_allclose(got, want, rtol=1e-13)
    tg = fm.psnr(torch.from_numpy(f), torch.from_numpy(g), mask=torch.from_numpy(mask))
    assert isinstance(tg, torch.Tensor) and tg.dtype == torch.float64
    np.testing.assert_allclose(tg.numpy(), want, rtol=1e-13)


def test_float32_input_is_summed_in_float64():
    f, g = _pair()
    f32, g32 = f.astype(np.float32), g.astype(np.float32)
    want = reference_psnr(f32, g32, np.ones(f.shape, bool), 255.0)
    assert fm.psnr(f32, g32, data_range=255) == pytest.approx(want, rel=1e-13)


@pytest.mark.parametrize(("dtype", "rng"), [("uint8", 255.0), ("int8", 255.0)])
def test_integer_range_is_inferred_the_same_for_numpy_and_torch(dtype, rng):
    f = RNG.integers(0, 100, (6, 6)).astype(dtype)
    g = f.astype(np.float64) + 1.5
    want = reference_psnr(f, g, np.ones(f.shape, bool), rng)
    assert fm.psnr(f, g) == pytest.approx(want, rel=1e-13)
    tf = torch.from_numpy(f)
    assert fm.psnr(tf, torch.from_numpy(g)) == pytest.approx(want, rel=1e-13)


def test_bool_reference_has_range_one():
    f = RNG.random((5, 5)) > 0.5
    g = f.astype(np.float64) * 0.9
    want = reference_psnr(f, g, np.ones(f.shape, bool), 1.0)
    assert fm.psnr(f, g) == pytest.approx(want, rel=1e-13)
    assert fm.psnr(torch.from_numpy(f), torch.from_numpy(g)) == pytest.approx(want, rel=1e-13)


@pytest.mark.parametrize("dtype", ["int16", "int32", "int64", "uint16"])
def test_wide_integers_need_a_data_range(dtype):
    f = RNG.integers(0, 100, (6, 6)).astype(dtype)
    with pytest.raises(ValueError, match="data_range is needed"):
        fm.psnr(f, f + 1)
    with pytest.raises(ValueError, match="data_range is needed"):
        fm.psnr(torch.from_numpy(f.astype(np.int64)), torch.from_numpy(f + 1.0))
    assert fm.psnr(f, f + 1, data_range=1000) == pytest.approx(60.0, rel=1e-13)


def test_identical_images_give_inf():
    f, _ = _pair()
    assert fm.psnr(f, f.copy()) == math.inf
    c = np.full((4, 4), 3.0)
    assert fm.psnr(c, c) == math.inf  # a constant reference is fine when nothing differs
    with pytest.raises(ValueError, match="reference is constant"):
        fm.psnr(c, c + 1)


@pytest.mark.parametrize("bad", [-255, 0, 0.0, -1e-9])
def test_data_range_must_be_positive(bad):
    f, g = _pair()
    with pytest.raises(ValueError, match="data_range must be > 0"):
        fm.psnr(f, g, data_range=bad)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_data_range_must_be_finite(bad):
    f, g = _pair()
    with pytest.raises(ValueError, match="data_range must be"):
        fm.psnr(f, g, data_range=bad)


@pytest.mark.parametrize("bad", [True, False, "255", 1j, [255], None.__class__])
def test_data_range_must_be_a_real_number(bad):
    f, g = _pair()
    with pytest.raises(TypeError, match="data_range must be a real number"):
        fm.psnr(f, g, data_range=bad)


def test_mask_errors():
    f, g = _pair((8, 8))
    with pytest.raises(ValueError, match="mask of shape"):
        fm.psnr(f, g, mask=np.ones((7, 8), bool))
    with pytest.raises(ValueError, match="mask of shape"):
        fm.psnr(f, g, mask=np.ones((2, 8, 8), bool))  # would make a batch the images lack
    with pytest.raises(TypeError, match="mask must be a boolean array, got dtype float64"):
        fm.psnr(f, g, mask=np.ones((8, 8)))
    with pytest.raises(TypeError, match="mask must be a boolean array"):
        fm.psnr(f, g, mask=torch.ones(8, 8, dtype=torch.uint8))
    with pytest.raises(ValueError, match="mask selects no pixel"):
        fm.psnr(f, g, mask=np.zeros((8, 8), bool))
    fb, gb = _pair((2, 8, 8))
    m = np.ones((2, 8, 8), bool)
    m[1] = False
    with pytest.raises(ValueError, match=r"mask selects no pixel of image \(1,\)"):
        fm.psnr(fb, gb, mask=m)


def test_shape_and_value_errors():
    f, g = _pair((8, 8))
    with pytest.raises(ValueError, match="estimate must have the shape of reference"):
        fm.psnr(f, g[:, :7])
    with pytest.raises(ValueError, match="reference must have at least 2"):
        fm.psnr(f[0], g[0])
    with pytest.raises(ValueError, match="reference must have images of at least 1 x 1"):
        fm.psnr(np.zeros((0, 3)), np.zeros((0, 3)))
    bad = g.copy()
    bad[2, 2] = np.nan
    with pytest.raises(ValueError, match="estimate contains NaN"):
        fm.psnr(f, bad)
    with pytest.raises(TypeError, match="reference must"):
        fm.psnr("img", g)
    with pytest.raises(ValueError, match="reference must be real"):
        fm.psnr(f + 1j, g)


def test_inputs_are_not_modified_and_big_endian_works():
    f, g = _pair()
    fb = f.astype(">f8")
    keep = fb.copy()
    assert fm.psnr(fb, g) == pytest.approx(reference_psnr(f, g, np.ones(f.shape, bool), None),
                                           rel=1e-13)
    np.testing.assert_array_equal(fb, keep)


def test_psnr_at_the_ends_of_the_float64_range():
    """Errors near 1e300 do not overflow to -inf, errors near 1e-170 do not underflow to inf."""
    from fastmoments.metrics import psnr

    img = np.random.default_rng(4).random((8, 8)) + 0.5
    big = img * 1e300
    # the true value, from logarithms: 10 log10(L^2 / mean((a - b)^2))
    want = -10.0 * (2 * 300 + np.log10(np.mean((img - img * 1e-300) ** 2)))
    got = psnr(big, img, data_range=1.0)
    assert np.isfinite(got) and abs(got - want) < 1e-9 * abs(want)
    assert abs(got + 5996) < 5
    tiny = np.zeros((4, 4))
    tiny[1, 2] = 1e-170
    got = psnr(np.zeros((4, 4)), tiny, data_range=1.0)
    assert abs(got - (340 * 10 + 10 * np.log10(16))) < 1e-9 * got
    batch = psnr(np.stack([big, img]), np.stack([img, img]), data_range=1.0)
    assert np.isfinite(batch[0]) and batch[1] == np.inf
