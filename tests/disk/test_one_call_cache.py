"""The one-call functions reuse their plans (disk/transform.py ``_cached``): a second call
with the same plain arguments builds nothing (a decorator once slid onto another function,
and every call rebuilt its plan, tables and compression)."""

from __future__ import annotations

import numpy as np

import fastmoments as fm
from fastmoments.disk import transform


def test_second_call_reuses_the_plan(rng):
    img = rng.random((24, 24))
    fm.zernike_moments(img, 8)
    before = transform._cached.cache_info()
    a = fm.zernike_moments(img, 8)
    after = transform._cached.cache_info()
    assert after.hits == before.hits + 1 and after.misses == before.misses
    np.testing.assert_allclose(a.numpy(), fm.zernike_moments(img, 8).numpy())
