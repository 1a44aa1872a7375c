"""fastmoments.dask without a cluster (the synchronous scheduler): values against the in-memory
functions, the chunk-boundary and boundary-mode cases of the overlap, metadata, bad input."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import fastmoments.dask as fmd  # noqa: E402
from fastmoments.box import JacobiTransform  # noqa: E402
from fastmoments.disk import PseudoZernikeTransform, ZernikeTransform  # noqa: E402
from fastmoments.disk.pht import PolarHarmonicTransform  # noqa: E402
from fastmoments.recognition import features as features_in_memory  # noqa: E402
from fastmoments.signal import MODES, GaussianFilter  # noqa: E402
from fastmoments.signal import cwt as cwt_in_memory  # noqa: E402

SYNC = {"scheduler": "sync"}


def gaussian_in_memory(x, sigma, *, axis=-1, order=0, mode="reflect", cval=0.0, **kw):
    """The one-shot transform along one axis, through the plan (its call does not change),
    with the plan's default method ("auto", also fastmoments.dask's default)."""
    return GaussianFilter(sigma, order=order, **kw)(x, axis=axis, mode=mode, cval=cval)


def _rel(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def test_module_is_ours_and_dask_is_dask():
    import dask

    assert fmd.__name__ == "fastmoments.dask"
    assert hasattr(dask, "array") and dask.__name__ == "dask"


# ------------------------------------------------------------------ features
@pytest.mark.parametrize("kind", ["complex", "real", "magnitude"])
def test_features_match_in_memory(kind):
    x = np.random.default_rng(0).random((2, 5, 16, 16))
    d = da.from_array(x, chunks=(1, 2, 16, 16))
    f = fmd.features(d, "zernike", 4, kind=kind)
    ref = features_in_memory(x.reshape(-1, 16, 16), family="zernike", orders=4, kind=kind)
    assert f.shape == (2, 5, ref.n_features)
    assert f.chunks[:2] == d.chunks[:2] and f.chunks[2] == (ref.n_features,)
    assert fmd.feature_names("zernike", 4, kind) == ref.names
    got = f.compute(**SYNC)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got.reshape(10, -1), ref.matrix, rtol=1e-12, atol=1e-14)


def test_features_meta_without_compute_float32_and_select():
    x = da.zeros((7, 12, 12), dtype=np.uint8, chunks=(3, 12, 12))
    f = fmd.features(x, "pseudo-zernike", [2, 3], kind="real", select=[(3, 1), (2, -2)])
    assert f.dtype == np.float32 and f._meta.dtype == np.float32 and f._meta.ndim == 2
    assert f.shape == (7, 2) and f.chunks == ((3, 3, 1), (2,))
    g = fmd.features(x, "zernike", 2, dtype="float64")
    assert g.dtype == np.float64


def test_features_rechunks_split_image_axes_or_refuses():
    x = np.random.default_rng(1).random((4, 16, 16))
    d = da.from_array(x, chunks=(2, 8, 16))
    ref = features_in_memory(x, family="zernike", orders=3).matrix
    np.testing.assert_allclose(fmd.features(d, "zernike", 3).compute(**SYNC), ref, rtol=1e-12,
                               atol=1e-14)
    with pytest.raises(ValueError, match=r"darr must hold whole images.*axes \[1\]"):
        fmd.features(d, "zernike", 3, rechunk=False)


@pytest.mark.parametrize(("args", "kwargs", "exc", "match"), [
    ((np.zeros((2, 8, 8)), "zernike", 2), {}, TypeError, "darr must be a dask array"),
    ((da.zeros(8, chunks=4), "zernike", 2), {}, ValueError, "at least 2 dimensions"),
    ((da.zeros((2, 8, 9), chunks=1), "zernike", 2), {}, ValueError, "square"),
    ((da.zeros((2, 8, 8), chunks=1), "hermite", 2), {}, ValueError, "family must be one of"),
    ((da.zeros((2, 8, 8), chunks=1), 3, 2), {}, TypeError, "family must be a name"),
    ((da.zeros((2, 8, 8), chunks=1), "zernike", 2.5), {}, TypeError, "orders"),
    ((da.zeros((2, 8, 8), chunks=1), "zernike", 2), {"kind": "abs"}, ValueError, "kind"),
    ((da.zeros((2, 8, 8), chunks=1), "zernike", 2), {"select": 3}, ValueError, "select"),
    ((da.zeros((2, 8, 8), chunks=1), "zernike", 2), {"k": True}, TypeError, "k must be"),
    ((da.zeros((2, 8, 8), chunks=1), "zernike", 2), {"device": 3}, TypeError, "device"),
    ((da.zeros((2, 8, 8), chunks=1), "zernike", 2), {"device": "gpu7"}, ValueError, "device"),
    ((da.zeros((2, 8, 8), dtype=complex, chunks=1), "zernike", 2), {}, ValueError, "real"),
    ((da.zeros((2, 8, 8), chunks=(1, 4, 8)), "zernike", 2), {"rechunk": 1}, TypeError,
     "rechunk"),
])
def test_features_bad_input(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        fmd.features(*args, **kwargs)


def test_features_nan_raises_at_compute():
    x = np.zeros((4, 8, 8))
    x[3, 4, 4] = np.nan
    f = fmd.features(da.from_array(x, chunks=(2, 8, 8)), "zernike", 2)
    with pytest.raises(ValueError, match="NaN"):
        f.compute(**SYNC)


# ------------------------------------------------------------------ moments of any plan
@pytest.mark.parametrize("make", [
    lambda: ZernikeTransform(12, 4, dtype="float64"),
    lambda: PseudoZernikeTransform(12, 3, dtype="float32"),
    lambda: PolarHarmonicTransform("pcet", 12, 2, 2, dtype="float64"),
    lambda: JacobiTransform((8, 10), 3, dtype="float64"),
    lambda: JacobiTransform((4, 5, 6), 2, truncation="box", dtype="float64"),
])
def test_moments_of_any_plan(make):
    plan = make()
    rng = np.random.default_rng(3)
    tail = tuple(plan.shape) if isinstance(plan, JacobiTransform) else (plan.size,) * 2
    x = rng.random((5, *tail))
    d = da.from_array(x, chunks=(2, *tail))
    A = fmd.moments(plan, d)
    cols = fmd.flat_index(plan)
    assert A.shape == (5, len(cols)) and A.chunks[0] == (2, 2, 1)
    ref = plan.forward(x)
    if isinstance(plan, JacobiTransform):
        want = np.stack([ref.numpy()[(slice(None), *ix)] for ix in cols], axis=-1)
        assert A.dtype == (np.float64 if plan.dtype.itemsize == 8 else np.float32)
    else:
        want = ref.values()
        assert A.dtype == want.dtype
        assert cols == list(ref.pairs)  # the columns' labels: sorted by n, then m
    got = A.compute(**SYNC)
    assert got.dtype == A.dtype
    tol = 1e-12 if got.real.dtype == np.float64 else 1e-5
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


def test_moments_bad_input():
    plan = ZernikeTransform(12, 2)
    with pytest.raises(TypeError, match="plan must be a disk plan"):
        fmd.moments(object(), da.zeros((2, 12, 12), chunks=1))
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 12, 12\)"):
        fmd.moments(plan, da.zeros((2, 10, 10), chunks=1))
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        fmd.moments(plan, da.zeros(12, chunks=4))
    with pytest.raises(ValueError, match="whole images"):
        fmd.moments(plan, da.zeros((2, 12, 12), chunks=(1, 6, 12)), rechunk=False)


# ------------------------------------------------------------------ signals along chunked axes
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("n", "chunk", "sigma", "order"), [
    (3000, 500, 20.0, 0),     # support shorter than a chunk
    (3000, 256, 150.0, 1),    # support (~640) longer than a chunk
    (40960, 4096, 8192.0, 0),  # the case: sigma = 8192, 4096-sample chunks
    (200, 30, 100.0, 2),      # support longer than the whole array
])
def test_gaussian_chunked_axis_equals_one_shot(mode, n, chunk, sigma, order):
    x = np.random.default_rng(4).standard_normal((2, n))
    d = da.from_array(x, chunks=(1, chunk))
    y = fmd.gaussian_filter1d(d, sigma, order=order, mode=mode, cval=0.7)
    assert y.shape == x.shape and y.chunks == d.chunks and y.dtype == np.float64
    ref = gaussian_in_memory(x, sigma, order=order, mode=mode, cval=0.7)
    got = y.compute(**SYNC)
    assert _rel(got, ref) < 1e-12
    # the two ends and every chunk boundary, sample by sample
    edges = sorted({0, n - 1, *np.cumsum(d.chunks[1])[:-1].tolist()})
    for e in edges:
        sl = slice(max(e - 2, 0), min(e + 2, n))
        np.testing.assert_allclose(got[:, sl], ref[:, sl], rtol=0,
                                   atol=1e-12 * np.abs(ref).max())


def test_gaussian_other_axis_float32_and_asft():
    x = np.random.default_rng(5).standard_normal((900, 3)).astype(np.float32)
    d = da.from_array(x, chunks=(100, 2))
    y = fmd.gaussian_filter1d(d, 60.0, axis=0, method="asft", mode="mirror")
    assert y.dtype == np.float32 and y.chunks == d.chunks
    ref = gaussian_in_memory(x, 60.0, axis=0, method="asft", mode="mirror")
    assert _rel(y.compute(**SYNC), ref) < 1e-5


@pytest.mark.parametrize("mode", MODES)
def test_cwt_chunked_axis_equals_one_shot(mode):
    x = np.random.default_rng(6).standard_normal(5000)
    d = da.from_array(x, chunks=400)
    scales = [2.0, 40.0, 300.0]  # the largest support is several chunks long
    W, freqs = fmd.cwt(d, scales, mode=mode, cval=-0.3)
    ref, rfreqs = cwt_in_memory(x, scales, mode=mode, cval=-0.3)
    assert W.shape == ref.shape and W.dtype == np.complex128
    assert W.chunks == ((3,), d.chunks[0])
    np.testing.assert_allclose(freqs, rfreqs, rtol=1e-15)
    assert _rel(W.compute(**SYNC), ref) < 1e-12


def test_depth_is_the_plans_support():
    from fastmoments.signal import CWT, GaussianFilter

    g = GaussianFilter(50.0, method="sft")
    assert fmd.depth_of(g) == g.bank.pad == g.K
    auto = GaussianFilter(3.0, order=2)  # method="auto": its direct kernel may be the wider
    assert fmd.depth_of(auto) == max(auto.bank.pad, auto.direct_bank.pad)
    c = CWT([3.0, 30.0])
    assert fmd.depth_of(c) == max(p.bank.pad for p in c.plans)
    h = g.kernel(np.arange(-fmd.depth_of(g) - 3, fmd.depth_of(g) + 4))
    assert h[0] == 0 and h[-1] == 0  # nothing beyond the depth
    with pytest.raises(TypeError, match="plan must be"):
        fmd.depth_of(object())


@pytest.mark.parametrize(("call", "exc", "match"), [
    (lambda d: fmd.gaussian_filter1d(d, True), TypeError, "sigma"),
    (lambda d: fmd.gaussian_filter1d(d, -1.0), ValueError, "sigma"),
    (lambda d: fmd.gaussian_filter1d(d, 2.0, mode="edge"), ValueError, "mode"),
    (lambda d: fmd.gaussian_filter1d(d, 2.0, axis=2), ValueError, "axis"),
    (lambda d: fmd.gaussian_filter1d(d, 2.0, axis=1.0), TypeError, "axis"),
    (lambda d: fmd.gaussian_filter1d(d, 2.0, order=3), ValueError, "order"),
    (lambda d: fmd.gaussian_filter1d(d, 2.0, cval="0"), TypeError, "cval"),
    (lambda d: fmd.gaussian_filter1d(d.compute(), 2.0), TypeError, "dask array"),
    (lambda d: fmd.cwt(d, []), ValueError, "scales"),
    (lambda d: fmd.cwt(d, [2.0, -1.0]), ValueError, "scales"),
    (lambda d: fmd.cwt(d, 2.0, wavelet="morlet"), TypeError, "wavelet"),
])
def test_signal_bad_input(call, exc, match):
    d = da.zeros((2, 50), chunks=(1, 10))
    with pytest.raises(exc, match=match):
        call(d)


def test_cwt_time_axis_first_single_chunk_and_float32():
    x = np.random.default_rng(7).standard_normal((300, 2)).astype(np.float32)
    d = da.from_array(x, chunks=(300, 1))  # one chunk along time: no overlap needed
    W, _ = fmd.cwt(d, [5.0, 60.0], axis=0, mode="reflect")
    ref, _ = cwt_in_memory(x, [5.0, 60.0], axis=0, mode="reflect")
    assert W.dtype == np.complex64 and W.chunks == ((2,), (300,), (1, 1))
    assert _rel(W.compute(**SYNC), ref) < 1e-5
    d2 = da.from_array(x.astype(np.float64), chunks=(70, 2))
    W2, _ = fmd.cwt(d2, [5.0, 60.0], axis=0, mode="wrap")
    ref2, _ = cwt_in_memory(x.astype(np.float64), [5.0, 60.0], axis=0, mode="wrap")
    assert W2.chunks == ((2,), (70, 70, 70, 70, 20), (2,))
    assert _rel(W2.compute(**SYNC), ref2) < 1e-12


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("n", "depth"), [(1, 5), (2, 7), (10, 3), (10, 25), (100, 24), (200, 30),
                                          (500, 9)])
def test_end_indices_follow_the_plans_rule(mode, n, depth):
    from fastmoments.dask._signal import _end_indices
    from fastmoments.signal.boundary import extension_indices

    full = extension_indices(n, depth, depth, mode)
    np.testing.assert_array_equal(_end_indices(n, -depth, 0, mode), full[:depth])
    np.testing.assert_array_equal(_end_indices(n, n, n + depth, mode), full[depth + n:])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("order", [0, 2])
def test_gaussian_kernel_longer_than_the_axis_is_folded(mode, order):
    """sigma = 1e6 on 600 samples in chunks of 128: the one-shot transform folds the kernel
    onto the axis (exact, O(n)); the dask result takes the same path, chunks unchanged."""
    x = np.random.default_rng(5).standard_normal((2, 600))
    d = da.from_array(x, chunks=(1, 128))
    y = fmd.gaussian_filter1d(d, 1e6, axis=-1, order=order, mode=mode, cval=0.5)
    assert y.chunks == d.chunks
    ref = gaussian_in_memory(x, 1e6, axis=-1, order=order, mode=mode, cval=0.5)
    scale = max(np.abs(ref).max(), np.abs(x).max())
    np.testing.assert_allclose(y.compute(**SYNC), ref, rtol=0, atol=1e-12 * scale)


# ------------------------------------------------------------------ the halo graph
def test_gaussian_irregular_chunks_some_shorter_than_the_support():
    """Chunks of 700, 30, 5, 900, 10, 355 samples (support ~ 85): the short ones are merged
    with their neighbours, the result keeps the input's chunks and equals the one-shot."""
    x = np.random.default_rng(8).standard_normal((3, 2000))
    d = da.from_array(x, chunks=((2, 1), (700, 30, 5, 900, 10, 355)))
    for mode in ("reflect", "wrap", "constant"):
        y = fmd.gaussian_filter1d(d, 20.0, order=1, mode=mode, cval=-1.5)
        assert y.chunks == d.chunks
        ref = gaussian_in_memory(x, 20.0, order=1, mode=mode, cval=-1.5)
        np.testing.assert_allclose(y.compute(**SYNC), ref, rtol=0,
                                   atol=1e-12 * np.abs(ref).max())


