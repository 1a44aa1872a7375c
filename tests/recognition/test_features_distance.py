"""Distances (thesis Eq. 6.4-6.5), all-pairs statistics and nearest neighbours against direct
NumPy/SciPy computations; chunked equals unchunked."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.spatial.distance import cdist, pdist

import fastmoments as fm
from fastmoments.recognition import (
    THESIS_EDGES,
    feature_distances,
    nearest_neighbours,
    pair_statistics,
)


@pytest.fixture(params=["torch", "numba"])
def cpu_path(request, monkeypatch):
    """Run pair_statistics through the torch blocks or the numba kernel (which on the CPU
    takes over from NUMBA_MIN_PAIRS pairs)."""
    from fastmoments.recognition import distance

    monkeypatch.setattr(distance, "NUMBA_MIN_PAIRS", 0 if request.param == "numba" else 1 << 62)
    return request.param


def _eq64(z: np.ndarray) -> np.ndarray:
    """Eq. 6.4 directly: sqrt(sum_k |f_ki - f_kj|^2) over complex entries."""
    diff = z[:, None, :] - z[None, :, :]
    return np.sqrt((np.abs(diff) ** 2).sum(-1))


def test_complex_distance_is_eq_6_4(rng):
    z = rng.standard_normal((30, 4)) + 1j * rng.standard_normal((30, 4))
    np.testing.assert_allclose(feature_distances(z), _eq64(z), rtol=1e-14, atol=1e-15)


def test_featureset_distances_match_eq_6_4_and_6_5(rng):
    imgs = (rng.random((12, 16, 16)) > 0.5).astype(np.float64)
    fs = fm.features(imgs, family="pseudo-zernike", select=[(4, 0), (5, 0), (5, 1), (5, 2)],
                     kind="complex", dtype="float64")
    z = fs.complex_values()
    np.testing.assert_allclose(feature_distances(fs), _eq64(z), rtol=1e-13, atol=1e-16)
    real = fs.with_kind("real")
    np.testing.assert_allclose(feature_distances(real), cdist(z.real, z.real), rtol=1e-13,
                               atol=1e-16)
    mag = fs.with_kind("magnitude")
    np.testing.assert_allclose(feature_distances(mag, mag.matrix[:3]),
                               cdist(np.abs(z), np.abs(z[:3])), rtol=1e-13, atol=1e-16)


def _reference_stats(x: np.ndarray, edges, k: int):
    d = pdist(x)
    counts = np.histogram(d, bins=np.r_[edges, np.inf])[0]
    below = int((d < edges[0]).sum())
    n = x.shape[0]
    i, j = np.triu_indices(n, 1)
    order = np.lexsort((i * n + j, d))[:k]
    return counts, below, d.mean(), [(int(i[o]), int(j[o]), d[o]) for o in order]


@pytest.mark.parametrize("chunk_rows", [None, 1, 7, 64])
def test_pair_statistics_against_scipy(rng, chunk_rows, cpu_path):
    x = rng.random((301, 6)) * 0.08
    st = pair_statistics(x, closest=12, chunk_rows=chunk_rows)
    counts, below, mean, closest = _reference_stats(x, np.array(THESIS_EDGES), 12)
    np.testing.assert_array_equal(st.counts, counts)
    assert st.below == below == 0
    assert st.n_pairs == 301 * 300 // 2 == st.counts.sum()
    assert st.mean == pytest.approx(mean, rel=1e-13)
    assert [c[:2] for c in st.closest] == [c[:2] for c in closest]
    np.testing.assert_allclose([c[2] for c in st.closest], [c[2] for c in closest], rtol=1e-14)
    assert st.labels()[0] == "0.00-0.01" and st.labels()[-1] == "above 0.10"


def test_pair_statistics_custom_edges_ties_and_duplicates(rng, cpu_path):
    x = np.round(rng.random((80, 2)) * 4) / 4          # many equal distances and duplicates
    edges = [0.1, 0.25, 0.5, 0.75, 1.0]
    st = pair_statistics(x, edges=edges, closest=5, chunk_rows=9)
    counts, below, mean, closest = _reference_stats(x, np.array(edges), 5)
    np.testing.assert_array_equal(st.counts, counts)
    assert st.below == below > 0
    assert st.mean == pytest.approx(mean, rel=1e-13)
    assert [c[:2] for c in st.closest] == [c[:2] for c in closest]   # ties by (i, j)
    many = pair_statistics(x, edges=np.linspace(0.01, 2, 50), closest=0)   # bucketize path
    np.testing.assert_array_equal(
        many.counts, np.histogram(pdist(x), bins=np.r_[np.linspace(0.01, 2, 50), np.inf])[0])


def test_pair_statistics_chunked_equals_unchunked_on_features(rng, device, cpu_path):
    imgs = torch.as_tensor((rng.random((150, 16, 16)) > 0.5).astype(np.float64), device=device)
    fs = fm.features(imgs, orders=5, select=4, kind="magnitude")
    a = pair_statistics(fs, chunk_rows=5)
    b = pair_statistics(fs, chunk_rows=10_000)
    np.testing.assert_array_equal(a.counts, b.counts)
    assert a.closest == b.closest and a.mean == pytest.approx(b.mean, rel=1e-14)
    c = pair_statistics(fs.tensor.cpu().numpy(), chunk_rows=33)
    np.testing.assert_array_equal(a.counts, c.counts)


def test_nearest_neighbours_against_brute_force(rng):
    g = rng.random((200, 10))
    q = g[rng.permutation(200)[:50]] + 0.01 * rng.standard_normal((50, 10))
    idx, d = nearest_neighbours(q, g, k=3, chunk_rows=16)
    D = cdist(q, g)
    ref = np.argsort(D, axis=1, kind="stable")[:, :3]
    np.testing.assert_array_equal(idx, ref)
    np.testing.assert_allclose(d, np.take_along_axis(D, ref, 1), rtol=1e-13)
    i1, _ = nearest_neighbours(torch.as_tensor(q), torch.as_tensor(g))
    assert isinstance(i1, torch.Tensor)
    np.testing.assert_array_equal(i1[:, 0].numpy(), ref[:, 0])


def test_the_numba_kernel_gives_scipys_distances_and_the_torch_paths_counts(rng):
    """Over NUMBA_MIN_PAIRS pairs on the CPU: the kernel sums each pair's squared differences
    in feature order, as pdist does, so that in float64 its closest distances are pdist's to
    the bit; counts, mean and closest pairs equal the torch blocks' (float32: the counts may
    differ only for distances within float32 rounding of an edge)."""
    from fastmoments.recognition import distance

    x = rng.random((1500, 8)) * 0.1          # 1.12 million pairs
    assert 1500 * 1499 // 2 >= distance.NUMBA_MIN_PAIRS
    fast = pair_statistics(x, closest=10, progress=False)
    counts, below, mean, closest = _reference_stats(x, np.array(THESIS_EDGES), 10)
    np.testing.assert_array_equal(fast.counts, counts)
    assert fast.below == below
    assert fast.mean == pytest.approx(mean, rel=1e-12)
    assert [c[:2] for c in fast.closest] == [c[:2] for c in closest]
    assert [c[2] for c in fast.closest] == [c[2] for c in closest]
    x32 = x.astype(np.float32)
    a = pair_statistics(x32, closest=10, progress=False)
    d32 = pdist(x32.astype(np.float64))
    near = np.abs(d32[:, None] - np.array(THESIS_EDGES)[None]).min(1) < 1e-6
    ref = np.histogram(d32[~near], bins=np.r_[THESIS_EDGES, np.inf])[0]
    assert np.abs(a.counts - ref).sum() <= 2 * near.sum()
    assert a.mean == pytest.approx(mean, rel=1e-6)


def test_distance_errors():
    with pytest.raises(ValueError, match="feats must hold at least two vectors"):
        pair_statistics(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="edges must be a finite increasing"):
        pair_statistics(np.zeros((3, 3)), edges=[0.2, 0.1])
    with pytest.raises(ValueError, match="feats contains NaN"):
        pair_statistics(np.array([[0.0], [np.inf]]))
    with pytest.raises(ValueError, match="b must have 3 features"):
        feature_distances(np.zeros((2, 3)), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="k must be <= 2"):
        nearest_neighbours(np.zeros((2, 3)), np.zeros((2, 3)), k=3)
    with pytest.raises(ValueError, match="gallery must have 3 features"):
        nearest_neighbours(np.zeros((2, 3)), np.zeros((2, 4)))
    with pytest.raises(ValueError, match=r"a must be \(n_vectors, n_features\)"):
        feature_distances(np.zeros((2, 3, 4)))


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_no_vectors(dtype):
    """(0, 6) complex features: torch could not reshape 0 rows to (0, -1) (a RuntimeError)."""
    assert fm.feature_distances(np.zeros((0, 6), dtype)).shape == (0, 0)
    assert fm.feature_distances(np.zeros((0, 6), dtype), np.ones((2, 6), dtype)).shape == (0, 2)
    with pytest.raises(ValueError, match="feats must hold at least two vectors, got 0"):
        fm.pair_statistics(np.zeros((0, 6), dtype))


def test_pair_statistics_of_a_tensor_that_requires_grad():
    x = torch.rand(6, 3, dtype=torch.float64, requires_grad=True)
    got = fm.pair_statistics(x, closest=2)
    ref = fm.pair_statistics(x.detach().numpy().copy(), closest=2)
    assert got.counts.tolist() == ref.counts.tolist() and got.closest == ref.closest
    assert fm.feature_distances(x).requires_grad  # distances themselves stay differentiable
