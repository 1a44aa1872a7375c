"""Feature API: shapes, names, kinds, selection by variance, dtype/kind rules, errors, and an
independent float64 reference (direct sums of the pseudo-Zernike and Zernike definitions)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import fastmoments as fm
from fastmoments.recognition import (
    FeatureSet,
    moment_pairs,
    moment_variances,
    select_by_variance,
    top_by_variance,
    variance_table,
)

from ..reference_disk import pht_moments_direct, sum_bound


def _radial(family: str, n: int, m: int, r: np.ndarray) -> np.ndarray:
    """R_nm(r) from the factorial sums (thesis Eq. 2.6 and 2.14), float64."""
    m = abs(m)
    out = np.zeros_like(r)
    if family == "zernike":
        for s in range((n - m) // 2 + 1):
            c = (-1) ** s * math.factorial(n - s) / (
                math.factorial(s) * math.factorial((n + m) // 2 - s)
                * math.factorial((n - m) // 2 - s))
            out += c * r ** (n - 2 * s)
    else:
        for s in range(n - m + 1):
            c = (-1) ** s * math.factorial(2 * n + 1 - s) / (
                math.factorial(s) * math.factorial(n + m + 1 - s) * math.factorial(n - m - s))
            out += c * r ** (n - s)
    return out


def direct_moments(img: np.ndarray, family: str, pairs) -> np.ndarray:
    """A_nm = (n+1)/pi sum f R_nm(r) e^{-i m theta} dx dy over the pixels inside the disk
    (thesis Eq. 2.10/2.16), pixel centres x = -1 + (2j+1)/N, y = 1 - (2i+1)/N."""
    N = img.shape[-1]
    c = -1 + (2 * np.arange(N) + 1) / N
    x, y = np.meshgrid(c, -c)
    inside = (np.abs(x) + 1 / N) ** 2 + (np.abs(y) + 1 / N) ** 2 <= 1 + 1e-12
    r, th = np.hypot(x, y)[inside], np.arctan2(y, x)[inside]
    f = img.reshape(-1, N, N)[:, inside]
    out = np.empty((f.shape[0], len(pairs)), complex)
    for k, (n, m) in enumerate(pairs):
        v = _radial(family, n, m, r) * np.exp(-1j * m * th)
        out[:, k] = (n + 1) / np.pi * (f @ v) * (2 / N) ** 2
    return out


def rounding_bound(images: np.ndarray, n: int) -> np.ndarray:
    """Per image, how far two float64 evaluations of a moment of order ``n`` that sum in
    different orders may differ (a matrix product blocks its columns and rows as the CPU's
    kernels choose): see :func:`tests.reference_disk.sum_bound`."""
    return sum_bound(images, (n + 1) / np.pi)


@pytest.fixture
def images(rng) -> np.ndarray:
    return (rng.random((7, 16, 16)) > 0.6).astype(np.float64)


@pytest.mark.parametrize("family", ["pseudo-zernike", "zernike"])
def test_matches_direct_float64_reference(images, family):
    fs = fm.features(images, family=family, orders=6, dtype="float64")
    ref = direct_moments(images, family, fs.pairs)
    got = fs.complex_values()
    # the factorial sums of the reference cancel about 4 digits at order 6
    assert np.abs(got - ref).max() <= 1e-12 * np.abs(ref).max()


def test_shapes_names_and_columns(images):
    fs = fm.features(images, family="pseudo-zernike", orders=2, kind="complex")
    pairs = moment_pairs("pseudo-zernike", 2)
    assert fs.pairs == pairs == [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]
    assert fs.matrix.shape == (7, 12)
    assert fs.names[:4] == ["Re A[0,0]", "Im A[0,0]", "Re A[1,0]", "Im A[1,0]"]
    assert fs.columns[3] == (1, 0, "im")
    c = fs.complex_values()
    np.testing.assert_array_equal(fs.matrix[:, 0::2], c.real)
    np.testing.assert_array_equal(fs.matrix[:, 1::2], c.imag)
    real = fs.with_kind("real")
    assert real.names[1] == "Re A[1,0]" and real.matrix.shape == (7, 6)
    np.testing.assert_array_equal(real.matrix, c.real)
    mag = fs.with_kind("magnitude")
    assert mag.names[0] == "|A[0,0]|"
    np.testing.assert_allclose(mag.matrix, np.abs(c), rtol=1e-6)
    assert len(fs) == 7 and fs.n_features == 12 and "FeatureSet" in repr(fs)


def test_zernike_pairs_and_orders_iterable():
    assert moment_pairs("zernike", [4, 5]) == [(4, 0), (4, 2), (4, 4), (5, 1), (5, 3), (5, 5)]


def test_explicit_selection_negative_m_is_conjugate(images):
    fs = fm.features(images, select=[(3, -1), (3, 1), (2, 0)], kind="complex",
                     dtype="float64")
    c = fs.complex_values()
    # the two columns of the analysis matrix are exact conjugates, but the matrix product may
    # sum them in different orders (it does on AMD EPYC: 1.4e-17 apart), so the results agree
    # to the rounding bound of a sum, not bit for bit
    tol = rounding_bound(images, 3)
    assert (np.abs(c[:, 0] - np.conj(c[:, 1])) <= tol).all()
    assert fs.pairs == [(3, -1), (3, 1), (2, 0)]
    sub = fs.select([(2, 0)])
    # select() copies columns: bit-exactness is the property
    np.testing.assert_array_equal(sub.complex_values()[:, 0], c[:, 2])
    with pytest.raises(KeyError, match=r"\(4, 0\)"):
        fs.select([(4, 0)])


def test_batch_shapes_and_single_image(images):
    one = fm.features(images[0], orders=3)
    assert one.matrix.shape[0] == 1
    stacked = fm.features(images.reshape(7, 1, 16, 16), orders=3, dtype="float64")
    flat = fm.features(images, orders=3, dtype="float64")
    tol = rounding_bound(images, 3)[:, None]
    assert (np.abs(stacked.matrix - flat.matrix) <= tol).all()


def test_batches_equal_one_call_and_loop(images):
    whole = fm.features(images, orders=5, dtype="float64")
    chunked = fm.features(images, orders=5, dtype="float64", batch_size=2)
    tol = rounding_bound(images, 5)[:, None]  # other batch shapes: other summation orders
    assert (np.abs(chunked.matrix - whole.matrix) <= tol).all()
    loop = np.concatenate([fm.features(im, orders=5, dtype="float64").matrix for im in images])
    assert (np.abs(loop - whole.matrix) <= tol).all()


def test_numpy_in_numpy_out_torch_in_torch_out(images, device):
    fs = fm.features(images.astype(np.float32), orders=2)
    assert isinstance(fs.matrix, np.ndarray) and fs.matrix.dtype == np.float32
    t = torch.as_tensor(images, device=device)
    ft = fm.features(t, orders=2)
    assert isinstance(ft.matrix, torch.Tensor) and ft.matrix.device.type == device
    assert ft.matrix.dtype == torch.float64          # float64 stays float64
    np.testing.assert_allclose(ft.matrix.cpu().numpy(), fs.matrix, atol=2e-6)


def test_integer_and_bool_inputs_are_float32(images):
    a = fm.features(images.astype(bool), orders=2).matrix
    b = fm.features(images.astype(np.uint8), orders=2).matrix
    assert a.dtype == b.dtype == np.float32
    # both become the same float32 0/1 images before any arithmetic: the same computation,
    # so bit-exactness is the property
    np.testing.assert_array_equal(a, b)


def test_float32_error_bound(images):
    """The docstring's float32 bound: 2e-5 of the largest feature."""
    f64 = fm.features(images, orders=8, dtype="float64").matrix
    f32 = fm.features(images.astype(np.float32), orders=8).matrix
    assert np.abs(f32 - f64).max() <= 2e-5 * np.abs(f64).max()


