"""The chunked SFT engine (torch) and its fused Triton kernels (interpreter on the CPU, compiled
on CUDA when present) against the row-by-row engines and the exact bank kernel."""

from __future__ import annotations

import importlib.util
import textwrap

import numpy as np
import pytest
import torch

from fastmoments.signal import CWT, GaussianFilter, MorletTransform
from fastmoments.signal.boundary import MODES, extend
from fastmoments.signal.chunked import chunked_apply, fused_eligible, group_tables
from fastmoments.signal.cwt import _group_bank
from fastmoments.signal.sliding import SFTBank

from ..scripts import run_script


def _random_bank(rng, alpha: bool) -> SFTBank:
    """Three channels, one of them fed by two row groups (different K and n0)."""
    r = 8
    half = np.array([3, 3, 9, 9, 9, 20, 20, 5])
    shift = np.array([0, 0, 2, 2, 2, -4, -4, 1]) if alpha else np.zeros(r, int)
    return SFTBank(
        omega=rng.uniform(-3, 3, r), alpha=rng.uniform(0.01, 0.3, r) if alpha else np.zeros(r),
        half=half, shift=shift,
        mu=rng.standard_normal(r) + 1j * rng.standard_normal(r),
        nu=rng.standard_normal(r) + 1j * rng.standard_normal(r),
        channel=np.array([0, 0, 1, 1, 1, 2, 2, 0]), n_channels=3, complex_output=True)


@pytest.mark.parametrize("toeplitz", [False, True, None])
@pytest.mark.parametrize("alpha", [False, True])
@pytest.mark.parametrize("chunk", [16, 32])
def test_chunked_matches_the_bank_kernel(alpha, chunk, toeplitz, rng, device):
    """y[n] = Σ_j h[j] x̃[n - j] with h = SFTBank.kernel, for every mode and short signals,
    by the SFT, by Toeplitz products, and by the per-group choice."""
    bank = _random_bank(rng, alpha)
    j = np.arange(-bank.pad, bank.pad + 1)
    h = bank.kernel(j)
    for n in (1, 7, 100):
        x = torch.tensor(rng.standard_normal((2, n)), device=device)
        for mode in MODES:
            xp = extend(x, bank.pad, bank.pad, mode, 0.25).cpu().numpy()
            ref = np.zeros((2, 3, n), complex)
            for t, jj in enumerate(j):
                ref += h[None, :, t, None] * xp[:, None, bank.pad - jj: bank.pad - jj + n]
            y = chunked_apply(bank, x, mode, 0.25, chunk=chunk, toeplitz=toeplitz)
            np.testing.assert_allclose(y.cpu().numpy(), ref, rtol=0, atol=1e-12, err_msg=mode)
            if n == 100 and mode == "wrap":  # the differentiable form gives the same
                xg = x.clone().requires_grad_(True)
                yg = chunked_apply(bank, xg, mode, 0.25, chunk=chunk, toeplitz=toeplitz)
                np.testing.assert_allclose(yg.detach().cpu().numpy(), ref, rtol=0, atol=1e-12)


def test_toeplitz_choice_mixes_groups(rng):
    """The cost model sends short windows to Toeplitz products and long ones to the SFT, the
    SFT groups between them form runs of at most ``block`` groups, and the mixed bank gives
    the SFT's result (partial last chunk included)."""
    from fastmoments.signal.chunked import _sft_blocks, _toeplitz_mask

    bank = _group_bank(tuple(CWT([2.0, 400.0, 3.0, 300.0, 200.0]).plans))
    mask = _toeplitz_mask(bank, group_tables(bank, 64), 64, None)
    assert mask.tolist() == [True, False, True, False, False]
    assert _sft_blocks(mask, 8) == [slice(1, 2), slice(3, 5)]
    assert _sft_blocks(mask, 1) == [slice(1, 2), slice(3, 4), slice(4, 5)]
    assert _sft_blocks(np.zeros(3, bool), 2) == [slice(0, 2), slice(2, 3)]
    x = torch.tensor(rng.standard_normal((2, 3000)))
    y = chunked_apply(bank, x, "reflect", chunk=64)
    ref = chunked_apply(bank, x, "reflect", chunk=64, toeplitz=False)
    assert float((y - ref).abs().max() / ref.abs().max()) < 1e-13


