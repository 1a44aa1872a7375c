r"""Fused Triton kernels for the radial stage of the Zernike and pseudo-Zernike transforms.

The plain torch engine either keeps the whole radial table in memory or streams it, one
recurrence step per kernel launch. On a GPU these kernels instead run the recurrence in
registers and contract it with the angular sums on the fly: each program owns one repetition
``m`` and a block of radii, walks the orders ``n = m, m+2, ...`` (Zernike) or
``n = m, m+1, ...`` (pseudo-Zernike), and

* forward: writes :math:`\sum_{g \in \text{block}} R_{nm}(r_g) S_{gm}` for every ``n``
  (partial sums over radius blocks, added by torch afterwards, so the result is
  deterministic);
* synthesis: accumulates :math:`C_{gm} = \sum_n R_{nm}(r_g) a_{nm}`.

The radial values use the Jacobi three-term recurrence in degree,
:math:`R_{nm}(r) = (-1)^j r^m P^{(\alpha, 0)}_j(x)` with :math:`\alpha = m`,
:math:`x = 1 - 2r^2`, :math:`n = m + 2j` (Zernike) or :math:`\alpha = 2m + 1`,
:math:`x = 1 - 2r`, :math:`n = m + j` (pseudo-Zernike), in float64 with a running exponent
(the factor :math:`r^m` is kept as a base-2 logarithm, and the polynomial is rescaled by
exactly :math:`2^{-332}` whenever it passes :math:`10^{100}`), so nothing underflows or
overflows at any order. This is the ``"jacobi"`` method of :mod:`fastmoments.disk.radial`,
which agrees with exact rational arithmetic to 5e-11 at order 1000 (tests). Products with
the angular sums are float32 or float64 as the plan's dtype.

The kernels are only used on CUDA devices when Triton is importable; everything has a torch
path that is the reference and the CPU path. Under ``TRITON_INTERPRET=1`` they also run on
the CPU (slowly), which is how the tests check them without a GPU.
"""

from __future__ import annotations

import os

import torch

__all__ = ["FusedForward", "FusedSynthesis", "available", "radial_forward", "radial_synthesis"]

from .._launches import launch
from .._triton import HAVE_TRITON as _HAVE_TRITON
from .._triton import available, tl, triton

