"""numba steps of Chrystal's algorithm for the minimum enclosing circles of many objects
(:func:`fastmoments.disk.enclosing.minimum_enclosing_circles` drives them with
``method="numba"``).

:func:`circles_settled` runs each object on its own, with no NumPy call: its decisions come
from the cosines of the reference's angles (the same bits), or from ``math.acos`` within a
margin where they are close; it leaves the objects whose decisions ``arccos``'s last bits
could change. The lock-step functions run the objects left, every object of the active set
in one call a step (the start, each step's cosines, the best vertex and the finish), with
NumPy's ``arccos`` between calls so that the bits are those of the lock-step NumPy reference
(``method="numpy"``, centrosome's): one compiled call (:func:`circle_round`) ends a step and
begins the next. Each call is on one thread and releases the GIL (runs of objects may go on
threads of their own: :func:`circles_settled_parallel`); imported lazily, compiled with
``cache=True`` and NumPy's error model (a division by 0 gives inf or NaN, as in the NumPy
reference, not an exception: repeated vertices)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

__all__ = ["circle_best", "circle_cosines", "circle_finish", "circle_round", "circle_start",
           "circle_ties", "circles_settled", "circles_settled_parallel", "finish_checked"]


@njit(cache=True, nogil=True, error_model="numpy")
def circle_start(py, px, start, counts, centres, radii):  # pragma: no cover - compiled
    """The circles of objects of one or two hull vertices (the others are left)."""
    for k in range(counts.shape[0]):
        _small_circle(py, px, start[k], counts[k], centres, radii, k)


@njit(cache=True, inline="always", error_model="numpy")
def _small_circle(py, px, s, c, centres, radii, k):  # pragma: no cover - compiled
    """Object ``k``'s circle when it has ``c`` = 1 or 2 hull vertices (from ``s``): the
    point, or the midpoint and its distance to the first; returns whether it had."""
    if c == 1:
        centres[k, 0] = py[s]
        centres[k, 1] = px[s]
        return True
    if c == 2:
        cy = (py[s] + py[s + 1]) / 2
        cx = (px[s] + px[s + 1]) / 2
        centres[k, 0] = cy
        centres[k, 1] = cx
        dy = cy - py[s]
        dx = cx - px[s]
        radii[k] = math.sqrt(dy * dy + dx * dx)
        return True
    return False


@njit(cache=True, nogil=True, error_model="numpy")
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


@njit(cache=True, nogil=True, error_model="numpy")
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


@njit(cache=True, inline="always", error_model="numpy")
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


@njit(cache=True, nogil=True, error_model="numpy")
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


@njit(cache=True, nogil=True, error_model="numpy")
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


@njit(cache=True, nogil=True, error_model="numpy")
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


@njit(cache=True, inline="always", error_model="numpy")
def _same_circle(centres, radii, a, b):  # pragma: no cover - compiled
    """Whether objects ``a`` and ``b`` have equal circles (the caller compares the bits at
    the end; this is the early test)."""
    return (centres[a, 0] == centres[b, 0] and centres[a, 1] == centres[b, 1]
            and radii[a] == radii[b])


@njit(cache=True, nogil=True, error_model="numpy")
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


#: :func:`circles_settled` treats two of its angles (radians) closer than this, or an
#: angle this close to :math:`\pi/2`, as ones that may compare either way in the
#: reference, and follows both ways. Its angles come from the reference's cosines (the same
#: bits) through ``math.acos`` instead of NumPy's ``arccos`` (a vector library's on some
#: processors); both are within a few units in the last place of the true arccos (4.4e-16
#: at :math:`\pi/2`), so a difference in an angle ``(pi - a1) - a0`` stays below 1e-14.
ANGLE_MARGIN = 1e-12
#: The same for cosines: :func:`circles_settled` compares the cosines of the candidates'
#: angles at ``V`` (:func:`_angle_cosine`, within about 2e-15 of the cosine of the
#: reference's angle) and takes the reference's decision without an ``arccos`` only where
#: they are further apart than this.
COSINE_MARGIN = 1e-12
#: :func:`circles_settled` follows at most this many ways of one object at a time.
MAX_WAYS = 64


@njit(cache=True, nogil=True, error_model="numpy")
def circles_settled(py, px, start, counts, centres, radii, angle_margin, cosine_margin,
                    unsettled):  # pragma: no cover - compiled
    r"""The circles of every object whose steps the reference's ``arccos`` cannot change,
    one object after another with no ``arccos`` of NumPy's; the others are listed in
    ``unsettled`` (their number is returned) and left to the lock-step steps.

    Each step computes the candidates' cosines at ``S1`` and ``S0`` with the reference's
    operations (the same bits as :func:`circle_cosines`) and from them the cosine of the
    angle at ``V`` (:func:`_angle_cosine`), which orders the candidates as the angles do.
    Where one candidate's is above the others' by more than ``cosine_margin``, and no
    cosine that decides the step is within ``cosine_margin`` of 0 (an exact 0 is the exact
    angle :math:`\pi/2` in any ``arccos``), the step is the reference's. Otherwise the near
    candidates' angles come from ``math.acos`` and every way that they allow within
    ``angle_margin`` (a tie, an angle at :math:`\pi/2`) is followed (:func:`_ways`): the
    object is settled when every way ends on the same circle to the bit, and its circle is
    then the reference's, which takes one of those ways. The circles' arithmetic is
    :func:`_circle_case`'s."""
    n = counts.shape[0]
    kmax = 2
    for k in range(n):
        kmax = max(kmax, counts[k])
    q1 = np.empty(kmax)
    q0 = np.empty(kmax)
    cv = np.empty(kmax)
    way0 = np.empty(MAX_WAYS, np.int64)
    way1 = np.empty(MAX_WAYS, np.int64)
    circle = np.empty(3)
    n_unsettled = 0
    for k in range(n):
        c = counts[k]
        s = start[k]
        if _small_circle(py, px, s, c, centres, radii, k):
            continue
        if _settle(py, px, s, c, angle_margin, cosine_margin, q1, q0, cv, way0, way1,
                     circle):
            centres[k, 0] = circle[0]
            centres[k, 1] = circle[1]
            radii[k] = circle[2]
        else:
            unsettled[n_unsettled] = k
            n_unsettled += 1
    return n_unsettled


