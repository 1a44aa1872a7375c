"""The chunked engine: a bank of SFT/ASFT filters as small dense matrix products.

A bank's output channel is ``y[n] = Σ_r comb_r(S_r[n])`` with ``comb_r(z) = A_r Re z + B_r Im z``
and the window sums (see :mod:`.sliding`; the signal index is shifted by ``off = n0 - K`` so that
output ``n`` reads the extended samples ``x̃[n + off .. n + off + L - 1]``, ``L = 2K + 1``)

    S_r[n] = Σ_{s=0}^{L-1} x̃[n + off + s] q_r^s,        q_r = e^{-α_r + iω_r}.

Cut the output into chunks of ``C`` samples. For ``n = cC + i`` (``0 ≤ i < C``)

    S[n] = locA[c, i] - q^L locB[c, i] + q^{C-i} S[(c+1)C],

    locA[c, i] = Σ_{s=i}^{C-1} x̃[cC + off + s] q^{s-i},   locB: the same at ``cC + off + L``.

Every factor has modulus ≤ 1, so the decomposition is stable for the SFT and the ASFT alike (no
history accumulates, unlike a prefix sum or a first-order recursion over the whole signal).
Summed over the rows, the two local terms are two ``C × C`` real (or complex) matrices ``H_A``,
``H_B`` applied to the chunk and to the chunk ``L`` samples later: the filter's near field, whose
cost does not depend on the number of rows. The far field is the anchor ``S[(c+1)C]`` (one
complex number per row and chunk) spread over the chunk by the ``2R × C`` matrix ``F``. The
anchors are windowed sums of the chunk totals ``σ[c] = Σ_{s<C} x̃[cC + off + s] q^s``:

    S[cC] = Σ_{j<F} q^{jC} σ[c + j] + q^{FC} pre[c + F],   F = ⌊L/C⌋,

with ``pre[c]`` the total of the first ``L mod C`` samples of chunk ``c``; they are formed in
float64 from float64 prefix sums (SFT, ``|q| = 1``) or a float64 recursion over chunks (ASFT).

All tables are computed in float64 from the bank's row parameters and rounded once to the working
precision. Per output sample the work is ``2C + 2R`` multiply-adds (real output), plus ``4R``
per sample of the window for the chunk totals; it is all matrix products, so it runs at
BLAS speed on the CPU and on tensor cores on the GPU (:mod:`.triton_sft`, which uses two levels
of chunks and the same tables).

Short windows are cheaper without the SFT: a row group whose ``L`` is small next to ``C`` plus its
rows' anchor work is applied as one product per chunk, the ``(C + L - 1)``-sample window of
``x̃`` times the ``(C + L - 1) × C`` Toeplitz matrix of the group's taps (the same kernel, so the
same result up to rounding; :func:`_toeplitz_cheaper` decides). On one CPU thread this takes a
64-scale CWT of 102400 samples from 58 to 51 ms (its 27 smallest scales).
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass

import numpy as np
import torch

from .._array import complex_dtype
from .boundary import extend
from .sliding import scan_linear

__all__ = ["CHUNK", "GroupTables", "check_out", "chunked_apply", "fused_eligible", "group_tables"]

CHUNK = 32
_SCRATCH_BYTES = 2 << 20  # float64 anchor scratch per block of groups (measured: 1-2 MiB best)


def _powers(alpha: np.ndarray, omega: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``q^e = e^{-α e} e^{iω e}`` for rows (first axis) and exponents ``e`` (float64/complex128).

    The phase ``ω e`` is reduced modulo 2π in float64 before the exponential.
    """
    e = np.asarray(e, dtype=np.float64)
    a = np.asarray(alpha, dtype=np.float64)[(...,) + (None,) * e.ndim]
    w = np.asarray(omega, dtype=np.float64)[(...,) + (None,) * e.ndim]
    phase = np.mod(w * e, 2 * np.pi)
    return np.exp(-a * e) * np.exp(1j * phase)