def test_chunked_float32_error_bound(rng):
    """float32 against float64: relative RMSE ≤ 1e-5, the stated bound (measured: 1e-7 for
    smoothing, 1.2e-6 for the second derivative at σ = 700, whose output is small)."""
    x = rng.standard_normal((2, 20000)) + 3.0  # an offset stresses long sums
    for plan in (GaussianFilter(40.0), GaussianFilter(700.0, order=2, method="asft"),
                 MorletTransform(90.0, 6.0), GaussianFilter(3.0, order=1),
                 MorletTransform(5.0, 6.0)):  # the last two by Toeplitz products
        y64 = chunked_apply(plan.bank, torch.tensor(x), "reflect")
        y32 = chunked_apply(plan.bank, torch.tensor(x, dtype=torch.float32), "reflect")
        err = float((y32.to(y64.dtype) - y64).abs().norm() / y64.abs().norm())
        assert err < 1e-5, (plan, err)


def test_toeplitz_in_batches_of_scratch(rng, monkeypatch):
    """A scratch budget smaller than one signal's windows processes the signals one by one,
    with the same result (partial last chunk, several channels)."""
    import fastmoments.signal.chunked as chunked

    bank = _group_bank(tuple(CWT([2.0, 3.5]).plans))
    x = torch.tensor(rng.standard_normal((3, 1000)))
    ref = chunked_apply(bank, x, "mirror", chunk=64, toeplitz=False)
    monkeypatch.setattr(chunked, "_SCRATCH_BYTES", 64)
    y = chunked_apply(bank, x, "mirror", chunk=64, toeplitz=True)
    assert float((y - ref).abs().max() / ref.abs().max()) < 1e-13


def test_chunked_is_the_default_and_agrees_with_prefix(rng):
    x = rng.standard_normal(3000)
    plan = MorletTransform(25.0, 6.0)
    np.testing.assert_allclose(plan(x), plan(x, engine="prefix"), atol=1e-13)
    np.testing.assert_allclose(plan(x, engine="chunked"), plan(x, engine="sliding"), atol=1e-13)
    g = GaussianFilter(12.0, order=1, method="asft")
    np.testing.assert_allclose(g(x, engine="chunked"), g(x, engine="recursive"), atol=1e-13)


def test_group_tables_near_field_is_the_kernel(rng):
    """H_A holds the effective kernel: a unit impulse at the start of a chunk reproduces it."""
    plan = GaussianFilter(5.0)
    (g,) = group_tables(plan.bank, 32)
    # y[i] for an impulse at signal index i0 = -off (s = 0 of chunk 0) is h[-(i + off) ...]
    k = plan.kernel(np.arange(-plan.K, plan.K + 1))
    # column i of H_A: lag s - i, kernel index K - (s - i) (rows read x̃[n + off + s])
    np.testing.assert_allclose(g.ha[:, 0], k[::-1][:32], atol=1e-15)


def test_fused_eligibility():
    assert fused_eligible(GaussianFilter(100.0).bank)
    assert fused_eligible(GaussianFilter(100.0, method="asft").bank)
    assert not fused_eligible(GaussianFilter(1.0, method="asft").bank)  # α C = 32
    assert not fused_eligible(_random_bank(np.random.default_rng(0), False))  # two groups


# The kernel variants a test runs (tile chunks, joined reads, 1-D loads), set in the script
PATCHES = """
    import os
    from fastmoments.signal import triton_sft as ts
    if os.environ.get("TILE_CHUNKS"):
        ts._settings = lambda items, device: (int(os.environ["TILE_CHUNKS"]), ts.PRECISION,
                                              ts.WARPS)
    if os.environ.get("JOIN"):
        ts._join = lambda complex_output, bc: os.environ["JOIN"] == "1"
    if os.environ.get("LIN"):
        ts._lin = lambda bc: os.environ["LIN"] == "1"
"""