def test_input_not_modified(images):
    before = images.copy()
    fm.features(images, orders=4, kind="magnitude")
    np.testing.assert_array_equal(images, before)


def test_magnitudes_invariant_under_quarter_turns(images):
    base = fm.features(images, orders=8, kind="magnitude", dtype="float64").matrix
    for k in (1, 2, 3):
        rot = fm.features(np.rot90(images, k, axes=(-2, -1)), orders=8, kind="magnitude",
                          dtype="float64").matrix
        # the turned image sums the same products in another order (the analysis matrix's
        # entries, a few roundings each, add far less than the P roundings of the sum)
        assert (np.abs(rot - base) <= rounding_bound(images, 8)[:, None]).all()
    cplx = fm.features(images, orders=3, kind="complex", dtype="float64")
    turned = fm.features(np.rot90(images, 1, axes=(-2, -1)), orders=3, kind="complex",
                         dtype="float64")
    # a turn by alpha multiplies A_nm by exp(-i m alpha) (thesis Eq. 2.8)
    m = np.array([p[1] for p in cplx.pairs])
    expect = cplx.complex_values() * np.exp(-1j * m * np.pi / 2)
    assert (np.abs(turned.complex_values() - expect)
            <= rounding_bound(images, 3)[:, None] + 4 * np.finfo(float).eps * np.abs(expect)).all()


