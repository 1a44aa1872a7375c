"""The direct Gaussian FIR on a GPU as Triton kernels (signal/triton_fir.py) against the CPU's
numba passes: every boundary mode, order and dtype, along every axis of 1-D to 3-D inputs,
with ``cval`` and ``out=``. Both form the same sums in the same dtype, so they agree to a
few rounding errors (the GPU may contract multiply-adds)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import fastmoments as fm

from ..scripts import run_script

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
MODES = ["reflect", "nearest", "mirror", "wrap", "constant"]


def _close(got: torch.Tensor, want: np.ndarray) -> None:
    eps = np.finfo(want.dtype).eps
    scale = np.abs(want).max() + 1.0
    np.testing.assert_allclose(got.cpu().numpy(), want, rtol=0, atol=64 * eps * scale)


@cuda
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matches_numba_1d_and_2d(rng, mode, order, dtype):
    for shape, sigma in (((1000,), 2.0), ((37, 129), 1.0), ((5, 3), 0.7)):
        x = rng.standard_normal(shape).astype(dtype)
        want = fm.gaussian_filter(x, sigma, order=order, mode=mode, cval=0.7,
                                  method="direct")
        got = fm.gaussian_filter(torch.as_tensor(x, device="cuda"), sigma, order=order,
                                 mode=mode, cval=0.7, method="direct")
        _close(got, want)


@cuda
@pytest.mark.parametrize("axes", [None, (0,), (1,), (2,), (0, 2)])
def test_matches_numba_3d_axes_and_out(rng, axes):
    x = rng.standard_normal((9, 17, 33))
    want = fm.gaussian_filter(x, 1.5, axes=axes, method="direct")
    t = torch.as_tensor(x, device="cuda")
    out = torch.empty_like(t)
    got = fm.gaussian_filter(t, 1.5, axes=axes, method="direct", out=out)
    assert got is out
    _close(out, want)


@cuda
def test_short_axis_and_wide_kernel(rng):
    """A kernel longer than the axis (every index folded through the mode)."""
    x = rng.standard_normal((4, 6))
    for mode in MODES:
        want = fm.gaussian_filter1d(x, 2.0, mode=mode, method="direct")
        got = fm.gaussian_filter1d(torch.as_tensor(x, device="cuda"), 2.0, mode=mode,
                                   method="direct")
        _close(got, want)


@cuda
def test_nan_still_refused(rng):
    x = torch.as_tensor(rng.standard_normal((64, 64)), device="cuda")
    x[3, 3] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        fm.gaussian_filter(x, 1.0, method="direct")


@cuda
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_long_axes_take_the_interior_tiles(rng, dtype):
    """Axes several tiles long: the tiles away from both ends skip the boundary modes (their
    own branch of each kernel); the result still equals the CPU's along every axis."""
    for shape in ((3, 5000), (4100, 3), (2, 1500, 7)):
        x = rng.standard_normal(shape).astype(dtype)
        for order, sigma in ((0, 2.0), (1, 2.0), (2, 5.0)):  # W = 8 and 20 (up to 21 run here)
            want = fm.gaussian_filter(x, sigma, order=order, mode="wrap", method="direct")
            got = fm.gaussian_filter(torch.as_tensor(x, device="cuda"), sigma, order=order,
                                     mode="wrap", method="direct")
            _close(got, want)


FLAG_SCRIPT = r"""
import numpy as np, torch
from fastmoments.signal.triton_fir import fir_axis
from fastmoments.signal.gaussian_kernels import _half_kernel

dev = "cuda" if torch.cuda.is_available() and DEV == "cuda" else "cpu"
hh, odd = _half_kernel(1.5, 0, 4.0, "f")
rng = np.random.default_rng(0)
for shape, axis in (((300,), 0), ((2, 150), 1), ((40, 7), 0)):
    x = torch.as_tensor(rng.standard_normal(shape), dtype=torch.float32, device=dev)
    plain = fir_axis(x, axis, hh, odd, 0, 0.0)
    flag = torch.ones((), dtype=torch.uint8, device=dev)
    y = fir_axis(x, axis, hh, odd, 0, 0.0, flag=flag)
    assert torch.equal(y, plain) and int(flag) == 1, shape  # finite: kept, same result
    flat = x.reshape(-1)
    for at in (0, flat.numel() // 2, flat.numel() - 1):
        for v in (float("nan"), float("inf"), -float("inf")):
            bad = x.clone()
            bad.view(-1)[at] = v
            flag.fill_(1)
            fir_axis(bad, axis, hh, odd, 0, 0.0, flag=flag)
            assert int(flag) == 0, (shape, at, v)
print("ok")
"""


@pytest.mark.parametrize("dev", ["interpret", "cuda"])
def test_fir_flag_is_cleared_by_nan_or_inf_anywhere(dev):
    """The finiteness flag of the FIR kernels (last axis: inside the kernel; other axes: the
    one-pass kernel), as a replayed call hands it over (fastmoments._launches)."""
    pytest.importorskip("triton")
    if dev == "cuda" and not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    script = FLAG_SCRIPT.replace("DEV", repr(dev))
    run_script(script, **({"TRITON_INTERPRET": "1"} if dev == "interpret" else {}))