SCRIPT = textwrap.dedent(PATCHES + """
    import numpy as np, torch
    from fastmoments.signal import CWT, GaussianFilter, MorletTransform
    from fastmoments.signal.chunked import chunked_apply, fused_eligible
    from fastmoments.signal.cwt import _group_bank
    from fastmoments.signal.triton_sft import fused_apply
    dev = os.environ.get("DEV", "cpu")
    rng = np.random.default_rng(3)
    banks = [GaussianFilter(3.0).bank, GaussianFilter(20.0, order=1, method="asft").bank,
             GaussianFilter(300.0, order=2).bank, MorletTransform(9.0, 6.0).bank,
             _group_bank(tuple(CWT([2.0, 7.0, 40.0]).plans))]
    for bank in banks:
        assert fused_eligible(bank)
        j = np.arange(-bank.pad, bank.pad + 1)
        scale = np.abs(bank.kernel(j)).sum(1).max()
        for n, modes in ((5, ("reflect", "constant")), (700, ("reflect", "nearest", "mirror",
                                                              "wrap", "constant"))):
            x = torch.tensor(rng.standard_normal((2, n)), dtype=torch.float32, device=dev)
            for mode in modes:
                y = fused_apply(bank, x, mode, 0.5)
                ref = chunked_apply(bank, x.double(), mode, 0.5)
                err = float((y.to(ref.dtype) - ref).abs().max()) / (scale * float(x.abs().max()))
                assert err < 2e-6, (bank.n_rows, n, mode, err)
    # persistent programs looping over several (signal, tile) items
    import fastmoments.signal.triton_sft as ts
    ts._programs = lambda device: 3
    bank = banks[4]
    x = torch.tensor(rng.standard_normal((3, 1200)), dtype=torch.float32, device=dev)
    y, ref = fused_apply(bank, x, "reflect"), chunked_apply(bank, x.double(), "reflect")
    assert float((y.to(ref.dtype) - ref).abs().max() / ref.abs().max()) < 2e-6
    # written into a caller's strided buffer (channels not adjacent), nothing else touched
    buf = torch.full((3, 2 * bank.n_channels, 1200), 7.0, dtype=y.dtype, device=dev)
    o = buf[:, ::2]
    assert fused_apply(bank, x, "reflect", out=o) is o
    assert torch.equal(o, y) and bool((buf[:, 1::2] == 7.0).all())
    # the NaN/inf flag of the tile-totals kernel: kept for finite input (the result as without
    # it), cleared by NaN or infinity anywhere, first and last samples included
    ts._programs = lambda device: 1024
    def flagged(bank, x, mode):
        f = torch.ones((), dtype=torch.uint8, device=dev)
        return fused_apply(bank, x, mode, 0.5, flag=f), int(f)
    for bank, n, mode in ((banks[0], 5, "constant"), (banks[0], 700, "reflect"),
                          (banks[3], 700, "constant")):
        x = torch.tensor(rng.standard_normal((2, n)), dtype=torch.float32, device=dev)
        y, ok = flagged(bank, x, mode)
        ref = fused_apply(bank, x, mode, 0.5)
        assert ok == 1 and float((y - ref).abs().max()) <= 1e-6 * float(ref.abs().max())
        for pos, bad in ((0, float("nan")), (n - 1, float("inf")), (n // 2, -float("inf"))):
            xb = x.clone()
            xb[1, pos] = bad
            assert flagged(bank, xb, mode)[1] == 0, (n, mode, pos)
    # tiles that would miss samples: one torch pass checks instead
    bank = banks[0]
    x = torch.tensor(rng.standard_normal((2, 300)), dtype=torch.float32, device=dev)
    flagged(bank, x, "reflect")
    tables = [t for t in bank._tables.values() if isinstance(t, ts._FusedTables)]
    for t in tables:
        t.off_min = 10**9
    assert flagged(bank, x, "reflect")[1] == 1
    x[0, 7] = float("nan")
    assert flagged(bank, x, "reflect")[1] == 0
    print("ok")
""")


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs Triton")
@pytest.mark.parametrize(("join", "lin"), [("1", "0"), ("0", "1")])
def test_fused_kernels_in_interpreter(join, lin):
    """The Triton kernels on the CPU interpreter (tiles of 16 chunks) against float64 torch,
    with the two reads interleaved into one operand or multiplied separately, and the tiles
    loaded as 2-D blocks or as 1-D runs."""
    run_script(SCRIPT, TRITON_INTERPRET="1", TILE_CHUNKS="16", JOIN=join, LIN=lin)