def test_halo_graph_has_two_tasks_per_chunk():
    """The chunked Gaussian's graph: per chunk one edge copy and one filter task (plus the two
    ends); dask.array.map_overlap made about six per chunk, each with the scheduler's fixed
    cost."""
    import dask

    x = da.random.random(64 * 5000, chunks=5000)  # 64 chunks, support ~ 85
    (y,) = dask.optimize(fmd.gaussian_filter1d(x, 20.0, mode="reflect"))
    tasks = len(dict(y.__dask_graph__())) - 64  # the input's own tasks
    assert tasks <= 2 * 64 + 6, tasks


def test_cwt_float32_chunk_edges():
    x = np.random.default_rng(9).standard_normal(3000).astype(np.float32)
    W, _ = fmd.cwt(da.from_array(x, chunks=600), [3.0, 25.0], mode="nearest")
    ref, _ = cwt_in_memory(x, [3.0, 25.0], mode="nearest")
    assert W.dtype == np.complex64
    assert _rel(W.compute(**SYNC), ref) < 1e-5


# ------------------------------------------------------------------ every axis, as scipy
def _separable(x, sigmas, orders, modes, axes, cval=0.0):
    """The one-shot reference: the plan along each filtered axis in turn."""
    y = x
    for ax, s, o, m in zip(axes, sigmas, orders, modes, strict=True):
        y = gaussian_in_memory(y, s, axis=ax, order=o, mode=m, cval=cval)
    return y


