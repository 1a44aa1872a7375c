"""The box route table (fastmoments.box.routes): decided once per key, shown, and taken.

On the CPU every route is the torch products; under TRITON_INTERPRET=1
(``box/test_interpreter.py`` runs this file so) the ``"fp16x3"`` routes run their Triton
kernels, and the tests check that the kernel a route names is the one that runs.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastmoments._route import Route
from fastmoments.box import JacobiTransform, jacobi_moments, routes, triton_gemm
from fastmoments.box.api import _plan

DEV = torch.device("cuda" if torch.cuda.is_available() else "cpu")
needs_kernel = pytest.mark.skipif(not triton_gemm.available(DEV),
                                  reason="needs CUDA or TRITON_INTERPRET=1 with Triton")


def test_a_plan_shows_its_route():
    plan = JacobiTransform((8, 9, 10), 5, alpha=0.3, beta=0.3, dtype=torch.float64)
    assert isinstance(plan.route, Route)
    assert plan.route.method == "separable"
    assert f"route={plan.route}" in repr(plan)
    assert plan.route == routes.route(plan, "forward", 8 * 9 * 10, torch.float64, plan.device)


def test_the_cpu_takes_the_torch_products_and_folds():
    plan = JacobiTransform((6, 5, 4), 3, alpha=0.2, beta=0.2, parity=True)
    assert plan.route.backend == "torch"
    want = "matmul+fold" if routes.fold_kernels.triton_on(plan.device) else "matmul+torch-fold"
    assert plan.route.kernel == want
    assert "precision='float32'" in plan.route.reason
    plain = JacobiTransform((6, 5), 3, alpha=0.2, beta=0.7)
    assert plain.route.kernel == "matmul"


def test_routes_are_decided_once_per_key_and_the_first_call_takes_the_last_route(rng,
                                                                                 monkeypatch):
    plan = JacobiTransform((6, 7), 4, dtype=torch.float64)
    x = rng.standard_normal((3, 6, 7))
    decided = []
    real = routes.route

    def counted(*args, **kwargs):
        decided.append(args[1:3])
        return real(*args, **kwargs)

    monkeypatch.setattr(routes, "route", counted)
    first = plan.forward(x)
    seen = plan.routes
    for _ in range(3):
        again = plan.forward(x)
        np.testing.assert_array_equal(again.numpy(), first.numpy())  # the same work, bits
    plan.inverse(first)
    plan.inverse(first)
    assert decided == [("forward", 3 * 6 * 7), ("inverse", 3 * 5 * 5)]
    assert all(plan.routes[k] == r for k, r in seen.items())
    keys = {k[:2] for k in plan.routes}
    assert ("forward", 3 * 6 * 7) in keys and ("inverse", 3 * 5 * 5) in keys


def test_the_one_call_functions_take_the_plans_route(rng):
    _plan.cache_clear()
    img = rng.standard_normal((9, 8))
    jacobi_moments(img, 4, alpha=0.3, beta=0.3)
    plan = _plan((9, 8), 4, 0.3, 0.3, 1, "midpoint", "total", "jacobi", torch.float64, "cpu")
    assert plan.routes[("forward", 72, torch.float64, torch.device("cpu"), False)] == plan.route


def test_route_options_are_checked():
    plan = JacobiTransform((4, 4), 2)
    with pytest.raises(ValueError, match="direction"):
        routes.route(plan, "sideways", 16, torch.float32, plan.device)


def test_gradients_take_the_torch_route():
    plan = JacobiTransform((5, 6), 3, dtype=torch.float64)
    x = torch.randn(5, 6, dtype=torch.float64, requires_grad=True)
    plan.forward(x).data.sum().backward()
    key = ("forward", 30, torch.float64, plan.device, True)
    assert plan.routes[key].kernel == "matmul"


def test_plan_defaults_come_from_the_table():
    cpu = torch.device("cpu")
    assert routes.default_precision(3, torch.float32, cpu) == "float32"
    assert routes.default_block(2, 10, "total", False, "float32") == 12
    assert routes.default_block(3, 300, "box", False, "float32") == 302
    assert routes.default_block(3, 300, "total", True, "float32") == routes.BLOCK_PARITY_OR_HALVES
    assert routes.default_block(3, 300, "total", False, "float32") == routes.BLOCK_VOLUMES
    assert not routes.default_parity((8, 8, 8), 0.2, 0.3, "float32", cpu)
    assert routes.halves_job(routes.HALVES_MIN) and not routes.halves_job(routes.HALVES_MIN - 1)


@needs_kernel
@pytest.mark.parametrize(("shape", "parity", "small", "kernel"), [
    ((7, 6, 5), False, True, "fp16x3-halves"),
    ((7, 6, 5), False, False, "fp16x3-split"),
    ((8, 6, 6), True, True, "fp16x3-halves-classes+fold"),
    ((8, 6, 6), True, False, "fp16x3-split+fold"),
])
def test_fp16x3_routes_name_the_kernels_that_run(monkeypatch, shape, parity, small, kernel):
    monkeypatch.setattr(routes, "HALVES_MIN", 1 if small else 10**9)
    calls = {"halves": 0, "split": 0}

    def count(label, f):
        def counted(*a, **k):
            calls[label] += 1
            return f(*a, **k)
        return counted

    monkeypatch.setattr(triton_gemm, "halves_product",
                        count("halves", triton_gemm.halves_product))
    monkeypatch.setattr(triton_gemm, "bmm_fp16x3", count("split", triton_gemm.bmm_fp16x3))
    plan = JacobiTransform(shape, 4, alpha=0.3, beta=0.3, device=DEV, precision="fp16x3",
                           parity=parity, block=2)
    assert plan.route.kernel == kernel and plan.route.backend == "triton"
    plan.forward(torch.rand(shape, generator=torch.Generator().manual_seed(1)).to(DEV))
    if "halves" in kernel:
        assert calls["halves"] > 0 and calls["split"] == 0
    else:
        assert calls["split"] > 0 and calls["halves"] == 0
    f64 = JacobiTransform(shape, 4, alpha=0.3, beta=0.3, dtype=torch.float64, device=DEV)
    assert f64.route.kernel.startswith("matmul")
    assert "float32 on a Triton device" in routes.route(
        plan, "forward", 10, torch.float64, plan.device).reason
