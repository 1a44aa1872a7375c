r"""numba kernel of the 3-D Zernike engine's Legendre stage on the CPU.

The torch path of :meth:`fastmoments.ball.engine.BallEngine.shell_sums` forms the products
:math:`\bar P_l^m(q)\, E_{q, (l + m) \bmod 2, m}` of every ring and harmonic as whole-array
operations (a gather of the azimuthal sums, a product, an indexed add), so each of the
``rings x harmonics x batch`` terms passes through memory three times. This kernel walks the
radius groups and adds each ring's products straight into its group's row:

.. math:: S_{g, lm} = \sum_{q \in g} \bar P_l^m(q)\, E_{q, (l + m) \bmod 2, m}

(rings sorted by group, as :mod:`fastmoments.ball.sampling` makes them), in the working dtype,
in the same order as the torch path's sums. It runs on one thread: the whole stage is a few
milliseconds at 100^3, order 20, and a parallel region on a busy machine costs more than that
waiting for its threads.

Imported lazily by the engine (``import fastmoments`` does not import numba); compiled with
``cache=True``.
"""

from __future__ import annotations

from numba import njit

__all__ = ["shell_sums"]


@njit(cache=True)
def shell_sums(E, P, col, gstart, out):  # pragma: no cover - compiled
    """``out[g, j, b]`` = :math:`\\sum_{q \\in g} P[q, j]\\, E[q, col[j], b]`.

    ``E``: ``(Q, C, B2)`` azimuthal sums; ``P``: ``(Q, LM)`` Legendre table; ``col``:
    ``(LM,)`` int64, the column of ``E`` each harmonic reads; ``gstart``: ``(G + 1,)`` int64,
    first ring of each group; ``out``: ``(G, LM, B2)``, overwritten.
    """
    G = gstart.shape[0] - 1
    LM = P.shape[1]
    B2 = E.shape[2]
    for g in range(G):
        for j in range(LM):
            for b in range(B2):
                out[g, j, b] = 0.0
        for q in range(gstart[g], gstart[g + 1]):
            for j in range(LM):
                p = P[q, j]
                c = col[j]
                for b in range(B2):
                    out[g, j, b] += p * E[q, c, b]
