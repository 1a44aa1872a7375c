"""3-D Zernike forward transforms replayed as CUDA graphs (Zernike3DTransform._replayed_forward).

On the CPU nothing is captured; on a GPU, on the ``ring-phases`` routes, the third call of a
shape is captured and later calls replay it: the result must be the eager one to the last bit,
NaN input must still be refused (with the eager message) after the capture, and other dtypes,
gradients and the circle route stay eager."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fastmoments.ball.routes as routes
from fastmoments.ball import Zernike3DTransform

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
RNG = np.random.default_rng(5)


def test_cpu_calls_are_never_captured():
    plan = Zernike3DTransform((10, 10, 10), 6, dtype="float64")
    x = torch.as_tensor(RNG.random((10, 10, 10)))
    for _ in range(4):
        plan.forward(x)
    assert plan._replayed_forward(x, None) is None
    assert len(plan.__dict__.get("_graph_cache", [])) == 0


@cuda
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_replay_is_bit_exact(dtype):
    plan = Zernike3DTransform((24, 24, 24), 12, dtype=dtype, device="cuda")
    assert plan.route.kernel.startswith("ring-phases+")
    xs = [torch.as_tensor(RNG.random((2, 24, 24, 24)), dtype=dtype, device="cuda")
          for _ in range(5)]
    eager = [plan.engine.forward(x.reshape(2, -1), False).clone() for x in xs]
    got = [plan.forward(x).data for x in xs]
    assert len(plan._graph_cache) == 1  # captured at the third call
    for a, b in zip(got, eager, strict=True):
        torch.testing.assert_close(a, b.reshape(a.shape), rtol=0, atol=0)


@cuda
def test_nan_is_refused_after_capture():
    plan = Zernike3DTransform((16, 16, 16), 8, device="cuda")
    x = torch.as_tensor(RNG.random((16, 16, 16)), dtype=torch.float32, device="cuda")
    for _ in range(4):
        plan.forward(x)
    assert len(plan._graph_cache) == 1
    bad = x.clone()
    bad[3, 5, 7] = float("nan")
    with pytest.raises(ValueError, match="volume contains NaN"):
        plan.forward(bad)
    np.testing.assert_array_equal(plan.forward(x).values().cpu().numpy(),
                                  plan.forward(x).values().cpu().numpy())


@cuda
def test_other_inputs_and_routes_stay_eager(monkeypatch):
    plan = Zernike3DTransform((16, 16, 16), 8, device="cuda")
    x64 = torch.as_tensor(RNG.random((16, 16, 16)), device="cuda")  # float64 into float32
    xg = torch.rand(16, 16, 16, device="cuda", requires_grad=True)
    for _ in range(4):
        plan.forward(x64)
        plan.forward(xg)
    assert len(plan.__dict__.get("_graph_cache", [])) == 0
    monkeypatch.setitem(routes.RING_PHASES_CACHE, "cuda", 0)
    circles = Zernike3DTransform((16, 16, 16), 8, device="cuda")
    assert not circles.route.kernel.startswith("ring-phases")
    x = x64.float()
    for _ in range(4):
        circles.forward(x)
    assert len(circles.__dict__.get("_graph_cache", [])) == 0
    torch.testing.assert_close(circles.forward(x).data, plan.forward(x).data,
                               rtol=0, atol=2e-6 * float(plan.forward(x).data.abs().max()))
