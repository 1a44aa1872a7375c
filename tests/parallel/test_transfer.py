"""Sub-batches of the pipelined host-to-GPU transfer (parallel.runner.sub_batches) and the
choice of a pipelined upload for one device (parallel.plans._pipelined_upload)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from fastmoments.parallel.plans import _pipelined_upload, leading_axis
from fastmoments.parallel.runner import SUB_BATCH_BYTES, sub_batches


@pytest.mark.parametrize("n", [1, 2, 5, 16, 17, 100, 1000])
@pytest.mark.parametrize("per", [1, 3, 16, 64])
def test_sub_batches_cover_every_item_once_in_order(n, per):
    spans = sub_batches(n, per)
    assert spans[0][0] == 0 and spans[-1][1] == n
    for (a, b), (c, _) in itertools.pairwise(spans):
        assert b == c and b > a
    assert max(b - a for a, b in spans) <= per


def test_sub_batches_ramp_up_then_full():
    spans = sub_batches(1000, 64, ramp=4)
    sizes = [b - a for a, b in spans]
    assert sizes[:4] == [4, 8, 16, 32]  # the head is 16 times shorter than a full sub-batch
    assert set(sizes[4:-1]) == {64}


def test_pipelined_upload_only_for_large_host_batches_bound_for_cuda():
    pick = leading_axis(2)
    items = 2 * SUB_BATCH_BYTES // (4 * 64 * 64) + 1
    big = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (items, 64, 64), (0, 0, 0))
    cuda = torch.device("cuda", 0)
    assert _pipelined_upload({"images": big}, "images", cuda, pick)
    assert not _pipelined_upload({"images": big}, "images", torch.device("cpu"), pick)
    assert not _pipelined_upload({"images": big[:4]}, "images", cuda, pick)  # small
    assert not _pipelined_upload({"images": big[0]}, "images", cuda, pick)  # no batch axis
    assert not _pipelined_upload({"images": [[1.0]]}, "images", cuda, pick)  # not an array
