"""Arguments of the disk API are checked before any plan cache is consulted.

The plan cache (a ``functools.lru_cache`` inside) takes ``True``, ``1`` and ``1.0`` for one key,
so a check that runs only when a plan is built lets a bad argument through once a plan with
the "equal" value is cached. Each test warms the cache with the good value first.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.disk import DiskTransform
from fastmoments.recognition import moment_pairs

IMG = np.random.default_rng(0).random((12, 12))


@pytest.mark.parametrize("func", [fm.zernike_moments, fm.pseudo_zernike_moments])
@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"k": True}, TypeError, r"k must be an integer, got (the bool )?True"),
    ({"k": 1.0}, TypeError, "k must be an integer"),
    ({"k": [1]}, TypeError, r"k must be an integer, got \[1\]"),
    ({"repetitions": [2.5]}, TypeError, r"repetitions\[0\] must be an integer, got 2.5"),
    ({"repetitions": [True]}, TypeError,
     r"repetitions\[0\] must be an integer, got (the bool )?True"),
    ({"repetitions": "2"}, TypeError, "repetitions must be a sequence of integers"),
    ({"repetitions": []}, ValueError, "repetitions must name at least one"),
    ({"memory_budget": True}, TypeError, "memory_budget must be a real number"),
    ({"memory_budget": float("nan")}, ValueError, "memory_budget must be a finite number"),
    ({"dtype": torch.int32}, ValueError, "dtype must be float32 or float64"),
    ({"dtype": "complex128"}, ValueError, "dtype must be one of"),
    ({"quadrature": ["gauss"]}, ValueError, "quadrature must be one of"),
    ({"method": 1}, ValueError, "method must be one of"),
])
def test_zernike_arguments_checked_before_the_cache(func, kwargs, exc, match):
    func(IMG, 2, k=1, repetitions=[0, 2] if "repetitions" in kwargs else None)  # warm it
    with pytest.raises(exc, match=match):
        func(IMG, 2, **kwargs)


@pytest.mark.parametrize("func", [fm.zernike_moments, fm.pseudo_zernike_moments])
def test_float_and_bool_orders_and_pairs_are_errors(func):
    func(IMG, 2)
    func(IMG, pairs=[(2, 0)])
    for order in (2.0, True, "2", [2]):
        with pytest.raises(TypeError, match="order must be an integer"):
            func(IMG, order)
    with pytest.raises(TypeError, match=r"pairs\[0\]\[0\] \(n\) must be an integer, "
                                        r"got 1.5"):
        func(IMG, pairs=[(1.5, 2)])
    with pytest.raises(TypeError, match=r"pairs\[0\]\[1\] \(m\) must be an integer"):
        func(IMG, pairs=[(2, False)])
    with pytest.raises(ValueError, match=r"pairs\[0\] must be a pair .* length 3"):
        func(IMG, pairs=[(2, 0, 1)])
    with pytest.raises(TypeError, match=r"pairs\[0\] must be a sequence"):
        func(IMG, pairs=[2])
    with pytest.raises(ValueError, match="exactly one of order and pairs"):
        func(IMG, 2, pairs=[(2, 0)])


@pytest.mark.parametrize("func", [fm.pcet, fm.pct, fm.pst])
def test_pht_arguments_checked_before_the_cache(func):
    func(IMG, 2, 2)
    func(IMG, 2, 2, k=1, s=2.0)
    with pytest.raises(TypeError, match=r"nmax must be an integer, got (the float )?2\.0"):
        func(IMG, 2.0, 2)
    with pytest.raises(TypeError, match=r"lmax must be an integer, got (the bool )?True"):
        func(IMG, 2, True)
    with pytest.raises(TypeError, match="nmin must be an integer"):
        func(IMG, 2, 2, nmin=1.0)
    with pytest.raises(TypeError, match=r"k must be an integer, got (the bool )?True"):
        func(IMG, 2, 2, k=True)
    with pytest.raises(TypeError, match="s must be a real number, got True"):
        func(IMG, 2, 2, s=True)
    with pytest.raises(TypeError, match=r"pairs\[0\]\[0\] \(n\) must be an integer"):
        func(IMG, pairs=[(1.5, 2)])
    with pytest.raises(ValueError, match="give either nmax/lmax or pairs"):
        func(IMG, 2, 2, pairs=[(1, 1)])
    with pytest.raises(ValueError, match="method must be one of"):
        func(IMG, 2, 2, method="fft")
    with pytest.raises(ValueError, match="eps must be > 0"):
        func(IMG, 2, 2, eps=0.0)
    with pytest.raises(TypeError, match="memory_budget must be a real number"):
        func(IMG, 2, 2, memory_budget="1e9")


def test_features_arguments_checked_before_the_cache():
    fm.features(IMG, orders=2)
    with pytest.raises(TypeError, match=r"k must be an integer, got (the bool )?True"):
        fm.features(IMG, orders=2, k=True)
    with pytest.raises(TypeError, match="memory_budget must be a real number"):
        fm.features(IMG, orders=2, memory_budget=True)
    with pytest.raises(ValueError, match="quadrature must be one of"):
        fm.features(IMG, orders=2, quadrature=["gauss"])
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        fm.features(IMG, orders=2, dtype=torch.int32)
    with pytest.raises(TypeError, match="select must be an int or a sequence of"):
        fm.features(IMG, select=[(1.5, 1)])
    with pytest.raises(TypeError, match="select must be an int or a sequence of"):
        fm.features(IMG, select=True)
    with pytest.raises(TypeError, match="orders must be an int or an iterable"):
        fm.features(IMG, orders=[2.5])
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        fm.features(IMG, orders=2, progress=1)


def test_order_and_moment_pairs_checks():
    assert fm.order_pairs("zernike", 2) == [(2, 0), (2, 2)]
    for bad in (2.0, True, "2", None):
        with pytest.raises(TypeError, match="n must be an integer"):
            fm.order_pairs("zernike", bad)
    with pytest.raises(ValueError, match="n must be >= 0"):
        fm.order_pairs("zernike", -1)
    with pytest.raises(ValueError, match="family must be one of"):
        fm.order_pairs("legendre", 2)
    for bad in (2.0, True, [1.5], "3"):
        with pytest.raises(TypeError, match="orders must be an int or an iterable"):
            moment_pairs("zernike", bad)


def test_transform_constructor_checks():
    with pytest.raises(TypeError, match="family must be a family name"):
        DiskTransform(None, 16, 4)
    with pytest.raises(TypeError, match="family must be a family name"):
        DiskTransform(3, 16, 4)
    with pytest.raises(TypeError, match=r"repetitions\[0\] must be an integer, got 2\.5"):
        DiskTransform("zernike", 16, 4, repetitions=[2.5])
    with pytest.raises(TypeError, match=r"pairs\[0\]\[0\] \(n\) must be an integer"):
        DiskTransform("zernike", 16, pairs=[(1.5, 2)])
    with pytest.raises(ValueError, match="give either order or pairs"):
        DiskTransform("zernike", 16, 4, pairs=[(2, 0)])
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        DiskTransform("zernike", 16, 4, dtype=torch.int32)


def test_images_with_no_pixel_inside_the_disk_are_refused():
    """With the inscribed rule a 1 x 1 or 2 x 2 image has no pixel entirely inside the unit
    disk: every moment would be 0 whatever the image (it was, silently)."""
    for size in (1, 2):
        img = np.ones((size, size))
        calls = [(fm.zernike_moments, (img, 2), {}), (fm.pcet, (img, 1, 1), {}),
                 (fm.features, (img,), {"orders": 1}),
                 (DiskTransform, ("pseudo-zernike", size, 2), {})]
        for func, args, kwargs in calls:
            with pytest.raises(ValueError, match=f"size={size} leaves no pixel inside the "
                                                 "unit disk with rule='inscribed'"):
                func(*args, **kwargs)
        # the centre rule keeps the pixels whose centre is inside: A_00 = (1/pi) * area
        A = fm.zernike_moments(img, 0, rule="centre", dtype="float64")
        assert abs(A[0, 0] - 4 / np.pi) <= 4 * np.finfo(float).eps


@pytest.mark.parametrize("rule", ["inscribed", "centre"])
def test_pixel_rule_formula_agrees_with_the_sampling(rule):
    """check_disk_pixels decides from a formula what the sampling's mask says."""
    from fastmoments.disk.sampling import disk_sampling
    from fastmoments.disk.transform import check_disk_pixels

    for size in range(1, 10):
        for k in (1, 2):
            has = bool(disk_sampling(size, k, "midpoint", rule).mask.any())
            if has:
                check_disk_pixels(size, rule)
            else:
                with pytest.raises(ValueError, match=f"size={size} leaves no pixel"):
                    check_disk_pixels(size, rule)


@pytest.mark.parametrize("size", [1, 2])
def test_no_pixel_errors_name_the_image(size):
    """The error said only 'size=1 ...', which names no argument of a one-call function."""
    img = np.ones((size, size))
    for func, args, kwargs, name in [(fm.zernike_moments, (img, 2), {}, "image"),
                                     (fm.pct, (img, 1, 1), {}, "image"),
                                     (fm.features, (img[None],), {"orders": 1}, "images")]:
        with pytest.raises(ValueError, match=rf"^{name} of {size} x {size} pixels: size="):
            func(*args, **kwargs)
