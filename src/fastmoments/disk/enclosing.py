r"""Convex hulls and minimum enclosing circles of every object of a label image, batched.

Both work on the *column extremes* of each object: for every column :math:`j` that an object
touches, its topmost and bottommost pixel centres :math:`(i_{\min}(j), j)` and
:math:`(i_{\max}(j), j)`, integer coordinates (row :math:`i`, column :math:`j`). Every vertex
of the convex hull of an object's pixel centres is such a point, so the hull, and the
smallest circle holding every pixel centre, are those of the column extremes.

Convex hull
    Andrew's monotone chain (A. M. Andrew, "Another efficient algorithm for convex hulls in
    two dimensions", Information Processing Letters 9, 1979): the lower chain (smallest row
    of each column, columns ascending) followed by the upper chain (largest row, columns
    descending) is a closed polygon whose convex vertices, pruned until none is reflex or
    collinear, are the hull. By default (``method="numba"``) each object's two chains go
    through Andrew's stack in compiled code, one object after another. The plain reference
    (``method="numpy"``) prunes every object at once: each round drops, in all objects
    together, the points where the polygon does not turn strictly left; a hull vertex is
    never dropped (it lies strictly outside every segment between two other points), so the
    rounds end on the strict hull. Both use exact integer cross products. The vertices
    come out counter-clockwise in the :math:`(x, y) = (j, i)` plane starting from the point
    of smallest column (smallest row among those), the order of
    ``centrosome.cpmorphology.convex_hull`` (the code CellProfiler runs).

Minimum enclosing circle
    Chrystal's algorithm (G. Chrystal, "On the problem to construct the minimum circle
    enclosing n given points in a plane", Proc. Edinburgh Math. Soc. 3, 1885), run on the
    hull vertices of all objects in lock step, as ``centrosome.cpmorphology.
    minimum_enclosing_circle`` runs it: take the first two hull vertices as the side
    :math:`S_0 S_1`; find the other vertex :math:`V` that sees :math:`S_0 S_1` under the
    smallest angle (the first one in hull order on ties); if that angle is not acute, the
    circle on the diameter :math:`S_0 S_1` is the answer; if the triangle :math:`S_0 S_1 V`
    has no obtuse angle, its circumcircle is; otherwise :math:`V` replaces the end of the
    side (:math:`S_0` or :math:`S_1`) whose angle is obtuse, and the step repeats. The
    angles are computed as ``arccos`` of normalised dot products and the circumcentre by the
    Cartesian formula, in float64 and in the same order as that code, so that the centre
    and radius of every object come out with the same bits: CellProfiler keeps the pixels
    with :math:`\rho^2 \le 1`, and pixel centres that lie on the circle (three or more per
    object) would otherwise fall on either side of it by rounding.

The circle is a small geometric problem on few points per object (the hull of an object of
radius :math:`R` pixels has :math:`O(R^{2/3})` vertices). It runs on the host, where
CellProfiler's bits are kept. A step's decisions are the only place where the bits of the
angles matter (the circle itself comes from the vertices), so by default
(``method="numba"``) each object first runs on its own in compiled code, its candidates
ordered by the cosines of their angles and its angles from ``math.acos``
(:func:`._numba_circles.circles_settled`): where no decision is within a margin far above
the two ``arccos``' difference (a tie, an angle at :math:`\pi/2`), or every way such a
decision allows ends on the same circle to the bit, the circle is the reference's. The
few objects left go through the reference's steps with NumPy's ``arccos``, in compiled
loops, all of them at once. NumPy's sort of all their angles decides only in a step where
the vertices of an object's equal smallest angles would give different circles or moves
(elsewhere which one is taken does not change a bit), and it is made only when following
each of those vertices (a copy of the object for each) does not end on the same circle to
the bit; then every object goes through those steps, as one set. ``method="numpy"`` runs
every object in lock step with array operations, the plain reference.
:func:`minimum_enclosing_circles_torch` runs the same steps in torch on a GPU (the standard
convention's route on CUDA, where the last bits of a centre do not decide which pixels
count).
"""

from __future__ import annotations

import math

import numpy as np
import torch

__all__ = ["convex_hulls", "independent_circles", "minimum_enclosing_circles",
           "minimum_enclosing_circles_torch"]