def _powers_bc(alpha: np.ndarray, omega: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``q^e`` with ``alpha``, ``omega`` and ``e`` broadcast together (no outer product)."""
    e = np.asarray(e, dtype=np.float64)
    return np.exp(-alpha * e) * np.exp(1j * np.mod(omega * e, 2 * np.pi))


@dataclass(frozen=True)
class GroupTables:
    """Float64 tables of one row group (rows sharing ``K``, ``n0`` and the output channel).

    Attributes
    ----------
    rows : slice
        The group's rows in the bank.
    channel, L, off, F, rem : int
        Output channel, window length ``2K + 1``, offset ``n0 - K``, ``⌊L/C⌋`` and ``L mod C``.
    q : numpy.ndarray
        ``(R,)`` complex128, ``e^{-α + iω}``.
    alpha, omega : numpy.ndarray
        ``(R,)`` row parameters.
    qmat, qpre : numpy.ndarray
        ``(C, R)`` complex128: ``q^s`` and the same with the rows ``s ≥ rem`` zeroed.
    ha, hb : numpy.ndarray
        ``(C, C)`` near-field matrices (complex128 for complex output, else float64):
        ``y_near[i] = Σ_s xA[s] ha[s, i] + Σ_s xB[s] hb[s, i]``.
    far : numpy.ndarray
        ``(2R, C)``: ``y_far[i] = Σ_r Re E_r far[r, i] + Im E_r far[R + r, i]``.
    comb_a, comb_b : numpy.ndarray
        ``(R,)``: the output is ``Σ_r comb_a[r] Re S_r + comb_b[r] Im S_r``.
    """

    rows: slice
    channel: int
    L: int
    off: int
    F: int
    rem: int
    q: np.ndarray
    alpha: np.ndarray
    omega: np.ndarray
    qmat: np.ndarray
    qpre: np.ndarray
    ha: np.ndarray
    hb: np.ndarray
    far: np.ndarray
    comb_a: np.ndarray
    comb_b: np.ndarray

    def taps(self) -> np.ndarray:
        """The group's kernel in window order, ``h[k] = Σ_r comb_r(q_r^k)`` for ``k < L``:
        ``y[n] = Σ_k x̃[n + off + k] h[k]`` (float64, complex128 for complex output)."""
        p = _powers(self.alpha, self.omega, np.arange(self.L))  # (R, L)
        a, b = self.comb_a[:, None], self.comb_b[:, None]
        return (a * p.real + b * p.imag).sum(0)


def group_tables(bank, chunk: int = CHUNK) -> list[GroupTables]:
    """The tables of every row group of ``bank`` (cached on the bank)."""
    key = ("chunked", chunk)
    if key in bank._tables:
        return bank._tables[key]
    out = []
    c = chunk
    s = np.arange(c)
    lag = s[:, None] - s[None, :]  # s - i
    upper = lag >= 0
    for r0, r1, ch, half, shift in bank.groups:
        alpha, omega = bank.alpha[r0:r1], bank.omega[r0:r1]
        q = np.exp(-alpha + 1j * omega)
        big_l = 2 * half + 1
        # comb_r(z) = A Re z + B Im z, A and B from Z = w^K S (see SFTBank.tables)
        wk = np.exp(half * (alpha - 1j * omega))
        a = bank.mu[r0:r1] * wk.real + bank.nu[r0:r1] * wk.imag
        b = bank.nu[r0:r1] * wk.real - bank.mu[r0:r1] * wk.imag
        if not bank.complex_output:
            a, b = a.real, b.real

        def comb(z, a=a, b=b):  # z: (R, ...) complex -> Σ_r A_r Re z_r + B_r Im z_r
            shape = (-1,) + (1,) * (z.ndim - 1)
            return (a.reshape(shape) * z.real + b.reshape(shape) * z.imag).sum(0)

        # the near and far fields depend on the lag s - i >= 0 only: combine the C powers
        # q^0 .. q^{C-1} (and q^L .. q^{L+C-1}) once and spread them over the C x C lags
        # (the same float64 operations on the same values as on the whole C x C grid, so
        # the same bits, at 1/C of the exponentials)
        near = comb(_powers(alpha, omega, s))[np.maximum(lag, 0)]
        far_lags = comb(_powers(alpha, omega, big_l + s))[np.maximum(lag, 0)]
        ha = np.where(upper, near, 0)
        hb = np.where(upper, -far_lags, 0)
        tail = _powers(alpha, omega, c - s)  # q^{C-i}: (R, C)
        far = np.concatenate([a[:, None] * tail.real + b[:, None] * tail.imag,  # Re E_r
                              b[:, None] * tail.real - a[:, None] * tail.imag])  # Im E_r
        qmat = _powers(alpha, omega, s).T  # (C, R)
        rem = big_l % c
        qpre = np.where((s < rem)[:, None], qmat, 0)
        out.append(GroupTables(rows=slice(r0, r1), channel=ch, L=big_l, off=shift - half,
                               F=big_l // c, rem=rem, q=q, alpha=alpha, omega=omega,
                               qmat=qmat, qpre=qpre, ha=ha, hb=hb, far=far, comb_a=a,
                               comb_b=b))
    bank._tables[key] = out
    return out


def _interleave(m: np.ndarray) -> np.ndarray:
    """``(K, C)`` complex -> ``(K, 2C)`` real with columns ``re_0, im_0, re_1, ...`` (so that a
    real product with it can be viewed as complex without a copy)."""
    return np.stack([m.real, m.imag], axis=-1).reshape(m.shape[0], -1)


class _Stacked:
    """The tables of all row groups of a bank, padded to ``R_max`` rows and stacked (torch)."""

    def __init__(self, groups: list[GroupTables], chunk: int, dtype: torch.dtype,
                 device: torch.device) -> None:
        self.chunk = chunk
        self.n_groups = len(groups)
        self.r_max = rm = max(g.q.shape[0] for g in groups)
        self.F = np.array([g.F for g in groups])
        self.sft = all(np.all(g.alpha == 0) for g in groups)
        cplx = np.iscomplexobj(groups[0].ha)

        def pad_rows(v, fill=0.0):
            out = np.full(rm, fill, dtype=v.dtype)
            out[: len(v)] = v
            return out

        alpha = np.stack([pad_rows(g.alpha) for g in groups])  # (G, R_max)
        omega = np.stack([pad_rows(g.omega) for g in groups])
        ha, hb, far, tot = [], [], [], []
        for g in groups:
            r = g.q.shape[0]
            fr = np.zeros((2 * rm, g.far.shape[1]), dtype=g.far.dtype)
            fr[0: 2 * r: 2], fr[1: 2 * r: 2] = g.far[:r], g.far[r:]  # rows re_0, im_0, ...
            qm = np.zeros((chunk, 2 * rm), dtype=np.complex128)
            qm[:, :r], qm[:, rm: rm + r] = g.qmat, g.qpre
            if cplx:
                ha.append(_interleave(g.ha))
                hb.append(_interleave(g.hb))
                far.append(_interleave(fr))
            else:
                ha.append(g.ha)
                hb.append(g.hb)
                far.append(fr)
            tot.append(_interleave(qm))  # σ then pre, (re, im) pairs

        def t(a):
            return torch.as_tensor(np.ascontiguousarray(np.stack(a)), device=device).to(dtype)

        self.ha, self.hb, self.far, self.tot = t(ha), t(hb), t(far), t(tot)
        self.alpha, self.omega = alpha, omega
        self.device = device
        c64 = functools.partial(torch.as_tensor, device=device, dtype=torch.complex128)
        self.tail = c64(_powers_bc(alpha, omega, self.F[:, None] * chunk))  # q^{FC}: (G, R)
        self.tail_w = self.tail.to(complex_dtype(dtype))  # the same in the working precision
        self.rho = c64(_powers_bc(alpha, omega, chunk))  # q^C
        self.rho_f = c64(_powers_bc(alpha * chunk, omega * chunk, self.F[:, None]))  # q^{FC}
        self._rot: dict = {}
        self._rot_conj: torch.Tensor | None = None
        self._index: dict = {}

    def rotations(self, n_sig: int) -> torch.Tensor:
        """``ρ^c = q^{cC}``, ``(G, n_sig, R_max)`` complex128."""
        rot = self._rot.get(n_sig)  # one lookup: another thread may replace the cache
        if rot is None:
            c = np.arange(n_sig)
            table = _powers(self.alpha * self.chunk, self.omega * self.chunk, c)  # (G, R, n)
            rot = torch.as_tensor(table.transpose(0, 2, 1), device=self.device)
            self._rot = {n_sig: rot}
        return rot

    def rotations_conj(self, n_sig: int) -> torch.Tensor:
        """``ρ^{-c}`` for ``|ρ| = 1`` (the conjugate of :meth:`rotations`, materialised)."""
        rc = self._rot_conj  # read once: another thread may replace it
        if rc is None or rc.shape[1] != n_sig:
            rc = self._rot_conj = self.rotations(n_sig).conj().resolve_conj()
        return rc

    def channels(self, chans: list[int]) -> torch.Tensor:
        """The output channels ``chans`` as an index tensor on the device, made once (a copy
        from host memory in every call would keep the call out of a CUDA graph)."""
        key = ("channels", *chans)
        out = self._index.get(key)
        if out is None:
            if len(self._index) > 256:
                self._index.clear()
            out = self._index[key] = torch.tensor(chans, device=self.device)
        return out

    def index(self, n_sig: int, count: int, gs: slice) -> torch.Tensor:
        """Flat indices ``i * n_sig + c + F_g`` for ``c = 1 .. count`` and the groups ``gs``
        (``i`` counting from the first of them), ``(len(gs) * count,)``."""
        key = (n_sig, count, gs.start, gs.stop)
        out = self._index.get(key)  # one lookup: another thread may clear the cache
        if out is None:
            if len(self._index) > 256:
                self._index.clear()
            c = np.arange(1, count + 1)
            f = self.F[gs]
            idx = np.arange(len(f))[:, None] * n_sig + c[None, :] + f[:, None]
            out = self._index[key] = torch.as_tensor(idx.reshape(-1), device=self.device)
        return out


def _stacked(bank, groups, chunk, dtype, device) -> _Stacked:
    key = ("chunked-stacked", chunk, dtype, str(device))
    if key not in bank._tables:
        bank._tables[key] = _Stacked(groups, chunk, dtype, device)
    return bank._tables[key]


# Anchor cost in multiply-adds per row and chunk (float64 passes over the chunk totals, measured
# on the CPU against the matrix products; see _toeplitz_mask).
_ANCHOR_COST = 1000


def _toeplitz_cheaper(L: int, r: int, chunk: int, k: int) -> bool:
    """Whether one Toeplitz product of a ``(C + L - 1)``-sample window per chunk costs less
    than the SFT's near field, far field, chunk totals and anchors (``k = 2`` for complex
    output): ``k C (C + L - 1) ≤ k C (2C + 2R) + 4RC + A R`` multiply-adds per chunk."""
    toe = k * chunk * (chunk + L - 1)
    sft = k * chunk * (2 * chunk + 2 * r) + 4 * r * chunk + _ANCHOR_COST * r
    return toe <= sft


def _toeplitz_mask(bank, groups: list[GroupTables], chunk: int,
                   toeplitz: bool | None) -> np.ndarray:
    """Which row groups are applied as one Toeplitz product (short windows) instead of by the
    SFT: by :func:`_toeplitz_cheaper` for ``toeplitz=None``, else all or none."""
    if toeplitz is not None:
        return np.full(len(groups), bool(toeplitz))
    key = ("toeplitz-mask", chunk)
    if key not in bank._tables:
        k = 2 if bank.complex_output else 1
        bank._tables[key] = np.array([_toeplitz_cheaper(g.L, g.q.shape[0], chunk, k)
                                      for g in groups])
    return bank._tables[key]


def _toeplitz_table(bank, groups: list[GroupTables], i: int, chunk: int, dtype: torch.dtype,
                    device: torch.device) -> torch.Tensor:
    """``(C + L - 1, width)``: ``T[s, i] = h[s - i]`` for ``0 ≤ s - i < L`` (the group's taps,
    :meth:`GroupTables.taps`), complex columns as interleaved (re, im) pairs (cached)."""
    key = ("toeplitz", chunk, i, dtype, str(device))
    if key not in bank._tables:
        g = groups[i]
        h = g.taps()
        s = np.arange(chunk + g.L - 1)[:, None] - np.arange(chunk)[None, :]  # s - i
        t = np.where((s >= 0) & (s < g.L), h[np.clip(s, 0, g.L - 1)], 0)
        if np.iscomplexobj(t):
            t = _interleave(t)
        bank._tables[key] = torch.as_tensor(np.ascontiguousarray(t), device=device).to(dtype)
    return bank._tables[key]


def _windows(xe: torch.Tensor, g: GroupTables, left: int, count: int,
             chunk: int) -> torch.Tensor:
    """Overlapping windows ``(B, count, C + L - 1)`` of the extended signals: row ``c`` holds
    ``x̃[cC + off .. cC + off + C + L - 2]`` (a view)."""
    a0 = left + g.off
    w = chunk + g.L - 1
    return xe[:, a0: a0 + (count - 1) * chunk + w].unfold(1, w, chunk)


def _sft_blocks(mask: np.ndarray, block: int) -> list[slice]:
    """Runs of consecutive SFT groups (``mask`` False), at most ``block`` long."""
    out, start = [], None
    for i, short in enumerate([*mask, True]):
        if start is not None and (short or i - start == block):
            out.append(slice(start, i))
            start = None
        if not short and start is None:
            start = i
    return out


def _anchors(tot: torch.Tensor, st: _Stacked, count: int, gs: slice) -> torch.Tensor:
    """Anchors ``S[cC]`` for ``c = 1 .. count``: ``(B, G, count, R_max)`` complex128.

    ``tot`` holds the chunk totals ``σ`` and the partial totals ``pre`` of every group,
    ``(B, G, n_sig, 2 R_max)`` complex128, for the groups ``gs``. ``S[cC] = W[c] +
    q^{FC} pre[c + F]`` with the windowed sum ``W[c] = Σ_{j<F} ρ^j σ[c + j]``, ``ρ = q^C``.
    This version allocates its results (the differentiable path); :func:`_anchors_into` is
    the same computation in preallocated scratch.
    """
    g, n_sig = tot.shape[1:3]
    rm = st.r_max
    sig, pre = tot[..., :rm], tot[..., rm:]
    far_idx = st.index(n_sig, count, gs)  # c + F in the (G, n_sig) layout
    if st.sft:
        # |ρ| = 1: W[c] = ρ^{-c} (U[c + F] - U[c]), U[c] = Σ_{c' < c} ρ^{c'} σ[c'] (float64)
        rot = st.rotations(n_sig)[gs]
        u = torch.cumsum(sig * rot, dim=2)  # u[c] = U[c + 1]
        hi = u.flatten(1, 2).index_select(1, far_idx - 1).unflatten(1, (g, count))
        w = (hi - u[:, :, :count]) * rot[:, 1: count + 1].conj()
    else:
        w = _asft_window(sig, st, count, gs, far_idx)
    pre_f = pre.flatten(1, 2).index_select(1, far_idx).unflatten(1, (g, count))
    return w + st.tail[gs, None, :] * pre_f


def _asft_window(sig: torch.Tensor, st: _Stacked, count: int, gs: slice,
                 far_idx: torch.Tensor) -> torch.Tensor:
    """ASFT windowed sums ``W[c] = V[c] - ρ^F V[c+F]`` with ``V[c] = σ[c] + ρ V[c+1]``
    (decaying, float64), ``(B, G, count, R_max)`` complex128."""
    g, rm = sig.shape[1], st.r_max
    flipped = torch.flip(sig, (2,)).transpose(2, 3).flatten(1, 2)  # (B, G R, n_sig)
    v = scan_linear(flipped, st.rho[gs].flatten()).unflatten(1, (g, rm))
    v = torch.flip(v, (3,)).transpose(2, 3)  # (B, G, n_sig, R)
    hi = v.flatten(1, 2).index_select(1, far_idx).unflatten(1, (g, count))
    return v[:, :, 1: count + 1] - st.rho_f[gs, None, :] * hi


def _anchors_into(tot: torch.Tensor, st: _Stacked, count: int, gs: slice, ws: _Workspace,
                  e: torch.Tensor) -> None:
    """:func:`_anchors` written into ``e`` ``(B, G, count, 2 R_max)`` (working precision, the
    real and imaginary parts of each row interleaved), with the float64 intermediates in the
    scratch ``ws`` (no allocation for the SFT).

    The prefix sums and their differences are formed in float64 (``tot`` may be complex64);
    the rotation of the differences by ``ρ^{-c}`` (modulus 1) and the ``pre`` term, which
    carry no cancellation, are written in the working precision straight into ``e``.
    """
    bsz, g, n_sig = tot.shape[:3]
    rm = st.r_max
    sig, pre = tot[..., :rm], tot[..., rm:]
    ec = torch.view_as_complex(e.unflatten(-1, (-1, 2)))  # (B, G, count, R_max)
    if st.sft:
        # groups whose window is shorter than a chunk (F = 0) have W = 0: no prefix sums
        fs = st.F[gs]
        j0 = int(np.count_nonzero(np.cumsum(fs) == 0))
        ec[:, :j0].zero_()
        if j0 < g:
            hs = slice(gs.start + j0, gs.stop)
            rot, rot_conj = st.rotations(n_sig), st.rotations_conj(n_sig)
            u = ws.get("u", (bsz, g - j0, n_sig, rm), torch.complex128, e.device)
            if sig.dtype == u.dtype:
                torch.mul(sig[:, j0:], rot[hs], out=u)
            else:  # widen first: one mixed-precision product is slower than the two passes
                u.copy_(sig[:, j0:])
                u.mul_(rot[hs])
            if u.is_cuda:  # scanned along its last axis: torch's scan of an outer axis runs
                # one thread per inner element (592 µs for one 10^5-sample signal on an H100)
                u.copy_(u.transpose(2, 3).contiguous().cumsum_(-1).transpose(2, 3))
            else:
                u.cumsum_(2)  # u[c] = U[c + 1]
            w = ws.get("w", (bsz, g - j0, count, rm), torch.complex128, e.device)
            for j, f in enumerate(fs[j0:]):  # U[c + F] - U[c]: a shifted slice per group
                torch.sub(u[:, j, f: f + count], u[:, j, :count], out=w[:, j])
            w.mul_(rot_conj[hs, 1: count + 1])
            ec[:, j0:].copy_(w)  # (faster than one product cast into ec: 171 against 268 µs)
    else:
        ec.copy_(_asft_window(sig, st, count, gs, st.index(n_sig, count, gs)))
    for j, f in enumerate(st.F[gs]):  # + q^{FC} pre[c + F]
        ec[:, j].addcmul_(pre[:, j, f + 1: f + 1 + count], st.tail_w[gs.start + j])


class _Workspace:
    """Named scratch tensors of one thread, grown on demand and reused across calls.

    :meth:`get` returns a view of the first ``prod(shape)`` elements of the named buffer
    (contents undefined), reallocating it only when it is too small. The total is capped:
    beyond :data:`_CACHE_BYTES` the buffers are dropped after the call (see :func:`_workspace`).
    """

    def __init__(self) -> None:
        self.buffers: dict[str, torch.Tensor] = {}

    def get(self, name: str, shape: tuple[int, ...], dtype: torch.dtype,
            device: torch.device | None = None) -> torch.Tensor:
        """A scratch tensor of ``shape`` and ``dtype`` (contiguous, uninitialised)."""
        numel = math.prod(shape)
        buf = self.buffers.get(name)
        if buf is None or buf.dtype != dtype or buf.numel() < numel:
            # an ordinary tensor even under inference mode, so that calls outside it can write
            # it too
            with torch.inference_mode(False):
                buf = torch.empty(numel, dtype=dtype, device=device or torch.device("cpu"))
            self.buffers[name] = buf
        return buf[:numel].view(shape)

    @property
    def nbytes(self) -> int:
        """Bytes held by the buffers."""
        return sum(b.numel() * b.element_size() for b in self.buffers.values())


# Scratch of the CPU chunked engine kept per thread between calls (allocating it afresh costs
# a page fault per 4 KiB on first touch: about as much time as the arithmetic on it).
_CACHE_BYTES = 64 << 20
_local = threading.local()


def _workspace(device: torch.device) -> _Workspace:
    """This thread's cached workspace on the CPU; a fresh one elsewhere (on CUDA the caching
    allocator already reuses memory, and a buffer shared between streams would race)."""
    if device.type != "cpu":
        return _Workspace()
    ws = getattr(_local, "workspace", None)
    if ws is None:
        ws = _local.workspace = _Workspace()
    return ws


def _release(ws: _Workspace) -> None:
    """Drop a cached workspace that has grown past :data:`_CACHE_BYTES` (a one-off huge job
    must not pin its scratch for the life of the thread)."""
    if ws.nbytes > _CACHE_BYTES:
        ws.buffers.clear()


def check_out(out: torch.Tensor, shape: tuple[int, ...], dtype: torch.dtype,
              device: torch.device) -> None:
    """Check an engine's ``out`` buffer (also used by the fused kernels): exactly ``shape``,
    ``dtype`` and ``device``, contiguous along its last axis."""
    if tuple(out.shape) != shape or out.dtype != dtype or out.device != device:
        raise ValueError(f"out must be a {dtype} tensor of shape {shape} on {device}, got "
                         f"{out.dtype} {tuple(out.shape)} on {out.device}")
    if shape[-1] > 1 and out.stride(-1) != 1:
        raise ValueError("out must be contiguous along its last axis")


def _block(st: _Stacked, n_sig: int, bsz: int) -> int:
    """Row groups per block: as many as keep the float64 anchor scratch under
    :data:`_SCRATCH_BYTES` (cache-sized), at least one."""
    per_group = 16 * n_sig * st.r_max * bsz
    return max(1, min(st.n_groups, _SCRATCH_BYTES // max(per_group, 1)))


def _reads(xe: torch.Tensor, g: GroupTables, left: int, n_sig: int, n_out: int,
           chunk: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Chunk views of the extended signals ``xe`` for group ``g``: the ``n_sig`` chunks from
    ``off`` (totals and the near field's first read) and the ``n_out`` chunks ``L`` samples
    later (its second read), ``(B, count, C)`` each."""
    a0 = left + g.off
    xs = xe[:, a0: a0 + n_sig * chunk].unflatten(1, (n_sig, chunk))
    b0 = a0 + g.L
    return xs, xe[:, b0: b0 + n_out * chunk].unflatten(1, (n_out, chunk))


