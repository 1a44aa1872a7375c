"""Tensor-core products of the box engine (``precision="fp16x3"``, engine.matmul_precision).

The kernels run on CUDA (or the CPU under TRITON_INTERPRET=1); elsewhere only the
precision switch and its fallback to the torch products are tested."""

from __future__ import annotations

import os

import pytest
import torch

from fastmoments.box import JacobiTransform, engine, triton_gemm

DEV = torch.device("cuda" if torch.cuda.is_available() else "cpu")
KERNEL = triton_gemm.available(DEV)
INTERPRET = os.environ.get("TRITON_INTERPRET", "") == "1"
needs_kernel = pytest.mark.skipif(not KERNEL, reason="needs CUDA or TRITON_INTERPRET=1 with Triton")


def test_matmul_precision_rejects_unknown_values_and_restores():
    with pytest.raises(ValueError, match="precision"):
        with engine.matmul_precision("bf16"):
            pass
    with engine.matmul_precision("fp16x3"):
        assert engine._PRECISION.get() == "fp16x3"
    assert engine._PRECISION.get() == "float32"


@pytest.mark.parametrize("opts", [{}, {"parity": True, "block": 4}, {"block": 4}])
def test_box_moments_on_tensor_cores_agree_with_float64(opts):
    shape = (12, 10, 14) if INTERPRET else (40, 36, 44)
    order = 8 if INTERPRET else 30
    x = torch.rand(shape, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    ref = JacobiTransform(shape, order, alpha=0.3, beta=0.3, dtype=torch.float64)
    plan = JacobiTransform(shape, order, alpha=0.3, beta=0.3, device=DEV, precision="fp16x3",
                           **opts)
    j64 = ref.forward(x).data
    j = plan.forward(x.float().to(DEV)).data
    r = plan.inverse(j)
    r64 = ref.inverse(j64)
    rel_j = float(torch.linalg.vector_norm(j.double().cpu() - j64) / torch.linalg.vector_norm(j64))
    rel_r = float(torch.linalg.vector_norm(r.double().cpu() - r64) / torch.linalg.vector_norm(r64))
    assert rel_j < 1e-6 and rel_r < 1e-6


@needs_kernel
@pytest.mark.parametrize(("shape", "opts"), [((3, 12, 10), {}), ((2, 6, 8, 7), {"block": 2}),
                                             ((2, 6, 8, 8), {"parity": True})])
def test_a_batch_on_tensor_cores_is_one_batched_product_per_axis(shape, opts):
    """Several images or volumes: every axis is one batched product sharing the table
    (engine._product); each item agrees with float64 as a single one does."""
    order = 5
    x = torch.rand(shape, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    ref = JacobiTransform(shape[1:], order, alpha=0.3, beta=0.3, dtype=torch.float64)
    plan = JacobiTransform(shape[1:], order, alpha=0.3, beta=0.3, device=DEV,
                           precision="fp16x3", **opts)
    j = plan.forward(x.float().to(DEV)).data
    r = plan.inverse(j)
    for i in range(shape[0]):
        j64 = ref.forward(x[i]).data
        r64 = ref.inverse(j64)
        rel_j = float(torch.linalg.vector_norm(j[i].double().cpu() - j64)
                      / torch.linalg.vector_norm(j64))
        rel_r = float(torch.linalg.vector_norm(r[i].double().cpu() - r64)
                      / torch.linalg.vector_norm(r64))
        assert rel_j < 1e-6 and rel_r < 1e-6, (i, rel_j, rel_r)


@pytest.mark.parametrize("precision", ["bf16", "tf32x3"])
def test_plan_precision_is_checked(precision):
    with pytest.raises(ValueError, match=r"precision.*'float32', 'fp16x3'"):
        JacobiTransform((8, 8), 3, precision=precision)
    assert JacobiTransform((8, 8), 3).precision == "float32"
