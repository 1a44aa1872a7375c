"""The moments of the polar harmonic transforms (:class:`PHTMoments`)."""

from __future__ import annotations

from typing import Any

from .._validate import (
    check_choice,
    check_int,
    check_int_list,
)
from .indexing import REPETITION_SETS
from .moments import DiskMoments

__all__ = ["PHTMoments"]


class PHTMoments(DiskMoments):
    r"""Polar harmonic moments of a batch: ``M[n, l]`` for any valid ``(n, l)`` computed
    directly or through the real-image symmetry (:math:`M_{n,-l} = \overline{M_{-n,l}}` for
    PCET, :math:`\overline{M_{n,l}}` for PCT/PST); ``invariants()`` gives :math:`|M_{nl}|`.
    Columns (``pairs``, ``values()``, ``invariants()``, ``np.asarray(M)``, ``shape``) are
    ordered by ``n`` then ``l``, as for :class:`~fastmoments.disk.DiskMoments`.

    Examples
    --------
    >>> import numpy as np
    >>> from fastmoments import pcet
    >>> M = pcet(np.ones((2, 16, 16)), 1, 1)
    >>> M.shape, np.asarray(M).shape, M.pairs[:3]
    ((2, 6), (2, 6), [(-1, 0), (-1, 1), (0, 0)])
    >>> M  # doctest: +ELLIPSIS
    <PHTMoments pcet |n|<=1 |l|<=1 (6 moments) batch_shape=(2,) shape=(2, 6) dtype=...>
    """

    def _orders_text(self) -> str:
        pairs = self.plan.index.pairs()
        top_n = max(abs(n) for n, _l in pairs)
        top_l = max(abs(m) for _n, m in pairs)
        return f"|n|<={top_n} |l|<={top_l} ({len(pairs)} moments)"

    def reconstruct(self, nmax: int | None = None, lmax: int | None = None, *,
                    orders: Any = None, repetitions: Any = "all") -> Any:
        r"""Reconstruct at the pixel centres: :math:`\hat f = \sum M_{nl} H_{nl}`
        (Yang et al. Eq. 3, 8, 14) over the computed moments.

        Parameters
        ----------
        nmax : int, optional
            Use only the orders with :math:`|n| \le` ``nmax``.
        lmax : int, optional
            Use only the repetitions with :math:`|l| \le` ``lmax``.
        orders : int, (lo, hi) or iterable, optional
            Orders to keep, as in :meth:`DiskMoments.reconstruct` (``T`` means ``0..T``).
        repetitions : str or iterable of int
            As in :meth:`DiskMoments.reconstruct`. A stored moment brings in its partner
            with :math:`-l`, so the result is the real part of the sum.
        """
        given = {"orders": orders, "repetitions": repetitions, "nmax": nmax, "lmax": lmax}
        if nmax is not None:
            nmax = check_int("nmax", nmax, minimum=0)
            computed = self._computed_orders()
            top = max(abs(n) for n in computed)
            if nmax > top:
                raise ValueError(f"nmax={nmax} asks for orders up to {nmax}, but these "
                                 f"moments were computed up to |n| = {top}")
            keep = {n for n in computed if abs(n) <= nmax}
            if orders is not None:
                keep &= self._order_filter(orders) or set()
            if not keep:
                raise ValueError(f"{_given(given)} select none of the computed moments")
            orders = sorted(keep)
        if lmax is not None:
            lmax = check_int("lmax", lmax, minimum=0)
            top = max(self.plan.index.ms)
            if lmax > top:
                raise ValueError(f"lmax={lmax} asks for repetitions up to {lmax}, but these "
                                 f"moments were computed up to |l| = {top}")
            if repetitions is None:
                repetitions = "all"
            if isinstance(repetitions, str):
                check_choice("repetitions", repetitions, REPETITION_SETS)
                lo, hi = {"all": (-lmax, lmax), "positive": (1, lmax), "negative": (-lmax, -1),
                          "zero": (0, 0), "nonnegative": (0, lmax),
                          "nonpositive": (-lmax, 0)}[repetitions]
                repetitions = range(lo, hi + 1)
            else:
                listed = check_int_list("repetitions", repetitions, minimum=None, allow_empty=True)
                missing = sorted(m for m in listed if abs(m) not in self.plan.index.ms)
                if missing:
                    raise ValueError(f"repetitions lists {missing}, which were not computed "
                                     f"(computed |l| up to {top})")
                repetitions = [m for m in listed if abs(m) <= lmax]
            stored = set(self.plan.index.ms)
            repetitions = [m for m in repetitions if abs(m) in stored]
            if not repetitions:
                raise ValueError(f"{_given(given)} select none of the computed moments")
        try:
            return super().reconstruct(orders=orders, repetitions=repetitions)
        except ValueError as exc:
            if nmax is None and lmax is None:
                raise
            raise ValueError(f"{_given(given)}: {exc}") from None


def _given(args: dict[str, Any]) -> str:
    """``nmax=2, lmax=1`` for the arguments a caller gave (None left out)."""
    return ", ".join(f"{k}={v!r}" for k, v in args.items() if v is not None and v != "all")
