r"""Distances between moment feature vectors (equations 6.4-6.5 of the
:ref:`Zernike thesis <bib-zernike-thesis>`) and all-pairs statistics.

The thesis measures how far apart two characters are by the Euclidean distance of their
feature vectors: for complex features :math:`d(v_i, v_j) = (\sum_k |f_{ki} - f_{kj}|^2)^{1/2}`
with :math:`|\cdot|` the magnitude of a complex difference (Eq. 6.4), for real parts and
magnitudes the usual :math:`(\sum_k (f_{ki} - f_{kj})^2)^{1/2}` (Eq. 6.5). A
:class:`~fastmoments.recognition.FeatureSet` of kind ``"complex"`` stores each moment as a
``(Re, Im)`` column pair, so both are one Euclidean distance on its real matrix.

:func:`pair_statistics` goes over all :math:`N(N-1)/2` pairs of a set (22.9 million for the
6,763 GB2312 characters) in blocks of rows sized from the memory budget, on the device of the
features (a GPU when they are on CUDA): for each block it forms the distances to every later
row by direct differences (never the :math:`|a|^2 + |b|^2 - 2ab` shortcut, which loses small
distances to cancellation), counts them into the histogram bins, adds them to the running sum,
and keeps the closest pairs seen so far.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._array import as_tensor, resolve_device, to_output
from .._memory import memory_budget as _memory_budget
from .._memory import rows_per_chunk
from .._progress import progress as _progress
from .._validate import check_int
from .featureset import FeatureSet

__all__ = ["THESIS_EDGES", "PairStatistics", "feature_distances", "nearest_neighbours",
           "pair_statistics"]

#: Bin edges of the thesis's Table 6.4: 0-0.01, ..., 0.09-0.10, and above 0.10.
THESIS_EDGES = tuple(round(0.01 * i, 2) for i in range(11))


def _matrix(x: Any, name: str, device: Any = None) -> tuple[torch.Tensor, Any]:
    if isinstance(x, FeatureSet):
        t = x.tensor
        kind = x.kind_in
        if device is not None:
            t = t.to(resolve_device(device))
        return t, kind
    t, kind = as_tensor(x, name, min_ndim=2, allow_complex=True, device=device)
    if t.ndim != 2:
        raise ValueError(f"{name} must be (n_vectors, n_features), got shape {tuple(t.shape)}")
    if t.is_complex():  # Eq. 6.4: |f_i - f_j| of complex entries = Euclidean on (Re, Im)
        t = torch.view_as_real(t).reshape(t.shape[0], 2 * t.shape[1])  # also for 0 rows
    return t, kind


def _cdist(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.cdist(a.unsqueeze(0), b.unsqueeze(0),
                       compute_mode="donot_use_mm_for_euclid_dist")[0]


def feature_distances(a: Any, b: Any = None, *, device: Any = None) -> Any:
    r"""Euclidean distances between feature vectors (equations 6.4-6.5 of the
    :ref:`Zernike thesis <bib-zernike-thesis>`).

    Parameters
    ----------
    a : FeatureSet or array_like
        ``(n_a, F)`` real features, or complex features (each distance then uses the
        magnitudes of the complex differences, Eq. 6.4).
    b : FeatureSet or array_like, optional
        ``(n_b, F)``; default ``a``.
    device : str or torch.device, optional
        Where to compute (default: where ``a`` is).

    Returns
    -------
    array
        ``(n_a, n_b)`` distances, NumPy if ``a`` was NumPy (or a NumPy-built feature set).

    Examples
    --------
    >>> import numpy as np
    >>> v = np.array([[1 + 1j, 0], [1 - 2j, 4]])
    >>> feature_distances(v).round(6).tolist()
    [[0.0, 5.0], [5.0, 0.0]]
    """
    ta, kind = _matrix(a, "a", device)
    tb = ta if b is None else _matrix(b, "b", ta.device)[0]
    if tb.shape[1] != ta.shape[1]:
        raise ValueError(f"b must have {ta.shape[1]} features like a, got shape "
                         f"{tuple(tb.shape)}")
    dt = torch.promote_types(ta.dtype, tb.dtype)
    return to_output(_cdist(ta.to(dt), tb.to(dt)), kind)


@dataclass(frozen=True)
class PairStatistics:
    """Statistics of the distances over all pairs ``i < j`` of a set of feature vectors.

    Attributes
    ----------
    edges : numpy.ndarray
        Bin edges ``e_0 < ... < e_B``.
    counts : numpy.ndarray
        ``(B + 1,)`` int64: pairs with ``e_k <= d < e_{k+1}``, and last the pairs with
        ``d >= e_B`` (pairs below ``e_0`` are in :attr:`below`).
    below : int
        Pairs with ``d < e_0``.
    n_pairs : int
        ``N (N - 1) / 2``.
    mean : float
        Average distance.
    closest : list of (i, j, d)
        The closest pairs, ascending by ``d`` (ties by ``(i, j)``).
    """

    edges: np.ndarray
    counts: np.ndarray
    below: int
    n_pairs: int
    mean: float
    closest: list[tuple[int, int, float]]

    def labels(self, fmt: str = "{:.2f}") -> list[str]:
        """Row labels like those of the :ref:`Zernike thesis <bib-zernike-thesis>`:
        ``"0.00-0.01"``, ..., ``"above 0.10"``."""
        e = self.edges
        return ([f"{fmt.format(e[k])}-{fmt.format(e[k + 1])}" for k in range(len(e) - 1)]
                + [f"above {fmt.format(e[-1])}"])


def pair_statistics(feats: Any, *, edges: Any = THESIS_EDGES, closest: int = 10,
                    device: Any = None, chunk_rows: int | None = None,
                    memory_budget: float | None = None,
                    progress: bool | None = None) -> PairStatistics:
    """Histogram, mean and closest pairs of the distances between all pairs of vectors.

    Parameters
    ----------
    feats : FeatureSet or array_like
        ``(N, F)`` feature vectors (complex entries allowed, Eq. 6.4).
    edges : sequence of float
        Increasing bin edges (default: the thesis's Table 6.4 bins).
    closest : int
        How many closest pairs to keep (0 for none).
    device : str or torch.device, optional
        Where to compute (default: where the features are; pass ``"cuda"`` for the GPU).
    chunk_rows : int, optional
        Rows per block (default: from the memory budget).
    memory_budget : float, optional
        Scratch memory in bytes (or a fraction of the free memory if <= 1).
    progress : bool, optional
        Show a progress bar (default: when there are more than 8 blocks).

    Returns
    -------
    PairStatistics

    Raises
    ------
    ValueError
        Fewer than two vectors, non-increasing edges, NaN or infinity.

    Notes
    -----
    Distances are computed in the dtype of the features. In float64 the counts equal SciPy's
    ``pdist`` + ``numpy.histogram`` exactly (tested); float32 distances carry a relative error
    of about ``1e-7``, so a pair that close to a bin edge may land in the neighbouring bin (none
    of the 22.9 million GB2312 pairs did, in ``benchmarks/features_characters.py``).

    On the CPU, from :data:`NUMBA_MIN_PAIRS` pairs, one compiled pass (numba) takes every pair's
    distance, bin and running sum without storing the distances; it sums the squared
    differences in feature order as ``pdist`` does, so float64 distances are SciPy's to the bit.
    Below that size, and on a GPU, blocks of distances are computed by torch.

    Examples
    --------
    >>> import numpy as np
    >>> st = pair_statistics(np.array([[0.0], [0.005], [0.5]]), closest=1)
    >>> st.counts.tolist(), st.closest
    ([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2], [(0, 1, 0.005)])
    """
    x, _ = _matrix(feats, "feats", device)
    x = x.detach()  # counts and a few pairs: nothing to differentiate
    n = int(x.shape[0])
    if n < 2:
        raise ValueError(f"feats must hold at least two vectors, got {n}")
    closest = check_int("closest", closest, minimum=0)
    e = np.asarray(edges, dtype=np.float64)
    if e.ndim != 1 or e.size < 1 or not np.all(np.isfinite(e)) or np.any(np.diff(e) <= 0):
        raise ValueError(f"edges must be a finite increasing sequence, got {edges!r}")
    dev = x.device
    te = torch.as_tensor(e, dtype=x.dtype, device=dev)
    if chunk_rows is None:
        # distances plus comparison and index scratch per row of a block
        per_row = n * (x.element_size() * 2 + 2)
        chunk_rows = rows_per_chunk(per_row, _memory_budget(dev, memory_budget) // 2, n,
                                    what=f"all-pairs distances of {n} vectors")
        # blocks of at most ~n/16 rows on a CPU (~n/4 on a GPU): the triangle wastes little
        # and, on a CPU, blocks stay in cache
        parts, least = (4, 1024) if dev.type == "cuda" else (16, 256)
        chunk_rows = min(chunk_rows, max(least, -(-n // parts)))
    chunk_rows = check_int("chunk_rows", chunk_rows, minimum=1)
    nb = e.size + 1
    if dev.type == "cpu" and n * (n - 1) // 2 >= NUMBA_MIN_PAIRS and _numba_pairs() is not None:
        return _pair_statistics_numba(x, e, closest, chunk_rows, progress)

    counts = torch.zeros(nb, dtype=torch.int64, device=dev)
    total = torch.zeros((), dtype=torch.float64, device=dev)
    best_d = torch.empty(0, dtype=x.dtype, device=dev)
    best_i = torch.empty(0, dtype=torch.int64, device=dev)
    starts = range(0, n - 1, chunk_rows)
    for s in _progress(starts, total=len(starts), desc="pair distances", show=progress):
        stop = min(n - 1, s + chunk_rows)
        r = stop - s
        d = _cdist(x[s:stop], x[s:])                      # (r, n - s): pairs (i, j >= s)
        # count and sum everything, then take out the pairs j <= i, which all lie in the
        # small square d[:, :r]
        idx = torch.bucketize(d, te, right=True, out_int32=True)
        tri = torch.ones(r, r, dtype=torch.bool, device=dev).tril()
        counts += torch.bincount(idx.reshape(-1), minlength=nb)
        counts -= torch.bincount(idx[:, :r][tri], minlength=nb)
        total += d.sum(dtype=torch.float64) - d[:, :r][tri].sum(dtype=torch.float64)
        if closest:
            if best_d.numel() >= closest:
                kth = torch.topk(best_d, closest, largest=False).values.max()
                hit = torch.nonzero(d <= kth)
                hit = hit[hit[:, 1] > hit[:, 0]]            # j > i
            else:
                upper = torch.ones(r, d.shape[1], dtype=torch.bool, device=dev).triu(1)
                flat = d.masked_fill(~upper, float("inf")).reshape(-1)
                pos = torch.topk(flat, min(closest, flat.numel()), largest=False).indices
                hit = torch.stack([pos // d.shape[1], pos % d.shape[1]], dim=1)
            vals = d[hit[:, 0], hit[:, 1]]
            best_d = torch.cat([best_d, vals])
            best_i = torch.cat([best_i, (hit[:, 0] + s) * n + (hit[:, 1] + s)])
            if best_d.numel() > 4 * closest:
                # keep every pair tied with the k-th distance: ties are ordered at the end
                kth = torch.topk(best_d, closest, largest=False).values.max()
                keep = best_d <= kth
                best_d, best_i = best_d[keep], best_i[keep]
    c = counts.cpu().numpy()
    n_pairs = n * (n - 1) // 2
    out_pairs: list[tuple[int, int, float]] = []
    if closest:
        bd = best_d.cpu().numpy().astype(np.float64)
        bi = best_i.cpu().numpy()
        ok = np.isfinite(bd)
        bd, bi = bd[ok], bi[ok]
        order = np.lexsort((bi, bd))[:closest]
        out_pairs = [(int(bi[k] // n), int(bi[k] % n), float(bd[k])) for k in order]
    return PairStatistics(edges=e, counts=c[1:], below=int(c[0]),
                          n_pairs=n_pairs, mean=float(total.item()) / n_pairs,
                          closest=out_pairs)


#: Pairs from which :func:`pair_statistics` runs the numba kernel on the CPU (one pass, no
#: distance matrix; 2.6-4.5x faster than the torch blocks for 22.9 million pairs on 2 cores).
#: Below it the torch blocks run: they need no compilation, which takes some seconds the first
#: time the kernel runs on a machine (numba caches it after that).
NUMBA_MIN_PAIRS = 1_000_000


def _numba_pairs() -> Any:
    """The numba kernel module, or ``None`` without numba (then the torch path runs)."""
    try:
        from . import _numba_pairs as kernels
    except ImportError:  # pragma: no cover - numba is a dependency
        return None
    return kernels


def _closest_of(dist: np.ndarray, pair: np.ndarray, n: int,
                closest: int) -> list[tuple[int, int, float]]:
    """The ``closest`` smallest ``(distance, pair)`` among candidates (``inf``: none)."""
    ok = np.isfinite(dist)
    dist, pair = dist[ok], pair[ok]
    order = np.lexsort((pair, dist))[:closest]
    return [(int(pair[q] // n), int(pair[q] % n), float(dist[q])) for q in order]


def _pair_statistics_numba(x: torch.Tensor, e: np.ndarray, closest: int, chunk_rows: int,
                           progress: bool | None) -> PairStatistics:
    """:func:`pair_statistics` on the CPU by one pass of :mod:`._numba_pairs` per block of
    ``chunk_rows`` rows (the distances are never stored)."""
    kernels = _numba_pairs()
    from .._numba import set_threads

    n = int(x.shape[0])
    xt = np.ascontiguousarray(x.numpy().T)
    edges = e.astype(xt.dtype)
    threads = torch.get_num_threads()
    set_threads(threads)
    blocks = 8 * threads
    counts = np.zeros(e.size + 1, dtype=np.int64)
    total = 0.0
    cand_d = np.empty(0)
    cand_i = np.empty(0, dtype=np.int64)
    starts = range(0, n - 1, chunk_rows)
    for s in _progress(starts, total=len(starts), desc="pair distances", show=progress):
        c, t, d, i = kernels.pair_stats(xt, s, min(n - 1, s + chunk_rows), edges, closest,
                                        blocks)
        counts += c
        total += t
        if closest:
            keep = _closest_of(np.concatenate([cand_d, d]), np.concatenate([cand_i, i]), n,
                               closest)
            cand_d = np.array([p[2] for p in keep])
            cand_i = np.array([p[0] * n + p[1] for p in keep], dtype=np.int64)
    n_pairs = n * (n - 1) // 2
    out_pairs = _closest_of(cand_d, cand_i, n, closest) if closest else []
    return PairStatistics(edges=e, counts=counts[1:], below=int(counts[0]), n_pairs=n_pairs,
                          mean=total / n_pairs, closest=out_pairs)


#: Bytes of ranking scores per block of queries in :func:`nearest_neighbours` on the CPU. For
#: 6763 queries against 6763 gallery vectors of 4-64 float64 features on a 2-core AMD
#: EPYC virtual machine, blocks of 4-8 MiB took 0.07-0.21 s, one block of all the queries
#: (the memory budget's choice) 0.25-0.30 s.
NN_CPU_BLOCK_BYTES = 4 << 20


def nearest_neighbours(queries: Any, gallery: Any, *, k: int = 1, device: Any = None,
                       chunk_rows: int | None = None,
                       memory_budget: float | None = None) -> tuple[Any, Any]:
    r"""The ``k`` nearest gallery vectors of each query (Euclidean, equations 6.4-6.5 of the
    :ref:`Zernike thesis <bib-zernike-thesis>`).

    Parameters
    ----------
    queries : FeatureSet or array_like
        ``(n_q, F)`` feature vectors.
    gallery : FeatureSet or array_like
        ``(n_g, F)`` feature vectors.
    k : int
        Neighbours per query.
    device, chunk_rows, memory_budget
        As in :func:`pair_statistics`.

    Returns
    -------
    index : array
        ``(n_q, k)`` int64 gallery rows, nearest first.
    distance : array
        ``(n_q, k)`` distances (computed by direct differences).

    Notes
    -----
    Candidates are ranked by :math:`|g|^2 - 2\,q \cdot g` (one matrix product per block of
    queries, the fast form of :math:`|q - g|^2`); in float64 its rounding (about
    :math:`10^{-16} |g|^2`) matters only for exact ties, which go to the lower gallery row when
    ``k = 1``. Use float64 features when near-ties matter.

    Examples
    --------
    >>> import numpy as np
    >>> idx, d = nearest_neighbours(np.array([[0.1], [0.9]]), np.array([[0.0], [1.0]]))
    >>> idx.ravel().tolist(), d.ravel().round(3).tolist()
    ([0, 1], [0.1, 0.1])
    """
    q, kind = _matrix(queries, "queries", device)
    g = _matrix(gallery, "gallery", q.device)[0]
    if g.shape[1] != q.shape[1]:
        raise ValueError(f"gallery must have {q.shape[1]} features like queries, got shape "
                         f"{tuple(g.shape)}")
    k = check_int("k", k, minimum=1, maximum=int(g.shape[0]))
    dt = torch.promote_types(q.dtype, g.dtype)
    q, g = q.to(dt), g.to(dt)
    if chunk_rows is None:
        per_row = int(g.shape[0]) * q.element_size() * 2
        chunk_rows = rows_per_chunk(per_row, _memory_budget(q.device, memory_budget) // 2,
                                    int(q.shape[0]), what="nearest-neighbour distances")
        if q.device.type == "cpu":
            # score blocks of about NN_CPU_BLOCK_BYTES stay in cache for the argmin
            rows = NN_CPU_BLOCK_BYTES // (int(g.shape[0]) * q.element_size())
            chunk_rows = min(chunk_rows, max(16, rows))
    gg = g.square().sum(dim=1)
    idx_out, d_out = [], []
    for s in range(0, int(q.shape[0]), chunk_rows):
        qb = q[s: s + chunk_rows]
        # rank by |g|^2 - 2 q.g (the |q|^2 term is the same along a row): one matrix product
        score = torch.addmm(gg[None, :], qb, g.T, alpha=-2.0)
        if k == 1:
            ii = torch.argmin(score, dim=1, keepdim=True)   # first minimum: lower row on ties
        else:
            ii = torch.topk(score, k, dim=1, largest=False).indices
        # exact distances of the winners by direct differences, then order them
        dd = torch.linalg.vector_norm(qb[:, None, :] - g[ii], dim=-1)
        order = torch.argsort(dd, dim=1, stable=True)
        idx_out.append(torch.gather(ii, 1, order))
        d_out.append(torch.gather(dd, 1, order))
    return to_output(torch.cat(idx_out), kind), to_output(torch.cat(d_out), kind)
