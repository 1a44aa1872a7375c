"""The fused Triton radial kernels against the torch path (interpreter on the CPU; compiled
on CUDA when present). Kept tiny: the interpreter is slow."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch

from ..scripts import run_script

pytest.importorskip("triton")

SCRIPT = textwrap.dedent("""
    import numpy as np, torch
    from fastmoments.disk import DiskTransform
    rng = np.random.default_rng(1)
    for fam in ("zernike", "pseudo-zernike"):
        img = rng.random((2, 14, 14))
        ref = DiskTransform(fam, 14, 9, k=2, method="jacobi", dtype=torch.float64)
        ref.engine.fused = ref.engine.fused_angular = False
        fused = DiskTransform(fam, 14, 9, k=2, method="jacobi", dtype=torch.float64)
        assert fused.engine.fused and fused.engine.fused_angular
        A, B = ref.forward(img), fused.forward(img)
        assert np.abs(A.numpy() - B.numpy()).max() < 1e-13
        assert np.abs(A.reconstruct() - B.reconstruct()).max() < 1e-12
        a = A.numpy()
        assert np.abs(ref.adjoint(a) - fused.adjoint(a)).max() < 1e-13
        x = torch.tensor(img[0], requires_grad=True)
        fused.forward(x).data.abs().sum().backward()
        y = torch.tensor(img[0], requires_grad=True)
        ref.forward(y).data.abs().sum().backward()
        assert (x.grad - y.grad).abs().max() < 1e-12
        f32 = DiskTransform(fam, 14, 9, k=2, method="jacobi").forward(img.astype("float32"))
        assert np.abs(f32.numpy() - A.numpy()).max() < 1e-5 * np.abs(A.numpy()).max()
    # order 200: the running exponent is rescaled many times
    img = rng.random((10, 10))
    ref = DiskTransform("zernike", 10, 200, method="deng", dtype=torch.float64)
    ref.engine.fused_angular = False
    got = DiskTransform("zernike", 10, 200, method="jacobi", dtype=torch.float64).forward(img)
    assert np.abs(got.numpy() - ref.forward(img).numpy()).max() < 1e-12
    print("ok")
""")


def test_fused_kernels_match_torch_in_interpreter():
    run_script(SCRIPT, TRITON_INTERPRET="1")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_fused_kernels_on_cuda():
    from fastmoments.disk import DiskTransform

    rng = np.random.default_rng(2)
    img = rng.random((3, 64, 64))
    for fam in ("zernike", "pseudo-zernike"):
        cpu = DiskTransform(fam, 64, 60, k=3, dtype=torch.float64).forward(img).numpy()
        gpu = DiskTransform(fam, 64, 60, k=3, dtype=torch.float64, device="cuda")
        assert gpu.engine.fused
        np.testing.assert_allclose(gpu.forward(img).numpy(), cpu, atol=1e-11)