def test_gaussian_filter_every_axis_by_default():
    x = np.random.default_rng(10).standard_normal((60, 50, 40))
    d = da.from_array(x, chunks=(25, 20, 40))
    y = fmd.gaussian_filter(d, 2.5, mode="mirror")
    assert y.shape == x.shape and y.chunks == d.chunks and y.dtype == np.float64
    ref = _separable(x, [2.5] * 3, [0] * 3, ["mirror"] * 3, [0, 1, 2])
    np.testing.assert_allclose(y.compute(**SYNC), ref, rtol=0, atol=1e-12 * np.abs(ref).max())


def test_gaussian_filter_per_axis_values_and_axes():
    x = np.random.default_rng(11).standard_normal((4, 300, 80)).astype(np.float32)
    d = da.from_array(x, chunks=(2, 70, 30))
    y = fmd.gaussian_filter(d, [6.0, 3.0], order=[1, 0], mode=["wrap", "constant"], cval=0.5,
                            axes=(-2, 2))
    assert y.dtype == np.float32 and y.chunks == d.chunks
    ref = _separable(x.astype(np.float64), [6.0, 3.0], [1, 0], ["wrap", "constant"], [1, 2],
                     cval=0.5)
    assert _rel(y.compute(**SYNC), ref) < 1e-5