SCRIPT_F64 = textwrap.dedent(PATCHES + """
    import numpy as np, torch
    from fastmoments.signal import GaussianFilter, MorletTransform
    from fastmoments.signal.chunked import chunked_apply
    from fastmoments.signal.triton_sft import fused_apply
    dev = os.environ.get("DEV", "cpu")
    rng = np.random.default_rng(4)
    for bank in (GaussianFilter(300.0, order=2).bank, MorletTransform(9.0, 6.0).bank):
        x = torch.tensor(rng.standard_normal((2, 700)), dtype=torch.float64, device=dev)
        for mode, cval in (("reflect", 0.0), ("constant", 0.5)):
            flag = torch.ones((), dtype=torch.uint8, device=dev)
            y = fused_apply(bank, x, mode, cval, flag=flag)
            ref = chunked_apply(bank, x, mode, cval)
            assert y.dtype == ref.dtype and int(flag) == 1
            err = float((y - ref).abs().max() / ref.abs().max())
            assert err < 1e-11, (mode, err)  # float64 tables and products: float64 rounding
        x[0, 3] = float("nan")
        fused_apply(bank, x, "reflect", flag=flag)
        assert int(flag) == 0
    print("ok")
""")


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="needs Triton")
def test_fused_kernels_in_float64_in_interpreter():
    """float64 signals run the same kernels with float64 tables and products (interpreter)."""
    run_script(SCRIPT_F64, TRITON_INTERPRET="1", TILE_CHUNKS="16")


def test_fused_kernels_take_float32_and_float64():
    """float64 goes to the fused kernels unless a constant boundary value is not a float32
    number (Triton hands a Python float to a kernel as float32)."""
    from fastmoments.signal.triton_sft import takes

    assert takes(torch.float32, "constant", 0.1)
    assert takes(torch.float64, "reflect", 0.1) and takes(torch.float64, "constant", 0.5)
    assert not takes(torch.float64, "constant", 0.1)
    assert not takes(torch.float16, "reflect", 0.0)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_float64_public_calls_use_the_fused_kernels_on_cuda(rng, monkeypatch):
    """float64 plans on a GPU run the fused kernels (replayed from a CUDA graph from the
    third call) and agree with the torch engine to float64 rounding; NaN is still refused."""
    pytest.importorskip("triton")
    from fastmoments.signal import triton_sft
    from fastmoments.signal._apply import graph_cache

    run_script(SCRIPT_F64, DEV="cuda")
    x = torch.tensor(rng.standard_normal(102400), dtype=torch.float64, device="cuda")
    for make in (lambda: GaussianFilter(300.0, order=2), lambda: MorletTransform(64.0)):
        with monkeypatch.context() as m:  # the torch engine
            m.setattr(triton_sft, "takes", lambda *a: False)
            ref = make()(x)
        plan = make()
        for _ in range(5):
            y = plan(x)
            assert float((y - ref).abs().max() / ref.abs().max()) < 1e-11
        assert len(graph_cache(plan)) == 1, graph_cache(plan).failures
        bad = x.clone()
        bad[100] = float("inf")
        with pytest.raises(ValueError, match="NaN or infinity"):
            plan(bad)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@pytest.mark.parametrize("tile_chunks", ["32", "64"])
