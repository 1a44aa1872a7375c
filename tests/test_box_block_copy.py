"""The box engine's zero fills and block copies as Triton kernels (fastmoments.box.block_copy):
compiled on CUDA, interpreted on the CPU (``test_box_interpreter.py`` runs this file with
``TRITON_INTERPRET=1``)."""

from __future__ import annotations

import os

import pytest
import torch

pytest.importorskip("triton")

from fastmoments.box import block_copy

DEV = torch.device("cuda" if torch.cuda.is_available() else "cpu")
pytestmark = pytest.mark.skipif(
    DEV.type == "cpu" and os.environ.get("TRITON_INTERPRET") != "1",
    reason="the kernels run on CUDA or in the interpreter (test_box_interpreter.py)")


@pytest.mark.parametrize("ndim", [2, 3, 4])
@pytest.mark.parametrize("masked", [False, True])
def test_a_block_is_copied_into_its_place_with_zeros_under_the_mask(ndim, masked):
    gen = torch.Generator().manual_seed(ndim)
    big = torch.randn((2, 7, 9, 11)[4 - ndim:], generator=gen).to(DEV)
    keep = big.clone()
    where = (slice(None), slice(1, 6), slice(2, 7), slice(3, 10))[4 - ndim:]
    dst = big[where]  # a strided view
    src = torch.randn(dst.shape, generator=gen).to(DEV)
    zero = (torch.rand(dst.shape[1:], generator=gen) < 0.3).to(DEV) if masked else None
    block_copy.copy_block(dst, src, zero)
    want = keep.clone()
    want[where] = src if zero is None else src.masked_fill(zero, 0.0)
    assert torch.equal(big, want)  # the block written, nothing else touched
    if masked:  # a mask that is itself a strided view
        wide = (torch.rand((9, 9, 13)[4 - ndim:], generator=gen) < 0.5).to(DEV)
        z2 = wide[(slice(1, 6), slice(2, 7), slice(0, 7))[4 - ndim:]]
        block_copy.copy_block(dst, src, z2)
        assert torch.equal(dst, src.masked_fill(z2, 0.0))


def test_zeros_and_bad_blocks():
    for dtype in (torch.float16, torch.float32):
        z = block_copy.zeros((3, 1500), dtype, DEV)
        assert z.shape == (3, 1500) and z.dtype == dtype and z.is_contiguous()
        assert bool(z.eq(0).all())
    assert block_copy.zeros((0, 4), torch.float32, DEV).numel() == 0
    dst = torch.zeros(4, 5, device=DEV)
    with pytest.raises(ValueError, match="copy_block"):
        block_copy.copy_block(dst, torch.zeros(4, 4, device=DEV), None)
    with pytest.raises(ValueError, match="mask"):
        block_copy.copy_block(dst, torch.zeros(4, 5, device=DEV),
                              torch.zeros(4, 5, dtype=torch.bool, device=DEV))