def test_gaussian_filter_matches_scipy_ndimage():
    from scipy import ndimage

    img = np.random.default_rng(12).random((64, 48))
    y = fmd.gaussian_filter(da.from_array(img, chunks=(16, 24)), [3.0, 2.0], mode="nearest")
    ref = ndimage.gaussian_filter(img, [3.0, 2.0], mode="nearest")
    # the SFT fit's own error (relative RMSE <= 1e-4 of the kernel), not a chunking error
    assert np.abs(y.compute(**SYNC) - ref).max() < 1e-4


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"axes": (0, 0)}, ValueError, "axes must not repeat"),
    ({"axes": (0, -2)}, ValueError, "axes must not repeat"),
    ({"axes": (3,)}, ValueError, "axes"),
    ({"axes": (0.0,)}, TypeError, "axes"),
    ({"sigma": [1.0, 2.0, 3.0]}, ValueError, r"sigma must be one value or one per .* \(2\)"),
    ({"order": [0]}, ValueError, "order must be one value"),
    ({"mode": ["reflect"] * 3}, ValueError, "mode must be one value"),
    ({"mode": ["reflect", "edge"]}, ValueError, "mode"),
    ({"sigma": [1.0, True]}, TypeError, "sigma"),
    ({"order": [0, 1.0]}, TypeError, "order"),
    ({"axis": -1}, TypeError, r"axis= is gone: for one axis use gaussian_filter1d"),
    ({"sigmas": 2.0}, TypeError, "unexpected keyword argument 'sigmas'"),
])
def test_gaussian_filter_bad_input(kwargs, exc, match):
    d = da.zeros((20, 30), chunks=10)
    kw = {"sigma": 2.0, **kwargs}
    with pytest.raises(exc, match=match):
        fmd.gaussian_filter(d, **kw)


