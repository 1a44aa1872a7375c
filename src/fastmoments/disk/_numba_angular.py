r"""numba kernel of the disk engine's forward angular stage on the CPU.

The torch path of :meth:`fastmoments.disk.engine.DiskEngine._angular` forms, for every orbit
and repetition, the products of the orbit's two 4-point DFTs with :math:`e^{\mp i m\theta_0}`
as whole-array operations, so each of the ``orbits x repetitions x batch`` terms passes
through memory several times. This kernel walks the radius groups in parallel and keeps each
orbit's DFTs in registers:

.. math:: S_{gm} = \sum_{o \in g} e^{-im\theta_o} F^+_{o, m \bmod 4}
          + e^{im\theta_o} F^-_{o, m \bmod 4},

with :math:`F^\pm_q = \sum_\kappa v_{\pm,\kappa} (-i)^{q\kappa}` the DFTs of the orbit's
values ``v`` (slots as in :mod:`fastmoments.disk.sampling`). The factors
:math:`\cos m\theta_o`, :math:`\sin m\theta_o` follow the columns' repetitions by the
angle-addition recurrence (steps of 1 or 2 in ``m``), restarted from ``cos``/``sin`` of the
float64 phase every :data:`RESEED` columns, so their error stays below about
``RESEED * 1e-16``; the sums are accumulated in float64 whatever the images' dtype.

Imported lazily by the engine (``import fastmoments`` does not import numba); compiled with
``cache=True``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._numba import set_threads

__all__ = ["RESEED", "angular_sums", "set_threads"]

#: columns between two exact evaluations of the angular factors
RESEED = 16


@njit(parallel=True, cache=True)
def angular_sums(vals, theta0, gstart, ms, out):  # pragma: no cover - compiled
    """``out[g, c, b, 0/1]`` = real/imaginary part of :math:`S_{g, m_c}` for image ``b``.

    ``vals``: ``(B, O, 8)`` weighted values of the orbits' slots; ``theta0``: ``(O,)``
    float64; ``gstart``: ``(G + 1,)`` int64, first orbit of each group; ``ms``: ``(C,)`` int64
    repetition of each output column; ``out``: ``(G, C, B, 2)``, overwritten.
    """
    G = gstart.shape[0] - 1
    B = vals.shape[0]
    C = ms.shape[0]
    for g in prange(G):
        acc = np.zeros((C, B, 2))
        u = np.empty((4, B, 4))  # (q, b, [u1, u2, u3, u4])
        for o in range(gstart[g], gstart[g + 1]):
            th = theta0[o]
            for b in range(B):
                v0, v1, v2, v3 = vals[b, o, 0], vals[b, o, 1], vals[b, o, 2], vals[b, o, 3]
                w0, w1, w2, w3 = vals[b, o, 4], vals[b, o, 5], vals[b, o, 6], vals[b, o, 7]
                # F+ and F- at q = 0..3 (real, imaginary)
                p0r, p2r = v0 + v1 + v2 + v3, v0 - v1 + v2 - v3
                p1r, p1i, p3r, p3i = v0 - v2, v3 - v1, v0 - v2, v1 - v3
                m0r, m2r = w0 + w1 + w2 + w3, w0 - w1 + w2 - w3
                m1r, m1i, m3r, m3i = w0 - w2, w3 - w1, w0 - w2, w1 - w3
                # u1 = pr + mr, u2 = pi - mi, u3 = pi + mi, u4 = mr - pr
                u[0, b, 0], u[0, b, 1], u[0, b, 2], u[0, b, 3] = p0r + m0r, 0.0, 0.0, m0r - p0r
                u[1, b, 0], u[1, b, 1] = p1r + m1r, p1i - m1i
                u[1, b, 2], u[1, b, 3] = p1i + m1i, m1r - p1r
                u[2, b, 0], u[2, b, 1], u[2, b, 2], u[2, b, 3] = p2r + m2r, 0.0, 0.0, m2r - p2r
                u[3, b, 0], u[3, b, 1] = p3r + m3r, p3i - m3i
                u[3, b, 2], u[3, b, 3] = p3i + m3i, m3r - p3r
            c1, s1 = math.cos(th), math.sin(th)
            c2, s2 = c1 * c1 - s1 * s1, 2.0 * s1 * c1
            cm, sm = 1.0, 0.0
            prev = -10
            since = RESEED
            for c in range(C):
                m = ms[c]
                d = m - prev
                if since >= RESEED or (d != 1 and d != 2):
                    ph = m * th
                    cm, sm = math.cos(ph), math.sin(ph)
                    since = 0
                elif d == 1:
                    cm, sm = cm * c1 - sm * s1, sm * c1 + cm * s1
                else:
                    cm, sm = cm * c2 - sm * s2, sm * c2 + cm * s2
                since += 1
                prev = m
                q = m % 4
                for b in range(B):
                    acc[c, b, 0] += cm * u[q, b, 0] + sm * u[q, b, 1]
                    acc[c, b, 1] += cm * u[q, b, 2] + sm * u[q, b, 3]
        for c in range(C):
            for b in range(B):
                out[g, c, b, 0] = acc[c, b, 0]
                out[g, c, b, 1] = acc[c, b, 1]
