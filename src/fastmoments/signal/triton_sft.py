"""Fused GPU kernels (Triton) for the chunked SFT engine (:mod:`.chunked`), float32 and float64.

Two kernels do the whole filter bank, boundary extension included:

``_tile_totals``
    For every tile of ``T = BC·C`` samples (``BC`` chunks of ``C``) and row ``r``:
    ``τ[t] = Σ_{s<T} x̃[tT + off + s] q^s`` and the partial total ``pre[t]`` of its first
    ``L mod T`` samples. One tensor-core product per tile gives the chunk totals and the partial
    chunk totals of all rows at once (real and imaginary parts in interleaved columns); a weighted
    reduction over the chunks gives ``τ`` and ``pre``.
``_sft_output``
    For every output tile, the two reads ``x_A`` (the tile) and ``x_B`` (``L`` samples later)
    are interleaved into one ``BC × 2C`` operand. One product with ``[H_A; H_B]`` gives the near
    field and one with ``[Q; -q^L Q]`` gives ``D = σ_A - q^L σ_B`` per chunk (for batches of real
    output, two products over the separate reads instead, see :func:`_join`). An in-register
    reverse scan ``E[c] = D[c+1] + q^C E[c+1]`` gives the chunk anchors ``E[c] = S[(c+1)C]``,
    started from the tile anchor ``S[(t+1)T] = Σ_{j<⌊L/T⌋} q^{jT} τ[t+1+j] +
    q^{⌊L/T⌋T} pre[t+1+⌊L/T⌋]``; one product ``E F`` adds the far field. Complex output is
    written as interleaved (re, im) columns, i.e. straight into a complex64 tensor. The boundary
    modes are evaluated on the fly from the index.

Given a flag byte, ``_tile_totals`` also clears it when a tile holds NaN or infinity: the public
calls' input check without a pass of its own.

Rows are padded to ``RH`` (a power of two ≥ 8), so every product has at least 16 columns. For
float32 signals all products use ``input_precision="tf32x3"`` (float32 accuracy on tensor
cores); the tables come from the float64 tables of
:func:`~fastmoments.signal.chunked.group_tables`. float64 signals run the same kernels with
float64 tables and float64 products (:func:`takes`; on the H100 2-3× faster than the torch
engine for a batch, and 6× for a replayed 64-scale CWT, measured by an A/B script kept in
git history). The anchor
recursion divides by ``q^C`` once, so it is used for ``α C ≤ 1`` only
(:func:`~fastmoments.signal.chunked.fused_eligible`); other banks run on the torch engine.
Tiles start at arbitrary (unaligned) samples; tiles of 64 chunks are read as one 1-D run so that
the loads are coalesced (:func:`_lin`).
"""

from __future__ import annotations

import numpy as np
import torch

from .._array import clear_unless_finite
from .._launches import launch
from .._triton import multiprocessors
from .boundary import MODES
from .chunked import _powers, _powers_bc, check_out, group_tables

try:  # pragma: no cover - depends on the installation
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None

__all__ = ["FUSED_CHUNK", "available", "fused_apply", "takes"]

FUSED_CHUNK = 32


def available() -> bool:
    """Whether Triton is importable (the kernels run on CUDA, or on the CPU interpreter)."""
    return triton is not None


#: Warps per program: four, the fastest on the H100 (8 warps: 2.4x slower for the batch;
#: measured with the kernel-variant benchmark that preceded ``benchmarks/signal_batch_cuda.py``).
WARPS = 4

#: Dot precision of the float32 products: ``"tf32x3"`` (float32 accuracy on tensor cores);
#: float64 signals use ``"ieee"`` float64 products.
PRECISION = "tf32x3"