def test_gradients_flow(device):
    x = torch.rand(2, 8, 8, dtype=torch.float64, device=device, requires_grad=True)
    fs = fm.features(x, orders=3, kind="complex")
    assert fs.matrix.requires_grad

    def f(t):
        return fm.features(t, orders=3, kind="real").tensor

    assert torch.autograd.gradcheck(f, (x,), eps=1e-6, atol=1e-8)


def test_variances_and_selection(images):
    fs = fm.features(images, orders=5, dtype="float64")
    c = fs.complex_values()
    v = moment_variances(fs, kind="complex")
    np.testing.assert_allclose(v, np.var(c.real, 0) + np.var(c.imag, 0), rtol=1e-12)
    np.testing.assert_allclose(moment_variances(fs, kind="real"), np.var(c.real, 0),
                               rtol=1e-12)
    np.testing.assert_allclose(moment_variances(fs, kind="magnitude"), np.var(np.abs(c), 0),
                               rtol=1e-12)
    for kind in ("complex", "real", "magnitude"):
        var = moment_variances(fs, kind=kind)
        chosen = select_by_variance(fs, 4, kind=kind)
        assert len(chosen) == 4
        worst_kept = min(var[fs.pairs.index(p)] for p in chosen)
        best_dropped = max(var[i] for i, p in enumerate(fs.pairs) if p not in chosen)
        assert worst_kept >= best_dropped
        auto = fm.features(images, orders=5, kind=kind, select=4, dtype="float64")
        assert auto.pairs == chosen
    table = variance_table(fs, kind="real")
    assert table.shape == (6, 6) and np.isnan(table[5, 4])
    assert table[2, 4] == pytest.approx(moment_variances(fs, kind="real")[fs.pairs.index((4, 2))])
    assert top_by_variance([(1, 1), (0, 0)], [1.0, 1.0], 1) == [(0, 0)]   # ties: lower (n, m)


@pytest.mark.parametrize("family", ["pcet", "pct", "pst"])
@pytest.mark.parametrize("algorithm", ["dense", "engine"])
def test_polar_harmonic_features_match_direct_float64_reference(images, family, algorithm):
    """Every registered family works through the generic path, and its values are the
    definition's (an independent direct sum over the sample points)."""
    for kind in ("complex", "magnitude"):
        fs = fm.features(images, family=family, orders=3, kind=kind, dtype="float64",
                         algorithm=algorithm)
        assert fs.matrix.shape == (7, len(fs.pairs) * (2 if kind == "complex" else 1))
        # every order |n| <= 3 (both signs for PCET) and every stored l >= 0
        lo = {"pcet": -3, "pct": 0, "pst": 1}[family]
        assert sorted(fs.pairs) == [(n, l) for n in range(lo, 4) for l in range(4)]
        ref = pht_moments_direct(family, images, fs.pairs)
        got = fs.complex_values()
        # two float64 evaluations of the same sums (|c_n R_n| <= 2/pi); the engine sums in
        # two stages (angular, then radial), each within the bound of a sum
        tol = 2 * sum_bound(images, 2 / np.pi)[:, None]
        assert (np.abs(got - ref) <= tol).all()
        if kind == "magnitude":
            assert (np.abs(fs.matrix - np.abs(ref)) <= tol).all()
        else:
            assert (np.abs(fs.matrix[:, 0::2] - ref.real) <= tol).all()
            assert (np.abs(fs.matrix[:, 1::2] - ref.imag) <= tol).all()
    sel = [(2, -1), (3, 2)]  # a negative l is the family's partner of a stored moment
    fs = fm.features(images, family=family, select=sel, dtype="float64", algorithm=algorithm)
    ref = pht_moments_direct(family, images, sel)
    assert (np.abs(fs.complex_values() - ref)
            <= 2 * sum_bound(images, 2 / np.pi)[:, None]).all()


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"kind": "phase"}, "kind must be one of 'complex', 'real', 'magnitude'"),
    ({"family": "legendre"}, "family must be one of"),
    ({"orders": -1}, "orders must be >= 0"),
    ({"select": [(2, 3)]}, r"select: \(2, 3\) is not a valid"),
    ({"select": 99}, "select must be <= 30"),
    ({"select": 0}, "select must be >= 1"),
    ({"batch_size": 0}, "batch_size must be >= 1"),
])
def test_errors_name_the_parameter(images, kwargs, match):
    with pytest.raises(ValueError, match=match):
        fm.features(images, **kwargs)


