"""Work on a tensor runs on the tensor's CUDA device, whichever device is current.

A Triton launch (``kernel[grid]``) goes to the *current* CUDA device and its current stream;
torch's own operations follow their tensors. So every launch site
(``fastmoments._launches.launch``) and the signal plans'
calls (``graphed_call``) ask :func:`fastmoments._triton.other_device` and, when the tensor's
device is not current, run under ``torch.cuda.device(index)``; a CUDA graph is captured and
replayed under the input's device (``fastmoments._cuda_graph.GraphCache.call``).

Three levels of tests:

* on the CPU: the wiring. A stand-in ``other_device`` reports a foreign device once and a
  stand-in guard records that it was entered; the result equals the plain call's.
* on one GPU: the same, with the real guard (switching to the device that is already
  current), through the eager and graph paths of real calls.
* on two GPUs: tensors on ``cuda:1`` with ``cuda:0`` current, against the same calls with
  ``cuda:1`` current (the same kernels on the same GPU model: the same bits).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("triton")

from fastmoments import _launches, _triton

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
two_gpus = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")


class _Spy:
    """Stand-ins for ``other_device`` and ``torch.cuda.device``: outside a guard a tensor is
    reported to be on another device (its own CUDA index, or ``fake`` for a CPU tensor);
    inside one, the real answer is given. ``entered`` counts the guards entered."""

    def __init__(self, fake: int) -> None:
        self.fake, self.depth, self.entered = fake, 0, 0
        self.real_other = _triton.other_device

    def other_device(self, args: tuple) -> int:
        if self.depth:
            return self.real_other(args)
        for a in args:
            if type(a) is torch.Tensor:
                return a.get_device() if a.is_cuda else self.fake
        return -1

    def guard_type(self) -> type:
        """A stand-in for ``torch.cuda.device`` (a subclass, so that torch's own
        ``isinstance`` checks keep working) that counts the guards entered; the fake index
        switches nothing."""
        spy, real = self, torch.cuda.device

        class Guard(real):
            def __init__(self, device) -> None:
                self.fake = device == spy.fake
                if not self.fake:
                    super().__init__(device)

            def __enter__(self):
                spy.depth += 1
                spy.entered += 1
                if not self.fake:
                    super().__enter__()

            def __exit__(self, *exc):
                spy.depth -= 1
                return False if self.fake else super().__exit__(*exc)

        return Guard


@pytest.fixture
def small_halves(monkeypatch):
    """Small volumes on the box engine's halves path (else 2^26 samples and more)."""
    from fastmoments.box import routes

    monkeypatch.setattr(routes, "HALVES_MIN", 1 << 12)


@pytest.fixture
def spy(monkeypatch):
    s = _Spy(fake=7)
    monkeypatch.setattr(_triton, "other_device", s.other_device)  # on_tensor_device's
    monkeypatch.setattr(torch.cuda, "device", s.guard_type())
    return s


def test_other_device_is_minus_one_off_cuda():
    assert _triton.other_device(()) == -1
    assert _triton.other_device((3, 2.0, None)) == -1
    assert _triton.other_device((torch.zeros(3), torch.ones(2))) == -1
    assert _triton.other_device((np.zeros(3),)) == -1


def test_a_launch_enters_the_tensors_device(spy):
    seen = []

    class Kernel:  # kernel[grid](*args, **kwargs), as Triton's JIT functions
        def __getitem__(self, grid):
            return lambda *args, **kwargs: seen.append((grid, args[1], kwargs, spy.depth))

    x = torch.zeros(4)
    _launches.launch(Kernel(), (2, 1), x, 5, BLOCK=16)
    assert spy.entered == 1
    assert seen == [((2, 1), 5, {"BLOCK": 16}, 1)]  # launched once, inside the guard


def test_a_signal_call_enters_the_inputs_device(spy, rng):
    from fastmoments.signal import GaussianFilter, MorletTransform

    x = torch.as_tensor(rng.standard_normal((3, 500)))
    for plan, opts in ((GaussianFilter(4.0, order=1), {"mode": "wrap"}),
                       (MorletTransform(6.0), {"mode": "constant", "cval": 0.5})):
        spy.depth = 1  # the plain call: no guard
        ref = plan(x, **opts)
        spy.depth = 0
        got = plan(x, **opts)
        torch.testing.assert_close(got, ref, rtol=0, atol=0)
    assert spy.entered == 2


# --------------------------------------------------------------------------- one GPU
def _signal_calls(x, n_calls=5):
    """The public signal calls on ``x``, each made ``n_calls`` times (eager, then replayed
    from CUDA graphs), as a list of results."""
    import fastmoments as fm
    from fastmoments.signal import GaussianFilter, MorletTransform

    plans = [GaussianFilter(16.0), GaussianFilter(256.0, order=2), MorletTransform(8.0)]
    out = []
    for _ in range(n_calls):
        out += [p(x) for p in plans]
        out.append(fm.gaussian_filter1d(x, 3.0, order=1))
        out.append(fm.cwt(x, np.geomspace(4, 64, 6))[0])
    return out


