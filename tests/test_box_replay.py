"""Box jobs replayed as recorded launches (fastmoments.box.replay).

On the CPU: how a recording becomes a program (which addresses map to the input, to the
job's allocations or to kept tables; when allocations are made and let go; the host-side
TMA descriptors rebuilt on new addresses), what it refuses, and the key's scales. With a
GPU: replays give the bits of the eager job, forward and back, with and without parity.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

pytest.importorskip("triton")

from fastmoments._array import _largest_kept, largest_magnitude_value
from fastmoments._launches import Recording
from fastmoments.box import JacobiTransform, engine, replay, triton_gemm
from fastmoments.box import api as box_api

CUDA = torch.cuda.is_available()


class _Run:
    """A compiled launcher that notes its calls (the attributes Triton's has)."""

    global_scratch_size = 0
    profile_scratch_size = 0
    launch_cooperative_grid = False
    launch_pdl = False

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def launch(self, gx, gy, gz, stream, function, coop, pdl, g_scratch, p_scratch, meta,
               hook1, hook2, hook3, *vals):
        self.calls.append(((gx, gy, gz), vals))


class _Kernel:
    def __init__(self) -> None:
        self.run = _Run()
        self.function = 0
        self.packed_metadata = None


class _Desc:
    """Stands in for Triton's host-side TensorDescriptor."""

    def __init__(self, base, shape, strides, block_shape) -> None:
        self.base, self.shape, self.strides = base, shape, strides
        self.block_shape, self.padding = block_shape, "zero"


@pytest.fixture
def descriptors(monkeypatch):
    monkeypatch.setattr(replay, "TensorDescriptor", _Desc)


def _recorded(x, launches, allocations):
    rec = Recording(x, None)
    rec.launches = launches
    rec.allocations = allocations
    rec._hooked = len(launches)
    return rec


def test_addresses_map_to_input_allocations_and_kept_tables(descriptors):
    x = torch.arange(64.0).reshape(8, 8)
    table = torch.ones(16)
    scratch = torch.empty(100, dtype=torch.float16)
    out_buf = torch.empty(40)
    out = out_buf[4:36].view(4, 8)
    k1, k2 = _Kernel(), _Kernel()
    desc = _Desc(scratch[10:], [90], [1], [16])
    rec = _recorded(x, [(k1, (3, 1, 1), [x[2:], scratch, 2.5, table, True]),
                        (k2, (5, 2, 1), [desc, scratch[4:], out, 7])],
                    [scratch, out_buf])
    prog = replay.JobProgram.build(rec, x, out)
    assert prog is not None and rec.refused == [] and prog.launches == 2
    x2 = torch.zeros(8, 8)
    y = prog(x2)
    assert y.shape == out.shape and y.stride() == out.stride()
    assert y.storage_offset() == 4 and y.dtype == out.dtype
    assert y.untyped_storage().nbytes() == out_buf.untyped_storage().nbytes()
    (g1, v1), = k1.run.calls
    (g2, v2), = k2.run.calls
    assert g1 == (3, 1, 1) and g2 == (5, 2, 1)
    assert v1[0] == x2.data_ptr() + 2 * 8 * 4  # the input, at its offset
    assert v1[2:] == (2.5, table.data_ptr(), True)  # scalars as they were, tables kept
    new_scratch = v1[1]
    assert new_scratch != 0 and new_scratch % 16 == 0
    assert v2[1] == new_scratch + 4 * 2  # the same allocation, at the view's offset
    assert v2[2] == y.data_ptr() and v2[3] == 7  # the result
    d = v2[0]
    assert d.base.data_ptr() == new_scratch + 10 * 2  # a descriptor on the new address
    assert (d.shape, d.strides, d.block_shape, d.padding) == ([90], [1], [16], "zero")
    y2 = prog(x2)
    assert y2.data_ptr() != y.data_ptr()  # every replay returns a new result


def test_allocations_live_from_their_first_to_their_last_launch():
    x = torch.zeros(4)
    a, b, out = torch.empty(8), torch.empty(8), torch.empty(8)
    ks = [_Kernel() for _ in range(3)]
    rec = _recorded(x, [(ks[0], (1, 1, 1), [x, a]), (ks[1], (1, 1, 1), [a, b]),
                        (ks[2], (1, 1, 1), [b, out])], [a, b, out])
    prog = replay.JobProgram.build(rec, x, out)
    news = [step[5] for step in prog._steps]
    dones = [step[6] for step in prog._steps]
    assert news == [(0,), (1,), (2,)]  # a, b, out: made just before their first launch
    assert dones == [(), (0,), (1,)]  # and let go after their last one; out never
    # what the launches see: b's address is taken while a is still held
    prog(torch.ones(4))
    assert ks[1].run.calls[0][1][0] == ks[0].run.calls[0][1][1]


def test_what_a_recording_refuses():
    x = torch.zeros(4)
    out = torch.empty(4)
    k = _Kernel()
    rec = _recorded(x, [(k, (1, 1, 1), [x, out])], [out])
    rec._hooked = 2  # a launch that went around the recording
    assert replay.JobProgram.build(rec, x, out) is None
    assert "1 launches not recorded" in rec.refused
    rec = _recorded(x, [(k, (1, 1, 1), [x, out])], [out])
    assert replay.JobProgram.build(rec, x, x) is None  # the result is the input
    assert any("allocations" in r for r in rec.refused)
    rec = _recorded(x, [], [out])
    assert replay.JobProgram.build(rec, x, out) is None
    assert "no launch" in rec.refused
    rec = _recorded(x, [(k, (1, 1, 1), [x, out])], [out])
    rec.refused.append("copy_.default")  # a torch operation the job made
    assert replay.JobProgram.build(rec, x, out) is None


def test_a_job_may_return_several_results_and_nones():
    x = torch.zeros(4)
    a, b = torch.empty(6), torch.empty(3, dtype=torch.int32)
    k = _Kernel()
    rec = _recorded(x, [(k, (1, 1, 1), [x, a, b])], [a, b])
    prog = replay.JobProgram.build(rec, x, (a[2:].view(2, 2), None, b))
    y, none, z = prog(torch.ones(4))
    assert none is None and y.shape == (2, 2) and y.storage_offset() == 2
    assert z.dtype == torch.int32 and z.shape == (3,)
    assert k.run.calls[0][1][1:] == (y.data_ptr() - 8, z.data_ptr())


def test_replayed_retries_then_runs_eagerly(monkeypatch):
    calls = []

    def job():
        calls.append(1)
        return torch.empty(3)  # no launch: never a program

    programs: dict = {}
    for _ in range(replay.TRIES + 2):
        replay.replayed(programs, ("k",), torch.zeros(3), job)
    assert programs[("k",)] == (replay.TRIES, ("no launch",))
    assert len(calls) == replay.TRIES + 2


def test_the_programs_of_a_plan_are_bounded():
    programs = {("old", i): replay.Refused(1, ()) for i in range(replay.MAX_PROGRAMS)}
    replay.replayed(programs, ("new",), torch.zeros(3), lambda: torch.zeros(3))
    assert len(programs) == replay.MAX_PROGRAMS and ("old", 0) not in programs


@pytest.mark.parametrize("top", [0.0, 1.0, 3.0, 2.0**-40, 1e30, math.nextafter(4.0, 0.0),
                                 math.nextafter(2.0**20, 0.0), 6.5e4])
def test_the_key_holds_every_scale_the_engine_derives(top):
    base, parity2, parity3 = replay.scale_key(top)
    assert base == triton_gemm.scale_exponent(top)
    assert parity2 == triton_gemm.scale_exponent(top * 2.0**2)
    assert parity3 == triton_gemm.scale_exponent(top * 2.0**3)


def test_no_replay_off_a_gpu_or_without_halves():
    assert not replay.enabled(torch.zeros(3))
    plan = JacobiTransform((6, 6, 6), 3, precision="float32")
    assert not plan._replayable(torch.zeros(1, 6, 6, 6))


def test_partial_maxima_kept_with_a_tensor_are_read_once():
    from fastmoments._array import keep_largest, largest_magnitude

    t = torch.tensor([3.0, -9.0, 1.0])
    keep_largest(t, torch.tensor([2.0, 9.0, 0.5]))  # e.g. a kernel's partial maxima
    assert float(largest_magnitude(t)) == 9.0
    assert largest_magnitude_value(t) == 9.0
    assert len(_largest_kept(t)) == 3  # now with its value: no second host read


def test_the_largest_magnitude_can_be_kept_for_the_job():
    t = torch.tensor([[1.0, -7.5], [2.0, 3.0]])
    flat = t.reshape(4)
    assert largest_magnitude_value(flat) == 7.5 and _largest_kept(flat) is None
    assert largest_magnitude_value(flat, keep=True) == 7.5
    assert _largest_kept(flat[0:4]) is not None  # a whole view of the same storage
    t.add_(1.0)  # a change in place drops it
    assert _largest_kept(flat) is None


# ----------------------------------------------------------------------------------- GPU
@pytest.fixture
def small_halves(monkeypatch):
    """Small jobs on the halves path (the replayed one), which takes 2^26 samples and more."""
    monkeypatch.setattr(engine, "HALVES_MIN", 1 << 12)
    monkeypatch.setattr(box_api, "HALVES_MIN", 1 << 12)


def _eager(monkeypatch, fn):
    monkeypatch.setenv("FASTMOMENTS_BOX_REPLAY", "0")
    try:
        return fn()
    finally:
        monkeypatch.delenv("FASTMOMENTS_BOX_REPLAY")


@pytest.mark.skipif(not CUDA, reason="replays need a GPU")
@pytest.mark.parametrize("parity", [False, True])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_replays_give_the_bits_of_the_eager_job(small_halves, monkeypatch, parity, batch):
    shape = (64, 48, 40)
    plan = JacobiTransform(shape, 30, alpha=0.3, beta=0.3, k=3, device="cuda",
                           precision="fp16x3", parity=parity)
    gen = torch.Generator(device="cuda").manual_seed(3)
    x = torch.rand((*batch, *shape), device="cuda", generator=gen)
    want = _eager(monkeypatch, lambda: plan.forward(x).data)
    back = _eager(monkeypatch, lambda: plan.inverse(want))
    assert not plan._replays  # FASTMOMENTS_BOX_REPLAY=0: nothing recorded
    keep = x.clone()
    got = [plan.forward(x).data for _ in range(5)]
    assert any(isinstance(p, replay.JobProgram) for p in plan._replays.values())
    for g in got:
        assert torch.equal(g, want)
    assert torch.equal(x, keep)  # the input is not modified
    assert len({g.data_ptr() for g in got}) == len(got)  # fresh results
    rec = [plan.inverse(got[-1]) for _ in range(5)]
    for r in rec:
        assert torch.equal(r, back)
    kinds = {k[0] for k, p in plan._replays.items() if isinstance(p, replay.JobProgram)}
    assert kinds == {"forward", "inverse"}, plan._replays
    got[0].fill_(1.0)  # a result is the caller's: the next replay writes elsewhere
    assert torch.equal(plan.forward(x).data, want)


@pytest.mark.skipif(not CUDA, reason="replays need a GPU")
def test_another_magnitude_is_another_program_and_bad_input_still_raises(small_halves,
                                                                         monkeypatch):
    shape = (48, 48, 48)
    plan = JacobiTransform(shape, 20, device="cuda", precision="fp16x3", parity=True)
    x = torch.rand(shape, device="cuda", generator=torch.Generator("cuda").manual_seed(1))
    for scale in (1.0, 1.0, 1.0, 1e3, 1e3, 1e3, 2.0**-30, 2.0**-30, 2.0**-30):
        y = x * scale
        want = _eager(monkeypatch, lambda y=y: plan.forward(y).data)
        assert torch.equal(plan.forward(y).data, want)
    progs = [k for k, p in plan._replays.items() if isinstance(p, replay.JobProgram)]
    assert len({k[-1] for k in progs}) == 3  # one program per set of scales
    where = plan._replay_where("forward", x[None])
    assert plan._guesses[where] == (progs[-1][-1], True)  # the next call runs on a guess
    bad = x.clone()
    bad[3, 4, 5] = math.nan
    with pytest.raises(ValueError, match="x"):
        plan.forward(bad)
    bad[3, 4, 5] = math.inf
    with pytest.raises(ValueError, match="x"):
        plan.forward(bad)
    with pytest.raises(ValueError, match="coeffs"):
        plan.inverse(torch.full(plan.coef_shape, math.nan, device="cuda"))


@pytest.mark.skipif(not CUDA, reason="replays need a GPU")
def test_numpy_in_numpy_out_through_a_replay(small_halves):
    shape = (40, 40, 40)
    plan = JacobiTransform(shape, 16, device="cuda", precision="fp16x3", parity=True)
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    first = plan.forward(x).numpy()
    for _ in range(4):
        j = plan.forward(x)
        assert isinstance(plan.inverse(j), np.ndarray)
    np.testing.assert_array_equal(j.numpy(), first)



@pytest.mark.skipif(not CUDA, reason="replays need a GPU")
def test_moments_changed_where_torch_does_not_see_it_are_read_again(small_halves, monkeypatch):
    """The reconstruction takes the scale of its halves from the largest magnitude its
    forward found on the way, and checks it by the one its split finds: moments scaled up
    behind torch's back (an alias with its own version counter, as CuPy or DLPack writes
    are) are read again, and give the eager job's reconstruction of what they hold now."""
    shape = (40, 40, 40)
    plan = JacobiTransform(shape, 20, device="cuda", precision="fp16x3", parity=True)
    x = torch.rand(shape, device="cuda", generator=torch.Generator("cuda").manual_seed(2))
    for _ in range(4):
        moments = plan.forward(x)
        plan.inverse(moments)
    moments.data.data.mul_(2.0**20)  # no version change: the kept value is stale
    got = plan.inverse(moments)
    want = _eager(monkeypatch, lambda: plan.inverse(moments.data.clone()))
    assert torch.equal(got, want) and bool(torch.isfinite(got).all())


@pytest.mark.skipif(not CUDA, reason="replays need a GPU")
@pytest.mark.parametrize("build", ["inference", "ordinary"])
def test_replays_recorded_in_one_inference_mode_run_in_the_other(small_halves, monkeypatch,
                                                                  build):
    """Jobs recorded under torch.inference_mode replay outside it, and the other way round,
    with the eager job's bits (inference tensors have no version counter: nothing is kept
    for them, and no kept value is trusted)."""
    shape = (48, 40, 32)
    plan = JacobiTransform(shape, 20, device="cuda", precision="fp16x3", parity=True)
    gen = torch.Generator(device="cuda").manual_seed(5)
    x = torch.rand(shape, device="cuda", generator=gen)
    want = _eager(monkeypatch, lambda: plan.forward(x).data)
    back = _eager(monkeypatch, lambda: plan.inverse(want))
    first, then = ((torch.inference_mode, torch.no_grad) if build == "inference"
                   else (torch.no_grad, torch.inference_mode))
    with first():
        xi = x.clone()
        for _ in range(3):
            assert torch.equal(plan.forward(xi).data, want)
            assert torch.equal(plan.inverse(want.clone()), back)
    with then():
        for _ in range(3):
            assert torch.equal(plan.forward(xi).data, want)
            assert torch.equal(plan.forward(x).data, want)
            assert torch.equal(plan.inverse(want.clone()), back)