@pytest.mark.parametrize("mode", ["reflect", "wrap", "constant"])
def test_gaussian_sigma_8192_in_4096_sample_chunks_over_several_merged_chunks(mode):
    """The issue's case with an axis long enough that the merged chunks (each at least the
    support, ~35,000 samples) are several: the halos then come from real neighbours."""
    n = 120_000
    x = np.random.default_rng(13).standard_normal(n)
    d = da.from_array(x, chunks=4096)
    y = fmd.gaussian_filter1d(d, 8192.0, mode=mode, cval=0.3)
    depth = fmd.depth_of(GaussianFilter(8192.0, method="sft"))
    assert 2 * depth < n and y.chunks == d.chunks
    from fastmoments.dask._signal import _merge_small

    assert len(_merge_small(d.chunks[0], depth)) >= 2  # real neighbours, not one piece
    ref = gaussian_in_memory(x, 8192.0, mode=mode, cval=0.3)
    np.testing.assert_allclose(y.compute(**SYNC), ref, rtol=0, atol=1e-12 * np.abs(ref).max())


@pytest.mark.parametrize("sigma", [1.5, 10.0, 100.0])
@pytest.mark.parametrize("order", [0, 1])
def test_default_method_is_the_in_memory_default(sigma, order):
    """One default everywhere: the chunked filter with its defaults equals the in-memory plan
    with its defaults (method "auto", decided once for the whole axis), also where "auto"
    takes the direct route (σ = 1.5) and the SFT default would differ by ~1e-5."""
    import fastmoments as fm

    x = np.random.default_rng(5).standard_normal(30000)
    y = fmd.gaussian_filter1d(da.from_array(x, chunks=3000), sigma, order=order).compute(**SYNC)
    assert _rel(y, GaussianFilter(sigma, order=order)(x)) < 1e-12
    img = np.random.default_rng(6).random((200, 180))
    y2 = fmd.gaussian_filter(da.from_array(img, chunks=(50, 60)), sigma, order=order)
    assert _rel(y2.compute(**SYNC), fm.gaussian_filter(img, sigma, order=order)) < 1e-12
    import inspect

    for fn in (fmd.gaussian_filter1d, fmd.gaussian_filter, fmd.cwt):
        assert inspect.signature(fn).parameters["method"].default == "auto"


@pytest.mark.parametrize("device", [["cpu", "cpu"], ("cpu", "cpu"), "cuda:all"])
def test_device_lists_are_refused_saying_why(device):
    d = da.zeros((2, 8, 8), chunks=1)
    with pytest.raises(ValueError, match=r"one device for fastmoments.dask.*one worker per GPU"):
        fmd.features(d, "zernike", 2, device=device)
    with pytest.raises(ValueError, match=r"one device for fastmoments.dask"):
        fmd.gaussian_filter1d(da.zeros(64, chunks=32), 2.0, device=device)


def test_a_device_list_plan_is_refused_saying_why():
    plan = ZernikeTransform(8, 2, device=["cpu", "cpu"])
    with pytest.raises(TypeError, match=r"plan on one device, got a ParallelPlan.*one worker per"):
        fmd.moments(plan, da.zeros((2, 8, 8), chunks=1))
