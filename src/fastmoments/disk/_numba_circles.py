"""numba steps of Chrystal's algorithm for the minimum enclosing circles of many objects at
once (:func:`fastmoments.disk.enclosing.minimum_enclosing_circles` drives them with
``method="numba"``): the start, each step's cosines, the best vertex and the finish, for
every object of the active set in one call, with NumPy's ``arccos`` so that the bits are
those of the lock-step NumPy reference (``method="numpy"``, centrosome's). Between two
``arccos`` calls, one compiled call (:func:`circle_round`) ends a step and begins the next.
Each call is on one thread and releases the GIL (groups of objects may go on threads of
their own: :func:`fastmoments.disk.enclosing._circles_compiled`); imported lazily, compiled
with ``cache=True``."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["circle_best", "circle_cosines", "circle_finish", "circle_round", "circle_start",
           "circle_ties", "finish_checked"]


@njit(cache=True, nogil=True)
def circle_start(py, px, start, counts, centres, radii):  # pragma: no cover - compiled
    """The circles of objects of one or two hull vertices (the others are left)."""
    for k in range(counts.shape[0]):
        s = start[k]
        if counts[k] == 1:
            centres[k, 0] = py[s]
            centres[k, 1] = px[s]
        elif counts[k] == 2:
            cy = (py[s] + py[s + 1]) / 2
            cx = (px[s] + px[s + 1]) / 2
            centres[k, 0] = cy
            centres[k, 1] = cx
            dy = cy - py[s]
            dx = cx - px[s]
            radii[k] = math.sqrt(dy * dy + dx * dx)


@njit(cache=True, nogil=True)
def circle_cosines(active, py, px, start, counts, s0, s1, cos1, cos0, slot_of,
                   row_of):  # pragma: no cover - compiled
    """One step of Chrystal's algorithm, first part: for every active object (in order) and
    each of its hull vertices ``V`` but the side's ends ``S0``, ``S1`` (in hull order), the
    cosines of the angles at ``S1`` and at ``S0`` of the triangle ``S0 S1 V``, computed
    with the operations of :func:`fastmoments.disk.enclosing._angle`, one flat entry per
    candidate; ``slot_of``: the vertex of each entry (its slot in its object's hull),
    ``row_of``: its object's position in ``active``. Returns the number of entries."""
    e = 0
    for a in range(active.shape[0]):
        k = active[a]
        s = start[k]
        y0 = py[s + s0[k]]
        x0 = px[s + s0[k]]
        y1 = py[s + s1[k]]
        x1 = px[s + s1[k]]
        sy = y0 - y1
        sx = x0 - x1
        l01 = sy * sy + sx * sx
        for t in range(counts[k]):
            if t == s0[k] or t == s1[k]:
                continue
            vy = py[s + t] - y1
            vx = px[s + t] - x1
            num = sy * vy
            num += sx * vx
            cos1[e] = num / math.sqrt(l01 * (vy * vy + vx * vx))
            vy = py[s + t] - y0
            vx = px[s + t] - x0
            num = -sy * vy
            num += -sx * vx
            cos0[e] = num / math.sqrt(l01 * (vy * vy + vx * vx))
            slot_of[e] = t
            row_of[e] = a
            e += 1
    return e


@njit(cache=True, nogil=True)
def circle_best(active, py, px, start, counts, s0, s1, at_v, ang1, ang0, slot_of, order,
                row_of, best):  # pragma: no cover - compiled
    """One step of Chrystal's algorithm, second part: each active object's candidate of
    smallest angle ``at_v`` (flat entries of :func:`circle_cosines`; ``ang1``, ``ang0``:
    the angles at ``S1`` and ``S0``; ``at_v`` is written first, as ``(pi - ang1) - ang0``,
    the reference's two subtractions), as the entry's index in ``best``.

    CellProfiler's code takes, among an object's candidates of equal smallest angle, the
    first in NumPy's sort of all the step's entries. Without ``order`` (an empty array):
    the smallest of each object's entries, when it is the only one or when every one of
    the equal smallest gives the same bits (each makes the diameter circle, or each the
    same circumcircle), by :func:`circle_ties`; else returns False, leaving ``best``
    incomplete. With ``order`` (that sort, ``np.argsort(at_v)``) and ``row_of``
    (:func:`circle_cosines`): each object's first entry in it."""
    if not order.shape[0]:  # (empty: no tie is listed, the first one stops it)
        return circle_ties(active, py, px, start, counts, s0, s1, at_v, ang1, ang0, slot_of,
                           best, order, order) == 0
    for e in range(at_v.shape[0]):
        at_v[e] = (np.pi - ang1[e]) - ang0[e]
    for a in range(active.shape[0]):
        best[a] = -1
    for q in range(order.shape[0]):
        e = order[q]
        a = row_of[e]
        if best[a] < 0:
            best[a] = e
    return True


@njit(cache=True, inline="always")
def _circle_case(py, px, s, t0, t1, t2, min_v, b_s1, b_s0):  # pragma: no cover - compiled
    """What a step of Chrystal's algorithm does with the side ``S0 S1`` (hull slots ``t0``,
    ``t1`` from ``s``) and the candidate ``V`` (slot ``t2``) of smallest angle ``min_v``
    (``b_s1``, ``b_s0`` the angles at ``S1`` and ``S0``), with the operations of
    :func:`fastmoments.disk.enclosing.minimum_enclosing_circles`: ``(0, cy, cx, r)`` the
    circle on the diameter ``S0 S1``, ``(1, cy, cx, r)`` the circumcircle of ``S0 S1 V``,
    or ``(2, 0, 0, 0)``: ``V`` replaces an end of the side."""
    half_pi = np.pi / 2
    y0 = py[s + t0]
    x0 = px[s + t0]
    y1 = py[s + t1]
    x1 = px[s + t1]
    if min_v >= half_pi:
        dy = y0 - y1
        dx = x0 - x1
        return 0, (y0 + y1) / 2, (x0 + x1) / 2, math.sqrt(dy * dy + dx * dx) / 2
    if b_s1 <= half_pi and b_s0 <= half_pi and min_v <= half_pi:
        y2 = py[s + t2]
        x2 = px[s + t2]
        q0 = y0 * y0 + x0 * x0
        q1 = y1 * y1 + x1 * x1
        q2 = y2 * y2 + x2 * x2
        den = 2 * (x0 * (y1 - y2) + x1 * (y2 - y0) + x2 * (y0 - y1))
        cx = (q0 * (y1 - y2) + q1 * (y2 - y0) + q2 * (y0 - y1)) / den
        cy = (q0 * (x2 - x1) + q1 * (x0 - x2) + q2 * (x1 - x0)) / den
        dy = y0 - cy
        dx = x0 - cx
        return 1, cy, cx, math.sqrt(dy * dy + dx * dx)
    return 2, 0.0, 0.0, 0.0


@njit(cache=True, nogil=True)
def circle_finish(active, py, px, start, s0, s1, at_v, ang1, ang0, best, centres, radii,
                  slot_of):  # pragma: no cover - compiled
    """One step of Chrystal's algorithm, last part (:func:`_circle_case` for each active
    object and its candidate ``best``): the diameter circle, the circumcircle, or the vertex
    that replaces an end of the side (``S0`` when the angle at ``S0`` is obtuse, else
    ``S1``). Returns the objects still active, in order."""
    half_pi = np.pi / 2
    keep = np.empty(active.shape[0], np.int64)
    n_keep = 0
    for a in range(active.shape[0]):
        k = active[a]
        e = best[a]
        kind, cy, cx, r = _circle_case(py, px, start[k], s0[k], s1[k], slot_of[e], at_v[e],
                                       ang1[e], ang0[e])
        if kind < 2:
            centres[k, 0] = cy
            centres[k, 1] = cx
            radii[k] = r
        else:
            if ang0[e] > half_pi:
                s0[k] = slot_of[e]
            else:
                s1[k] = slot_of[e]
            keep[n_keep] = k
            n_keep += 1
    return keep[:n_keep]


#: :func:`circle_round`'s answers: the step is made; it needs NumPy's sort; a copy of an
#: object followed through a tie ended on another circle than the object.
ROUND_DONE, ROUND_SORT, ROUND_DIFFERS = 0, 1, 2


@njit(cache=True, nogil=True)
def circle_round(active, py, px, start, counts, s0, s1, angles, m, at_v, order, slot_of,
                 row_of, best, centres, radii, root, finished,
                 followed):  # pragma: no cover - compiled
    """The rest of a step and the start of the next, in one call: :func:`circle_best` and
    :func:`circle_finish` of the step whose ``m`` candidates' angles are ``angles[0, :m]``
    (at ``S1``) and ``angles[1, :m]`` (at ``S0``), then :func:`circle_cosines` of the next
    step into ``angles`` (which the caller turns into angles with NumPy's ``arccos``).
    ``root``, ``finished``, ``followed``: as for :func:`finish_checked` (empty: no copies).

    Returns ``(status, active, m)``: :data:`ROUND_DONE` and the objects still active and
    their candidates; :data:`ROUND_SORT` when :func:`circle_best` needs ``order`` (NumPy's
    sort of ``at_v[:m]``, written first): nothing else is changed, and the call is made
    again with it; :data:`ROUND_DIFFERS` from :func:`finish_checked`."""
    ang1 = angles[0, :m]
    ang0 = angles[1, :m]
    if not circle_best(active, py, px, start, counts, s0, s1, at_v[:m], ang1, ang0,
                       slot_of, order, row_of, best):
        return ROUND_SORT, active, m
    same, active = finish_checked(active, py, px, start, s0, s1, at_v, ang1, ang0, best,
                                  centres, radii, slot_of, root, finished, followed)
    if not same:
        return ROUND_DIFFERS, active, m
    m = circle_cosines(active, py, px, start, counts, s0, s1, angles[0], angles[1],
                       slot_of, row_of)
    return ROUND_DONE, active, m


@njit(cache=True, nogil=True)
def finish_checked(active, py, px, start, s0, s1, at_v, ang1, ang0, best, centres, radii,
                   slot_of, root, finished, followed):  # pragma: no cover - compiled
    """:func:`circle_finish`, and whether every copy of an object (objects ``n`` on, ``n =
    len(followed)``; ``root``: the object each follows) that has its circle now, and whose
    object has its own, ends on the same circle (``finished``: which have theirs, updated;
    ``followed``: the objects with copies). Returns ``(same, active)``."""
    keep = circle_finish(active, py, px, start, s0, s1, at_v, ang1, ang0, best, centres,
                         radii, slot_of)
    if root.shape[0] == 0:
        return True, keep
    n = followed.shape[0]
    q = 0
    for a in range(active.shape[0]):
        k = active[a]
        if q < keep.shape[0] and keep[q] == k:
            q += 1
            continue
        finished[k] = True  # its circle is found in this step
        r = root[k]
        if k >= n:
            if finished[r] and not _same_circle(centres, radii, k, r):
                return False, keep
        elif followed[k]:
            for c in range(n, root.shape[0]):
                if root[c] == k and finished[c] and not _same_circle(centres, radii, c, k):
                    return False, keep
    return True, keep


@njit(cache=True, inline="always")
def _same_circle(centres, radii, a, b):  # pragma: no cover - compiled
    """Whether objects ``a`` and ``b`` have equal circles (the caller compares the bits at
    the end; this is the early test)."""
    return (centres[a, 0] == centres[b, 0] and centres[a, 1] == centres[b, 1]
            and radii[a] == radii[b])


@njit(cache=True, nogil=True)
def circle_ties(active, py, px, start, counts, s0, s1, at_v, ang1, ang0, slot_of, best,
                tie_a, tie_e):  # pragma: no cover - compiled
    """:func:`circle_best` without NumPy's sort: each active object takes the first of its
    equal smallest angles (in hull order) into ``best``, and each other one of them that
    would give another circle or move is listed (``tie_a``: the object's position in
    ``active``, ``tie_e``: the entry), so that the caller can follow it too; with empty
    ``tie_a``, ``tie_e`` the first such one stops it (``best`` is then incomplete).
    Returns the number listed (1 for the one that stopped it), or -1 when an angle is
    NaN."""
    for e in range(at_v.shape[0]):
        at_v[e] = (np.pi - ang1[e]) - ang0[e]
    n_ties = 0
    e = 0
    for a in range(active.shape[0]):
        k = active[a]
        c = counts[k] - 2
        b = e
        v = at_v[e]
        for q in range(e, e + c):
            x = at_v[q]
            if x != x:
                return -1
            if x < v:
                v = x
                b = q
        best[a] = b
        s = start[k]
        kind, cy, cx, r = -1, 0.0, 0.0, 0.0  # the smallest one's circle, at the first tie
        for q in range(b + 1, e + c):
            if at_v[q] != v:
                continue
            if kind < 0:
                kind, cy, cx, r = _circle_case(py, px, s, s0[k], s1[k], slot_of[b], v,
                                               ang1[b], ang0[b])
            kind2, cy2, cx2, r2 = _circle_case(py, px, s, s0[k], s1[k], slot_of[q], at_v[q],
                                               ang1[q], ang0[q])
            if kind2 != kind or kind == 2 or cy2 != cy or cx2 != cx or r2 != r:
                if tie_a.shape[0] == 0:
                    return 1
                tie_a[n_ties] = a
                tie_e[n_ties] = q
                n_ties += 1
        e += c
    return n_ties