def convex_hulls(obj: np.ndarray, col: np.ndarray, row_min: np.ndarray, row_max: np.ndarray,
                 n_objects: int, *, method: str = "numba") -> tuple[np.ndarray, np.ndarray]:
    """Strict convex hull vertices of every object, from its column extremes.

    Parameters
    ----------
    obj, col, row_min, row_max : numpy.ndarray
        One entry per (object, column) pair, sorted by object then column: the object's index
        (``0 .. n_objects - 1``), the column, and the smallest and largest row of the object's
        pixels in that column (int64).
    n_objects : int
        The number of objects; each has at least one column.
    method : {"numba", "numpy"}
        ``"numba"``: Andrew's monotone chain object by object, compiled
        (:func:`fastmoments.disk._numba_labels.convex_hulls_by_object`); ``"numpy"``: every
        object pruned in lock step (module notes), the plain reference. The same output.

    Returns
    -------
    points : numpy.ndarray
        ``(P, 2)`` int64 ``(row, col)`` hull vertices, object by object, each object's
        counter-clockwise in the ``(x, y) = (col, row)`` plane from its point of smallest
        ``(col, row)``.
    counts : numpy.ndarray
        ``(n_objects,)`` the number of vertices of each object (1 for a single pixel, 2 for
        pixels on one line).
    """
    if method not in ("numba", "numpy"):
        raise ValueError(f"method must be 'numba' or 'numpy', got {method!r}")
    if n_objects == 0:
        return np.zeros((0, 2), np.int64), np.zeros(0, np.int64)
    ncol = np.bincount(obj, minlength=n_objects)
    if method == "numba":
        return _hulls_compiled(ncol, col, row_min, row_max)
    first = np.concatenate([[0], np.cumsum(ncol)[:-1]])
    last = first + ncol - 1
    # the closed polygon: lower chain (row_min, columns ascending), then upper chain
    # (row_max, columns descending); the pixel of an end column of one pixel appears once
    e = np.arange(len(obj))
    rev = first[obj] + last[obj] - e  # entry e of the upper chain is column entry rev
    end_col = (rev == first[obj]) | (rev == last[obj])
    up = ~(end_col & (row_max[rev] == row_min[rev]))
    seq_obj = np.concatenate([obj, obj[up]])
    seq_row = np.concatenate([row_min, row_max[rev][up]])
    seq_col = np.concatenate([col, col[rev][up]])
    chain = np.concatenate([np.zeros(len(obj), np.int64), np.ones(int(up.sum()), np.int64)])
    order = np.lexsort((np.concatenate([e, e[up]]), chain, seq_obj))
    seq_obj, seq_row, seq_col = seq_obj[order], seq_row[order], seq_col[order]
    # the top and bottom pixels of the first and last columns are always hull vertices;
    # keeping them also keeps the two ends of an object that is a straight line (where the
    # polygon turns back on itself)
    protect = (seq_col == col[first][seq_obj]) | (seq_col == col[last][seq_obj])
    while True:
        cnt = np.bincount(seq_obj, minlength=n_objects)
        start = np.concatenate([[0], np.cumsum(cnt)[:-1]])
        pos = np.arange(len(seq_obj)) - start[seq_obj]
        c = cnt[seq_obj]
        prv = start[seq_obj] + (pos - 1) % c
        nxt = start[seq_obj] + (pos + 1) % c
        # z of (p - prev) x (next - p) in the (x, y) = (col, row) plane, exact in int64
        cross = ((seq_col - seq_col[prv]) * (seq_row[nxt] - seq_row)
                 - (seq_col[nxt] - seq_col) * (seq_row - seq_row[prv]))
        keep = (cross > 0) | protect
        if bool(keep.all()):
            break
        seq_obj, seq_row, seq_col, protect = (seq_obj[keep], seq_row[keep], seq_col[keep],
                                              protect[keep])
    counts = np.bincount(seq_obj, minlength=n_objects)
    return np.stack([seq_row, seq_col], axis=1), counts


