"""Fused GPU kernels (Triton) for the chunked SFT engine (:mod:`.chunked`), float32.

Two kernels do the whole filter bank, boundary extension included:

``_tile_totals``
    For every tile of ``T = BC·C`` samples (``BC`` chunks of ``C``) and row ``r``:
    ``τ[t] = Σ_{s<T} x̃[tT + off + s] q^s`` and the partial total ``pre[t]`` of its first
    ``L mod T`` samples (one tensor-core product per tile, then a weighted reduction over the
    chunks).
``_sft_output``
    For every output tile: the near field (``x_A H_A + x_B H_B``, two ``C × C`` products per
    chunk), the chunk totals of both reads, the chunk anchors ``E[c] = S[(c+1)C]`` from an
    in-register reverse scan ``E[c] = D[c+1] + q^C E[c+1]`` (``D = σ_A - q^L σ_B``) started from
    the tile anchor ``S[(t+1)T] = Σ_{j<⌊L/T⌋} q^{jT} τ[t+1+j] + q^{⌊L/T⌋T} pre[t+1+⌊L/T⌋]``,
    and the far field ``E F``; the boundary modes are evaluated on the fly from the index.

All products use ``input_precision="tf32x3"`` (float32 accuracy on tensor cores); the tables
come from the float64 tables of :func:`~fastmoments.signal.chunked.group_tables`. The anchor
recursion divides by ``q^C`` once, so it is used for ``α C ≤ 1`` only
(:func:`~fastmoments.signal.chunked.fused_eligible`); other banks run on the torch engine.
"""

from __future__ import annotations

import os

import numpy as np
import torch

from .boundary import MODES
from .chunked import _powers, _powers_bc, group_tables

try:  # pragma: no cover - depends on the installation
    import triton
    import triton.language as tl
except ImportError:  # pragma: no cover
    triton = None

__all__ = ["FUSED_CHUNK", "available", "fused_apply"]

FUSED_CHUNK = 32


def available() -> bool:
    """Whether Triton is importable (the kernels run on CUDA, or on the CPU interpreter)."""
    return triton is not None


# Four warps only: with 8 warps and 64 chunks per tile Triton 3.6 produced wrong results (and
# once an illegal memory access) on the H100 (benchmarks/results/signal_fused.md).
_WARPS = 4


def _settings() -> tuple[int, str]:
    """Chunks per tile and dot precision (environment overrides for benchmarking)."""
    bc = int(os.environ.get("FASTMOMENTS_SFT_BC", "64"))
    prec = os.environ.get("FASTMOMENTS_SFT_PRECISION", "tf32x3")
    return bc, prec


