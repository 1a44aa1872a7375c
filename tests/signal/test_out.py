"""``out=`` for the signal transforms and the CPU chunked engine's reused scratch."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.signal import CWT, GaussianFilter, MorletTransform, _apply, chunked

SCALES = (2.0, 5.5, 40.0, 300.0)


def _signal(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def assert_same(got, ref):
    """Equal up to rounding: the same operations written into another buffer. Not bit for
    bit: BLAS may take other code paths for other alignments (and does on other CPUs)."""
    got = got.detach().cpu().numpy() if isinstance(got, torch.Tensor) else np.asarray(got)
    ref = ref.detach().cpu().numpy() if isinstance(ref, torch.Tensor) else np.asarray(ref)
    assert got.shape == ref.shape and got.dtype == ref.dtype
    atol = 16 * np.finfo(ref.dtype).eps * max(float(np.abs(ref).max(initial=0.0)), 1e-300)
    np.testing.assert_allclose(got, ref, rtol=0, atol=atol)


def _fresh_workspace():
    """Forget this thread's cached scratch, so that the next call allocates it anew."""
    chunked._local.workspace = None


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1037,), (3, 1024), (2, 50)])
def test_cwt_out_numpy_equals_allocating(dtype, shape):
    x = _signal(shape, dtype)
    x0 = x.copy()
    plan = CWT(SCALES)
    ref = plan(x)
    out = np.full(ref.shape, np.nan + 1j * np.nan, dtype=ref.dtype)
    got = plan(x, out=out)
    assert got is out
    assert got.dtype == (np.complex64 if dtype == np.float32 else np.complex128)
    assert_same(got, ref)
    np.testing.assert_array_equal(x, x0)
    # the one-call function, and a second call into the same (now dirty) buffer
    coef, freqs = fm.cwt(x, SCALES, out=out)
    assert coef is out
    assert_same(coef, ref)
    np.testing.assert_allclose(freqs, plan.frequencies())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_cwt_out_torch_equals_allocating(dtype):
    x = torch.as_tensor(_signal((2, 777), np.float64)).to(dtype)
    x0 = x.clone()
    plan = CWT(SCALES)
    ref = plan(x)
    out = torch.full_like(ref, complex("nan"))
    got = plan(x, out=out)
    assert got is out
    assert_same(got, ref)
    assert torch.equal(x, x0)


def test_cwt_out_other_axis_and_strided_out():
    x = _signal((700, 3), np.float32)
    plan = CWT(SCALES)
    ref = plan(x, axis=0)
    out = np.zeros_like(ref, order="C")
    assert plan(x, axis=0, out=out) is out
    assert_same(out, ref)
    # a non-contiguous out (every other scale of a bigger array) is filled through a copy
    big = np.zeros((2 * len(SCALES), 700, 3), dtype=np.complex64)
    view = big[::2]
    assert plan(x, axis=0, out=view) is view
    assert_same(view, ref)
    assert not big[1::2].any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("plan", [GaussianFilter(9.0), GaussianFilter(150.0, order=2),
                                  GaussianFilter(12.0, order=1, method="asft"),
                                  MorletTransform(30.0), MorletTransform(6.0, method="asft")],
                         ids=["g9", "g150d2", "g12asft", "m30", "m6asft"])
def test_plans_out_equal_allocating(plan, dtype):
    x = _signal((2, 1500), dtype)
    x0 = x.copy()
    ref = plan(x)
    out = np.empty_like(ref)
    assert plan(x, out=out) is out
    assert_same(out, ref)
    np.testing.assert_array_equal(x, x0)
    xt = torch.from_numpy(x)
    out_t = torch.empty_like(torch.from_numpy(ref))
    assert plan(xt, out=out_t) is out_t
    assert_same(out_t.numpy(), ref)


@pytest.mark.parametrize("engine", ["prefix", "recursive", "sliding"])
def test_out_with_row_engines(engine):
    x = _signal(600, np.float64)
    plan = MorletTransform(20.0)
    ref = plan(x, engine=engine)
    out = np.empty_like(ref)
    assert plan(x, engine=engine, out=out) is out
    assert_same(out, ref)
    unsorted = (40.0, 2.0, 300.0, 5.5)  # the row engines once returned sorted rows
    cref = CWT(unsorted)(x, engine=engine)
    for i, s in enumerate(unsorted):  # each row is its own scale's transform (other pads:
        one = MorletTransform(s)(x, engine=engine)  # other prefix sums, rounding ~1e-14)
        np.testing.assert_allclose(cref[i], one, rtol=0, atol=1e-12 * np.abs(one).max())
    cout = np.empty_like(cref)
    assert CWT(unsorted)(x, engine=engine, out=cout) is cout
    assert_same(cout, cref)


def test_one_call_functions_out():
    x = _signal((40, 50), np.float64)
    ref = fm.gaussian_filter(x, [2.0, 3.0], axes=(0, 1), order=[1, 0])
    out = np.empty_like(ref)
    assert fm.gaussian_filter(x, [2.0, 3.0], axes=(0, 1), order=[1, 0], out=out) is out
    assert_same(out, ref)
    ref = fm.morlet_transform(x, 7.0, axis=0)
    out = np.empty_like(ref)
    assert fm.morlet_transform(x, 7.0, axis=0, out=out) is out
    assert_same(out, ref)


def test_out_is_written_directly(monkeypatch):
    """The chunked engine gets the caller's memory (no temporary and copy)."""
    seen = []
    real = _apply.chunked_apply

    def spy(*args, out=None, **kw):
        seen.append(None if out is None else out.data_ptr())
        return real(*args, out=out, **kw)

    monkeypatch.setattr(_apply, "chunked_apply", spy)
    x = _signal((2, 1000), np.float32)
    out = np.empty((len(SCALES), 2, 1000), dtype=np.complex64)
    CWT(SCALES)(x, out=out)
    assert seen == [out.ctypes.data]


