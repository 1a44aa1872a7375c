"""Gaussian filters and Morlet CWTs along chunked axes of a dask array (each chunk with its
neighbours' samples over the kernel's support, or, for a Gaussian wider than the chunks,
prefix sums carried from chunk to chunk)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from functools import lru_cache, partial
from typing import Any

import dask.array as da
import numpy as np
from dask.base import tokenize
from dask.highlevelgraph import HighLevelGraph

from .._validate import check_choice, check_int, check_positive_float
from ..signal import CWT, MODES, GaussianFilter, Morlet
from ..signal._apply import normalize_axis
from ..signal.boundary import extension_indices
from ..signal.morlet import APPROXIMATIONS, METHODS
from ..signal.sliding import ENGINES, SFTBank
from ._features import _check_darr, _device_name
from ._workers import cached_factory, configure_threads

__all__ = ["cwt", "depth_of", "gaussian_filter", "gaussian_filter1d"]


# ---------------------------------------------------------------------- cached factories
@cached_factory("gaussian_filter", maxsize=64)
def _gaussian_plan(sigma: float, order: int, method: str, terms: int | None,
                   shift: int | None, truncate: float) -> GaussianFilter:
    return GaussianFilter(sigma, order=order, method=method, terms=terms, shift=shift,
                          truncate=truncate)


@lru_cache(maxsize=16)
def _auto_plan(sigma: float, order: int, terms: int | None, truncate: float) -> GaussianFilter:
    """The "auto" plan that decides the route on the client (not a worker's plan: kept out of
    :func:`plan_builds`' counts)."""
    return GaussianFilter(sigma, order=order, method="auto", terms=terms, truncate=truncate)


@cached_factory("cwt", maxsize=32)
def _cwt_plan(scales: tuple[float, ...], xi: float, method: str, approximation: str,
              terms: int | None, truncate: float) -> CWT:
    return CWT(scales, Morlet(xi), method=method, approximation=approximation, terms=terms,
               truncate=truncate)


def depth_of(plan: Any) -> int:
    """Samples of support on each side of a signal plan's kernel: the ``map_overlap`` depth.

    For a :class:`~fastmoments.signal.GaussianFilter` it is the plan's ``support`` (the
    widest kernel any of its calls may apply: with ``method="auto"`` the larger of the SFT
    bank's and the direct kernel's half-widths); for a
    :class:`~fastmoments.signal.MorletTransform` its bank's ``pad`` (the largest
    ``K_r + |n0_r|`` over the SFT rows, or ``W`` of a direct kernel); for a
    :class:`~fastmoments.signal.CWT`, the largest over its scales. Output sample ``n`` reads
    at most ``x[n - depth .. n + depth]``.

    Examples
    --------
    >>> from fastmoments.signal import GaussianFilter
    >>> plan = GaussianFilter(100.0, method="sft")
    >>> depth_of(plan) == plan.K
    True
    >>> auto = GaussianFilter(100.0)
    >>> depth_of(auto) >= max(auto.bank.pad, auto.direct_bank.pad)
    True
    """
    if hasattr(plan, "support") and not isinstance(plan, CWT):
        return int(plan.support)
    if isinstance(plan, CWT):
        return max(int(p.bank.pad) for p in plan.plans)
    bank = getattr(plan, "bank", None)
    if bank is None or not hasattr(bank, "pad"):
        raise TypeError(f"plan must be a GaussianFilter, MorletTransform or CWT, got "
                        f"{type(plan).__name__}")
    return int(bank.pad)


# ---------------------------------------------------------------------- lazy ends
def _runs(idx: np.ndarray) -> list[tuple[int, int, int]]:
    """Split an index array into runs ``(start, length, step)`` with step -1, 0 or +1."""
    out: list[tuple[int, int, int]] = []
    i, n = 0, len(idx)
    while i < n:
        if i + 1 == n:
            out.append((int(idx[i]), 1, 1))
            break
        step = int(idx[i + 1] - idx[i])
        if step not in (-1, 0, 1):
            out.append((int(idx[i]), 1, 1))
            i += 1
            continue
        j = i + 1
        while j + 1 < n and idx[j + 1] - idx[j] == step:
            j += 1
        out.append((int(idx[i]), j - i + 1, step))
        i = j + 1
    return out


def _gather_runs(x: da.Array, idx: np.ndarray, axis: int) -> da.Array:
    """``x`` taken at ``idx`` along ``axis``, built from slices (no fancy indexing)."""
    parts = []
    for start, length, step in _runs(idx):
        sl = [slice(None)] * x.ndim
        if step == 1:
            sl[axis] = slice(start, start + length)
            parts.append(x[tuple(sl)])
        elif step == -1:
            sl[axis] = slice(start - length + 1, start + 1)
            parts.append(da.flip(x[tuple(sl)], axis))
        else:
            sl[axis] = slice(start, start + 1)
            one = x[tuple(sl)]
            shape = list(one.shape)
            shape[axis] = length
            chunks = list(one.chunks)
            chunks[axis] = (length,)
            parts.append(da.broadcast_to(one, tuple(shape), chunks=tuple(chunks)))
    return parts[0] if len(parts) == 1 else da.concatenate(parts, axis=axis)


def _end(x: da.Array, idx: np.ndarray, axis: int, mode: str, cval: float) -> da.Array:
    if mode == "constant":
        shape = list(x.shape)
        shape[axis] = len(idx)
        chunks = list(x.chunks)
        chunks[axis] = (len(idx),)
        return da.full(tuple(shape), cval, dtype=x.dtype, chunks=tuple(chunks))
    part = _gather_runs(x, idx, axis)
    return part.rechunk({axis: -1})


def _end_indices(n: int, start: int, stop: int, mode: str) -> np.ndarray:
    """Indices into ``x[0:n]`` of the extended samples ``x[start:stop]`` (one end only).

    The rule of :func:`fastmoments.signal.boundary.extension_indices`, evaluated on the end
    alone: that function builds the indices of the whole extended signal (8 bytes a sample,
    8 GB for 10^9 samples). For short signals the two agree by construction (tested).
    """
    if n <= 4 * (stop - start) + 16:  # small: the plan's own function, exactly
        depth = max(-start, stop - n, 0)
        full = extension_indices(n, depth, depth, mode)
        return full[start + depth: stop + depth]
    j = np.arange(start, stop, dtype=np.int64)
    if mode == "reflect":
        j = np.mod(j, 2 * n)
        return np.where(j >= n, 2 * n - 1 - j, j)
    if mode == "mirror":
        j = np.mod(j, 2 * n - 2)
        return np.where(j >= n, 2 * n - 2 - j, j)
    if mode == "nearest":
        return np.clip(j, 0, n - 1)
    if mode == "wrap":
        return np.mod(j, n)
    return np.where((j < 0) | (j >= n), -1, j)  # constant


def _merge_small(chunks: Sequence[int], depth: int) -> tuple[int, ...]:
    """Merge neighbouring chunks until each holds at least ``depth`` samples."""
    out: list[int] = []
    acc = 0
    for c in chunks:
        acc += c
        if acc >= depth:
            out.append(acc)
            acc = 0
    if acc:
        if out:
            out[-1] += acc
        else:
            out.append(acc)
    return tuple(out)


def _take(block: np.ndarray, axis: int, start: int | None, stop: int | None) -> np.ndarray:
    sl = [slice(None)] * block.ndim
    sl[axis] = slice(start, stop)
    return block[tuple(sl)]


def _edges(block: np.ndarray, *, axis: int, depth: int) -> np.ndarray:
    """The first and the last ``depth`` samples of a block along ``axis``, side by side (a copy
    of ``2 * depth`` samples: what the neighbouring tasks need, and all that travels to them)."""
    return np.concatenate([_take(block, axis, 0, depth), _take(block, axis, -depth, None)],
                          axis=axis)


def _halo_block(prev_edges: np.ndarray, block: np.ndarray, next_edges: np.ndarray, *, fn: Any,
                axis: int, depth: int, out_axis: int) -> np.ndarray:
    """One output block: ``fn`` on the block with ``depth`` samples of each neighbour (the last
    of the previous block, the first of the next), trimmed back to the block."""
    n = block.shape[axis]
    if n == 0:
        return fn(block)
    buf = np.concatenate([_take(prev_edges, axis, depth, None), block,
                          _take(next_edges, axis, 0, depth)], axis=axis)
    return _take(fn(buf), out_axis, depth, depth + n)


def _halo_graph(xw: da.Array, left: da.Array, right: da.Array, axis: int, depth: int,
                fn: Any, meta: np.ndarray, new_axis: int | None) -> da.Array:
    """The graph of :func:`_along_axis`, written out: per block of ``xw``, one task copying its
    edges and one filtering it (``dask.array.map_overlap`` makes about seven, and
    ``map_blocks`` over ``.blocks`` views leaves alias tasks that the scheduler still runs).
    ``left``/``right``: the array's extension at the two ends (one block along ``axis``)."""
    k = xw.numblocks[axis]
    token = tokenize(xw.name, left.name, right.name, axis, depth, fn, new_axis)
    name_e, name_o = f"halo-edges-{token}", f"halo-filter-{token}"
    edges = partial(_edges, axis=axis, depth=depth)
    block_fn = partial(_halo_block, fn=partial(fn, mode="constant", cval=0.0), axis=axis,
                       depth=depth, out_axis=axis if new_axis is None else axis + 1)
    dsk: dict = {}
    for idx in np.ndindex(*xw.numblocks):
        i = idx[axis]

        def at(pos: int, idx: tuple = idx) -> tuple:
            return (*idx[:axis], pos, *idx[axis + 1:])

        # edges of the extended axis's blocks: left end (0), the chunks (1..k), right end (k+1)
        dsk[(name_e, *at(i + 1))] = (edges, (xw.name, *idx))
        if i == 0:
            dsk[(name_e, *at(0))] = (edges, (left.name, *at(0)))
        if i == k - 1:
            dsk[(name_e, *at(k + 1))] = (edges, (right.name, *at(0)))
        out_key = (name_o, *idx) if new_axis is None else (name_o, 0, *idx)
        dsk[out_key] = (block_fn, (name_e, *at(i)), (xw.name, *idx), (name_e, *at(i + 2)))
    graph = HighLevelGraph.from_collections(name_o, dsk, dependencies=[xw, left, right])
    chunks = xw.chunks if new_axis is None else ((new_axis,), *xw.chunks)
    return da.Array(graph, name_o, chunks, meta=meta)


def _along_axis(x: da.Array, axis: int, depth: int, mode: str, cval: float, fn: Any,
                meta: np.ndarray, new_axis: int | None, min_chunk: int = 0) -> da.Array:
    """Apply ``fn`` (a whole-signal transform along ``axis``, with keywords ``mode`` and
    ``cval``) chunk by chunk: every chunk sees ``depth`` real samples of its neighbours, the
    two ends of the array the mode's extension. ``new_axis``: the length of a leading axis
    that ``fn`` adds (the CWT's scales), or ``None``.

    The graph has two tasks per chunk: one copies the chunk's first and last ``depth``
    samples (on the worker that holds the chunk; only those ``2 depth`` samples travel to the
    neighbours' workers), one filters the chunk with its neighbours' samples around it. Chunks
    shorter than ``depth`` (or ``min_chunk``) are first merged with their neighbours, so that a
    halo always comes from one neighbour; the output has ``x``'s chunks.
    """
    want = x.chunks[axis]
    merged = _merge_small(want, max(depth, min_chunk, 1))
    xw = x if merged == want else x.rechunk({axis: merged})
    extra: dict[str, Any] = {}
    if new_axis is not None:
        extra = {"new_axis": 0, "chunks": ((new_axis,), *xw.chunks)}
    if len(merged) == 1 or depth == 0:
        # the whole axis in one chunk (or a pointwise filter): the one-shot transform per chunk
        y = xw.map_blocks(partial(fn, mode=mode, cval=cval), dtype=meta.dtype, meta=meta,
                          **extra)
    else:
        n = int(x.shape[axis])
        left = _end(xw, _end_indices(n, -depth, 0, mode), axis, mode, cval)
        right = _end(xw, _end_indices(n, n, n + depth, mode), axis, mode, cval)
        y = _halo_graph(xw, left, right, axis, depth, fn, meta, new_axis)
    out_axis = axis if new_axis is None else axis + 1
    if y.chunks[out_axis] != want:
        y = y.rechunk({out_axis: want})
    return y


def _prefix_applies(plan: GaussianFilter, n: int, chunk: int) -> bool:
    """Whether a Gaussian of method ``"sft"`` runs by prefix sums (:func:`_gaussian_prefix`):
    its window reaches beyond the largest chunk (a halo would pull whole neighbouring
    chunks), it does not fold onto the axis, and its rows are not attenuated (the ASFT's
    ``α > 0`` would make the prefix sums overflow)."""
    if plan.requested != "sft" or plan.uses_folded(n):
        return False
    bank = plan.bank
    return (isinstance(bank, SFTBank) and not np.any(bank.alpha)
            and depth_of(plan) > chunk)


def _extension(x: da.Array, n: int, start: int, stop: int, mode: str, cval: float,
               chunk: int) -> da.Array:
    """The ``mode`` extension ``x[start:stop]`` beyond one end (time last), in chunks of at
    most ``chunk`` samples."""
    if mode == "constant":
        return da.full((*x.shape[:-1], stop - start), cval, dtype=x.dtype,
                       chunks=(*x.chunks[:-1], chunk))
    part = _gather_runs(x, _end_indices(n, start, stop, mode), x.ndim - 1)
    return part.rechunk({x.ndim - 1: chunk})


def _row_totals(block: np.ndarray, start: int, omega: np.ndarray) -> np.ndarray:
    """``Σ_i e^{-iω_r i} x[i]`` over one chunk (time last, first sample at ``i = start``):
    ``(..., rows)``, complex128."""
    out = np.empty((*block.shape[:-1], len(omega)), dtype=np.complex128)
    i = np.arange(start, start + block.shape[-1], dtype=np.float64)
    for r, om in enumerate(omega):
        out[..., r] = block.astype(np.float64) @ np.exp(-1j * om * i)
    return out


def _row_scan(totals: list) -> np.ndarray:
    """The running sums before each chunk: ``(n_chunks + 1, ..., rows)``."""
    t = np.stack(totals)
    out = np.zeros((len(totals) + 1, *t.shape[1:]), dtype=np.complex128)
    np.cumsum(t, axis=0, out=out[1:])
    return out


def _prefix_block(blocks: list, ids: list, prefix: np.ndarray, *, starts: np.ndarray,
                  a: int, b: int, rows: tuple, dtype: np.dtype) -> np.ndarray:
    """Output samples ``[a, b)`` of :func:`_gaussian_prefix` from the chunks ``ids`` of the
    extended signal (``starts``: each chunk's first index, in the signal's coordinates)."""
    omega, half, shift, mu, nu = rows
    chunk = dict(zip(ids, blocks, strict=True))
    length = b - a

    def q(om: float, u: int, r: int) -> np.ndarray:
        """``Q_r[u .. u + length)``: the prefix sums at those (signal) indices."""
        out = np.empty((*blocks[0].shape[:-1], length), dtype=np.complex128)
        pos = u
        while pos < u + length:
            c = int(np.searchsorted(starts, pos, side="right")) - 1
            blk = chunk[c]
            i = np.arange(starts[c], starts[c] + blk.shape[-1], dtype=np.float64)
            local = np.cumsum(blk.astype(np.float64) * np.exp(-1j * om * i), axis=-1)
            stop = min(u + length, int(starts[c]) + blk.shape[-1])
            out[..., pos - u: stop - u] = (local[..., pos - int(starts[c]): stop - int(starts[c])]
                                           + prefix[c][..., r, None])
            pos = stop
        return out

    y = np.zeros((*blocks[0].shape[:-1], length))
    for r, om in enumerate(omega):
        m = a + int(shift[r])
        z = q(om, m + int(half[r]), r) - q(om, m - int(half[r]) - 1, r)
        z *= np.exp(1j * om * np.arange(m, m + length, dtype=np.float64))
        y += (mu[r] * z.real - nu[r] * z.imag).real
    return y.astype(dtype)


def _gaussian_prefix(darr: da.Array, ax: int, plan: GaussianFilter, mode: str,
                     cval: float) -> da.Array:
    """A Gaussian SFT whose window is wider than the chunks, in memory bounded by the chunk:
    each row's windowed sum as the difference of two prefix sums.

    The bank's output (:meth:`~fastmoments.signal.sliding.SFTBank.kernel`, ``α = 0``) is
    ``y[n] = Re Σ_r (μ_r Re Z_r[n] - ν_r Im Z_r[n])`` with
    ``Z_r[n] = Σ_{|k| ≤ K_r} e^{iω_r k} x[m - k]``, ``m = n + n0_r``. With the prefix sums
    ``Q_r[t] = Σ_{i ≤ t} e^{-iω_r i} x_e[i]`` of the extended signal ``x_e``,
    ``Z_r[n] = e^{iω_r m} (Q_r[m + K_r] - Q_r[m - K_r - 1])``. The graph: per chunk of
    ``x_e`` (the array and its ``mode`` extension, in chunks of the array's largest chunk
    ``C``), one task of its rows' sums; per block of the other axes, one scan of those sums
    (``rows`` numbers per chunk and signal); per output chunk, one task that reads the (at
    most four per distinct ``(K_r, n0_r)``) chunks holding ``Q`` at its two windows. Every
    task holds a few chunks: none reads a σ-wide halo. Computed in complex128; the rounding
    of a difference of prefix sums grows as ``ε Σ_{i<t} |x_i|`` against the window sum
    (far below the fit's error for signals of up to ~10^9 samples).
    """
    from dask import delayed

    bank = plan.bank
    n = int(darr.shape[ax])
    size = max(darr.chunks[ax])
    e = int(bank.pad) + 1
    x = da.moveaxis(darr, ax, -1)
    xe = da.concatenate([_extension(x, n, -e, 0, mode, cval, size), x,
                         _extension(x, n, n, n + e, mode, cval, size)], axis=-1)
    xe = xe.rechunk({xe.ndim - 1: size})
    starts = np.concatenate(([0], np.cumsum(xe.chunks[-1])))[:-1] - e  # signal coordinates
    rows = tuple(np.asarray(v) for v in (bank.omega, bank.half, bank.shift, bank.mu, bank.nu))
    omega = rows[0]
    dtype = np.dtype(darr.dtype)
    edges = np.concatenate(([0], np.cumsum(x.chunks[-1])))
    blocks = xe.to_delayed()
    out = np.empty(blocks.shape[:-1], dtype=object)
    for idx in np.ndindex(*blocks.shape[:-1]):
        col = blocks[idx]
        shape = tuple(xe.chunks[d][i] for d, i in enumerate(idx))
        totals = [delayed(_row_totals, pure=True)(col[c], int(starts[c]), omega)
                  for c in range(len(col))]
        prefix = delayed(_row_scan, pure=True)(totals)
        parts = []
        for a, b in itertools.pairwise(edges):
            lo = [int(a) + int(s) - int(k) - 1 for k, s in zip(rows[1], rows[2], strict=True)]
            hi = [int(b) - 1 + int(s) + int(k) for k, s in zip(rows[1], rows[2], strict=True)]
            ids = sorted({int(np.searchsorted(starts, p, side="right")) - 1
                          for lo_r, hi_r in zip(lo, hi, strict=True)
                          for p in range(lo_r, hi_r + 1, size)} |
                         {int(np.searchsorted(starts, p, side="right")) - 1 for p in hi})
            task = delayed(_prefix_block, pure=True)(
                [col[c] for c in ids], ids, prefix, starts=starts, a=int(a), b=int(b),
                rows=rows, dtype=dtype)
            parts.append(da.from_delayed(task, shape=(*shape, int(b - a)), dtype=dtype))
        out[idx] = da.concatenate(parts, axis=-1)
    if out.ndim:  # the blocks of the other axes, each one block along time
        nested = np.empty((*out.shape, 1), dtype=object)
        nested[..., 0] = out
        y = da.block(nested.tolist())
    else:
        y = out[()]
    return da.moveaxis(y, -1, ax).rechunk(darr.chunks)


def _prepare(darr: Any, axis: Any, mode: Any, cval: Any) -> tuple[da.Array, int, str, float]:
    darr = _check_darr(darr, min_ndim=1)
    if darr.size == 0:
        raise ValueError(f"darr must hold at least one sample, got shape {darr.shape}")
    ax = normalize_axis(axis, darr.ndim)
    mode = check_choice("mode", mode, MODES)
    if isinstance(cval, bool) or not isinstance(cval, (int, float, np.integer, np.floating)):
        raise TypeError(f"cval must be a real number, got {cval!r}")
    dt = np.dtype("float64") if np.dtype(darr.dtype) == np.float64 else np.dtype("float32")
    if darr.dtype != dt:
        darr = darr.astype(dt)
    return darr, ax, mode, float(cval)


# ---------------------------------------------------------------------- block functions
def _to_device(block: np.ndarray, device: str | None) -> Any:
    if device is None:
        return block
    import torch

    return torch.from_numpy(np.ascontiguousarray(block)).to(device)


def _to_host(y: Any) -> np.ndarray:
    return y if isinstance(y, np.ndarray) else y.detach().cpu().numpy()


def _gaussian_block(block: np.ndarray, *, sigma: float, order: int, method: str,
                    terms: int | None, shift: int | None, truncate: float, axis: int,
                    engine: str, device: str | None, mode: str, cval: float) -> np.ndarray:
    if block.size == 0:
        return np.empty(block.shape, dtype=block.dtype)
    configure_threads()
    plan = _gaussian_plan(sigma, order, method, terms, shift, truncate)
    # a halo'd block (mode "constant") holds its neighbours or the array's extension on both
    # sides, so the mode only fills samples whose outputs are trimmed away; a whole axis in one
    # block is filtered with the caller's mode
    y = plan(_to_device(block, device), axis=axis, mode=mode, cval=cval, engine=engine,
             progress=False)
    return _to_host(y)


def _cwt_block(block: np.ndarray, *, scales: tuple[float, ...], xi: float, method: str,
               approximation: str, terms: int | None, truncate: float, axis: int,
               engine: str, device: str | None, mode: str, cval: float) -> np.ndarray:
    if block.size == 0:
        cdt = np.complex128 if block.dtype == np.float64 else np.complex64
        return np.empty((len(scales), *block.shape), dtype=cdt)
    configure_threads()
    plan = _cwt_plan(scales, xi, method, approximation, terms, truncate)
    y = plan(_to_device(block, device), axis=axis, mode=mode, cval=cval, engine=engine,
             progress=False)
    return _to_host(y)


# ---------------------------------------------------------------------- public functions
def _gaussian_1d(darr: da.Array, ax: int, sigma: Any, order: Any, mode: str, cval: float,
                 truncate: float, method: str, terms: int | None, shift: int | None,
                 eng: str, dev: str | None) -> da.Array:
    """One axis of a prepared (checked, float) dask array; ``sigma``/``order`` checked here,
    before the plan cache is consulted (``lru_cache`` takes True, 1 and 1.0 as one key)."""
    sigma = check_positive_float("sigma", sigma)
    order = check_int("order", order, minimum=0, maximum=2)
    n = int(darr.shape[ax])
    method, terms, truncate = _resolve_auto(sigma, order, method, terms, shift, truncate, n,
                                            darr.size // max(n, 1), str(darr.dtype), dev)
    plan = _gaussian_plan(sigma, order, method, terms, shift, truncate)
    fn = partial(_gaussian_block, sigma=sigma, order=order, method=method, terms=terms,
                 shift=shift, truncate=truncate, axis=ax, engine=eng, device=dev)
    meta = np.empty((0,) * darr.ndim, dtype=darr.dtype)
    # a kernel longer than the whole axis: the one-shot transform applies it folded onto the
    # axis (exact, O(n) memory, no SFT fit), so the axis is filtered in one piece (it is short
    # next to the kernel) and rechunked back
    whole = n if plan.uses_folded(n) else 0
    if _prefix_applies(plan, n, max(darr.chunks[ax])):
        return _gaussian_prefix(darr, ax, plan, mode, cval)
    return _along_axis(darr, ax, depth_of(plan), mode, cval, fn, meta, new_axis=None,
                       min_chunk=whole)


def _resolve_auto(sigma: float, order: int, method: str, terms: int | None, shift: int | None,
                  truncate: float, n: int, batch: int, dtype: str,
                  device: str | None) -> tuple[str, int | None, float]:
    """``method="auto"`` decided once for the whole axis, as the in-memory plan decides it for
    one call on the whole array (:meth:`GaussianFilter.choose`), and turned into the plan
    options that give that route's very kernel on every chunk: ``(method, terms, truncate)``.

    A chunk's own "auto" choice could differ from the whole axis' (the choice depends on the
    length), and the routes differ by up to the SFT fit's error; the direct route of "auto"
    is the direct method with its widened truncation (:attr:`GaussianFilter.direct_truncate`),
    its SFT route the SFT with the terms it fitted (:attr:`GaussianFilter.terms`).
    """
    if method != "auto" or n < 1:
        return method, terms, truncate
    plan = _auto_plan(sigma, order, terms, truncate)
    route = plan.choose(n, batch=max(batch, 1), dtype=dtype, device=device or "cpu")
    if route == "direct":
        return "direct", None, float(plan.direct_truncate)
    return "sft", int(plan.terms), truncate


def _options(method: Any, terms: Any, shift: Any, truncate: Any, engine: Any,
             device: Any) -> tuple:
    method = check_choice("method", method, METHODS)
    terms = None if terms is None else check_int("terms", terms, minimum=1)
    shift = None if shift is None else check_int("shift", shift, minimum=1)
    truncate = check_positive_float("truncate", truncate)
    eng = check_choice("engine", engine, ("auto", *ENGINES))
    return method, terms, shift, truncate, eng, _device_name(device)


def gaussian_filter1d(darr: Any, sigma: float, axis: int = -1, order: int = 0,
                      mode: str = "reflect", cval: float = 0.0, truncate: float = 4.0, *,
                      method: str = "auto", terms: int | None = None, shift: int | None = None,
                      engine: str = "auto", device: Any = None) -> da.Array:
    """Gaussian smoothing (or its derivative) along one axis of a dask array, lazily, as
    :func:`scipy.ndimage.gaussian_filter1d`; the axis may be chunked.

    Parameters
    ----------
    darr : dask.array.Array
        Real signals; ``axis`` holds time and may be split into any chunks.
    sigma : float
        Standard deviation in samples.
    axis : int
        The axis filtered.
    order : int
        0, 1 or 2 (smoothing, first or second derivative).
    mode : {"reflect", "nearest", "mirror", "wrap", "constant"}
        Extension beyond the two ends of the whole array, as in :mod:`scipy.ndimage`.
    cval : float
        Value outside the array for ``mode="constant"``.
    truncate : float
        Kernel half-width in σ of the direct method and of the folded kernel.
    method, terms, shift, engine
        As in :class:`fastmoments.signal.GaussianFilter` and its call.
    device : str or torch.device, optional
        Where each task computes (``"cuda"``: the worker's GPU); chunks come back as NumPy.

    Returns
    -------
    dask.array.Array
        ``darr``'s shape and chunks; float64 for float64 input, else float32.

    Raises
    ------
    TypeError
        ``darr`` not a dask array of numbers; non-integer ``axis`` or ``order``; bad ``cval``
        type.
    ValueError
        Empty input; bad ``axis``/``mode``/``sigma``/``order``/``method`` (checked when the
        graph is built); NaN or infinity (when a chunk is computed).

    Notes
    -----
    The filter is the plan :class:`fastmoments.signal.GaussianFilter` ``(sigma, order=order)``
    applied with ``axis=axis``, built once per worker process. The depth of the overlap is the
    plan's kernel support :func:`depth_of` (``K + n0`` of the SFT window, ``ceil(truncate σ)``
    for the direct method): output sample ``n`` reads ``x[n - depth .. n + depth]`` only.
    Chunks shorter than the depth are merged with their neighbours (so a support longer than
    a chunk works); then every chunk is filtered with the last ``depth`` samples of the
    previous chunk before it and the first ``depth`` of the next after it (at the two ends of
    the array, the mode's extension, built lazily from slices of the array), and trimmed back.
    Only those ``2 depth`` samples of each chunk travel between workers; the graph holds two
    tasks per chunk. The result equals the one-shot transform to rounding.

    **σ wider than the chunks.** Where the SFT's window (``depth``) is longer than the largest
    chunk, a halo would pull whole neighbouring chunks into every task (and merging chunks
    would grow them to the window). Then the SFT rows' windowed sums are taken as differences
    of prefix sums carried from chunk to chunk in order (:func:`_gaussian_prefix`): one task
    per chunk sums its rows, one scan per block of the other axes carries them (a few
    numbers per chunk), one task per output chunk reads the at most four chunks that hold
    its window's two ends. Every task holds a few chunks whatever σ, and the result equals
    the one-shot SFT to rounding (1e-11 relative, tested with σ several times the chunk and
    chunks that do not divide the axis). A kernel longer than the whole axis is applied
    folded, as in memory, on the axis in one piece.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from fastmoments.signal import GaussianFilter
    >>> x = np.random.default_rng(1).standard_normal(3000)
    >>> y = gaussian_filter1d(da.from_array(x, chunks=500), 40.0, mode="wrap")
    >>> ref = GaussianFilter(40.0)(x, mode="wrap")
    >>> bool(np.allclose(y.compute(scheduler="sync"), ref, rtol=0, atol=1e-12))
    True
    """
    darr, ax, mode, cval = _prepare(darr, axis, mode, cval)
    opts = _options(method, terms, shift, truncate, engine, device)
    return _gaussian_1d(darr, ax, sigma, order, mode, cval, opts[3], *opts[:3], *opts[4:])


def _per_axis(name: str, value: Any, n: int) -> list:
    """``value`` repeated for ``n`` axes, or a sequence of exactly ``n`` values."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        return [value] * n
    values = list(value)
    if len(values) != n:
        raise ValueError(f"{name} must be one value or one per filtered axis ({n}), got "
                         f"{len(values)} values")
    return values


def gaussian_filter(darr: Any, sigma: float | Sequence[float], order: int | Sequence[int] = 0,
                    mode: str | Sequence[str] = "reflect", cval: float = 0.0,
                    truncate: float = 4.0, *, axes: Sequence[int] | None = None,
                    method: str = "auto", terms: int | None = None, shift: int | None = None,
                    engine: str = "auto", device: Any = None, **removed: Any) -> da.Array:
    """Gaussian filter over every axis of a dask array (or ``axes``), lazily, as
    :func:`scipy.ndimage.gaussian_filter`; any axis may be chunked.

    Parameters
    ----------
    darr : dask.array.Array
        Real input of any shape, chunked in any way.
    sigma : float or sequence of float
        Standard deviation(s) in samples: one for every filtered axis, or one per axis.
    order : int or sequence of int
        Derivative order 0, 1 or 2 (per filtered axis).
    mode : {"reflect", "nearest", "mirror", "wrap", "constant"} or sequence of them
        Extension beyond the ends of the whole array (per filtered axis).
    cval : float
        Value outside the array for ``mode="constant"``.
    truncate : float
        As in :func:`gaussian_filter1d`.
    axes : sequence of int, optional
        The axes filtered, one after the other (default: all of them).
    method, terms, shift, engine, device
        As in :func:`gaussian_filter1d`.

    Returns
    -------
    dask.array.Array
        ``darr``'s shape and chunks; float64 for float64 input, else float32.

    Raises
    ------
    TypeError
        As :func:`gaussian_filter1d`, for non-integer axes, and for the removed ``axis=``
        keyword (one axis: :func:`gaussian_filter1d`, or ``axes=[axis]``).
    ValueError
        As :func:`gaussian_filter1d`, and for repeated or out-of-range axes, or a sequence
        of σ, orders or modes whose length is not the number of filtered axes.

    Notes
    -----
    The separable Gaussian is :func:`gaussian_filter1d` along each filtered axis in turn (one
    overlap per axis, each with that axis's depth), as scipy.ndimage does. It differs from
    :func:`scipy.ndimage.gaussian_filter` by the SFT fit of the kernel (relative RMSE ≤ 1e-4
    by default, ``terms=`` for more). To filter only the
    time axis of a batch of recordings, use :func:`gaussian_filter1d` (or ``axes=[-1]``).

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from fastmoments.signal import GaussianFilter
    >>> from scipy import ndimage
    >>> img = np.random.default_rng(0).random((64, 48))
    >>> y = gaussian_filter(da.from_array(img, chunks=(16, 24)), [3.0, 2.0], mode="nearest")
    >>> y = y.compute(scheduler="sync")
    >>> rows = GaussianFilter(3.0)(img, axis=0, mode="nearest")
    >>> cols = GaussianFilter(2.0)(rows, axis=1, mode="nearest")
    >>> bool(np.abs(y - cols).max() < 1e-12)
    True
    >>> bool(np.abs(y - ndimage.gaussian_filter(img, [3.0, 2.0], mode="nearest")).max() < 1e-4)
    True
    """
    if removed:
        if "axis" in removed:
            raise TypeError("gaussian_filter filters every axis, as scipy.ndimage.gaussian_filter; "
                            "axis= is gone: for one axis use gaussian_filter1d(darr, sigma, "
                            "axis=...) or gaussian_filter(darr, sigma, axes=[...])")
        raise TypeError(f"gaussian_filter() got an unexpected keyword argument "
                        f"{next(iter(removed))!r}")
    darr = _check_darr(darr, min_ndim=1)
    if axes is None:
        axs = list(range(darr.ndim))
    else:
        if isinstance(axes, (str, bytes)) or not isinstance(axes, (Sequence, np.ndarray)):
            axes = [axes]
        axs = [normalize_axis(a, darr.ndim, "axes") for a in axes]
        if len(set(axs)) != len(axs):
            raise ValueError(f"axes must not repeat an axis, got {list(axes)}")
    sigmas = _per_axis("sigma", sigma, len(axs))
    orders = _per_axis("order", order, len(axs))
    modes = _per_axis("mode", mode, len(axs))
    opts = _options(method, terms, shift, truncate, engine, device)
    out, _, _, cval = _prepare(darr, axs[0] if axs else -1, modes[0] if modes else "reflect",
                               cval)
    checked = [(check_positive_float("sigma", s), check_int("order", o, minimum=0, maximum=2),
                check_choice("mode", m, MODES))
               for s, o, m in zip(sigmas, orders, modes, strict=True)]
    for ax, (s, o, m) in zip(axs, checked, strict=True):
        out = _gaussian_1d(out, ax, s, o, m, cval, opts[3], *opts[:3], *opts[4:])
    return out


def cwt(darr: Any, scales: Sequence[float] | float, wavelet: Morlet | None = None,
        axis: int = -1, *, sampling_period: float = 1.0, mode: str = "reflect",
        cval: float = 0.0, method: str = "auto", approximation: str = "direct",
        terms: int | None = None, engine: str = "auto", truncate: float = 4.0,
        device: Any = None) -> tuple[da.Array, np.ndarray]:
    """Morlet continuous wavelet transform along one (chunked) axis of a dask array, lazily.

    Parameters
    ----------
    darr : dask.array.Array
        Real signals; ``axis`` holds time and may be split into any chunks.
    scales : float or sequence of float
        Scales σ in samples.
    wavelet : Morlet, optional
        Default ``Morlet(xi=6.0)``.
    axis : int
        The time axis.
    sampling_period, mode, cval, method, approximation, terms, engine, truncate
        As in :func:`fastmoments.signal.cwt`.
    device : str or torch.device, optional
        Where each task computes (``"cuda"``: the worker's GPU); chunks come back as NumPy.

    Returns
    -------
    coefficients : dask.array.Array
        ``(len(scales), *darr.shape)``, complex128 for float64 input, else complex64; one chunk
        along the scales, ``darr``'s chunks elsewhere.
    frequencies : numpy.ndarray
        ``ξ / (2π σ_i) / sampling_period``.

    Raises
    ------
    TypeError, ValueError
        As :func:`gaussian_filter1d`, and for bad scales or wavelet.

    Notes
    -----
    Depth: the largest kernel support over the scales (:func:`depth_of`); the ends and the
    chunk boundaries are handled as in :func:`gaussian_filter1d`. Each chunk's output holds every
    scale, ``len(scales)`` times the chunk's size in complex values: choose time chunks with
    that in mind.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> x = np.sin(np.arange(2048) / 7.0)
    >>> W, freqs = cwt(da.from_array(x, chunks=256), [4.0, 16.0])
    >>> W.shape, W.chunks[0], W.dtype
    ((2, 2048), (2,), dtype('complex128'))
    >>> from fastmoments.signal import cwt as one_shot
    >>> bool(np.allclose(W.compute(scheduler="sync"), one_shot(x, [4.0, 16.0])[0],
    ...                  rtol=0, atol=1e-12))
    True
    """
    darr, ax, mode, cval = _prepare(darr, axis, mode, cval)
    wavelet = Morlet() if wavelet is None else wavelet
    if not isinstance(wavelet, Morlet):
        raise TypeError(f"wavelet must be a fastmoments.Morlet, got {wavelet!r}")
    try:
        arr = np.atleast_1d(np.asarray(scales, dtype=np.float64))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"scales must be a real number or a sequence of them, got "
                        f"{scales!r}") from exc
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"scales must be a non-empty 1-D sequence, got shape {arr.shape}")
    if np.asarray(scales).dtype == bool:
        raise TypeError(f"scales must be real numbers, got booleans {scales!r}")
    sc = tuple(check_positive_float("scales", float(v)) for v in arr)
    method = check_choice("method", method, METHODS)
    approximation = check_choice("approximation", approximation, APPROXIMATIONS)
    terms = None if terms is None else check_int("terms", terms, minimum=1)
    truncate = check_positive_float("truncate", truncate)
    eng = check_choice("engine", engine, ("auto", *ENGINES))
    dev = _device_name(device)
    plan = _cwt_plan(sc, wavelet.xi, method, approximation, terms, truncate)
    freqs = plan.frequencies(sampling_period)
    fn = partial(_cwt_block, scales=sc, xi=wavelet.xi, method=method,
                 approximation=approximation, terms=terms, truncate=truncate, axis=ax,
                 engine=eng, device=dev)
    cdt = np.complex128 if darr.dtype == np.float64 else np.complex64
    meta = np.empty((0,) * (darr.ndim + 1), dtype=cdt)
    coef = _along_axis(darr, ax, depth_of(plan), mode, cval, fn, meta, new_axis=len(sc))
    return coef, freqs