def test_fused_kernels_on_cuda(tile_chunks):
    """Both tile sizes the CUDA default picks from (32 chunks for small jobs, 64 for
    batches)."""
    pytest.importorskip("triton")
    run_script(SCRIPT, DEV="cuda", TILE_CHUNKS=tile_chunks)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_public_calls_use_the_fused_kernels_on_cuda(rng):
    pytest.importorskip("triton")
    x = rng.standard_normal((3, 5000))
    xc = torch.tensor(x, dtype=torch.float32, device="cuda")
    # method="sft" on both devices: with "auto" the CPU side may take the direct FIR, whose
    # kernel differs from the SFT fit by the fit's error (~1e-4 at order 2)
    for plan in (GaussianFilter(30.0, order=2, method="sft"), MorletTransform(30.0, 6.0)):
        y = plan(xc)
        assert y.device.type == "cuda"
        ref = plan(x)
        err = np.linalg.norm(y.cpu().numpy() - ref) / np.linalg.norm(ref)
        assert err < 1e-5
    coef, _ = CWT([3.0, 30.0])(xc), None
    ref = CWT([3.0, 30.0])(x)
    assert np.abs(coef.cpu().numpy() - ref).max() < 1e-5 * np.abs(ref).max()
    assert _group_bank  # the CWT bank is one fused launch (see benchmarks/signal_fused.py)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_public_calls_check_nan_inside_the_fused_kernels_on_cuda(rng, monkeypatch):
    """On a GPU the plans' NaN/inf check runs inside the fused kernels (no separate pass over
    the input): finite input needs no other check, and NaN or infinity anywhere (a split
    batch too) is still an error naming x."""
    pytest.importorskip("triton")
    from fastmoments.signal import _apply, gaussian_filter

    x = torch.tensor(rng.standard_normal((3, 5000)), dtype=torch.float32, device="cuda")
    plans = (GaussianFilter(30.0, order=2, method="sft"), MorletTransform(30.0, 6.0))
    refs = [plan(x) for plan in plans]

    def no_pass(t):
        raise AssertionError("a separate finiteness pass ran")

    monkeypatch.setattr(_apply, "finite_flag", no_pass)
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "0")
    for plan, ref in zip(plans, refs, strict=True):
        assert torch.equal(plan(x), ref)
    gaussian_filter(x, 30.0, axes=-1, method="sft")
    monkeypatch.undo()
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "0")
    for pos in ((0, 0), (2, 4999), (1, 2500)):
        for bad in (float("nan"), float("inf"), -float("inf")):
            xb = x.clone()
            xb[pos] = bad
            for plan in plans:
                with pytest.raises(ValueError, match="x contains NaN"):
                    plan(xb)
                with pytest.raises(ValueError, match="x contains NaN"):
                    plan(xb, memory_budget=400_000)  # one signal per block
            with pytest.raises(ValueError, match="x contains NaN"):
                gaussian_filter(xb, 30.0, axes=-1, method="sft")


@pytest.mark.parametrize("engine", ["chunked", "prefix", "sliding"])
def test_apply_bank_flag_on_every_engine(rng, engine):
    """The deferred NaN/inf flag of :func:`apply_bank` (cleared inside the fused kernels on a
    GPU) is right on the other paths too: one torch pass per block of signals."""
    from fastmoments.signal._apply import apply_bank, deferred_flag

    plan = GaussianFilter(6.0, method="sft")
    x = torch.tensor(rng.standard_normal((4, 300)))
    assert deferred_flag(x, "chunked") is None  # on the CPU the caller checks itself
    for bad in (None, float("nan"), float("inf")):
        xb = x.clone()
        if bad is not None:
            xb[3, 299] = bad
        flag = torch.ones((), dtype=torch.uint8)
        # the chunked engine one signal per block (the blocks share the flag)
        y = apply_bank(plan.bank, xb, axis=-1, mode="reflect", cval=0.0, engine=engine,
                       budget=30_000 if engine == "chunked" else None, flag=flag)
        assert bool(flag) == (bad is None)
        if bad is None:
            ref = apply_bank(plan.bank, x, axis=-1, mode="reflect", cval=0.0, engine=engine)
            torch.testing.assert_close(y, ref, rtol=0, atol=1e-12)


