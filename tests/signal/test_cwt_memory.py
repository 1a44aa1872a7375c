"""CWT results larger than memory: refused before any plan is built, or streamed into a
preallocated ``out=`` (numpy.memmap, zarr array) in bounded memory."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.signal import CWT

SCALES = (40.0, 3.0, 12.0, 0.7, 25.0)  # unsorted, one applied directly (σ < 1.5)


@pytest.fixture(scope="module")
def data():
    x = np.random.default_rng(5).standard_normal((3, 700))
    return x, CWT(SCALES)(x)


def test_memory_error_before_building_plans():
    plan = CWT(np.geomspace(2.0, 50.0, 100))
    x = np.zeros(10_000)
    need = 100 * 10_000 * 16
    with pytest.raises(MemoryError, match=r"needs 15\.26 MiB for its result .*out="):
        plan(x, memory_budget=need - 1)
    assert "plans" not in vars(plan)  # nothing was built
    with pytest.raises(MemoryError, match=r"numpy\.memmap or a zarr array"):
        fm.cwt(x, np.geomspace(2.0, 50.0, 100), memory_budget=1e6)
    y = plan(x[:100], memory_budget=need)  # a result that fits is computed
    assert y.shape == (100, 100)


def test_issue_example_fails_fast():
    # 10,000 scales on 10^7 samples: 745 GiB of complex64; refused before any of the
    # 10,000 plans (86 ms each) is built
    plan = CWT(np.geomspace(2.0, 5000.0, 10_000))
    with pytest.raises(MemoryError, match="GiB for its result"):
        plan(np.zeros(10**7, dtype=np.float32))
    assert "plans" not in vars(plan)


@pytest.mark.parametrize("engine", ["auto", "sliding"])
def test_stream_into_memmap(tmp_path, engine):
    x = np.random.default_rng(6).standard_normal((40, 700))
    ref = CWT(SCALES)(x, engine=engine)
    out = np.lib.format.open_memmap(tmp_path / "coef.npy", mode="w+", dtype=np.complex128,
                                    shape=(len(SCALES), *x.shape))
    # the budget holds one scale's coefficients (448 KB) and the scratch of the sliding
    # engine (1.1 MB a signal) but not the 2.24 MB result
    with pytest.raises(MemoryError, match=r"needs 2\.14 MiB for its result"):
        CWT(SCALES)(x, engine=engine, memory_budget=1_200_000)
    got = CWT(SCALES)(x, engine=engine, out=out, memory_budget=1_200_000)
    assert got is out
    out.flush()
    back = np.load(tmp_path / "coef.npy", mmap_mode="r")
    np.testing.assert_allclose(back, ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_stream_into_zarr(data):
    zarr = pytest.importorskip("zarr")
    x, ref = data
    z = zarr.create_array(store={}, shape=(len(SCALES), *x.shape), dtype="complex128",
                          chunks=(1, *x.shape))
    seen = []

    class Spy:  # records the blocks written: bounded, and every scale exactly once
        shape, dtype = z.shape, z.dtype

        def __setitem__(self, key, value):
            seen.append((key.start, key.stop))
            z[key] = value

    coef, _ = fm.cwt(x, SCALES, out=Spy(), memory_budget=130_000)
    assert isinstance(coef, Spy)
    assert seen == [(i, i + 1) for i in range(len(SCALES))]  # 33.6 KB per scale
    np.testing.assert_allclose(z[:], ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    # and straight into the zarr array, two scales a block, from a tensor
    z2 = zarr.create_array(store={}, shape=(len(SCALES), *x.shape), dtype="complex128")
    assert CWT(SCALES)(torch.from_numpy(x), out=z2, memory_budget=200_000) is z2
    np.testing.assert_allclose(z2[:], ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_stream_out_errors(data):
    zarr = pytest.importorskip("zarr")
    x, _ = data
    plan = CWT(SCALES)
    bad_shape = zarr.create_array(store={}, shape=(2, 3, 700), dtype="complex128")
    with pytest.raises(ValueError, match=r"out must have shape \(5, 3, 700\)"):
        plan(x, out=bad_shape)
    bad_dtype = zarr.create_array(store={}, shape=(5, 3, 700), dtype="complex64")
    with pytest.raises(TypeError, match="out must have dtype complex128"):
        plan(x, out=bad_dtype)
    store = zarr.storage.MemoryStore()
    zarr.create_array(store=store, shape=(5, 3, 700), dtype="complex128")
    with pytest.raises(ValueError, match="read-only"):
        plan(x, out=zarr.open_array(store, mode="r"))
    with pytest.raises(TypeError, match="out must be"):
        plan(x, out=[[0.0]])
    with pytest.raises(MemoryError, match="per scale"):
        plan(x, out=zarr.create_array(store={}, shape=(5, 3, 700), dtype="complex128"),
             memory_budget=1000)