if _HAVE_TRITON:

    @triton.jit
    def _jacobi_start(r, m, ZERNIKE: tl.constexpr):
        if ZERNIKE:
            x = 1.0 - 2.0 * r * r
        else:
            x = 1.0 - 2.0 * r
        logr = tl.log2(tl.where(r > 0, r, 1.0))
        # r^m as a base-2 logarithm; at r = 0 it is 0 for m > 0 and 1 for m = 0
        at_zero = -1.0e300 * tl.minimum(m, 1.0)
        scale = tl.where(r == 0, at_zero, m * logr)
        return x, scale

    @triton.jit
    def _jacobi_step(p_cur, p_prev, scale, e, x, kp, j):
        """One step P_{j+1} = (A x + B) P_j - C P_{j-1} with host-computed (A, B, C) at
        ``kp``, and the running exponent: 8 steps multiply by less than 1e22 (P_j at x = 1,
        alpha <= 2001), so a check every 8 steps against 1e100 cannot overflow and costs one
        reduction in 8. The rescaling is by exactly 2^-332 (Triton types a literal that fits
        in float32 as float32, so only small integers serve as constants)."""
        nxt = (tl.load(kp) * x + tl.load(kp + 1)) * p_cur - tl.load(kp + 2) * p_prev
        p_prev = p_cur
        p_cur = nxt
        if j % 8 == 7:
            big = tl.abs(p_cur) > 1.0e100
            if tl.max(big.to(tl.int32), axis=0) > 0:
                shift = tl.where(big, -332.0, 0.0).to(tl.float64)
                f = tl.exp2(shift)
                p_cur = p_cur * f
                p_prev = p_prev * f
                scale = scale - shift
                e = tl.exp2(scale)
        return p_cur, p_prev, scale, e

    @triton.jit
    def _radial_fwd_kernel(r_ptr, s_ptr, m_ptr, jn_ptr, k_ptr, out_ptr, G, NB2, k_sc,
                           s_sc, s_sg, o_sblk, o_sc, o_sj,
                           ZERNIKE: tl.constexpr, BLOCK_G: tl.constexpr,
                           BLOCK_B: tl.constexpr, INTERPRET: tl.constexpr,
                           JMAX: tl.constexpr):
        c = tl.program_id(0)
        gb = tl.program_id(1)
        bb = tl.program_id(2)
        m = tl.load(m_ptr + c).to(tl.float64)
        jn = tl.load(jn_ptr + c)
        offs_g = gb * BLOCK_G + tl.arange(0, BLOCK_G)
        gmask = offs_g < G
        offs_b = bb * BLOCK_B + tl.arange(0, BLOCK_B)
        bmask = offs_b < NB2
        r = tl.load(r_ptr + offs_g, mask=gmask, other=0.5)
        s = tl.load(s_ptr + c * s_sc + offs_g[:, None] * s_sg + offs_b[None, :],
                    mask=gmask[:, None] & bmask[None, :], other=0.0)
        x, scale = _jacobi_start(r, m, ZERNIKE)
        e = tl.exp2(scale)
        p_prev = tl.zeros([BLOCK_G], dtype=tl.float64)
        p_cur = tl.zeros([BLOCK_G], dtype=tl.float64) + 1.0
        sign = 1.0
        # the interpreter cannot bound a loop by a run-time value: it runs to the constant
        # JMAX and masks (JMAX is 0, unused, when compiled)
        for j in range(0, JMAX if INTERPRET else jn):
            val = (sign * p_cur * e).to(s.dtype)
            val = tl.where(gmask, val, 0.0)
            part = tl.sum(val[:, None] * s, axis=0)
            tl.store(out_ptr + gb * o_sblk + c * o_sc + j * o_sj + offs_b, part,
                     mask=bmask & (j < jn))
            p_cur, p_prev, scale, e = _jacobi_step(p_cur, p_prev, scale, e, x,
                                                   k_ptr + c * k_sc + 3 * j, j)
            sign = -sign

    @triton.jit
    def _radial_syn_kernel(r_ptr, a_ptr, m_ptr, jn_ptr, k_ptr, out_ptr, G, NB2, k_sc,
                           a_sc, a_sj, o_sc, o_sg,
                           ZERNIKE: tl.constexpr, BLOCK_G: tl.constexpr,
                           BLOCK_B: tl.constexpr, INTERPRET: tl.constexpr,
                           JMAX: tl.constexpr):
        c = tl.program_id(0)
        gb = tl.program_id(1)
        bb = tl.program_id(2)
        m = tl.load(m_ptr + c).to(tl.float64)
        jn = tl.load(jn_ptr + c)
        offs_g = gb * BLOCK_G + tl.arange(0, BLOCK_G)
        gmask = offs_g < G
        offs_b = bb * BLOCK_B + tl.arange(0, BLOCK_B)
        bmask = offs_b < NB2
        r = tl.load(r_ptr + offs_g, mask=gmask, other=0.5)
        x, scale = _jacobi_start(r, m, ZERNIKE)
        e = tl.exp2(scale)
        p_prev = tl.zeros([BLOCK_G], dtype=tl.float64)
        p_cur = tl.zeros([BLOCK_G], dtype=tl.float64) + 1.0
        sign = 1.0
        coef = tl.load(a_ptr + c * a_sc + offs_b, mask=bmask, other=0.0)
        acc = tl.zeros([BLOCK_G, BLOCK_B], dtype=coef.dtype)
        for j in range(0, JMAX if INTERPRET else jn):
            coef = tl.load(a_ptr + c * a_sc + j * a_sj + offs_b, mask=bmask & (j < jn),
                           other=0.0)
            val = (sign * p_cur * e).to(coef.dtype)
            acc += val[:, None] * coef[None, :]
            p_cur, p_prev, scale, e = _jacobi_step(p_cur, p_prev, scale, e, x,
                                                   k_ptr + c * k_sc + 3 * j, j)
            sign = -sign
        tl.store(out_ptr + c * o_sc + offs_g[:, None] * o_sg + offs_b[None, :], acc,
                 mask=gmask[:, None] & bmask[None, :])