def chunked_apply(bank, rows: torch.Tensor, mode: str, cval: float = 0.0,
                  chunk: int = CHUNK, *, out: torch.Tensor | None = None,
                  toeplitz: bool | None = None, tick=None) -> torch.Tensor:
    """Apply ``bank`` to signals ``rows`` ``(B, N)`` by the chunked algorithm (torch).

    This is the reference implementation of :func:`fastmoments.signal.triton_sft.fused_apply`
    and the CPU engine: a few batched matrix products per row group, and the anchors of a
    block of groups at once in float64 (in scratch reused across blocks and, on the CPU,
    across calls of the same thread).

    Parameters
    ----------
    bank : SFTBank
        The filter bank.
    rows : torch.Tensor
        ``(B, N)`` real signals in the working precision.
    mode : str
        Boundary mode (:data:`fastmoments.signal.boundary.MODES`).
    cval : float
        Value outside the signal for ``mode="constant"``.
    chunk : int
        Chunk length ``C``.
    out : torch.Tensor, optional
        ``(B, n_channels, N)`` in the result dtype, contiguous along its last axis (other
        strides are free): the products are written straight into it. Not allowed while a
        gradient is recorded for ``rows``.
    toeplitz : bool, optional
        Row groups with short windows are cheaper as one Toeplitz product per chunk, ``x̃``'s
        ``(C + L - 1)``-sample window times the group's taps (the same kernel, so the same
        result up to rounding): ``None`` decides per group by the cost model of
        :func:`_toeplitz_cheaper`; ``True``/``False`` force it for every group (tests).
    tick : callable, optional
        Progress: ``tick(k)`` is called as the row groups are done, with ``k`` the (signal,
        group) pairs finished since the last call (``B`` times the groups, in all).

    Returns
    -------
    torch.Tensor
        ``(B, n_channels, N)``, real or complex in the working precision of ``rows``
        (``out`` when given).
    """
    groups = group_tables(bank, chunk)
    wdt = rows.dtype
    dev = rows.device
    st = _stacked(bank, groups, chunk, wdt, dev)
    bsz, n = rows.shape
    cplx = bank.complex_output
    rdt = complex_dtype(wdt) if cplx else wdt
    n_out = -(-n // chunk)
    n_sig = n_out + int(st.F.max()) + 2
    # extent of the extended signal every group reads (signal coordinates)
    lo = min(g.off for g in groups)
    hi = max(max(g.off + n_sig * chunk, g.off + g.L + n_out * chunk) for g in groups)
    left, right = max(0, -lo), max(0, hi - n)
    xe = extend(rows, left, right, mode, cval)
    short = _toeplitz_mask(bank, groups, chunk, toeplitz)
    grad = torch.is_grad_enabled() and rows.requires_grad
    if grad:
        if out is not None:
            raise ValueError("out cannot be used while a gradient is recorded for the input "
                             "(the result would not be differentiable)")
        y = _chunked_grad(bank, groups, st, xe, left, n, n_out, n_sig, chunk, short)
        if tick is not None:
            tick(bsz * len(groups))
        return y
    if out is None:
        out = torch.empty(bsz, bank.n_channels, n, dtype=rdt, device=dev)
    else:
        check_out(out, (bsz, bank.n_channels, n), rdt, dev)
    k = 2 if cplx else 1
    width = chunk * k
    n_full = n // chunk  # whole chunks go straight into out; a partial last one via scratch
    flat = torch.view_as_real(out).flatten(-2) if cplx else out  # (B, n_channels, k N)
    main = flat[..., : n_full * width].unflatten(-1, (n_full, width))
    ws = _workspace(dev)
    block = _block(st, n_sig, bsz)
    sft_blocks = _sft_blocks(short, block)
    tot = e = None
    if sft_blocks:  # chunk totals and anchors of one block of SFT groups
        tot = ws.get("tot", (bsz, block, n_sig, 4 * st.r_max), wdt, dev)
        e = ws.get("e", (bsz, block, n_out, 2 * st.r_max), wdt, dev)
    tail = None
    if n_full < n_out:
        tail = ws.get("tail", (bsz, bank.n_channels, width), wdt, dev)
        tail.zero_()
    written: set = set()  # channels whose first product is stored (later ones accumulate)
    _toeplitz_groups(bank, groups, short, xe, left, n_out, n_full, chunk, main, tail, ws,
                     written, tick)
    for gs in sft_blocks:  # the SFT groups, in blocks whose float64 scratch stays small
        _sft_block(groups, st, gs, xe, left, n_sig, n_out, n_full, chunk, main, tail, ws,
                   tot, e, written, tick)
    if tail is not None:
        flat[..., n_full * width:].copy_(tail[..., : k * n - n_full * width])
    _release(ws)
    return out


def _toeplitz_groups(bank, groups, short: np.ndarray, xe: torch.Tensor, left: int, n_out: int,
                     n_full: int, chunk: int, main: torch.Tensor, tail: torch.Tensor | None,
                     ws: _Workspace, written: set, tick) -> None:
    """The row groups of short windows (``short``) of :func:`chunked_apply`: one Toeplitz
    product per chunk, into ``main`` (whole chunks) and ``tail`` (the partial last one)."""
    bsz = xe.shape[0]
    wdt, dev = xe.dtype, xe.device
    for i in np.flatnonzero(short):
        g = groups[i]
        table = _toeplitz_table(bank, groups, i, chunk, wdt, dev)
        win = _windows(xe, g, left, n_out, chunk)
        room = _SCRATCH_BYTES * (4 if dev.type == "cpu" else 64)  # cache-sized on the CPU
        sub = max(1, min(bsz, room // max(win[0].numel() * win.element_size(), 1)))
        for b0 in range(0, bsz, sub):  # the windows are copied into scratch, a few at a time
            b1 = min(bsz, b0 + sub)
            wb = ws.get("win", (b1 - b0, *win.shape[1:]), wdt, dev)
            wb.copy_(win[b0:b1])
            tab = table.expand(b1 - b0, -1, -1)
            if n_full:
                y = main[b0:b1, g.channel]
                if g.channel in written:
                    y.baddbmm_(wb[:, :n_full], tab)
                else:
                    torch.bmm(wb[:, :n_full], tab, out=y)
            if tail is not None:
                tail[b0:b1, g.channel] += wb[:, n_full] @ table
        written.add(g.channel)
        if tick is not None:
            tick(bsz)


def _sft_block(groups, st: _Stacked, gs: slice, xe: torch.Tensor, left: int, n_sig: int,
               n_out: int, n_full: int, chunk: int, main: torch.Tensor,
               tail: torch.Tensor | None, ws: _Workspace, tot: torch.Tensor, e: torch.Tensor,
               written: set, tick) -> None:
    """One block ``gs`` of SFT row groups of :func:`chunked_apply`: chunk totals, anchors
    (float64), and the near and far fields into ``main`` and ``tail``."""
    bsz = xe.shape[0]
    g0 = gs.start
    nb = gs.stop - g0
    tb, eb = tot[:, :nb], e[:, :nb]
    views = []
    for i in range(g0, gs.stop):
        g = groups[i]
        xs, xb = _reads(xe, g, left, n_sig, n_out, chunk)
        torch.bmm(xs, st.tot[i].expand(bsz, -1, -1), out=tb[:, i - g0])
        views.append((g, xs[:, :n_out], xb))
    tot_c = torch.view_as_complex(tb.unflatten(-1, (-1, 2)))
    _anchors_into(tot_c, st, n_out, gs, ws, eb)  # S[(c+1)C]
    for i, (g, xa, xb) in enumerate(views, start=g0):
        if n_full:
            y = main[:, g.channel]  # (B, n_full, width), written in place
            if g.channel in written:
                y.baddbmm_(xa[:, :n_full], st.ha[i].expand(bsz, -1, -1))
            else:
                torch.bmm(xa[:, :n_full], st.ha[i].expand(bsz, -1, -1), out=y)
            y.baddbmm_(xb[:, :n_full], st.hb[i].expand(bsz, -1, -1))
            y.baddbmm_(eb[:, i - g0, :n_full], st.far[i].expand(bsz, -1, -1))
        written.add(g.channel)
    if tail is not None:  # the partial last chunk of every group of the block at once
        xa_t = torch.stack([xa[:, n_full] for _, xa, _ in views])  # (G, B, C)
        xb_t = torch.stack([xb[:, n_full] for _, _, xb in views])
        y_t = torch.bmm(xa_t, st.ha[gs])
        y_t.baddbmm_(xb_t, st.hb[gs]).baddbmm_(eb[:, :, n_full].transpose(0, 1), st.far[gs])
        chans = st.channels([g.channel for g, _, _ in views])
        tail.index_add_(1, chans, y_t.transpose(0, 1))
    if tick is not None:
        tick(bsz * nb)


def _chunked_grad(bank, groups, st, xe, left, n, n_out, n_sig, chunk,
                  short: np.ndarray) -> torch.Tensor:
    """The differentiable form of :func:`chunked_apply` (no in-place writes into shared
    buffers): ``(B, n_channels, N)``."""
    bsz, wdt, dev = xe.shape[0], xe.dtype, xe.device
    cplx = bank.complex_output
    width = chunk * (2 if cplx else 1)
    out = torch.zeros(bsz, bank.n_channels, n_out, width, dtype=wdt, device=dev)
    parts: list = []
    for i in np.flatnonzero(short):
        g = groups[i]
        table = _toeplitz_table(bank, groups, i, chunk, wdt, dev)
        parts.append((g.channel, torch.matmul(_windows(xe, g, left, n_out, chunk), table)))
    block = _block(st, n_sig, bsz)
    for gs in _sft_blocks(short, block):
        g0 = gs.start
        views, tots = [], []
        for i in range(g0, gs.stop):
            g = groups[i]
            xs, xb = _reads(xe, g, left, n_sig, n_out, chunk)
            tots.append(torch.matmul(xs, st.tot[i]))
            views.append((g, xs[:, :n_out], xb))
        tot = torch.stack(tots, dim=1)
        tot64 = torch.view_as_complex(tot.to(torch.float64).unflatten(-1, (-1, 2)))
        anchor = _anchors(tot64, st, n_out, gs)  # S[(c+1)C]
        e = torch.view_as_real(anchor).flatten(-2).to(wdt)  # (B, G, n_out, 2 R_max)
        for i, (g, xa, xb) in enumerate(views, start=g0):
            y = (torch.matmul(xa, st.ha[i]) + torch.matmul(xb, st.hb[i])
                 + torch.matmul(e[:, i - g0], st.far[i]))
            parts.append((g.channel, y))
    for ch, y in parts:
        out = out.index_add(1, torch.tensor([ch], device=dev), y[:, None])
    out = out.flatten(2)
    if cplx:
        out = torch.view_as_complex(out.unflatten(-1, (-1, 2)))
    return out[..., :n]


def fused_eligible(bank, chunk: int = CHUNK) -> bool:
    """Whether the fused kernels apply: one row group per channel, and ``α C ≤ 1``
    (the in-tile anchor recursion divides by ``q^C``). Computed once per bank and chunk."""
    key = ("fused-eligible", chunk)
    if key not in bank._tables:
        chans = [g[2] for g in bank.groups]
        bank._tables[key] = (len(set(chans)) == len(chans)
                             and float(np.max(bank.alpha, initial=0.0)) * chunk <= 1.0)
    return bank._tables[key]
