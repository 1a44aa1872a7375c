r"""The direct FIR of :mod:`.fir` as one Triton kernel per axis, for tensors on a GPU.

The torch route of the direct method moves the filtered axis last, pads it for the boundary
mode and runs ``conv1d``: three passes over the data per axis, plus cuDNN's setup for a
single-channel convolution. For the short kernels where the direct method is chosen
(σ up to a few samples) that is most of the time of a call on a large image. This kernel
reads the array in place, as ``(pre, n, post)`` with the filtered axis in the middle, and
writes the result once:

.. math:: y_j = h_0 x_j + \sum_{k=1}^{W} h_k \,(x_{j-k} \pm x_{j+k}),

with ``+`` for the even kernels (orders 0 and 2) and ``-`` for the odd one (order 1),
samples outside ``[0, n)`` taken by scipy.ndimage's boundary modes inside the loop (codes of
:data:`fastmoments.signal.fir.MODE_CODES`: reflect, nearest, mirror, wrap, constant). The
half kernel ``hh`` and the sums are in the dtype of ``hh`` (float64 taps for short float32
kernels, as on the CPU), so the result equals the numba kernel's to rounding.

Used by :func:`fastmoments.signal.gaussian._run_direct` on CUDA tensors (no gradient
recorded); ``TRITON_INTERPRET=1`` runs it on the CPU for the tests.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .._launches import launch
from .._triton import HAVE_TRITON as _HAVE_TRITON
from .._triton import available, loop_bound, tl, triton

__all__ = ["available", "fir_axis", "fir_passes"]

if _HAVE_TRITON:

    @triton.jit
    def _source(j, n, MODE: tl.constexpr):
        """Index in ``[0, n)`` of the extended sample ``j`` (-1: the constant ``cval``)."""
        inside = (j >= 0) & (j < n)
        if MODE == 0:  # reflect: period 2n, (d c b a | a b c d | d c b a)
            p = 2 * n
            r = ((j % p) + p) % p
            r = tl.where(r >= n, p - 1 - r, r)
        elif MODE == 1:  # nearest
            r = tl.minimum(tl.maximum(j, 0), n - 1)
        elif MODE == 2:  # mirror: period 2n - 2, (d c b | a b c d | c b a)
            p = tl.maximum(2 * n - 2, 1)
            r = ((j % p) + p) % p
            r = tl.where(r >= n, p - r, r)
        elif MODE == 3:  # wrap
            r = ((j % n) + n) % n
        else:  # constant
            r = tl.where(inside, j, -1)
        return tl.where(inside, j, r)

    @triton.jit
    def _tap(acc, hk, xa, xb, ODD: tl.constexpr):
        """Add the tap pair ``hk`` (``xa`` before, ``xb`` after the output sample)."""
        if ODD:
            acc += hk * xa - hk * xb
        else:
            acc += hk * xa + hk * xb
        return acc

    @triton.jit
    def _interior(acc, ptrs, step, mask, hh_ptr, W, ODD: tl.constexpr,
                  INTERPRET: tl.constexpr, WC: tl.constexpr):
        """All taps of a tile whose neighbours lie inside the axis (no boundary mode to
        apply: most tiles; the index arithmetic of the modes cost more than the loads);
        ``step`` is the stride of the filtered axis. The loops run to the constexpr ``WC``
        under the interpreter (which cannot loop to a runtime bound), to ``W`` compiled."""
        for k in range(1, (WC if INTERPRET else W) + 1):
            hk = tl.load(hh_ptr + k)
            xa = tl.load(ptrs - k * step, mask=mask, other=0.0).to(acc.dtype)
            xb = tl.load(ptrs + k * step, mask=mask, other=0.0).to(acc.dtype)
            acc = _tap(acc, hk, xa, xb, ODD)
        return acc

    @triton.jit
    def _fir_kernel(x_ptr, y_ptr, hh_ptr, n, post, W,
                    ODD: tl.constexpr, MODE: tl.constexpr, BN: tl.constexpr,
                    BP: tl.constexpr, INTERPRET: tl.constexpr = False, WC: tl.constexpr = 0):
        pre = tl.program_id(0).to(tl.int64)
        nb = tl.program_id(1)
        pb = tl.program_id(2)
        offs_n = nb * BN + tl.arange(0, BN)
        offs_p = pb * BP + tl.arange(0, BP)
        pmask = offs_p < post
        nmask = offs_n < n
        base = pre * n * post
        cols = offs_p[None, :].to(tl.int64)
        h0 = tl.load(hh_ptr)
        cval = tl.load(hh_ptr + W + 1)  # after the taps: a float64 cval stays float64
        x = tl.load(x_ptr + base + offs_n[:, None].to(tl.int64) * post + cols,
                    mask=nmask[:, None] & pmask[None, :], other=0.0)
        acc = h0 * x.to(h0.dtype)
        first = nb * BN
        if (first >= W) & (first + BN + W <= n):
            ptrs = x_ptr + base + offs_n[:, None].to(tl.int64) * post + cols
            acc = _interior(acc, ptrs, post, pmask[None, :] & nmask[:, None], hh_ptr, W, ODD,
                            INTERPRET, WC)
        else:
            for k in range(1, (WC if INTERPRET else W) + 1):
                hk = tl.load(hh_ptr + k)
                ia = _source(offs_n - k, n, MODE)
                ib = _source(offs_n + k, n, MODE)
                ma = nmask[:, None] & pmask[None, :] & (ia >= 0)[:, None]
                mb = nmask[:, None] & pmask[None, :] & (ib >= 0)[:, None]
                xa = tl.load(x_ptr + base + tl.maximum(ia, 0)[:, None].to(tl.int64) * post
                             + cols, mask=ma, other=cval).to(h0.dtype)
                xb = tl.load(x_ptr + base + tl.maximum(ib, 0)[:, None].to(tl.int64) * post
                             + cols, mask=mb, other=cval).to(h0.dtype)
                acc = _tap(acc, hk, xa, xb, ODD)
        tl.store(y_ptr + base + offs_n[:, None].to(tl.int64) * post + cols,
                 acc.to(y_ptr.dtype.element_ty), mask=nmask[:, None] & pmask[None, :])


if _HAVE_TRITON:

    @triton.jit
    def _fir_last_kernel(x_ptr, y_ptr, hh_ptr, n, W, flag_ptr,
                         ODD: tl.constexpr, MODE: tl.constexpr, BN: tl.constexpr,
                         FLAG: tl.constexpr, INTERPRET: tl.constexpr = False,
                         WC: tl.constexpr = 0):
        """:func:`_fir_kernel` for the contiguous last axis (``post == 1``): 1-D tiles, whose
        loads the compiler vectorises (2-3.6x faster than ``(BN, 1)`` tiles on an H100).
        With ``FLAG``, a tile holding NaN or infinity sets the byte at ``flag_ptr`` to 0 (the
        tiles cover every sample once)."""
        base = tl.program_id(0).to(tl.int64) * n
        first = tl.program_id(1) * BN
        offs = first + tl.arange(0, BN)
        m = offs < n
        h0 = tl.load(hh_ptr)
        cval = tl.load(hh_ptr + W + 1)
        xc = tl.load(x_ptr + base + offs, mask=m, other=0.0)
        if FLAG:  # |x| < inf is false exactly for NaN and infinity
            bad = tl.min((tl.abs(xc) < float("inf")).to(tl.int32), axis=0) == 0
            tl.store(flag_ptr, tl.zeros((), dtype=tl.uint8), mask=bad)
        acc = h0 * xc.to(h0.dtype)
        if (first >= W) & (first + BN + W <= n):
            acc = _interior(acc, x_ptr + base + offs, 1, m, hh_ptr, W, ODD, INTERPRET, WC)
        else:
            for k in range(1, (WC if INTERPRET else W) + 1):
                hk = tl.load(hh_ptr + k)
                ia = _source(offs - k, n, MODE)
                ib = _source(offs + k, n, MODE)
                xa = tl.load(x_ptr + base + tl.maximum(ia, 0), mask=m & (ia >= 0),
                             other=cval).to(h0.dtype)
                xb = tl.load(x_ptr + base + tl.maximum(ib, 0), mask=m & (ib >= 0),
                             other=cval).to(h0.dtype)
                acc = _tap(acc, hk, xa, xb, ODD)
        tl.store(y_ptr + base + offs, acc.to(y_ptr.dtype.element_ty), mask=m)


_TAPS: dict[tuple, torch.Tensor] = {}


def _device_taps(hh: np.ndarray, cval: float, device: torch.device) -> torch.Tensor:
    """``hh`` followed by ``cval`` on ``device``, kept (the half kernels are few and small):
    no host-to-device copy per call, so calls can be captured in CUDA graphs."""
    key = (hh.tobytes(), hh.dtype.str, float(cval), str(device))
    t = _TAPS.get(key)
    if t is None:
        if len(_TAPS) > 256:
            _TAPS.clear()
        both = np.append(hh, np.asarray(cval, dtype=hh.dtype))
        t = _TAPS[key] = torch.as_tensor(both, device=device)
    return t


def _tiles(n: int, post: int) -> tuple[int, int]:
    """``(BN, BP)``: rows along the filtered axis and columns of ``post`` per program."""
    bp = min(128, triton.next_power_of_2(post))
    return max(1, min(triton.next_power_of_2(n), 4096 // bp)), bp


def fir_axis(x: torch.Tensor, axis: int, hh: np.ndarray, odd: bool, mode: int, cval: float,
             out: torch.Tensor | None = None, flag: torch.Tensor | None = None) -> torch.Tensor:
    """Filter the C-contiguous tensor ``x`` along ``axis`` (non-negative) with the half kernel
    ``hh`` (float64 or ``x``'s dtype) of parity ``odd`` and boundary mode code ``mode``.

    Returns a new tensor, or ``out`` (C-contiguous, ``x``'s shape and dtype, not
    overlapping ``x``) filled. ``flag`` (a ``uint8`` device byte) is set to 0 when ``x``
    holds NaN or infinity: inside the kernel along the last axis, by one more kernel
    (:func:`fastmoments._finite_kernel.clear_if_nonfinite`) along the others.
    """
    shape = x.shape
    n = shape[axis]
    pre = math.prod(shape[:axis])
    post = math.prod(shape[axis + 1:])
    y = torch.empty_like(x, memory_format=torch.contiguous_format) if out is None else out
    if x.numel() == 0:
        return y
    taps = _device_taps(hh, cval, x.device)
    if flag is not None and post != 1:
        from .._finite_kernel import clear_if_nonfinite

        clear_if_nonfinite(x, flag)
    if post == 1:
        # tiles measured on an H100 (2048^2, 128^3 and 1e6 samples, W = 2 and 8)
        bn = min(1024 if len(hh) <= 5 else 512, triton.next_power_of_2(max(n, 16)))
        launch(_fir_last_kernel, (pre, triton.cdiv(n, bn)), x, y, taps, n, len(hh) - 1,
               y if flag is None else flag, ODD=bool(odd), MODE=int(mode), BN=bn,
               FLAG=flag is not None, **loop_bound("WC", len(hh) - 1),
               num_warps=4 if bn >= 512 else 2)
        return y
    bn, bp = _tiles(n, post)
    grid = (pre, triton.cdiv(n, bn), triton.cdiv(post, bp))
    launch(_fir_kernel, grid, x, y, taps, n, post, len(hh) - 1, ODD=bool(odd),
           MODE=int(mode), BN=bn, BP=bp, **loop_bound("WC", len(hh) - 1), num_warps=4)
    return y


def fir_passes(x: torch.Tensor, passes: list[tuple[int, np.ndarray, bool, int]], cval: float,
               target: torch.Tensor | None = None,
               flag: torch.Tensor | None = None) -> torch.Tensor:
    """Filter the C-contiguous tensor ``x`` along several axes, one :func:`fir_axis` per
    entry ``(axis, hh, odd, mode code)`` of ``passes`` (as :func:`.fir.fir_passes` on the
    host). The last pass writes into ``target`` when it can (C-contiguous, ``x``'s dtype,
    not ``x``); else ``target`` receives a copy. Returns the result (``target`` if given).
    ``flag`` goes to the first pass, which reads ``x`` (see :func:`fir_axis`)."""
    y = x
    for k, (ax, hh, odd, code) in enumerate(passes):
        dst = None
        if (k == len(passes) - 1 and target is not None and target.is_contiguous()
                and target.dtype == y.dtype and target.data_ptr() != y.data_ptr()):
            dst = target
        y = fir_axis(y, ax, hh, odd, code, cval, out=dst, flag=flag if k == 0 else None)
    if target is not None and y is not target:
        target.copy_(y)
        return target
    return y
