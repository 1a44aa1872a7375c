"""float16 split products of the box engine (box.triton_gemm.bmm_fp16x3, precision="fp16x3").

The kernel runs on CUDA (or the CPU under TRITON_INTERPRET=1); without it, the split of the
plan tables, the precision switch and its fallback to the torch products are tested."""

from __future__ import annotations

import math

import pytest
import torch

from fastmoments.box import JacobiTransform, engine, triton_gemm

DEV = torch.device("cuda" if torch.cuda.is_available() else "cpu")
KERNEL = triton_gemm.available(DEV)
needs_kernel = pytest.mark.skipif(not KERNEL, reason="needs CUDA or TRITON_INTERPRET=1 with Triton")


def _bound(k: int) -> float:
    # float32 sums of the k products (each block of the tensor cores' sums is promoted to
    # float32), plus the split's dropped terms, 3 * 2^-23, relative to sum |a||b|
    return (k + 6) * 2.0**-23


def test_split_constant_halves_rebuild_the_matrix():
    g = torch.Generator().manual_seed(0)
    for scale in (1e-30, 1e-3, 1.0, 7e4, 1e30):
        m = torch.randn(17, 23, generator=g) * scale
        s = triton_gemm.split_constant(m)
        assert s.hi.dtype == s.lo.dtype == torch.float16
        assert math.log2(s.inv_scale).is_integer()  # a power of two: exact scaling
        back = (s.hi.double() + s.lo.double()) * s.inv_scale
        top = float(m.abs().max())
        # 11 + 11 bits kept, the second rounding half a unit: 2^-23 of the top entry
        assert float((back - m.double()).abs().max()) <= 2.0**-23 * top
        assert float(s.hi.float().abs().max()) < 2.0**15


def test_split_constant_zero_and_nonfinite():
    s = triton_gemm.split_constant(torch.zeros(3, 4))
    assert float(s.hi.float().abs().max()) == 0.0 and s.inv_scale == 1.0
    with pytest.raises(ValueError, match="finite"):
        triton_gemm.split_constant(torch.tensor([[1.0, float("nan")]]))


def test_table_splits_are_kept_with_the_op_by_rows():
    base = torch.randn(6, 5)
    op = engine.AxisOp.build(base, False)
    a = op.split_rows(0, 4)
    assert op.split_rows(0, 4) is a  # the same rows: the kept halves
    assert a.hi.shape == (1, 4, 5) and a.hi.stride(1) % 16 == 0
    assert torch.allclose((a.hi[0].float() + a.lo[0].float()) * a.inv_scale, base[:4],
                          atol=1e-6)
    b = op.split_rows(2, 6)  # other rows: split with their own scale
    assert b is not a
    assert torch.allclose((b.hi[0].float() + b.lo[0].float()) * b.inv_scale, base[2:],
                          atol=1e-6)
    assert op.exponents is op.exponents  # computed once
    plan = JacobiTransform((6, 5), 4)
    copy = plan.analysis_matrices()[0]
    copy.zero_()  # a copy: the plan's table (and what it keeps from it) does not change
    assert bool(plan.analysis_matrices()[0].abs().sum() > 0)


@needs_kernel
@pytest.mark.parametrize("shape,first", [((1, 5, 7, 3), True), ((3, 33, 70, 17), False),
                                         ((2, 40, 40, 70), True), ((2, 20, 36, 50), False)])
def test_bmm_fp16x3_within_the_float32_bound(shape, first):
    b, m, k, n = shape
    g = torch.Generator().manual_seed(1)
    a = torch.randn(b, m, k, generator=g, dtype=torch.float64) * 1e3
    c = torch.randn(b, k, n, generator=g, dtype=torch.float64) * 1e-2
    a32, c32 = a.float(), c.float()
    ref = a32.double() @ c32.double()
    scale = a32.double().abs() @ c32.double().abs()
    if first:
        got = triton_gemm.bmm_fp16x3(a32.to(DEV), triton_gemm.split_constant(c32.to(DEV)),
                                     data_first=True)
    else:
        got = triton_gemm.bmm_fp16x3(c32.to(DEV), triton_gemm.split_constant(a32.to(DEV)),
                                     data_first=False)
    assert float(((got.double().cpu() - ref).abs() / scale).max()) <= _bound(k)


@needs_kernel
def test_bmm_fp16x3_rows_of_any_magnitude():
    # each row (column) of a data tile gets its own power of two: tiny, huge and zero rows
    g = torch.Generator().manual_seed(2)
    a = torch.randn(2, 40, 48, generator=g, dtype=torch.float64)
    a[0, :5] = 0.0
    a[1, 3] *= 1e-36
    a[1, 7] *= 1e30
    a[1, 9] *= 1e-44  # float32 subnormals
    c = torch.randn(1, 48, 24, generator=g)
    a32 = a.float()
    got = triton_gemm.bmm_fp16x3(a32.to(DEV), triton_gemm.split_constant(c.to(DEV)),
                                 data_first=True).double().cpu()
    ref = a32.double() @ c.double()
    scale = a32.double().abs() @ c.double().abs()
    err = (got - ref).abs()
    assert bool((err <= _bound(48) * scale + 1e-45).all())
    assert bool((got[0, :5] == 0).all())


def test_fp16x3_falls_back_to_torch_without_the_kernel_or_with_gradients():
    shape = (8, 9, 7)
    x = torch.rand(shape, generator=torch.Generator().manual_seed(4))
    plan = JacobiTransform(shape, 5, alpha=0.3, beta=0.3, precision="fp16x3")
    ref = JacobiTransform(shape, 5, alpha=0.3, beta=0.3, dtype=torch.float64)
    j = plan.forward(x).data
    assert float((j.double() - ref.forward(x.double()).data).abs().max()) < 1e-5
    xg = x.clone().requires_grad_(True)
    plan.forward(xg).data.sum().backward()  # the autograd path is torch's matmul
    assert xg.grad is not None and bool(torch.isfinite(xg.grad).all())
    with engine.matmul_precision("fp16x3"):
        assert engine._PRECISION.get() == "fp16x3"
    assert engine._PRECISION.get() == "float32"


@needs_kernel
def test_bmm_fp16x3_data_of_mixed_magnitudes_along_the_sum():
    # within one column of the data the entries span 30 orders of magnitude: the float32
    # bound holds, up to an absolute term of the split below 2^-38 of the column's largest
    g = torch.Generator().manual_seed(6)
    c = torch.randn(1, 20, 64, generator=g)
    d = torch.randn(3, 64, 50, generator=g, dtype=torch.float64)
    d[:, ::2] *= torch.logspace(-15, 15, 32, dtype=torch.float64)[:, None]
    d32 = d.float()
    got = triton_gemm.bmm_fp16x3(d32.to(DEV), triton_gemm.split_constant(c.to(DEV)),
                                 data_first=False).double().cpu()
    ref = c.double() @ d32.double()
    scale = c.double().abs() @ d32.double().abs()
    tail = c.double().abs().sum(2, keepdim=True) * d32.double().abs().amax(1, keepdim=True)
    assert bool(((got - ref).abs() <= _bound(64) * scale + 2.0**-38 * tail).all())
