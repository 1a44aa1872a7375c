r"""Triton kernels of the per-object moments on a GPU (:mod:`fastmoments.disk.labels`).

Three launches replace the torch passes of :func:`.label_geometry._device_geometry` and
:func:`.labels._kernel_sums` (which stay as the reference and the CPU path):

* :func:`_label_stats_kernel`, one program per block of a row: the pixel count, the integer
  sums of rows and columns and the bounding box of every label *value*. A row is read as
  runs of equal labels (a run ends at the block's edge too); only a run's two ends touch
  memory outside the block, by atomic operations: the run :math:`c_0 .. c_1` of row
  :math:`r` adds :math:`c_1 + 1 - c_0` pixels, :math:`T(c_1) - T(c_0 - 1)` to the column sum
  (:math:`T(k) = k(k+1)/2`) and :math:`r (c_1 + 1 - c_0)` to the row sum, split between its
  start (the negative terms) and its end (the positive ones), so that no scan is needed.
  All integers: the totals are exact.
* :func:`_circle_kernel`, one program per object: its minimum enclosing circle, by the
  algorithm of Elzinga and Hearn (J. Elzinga and D. W. Hearn, "Geometrical solutions for
  some minimax location problems", Transportation Science 6, 1972): keep a support of at
  most three pixel centres and the smallest circle through or around them; scan the
  object's bounding box for its pixel farthest from the centre; while that pixel lies
  outside the circle (by more than a relative ``1e-12`` of the squared radius), it joins
  the support, which becomes the smallest circle around the old support and the new pixel
  (the new pixel on it: a circle on a diameter from it, or through it and two support
  points, the smallest that holds the rest). The radius grows at every step, so the steps
  end; the last circle holds every pixel centre and is the minimum enclosing circle.
  Circumcentres come from the Cartesian formula, whose numerators and denominator are
  exact integers for integer coordinates (the centre is the correctly rounded one, in
  whatever order the three points come), as in :mod:`fastmoments.disk.enclosing`.
* :func:`_zernike_box_kernel`, one program per piece of an object's bounding box (a few
  thousand pixels; most objects are one piece): the sums
  :math:`\sum_p f_p R_{nm}(\rho_p) w_p^m / \rho_p^m` of every pair :math:`(n, m)` of the
  object's pixels in its disk, accumulated in the program (no atomic operation unless an
  object has several pieces). The pixels go in tiles of ``BLOCK_P`` pixels by ``BLOCK_M``
  repetitions :math:`m`: the angular factor :math:`w^m` (:math:`w = \hat x + i \hat y` in
  the standard convention, :math:`\hat y + i \hat x` in CellProfiler's) by repeated
  products, and the radial one from the Jacobi recurrence :math:`R_{nm}(\rho) = (-1)^j
  \rho^m P^{(m, 0)}_j(1 - 2\rho^2)`, :math:`n = m + 2j`, one step in :math:`j` for all
  :math:`m` at once (coefficients from the host), each step's products summed over the
  tile's pixels into the pair :math:`(m + 2j, m)` (the sign :math:`(-1)^j` is applied by
  :func:`zernike_box_sums`). In CellProfiler's convention the kernel is compiled without
  fused multiply-adds, so that :math:`\rho^2` rounds as NumPy rounds it and the same pixels
  pass :math:`\rho^2 \le 1`.

CellProfiler's convention needs its circles to the bit, from the objects' convex hulls:
:func:`_column_kernel` takes each object's column extremes, :func:`_hull_kernel` its hull by
Andrew's monotone chain (exact integers, the host's vertices in its order), and
:func:`_settled_circle_kernel` its circle by the steps of
:func:`._numba_circles.circles_settled` where they are clear, with the host's operations and
no fused multiply-add (float64 division and square root are correctly rounded), leaving the
other objects to the host.

The kernels run on CUDA, or on the CPU under ``TRITON_INTERPRET=1`` (how the tests check
them without a GPU). Loops whose bounds are read from memory are ``while`` loops, which the
interpreter runs too.
"""

from __future__ import annotations

import numpy as np
import torch

from .._launches import launch
from .._triton import HAVE_TRITON, available, tl, triton

__all__ = ["available", "circles", "column_extremes", "hulls", "label_stats",
           "settled_circles", "zernike_box_sums"]

#: Pixels a program of the moment sums reads at most from one object's box: larger boxes
#: are cut into pieces of whole rows, added by atomic operations.
PIECE_PIXELS = 4096
#: Steps of the enclosing-circle loop before a program gives up (its flag tells the caller,
#: which then solves every circle by the torch steps); far above what any object needs.
MAX_ROUNDS = 400
#: Label dtypes the kernels read as they are.
LABEL_DTYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)