@njit(cache=True, parallel=True, error_model="numpy")
def circles_settled_parallel(py, px, start, counts, centres, radii, angle_margin,
                             cosine_margin, unsettled, found):  # pragma: no cover - compiled
    """:func:`circles_settled` of ``len(found)`` runs of consecutive objects (run ``p``:
    objects ``p n // parts`` to ``(p + 1) n // parts``), shared by numba's threads: each
    run lists its unsettled objects from its own first place in ``unsettled`` and their
    number in ``found[p]``."""
    n = counts.shape[0]
    parts = found.shape[0]
    for p in prange(parts):
        k0 = p * n // parts
        k1 = (p + 1) * n // parts
        m = circles_settled(py, px, start[k0:k1], counts[k0:k1], centres[k0:k1],
                            radii[k0:k1], angle_margin, cosine_margin, unsettled[k0:k1])
        for q in range(m):
            unsettled[k0 + q] += k0
        found[p] = m


@njit(cache=True, inline="always", error_model="numpy")
def _angle_cosine(a, b):  # pragma: no cover - compiled
    r"""The cosine of :math:`\pi - \arccos a - \arccos b`, :math:`\sqrt{(1 - a^2)(1 - b^2)}
    - a b`, with :math:`1 - a^2 = (1 - a)(1 + a)` (no cancellation): within about 8 units
    in the last place of the exact value for these ``a``, ``b``; NaN where ``|a|`` or
    ``|b|`` is above 1."""
    return math.sqrt(((1.0 - a) * (1.0 + a)) * ((1.0 - b) * (1.0 + b))) - a * b


@njit(cache=True, inline="always", error_model="numpy")
def _maybe_obtuse(q, margin):  # pragma: no cover - compiled
    """Whether the reference's ``arccos(q) > pi/2`` may hold (``arccos(0)`` is ``pi/2``)."""
    return q < margin and q != 0.0


@njit(cache=True, inline="always", error_model="numpy")
def _maybe_acute(q, margin):  # pragma: no cover - compiled
    """Whether the reference's ``arccos(q) <= pi/2`` may hold."""
    return q > -margin or q == 0.0


@njit(cache=True, inline="always", error_model="numpy")
def _same_or_first(found, circle, cy, cx, r):  # pragma: no cover - compiled
    """Records the circle a way ends on; False when an earlier way ended on another."""
    if found and not (cy == circle[0] and cx == circle[1] and r == circle[2]):
        return False
    circle[0] = cy
    circle[1] = cx
    circle[2] = r
    return True