def test_bad_images():
    with pytest.raises(ValueError, match="images must be square"):
        fm.features(np.zeros((3, 8, 9)))
    with pytest.raises(ValueError, match=r"images must be \(N, N\)"):
        fm.features(np.zeros(8))
    with pytest.raises(ValueError, match="images must be real"):
        fm.features(np.zeros((8, 8), complex))
    bad = np.zeros((2, 8, 8))
    bad[1, 3, 3] = np.nan
    with pytest.raises(ValueError, match="images contains NaN or infinity"):
        fm.features(bad, batch_size=1)
    with pytest.raises(TypeError, match="orders must be an int"):
        fm.features(np.zeros((8, 8)), orders=2.5)
    with pytest.raises(ValueError, match="kind must be one of"):
        FeatureSet.with_kind(fm.features(np.zeros((8, 8)), orders=1), "angle")


@pytest.mark.parametrize("family", ["pseudo-zernike", "zernike"])
def test_dense_algorithm_equals_engine(images, family, device):
    x = torch.as_tensor(images, device=device)
    a = fm.features(x, family=family, orders=7, algorithm="dense")
    b = fm.features(x, family=family, orders=7, algorithm="engine")
    # two float64 evaluations of the same sums (the dense matrix is the engine's output on
    # unit images): each within one rounding bound of the exact value
    tol = torch.as_tensor(2 * rounding_bound(images, 7), device=device)[:, None]
    assert bool(((a.moments - b.moments).abs() <= tol).all())
    sel = [(5, -3), (2, 0), (7, 1)] if family == "pseudo-zernike" else [(5, -3), (2, 0)]
    a = fm.features(x.float(), family=family, select=sel, algorithm="dense")
    b = fm.features(x.float(), family=family, select=sel, algorithm="engine")
    torch.testing.assert_close(a.moments, b.moments, rtol=0, atol=2e-6)
    with pytest.raises(ValueError, match="algorithm must be one of 'auto', 'dense', 'engine'"):
        fm.features(x, algorithm="fft")


@pytest.mark.parametrize("algorithm", ["dense", "engine"])
@pytest.mark.parametrize("where", [(0, 0), (8, 8)])      # a corner outside the disk, the centre
def test_nan_or_inf_anywhere_is_refused(algorithm, where):
    x = np.zeros((3, 16, 16))
    x[1][where] = np.inf
    with pytest.raises(ValueError, match="images contains NaN or infinity"):
        fm.features(x, orders=3, algorithm=algorithm, batch_size=2)
    x[1][where] = np.nan
    with pytest.raises(ValueError, match="images contains NaN or infinity"):
        fm.features(x, orders=3, algorithm=algorithm)


def test_orders_cover_negative_orders_of_pcet():
    from fastmoments.disk.families import FAMILIES

    if "pcet" not in FAMILIES:
        pytest.skip("the polar complex exponential family is not registered")
    pairs = moment_pairs("pcet", 1)
    assert set(pairs) == set(FAMILIES["pcet"].full(1).pairs())
    assert (-1, 0) in pairs and (-1, 1) in pairs
    assert moment_pairs("pcet", [1]) == [p for p in pairs if abs(p[0]) == 1]


@pytest.mark.parametrize("dtype", [">f8", ">f4", ">i4", ">u2", "<f8"])
@pytest.mark.parametrize("layout", ["c", "reversed", "readonly"])
def test_features_of_any_byte_order_and_layout(dtype, layout):
    """Big-endian images were refused with torch's byte-order message (features converted with
    torch.from_numpy directly); they are features of the same values in native order."""
    rng = np.random.default_rng(5)
    native = (rng.random((3, 9, 9)) * 100).astype(np.dtype(dtype).newbyteorder("="))
    x = native.astype(dtype)
    if layout == "reversed":
        x, native = x[::-1, :, ::-1], native[::-1, :, ::-1]
    elif layout == "readonly":
        x.flags.writeable = False
    before = x.copy()
    got = fm.features(x, orders=4, dtype="float64").matrix
    ref = fm.features(np.ascontiguousarray(native), orders=4, dtype="float64").matrix
    assert np.allclose(got, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    assert np.array_equal(x, before)  # bit-exactness is the property: the input is untouched


@pytest.mark.parametrize("dtype", [">f8", ">f4"])
def test_features_nan_in_big_endian_images_is_named(dtype):
    x = np.random.default_rng(6).random((2, 9, 9)).astype(dtype)
    x[1, 4, 4] = np.nan
    with pytest.raises(ValueError, match="images contains NaN"):
        fm.features(x, orders=3)