def _settings(items: int, device: torch.device) -> tuple[int, str, int]:
    """Chunks per tile, dot precision and warps.

    ``items`` counts the (signal, row group, 2048-sample tile) triples of the job. Tiles of 64
    chunks are the fastest for batches; a job with fewer such items than two per multiprocessor
    (a single signal, say) uses tiles of 32 chunks, which doubles its parallelism (13 against
    19 µs for one Gaussian of 102400 samples on the H100; the batch takes twice as long).
    """
    small = device.type == "cuda" and items < 2 * (_programs(device) // 8)
    return (32 if small else 64), PRECISION, WARPS


class _FusedTables:
    """Float32 device tables of all groups, in the interleaved layout of the kernels.

    Rows are padded to ``RH`` (a power of two ≥ 8), so that a complex row ``r`` occupies the two
    columns ``2r`` (real part) and ``2r + 1`` (imaginary part) of a product with ``2 RH ≥ 16``
    columns, and the signal reads ``x_A``, ``x_B`` are interleaved the same way (``2C`` columns).
    """

    def __init__(self, bank, chunk: int, bc: int, device: torch.device,
                 dtype: torch.dtype = torch.float32) -> None:
        groups = group_tables(bank, chunk)
        c = chunk
        bt = bc * c
        g_n = len(groups)
        rh = max(8, 1 << int(max(g.q.shape[0] for g in groups) - 1).bit_length())
        ft = np.array([g.L // bt for g in groups])
        jp = max(2, 1 << int(ft.max()).bit_length())
        cplx = bank.complex_output
        no = 2 * c if cplx else c  # output columns per chunk
        qt = np.zeros((g_n, c, 2, rh, 2))  # tile totals: (s, block, row, re/im)
        hn = np.zeros((g_n, c, 2, no))  # near field: (s, read A/B, output column)
        qd = np.zeros((g_n, c, 2, rh, 2))  # D = σ_A - q^L σ_B: (s, read, row, re/im)
        fm = np.zeros((g_n, rh, 2, no))  # far field: (row, Re/Im E, output column)
        w1 = np.zeros((g_n, 2, bc, rh))
        fw = np.zeros((g_n, 2, bc, rh))
        qv = np.zeros((g_n, 6, rh))  # q^C, q^{-C}, q^{F_T T} (re, im)
        pt = np.zeros((g_n, 2, jp, rh))
        cidx = np.arange(bc)
        s = np.arange(c)

        def out_cols(m):  # (..., C) complex or real -> (..., no) real, (re, im) interleaved
            if not cplx:
                return np.real(m)
            return np.stack([m.real, m.imag], axis=-1).reshape(*m.shape[:-1], no)

        for i, g in enumerate(groups):
            r = g.q.shape[0]
            a, w = g.alpha, g.omega
            qt[i, :, 0, :r, 0], qt[i, :, 0, :r, 1] = g.qmat.real, g.qmat.imag
            part = np.where((s < (g.L % bt) % c)[:, None], g.qmat, 0)  # first L mod C of a chunk
            qt[i, :, 1, :r, 0], qt[i, :, 1, :r, 1] = part.real, part.imag
            hn[i, :, 0], hn[i, :, 1] = out_cols(g.ha), out_cols(g.hb)
            ql = _powers_bc(a, w, g.L)
            for k, m in enumerate((g.qmat, -ql[None, :] * g.qmat)):
                qd[i, :, k, :r, 0], qd[i, :, k, :r, 1] = m.real, m.imag
            fm[i, :r, 0], fm[i, :r, 1] = out_cols(g.far[:r]), out_cols(g.far[r:])
            p = _powers(a, w, cidx * c).T  # q^{cC}
            w1[i, 0, :, :r], w1[i, 1, :, :r] = p.real, p.imag
            p = _powers(a, w, (bc - 1 - cidx) * c).T  # q^{(BC-1-c)C}
            fw[i, 0, :, :r], fw[i, 1, :, :r] = p.real, p.imag
            for k, e in enumerate((c, -c, ft[i] * bt)):
                v = _powers_bc(a, w, e)
                qv[i, 2 * k, :r], qv[i, 2 * k + 1, :r] = v.real, v.imag
            p = _powers(a, w, np.arange(ft[i]) * bt).T  # q^{jT}, j < F_T
            pt[i, 0, : ft[i], :r], pt[i, 1, : ft[i], :r] = p.real, p.imag

        def f32(v):  # the kernels compute in the tables' precision (float32 or float64)
            return torch.as_tensor(np.ascontiguousarray(v), dtype=dtype, device=device)

        def i32(v):
            return torch.as_tensor(np.asarray(v), dtype=torch.int32, device=device)

        self.qt, self.hn, self.qd, self.fm = f32(qt), f32(hn), f32(qd), f32(fm)
        self.w1, self.fw, self.qv, self.pt = f32(w1), f32(fw), f32(qv), f32(pt)
        self.L = i32([g.L for g in groups])
        self.off = i32([g.off for g in groups])
        self.off_min = min(int(g.off) for g in groups)
        self.ft = i32(ft)
        self.mt = i32([(g.L % bt) // c for g in groups])  # full chunks in the first L mod T
        self.channel = i32([g.channel for g in groups])
        chans = [g.channel for g in groups]
        self.one_each = len(set(chans)) == g_n == bank.n_channels
        self.n_groups, self.rh, self.jp, self.ft_max = g_n, rh, jp, int(ft.max())
        self.no = no


def _tables(bank, chunk: int, bc: int, device: torch.device,
            dtype: torch.dtype = torch.float32) -> _FusedTables:
    key = ("fused", chunk, bc, str(device), dtype)
    if key not in bank._tables:
        bank._tables[key] = _FusedTables(bank, chunk, bc, device, dtype)
    return bank._tables[key]


if triton is not None:

    @triton.jit
    def _load_ext(base, pos, n, cval, MODE: tl.constexpr):
        """``x̃[pos]``: the signal extended by the boundary mode (indices as in scipy.ndimage)."""
        if MODE == 0:  # reflect: period 2n, half-sample symmetric
            per = 2 * n
            j = pos % per
            j = tl.where(j < 0, j + per, j)
            j = tl.where(j >= n, per - 1 - j, j)
            v = tl.load(base + j)
        elif MODE == 1:  # nearest
            v = tl.load(base + tl.minimum(tl.maximum(pos, 0), n - 1))
        elif MODE == 2:  # mirror: period 2n - 2, whole-sample symmetric
            per = tl.maximum(2 * n - 2, 1)
            j = pos % per
            j = tl.where(j < 0, j + per, j)
            j = tl.where(j >= n, per - j, j)
            v = tl.load(base + j)
        elif MODE == 3:  # wrap
            j = pos % n
            j = tl.where(j < 0, j + n, j)
            v = tl.load(base + j)
        else:  # constant
            inside = (pos >= 0) & (pos < n)
            v = tl.load(base + tl.where(inside, pos, 0), mask=inside, other=cval)
        return v

    @triton.jit
    def _load_tile(base, start, local, n, cval, MODE: tl.constexpr, SPAN: tl.constexpr,
                   LIN: tl.constexpr):
        """``x̃[start + local]`` for a tile of ``SPAN`` samples; plain loads when it lies inside.

        ``LIN``: load the tile as one 1-D run of ``SPAN`` samples and reshape it. The start is
        not 16-byte aligned in general, and the 2-D load was compiled into four scalar loads
        per thread with lanes 16 bytes apart (68% of the kernel's global sectors excessive
        under Nsight Compute); the 1-D load reads consecutive words per warp (14%), at the
        price of a layout change through shared memory (see :func:`_lin`)."""
        if LIN:
            idx = tl.arange(0, SPAN)
        else:
            idx = local
        if (start >= 0) & (start + SPAN <= n):
            v = tl.load(base + start + idx)
        else:
            v = _load_ext(base, start + idx, n, cval, MODE)
        if LIN:
            v = tl.reshape(v, local.shape)
        return v

    @triton.jit
    def _affine(a1r, a1i, v1r, v1i, a2r, a2i, v2r, v2i):
        # (later elements) then (current): g = v2 + a2 * v1, a = a2 * a1 (composition)
        return (a2r * a1r - a2i * a1i, a2r * a1i + a2i * a1r,
                v2r + a2r * v1r - a2i * v1i, v2i + a2r * v1i + a2i * v1r)

    @triton.jit
    def _totals_loop(pid, n_prog, g, x_ptr, stride_xb, n, cval, tau_ptr, nt1, n_groups, n_work,
                     off_ptr, mt_ptr, qt_ptr, w1_ptr,
                     MODE: tl.constexpr, C: tl.constexpr, BC: tl.constexpr, RH: tl.constexpr,
                     PREC: tl.constexpr, ITERS: tl.constexpr, LIN: tl.constexpr,
                     FLAG: tl.constexpr):
        """The tile totals of the (signal, tile) items ``pid, pid + n_prog, ...`` of group
        ``g`` (the last item repeats past the end); returns 0 when ``FLAG`` and a sample read
        was NaN or infinite, else 1."""
        off = tl.load(off_ptr + g)
        m = tl.load(mt_ptr + g)
        ci = tl.arange(0, BC)[:, None]
        local = ci * C + tl.arange(0, C)[None, :]
        r_i = tl.arange(0, RH)[None, :]
        # one product gives the chunk totals σ and the partial totals σ' (first L mod C samples)
        qt = tl.load(qt_ptr + (g * C + tl.arange(0, C)[:, None]) * (4 * RH)
                     + tl.arange(0, 4 * RH)[None, :])
        wre = tl.load(w1_ptr + ((g * 2) * BC + ci) * RH + r_i)  # q^{cC}
        wim = tl.load(w1_ptr + ((g * 2 + 1) * BC + ci) * RH + r_i)
        finite = tl.full((BC,), 1, dtype=tl.int32)  # per chunk row: few registers
        for k in range(ITERS):
            w = tl.minimum(pid + k * n_prog, n_work - 1)
            b = w // nt1
            t = w - b * nt1
            x = _load_tile(x_ptr + b.to(tl.int64) * stride_xb, t * (BC * C) + off, local, n,
                           cval, MODE, BC * C, LIN).to(qt.dtype)  # the tables' precision
            if FLAG:  # |x| < inf is false for NaN and for ±inf
                finite = tl.minimum(finite, tl.min((tl.abs(x) < float("inf")).to(tl.int32), 1))
            u = tl.dot(x, qt, input_precision=PREC, out_dtype=qt.dtype)  # (BC, 4RH)
            u_re, u_im = tl.split(tl.reshape(u, (BC, 2, RH, 2)))
            s_re, sp_re = tl.split(tl.permute(u_re, (0, 2, 1)))
            s_im, sp_im = tl.split(tl.permute(u_im, (0, 2, 1)))
            # pre: the chunks before m whole, chunk m partially (the first L mod T samples)
            p_re = tl.where(ci < m, s_re, tl.where(ci == m, sp_re, 0.0))
            p_im = tl.where(ci < m, s_im, tl.where(ci == m, sp_im, 0.0))
            out = tau_ptr + ((b.to(tl.int64) * n_groups + g) * nt1 + t) * 4 * RH + tl.arange(0, RH)
            tl.store(out, tl.sum(wre * s_re - wim * s_im, axis=0))
            tl.store(out + RH, tl.sum(wre * s_im + wim * s_re, axis=0))
            tl.store(out + 2 * RH, tl.sum(wre * p_re - wim * p_im, axis=0))
            tl.store(out + 3 * RH, tl.sum(wre * p_im + wim * p_re, axis=0))
        return tl.min(finite, axis=0)

    @triton.jit
    def _output_loop(pid, n_prog, g, x_ptr, stride_xb, n, cval, tau_ptr, nt, nt1, n_groups,
                     n_work, y_ptr, stride_yb, stride_yc, L_ptr, off_ptr, ft_ptr, ch_ptr, hn_ptr,
                     qd_ptr, fm_ptr, fw_ptr, qv_ptr, pt_ptr,
                     MODE: tl.constexpr, C: tl.constexpr, BC: tl.constexpr, RH: tl.constexpr,
                     NO: tl.constexpr, JP: tl.constexpr, CPLX: tl.constexpr, PREC: tl.constexpr,
                     ITERS: tl.constexpr, JOIN: tl.constexpr, LIN: tl.constexpr):
        """The output tiles of the (signal, tile) items ``pid, pid + n_prog, ...`` of group
        ``g`` (the last item repeats past the end); the group's tables are loaded once."""
        big_l = tl.load(L_ptr + g)
        off = tl.load(off_ptr + g)
        ft = tl.load(ft_ptr + g)
        ch = tl.load(ch_ptr + g)
        ci = tl.arange(0, BC)[:, None]
        local = ci * C + tl.arange(0, C)[None, :]
        k2 = tl.arange(0, 2 * C)[:, None]
        o_i = tl.arange(0, NO)[None, :]
        rh = tl.arange(0, RH)
        r_i = rh[None, :]
        r2 = tl.arange(0, 2 * RH)
        if JOIN:
            hn = tl.load(hn_ptr + (g * 2 * C + k2) * NO + o_i)  # (2C, NO): rows (s, read)
            qd = tl.load(qd_ptr + (g * 2 * C + k2) * (2 * RH) + r2[None, :])  # (2C, 2RH)
        else:
            s2 = 2 * tl.arange(0, C)[:, None]
            ha = tl.load(hn_ptr + (g * 2 * C + s2) * NO + o_i)
            hb = tl.load(hn_ptr + (g * 2 * C + s2 + 1) * NO + o_i)
            qa = tl.load(qd_ptr + (g * 2 * C + s2) * (2 * RH) + r2[None, :])
            qb = tl.load(qd_ptr + (g * 2 * C + s2 + 1) * (2 * RH) + r2[None, :])
        fm = tl.load(fm_ptr + (g * 2 * RH + r2[:, None]) * NO + o_i)  # (2RH, NO)
        qv = qv_ptr + g * 6 * RH
        qc_re, qc_im = tl.load(qv + r_i), tl.load(qv + RH + r_i)  # q^C
        qi_re, qi_im = tl.load(qv + 2 * RH + r_i), tl.load(qv + 3 * RH + r_i)  # q^{-C}
        qf_re, qf_im = tl.load(qv + 4 * RH + rh), tl.load(qv + 5 * RH + rh)  # q^{F_T T}
        j = tl.arange(0, JP)[:, None]
        pt_re = tl.load(pt_ptr + ((g * 2) * JP + j) * RH + r_i)
        pt_im = tl.load(pt_ptr + ((g * 2 + 1) * JP + j) * RH + r_i)
        fw_re = tl.load(fw_ptr + ((g * 2) * BC + ci) * RH + r_i)
        fw_im = tl.load(fw_ptr + ((g * 2 + 1) * BC + ci) * RH + r_i)
        a_re = tl.zeros((BC, RH), dtype=fm.dtype) + qc_re
        a_im = tl.zeros((BC, RH), dtype=fm.dtype) + qc_im
        for k in range(ITERS):
            w = tl.minimum(pid + k * n_prog, n_work - 1)
            b = w // nt
            t = w - b * nt
            n0 = t * (BC * C)
            base = x_ptr + b.to(tl.int64) * stride_xb
            xa = _load_tile(base, n0 + off, local, n, cval, MODE, BC * C, LIN).to(fm.dtype)
            xb = _load_tile(base, n0 + off + big_l, local, n, cval, MODE, BC * C,
                            LIN).to(fm.dtype)
            # near field, and D = σ_A - q^L σ_B, one product each
            if JOIN:
                xx = tl.reshape(tl.join(xa, xb), (BC, 2 * C))  # columns (s, read)
                y = tl.dot(xx, hn, input_precision=PREC, out_dtype=fm.dtype)
                d = tl.dot(xx, qd, input_precision=PREC, out_dtype=fm.dtype)
            else:
                y = tl.dot(xb, hb, tl.dot(xa, ha, input_precision=PREC, out_dtype=fm.dtype),
                           input_precision=PREC, out_dtype=fm.dtype)
                d = tl.dot(xb, qb, tl.dot(xa, qa, input_precision=PREC, out_dtype=fm.dtype),
                           input_precision=PREC, out_dtype=fm.dtype)
            d_re, d_im = tl.split(tl.reshape(d, (BC, RH, 2)))
            # G[c] = Σ_{c' ≥ c} q^{(c'-c)C} D[c'] (reverse scan); E[c] = q^{-C} (G[c] - D[c])
            _, _, g_re, g_im = tl.associative_scan((a_re, a_im, d_re, d_im), 0, _affine,
                                                   reverse=True)
            g_re -= d_re
            g_im -= d_im
            e_re = qi_re * g_re - qi_im * g_im
            e_im = qi_re * g_im + qi_im * g_re
            # tile anchor S[(t+1)T] from the tile totals
            tb = tau_ptr + ((b.to(tl.int64) * n_groups + g) * nt1) * 4 * RH
            rows = (t + 1 + j) * 4 * RH + r_i
            msk = (j < ft) & (r_i < RH)
            tau_re = tl.load(tb + rows, mask=msk, other=0.0)
            tau_im = tl.load(tb + rows + RH, mask=msk, other=0.0)
            s_re = tl.sum(pt_re * tau_re - pt_im * tau_im, axis=0)
            s_im = tl.sum(pt_re * tau_im + pt_im * tau_re, axis=0)
            prow = tb + (t + 1 + ft) * 4 * RH + rh
            p_re = tl.load(prow + 2 * RH)
            p_im = tl.load(prow + 3 * RH)
            s_re += qf_re * p_re - qf_im * p_im
            s_im += qf_re * p_im + qf_im * p_re
            e_re += fw_re * s_re[None, :] - fw_im * s_im[None, :]
            e_im += fw_re * s_im[None, :] + fw_im * s_re[None, :]
            # far field, then the store (complex output: (re, im) interleaved, as complex64)
            ee = tl.reshape(tl.join(e_re, e_im), (BC, 2 * RH))
            y = tl.dot(ee, fm, y, input_precision=PREC, out_dtype=fm.dtype)
            ybase = y_ptr + b.to(tl.int64) * stride_yb + ch.to(tl.int64) * stride_yc
            if CPLX:
                oidx = ci * NO + o_i
                tl.store(ybase + 2 * n0 + oidx, y, mask=n0 + (oidx >> 1) < n)
            else:
                nidx = n0 + local
                tl.store(ybase + nidx, y, mask=nidx < n)

    @triton.jit
    def _tile_totals(x_ptr, stride_xb, n, cval, tau_ptr, nt1, n_groups, n_work, n_prog,
                     off_ptr, mt_ptr, qt_ptr, w1_ptr, flag_ptr,
                     MODE: tl.constexpr, C: tl.constexpr, BC: tl.constexpr, RH: tl.constexpr,
                     PREC: tl.constexpr, ITERS: tl.constexpr, LIN: tl.constexpr,
                     FLAG: tl.constexpr):
        # persistent: program p handles the (signal, tile) items p, p + P, ... of group g;
        # with FLAG, a program that read NaN or infinity clears the byte at flag_ptr (every
        # such program writes the same 0: no atomics)
        ok = _totals_loop(tl.program_id(0), n_prog, tl.program_id(1), x_ptr, stride_xb, n,
                          cval, tau_ptr, nt1, n_groups, n_work, off_ptr, mt_ptr, qt_ptr, w1_ptr,
                          MODE, C, BC, RH, PREC, ITERS, LIN, FLAG)
        if FLAG:
            tl.store(flag_ptr, tl.zeros((), dtype=tl.uint8), mask=ok == 0)

    @triton.jit
    def _sft_output(x_ptr, stride_xb, n, cval, tau_ptr, nt, nt1, n_groups, n_work, n_prog, y_ptr,
                    stride_yb, stride_yc, L_ptr, off_ptr, ft_ptr, ch_ptr, hn_ptr, qd_ptr, fm_ptr,
                    fw_ptr, qv_ptr, pt_ptr,
                    MODE: tl.constexpr, C: tl.constexpr, BC: tl.constexpr, RH: tl.constexpr,
                    NO: tl.constexpr, JP: tl.constexpr, CPLX: tl.constexpr, PREC: tl.constexpr,
                    ITERS: tl.constexpr, JOIN: tl.constexpr, LIN: tl.constexpr):
        # persistent: program p handles the (signal, tile) items p, p + P, ... of group g
        _output_loop(tl.program_id(0), n_prog, tl.program_id(1), x_ptr, stride_xb, n, cval,
                     tau_ptr, nt, nt1, n_groups, n_work, y_ptr, stride_yb, stride_yc, L_ptr,
                     off_ptr, ft_ptr, ch_ptr, hn_ptr, qd_ptr, fm_ptr, fw_ptr, qv_ptr, pt_ptr,
                     MODE, C, BC, RH, NO, JP, CPLX, PREC, ITERS, JOIN, LIN)


def takes(dtype: torch.dtype, mode: str, cval: float) -> bool:
    """Whether the fused kernels take signals of ``dtype`` with this boundary: float32
    always; float64 (float64 tables and products) unless the constant ``cval`` is not a
    float32 number (Triton passes a Python float to a kernel as float32)."""
    if dtype == torch.float32:
        return True
    if dtype != torch.float64:
        return False
    return mode != "constant" or float(np.float32(cval)) == float(cval)


def _join(complex_output: bool, bc: int) -> bool:
    """Whether the output kernel interleaves the two reads into one ``BC × 2C`` operand (one
    product each for the near field and ``D``) or runs two products of ``BC × C`` each.

    Measured on the H100 (kernel variants of the same job): two products are 14% faster
    for the real (Gaussian) batch, 5% slower for the complex (Morlet) batch; small jobs keep
    the interleaved operand, with which the single-signal times were measured.
    """
    return complex_output or bc < 64


def _lin(bc: int) -> bool:
    """Whether the kernels load each tile as one 1-D run (see ``_load_tile``).

    Measured on the H100 (kernel variants of the same job): with tiles of 64 chunks
    the 64-scale CWT is 1.35× faster, the Morlet batch at σ = 8192 1.65× and the Gaussian
    batch at σ = 8192 1.2×; the Morlet batch at σ = 256 is unchanged and the Gaussian batch
    at σ = 256 5% slower. A single Morlet transform (tiles of 32 chunks) was 4-5 µs slower,
    so small jobs keep the 2-D load.
    """
    return bc >= 64


def _programs(device: torch.device) -> int:
    """Persistent programs per launch: 8 per streaming multiprocessor (1024 on the CPU
    interpreter, where it only bounds the loop)."""
    if device.type != "cuda":
        return 1024
    return 8 * multiprocessors(device)


def fused_apply(bank, rows: torch.Tensor, mode: str, cval: float = 0.0,
                chunk: int = FUSED_CHUNK, *, out: torch.Tensor | None = None,
                flag: torch.Tensor | None = None) -> torch.Tensor:
    """Apply ``bank`` to float32 or float64 signals ``rows`` ``(B, N)`` with the two fused
    kernels.

    Returns ``(B, n_channels, N)`` of ``rows``' dtype (complex for a complex bank), written
    into ``out`` when given (that shape and dtype on the same device, contiguous along its
    last axis). The
    bank must satisfy :func:`~fastmoments.signal.chunked.fused_eligible`.

    ``flag``: a one-byte ``uint8`` tensor on the device, cleared (set to 0) when ``rows`` holds
    NaN or infinity and left as it is otherwise. The tile-totals kernel reads every sample
    (and the boundary extension, copies of samples, or the finite ``cval``), so it checks them
    on the way, in place of a separate pass over the input; when its tiles do not cover every
    sample (a bank whose windows all start after the first sample) one torch pass does.
    Nothing waits for the flag: read it after the call.
    """
    if triton is None:  # pragma: no cover - checked by callers
        raise RuntimeError("the fused SFT kernels need Triton")
    if rows.dtype not in (torch.float32, torch.float64):
        raise TypeError(f"fused_apply takes float32 or float64 signals, got {rows.dtype}")
    bsz, n = rows.shape
    n_groups = len(group_tables(bank, chunk))
    bc, prec, warps = _settings(bsz * n_groups * -(-n // (64 * chunk)), rows.device)
    if rows.dtype == torch.float64:  # float64 products (no split scheme needed)
        prec = "ieee"
    tb = _tables(bank, chunk, bc, rows.device, rows.dtype)
    rows = rows.contiguous()
    bt = bc * chunk
    nt = -(-n // bt)
    nt1 = nt + tb.ft_max + 1
    dev = rows.device
    odt = (rows.dtype if not bank.complex_output
           else torch.complex64 if rows.dtype == torch.float32 else torch.complex128)
    shape = (bsz, bank.n_channels, n)
    if out is None:
        y = torch.empty(shape, dtype=odt, device=dev)
    else:
        check_out(out, shape, odt, dev)
        y = out
    if not tb.one_each:  # channels without a row group stay zero
        y.zero_()
    yv = torch.view_as_real(y) if bank.complex_output else y
    common = dict(MODE=MODES.index(mode), C=chunk, BC=bc, RH=tb.rh, PREC=prec, LIN=_lin(bc),
                  num_warps=warps)
    # persistent programs: about 8 per multiprocessor, each looping over a power-of-two number
    # of (signal, tile) items (a compile-time constant, so the loop also runs interpreted);
    # items past the end repeat the last one, which writes the same values again
    slots = max(1, _programs(dev) // tb.n_groups)

    def grid(work):
        iters = triton.next_power_of_2(-(-work // slots))
        return -(-work // iters), iters

    # the tiles of the group that starts first read x̃[off_min, off_min + nt1 T)
    fused_flag = flag is not None and tb.off_min <= 0 and tb.off_min + nt1 * bt >= n
    if flag is not None and not fused_flag:
        clear_unless_finite(flag, rows)
    out_opts = dict(NO=tb.no, JP=tb.jp, CPLX=bank.complex_output,
                    JOIN=_join(bank.complex_output, bc))
    tau = torch.empty(bsz, tb.n_groups, nt1, 4, tb.rh, dtype=rows.dtype, device=dev)
    n_prog, iters = grid(bsz * nt1)
    launch(_tile_totals, (n_prog, tb.n_groups),
           rows, rows.stride(0), n, float(cval), tau, nt1, tb.n_groups, bsz * nt1, n_prog,
           tb.off, tb.mt, tb.qt, tb.w1, flag if fused_flag else tau, ITERS=iters,
           FLAG=fused_flag, **common)
    n_prog, iters = grid(bsz * nt)
    launch(_sft_output, (n_prog, tb.n_groups),
           rows, rows.stride(0), n, float(cval), tau, nt, nt1, tb.n_groups, bsz * nt, n_prog,
           yv, yv.stride(0), yv.stride(1), tb.L, tb.off, tb.ft, tb.channel, tb.hn, tb.qd, tb.fm,
           tb.fw, tb.qv, tb.pt, ITERS=iters, **out_opts, **common)
    return y