def test_chunked_batch_is_split_by_the_memory_budget(rng):
    """A small budget splits the batch (same result); a budget below one row names the need."""
    x = rng.standard_normal((6, 4000))
    plan = MorletTransform(30.0, 6.0)
    full = plan(x)
    np.testing.assert_allclose(plan(x, memory_budget=1_000_000), full, atol=1e-13)
    with pytest.raises(MemoryError, match="scratch memory"):
        plan(x, memory_budget=1000)


def test_check_finite_switch(rng):
    """Default: NaN is an error naming x; check_finite=False skips the check: NaN comes out
    (beyond the kernel's support too: matrix products spread 0 × NaN over whole chunks)."""
    x = rng.standard_normal(500)
    x[100] = np.nan
    for plan in (GaussianFilter(5.0), MorletTransform(5.0, 6.0), CWT([2.0, 5.0])):
        with pytest.raises(ValueError, match="x contains NaN"):
            plan(x)
        y = plan(x, check_finite=False)
        assert np.isnan(y).any()
        assert np.isfinite(plan(np.nan_to_num(x), check_finite=False)).all()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_plans_capture_in_a_cuda_graph(rng):
    """With check_finite=False (and an explicit memory budget) a plan call has no host
    synchronisation, so it can be captured in a CUDA graph and replayed."""
    pytest.importorskip("triton")
    x = torch.tensor(rng.standard_normal((2, 20000)), dtype=torch.float32, device="cuda")
    for plan in (GaussianFilter(300.0, order=1), MorletTransform(40.0, 6.0),
                 CWT([3.0, 30.0, 300.0])):
        def call(plan=plan):
            return plan(x, check_finite=False, memory_budget=2**30)
        ref = call()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            call()
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            out = call()
        x.mul_(1.0)  # same data; the graph reads the static input
        g.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, ref)


def test_flag_pool_reuses_only_flags_read_as_one():
    """The deferred NaN/inf flags (``_apply._Flags``): a flag given back is taken again, one
    never given back (cleared, or not read) is not, and the pool keeps a bounded number."""
    from fastmoments.signal._apply import _Flags

    pool = _Flags(keep=2)
    dev = torch.device("cpu")
    a = pool.take(dev)
    assert a.dtype == torch.uint8 and int(a) == 1
    pool.give(a)
    assert pool.take(dev) is a  # reused: no new fill
    b = pool.take(dev)  # the pool is empty: a new flag holding 1
    assert b is not a and int(b) == 1
    for f in (a, b, torch.ones((), dtype=torch.uint8)):
        pool.give(f)
    assert len(pool._free[dev]) == 2


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_reused_flags_on_cuda_good_bad_good(rng, monkeypatch):
    """Eager fused calls on a GPU reuse their flag byte from call to call: a call with NaN
    still raises, and the good calls before and after it pass (the cleared flag is dropped)."""
    pytest.importorskip("triton")
    monkeypatch.setenv("FASTMOMENTS_CUDA_GRAPHS", "0")
    x = torch.tensor(rng.standard_normal((2, 6000)), dtype=torch.float32, device="cuda")
    bad = x.clone()
    bad[1, 3000] = float("nan")
    plan = GaussianFilter(40.0, method="sft")
    ref = plan(x)
    for _ in range(3):
        assert torch.equal(plan(x), ref)
        with pytest.raises(ValueError, match="x contains NaN"):
            plan(bad)
        assert torch.equal(plan(x), ref)
