"""The fused finiteness flag (one Triton kernel, used inside replayed CUDA graphs) against
``torch.isfinite(x).all()``: in the interpreter on the CPU (small sizes: it is slow) and
compiled on CUDA when present."""

from __future__ import annotations

import textwrap

import pytest
import torch

from .scripts import run_script

pytest.importorskip("triton")

# every dtype, sizes around the block, a bad value at the first, middle and last entry of
# the input and of a block, and the largest finite values (finite: |x| < inf)
SCRIPT = textwrap.dedent("""
    import torch
    from fastmoments._finite_kernel import BLOCK, fused_finite_flag, usable
    g = torch.Generator().manual_seed(0)
    for dt in (torch.float32, torch.float64, torch.complex64, torch.complex128):
        for n in (1, 3, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK + 5):
            x = torch.randn(n, dtype=dt, generator=g)
            assert usable(x) and bool(fused_finite_flag(x)), (dt, n)
            for bad in (float("nan"), float("inf"), -float("inf")):
                for pos in {0, n // 2, n - 1, min(BLOCK, n - 1)}:
                    y = x.clone()
                    y[pos] = bad
                    before = y.clone()
                    flag = fused_finite_flag(y)
                    assert flag.dtype == torch.bool and flag.shape == ()
                    assert not bool(flag), (dt, n, bad, pos)
                    assert torch.equal(before.isnan(), y.isnan())  # the input is untouched
                    assert torch.equal(before.nan_to_num(), y.nan_to_num())
                    if dt.is_complex:
                        y = x.clone()
                        y[pos] = complex(1.0, bad)
                        assert not bool(fused_finite_flag(y)), (dt, n, "imag", pos)
        big = torch.finfo(dt.to_real() if dt.is_complex else dt).max
        assert bool(fused_finite_flag(torch.tensor([big, -big], dtype=dt)))
    x = torch.zeros(4, 5)
    assert not usable(x.t()) and not usable(torch.zeros(0))
    assert not usable(torch.zeros(3, dtype=torch.int32))
    print("ok")
""")


def test_flag_matches_isfinite_in_interpreter():
    assert "ok" in run_script(SCRIPT, TRITON_INTERPRET="1")


def test_not_usable_on_a_cpu_without_the_interpreter(monkeypatch):
    from fastmoments._finite_kernel import usable

    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    assert not usable(torch.zeros(8))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.complex64])
def test_flag_on_cuda(dtype):
    from fastmoments._finite_kernel import fused_finite_flag

    g = torch.Generator(device="cuda").manual_seed(1)
    for n in (1, 777, 102400, 3_000_001):
        x = torch.randn(n, dtype=dtype, device="cuda", generator=g)
        assert bool(fused_finite_flag(x))
        for pos in (0, n // 3, n - 1):
            for bad in (float("nan"), float("inf")):
                y = x.clone()
                y[pos] = bad
                assert not bool(fused_finite_flag(y)), (n, pos, bad)


_DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", _DEVICES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64,
                                   torch.complex64])
def test_finite_flag_of_every_path(device, dtype):
    """fastmoments._array.finite_flag (the eager checks): aminmax on the CPU, the largest
    magnitude on CUDA; NaN, inf and -inf anywhere give False, the largest finite values True."""
    from fastmoments._array import finite_flag

    g = torch.Generator().manual_seed(2)
    x = torch.randn(3, 1001, dtype=dtype, generator=g).to(device)
    assert bool(finite_flag(x))
    real = dtype.to_real() if dtype.is_complex else dtype
    big = torch.finfo(real).max
    assert bool(finite_flag(torch.tensor([big, -big], dtype=dtype, device=device)))
    for bad in (float("nan"), float("inf"), -float("inf")):
        for pos in ((0, 0), (1, 500), (2, 1000)):
            y = x.clone()
            y[pos] = bad
            assert not bool(finite_flag(y)), (bad, pos)
            if dtype.is_complex:
                y = x.clone()
                y[pos] = complex(0.0, bad)
                assert not bool(finite_flag(y)), ("imag", bad, pos)
    assert bool(finite_flag(torch.zeros(0, dtype=dtype, device=device)))
    assert bool(finite_flag(torch.arange(5, device=device)))  # integers are finite
