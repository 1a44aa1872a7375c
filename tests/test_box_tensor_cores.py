"""3xTF32 tensor-core products of the box engine (box.triton_gemm, engine.matmul_precision).

The kernel runs on CUDA (or the CPU under TRITON_INTERPRET=1); elsewhere only the
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


def _bound(k: int) -> float:
    # float32 accumulation of k products plus the 3xTF32 split's two 2^-22 terms, relative to
    # sum |a||b| (the usual forward-error bound of a dot product)
    return (k + 4) * 2.0**-23


@needs_kernel
@pytest.mark.parametrize("shape", [(1, 5, 7, 3), (3, 33, 70, 17), (2, 128, 40, 260)])
def test_bmm_matches_float64_within_the_float32_bound(shape):
    b, m, k, n = shape
    g = torch.Generator().manual_seed(1)
    a = torch.randn(b, m, k, generator=g, dtype=torch.float64)
    c = torch.randn(b, k, n, generator=g, dtype=torch.float64)
    ref = a @ c
    scale = a.abs() @ c.abs()
    got = triton_gemm.bmm(a.float().to(DEV), c.float().to(DEV)).double().cpu()
    assert float(((got - ref).abs() / scale).max()) <= _bound(k)
    if not INTERPRET:  # the interpreter does not round to TF32
        # one TF32 product alone is far off: the bound is not vacuous
        one = triton_gemm.bmm(a.float().to(DEV), c.float().to(DEV), precision="tf32")
        assert float(((one.double().cpu() - ref).abs() / scale).max()) > _bound(k)


@needs_kernel
def test_bmm_strided_shared_and_many_batches():
    g = torch.Generator().manual_seed(2)
    mat = torch.randn(6, 9, generator=g)
    t = torch.randn(9, 5, 4, generator=g).permute(1, 0, 2)  # (5, 9, 4), not contiguous
    got = triton_gemm.bmm(mat[None].to(DEV), t.to(DEV)).cpu()
    ref = (mat.double() @ t.double()).float()
    assert torch.allclose(got, ref, rtol=1e-5, atol=1e-5)
    # transposed operand read in place
    got_t = triton_gemm.bmm(t[:1].to(DEV).transpose(1, 2), mat.t()[None].to(DEV)).cpu()
    assert torch.allclose(got_t, (t[:1].transpose(1, 2).double() @ mat.t().double()).float(),
                          rtol=1e-5, atol=1e-5)
    if not INTERPRET:  # more batch entries than one grid axis holds
        many = torch.randn(70000, 2, 3, generator=g)
        got = triton_gemm.bmm(many.to(DEV), torch.ones(1, 3, 2).to(DEV)).cpu()
        assert torch.allclose(got, many.sum(-1, keepdim=True).expand(-1, -1, 2), atol=1e-5)


def test_bmm_rejects_bad_operands():
    a = torch.zeros(1, 2, 3)
    with pytest.raises(TypeError, match="float32"):
        triton_gemm.bmm(a.double(), a.transpose(1, 2).double())
    with pytest.raises(ValueError, match="B, M, K"):
        triton_gemm.bmm(a, a)
    with pytest.raises(ValueError, match="precision"):
        triton_gemm.bmm(a, a.transpose(1, 2), precision="fast")


def test_matmul_precision_rejects_unknown_values_and_restores():
    with pytest.raises(ValueError, match="precision"):
        with engine.matmul_precision("bf16"):
            pass
    with engine.matmul_precision("tf32x3"):
        assert engine._PRECISION.get() == "tf32x3"
    assert engine._PRECISION.get() == "float32"


@pytest.mark.parametrize("precision", ["tf32x3", "fp16x3"])
@pytest.mark.parametrize("opts", [{}, {"parity": True, "block": 4}, {"block": 4}])
def test_box_moments_on_tensor_cores_agree_with_float64(opts, precision):
    shape = (12, 10, 14) if INTERPRET else (40, 36, 44)
    order = 8 if INTERPRET else 30
    x = torch.rand(shape, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    ref = JacobiTransform(shape, order, alpha=0.3, beta=0.3, dtype=torch.float64)
    plan = JacobiTransform(shape, order, alpha=0.3, beta=0.3, device=DEV, precision=precision,
                           **opts)
    j64 = ref.forward(x).data
    j = plan.forward(x.float().to(DEV)).data
    r = plan.inverse(j)
    r64 = ref.inverse(j64)
    rel_j = float(torch.linalg.vector_norm(j.double().cpu() - j64) / torch.linalg.vector_norm(j64))
    rel_r = float(torch.linalg.vector_norm(r.double().cpu() - r64) / torch.linalg.vector_norm(r64))
    assert rel_j < 1e-6 and rel_r < 1e-6


@needs_kernel
@pytest.mark.parametrize("precision", ["tf32x3", "fp16x3"])
@pytest.mark.parametrize(("shape", "opts"), [((3, 12, 10), {}), ((2, 6, 8, 7), {"block": 2}),
                                             ((2, 6, 8, 8), {"parity": True})])
def test_a_batch_on_tensor_cores_is_one_batched_product_per_axis(shape, opts, precision):
    """Several images or volumes: every axis is one batched product sharing the table
    (engine._product); each item agrees with float64 as a single one does."""
    order = 5
    x = torch.rand(shape, generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    ref = JacobiTransform(shape[1:], order, alpha=0.3, beta=0.3, dtype=torch.float64)
    plan = JacobiTransform(shape[1:], order, alpha=0.3, beta=0.3, device=DEV,
                           precision=precision, **opts)
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


def test_plan_precision_is_checked():
    with pytest.raises(ValueError, match="precision"):
        JacobiTransform((8, 8), 3, precision="bf16")
    assert JacobiTransform((8, 8), 3).precision == "float32"