class _FusedTables:
    """Float32 device tables of all groups, padded to ``RP`` rows (a power of two ≥ 16)."""

    def __init__(self, bank, chunk: int, bc: int, device: torch.device) -> None:
        groups = group_tables(bank, chunk)
        c = chunk
        bt = bc * c
        g_n = len(groups)
        rp = max(16, 1 << int(max(g.q.shape[0] for g in groups) - 1).bit_length())
        ft = np.array([g.L // bt for g in groups])
        jp = max(2, 1 << int(ft.max()).bit_length())
        n_out = 2 if bank.complex_output else 1
        q = np.zeros((g_n, 2, c, rp))
        ha = np.zeros((g_n, n_out, c, c))
        hb = np.zeros((g_n, n_out, c, c))
        far = np.zeros((g_n, n_out, 2, rp, c))
        w1 = np.zeros((g_n, 2, bc, rp))
        fw = np.zeros((g_n, 2, bc, rp))
        qv = np.zeros((g_n, 8, rp))  # q^L, q^C, q^{-C}, q^{F_T T} (re, im)
        pt = np.zeros((g_n, 2, jp, rp))
        cidx = np.arange(bc)
        for i, g in enumerate(groups):
            r = g.q.shape[0]
            a, w = g.alpha, g.omega
            q[i, 0, :, :r], q[i, 1, :, :r] = g.qmat.real, g.qmat.imag
            for k, part in enumerate((np.real, np.imag)[:n_out]):
                ha[i, k], hb[i, k] = part(g.ha), part(g.hb)
                far[i, k, 0, :r], far[i, k, 1, :r] = part(g.far[:r]), part(g.far[r:])
            p = _powers(a, w, cidx * c).T  # q^{cC}
            w1[i, 0, :, :r], w1[i, 1, :, :r] = p.real, p.imag
            p = _powers(a, w, (bc - 1 - cidx) * c).T  # q^{(BC-1-c)C}
            fw[i, 0, :, :r], fw[i, 1, :, :r] = p.real, p.imag
            for k, e in enumerate((g.L, c, -c, ft[i] * bt)):
                v = _powers_bc(a, w, e)
                qv[i, 2 * k, :r], qv[i, 2 * k + 1, :r] = v.real, v.imag
            p = _powers(a, w, np.arange(ft[i]) * bt).T  # q^{jT}, j < F_T
            pt[i, 0, : ft[i], :r], pt[i, 1, : ft[i], :r] = p.real, p.imag

        def f32(v):
            return torch.as_tensor(np.ascontiguousarray(v), dtype=torch.float32, device=device)

        def i32(v):
            return torch.as_tensor(np.asarray(v), dtype=torch.int32, device=device)

        self.q, self.ha, self.hb, self.far = f32(q), f32(ha), f32(hb), f32(far)
        self.w1, self.fw, self.qv, self.pt = f32(w1), f32(fw), f32(qv), f32(pt)
        self.L = i32([g.L for g in groups])
        self.off = i32([g.off for g in groups])
        self.ft = i32(ft)
        self.remt = i32([g.L % bt for g in groups])
        self.channel = i32([g.channel for g in groups])
        chans = [g.channel for g in groups]
        self.one_each = len(set(chans)) == g_n == bank.n_channels
        self.n_groups, self.rp, self.jp, self.ft_max = g_n, rp, jp, int(ft.max())
        self.chunk, self.bc, self.n_out = c, bc, n_out


def _tables(bank, chunk: int, bc: int, device: torch.device) -> _FusedTables:
    key = ("fused", chunk, bc, str(device))
    if key not in bank._tables:
        bank._tables[key] = _FusedTables(bank, chunk, bc, device)
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
        return v.to(tl.float32)

    @triton.jit
    def _load_tile(base, start, local, n, cval, MODE: tl.constexpr, SPAN: tl.constexpr):
        """``x̃[start + local]`` for a tile of ``SPAN`` samples; plain loads when it lies inside."""
        if (start >= 0) & (start + SPAN <= n):
            v = tl.load(base + start + local).to(tl.float32)
        else:
            v = _load_ext(base, start + local, n, cval, MODE)
        return v

    @triton.jit
    def _affine(a1r, a1i, v1r, v1i, a2r, a2i, v2r, v2i):
        # (later elements) then (current): g = v2 + a2 * v1, a = a2 * a1 (composition)
        return (a2r * a1r - a2i * a1i, a2r * a1i + a2i * a1r,
                v2r + a2r * v1r - a2i * v1i, v2i + a2r * v1i + a2i * v1r)

    @triton.jit
    def _tile_totals(x_ptr, stride_xb, n, cval, tau_ptr, nt1, n_groups, n_work, n_prog,
                     off_ptr, remt_ptr, q_ptr, w1_ptr,
                     MODE: tl.constexpr, C: tl.constexpr, BC: tl.constexpr, RP: tl.constexpr,
                     PREC: tl.constexpr, ITERS: tl.constexpr):
        # persistent: program p handles the (signal, tile) items p, p + P, ... of group g
        g = tl.program_id(1)
        off = tl.load(off_ptr + g)
        remt = tl.load(remt_ptr + g)
        ci = tl.arange(0, BC)[:, None]
        local = ci * C + tl.arange(0, C)[None, :]
        s_i = tl.arange(0, C)[:, None]
        r_i = tl.arange(0, RP)[None, :]
        qre = tl.load(q_ptr + ((g * 2) * C + s_i) * RP + r_i)
        qim = tl.load(q_ptr + ((g * 2 + 1) * C + s_i) * RP + r_i)
        wre = tl.load(w1_ptr + ((g * 2) * BC + ci) * RP + r_i)
        wim = tl.load(w1_ptr + ((g * 2 + 1) * BC + ci) * RP + r_i)
        for k in range(ITERS):
            w = tl.minimum(tl.program_id(0) + k * n_prog, n_work - 1)  # the last repeats
            b = w // nt1
            t = w - b * nt1
            base = x_ptr + b.to(tl.int64) * stride_xb
            x = _load_tile(base, t * (BC * C) + off, local, n, cval, MODE, BC * C)
            sre = tl.dot(x, qre, input_precision=PREC)
            sim = tl.dot(x, qim, input_precision=PREC)
            xm = tl.where(local < remt, x, 0.0)
            pre_re = tl.dot(xm, qre, input_precision=PREC)
            pre_im = tl.dot(xm, qim, input_precision=PREC)
            out = tau_ptr + ((b.to(tl.int64) * n_groups + g) * nt1 + t) * 4 * RP + tl.arange(0, RP)
            tl.store(out, tl.sum(wre * sre - wim * sim, axis=0))
            tl.store(out + RP, tl.sum(wre * sim + wim * sre, axis=0))
            tl.store(out + 2 * RP, tl.sum(wre * pre_re - wim * pre_im, axis=0))
            tl.store(out + 3 * RP, tl.sum(wre * pre_im + wim * pre_re, axis=0))

    @triton.jit
    def _sft_output(x_ptr, stride_xb, n, cval, tau_ptr, nt, nt1, n_groups, n_work, n_prog, y_ptr,
                    stride_yb, stride_yc, L_ptr, off_ptr, ft_ptr, ch_ptr, q_ptr, ha_ptr, hb_ptr,
                    far_ptr, fw_ptr, qv_ptr, pt_ptr,
                    MODE: tl.constexpr, C: tl.constexpr, BC: tl.constexpr, RP: tl.constexpr,
                    JP: tl.constexpr, CPLX: tl.constexpr, PREC: tl.constexpr,
                    ITERS: tl.constexpr):
        # persistent: program p handles the (signal, tile) items p, p + P, ... of group g;
        # the group's tables are loaded once
        g = tl.program_id(1)
        big_l = tl.load(L_ptr + g)
        off = tl.load(off_ptr + g)
        ft = tl.load(ft_ptr + g)
        ch = tl.load(ch_ptr + g)
        ci = tl.arange(0, BC)[:, None]
        cols = tl.arange(0, C)[None, :]
        local = ci * C + cols
        s_i = tl.arange(0, C)[:, None]
        r_i = tl.arange(0, RP)[None, :]
        r_row = tl.arange(0, RP)[:, None]
        rr = tl.arange(0, RP)
        hoff = s_i * C + cols
        nout = 2 if CPLX else 1
        ha_re = tl.load(ha_ptr + (g * nout) * C * C + hoff)
        hb_re = tl.load(hb_ptr + (g * nout) * C * C + hoff)
        if CPLX:
            ha_im = tl.load(ha_ptr + (g * 2 + 1) * C * C + hoff)
            hb_im = tl.load(hb_ptr + (g * 2 + 1) * C * C + hoff)
        qre = tl.load(q_ptr + ((g * 2) * C + s_i) * RP + r_i)
        qim = tl.load(q_ptr + ((g * 2 + 1) * C + s_i) * RP + r_i)
        qv = qv_ptr + g * 8 * RP + r_i
        ql_re, ql_im = tl.load(qv), tl.load(qv + RP)
        qc_re, qc_im = tl.load(qv + 2 * RP), tl.load(qv + 3 * RP)
        qi_re, qi_im = tl.load(qv + 4 * RP), tl.load(qv + 5 * RP)
        qf_re = tl.load(qv_ptr + g * 8 * RP + 6 * RP + rr)
        qf_im = tl.load(qv_ptr + g * 8 * RP + 7 * RP + rr)
        j = tl.arange(0, JP)[:, None]
        pt_re = tl.load(pt_ptr + ((g * 2) * JP + j) * RP + r_i)
        pt_im = tl.load(pt_ptr + ((g * 2 + 1) * JP + j) * RP + r_i)
        fw_re = tl.load(fw_ptr + ((g * 2) * BC + ci) * RP + r_i)
        fw_im = tl.load(fw_ptr + ((g * 2 + 1) * BC + ci) * RP + r_i)
        foff = r_row * C + cols
        fb = far_ptr + (g * nout * 2) * RP * C
        f1_re = tl.load(fb + foff)
        f2_re = tl.load(fb + RP * C + foff)
        if CPLX:
            f1_im = tl.load(fb + 2 * RP * C + foff)
            f2_im = tl.load(fb + 3 * RP * C + foff)
        a_re = tl.zeros((BC, RP), dtype=tl.float32) + qc_re
        a_im = tl.zeros((BC, RP), dtype=tl.float32) + qc_im
        for k in range(ITERS):
            w = tl.minimum(tl.program_id(0) + k * n_prog, n_work - 1)  # the last repeats
            b = w // nt
            t = w - b * nt
            n0 = t * (BC * C)
            base = x_ptr + b.to(tl.int64) * stride_xb
            xa = _load_tile(base, n0 + off, local, n, cval, MODE, BC * C)
            xb = _load_tile(base, n0 + off + big_l, local, n, cval, MODE, BC * C)
            # near field
            y_re = tl.dot(xa, ha_re, input_precision=PREC)
            y_re = tl.dot(xb, hb_re, y_re, input_precision=PREC)
            if CPLX:
                y_im = tl.dot(xa, ha_im, input_precision=PREC)
                y_im = tl.dot(xb, hb_im, y_im, input_precision=PREC)
            # chunk totals of both reads and D = σ_A - q^L σ_B
            sa_re = tl.dot(xa, qre, input_precision=PREC)
            sa_im = tl.dot(xa, qim, input_precision=PREC)
            sb_re = tl.dot(xb, qre, input_precision=PREC)
            sb_im = tl.dot(xb, qim, input_precision=PREC)
            d_re = sa_re - (ql_re * sb_re - ql_im * sb_im)
            d_im = sa_im - (ql_re * sb_im + ql_im * sb_re)
            # G[c] = Σ_{c' ≥ c} q^{(c'-c)C} D[c'] (reverse scan); E[c] = q^{-C} (G[c] - D[c])
            _, _, g_re, g_im = tl.associative_scan((a_re, a_im, d_re, d_im), 0, _affine,
                                                   reverse=True)
            g_re -= d_re
            g_im -= d_im
            e_re = qi_re * g_re - qi_im * g_im
            e_im = qi_re * g_im + qi_im * g_re
            # tile anchor S[(t+1)T] from the tile totals
            tb = tau_ptr + ((b.to(tl.int64) * n_groups + g) * nt1) * 4 * RP
            rows = (t + 1 + j) * 4 * RP + r_i
            m = (j < ft) & (r_i < RP)
            tau_re = tl.load(tb + rows, mask=m, other=0.0)
            tau_im = tl.load(tb + rows + RP, mask=m, other=0.0)
            s_re = tl.sum(pt_re * tau_re - pt_im * tau_im, axis=0)
            s_im = tl.sum(pt_re * tau_im + pt_im * tau_re, axis=0)
            prow = tb + (t + 1 + ft) * 4 * RP + rr
            p_re = tl.load(prow + 2 * RP)
            p_im = tl.load(prow + 3 * RP)
            s_re += qf_re * p_re - qf_im * p_im
            s_im += qf_re * p_im + qf_im * p_re
            e_re += fw_re * s_re[None, :] - fw_im * s_im[None, :]
            e_im += fw_re * s_im[None, :] + fw_im * s_re[None, :]
            # far field, then the store
            y_re = tl.dot(e_re, f1_re, y_re, input_precision=PREC)
            y_re = tl.dot(e_im, f2_re, y_re, input_precision=PREC)
            nidx = n0 + local
            ybase = y_ptr + b.to(tl.int64) * stride_yb + ch.to(tl.int64) * stride_yc
            keep = nidx < n
            if CPLX:
                y_im = tl.dot(e_re, f1_im, y_im, input_precision=PREC)
                y_im = tl.dot(e_im, f2_im, y_im, input_precision=PREC)
                tl.store(ybase + 2 * nidx, y_re, mask=keep)
                tl.store(ybase + 2 * nidx + 1, y_im, mask=keep)
            else:
                tl.store(ybase + nidx, y_re, mask=keep)


def _programs(device: torch.device) -> int:
    """Persistent programs per launch: 8 per streaming multiprocessor (1024 on the CPU
    interpreter, where it only bounds the loop)."""
    if device.type != "cuda":
        return 1024
    return 8 * torch.cuda.get_device_properties(device).multi_processor_count


def fused_apply(bank, rows: torch.Tensor, mode: str, cval: float = 0.0,
                chunk: int = FUSED_CHUNK) -> torch.Tensor:
    """Apply ``bank`` to float32 signals ``rows`` ``(B, N)`` with the two fused kernels.

    Returns ``(B, n_channels, N)`` float32 (complex64 for a complex bank). The bank must satisfy
    :func:`~fastmoments.signal.chunked.fused_eligible`.
    """
    if triton is None:  # pragma: no cover - checked by callers
        raise RuntimeError("the fused SFT kernels need Triton")
    if rows.dtype != torch.float32:
        raise TypeError(f"fused_apply takes float32 signals, got {rows.dtype}")
    bc, prec = _settings()
    tb = _tables(bank, chunk, bc, rows.device)
    rows = rows.contiguous()
    bsz, n = rows.shape
    bt = bc * chunk
    nt = -(-n // bt)
    nt1 = nt + tb.ft_max + 1
    dev = rows.device
    tau = torch.empty(bsz, tb.n_groups, nt1, 4, tb.rp, dtype=torch.float32, device=dev)
    alloc = torch.empty if tb.one_each else torch.zeros
    odt = torch.complex64 if bank.complex_output else torch.float32
    y = alloc(bsz, bank.n_channels, n, dtype=odt, device=dev)
    yv = torch.view_as_real(y) if bank.complex_output else y
    mode_id = MODES.index(mode)
    common = dict(MODE=mode_id, C=chunk, BC=bc, RP=tb.rp, PREC=prec, num_warps=_WARPS)
    # persistent programs: about 8 per multiprocessor, each looping over a power-of-two number
    # of (signal, tile) items (a compile-time constant, so the loop also runs interpreted);
    # items past the end repeat the last one, which writes the same values again
    slots = max(1, _programs(dev) // tb.n_groups)
    for kernel, work, extra in (
            (_tile_totals, bsz * nt1, (tb.off, tb.remt, tb.q, tb.w1)),
            (_sft_output, bsz * nt, ())):
        iters = 1 << max(0, -(-work // slots) - 1).bit_length()
        n_prog = -(-work // iters)
        if kernel is _tile_totals:
            kernel[(n_prog, tb.n_groups)](
                rows, rows.stride(0), n, float(cval), tau, nt1, tb.n_groups, work, n_prog,
                *extra, ITERS=iters, **common)
        else:
            kernel[(n_prog, tb.n_groups)](
                rows, rows.stride(0), n, float(cval), tau, nt, nt1, tb.n_groups, work, n_prog,
                yv, yv.stride(0), yv.stride(1), tb.L, tb.off, tb.ft, tb.channel, tb.q, tb.ha,
                tb.hb, tb.far, tb.fw, tb.qv, tb.pt, JP=tb.jp, CPLX=bank.complex_output,
                ITERS=iters, **common)
    return y