def _errors():
    x = _signal((2, 300), np.float32)
    good = np.zeros((len(SCALES), 2, 300), dtype=np.complex64)
    ro = good.copy()
    ro.flags.writeable = False
    return x, [
        (good[:, :1], ValueError, "shape"),
        (good.astype(np.complex128), TypeError, "dtype"),
        (good.real.copy(), TypeError, "dtype"),
        (torch.from_numpy(good), TypeError, "numpy.ndarray"),
        (list(good), TypeError, "numpy.ndarray"),
        (ro, ValueError, "read-only"),
        (good[:, :, ::-1], ValueError, "negative"),
    ]


def test_out_errors_name_out():
    x, cases = _errors()
    plan = CWT(SCALES)
    for bad, exc, words in cases:
        with pytest.raises(exc, match=rf"^out.*{words}"):
            plan(x, out=bad)
        with pytest.raises(exc, match="out"):
            fm.cwt(x, SCALES, out=bad)
    with pytest.raises(TypeError, match=r"out must be a torch\.Tensor"):
        plan(torch.from_numpy(x), out=np.empty((len(SCALES), 2, 300), dtype=np.complex64))


def test_out_errors_torch():
    x = torch.randn(2, 300, dtype=torch.float64)
    plan = GaussianFilter(5.0)
    with pytest.raises(ValueError, match="out must not overlap"):
        plan(x, out=x)
    with pytest.raises(ValueError, match="out must not overlap"):
        fm.gaussian_filter(x.numpy(), 5.0, out=x.numpy())
    with pytest.raises(ValueError, match="out must be on"):
        plan(x, out=torch.empty(2, 300, dtype=torch.float64, device="meta"))
    with pytest.raises(ValueError, match="out must not require grad"):
        plan(x, out=torch.zeros(2, 300, dtype=torch.float64, requires_grad=True))
    with pytest.raises(TypeError, match=r"out must have dtype torch\.float64"):
        plan(x, out=torch.empty(2, 300, dtype=torch.float32))
    xg = x.clone().requires_grad_(True)
    with pytest.raises(ValueError, match="out cannot be used while a gradient is recorded"):
        plan(xg, out=torch.empty(2, 300, dtype=torch.float64))
    with torch.no_grad():  # no gradient recorded: allowed
        out = torch.empty(2, 300, dtype=torch.float64)
        assert plan(xg, out=out) is out
        assert_same(out, plan(x))


def test_gradient_path_unaffected():
    x = torch.randn(1, 90, dtype=torch.float64, requires_grad=True)
    plan = CWT((3.0, 17.0))
    y = plan(x)
    assert y.requires_grad
    torch.testing.assert_close(y.detach(), plan(x.detach()), rtol=0, atol=1e-13)
    torch.autograd.gradcheck(lambda v: torch.view_as_real(plan(v)), (x,))
    # a gradient call between two plain calls leaves them identical (no shared buffer written)
    a = plan(x.detach()).clone()
    plan(x).abs().sum().backward()
    assert_same(plan(x.detach()), a)


def test_scratch_reuse_across_shapes_and_banks():
    jobs = [
        (CWT(SCALES), _signal((3, 2000), np.float32, 1)),
        (GaussianFilter(40.0, order=1), _signal((5, 333), np.float64, 2)),
        (CWT(SCALES), _signal(130, np.float32, 3)),
        (MorletTransform(8.0, method="asft"), _signal((2, 4096), np.float32, 4)),
        (CWT((2.0, 1000.0)), _signal((1, 5000), np.float64, 5)),
        (CWT(SCALES), _signal((3, 2000), np.float32, 1)),
    ]
    refs = []
    for plan, x in jobs:  # each with scratch allocated afresh
        _fresh_workspace()
        refs.append(plan(x))
    _fresh_workspace()
    for _ in range(2):  # the same jobs sharing one cached workspace, in both orders
        for (plan, x), ref in zip(jobs, refs, strict=True):
            assert_same(plan(x), ref)
        jobs, refs = jobs[::-1], refs[::-1]


def test_scratch_per_thread():
    plan = CWT(SCALES)
    xs = [_signal((2, 1500 + 37 * i), np.float32, i) for i in range(4)]
    refs = [plan(x) for x in xs]
    errors = []

    def work(i):
        for _ in range(5):
            if not np.array_equal(plan(xs[i]), refs[i]):
                errors.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_cached_scratch_is_bounded(monkeypatch):
    monkeypatch.setattr(chunked, "_CACHE_BYTES", 1 << 10)
    _fresh_workspace()
    x = _signal(3000, np.float32)
    ref = CWT(SCALES)(x)
    assert chunked._workspace(torch.device("cpu")).nbytes == 0
    assert_same(CWT(SCALES)(x), ref)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_out_on_cuda_is_written_in_place():
    """On CUDA (the fused kernels for float32) out= receives the products directly."""
    pytest.importorskip("triton")
    x = torch.tensor(_signal((2, 5000), np.float32), device="cuda")
    for plan in (GaussianFilter(30.0, order=1), MorletTransform(30.0, 6.0), CWT(SCALES)):
        ref = plan(x)
        out = torch.full_like(ref, float("nan"))
        ptr = out.data_ptr()
        assert plan(x, out=out) is out
        assert out.data_ptr() == ptr
        assert torch.equal(out, ref)