def _disk_calls(plan, imgs):
    """A disk plan's forward on each of ``imgs`` (its graphs from the third call), the last
    moments' reconstruction, and the one-call PCET and Zernike functions on the last batch."""
    import fastmoments as fm

    moments = [plan.forward(t) for t in imgs]
    return ([m.data.clone() for m in moments] + [moments[-1].reconstruct()]
            + [fm.pcet(imgs[-1], 12, 12).data, fm.zernike_moments(imgs[-1], 20, k=2).data])


def _same(got, ref, rounded=()):
    """Bit-equal results on the same device, but for the positions ``rounded``: there two
    calls of the same work may round differently (the reconstruction's sums), so float32
    rounding of the largest magnitude is allowed."""
    assert len(got) == len(ref)
    for i, (a, b) in enumerate(zip(got, ref, strict=True)):
        assert a.device == b.device
        if i in rounded:
            torch.testing.assert_close(a, b, rtol=0, atol=4e-6 * float(b.abs().max()))
        else:
            assert torch.equal(a, b), (i, float((a - b).abs().max()))


@cuda
def test_the_guarded_paths_give_the_plain_bits_on_one_gpu(spy, small_halves, rng):
    """The guard's re-entry through every path of real CUDA calls (eager and graphs; signal,
    disk and box), switching to the current device: the plain calls' bits, and the NaN/inf
    error."""
    from fastmoments.box import JacobiTransform
    from fastmoments.disk import DiskTransform

    x = torch.as_tensor(rng.standard_normal((2, 102400)), dtype=torch.float32, device="cuda")
    spy.depth = 1
    ref = _signal_calls(x)
    spy.depth = 0
    got = _signal_calls(x)
    assert spy.entered > 0
    for a, b in zip(got, ref, strict=True):
        assert torch.equal(a, b)
    bad = x.clone()
    bad[1, 7] = float("inf")
    from fastmoments.signal import GaussianFilter

    with pytest.raises(ValueError, match="NaN or infinity"):
        GaussianFilter(16.0)(bad)

    disk = DiskTransform("zernike", 64, 30, k=2, device="cuda")
    imgs = [torch.as_tensor(rng.random((2, 64, 64)), dtype=torch.float32, device="cuda")
            for _ in range(4)]
    spy.depth = 1
    ref = _disk_calls(disk, imgs)
    spy.depth = 0
    got = _disk_calls(disk, imgs)
    _same(got, ref, rounded=(len(imgs),))

    vol = torch.as_tensor(rng.random((64, 64, 64)), dtype=torch.float32, device="cuda")
    plan = JacobiTransform((64, 64, 64), 40, precision="fp16x3", parity=True, device="cuda")
    spy.depth = 1
    ref = [plan.forward(vol).data.clone() for _ in range(3)]
    spy.depth = 0
    got = [plan.forward(vol).data for _ in range(3)]
    assert all(torch.equal(a, ref[0]) for a in ref + got)


# --------------------------------------------------------------------------- two GPUs
@two_gpus
def test_signal_calls_on_a_second_gpu_while_the_first_is_current(rng):
    x1 = torch.as_tensor(rng.standard_normal((2, 102400)), dtype=torch.float32,
                         device="cuda:1")
    with torch.cuda.device(1):
        ref = _signal_calls(x1)
    with torch.cuda.device(0):
        got = _signal_calls(x1)
        assert torch.cuda.current_device() == 0  # the caller's device is given back
    for a, b in zip(got, ref, strict=True):
        assert a.device == x1.device and torch.equal(a, b)
    bad = x1.clone()
    bad[0, 3] = float("nan")
    from fastmoments.signal import GaussianFilter

    plan = GaussianFilter(16.0)
    with torch.cuda.device(0):
        for _ in range(4):
            plan(x1)
        with pytest.raises(ValueError, match="NaN or infinity"):
            plan(bad)


@two_gpus
def test_disk_and_box_plans_on_a_second_gpu_while_the_first_is_current(small_halves, rng):
    from fastmoments.box import JacobiTransform
    from fastmoments.disk import DiskTransform

    imgs = rng.random((4, 2, 64, 64)).astype(np.float32)
    vol = rng.random((64, 64, 64)).astype(np.float32)

    def run():
        disk = DiskTransform("zernike", 64, 30, k=2, device="cuda:1")
        out = _disk_calls(disk, [torch.as_tensor(i, device="cuda:1") for i in imgs])
        box = JacobiTransform((64, 64, 64), 40, precision="fp16x3", parity=True,
                              device="cuda:1")
        v = torch.as_tensor(vol, device="cuda:1")
        b = [box.forward(v) for _ in range(3)]
        return out + [m.data for m in b] + [b[-1].reconstruct()]

    with torch.cuda.device(1):
        ref = run()
    with torch.cuda.device(0):
        got = run()
    _same(got, ref, rounded=(len(imgs), len(ref) - 1))  # the two reconstructions
