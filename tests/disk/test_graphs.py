"""Disk forward transforms replayed as CUDA graphs (DiskTransform._replayed_forward).

On the CPU nothing is captured; on a GPU the third call of a shape is captured and later
calls replay it: the result must be the eager one to the last bit, NaN input must still be
refused after the capture, and large jobs, other dtypes and gradients stay eager."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastmoments.disk import DiskTransform

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


def test_cpu_calls_are_never_captured(rng):
    plan = DiskTransform("zernike", 32, 10, dtype=torch.float64)
    x = torch.as_tensor(rng.random((32, 32)))
    for _ in range(4):
        plan.forward(x)
    assert plan._replayed_forward(x, None) is None
    assert "_graph_cache" not in plan.__dict__ or len(plan.__dict__["_graph_cache"]) == 0


@cuda
@pytest.mark.parametrize("family", ["zernike", "pseudo-zernike"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_replay_is_bit_exact(rng, family, dtype):
    plan = DiskTransform(family, 64, 30, k=2, dtype=dtype, device="cuda")
    xs = [torch.as_tensor(rng.random((2, 64, 64)), dtype=dtype, device="cuda")
          for _ in range(5)]
    eager = [plan.engine.forward(x.reshape(2, -1), False).clone() for x in xs]
    got = [plan.forward(x).data for x in xs]
    assert len(plan._graph_cache) == 1  # captured at the third call
    for a, b in zip(got, eager, strict=True):
        torch.testing.assert_close(a, b.reshape(a.shape), rtol=0, atol=0)


@cuda
def test_nan_is_refused_after_capture(rng):
    plan = DiskTransform("zernike", 32, 12, device="cuda")
    x = torch.as_tensor(rng.random((32, 32)), dtype=torch.float32, device="cuda")
    for _ in range(4):
        plan.forward(x)
    assert len(plan._graph_cache) == 1
    bad = x.clone()
    bad[3, 5] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        plan.forward(bad)
    # and the plan still works afterwards
    np.testing.assert_allclose(plan.forward(x).numpy(), plan.forward(x).numpy())


@cuda
def test_other_inputs_stay_eager(rng):
    plan = DiskTransform("zernike", 32, 12, device="cuda")
    x64 = torch.as_tensor(rng.random((32, 32)), device="cuda")  # float64 into float32
    xg = torch.rand(32, 32, device="cuda", requires_grad=True)
    for _ in range(4):
        plan.forward(x64)
        plan.forward(xg)
    assert len(plan.__dict__.get("_graph_cache", [])) == 0


@cuda
def test_progress_false_is_replayed(rng):
    plan = DiskTransform("zernike", 32, 12, device="cuda")
    x = torch.as_tensor(rng.random((32, 32)), dtype=torch.float32, device="cuda")
    for _ in range(4):
        plan.forward(x, progress=False)
    assert len(plan._graph_cache) == 1