@njit(cache=True, error_model="numpy")
def _settle(py, px, s, c, angle_margin, cosine_margin, q1, q0, cv, way0, way1,
            circle):  # pragma: no cover - compiled
    """:func:`circles_settled` of one object of ``c > 2`` hull vertices from ``s``: its
    circle into ``circle`` (centre row, column, radius) and True, or False."""
    half_pi = np.pi / 2
    way0[0] = 0
    way1[0] = 1
    ways = 1
    found = False
    steps = 0
    while ways > 0:
        ways -= 1
        t0 = way0[ways]
        t1 = way1[ways]
        steps += 1
        if steps > 8 * c + 64:  # (ways that go round: left to the reference)
            return False
        y0 = py[s + t0]
        x0 = px[s + t0]
        y1 = py[s + t1]
        x1 = px[s + t1]
        sy = y0 - y1
        sx = x0 - x1
        l01 = sy * sy + sx * sx
        for t in range(c):  # (NaN at S0 and S1, set aside below)
            vy = py[s + t] - y1
            vx = px[s + t] - x1
            num = sy * vy
            num += sx * vx
            a = num / math.sqrt(l01 * (vy * vy + vx * vx))
            vy = py[s + t] - y0
            vx = px[s + t] - x0
            num = -sy * vy
            num += -sx * vx
            b = num / math.sqrt(l01 * (vy * vy + vx * vx))
            q1[t] = a
            q0[t] = b
            cv[t] = _angle_cosine(a, b)
        cv[t0] = -np.inf
        cv[t1] = -np.inf
        top = -np.inf
        best = 0
        for t in range(c):
            x = cv[t]
            if x != x:  # a cosine beyond 1: the reference's angle is NaN
                return False
            if x > top:
                top = x
                best = t
        near = 0
        for t in range(c):
            near += cv[t] >= top - cosine_margin
        a = q1[best]
        b = q0[best]
        if not (near == 1 and abs(top) > cosine_margin
                and (a == 0.0 or abs(a) > cosine_margin)
                and (b == 0.0 or abs(b) > cosine_margin)):
            ways, found = _ways(py, px, s, c, t0, t1, top - cosine_margin, angle_margin,
                                cosine_margin, q1, q0, cv, way0, way1, ways, found, circle)
            if ways < 0:
                return False
            continue
        # one candidate and clear signs: the reference's step, with no arccos
        if top < 0:  # the angle at V is obtuse: the diameter circle
            _, cy, cx, r = _circle_case(py, px, s, t0, t1, best, half_pi, 0.0, 0.0)
        elif a >= 0 and b >= 0:  # no obtuse angle: the circumcircle
            _, cy, cx, r = _circle_case(py, px, s, t0, t1, best, 0.0, 0.0, 0.0)
        else:  # V replaces the end whose angle is obtuse
            way0[ways] = best if b < 0 else t0
            way1[ways] = t1 if b < 0 else best
            ways += 1
            continue
        if not _same_or_first(found, circle, cy, cx, r):
            return False
        found = True
    return found


@njit(cache=True, error_model="numpy")
def _ways(py, px, s, c, t0, t1, low, angle_margin, cosine_margin, q1, q0, cv, way0, way1,
          ways, found, circle):  # pragma: no cover - compiled
    """A step of :func:`_settle` that is not clear: the candidates whose cosine is at least
    ``low`` (among them every one that the reference may take) get their angles from
    ``math.acos``; each one within ``angle_margin`` of the smallest, and each way its
    angles allow, is followed: a way that ends gives its circle (:func:`_same_or_first`),
    one that goes on is added to ``way0``, ``way1``. Returns ``(ways, found)``, ``ways``
    -1 when two ways end on different circles or there are too many of them."""
    half_pi = np.pi / 2
    smallest = np.inf
    for t in range(c):
        if cv[t] >= low:
            smallest = min(smallest, (np.pi - math.acos(q1[t])) - math.acos(q0[t]))
    for t in range(c):
        if not cv[t] >= low:
            continue
        a = q1[t]
        b = q0[t]
        v = (np.pi - math.acos(a)) - math.acos(b)
        if not v <= smallest + angle_margin:
            continue
        if v >= half_pi - angle_margin:  # may be the diameter circle
            _, cy, cx, r = _circle_case(py, px, s, t0, t1, t, half_pi, 0.0, 0.0)
            if not _same_or_first(found, circle, cy, cx, r):
                return -1, found
            found = True
        if not v < half_pi + angle_margin:
            continue
        if _maybe_acute(a, cosine_margin) and _maybe_acute(b, cosine_margin):
            _, cy, cx, r = _circle_case(py, px, s, t0, t1, t, 0.0, 0.0, 0.0)
            if not _same_or_first(found, circle, cy, cx, r):
                return -1, found
            found = True
        if _maybe_obtuse(a, cosine_margin) or _maybe_obtuse(b, cosine_margin):
            for end in range(2):  # S0 replaced where its angle may be obtuse, else S1
                if end == 0 and not _maybe_obtuse(b, cosine_margin):
                    continue
                if end == 1 and not _maybe_acute(b, cosine_margin):
                    continue
                if ways >= way0.shape[0]:
                    return -1, found
                way0[ways] = t if end == 0 else t0
                way1[ways] = t1 if end == 0 else t
                ways += 1
    return ways, found