if HAVE_TRITON:

    @triton.jit
    def _label_stats_kernel(lab_ptr, W, count_ptr, srow_ptr, scol_ptr, box_ptr,
                            BLOCK: tl.constexpr):
        r = tl.program_id(0).to(tl.int64)
        first_col = tl.program_id(1) * BLOCK
        c = first_col + tl.arange(0, BLOCK)
        inside = c < W
        row = lab_ptr + r * W
        v = tl.load(row + c, mask=inside, other=0).to(tl.int64)
        is_first = c == first_col
        is_last = (c == first_col + BLOCK - 1) | (c == W - 1)
        prev = tl.load(row + c - 1, mask=inside & ~is_first, other=-1).to(tl.int64)
        nxt = tl.load(row + c + 1, mask=inside & ~is_last, other=-1).to(tl.int64)
        start = inside & (v > 0) & (v != prev)
        end = inside & (v > 0) & (v != nxt)
        cc = c.to(tl.int64)
        # a run c0..c1 of row r: count c1 + 1 - c0, column sum T(c1) - T(c0 - 1), row sum
        # r (c1 + 1 - c0); the start adds the negative terms, the end the positive ones
        tl.atomic_add(count_ptr + v, -cc, mask=start, sem="relaxed")
        tl.atomic_add(count_ptr + v, cc + 1, mask=end, sem="relaxed")
        tl.atomic_add(scol_ptr + v, -(cc * (cc - 1) // 2), mask=start, sem="relaxed")
        tl.atomic_add(scol_ptr + v, cc * (cc + 1) // 2, mask=end, sem="relaxed")
        tl.atomic_add(srow_ptr + v, -r * cc, mask=start, sem="relaxed")
        tl.atomic_add(srow_ptr + v, r * (cc + 1), mask=end, sem="relaxed")
        r32 = r.to(tl.int32) + tl.zeros([BLOCK], tl.int32)
        c32 = c.to(tl.int32)
        tl.atomic_min(box_ptr + 4 * v, r32, mask=start, sem="relaxed")
        tl.atomic_min(box_ptr + 4 * v + 1, c32, mask=start, sem="relaxed")
        tl.atomic_max(box_ptr + 4 * v + 2, r32, mask=end, sem="relaxed")
        tl.atomic_max(box_ptr + 4 * v + 3, c32, mask=end, sem="relaxed")

    @triton.jit
    def _farthest(lab_ptr, W, v, r0, c0, bw, npx, cy, cx, BLOCK: tl.constexpr):
        """The object's pixel farthest from (cy, cx) in its box: (d^2, row, col)."""
        best = cy * 0.0 - 1.0
        bi = r0 * 0
        s = r0 * 0
        while s < npx:
            i = s + tl.arange(0, BLOCK)
            ok = i < npx
            rr = r0 + i // bw
            cc = c0 + i % bw
            lv = tl.load(lab_ptr + rr.to(tl.int64) * W + cc, mask=ok, other=0).to(tl.int64)
            ok = ok & (lv == v)
            dy = rr.to(tl.float64) - cy
            dx = cc.to(tl.float64) - cx
            d2 = tl.where(ok, dy * dy + dx * dx, -1.0)
            top = tl.max(d2, axis=0)
            at = tl.argmax(d2, axis=0)
            take = top > best
            best = tl.where(take, top, best)
            bi = tl.where(take, s + at, bi)
            s += BLOCK
        return best, (r0 + bi // bw).to(tl.float64), (c0 + bi % bw).to(tl.float64)

    @triton.jit
    def _holds(cy, cx, rad, qy, qx):
        dy = qy - cy
        dx = qx - cx
        return dy * dy + dx * dx <= rad * rad * (1.0 + 1e-12)

    @triton.jit
    def _diameter(py, px, qy, qx):
        dy = py - qy
        dx = px - qx
        return (py + qy) / 2, (px + qx) / 2, tl.sqrt(dy * dy + dx * dx) / 2

    @triton.jit
    def _circumcircle(y0, x0, y1, x1, y2, x2):
        """The circle through three points (:func:`.enclosing._circumcircle`'s formula), and
        whether they are not on one line."""
        q0 = y0 * y0 + x0 * x0
        q1 = y1 * y1 + x1 * x1
        q2 = y2 * y2 + x2 * x2
        den = 2 * (x0 * (y1 - y2) + x1 * (y2 - y0) + x2 * (y0 - y1))
        good = den != 0
        den = tl.where(good, den, 1.0)
        cx = (q0 * (y1 - y2) + q1 * (y2 - y0) + q2 * (y0 - y1)) / den
        cy = (q0 * (x2 - x1) + q1 * (x0 - x2) + q2 * (x1 - x0)) / den
        dy = y0 - cy
        dx = x0 - cx
        return cy, cx, tl.sqrt(dy * dy + dx * dx), good

    @triton.jit
    def _take(better, new, old):
        return tl.where(better, new, old)

    @triton.jit
    def _circle_kernel(lab_ptr, W, ids_ptr, box_ptr, cen_ptr, out_ptr, ok_ptr,
                       MAX_STEPS: tl.constexpr, BLOCK: tl.constexpr):
        o = tl.program_id(0).to(tl.int64)
        v = tl.load(ids_ptr + o)
        r0 = tl.load(box_ptr + 4 * o)
        c0 = tl.load(box_ptr + 4 * o + 1)
        bw = tl.load(box_ptr + 4 * o + 3) - c0 + 1
        npx = (tl.load(box_ptr + 4 * o + 2) - r0 + 1) * bw
        cy = tl.load(cen_ptr + 2 * o)
        cx = tl.load(cen_ptr + 2 * o + 1)
        zero = cy * 0.0
        rad = zero - 1.0  # no support yet: every pixel is outside
        ns = r0 * 0
        s0y = zero
        s0x = zero
        s1y = zero
        s1x = zero
        s2y = zero
        s2x = zero
        steps = r0 * 0
        going = steps == 0
        outside = going
        while going:
            d2, py, px = _farthest(lab_ptr, W, v, r0, c0, bw, npx, cy, cx, BLOCK)
            outside = (rad < 0) | (d2 > rad * rad * (1.0 + 1e-12))
            # the candidates, the new point on each: a diameter to a support point, or the
            # circle through two support points
            none = zero + 1e30  # no candidate yet (radii are far smaller)
            best = tl.where(ns == 0, zero, none)
            ny = py
            nx = px
            k = ns * 0  # which candidate: 0 the point alone, 1-3 diameters, 4-6 circles
            ay, ax, ar = _diameter(py, px, s0y, s0x)
            fit = ((ns >= 1) & (_holds(ay, ax, ar, s1y, s1x) | (ns < 2))
                   & (_holds(ay, ax, ar, s2y, s2x) | (ns < 3)))
            better = fit & (ar < best)
            best, ny, nx, k = (_take(better, ar, best), _take(better, ay, ny),
                               _take(better, ax, nx), _take(better, 1, k))
            ay, ax, ar = _diameter(py, px, s1y, s1x)
            fit = (_holds(ay, ax, ar, s0y, s0x)
                   & (_holds(ay, ax, ar, s2y, s2x) | (ns < 3)) & (ns >= 2))
            better = fit & (ar < best)
            best, ny, nx, k = (_take(better, ar, best), _take(better, ay, ny),
                               _take(better, ax, nx), _take(better, 2, k))
            ay, ax, ar = _diameter(py, px, s2y, s2x)
            fit = _holds(ay, ax, ar, s0y, s0x) & _holds(ay, ax, ar, s1y, s1x) & (ns >= 3)
            better = fit & (ar < best)
            best, ny, nx, k = (_take(better, ar, best), _take(better, ay, ny),
                               _take(better, ax, nx), _take(better, 3, k))
            ay, ax, ar, good = _circumcircle(py, px, s0y, s0x, s1y, s1x)
            fit = good & (_holds(ay, ax, ar, s2y, s2x) | (ns < 3)) & (ns >= 2)
            better = fit & (ar < best)
            best, ny, nx, k = (_take(better, ar, best), _take(better, ay, ny),
                               _take(better, ax, nx), _take(better, 4, k))
            ay, ax, ar, good = _circumcircle(py, px, s0y, s0x, s2y, s2x)
            fit = good & _holds(ay, ax, ar, s1y, s1x) & (ns >= 3)
            better = fit & (ar < best)
            best, ny, nx, k = (_take(better, ar, best), _take(better, ay, ny),
                               _take(better, ax, nx), _take(better, 5, k))
            ay, ax, ar, good = _circumcircle(py, px, s1y, s1x, s2y, s2x)
            fit = good & _holds(ay, ax, ar, s0y, s0x) & (ns >= 3)
            better = fit & (ar < best)
            best, ny, nx, k = (_take(better, ar, best), _take(better, ay, ny),
                               _take(better, ax, nx), _take(better, 6, k))
            found = best < none
            step = outside & found
            # the new support: the new point, then the support points of the candidate
            t1y = tl.where(k == 2, s1y, tl.where(k == 3, s2y, tl.where(k == 6, s1y, s0y)))
            t1x = tl.where(k == 2, s1x, tl.where(k == 3, s2x, tl.where(k == 6, s1x, s0x)))
            t2y = tl.where(k == 5, s2y, tl.where(k == 6, s2y, s1y))
            t2x = tl.where(k == 5, s2x, tl.where(k == 6, s2x, s1x))
            nn = tl.where(k == 0, 1, tl.where(k <= 3, 2, 3))
            s0y, s0x = _take(step, py, s0y), _take(step, px, s0x)
            s1y, s1x = _take(step, t1y, s1y), _take(step, t1x, s1x)
            s2y, s2x = _take(step, t2y, s2y), _take(step, t2x, s2x)
            ns = _take(step, nn, ns)
            cy, cx, rad = _take(step, ny, cy), _take(step, nx, cx), _take(step, best, rad)
            steps += 1
            going = step & (steps < MAX_STEPS)
        tl.store(out_ptr + 3 * o, cy)
        tl.store(out_ptr + 3 * o + 1, cx)
        tl.store(out_ptr + 3 * o + 2, tl.maximum(rad, 0.0))
        tl.store(ok_ptr + o, (~outside).to(tl.int8))  # else: stopped short, or stuck

    @triton.jit
    def _column_kernel(lab_ptr, W, ids_ptr, box_ptr, off_ptr, rmin_ptr, rmax_ptr,
                       BLOCK: tl.constexpr):
        o = tl.program_id(0).to(tl.int64)
        v = tl.load(ids_ptr + o)
        r0 = tl.load(box_ptr + 4 * o)
        c0 = tl.load(box_ptr + 4 * o + 1)
        r1 = tl.load(box_ptr + 4 * o + 2)
        bw = tl.load(box_ptr + 4 * o + 3) - c0 + 1
        off = tl.load(off_ptr + o)
        s = c0 * 0
        while s < bw:
            i = s + tl.arange(0, BLOCK)
            ok = i < bw
            lo = tl.full([BLOCK], 2**31 - 1, tl.int32)
            hi = tl.full([BLOCK], -1, tl.int32)
            r = r0
            while r <= r1:
                lv = tl.load(lab_ptr + r.to(tl.int64) * W + c0 + i, mask=ok,
                             other=0).to(tl.int64)
                hit = ok & (lv == v)
                lo = tl.minimum(lo, tl.where(hit, r, 2**31 - 1))
                hi = tl.maximum(hi, tl.where(hit, r, -1))
                r += 1
            tl.store(rmin_ptr + off + i, lo, mask=ok)
            tl.store(rmax_ptr + off + i, hi, mask=ok)
            s += BLOCK

    @triton.jit
    def _turn_pops(hr_ptr, hc_ptr, base, top, start, x, y):
        """The stack's new top before ``(x, y)`` is pushed: its top is dropped while the
        path through its last two vertices and ``(x, y)`` does not turn strictly left
        (the cross product, exact in int64), and it holds more than two past ``start``."""
        pop = top - start >= 2
        while pop:
            ay = tl.load(hr_ptr + base + top - 2).to(tl.int64)
            ax = tl.load(hc_ptr + base + top - 2).to(tl.int64)
            by = tl.load(hr_ptr + base + top - 1).to(tl.int64)
            bx = tl.load(hc_ptr + base + top - 1).to(tl.int64)
            left = (bx - ax) * (y - by) - (x - bx) * (by - ay) > 0
            top = tl.where(left, top, top - 1)
            pop = (left == 0) & (top - start >= 2)
        return top

    @triton.jit
    def _hull_kernel(box_ptr, off_ptr, rmin_ptr, rmax_ptr, hr_ptr, hc_ptr, cnt_ptr):
        o = tl.program_id(0).to(tl.int64)
        c0 = tl.load(box_ptr + 4 * o + 1).to(tl.int64)
        bw = tl.load(box_ptr + 4 * o + 3).to(tl.int64) - c0 + 1
        off = tl.load(off_ptr + o)
        base = 2 * off
        first = bw
        last = bw * 0 - 1
        e = bw * 0
        while e < bw:  # the first and the last column that hold a pixel
            hit = tl.load(rmax_ptr + off + e) >= 0
            first = tl.where(hit & (first == bw), e, first)
            last = tl.where(hit, e, last)
            e += 1
        top = bw * 0
        e = first
        while e <= last:  # the lower chain: each column's top pixel, left to right
            y = tl.load(rmin_ptr + off + e).to(tl.int64)
            if tl.load(rmax_ptr + off + e) >= 0:
                top = _turn_pops(hr_ptr, hc_ptr, base, top, 0, c0 + e, y)
                tl.store(hr_ptr + base + top, y)
                tl.store(hc_ptr + base + top, c0 + e)
                top += 1
            e += 1
        lower = top
        start = top
        e = last
        if tl.load(rmax_ptr + off + last) == tl.load(rmin_ptr + off + last):
            start = top - 1  # the last column's one pixel begins the upper chain
            e = last - 1
        while e >= first:  # the upper chain: each column's bottom pixel, right to left
            y = tl.load(rmax_ptr + off + e).to(tl.int64)
            if y >= 0:
                top = _turn_pops(hr_ptr, hc_ptr, base, top, start, c0 + e, y)
                tl.store(hr_ptr + base + top, y)
                tl.store(hc_ptr + base + top, c0 + e)
                top += 1
            e -= 1
        if (top > lower) & (tl.load(rmax_ptr + off + first)
                            == tl.load(rmin_ptr + off + first)):
            top -= 1  # the upper chain ended on the lower chain's first pixel
        tl.store(cnt_ptr + o, top)

    @triton.jit
    def _vertex(py_ptr, px_ptr, s, t):
        """Vertex ``t`` of the object whose vertices start at ``s``: ``(row, col)``."""
        return tl.load(py_ptr + s + t), tl.load(px_ptr + s + t)

    @triton.jit
    def _settled_circle_kernel(py_ptr, px_ptr, start_ptr, cnt_ptr, margin_ptr, out_ptr,
                               ok_ptr, BLOCK: tl.constexpr):
        """Object ``o``'s circle into ``out[o]`` (centre row, column, radius) and 1 into
        ``ok[o]``, or 0 there where a step is not clear (:func:`settled_circles`)."""
        o = tl.program_id(0).to(tl.int64)
        s = tl.load(start_ptr + o)
        c = tl.load(cnt_ptr + o)
        margin = tl.load(margin_ptr)
        offs = tl.arange(0, BLOCK)
        inside = offs < c
        y = tl.load(py_ptr + s + offs, mask=inside, other=0.0)
        x = tl.load(px_ptr + s + offs, mask=inside, other=0.0)
        y0, x0 = _vertex(py_ptr, px_ptr, s, 0)
        cy = y0
        cx = x0
        r = y0 * 0.0
        state = (c > BLOCK).to(tl.int32) * 2  # 0 steps left, 1 found, 2 left to the host
        if c == 1:
            state = 1
        if c == 2:  # as circle_start: the midpoint and its distance to the first
            y1, x1 = _vertex(py_ptr, px_ptr, s, 1)
            cy = (y0 + y1) / 2.0
            cx = (x0 + x1) / 2.0
            dy = cy - y0
            dx = cx - x0
            r = tl.sqrt(dy * dy + dx * dx)
            state = 1
        t0 = c * 0
        t1 = t0 + 1
        steps = t0
        while state == 0:
            y0, x0 = _vertex(py_ptr, px_ptr, s, t0)
            y1, x1 = _vertex(py_ptr, px_ptr, s, t1)
            sy = y0 - y1
            sx = x0 - x1
            l01 = sy * sy + sx * sx
            # the cosines at S1 and S0 with the host's operations: no fused multiply-add;
            # float64 division and square root are IEEE (correctly rounded) on CUDA
            vy = y - y1
            vx = x - x1
            num = sy * vy
            num = num + sx * vx
            a = num / tl.sqrt(l01 * (vy * vy + vx * vx))
            vy = y - y0
            vx = x - x0
            num = -sy * vy
            num = num + -sx * vx
            b = num / tl.sqrt(l01 * (vy * vy + vx * vx))
            cv = tl.sqrt(((1.0 - a) * (1.0 + a)) * ((1.0 - b) * (1.0 + b))) - a * b
            cand = inside & (offs != t0) & (offs != t1)
            nan = tl.sum((cand & (cv != cv)).to(tl.int32), 0)
            cv = tl.where(cand, cv, -float("inf"))
            top = tl.max(cv, 0)
            best = tl.min(tl.where(cv == top, offs, BLOCK), 0).to(tl.int64)
            near = tl.sum((cv >= top - margin).to(tl.int32), 0)
            ab = tl.sum(tl.where(offs == best, a, 0.0), 0)  # (the sign of a 0 is lost:
            bb = tl.sum(tl.where(offs == best, b, 0.0), 0)  # no test below reads it)
            steps += 1
            clear = ((nan == 0) & (near == 1) & (tl.abs(top) > margin)
                     & ((ab == 0.0) | (tl.abs(ab) > margin))
                     & ((bb == 0.0) | (tl.abs(bb) > margin)) & (steps <= 8 * c + 64))
            if clear == 0:
                state = 2
            elif top < 0:  # the diameter circle (_circle_case's operations)
                cy, cx, r = _diameter(y0, x0, y1, x1)
                state = 1
            elif (ab >= 0) & (bb >= 0):  # the circumcircle (the same)
                y2, x2 = _vertex(py_ptr, px_ptr, s, best)
                cy, cx, r, good = _circumcircle(y0, x0, y1, x1, y2, x2)
                state = tl.where(good, 1, 2)  # (three points on a line: the host's)
            elif bb < 0:  # V replaces the end whose angle is obtuse
                t0 = best
            else:
                t1 = best
        tl.store(out_ptr + 3 * o, cy)
        tl.store(out_ptr + 3 * o + 1, cx)
        tl.store(out_ptr + 3 * o + 2, r)
        tl.store(ok_ptr + o, (state == 1).to(tl.int8))

    @triton.jit
    def _zernike_box_kernel(lab_ptr, img_ptr, W, item_ptr, ids_ptr, box_ptr, disk_ptr,
                            coef_ptr, slot_ptr, out_ptr, K, limit_ptr,
                            HAS_IMAGE: tl.constexpr, CELLPROFILER: tl.constexpr,
                            ATOMIC: tl.constexpr, N: tl.constexpr, J: tl.constexpr,
                            BLOCK_P: tl.constexpr, BLOCK_M: tl.constexpr,
                            BLOCK_J: tl.constexpr):
        it = tl.program_id(0).to(tl.int64)
        o = tl.load(item_ptr + 3 * it).to(tl.int64)
        ra = tl.load(item_ptr + 3 * it + 1)
        npx_rows = tl.load(item_ptr + 3 * it + 2)
        v = tl.load(ids_ptr + o)
        c0 = tl.load(box_ptr + 4 * o + 1)
        bw = tl.load(box_ptr + 4 * o + 3) - c0
        npx = npx_rows * bw
        cy = tl.load(disk_ptr + 3 * o)
        cx = tl.load(disk_ptr + 3 * o + 1)
        rad = tl.load(disk_ptr + 3 * o + 2)
        limit = tl.load(limit_ptr)
        dt = out_ptr.dtype.element_ty
        mc = tl.arange(0, BLOCK_M)  # the repetition m of each column
        jr = tl.arange(0, BLOCK_J)  # the step j = (n - m) / 2 of each row of the sums
        acc_re = tl.zeros([BLOCK_J, BLOCK_M], dt)
        acc_im = tl.zeros([BLOCK_J, BLOCK_M], dt)
        s = ra * 0
        while s < npx:
            i = s + tl.arange(0, BLOCK_P)
            ok = i < npx
            rr = ra + i // bw
            cc = c0 + i % bw
            at = rr.to(tl.int64) * W + cc
            lv = tl.load(lab_ptr + at, mask=ok, other=0).to(tl.int64)
            dy = (rr.to(tl.float64) - cy) / rad  # as CellProfiler: (i - c_i) / R
            dx = (cc.to(tl.float64) - cx) / rad
            rho2 = dx * dx + dy * dy
            ok = ok & (lv == v) & (rho2 <= limit)  # NaN (radius 0) is left out
            if HAS_IMAGE:
                f = tl.load(img_ptr + at, mask=ok, other=0).to(dt)
            else:
                f = tl.where(ok, 1.0, 0.0).to(dt)
            dy = tl.where(ok, dy, 0.0)  # the pixels left out: 0, not NaN
            dx = tl.where(ok, dx, 0.0)
            if CELLPROFILER:
                wr = dy.to(dt)
                wi = dx.to(dt)
            else:
                wr = dx.to(dt)
                wi = dy.to(dt)
            x = tl.where(ok, 1.0 - 2.0 * rho2, 0.0).to(dt)[:, None]
            # angular factor f w^m of each column's m (0 past N)
            pr = f
            pi = tl.zeros([BLOCK_P], dt)
            ang_re = tl.zeros([BLOCK_P, BLOCK_M], dt)
            ang_im = tl.zeros([BLOCK_P, BLOCK_M], dt)
            for t in tl.static_range(N + 1):
                sel = (mc == t)[None, :]
                ang_re = tl.where(sel, pr[:, None], ang_re)
                ang_im = tl.where(sel, pi[:, None], ang_im)
                pr, pi = pr * wr - pi * wi, pr * wi + pi * wr
            # radial factor P_j^(m, 0)(x) of every column, step by step in j
            p_cur = tl.full([BLOCK_P, BLOCK_M], 1.0, dt)
            p_prev = tl.zeros([BLOCK_P, BLOCK_M], dt)
            for j in tl.static_range(J + 1):
                row = (jr == j)[:, None]
                acc_re = tl.where(row, acc_re + tl.sum(p_cur * ang_re, axis=0)[None, :],
                                  acc_re)
                acc_im = tl.where(row, acc_im + tl.sum(p_cur * ang_im, axis=0)[None, :],
                                  acc_im)
                if j < J:
                    a1 = tl.load(coef_ptr + (3 * j) * BLOCK_M + mc)[None, :]
                    a2 = tl.load(coef_ptr + (3 * j + 1) * BLOCK_M + mc)[None, :]
                    a3 = tl.load(coef_ptr + (3 * j + 2) * BLOCK_M + mc)[None, :]
                    nxt = (a1 * x + a2) * p_cur - a3 * p_prev
                    p_prev = p_cur
                    p_cur = nxt
            s += BLOCK_P
        # each (j, m) of a pair goes to its slot in the output
        slot = tl.load(slot_ptr + jr[:, None] * BLOCK_M + mc[None, :])
        dst = out_ptr + (o * K + slot) * 2
        if ATOMIC:
            tl.atomic_add(dst, acc_re, mask=slot >= 0, sem="relaxed")
            tl.atomic_add(dst + 1, acc_im, mask=slot >= 0, sem="relaxed")
        else:
            tl.store(dst, acc_re, mask=slot >= 0)
            tl.store(dst + 1, acc_im, mask=slot >= 0)

def label_stats(lab: torch.Tensor, top: int
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per label value ``0 .. top`` of the 2-D contiguous ``lab``: pixel count, integer
    sums of rows and of columns (int64), and the box ``(min_row, min_col, max_row,
    max_col)`` (int32; ``(2**31 - 1, 2**31 - 1, -1, -1)`` for an absent value). The value
    0 (background) is left out (count 0)."""
    h, w = lab.shape
    dev = lab.device
    count = torch.zeros(top + 1, dtype=torch.int64, device=dev)
    srow = torch.zeros(top + 1, dtype=torch.int64, device=dev)
    scol = torch.zeros(top + 1, dtype=torch.int64, device=dev)
    big = torch.iinfo(torch.int32).max
    box = torch.tensor([big, big, -1, -1], dtype=torch.int32, device=dev).repeat(top + 1, 1)
    if h * w:
        block = min(1024, triton.next_power_of_2(w))
        launch(_label_stats_kernel, (h, triton.cdiv(w, block)), lab, w, count, srow, scol,
               box, BLOCK=block, num_warps=4)
    return count, srow, scol, box


def circles(lab: torch.Tensor, ids: torch.Tensor, box: torch.Tensor, centroid: torch.Tensor
            ) -> tuple[torch.Tensor, torch.Tensor, bool]:
    """Minimum enclosing circle of every object's pixel centres (module notes): ``(n, 2)``
    centres, ``(n,)`` radii (float64), and whether every object's steps ended within
    :data:`MAX_ROUNDS` (else the caller solves them another way). ``ids``: the objects'
    label values (int64); ``box``: ``(n, 4)`` int32 ``(min_row, min_col, max_row,
    max_col)``; ``centroid``: ``(n, 2)`` float64 (where the first scan starts)."""
    n = len(ids)
    out = torch.empty(n, 3, dtype=torch.float64, device=lab.device)
    ok = torch.empty(n, dtype=torch.int8, device=lab.device)
    if n:
        launch(_circle_kernel, (n,), lab, lab.shape[1], ids, box.contiguous(),
               centroid.contiguous(), out, ok, MAX_STEPS=MAX_ROUNDS, BLOCK=256, num_warps=4)
    return out[:, :2], out[:, 2], bool(ok.all()) if n else True


def column_extremes(lab: torch.Tensor, ids: torch.Tensor, box: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Each object's topmost and bottommost pixel in every column of its box: ``(offset,
    row_min, row_max)``, the object's columns from ``offset[o]`` on (int64, box widths
    added up), rows int32 (``-1`` in ``row_max`` where the column holds none of its pixels).
    ``ids``, ``box`` as for :func:`circles`."""
    n = len(ids)
    width = (box[:, 3] - box[:, 1] + 1).to(torch.int64)
    offset = torch.cumsum(width, 0) - width
    total = int(width.sum()) if n else 0
    rmin = torch.empty(total, dtype=torch.int32, device=lab.device)
    rmax = torch.empty(total, dtype=torch.int32, device=lab.device)
    if n:
        launch(_column_kernel, (n,), lab, lab.shape[1], ids, box.contiguous(), offset, rmin,
               rmax, BLOCK=32, num_warps=1)
    return offset, rmin, rmax


def hulls(box: torch.Tensor, offset: torch.Tensor, rmin: torch.Tensor, rmax: torch.Tensor
          ) -> tuple[torch.Tensor, torch.Tensor]:
    """Strict convex hull vertices of every object from its column extremes
    (:func:`column_extremes`), one program per object: Andrew's monotone chain as
    :func:`._numba_labels.convex_hulls_by_object` runs it (the lower chain over the columns
    that hold a pixel, then the upper one; integers, so the same vertices in the same
    order), its stack in twice the box's width of scratch. Returns ``(points, counts)``:
    ``(P, 2)`` int64 ``(row, col)`` vertices object after object, as
    :func:`.enclosing.convex_hulls` gives them, and ``(n,)`` int64 counts."""
    n = len(box)
    dev = box.device
    total = 2 * len(rmin)  # twice every object's box columns
    hr = torch.empty(total, dtype=torch.int32, device=dev)
    hc = torch.empty(total, dtype=torch.int32, device=dev)
    counts = torch.zeros(n, dtype=torch.int64, device=dev)
    if n == 0:
        return torch.zeros(0, 2, dtype=torch.int64, device=dev), counts
    launch(_hull_kernel, (n,), box.contiguous(), offset, rmin, rmax, hr, hc, counts,
           num_warps=1)
    start = torch.cumsum(counts, 0) - counts
    obj = torch.repeat_interleave(torch.arange(n, device=dev), counts)
    at = 2 * offset[obj] + torch.arange(len(obj), device=dev) - start[obj]
    return torch.stack([hr[at], hc[at]], 1).to(torch.int64), counts


#: :func:`settled_circles` leaves objects of more hull vertices than this to the host.
SETTLED_VERTICES = 256


def settled_circles(points: torch.Tensor, counts: torch.Tensor
                    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """CellProfiler's minimum enclosing circle of every object whose steps are clear, one
    program per object: the steps of :func:`._numba_circles.circles_settled` where one
    candidate leads and no deciding cosine is near 0 (the same operations in float64, with
    no fused multiply-add: the same bits as the host's), giving up (the flag) where the
    host would follow several ways, at a NaN, or past :data:`SETTLED_VERTICES` vertices.
    ``points``: ``(P, 2)`` hull vertices ``(row, col)`` object after object (any real or
    integer dtype, :func:`hulls`); ``counts``: ``(n,)`` vertices an object. Returns
    ``(centres, radii, settled)``: ``(n, 2)`` and ``(n,)`` float64, ``(n,)`` bool."""
    from . import _numba_circles as nk

    n = len(counts)
    dev = points.device
    out = torch.zeros(n, 3, dtype=torch.float64, device=dev)
    ok = torch.zeros(n, dtype=torch.int8, device=dev)
    if n:
        py = points[:, 0].to(torch.float64).contiguous()
        px = points[:, 1].to(torch.float64).contiguous()
        counts = counts.to(torch.int64).contiguous()
        start = torch.cumsum(counts, 0) - counts
        block = triton.next_power_of_2(max(min(int(counts.max()), SETTLED_VERTICES), 2))
        launch(_settled_circle_kernel, (n,), py, px, start, counts,
               torch.tensor([nk.COSINE_MARGIN], dtype=torch.float64, device=dev), out, ok,
               BLOCK=block, num_warps=1, enable_fp_fusion=False)
    return out[:, :2], out[:, 2], ok.bool()


def jacobi_table(top_m: int, top_j: int, block_m: int) -> np.ndarray:
    """The coefficients ``(a1, a2, a3)`` of the steps :math:`P_{j+1} = (a_1 x + a_2) P_j -
    a_3 P_{j-1}` of :math:`P^{(m, 0)}_j`, ``j < top_j``, for every ``m <= top_m``:
    ``(max(top_j, 1), 3, block_m)`` float64 (:math:`P_1 = ((m + 2) x + m) / 2`, then the
    three-term recurrence of the Jacobi polynomials with :math:`\beta = 0`)."""
    coef = np.zeros((max(top_j, 1), 3, block_m))
    a = np.arange(top_m + 1, dtype=np.float64)
    for s in range(top_j):
        if s == 0:
            coef[0, 0, : top_m + 1] = (a + 2) / 2
            coef[0, 1, : top_m + 1] = a / 2
            continue
        den = 2 * (s + 1) * (s + a + 1) * (2 * s + a)
        coef[s, 0, : top_m + 1] = (2 * s + a + 1) * (2 * s + a + 2) * (2 * s + a) / den
        coef[s, 1, : top_m + 1] = (2 * s + a + 1) * a * a / den
        coef[s, 2, : top_m + 1] = 2 * s * (s + a) * (2 * s + a + 2) / den
    return coef


def zernike_box_sums(lab: torch.Tensor, img: torch.Tensor | None, ids: np.ndarray,
                     bbox: np.ndarray, centre: np.ndarray, radius: np.ndarray,
                     pairs: tuple[tuple[int, int], ...], cellprofiler: bool, limit: float,
                     dt: torch.dtype) -> torch.Tensor:
    """Per object, :math:`\\sum_p f_p R_{nm}(\\rho_p) w_p^m / \\rho_p^m` over its pixels
    with :math:`\\rho^2 \\le` ``limit`` (module notes): ``(n, K, 2)`` real and imaginary
    parts in ``dt``, the pairs in the order of ``pairs``. ``bbox``: regionprops' boxes
    ``(min_row, min_col, max_row + 1, max_col + 1)``; ``img``: contiguous weights of the
    shape of ``lab`` (float32 or float64), or None."""
    dev = lab.device
    n, K = len(ids), len(pairs)
    out = torch.zeros(n, K, 2, dtype=dt, device=dev)
    if n == 0 or K == 0:
        return out
    top_m = max(p[1] for p in pairs)
    top_j = max((p[0] - p[1]) // 2 for p in pairs)
    block_m = max(16, triton.next_power_of_2(top_m + 1))
    block_j = max(2, triton.next_power_of_2(top_j + 1))
    block_p = max(16, 2048 // block_m)
    coef = jacobi_table(top_m, top_j, block_m)
    slot = np.full((block_j, block_m), -1, dtype=np.int32)
    sign = np.empty(K)
    for k, (nn, mm) in enumerate(pairs):
        slot[(nn - mm) // 2, mm] = k
        sign[k] = -1.0 if (nn - mm) // 2 % 2 else 1.0  # R_nm = (-1)^j rho^m P_j
    # the work: pieces of whole rows of each box, at most PIECE_PIXELS pixels (one row at
    # least)
    h_box = (bbox[:, 2] - bbox[:, 0]).astype(np.int64)
    w_box = (bbox[:, 3] - bbox[:, 1]).astype(np.int64)
    rows = np.maximum(PIECE_PIXELS // np.maximum(w_box, 1), 1)
    pieces = -(-h_box // rows)
    obj = np.repeat(np.arange(n), pieces)
    first = np.cumsum(pieces) - pieces
    part = np.arange(len(obj)) - first[obj]
    r_a = bbox[obj, 0] + part * rows[obj]
    nrow = np.minimum(rows[obj], bbox[obj, 2] - r_a)
    items = torch.from_numpy(np.stack([obj, r_a, nrow], 1).astype(np.int32)).to(dev)
    box = torch.from_numpy(np.ascontiguousarray(bbox, dtype=np.int32)).to(dev)
    disk = torch.from_numpy(np.concatenate([centre, radius[:, None]], 1)).to(dev)
    ids_t = torch.from_numpy(np.asarray(ids, dtype=np.int64)).to(dev)
    coef_t = torch.from_numpy(coef).to(device=dev, dtype=dt)
    slot_t = torch.from_numpy(slot).to(dev)
    # CellProfiler keeps rho^2 <= 1 as computed, products and sum rounded apart (as NumPy
    # does): no fused multiply-add there
    launch(_zernike_box_kernel, (len(obj),), lab, img if img is not None else lab,
           lab.shape[1], items, ids_t, box, disk, coef_t, slot_t, out, K,
           torch.tensor([limit], dtype=torch.float64, device=dev),
           HAS_IMAGE=img is not None, CELLPROFILER=cellprofiler,
           ATOMIC=bool((pieces > 1).any()), N=top_m, J=top_j, BLOCK_P=block_p,
           BLOCK_M=block_m, BLOCK_J=block_j, num_warps=4,
           enable_fp_fusion=not cellprofiler)
    return out * torch.from_numpy(sign).to(device=dev, dtype=dt)[None, :, None]