def _hulls_compiled(ncol: np.ndarray, col: np.ndarray, row_min: np.ndarray,
                    row_max: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from ._numba_labels import convex_hulls_by_object

    first = np.concatenate([[0], np.cumsum(ncol)[:-1]]).astype(np.int64)
    size = 2 * len(col)
    out_row = np.empty(size, np.int64)
    out_col = np.empty(size, np.int64)
    counts = np.zeros(len(ncol), np.int64)
    at = convex_hulls_by_object(first, ncol.astype(np.int64),
                                np.ascontiguousarray(col, np.int64),
                                np.ascontiguousarray(row_min, np.int64),
                                np.ascontiguousarray(row_max, np.int64), out_row, out_col,
                                counts)
    return np.stack([out_row[:at], out_col[:at]], axis=1), counts


def minimum_enclosing_circles(points: np.ndarray, counts: np.ndarray, *,
                              method: str = "numba") -> tuple[np.ndarray, np.ndarray]:
    """Centre ``(row, col)`` and radius of the smallest circle through or around each
    object's hull vertices, by Chrystal's algorithm (module notes).

    Parameters
    ----------
    points : numpy.ndarray
        ``(P, 2)`` hull vertices from :func:`convex_hulls`.
    counts : numpy.ndarray
        ``(n,)`` vertices per object (each at least 1).
    method : {"numba", "numpy"}
        ``"numba"``: each step object by object in compiled loops, with NumPy's ``arccos``
        on all the step's candidates at once, and NumPy's sort of all the candidates' angles
        only in a step where an object has two equal smallest angles that lead to different
        circles (the module notes say why that sort decides); ``"numpy"``: every object in
        lock step with array operations, the plain reference. The same operations in the
        same order: the same bits.

    Returns
    -------
    centres : numpy.ndarray
        ``(n, 2)`` float64.
    radii : numpy.ndarray
        ``(n,)`` float64; 0 for an object of one pixel.

    Examples
    --------
    >>> pts = np.array([[0.0, 0.0], [0.0, 4.0], [3.0, 4.0], [3.0, 0.0]])
    >>> c, r = minimum_enclosing_circles(pts, np.array([4]))
    >>> c.tolist(), r.tolist()
    ([[1.5, 2.0]], [2.5])
    """
    if method not in ("numba", "numpy"):
        raise ValueError(f"method must be 'numba' or 'numpy', got {method!r}")
    if method == "numba":
        return _circles_compiled(points, counts)
    n = len(counts)
    kmax = max(int(counts.max()), 2) if n else 0  # room for a side even if none has one
    centres = np.zeros((n, 2))
    radii = np.zeros(n)
    if n == 0:
        return centres, radii
    start = np.concatenate([[0], np.cumsum(counts)[:-1]])
    pad = np.zeros((n, kmax, 2))
    slot = np.arange(len(points)) - np.repeat(start, counts)
    pad[np.repeat(np.arange(n), counts), slot] = points
    valid = np.arange(kmax)[None, :] < counts[:, None]
    one = counts == 1
    centres[one] = pad[one, 0]
    two = counts == 2
    centres[two] = (pad[two, 0] + pad[two, 1]) / 2
    d = centres[two] - pad[two, 0]
    radii[two] = np.sqrt(d[:, 0] ** 2 + d[:, 1] ** 2)
    s0 = np.zeros(n, np.int64)
    s1 = np.ones(n, np.int64)
    active = np.flatnonzero(counts > 2)
    half_pi = np.pi / 2
    pad_y = np.ascontiguousarray(pad[..., 0])  # the coordinates apart: contiguous rows
    pad_x = np.ascontiguousarray(pad[..., 1])
    rounds = 0
    while active.size:
        rounds = _next_round(rounds, kmax)
        py, px = pad_y[active], pad_x[active]
        a0 = pad[active, s0[active]]
        a1 = pad[active, s1[active]]
        cand = valid[active].copy()
        cand[np.arange(active.size), s0[active]] = False
        cand[np.arange(active.size), s1[active]] = False
        # dot products written out over the two coordinates (the same sums as NumPy's
        # reductions over an axis of length 2, which cost more than the arithmetic), each
        # step in place where it can be: the same operations on the same operands
        s01 = a0 - a1
        sy, sx = s01[:, 0:1], s01[:, 1:2]
        l01 = sy * sy + sx * sx
        with np.errstate(invalid="ignore", divide="ignore"):
            at_s1 = _angle(sy, sx, l01, py - a1[:, 0:1], px - a1[:, 1:2])
            at_s0 = _angle(-sy, -sx, l01, py - a0[:, 0:1], px - a0[:, 1:2])
        at_v = np.pi - at_s1
        at_v -= at_s0
        at_v = np.where(cand, at_v, np.inf)
        best = _first_minimum(at_v, cand)
        rows = np.arange(active.size)
        min_v, b_s1, b_s0 = at_v[rows, best], at_s1[rows, best], at_s0[rows, best]
        none = ~cand.any(1)
        diameter = none | (min_v >= half_pi)
        circum = ~diameter & (b_s1 <= half_pi) & (b_s0 <= half_pi) & (min_v <= half_pi)
        if diameter.any():
            k = active[diameter]
            p, q = a0[diameter], a1[diameter]
            centres[k] = (p + q) / 2
            radii[k] = np.sqrt(((p - q) ** 2).sum(1)) / 2
        if circum.any():
            k = active[circum]
            centres[k], radii[k] = _circumcircle(a0[circum], a1[circum],
                                                 pad[active[circum], best[circum]])
        move = ~diameter & ~circum
        k = active[move]
        replace_s0 = b_s0[move] > half_pi
        s0[k[replace_s0]] = best[move][replace_s0]
        s1[k[~replace_s0]] = best[move][~replace_s0]
        active = k
    return centres, radii


#: The work of the settled circles (:func:`._numba_circles.circles_settled`) a hull
#: vertex, in the unit of :data:`fastmoments._threads.GRAIN` (16.7 million multiply-adds
#: for 5-10 ms of one core): the 5120 x 5120 nuclei set (201,700 vertices, 12,500 objects)
#: took 6.7 ms on one thread of this 2-core machine, about 33 ns, or 110 multiply-adds'
#: time, a vertex.
CIRCLE_WORK = 110.0


def _circles_compiled(points: np.ndarray, counts: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    r""":func:`minimum_enclosing_circles` compiled: each object on its own where it can be
    (:func:`independent_circles`); where NumPy's sort of every object's angles decides,
    every object through the lock-step steps with it, as one set (:func:`_lock_step`)."""
    vertices = _vertex_arrays(points, counts)
    found = _independent(*vertices)
    return found if found is not None else _lock_step(*vertices)


def independent_circles(points: np.ndarray, counts: np.ndarray
                        ) -> tuple[np.ndarray, np.ndarray] | None:
    r"""The circles of :func:`minimum_enclosing_circles` (CellProfiler's bits) of every
    object on its own, or None where one of them depends on the other objects.

    Each object first goes through :func:`._numba_circles.circles_settled` (``math.acos``
    where NumPy's ``arccos`` cannot change a step; on the threads :data:`CIRCLE_WORK` is
    worth); the objects it leaves (ties whose ways end on circles of other bits, angles at
    :math:`\pi/2` whose ways do, NaN) through the lock-step steps with NumPy's ``arccos``
    (:func:`_circle_steps`), following each of an object's equal smallest angles without
    NumPy's sort of every object's angles. None where that sort decides: its order mixes
    the angles of every object of the set (the caller then runs them all through the
    lock-step steps together, :func:`_lock_step`). Where it gives circles, none depends on
    the other objects passed with it: a subset of a set's objects gets the circles it gets
    in the set.

    Parameters
    ----------
    points : numpy.ndarray
        ``(P, 2)`` hull vertices, object after object (:func:`convex_hulls`).
    counts : numpy.ndarray
        ``(n,)`` vertices per object (each at least 1).

    Returns
    -------
    tuple of numpy.ndarray or None
        ``(centres, radii)``: ``(n, 2)`` and ``(n,)`` float64; or None.
    """
    return _independent(*_vertex_arrays(points, counts))


def _vertex_arrays(points: np.ndarray, counts: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(py, px, start, counts)``: the vertices' rows and columns (contiguous float64),
    each object's first vertex and its number of vertices (int64), as the compiled steps
    read them."""
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    return (np.ascontiguousarray(points[:, 0], dtype=np.float64),
            np.ascontiguousarray(points[:, 1], dtype=np.float64),
            np.cumsum(counts) - counts, counts)


def _independent(py: np.ndarray, px: np.ndarray, start: np.ndarray, counts: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`independent_circles` of the arrays of :func:`_vertex_arrays`."""
    n = len(counts)
    if n == 0:
        return np.zeros((n, 2)), np.zeros(n)
    centres, radii, left = _settled(py, px, start, counts)
    if left.size:
        found = _circle_steps(py, px, start[left], counts[left], follow=True, sort=False)
        if found is None:
            return None
        centres[left], radii[left] = found
    return centres, radii


def _settled(py: np.ndarray, px: np.ndarray, start: np.ndarray, counts: np.ndarray
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`._numba_circles.circles_settled` of every object, on the threads its work is
    worth (runs of consecutive objects, :data:`CIRCLE_WORK` a vertex): ``(centres,
    radii, unsettled objects)``."""
    from .._threads import threads_for
    from . import _numba_circles as nk

    n = len(counts)
    centres = np.zeros((n, 2))
    radii = np.zeros(n)
    left = np.empty(n, np.int64)
    count = min(threads_for(CIRCLE_WORK * len(py)), n)
    if count == 1:
        m = nk.circles_settled(py, px, start, counts, centres, radii, nk.ANGLE_MARGIN,
                               nk.COSINE_MARGIN, left)
        return centres, radii, left[:m]
    from .._numba import CHUNKS, threads

    parts = min(n, CHUNKS * count)
    found = np.empty(parts, np.int64)
    with threads(count):
        nk.circles_settled_parallel(py, px, start, counts, centres, radii, nk.ANGLE_MARGIN,
                                    nk.COSINE_MARGIN, left, found)
    firsts = np.arange(parts) * n // parts
    return centres, radii, np.concatenate(
        [left[a:a + m] for a, m in zip(firsts, found, strict=True)])


def _lock_step(py: np.ndarray, px: np.ndarray, start: np.ndarray, counts: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Every object through :func:`_circle_steps` in one call: following ties first, else
    with NumPy's sort of every step's angles. It runs only where
    :func:`independent_circles` met an object whose steps need that sort (their order mixes
    every object's angles), so the objects are not split into groups on threads: each
    group would meet the same object and hand the set back."""
    found = _circle_steps(py, px, start, counts, follow=True)
    return found if found is not None else _circle_steps(py, px, start, counts, follow=False)


#: :func:`_circle_steps` follows ties with at most as many copies as there are objects, or
#: this many when that is more (then it gives up and sorts).
MAX_COPIES = 256
#: :func:`_circle_steps` follows the ties of a step only when they are in at most this share
#: of its objects (else it sorts from there on): stardist's nuclei have ties in 0.8% of their
#: objects, and every one settles; small synthetic ellipses (5 pixels across) in 7-9%, and
#: some end on circles of other bits, where following cost more than sorting at once.
FOLLOW_SHARE = 0.02


def _circle_steps(py: np.ndarray, px: np.ndarray, start: np.ndarray, counts: np.ndarray,
                  follow: bool, sort: bool = True) -> tuple[np.ndarray, np.ndarray] | None:
    """The steps of every object in lock step (:func:`._numba_circles.circle_round`).

    A step where an object's equal smallest angles give different circles or moves takes,
    in CellProfiler's code, the first of them in NumPy's sort of all the step's angles (a
    sort of every object's candidates: 12 ms of the 5120 x 5120 nuclei's 25 ms). With
    ``follow`` the object takes the first in hull order instead, and each other one is
    followed by a copy of the object (copies of copies in later such steps), in the same
    steps; when every copy ends on its object's circle to the bit, no sort could have
    changed it. Returns None when one differs, when the copies would outnumber the objects
    (:data:`MAX_COPIES`), or when an angle is NaN (the caller then sorts); without
    ``follow``, or when the first such step has ties in more than :data:`FOLLOW_SHARE` of
    its objects, the sort is made in each step that needs it. With ``sort=False`` (and
    ``follow``) every tie is followed, whatever its share, and None is returned where only
    the sort could decide (the objects are some of a larger set, whose sort would mix the
    other objects' angles in: :func:`independent_circles`)."""
    from . import _numba_circles as nk

    n = len(counts)
    centres = np.zeros((n, 2))
    radii = np.zeros(n)
    nk.circle_start(py, px, start, counts, centres, radii)
    s0 = np.zeros(n, np.int64)
    s1 = np.ones(n, np.int64)
    active = np.flatnonzero(counts > 2)
    size = int(np.maximum(counts - 2, 0).sum())
    angles = np.empty((2, size))  # each step's cosines, then (in place) their angles
    at_v = np.empty(size)
    slot, row_of = np.empty(size, np.int64), np.empty(size, np.int64)
    best = np.empty(n, np.int64)
    no_order = np.zeros(0, np.int64)
    # with follow: the object that each object or copy follows, which have their circles,
    # which objects have copies (empty without: nothing is checked)
    root = np.arange(n) if follow else no_order
    finished = np.zeros(len(root), np.bool_)
    followed = np.zeros(len(root), np.bool_)
    m = nk.circle_cosines(active, py, px, start, counts, s0, s1, angles[0], angles[1],
                          slot, row_of)
    rounds = 0
    kmax = int(counts.max()) if n else 0
    while active.size:
        rounds = _next_round(rounds, kmax)
        # as _angle: NumPy's arccos (its absolute value is itself: arccos >= +0 or NaN),
        # both cosines in one call
        np.arccos(angles[:, :m], out=angles[:, :m])
        status, nxt, m_nxt = nk.circle_round(active, py, px, start, counts, s0, s1, angles,
                                             m, at_v, no_order, slot, row_of, best, centres,
                                             radii, root, finished, followed)
        if status == nk.ROUND_DIFFERS:
            return None
        if status == nk.ROUND_SORT and not follow:
            status, nxt, m_nxt = nk.circle_round(
                active, py, px, start, counts, s0, s1, angles, m, at_v,
                np.argsort(at_v[:m]), slot, row_of, best, centres, radii, root, finished,
                followed)
        elif status == nk.ROUND_SORT:
            tie_a, tie_e = np.empty(m, np.int64), np.empty(m, np.int64)
            n_ties = nk.circle_ties(active, py, px, start, counts, s0, s1, at_v[:m],
                                    angles[0, :m], angles[1, :m], slot, best, tie_a, tie_e)
            if n_ties < 0 or len(root) + n_ties > n + max(n, MAX_COPIES):
                return None
            copy_of = active[tie_a[:n_ties]]
            if (sort and len(root) == n
                    and len(np.unique(copy_of)) > FOLLOW_SHARE * len(active)):
                # ties in many objects (small ones): sorted, this step and the next ones,
                # as without follow (no copy is made yet)
                follow, root = False, no_order
                finished = followed = np.zeros(0, np.bool_)
                status, nxt, m_nxt = nk.circle_round(
                    active, py, px, start, counts, s0, s1, angles, m, at_v,
                    np.argsort(at_v[:m]), slot, row_of, best, centres, radii, root,
                    finished, followed)
                active, m = nxt, m_nxt
                continue
            root = np.append(root, root[copy_of])
            followed[root[copy_of]] = True
            finished = np.append(finished, np.zeros(n_ties, np.bool_))
            copies = np.arange(len(counts), len(counts) + n_ties)
            start, counts = np.append(start, start[copy_of]), np.append(counts, counts[copy_of])
            s0, s1 = np.append(s0, s0[copy_of]), np.append(s1, s1[copy_of])
            centres = np.concatenate([centres, np.zeros((n_ties, 2))])
            radii = np.append(radii, np.zeros(n_ties))
            best = np.append(best[:len(active)], tie_e[:n_ties])
            same, nxt = nk.finish_checked(np.append(active, copies), py, px, start, s0, s1,
                                          at_v, angles[0], angles[1], best, centres, radii,
                                          slot, root, finished, followed[:n])
            if not same:
                return None
            size = int(np.maximum(counts[nxt] - 2, 0).sum())
            if size > len(at_v):  # room for the copies' candidates
                angles, at_v = np.empty((2, size)), np.empty(size)
                slot, row_of = np.empty(size, np.int64), np.empty(size, np.int64)
            best = np.empty(len(counts), np.int64)
            m_nxt = nk.circle_cosines(nxt, py, px, start, counts, s0, s1, angles[0],
                                      angles[1], slot, row_of)
        active, m = nxt, m_nxt
    if len(root) > n:
        bits = np.concatenate([centres, radii[:, None]], axis=1).view(np.int64)
        if not np.array_equal(bits[n:], bits[root[n:]]):
            return None
    return centres[:n], radii[:n]


#: The steps of an object of ``k`` hull vertices end within ``k * k + MAX_ROUNDS`` rounds:
#: each step's smallest angle is larger than the last one's, so no side comes twice (at
#: most ``k (k - 1) / 2`` steps; the 5120 x 5120 nuclei need at most 9 rounds). On points
#: that are not their objects' hulls (repeated points, points inside) the steps may go
#: round for ever, as CellProfiler's would: an error instead.
MAX_ROUNDS = 100


def _next_round(rounds: int, kmax: int) -> int:
    """``rounds + 1``, or ValueError when that passes ``kmax * kmax +``
    :data:`MAX_ROUNDS` (the points are not the objects' convex hulls)."""
    if rounds >= kmax * kmax + MAX_ROUNDS:
        raise ValueError(f"points: the steps of the minimum enclosing circles did not end "
                         f"after {rounds} rounds; pass each object's convex hull vertices, "
                         f"as convex_hulls gives them")
    return rounds + 1


def _angle(ay: np.ndarray, ax: np.ndarray, l01: np.ndarray, vy: np.ndarray, vx: np.ndarray
           ) -> np.ndarray:
    """``|arccos((a . v) / sqrt(|a|^2 |v|^2))|`` with ``|a|^2 = l01``, as
    ``np.abs(np.arccos((ay * vy + ax * vx) / np.sqrt(l01 * (vy ** 2 + vx ** 2))))`` computes
    it, in place (``vy``, ``vx`` are scratch)."""
    num = ay * vy
    num += ax * vx
    np.square(vy, out=vy)
    np.square(vx, out=vx)
    vy += vx
    np.multiply(l01, vy, out=vy)
    np.sqrt(vy, out=vy)
    num /= vy
    np.arccos(num, out=num)
    return np.abs(num, out=num)


def _first_minimum(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row, the column of the smallest of ``values[mask]``.

    Ties (vertices that see the side under the same computed angle) go the way
    CellProfiler's code sends them: the candidates of all rows, row by row, are sorted
    together by NumPy's default (unstable) ``argsort``, and each row takes its first
    candidate in that order. Which tied vertex is taken decides which hull point the radius
    is measured from, and so the last bits of the radius.
    """
    flat = values[mask]
    row_of, col_of = np.nonzero(mask)
    order = np.argsort(flat)
    best = np.zeros(values.shape[0], np.int64)
    best[row_of[order][::-1]] = col_of[order][::-1]
    return best


def _circumcircle(p0: np.ndarray, p1: np.ndarray, p2: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Centre of the circle through three points (Cartesian formula; integer coordinates
    make its numerators and denominator exact) and its distance to ``p0``."""
    y0, x0, y1, x1, y2, x2 = p0[:, 0], p0[:, 1], p1[:, 0], p1[:, 1], p2[:, 0], p2[:, 1]
    q0, q1, q2 = (p0 ** 2).sum(1), (p1 ** 2).sum(1), (p2 ** 2).sum(1)
    den = 2 * (x0 * (y1 - y2) + x1 * (y2 - y0) + x2 * (y0 - y1))
    cx = (q0 * (y1 - y2) + q1 * (y2 - y0) + q2 * (y0 - y1)) / den
    cy = (q0 * (x2 - x1) + q1 * (x0 - x2) + q2 * (x1 - x0)) / den
    centre = np.stack([cy, cx], axis=1)
    d = p0 - centre
    return centre, np.sqrt((d ** 2).sum(1))


def minimum_enclosing_circles_torch(points: torch.Tensor, counts: torch.Tensor
                                    ) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`minimum_enclosing_circles` in torch operations, on the device of ``points``
    (a GPU: one short sequence of kernels per step of Chrystal's algorithm, all objects in
    lock step, no copy to the host but the number of objects still active).

    The same steps and formulas; two things may differ in the last bits: ``arccos`` is the
    device's, and among vertices that see the side under exactly the same computed angle the
    first in hull order is taken (CellProfiler's code takes the first in NumPy's sort of all
    objects' angles). The circle is the same; its centre and radius may differ by rounding.

    Parameters
    ----------
    points : torch.Tensor
        ``(P, 2)`` float64 hull vertices (:func:`convex_hulls`).
    counts : torch.Tensor
        ``(n,)`` int64 vertices per object, each at least 1, on the same device.

    Returns
    -------
    centres, radii : torch.Tensor
        ``(n, 2)`` and ``(n,)`` float64.

    Examples
    --------
    >>> pts = torch.tensor([[0.0, 0.0], [0.0, 4.0], [3.0, 4.0], [3.0, 0.0]])
    >>> c, r = minimum_enclosing_circles_torch(pts.double(), torch.tensor([4]))
    >>> c.tolist(), r.tolist()
    ([[1.5, 2.0]], [2.5])
    """
    dev = points.device
    n = len(counts)
    centres = torch.zeros(n, 2, dtype=torch.float64, device=dev)
    radii = torch.zeros(n, dtype=torch.float64, device=dev)
    if n == 0:
        return centres, radii
    kmax = max(int(counts.max()), 2)
    start = torch.cumsum(counts, 0) - counts
    obj = torch.repeat_interleave(torch.arange(n, device=dev), counts)
    slot = torch.arange(len(points), device=dev) - start[obj]
    pad = torch.zeros(n, kmax, 2, dtype=torch.float64, device=dev)
    pad[obj, slot] = points.to(torch.float64)
    valid = torch.arange(kmax, device=dev)[None, :] < counts[:, None]
    one = counts == 1
    centres[one] = pad[one, 0]
    two = counts == 2
    centres[two] = (pad[two, 0] + pad[two, 1]) / 2
    d = centres[two] - pad[two, 0]
    radii[two] = torch.sqrt(d[:, 0] ** 2 + d[:, 1] ** 2)
    s0 = torch.zeros(n, dtype=torch.int64, device=dev)
    s1 = torch.ones(n, dtype=torch.int64, device=dev)
    active = torch.nonzero(counts > 2).reshape(-1)
    half_pi = math.pi / 2
    inf = torch.tensor(math.inf, dtype=torch.float64, device=dev)
    while active.numel():
        P = pad[active]
        rows = torch.arange(len(active), device=dev)
        a0 = P[rows, s0[active]]
        a1 = P[rows, s1[active]]
        cand = valid[active].clone()
        cand[rows, s0[active]] = False
        cand[rows, s1[active]] = False
        s01 = a0 - a1
        sy, sx = s01[:, 0:1], s01[:, 1:2]
        vs0 = P - a0[:, None, :]
        vs1 = P - a1[:, None, :]
        l01 = sy * sy + sx * sx
        at_s1 = torch.abs(torch.arccos((sy * vs1[..., 0] + sx * vs1[..., 1])
                                       / torch.sqrt(l01 * (vs1[..., 0] ** 2
                                                           + vs1[..., 1] ** 2))))
        at_s0 = torch.abs(torch.arccos(((-sy) * vs0[..., 0] + (-sx) * vs0[..., 1])
                                       / torch.sqrt(l01 * (vs0[..., 0] ** 2
                                                           + vs0[..., 1] ** 2))))
        at_v = torch.where(cand, math.pi - at_s1 - at_s0, inf)
        low = at_v.min(dim=1, keepdim=True).values
        best = (at_v == low).to(torch.int8).argmax(dim=1)  # the first smallest
        min_v, b_s1, b_s0 = at_v[rows, best], at_s1[rows, best], at_s0[rows, best]
        none = ~cand.any(1)
        diameter = none | (min_v >= half_pi)
        circum = ~diameter & (b_s1 <= half_pi) & (b_s0 <= half_pi) & (min_v <= half_pi)
        k = active[diameter]
        p, q = a0[diameter], a1[diameter]
        centres[k] = (p + q) / 2
        radii[k] = torch.sqrt(((p - q) ** 2).sum(1)) / 2
        k = active[circum]
        c, r = _circumcircle_torch(a0[circum], a1[circum], P[rows[circum], best[circum]])
        centres[k], radii[k] = c, r
        move = ~diameter & ~circum
        k = active[move]
        bm = best[move]
        replace_s0 = b_s0[move] > half_pi
        s0[k[replace_s0]] = bm[replace_s0]
        s1[k[~replace_s0]] = bm[~replace_s0]
        active = k
    return centres, radii


def _circumcircle_torch(p0: torch.Tensor, p1: torch.Tensor, p2: torch.Tensor
                        ) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`_circumcircle` in torch operations."""
    y0, x0, y1, x1, y2, x2 = p0[:, 0], p0[:, 1], p1[:, 0], p1[:, 1], p2[:, 0], p2[:, 1]
    q0, q1, q2 = (p0 ** 2).sum(1), (p1 ** 2).sum(1), (p2 ** 2).sum(1)
    den = 2 * (x0 * (y1 - y2) + x1 * (y2 - y0) + x2 * (y0 - y1))
    cx = (q0 * (y1 - y2) + q1 * (y2 - y0) + q2 * (y0 - y1)) / den
    cy = (q0 * (x2 - x1) + q1 * (x0 - x2) + q2 * (x1 - x0)) / den
    centre = torch.stack([cy, cx], dim=1)
    d = p0 - centre
    return centre, torch.sqrt((d ** 2).sum(1))
