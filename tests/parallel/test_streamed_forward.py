"""A single-device plan's forward streams a large host batch to its GPU in sub-batches
(parallel.plans._stream_host_batches): when it does, and that the gathered moments are the
whole batch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fastmoments import (
    JacobiTransform,
    PolarHarmonicTransform,
    Zernike3DTransform,
    ZernikeTransform,
)
from fastmoments.parallel import plans, runner
from fastmoments.parallel.runner import SUB_BATCH_BYTES

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


def _plans(device):
    return [(ZernikeTransform(16, 6, device=device), (7, 16, 16)),
            (JacobiTransform((6, 5, 4), 4, alpha=0.3, beta=0.3, device=device), (7, 6, 5, 4)),
            (Zernike3DTransform((8, 8, 8), 4, device=device), (7, 8, 8, 8)),
            (PolarHarmonicTransform("pcet", 16, nmax=3, lmax=3, device=device), (7, 16, 16))]


class _Plan:
    """Stands for a plan on a GPU in the decision (no GPU needed to build it)."""

    device = torch.device("cuda", 0)


def test_every_plan_family_streams():
    """The plans whose classes define forward, subclasses included, take the stream."""
    for cls in (ZernikeTransform, JacobiTransform, Zernike3DTransform, PolarHarmonicTransform):
        assert cls.forward.__code__.co_filename == plans.__file__


def test_streams_only_large_host_batches_on_a_gpu_without_options():
    items = 2 * SUB_BATCH_BYTES // (4 * 64 * 64) + 1
    big = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (items, 64, 64), (0, 0, 0))
    gpu = _Plan()
    assert plans._streams(gpu, big, {})
    assert plans._streams(gpu, big, {"progress": False})
    assert plans._streams(gpu, big, {"progress": True})  # one bar over the whole batch
    assert not plans._streams(gpu, big, {"channel_axis": -1})
    assert not plans._streams(gpu, big[:4], {})  # small
    assert not plans._streams(gpu, [[1.0]], {})  # not an array
    cpu = _Plan()
    cpu.device = torch.device("cpu")
    assert not plans._streams(cpu, big, {})
    t = torch.zeros(4, 8, 8, requires_grad=True)
    assert not plans._streams(gpu, t, {})  # autograd keeps the whole-batch call


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_gathered_parts_are_the_whole_batch(index, monkeypatch):
    """The gather of sub-batches (cut here by a stand-in for the GPU's staging) gives the
    whole batch's moments, in order, as one object of the plan, NumPy in and out."""

    def pieces(x, dev, slot, fn, item_bytes, host_out=False):
        return [fn(torch.as_tensor(x[a:a + 3])) for a in range(0, x.shape[0], 3)]

    monkeypatch.setattr(plans, "transfer_batches", pieces)
    plan, shape = _plans("cpu")[index]
    x = np.random.default_rng(index).random(shape).astype(np.float32)
    x2 = x.reshape(1, *shape)
    whole = plan.forward(x2)
    base = type(plan).forward
    got = plans._streamed_forward(plan, lambda p, t, **o: base(p, t, **o), x2,
                                  len(shape) - 1, {}, False)
    assert got.plan is plan
    assert got.data.shape == whole.data.shape
    scale = float(np.abs(whole.data.numpy()).max())
    np.testing.assert_allclose(got.data.numpy(), whole.data.numpy(), rtol=0,
                               atol=1e-5 * scale)  # float32 sums in other batch sizes
    assert got.kind.numpy == whole.kind.numpy


@cuda
@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_streamed_forward_on_a_gpu(index, monkeypatch):
    """With sub-batches made small, a host batch runs in pieces through the pinned staging
    buffers and gives the moments of the same batch sent whole."""
    monkeypatch.setattr(plans, "SUB_BATCH_BYTES", 1 << 12)
    monkeypatch.setattr(runner, "SUB_BATCH_BYTES", 1 << 12)
    plan, shape = _plans("cuda")[index]
    x = np.random.default_rng(index).random((5, *shape)).astype(np.float32)
    got = plan.forward(x)
    whole = plan.forward(torch.from_numpy(x).cuda())
    assert got.plan is plan
    scale = float(whole.data.abs().max())
    torch.testing.assert_close(got.data, whole.data, rtol=0, atol=1e-5 * scale)
    assert got.data.device == whole.data.device


def test_one_progress_bar_over_the_whole_batch(monkeypatch, capsys):
    """progress=True: one bar counting the batch's items, the pieces run without bars."""

    def pieces(x, dev, slot, fn, item_bytes, host_out=False):
        return [fn(torch.as_tensor(x[a:a + 3])) for a in range(0, x.shape[0], 3)]

    monkeypatch.setattr(plans, "transfer_batches", pieces)
    plan = ZernikeTransform(16, 6)
    seen = []
    base = type(plan).forward

    def forward(p, t, **options):
        seen.append(options.get("progress"))
        return base(p, t, **options)

    x = np.random.default_rng(0).random((7, 16, 16)).astype(np.float32)
    plans._streamed_forward(plan, forward, x, 2, {"progress": True}, True)
    err = capsys.readouterr().err
    assert seen == [False, False, False]
    assert "7/7" in err and err.count("ZernikeTransform.forward") >= 1
    assert "3/3" not in err  # no bar of a piece