def _interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET", "") == "1"


#: Radius block of the forward kernel's programs (None: ``max(64, 8192 // block_b)``, one
#: reduction over many radii per order and program) and its warps: the defaults were the
#: fastest of the last sweep of ``disk_sweep.py`` (camera 512 x 512, T = 700, float32,
#: H100: 4.9 ms against 5.1-11.8 ms for the other blocks and warps; the script and its
#: results are in git at a8e7402: ``git show a8e7402:benchmarks/results/disk_sweep.json``).
#: A sweep sets these module constants.
FORWARD_BLOCK_G: int | None = None
FORWARD_WARPS = 8


def _blocks(nb2: int) -> tuple[int, int]:
    """(radii, batch columns) handled by one program of the forward kernel."""
    block_b = 1
    while block_b < min(nb2, 16):
        block_b *= 2
    if FORWARD_BLOCK_G:
        return FORWARD_BLOCK_G, block_b
    # one reduction over the radii per order and program: make it cover many radii
    return max(64, 8192 // block_b), block_b


def jacobi_coefficients(ms: torch.Tensor, n_rows: int, zernike: bool) -> torch.Tensor:
    """``(C, n_rows, 3)`` float64 (A, B, C) with P_{j+1} = (A x + B) P_j - C P_{j-1} for the
    Jacobi polynomials P^(alpha, 0), alpha = m (Zernike) or 2m + 1 (pseudo-Zernike); computed
    once per plan so that the kernels do no division."""
    a = ms.to(torch.float64)[:, None].cpu()
    a = a if zernike else 2 * a + 1
    j = torch.arange(n_rows, dtype=torch.float64)[None, :]
    c = 2 * j + a
    den = 2 * (j + 1) * (j + a + 1) * torch.where(j == 0, torch.ones_like(c), c)
    ca = torch.where(j == 0, (a + 2) / 2, (c + 1) * (c + 2) * c / den)
    cb = torch.where(j == 0, a / 2 + 0 * j, (c + 1) * a * a / den)
    cc = torch.where(j == 0, 0 * c, 2 * (j + a) * j * (c + 2) / den)
    return torch.stack([ca, cb, cc], dim=-1).contiguous().to(ms.device)


def radial_forward(r: torch.Tensor, S: torch.Tensor, ms: torch.Tensor, jn: torch.Tensor,
                   n_rows: int, zernike: bool, coef: torch.Tensor) -> torch.Tensor:
    """``out[c, j, :] = sum_g R_{n_j m_c}(r_g) S[c, g, :]`` for real ``S`` ``(C, G, NB2)``.

    ``jn[c]`` is the number of rows of column ``c`` (orders ``m, m+2, ...`` or ``m, m+1,
    ...``); rows past it are 0.
    """
    C, G, NB2 = S.shape
    S = S.contiguous()
    block_g, block_b = _blocks(NB2)
    # a few radii (the nodes of a compressed stage): one block no wider than they need
    # (H100, 351 nodes, T = 700: 0.46 ms with one block of 512, 0.62 ms with blocks of 128,
    # 1.4 ms with blocks of 32 and 64)
    block_g = min(block_g, max(32, triton.next_power_of_2(G)))
    ngb = triton.cdiv(G, block_g)
    part = torch.zeros(ngb, C, n_rows, NB2, dtype=S.dtype, device=S.device)
    grid = (C, ngb, triton.cdiv(NB2, block_b))
    interp = _interpreting()
    launch(_radial_fwd_kernel, grid, r, S, ms, jn, coef, part, G, NB2, coef.stride(0),
           S.stride(0), S.stride(1),
           part.stride(0), part.stride(1), part.stride(2),
           ZERNIKE=zernike, BLOCK_G=block_g, BLOCK_B=block_b,
           INTERPRET=interp, JMAX=n_rows if interp else 0,
           num_warps=FORWARD_WARPS)
    return part.sum(0)


def radial_synthesis(r: torch.Tensor, a: torch.Tensor, ms: torch.Tensor, jn: torch.Tensor,
                     zernike: bool, coef: torch.Tensor) -> torch.Tensor:
    """``C[c, g, :] = sum_j R_{n_j m_c}(r_g) a[c, j, :]`` for real ``a`` ``(C, J, NB2)``."""
    C, J, NB2 = a.shape
    a = a.contiguous()
    G = r.shape[0]
    block_b = 1
    while block_b < min(NB2, 16):
        block_b *= 2
    block_g = max(32, 2048 // (block_b * 4))
    out = torch.empty(C, G, NB2, dtype=a.dtype, device=a.device)
    grid = (C, triton.cdiv(G, block_g), triton.cdiv(NB2, block_b))
    interp = _interpreting()
    launch(_radial_syn_kernel, grid, r, a, ms, jn, coef, out, G, NB2, coef.stride(0),
           a.stride(0), a.stride(1),
           out.stride(0), out.stride(1),
           ZERNIKE=zernike, BLOCK_G=block_g, BLOCK_B=block_b,
           INTERPRET=interp, JMAX=J if interp else 0, num_warps=4)
    return out


# ----------------------------------------------------------------------------- angular stage
if _HAVE_TRITON:

    @triton.jit
    def _angular_fwd_kernel(fp_ptr, fm_ptr, th_ptr, tt_ptr, gs_ptr, m_ptr, out_ptr, G, MC,
                            f_sb, f_so, o_sc, o_sg, o_sb,
                            BLOCK_M: tl.constexpr, GB: tl.constexpr, DOUBLE: tl.constexpr,
                            INTERPRET: tl.constexpr, MAXO: tl.constexpr):
        gblk = tl.program_id(0)
        mb = tl.program_id(1)
        b = tl.program_id(2)
        offs_m = mb * BLOCK_M + tl.arange(0, BLOCK_M)
        mmask = offs_m < MC
        mi = tl.load(m_ptr + offs_m, mask=mmask, other=0)
        m = mi.to(tl.float64)
        q2 = (mi % 4) * 2
        for gi in range(GB):
            g = gblk * GB + gi
            gvalid = g < G
            o0 = tl.load(gs_ptr + g, mask=gvalid, other=0)
            o1 = tl.load(gs_ptr + g + 1, mask=gvalid, other=0)
            if DOUBLE:
                acc_re = tl.zeros([BLOCK_M], dtype=tl.float64)
                acc_im = tl.zeros([BLOCK_M], dtype=tl.float64)
            else:
                acc_re = tl.zeros([BLOCK_M], dtype=tl.float32)
                acc_im = tl.zeros([BLOCK_M], dtype=tl.float32)
            # the interpreter cannot bound a loop by a loaded value (see radial kernels)
            for k in range(0, MAXO if INTERPRET else o1 - o0):
                o = o0 + k
                ok = o < o1
                if DOUBLE:
                    th = tl.load(th_ptr + o, mask=ok, other=0.0)
                    c = tl.cos(m * th)
                    s = tl.sin(m * th)
                else:
                    # the phase in turns, reduced to [-1/2, 1/2) in float64, then float32
                    t = m * tl.load(tt_ptr + o, mask=ok, other=0.0)
                    t = t - tl.floor(t + 0.5)
                    ang = t.to(tl.float32) * 6.2831854820251465
                    c = tl.cos(ang)
                    s = tl.sin(ang)
                base = b * f_sb + o * f_so + q2
                msk = mmask & ok
                fpr = tl.load(fp_ptr + base, mask=msk, other=0.0)
                fpi = tl.load(fp_ptr + base + 1, mask=msk, other=0.0)
                fmr = tl.load(fm_ptr + base, mask=msk, other=0.0)
                fmi = tl.load(fm_ptr + base + 1, mask=msk, other=0.0)
                # e^{-i ph} F+ + e^{+i ph} F-
                acc_re += c * (fpr + fmr) + s * (fpi - fmi)
                acc_im += c * (fpi + fmi) + s * (fmr - fpr)
            dst = out_ptr + offs_m * o_sc + g * o_sg + b * o_sb
            tl.store(dst, acc_re.to(out_ptr.dtype.element_ty), mask=mmask & gvalid)
            tl.store(dst + 1, acc_im.to(out_ptr.dtype.element_ty), mask=mmask & gvalid)


def angular_forward(fp: torch.Tensor, fm: torch.Tensor, theta0: torch.Tensor,
                    gstart: torch.Tensor, ms: torch.Tensor, n_groups: int,
                    max_orbits: int, group_major: bool = False) -> torch.Tensor:
    r"""Angular sums ``S[c, g, b] = sum_{o in g} e^{-i m_c th_o} F+[b, o, m_c % 4]
    + e^{i m_c th_o} F-[b, o, m_c % 4]`` as a real view ``(C, G, B, 2)``.

    ``fp``/``fm`` are ``(B, O, 4)`` complex (the orbits' 4-point DFTs), ``theta0`` float64
    ``(O,)``, ``gstart`` int ``(G + 1,)`` the first orbit of each group (orbits sorted by
    group), relative to the first orbit passed. ``group_major``: return ``(G, C, B, 2)``
    float64 instead (the layout and dtype of the compressed radial stage's products; the
    sums are still formed in the inputs' dtype).
    """
    B, _O, _ = fp.shape
    C = ms.shape[0]
    fpr = torch.view_as_real(fp.contiguous())  # (B, O, 4, 2)
    turns = theta0 / (2 * torch.pi)
    fmr = torch.view_as_real(fm.contiguous())
    if group_major:  # float64 whatever the sums' dtype: the compressed stage's operand
        store = torch.empty(n_groups, C, B, 2, dtype=torch.float64, device=fp.device)
        out = store.transpose(0, 1)
    else:
        store = out = torch.empty(C, n_groups, B, 2, dtype=fpr.dtype, device=fp.device)
    block_m = 64
    gb = 8
    interp = _interpreting()
    grid = (triton.cdiv(n_groups, gb), triton.cdiv(C, block_m), B)
    launch(_angular_fwd_kernel, grid, fpr, fmr, theta0, turns, gstart, ms, out, n_groups, C,
           fpr.stride(0), fpr.stride(1), out.stride(0), out.stride(1),
           out.stride(2), BLOCK_M=block_m, GB=gb,
           DOUBLE=fpr.dtype == torch.float64, INTERPRET=interp,
           MAXO=max_orbits if interp else 0, num_warps=2)
    return store


# ----------------------------------------------------------------- the kernels under autograd
class FusedForward(torch.autograd.Function):
    """Fused radial contraction; its adjoint (for autograd) is the fused synthesis."""

    @staticmethod
    def forward(ctx, S, r, ms, jn, n_rows, zernike, coef):
        ctx.save_for_backward(r, ms, jn, coef)
        ctx.zernike = zernike
        return radial_forward(r, S, ms, jn, n_rows, zernike, coef)

    @staticmethod
    def backward(ctx, grad):
        r, ms, jn, coef = ctx.saved_tensors
        return (radial_synthesis(r, grad, ms, jn, ctx.zernike, coef),
                None, None, None, None, None, None)


class FusedSynthesis(torch.autograd.Function):
    """Fused radial synthesis; its adjoint is the fused forward contraction."""

    @staticmethod
    def forward(ctx, a, r, ms, jn, zernike, coef):
        ctx.save_for_backward(r, ms, jn, coef)
        ctx.zernike = zernike
        ctx.n_rows = a.shape[1]
        return radial_synthesis(r, a, ms, jn, zernike, coef)

    @staticmethod
    def backward(ctx, grad):
        r, ms, jn, coef = ctx.saved_tensors
        return (radial_forward(r, grad, ms, jn, ctx.n_rows, ctx.zernike, coef),
                None, None, None, None, None)
