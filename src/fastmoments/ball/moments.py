r"""The moments object of the 3-D Zernike transforms: indexing, invariants, reconstruction."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import torch

from .._progress import check_progress
from .._validate import check_choice, check_int
from ..moments import MomentIndexError, Moments, index_key

__all__ = ["Zernike3DMoments", "invariant_pairs"]


@lru_cache(maxsize=16)
def _pair_layout(order: int) -> tuple[tuple[tuple[int, int], ...], np.ndarray]:
    """The pairs ``(n, l)`` sorted by ``n`` then ``l``, and the pair of each flat moment."""
    from .engine import BallIndex

    nlm = BallIndex(order).nlm
    pairs = tuple(sorted({(int(n), int(l)) for n, l, _m in nlm}))
    where = {p: i for i, p in enumerate(pairs)}
    of = np.array([where[(int(n), int(l))] for n, l, _m in nlm], dtype=np.int64)
    return pairs, of


def invariant_pairs(order: int) -> list[tuple[int, int]]:
    """The pairs ``(n, l)`` of the invariants up to ``order``, in the column order of
    :meth:`Zernike3DMoments.invariants` (by ``n``, then ``l``).

    >>> invariant_pairs(2)
    [(0, 0), (1, 1), (2, 0), (2, 2)]
    """
    return list(_pair_layout(check_int("order", order, minimum=0))[0])


class Zernike3DMoments(Moments):
    r"""3-D Zernike moments :math:`\Omega_{nl}^m` of a batch of real volumes.

    Only :math:`m \ge 0` is stored; ``Om[n, l, -m]`` is
    :math:`(-1)^m \overline{\Omega_{nl}^m}` (real volumes, Condon-Shortley phase).
    ``np.asarray(Om)`` and :meth:`values` give the stored moments ``(..., K)`` in the order of
    :attr:`nlm`.
    """

    family = "zernike3d"

    def __init__(self, data: torch.Tensor, plan: Any, kind: Any) -> None:
        super().__init__(data, plan, kind, 1)
        self.plans: list[Any] | None = None  # one plan per volume (centroid placement)

    @property
    def order(self) -> int:
        return int(self.plan.order)

    @property
    def nlm(self) -> np.ndarray:
        """``(K, 3)``: the ``(n, l, m)`` of each stored moment (``m >= 0``)."""
        return self.plan.index.nlm

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """The ``(n, l)`` of the columns of :meth:`invariants` (by ``n``, then ``l``)."""
        return list(_pair_layout(self.order)[0])

    def names(self, kind: str = "invariant") -> list[str]:
        """Column labels: ``"F[n,l]"`` for :meth:`invariants` (``kind="invariant"``) or
        ``"Om[n,l,m]"`` for :meth:`values` (``kind="moment"``).

        >>> import numpy as np
        >>> Zernike3DTransform = __import__("fastmoments").Zernike3DTransform
        >>> Zernike3DTransform((4, 4, 4), 2).forward(np.ones((4, 4, 4))).names()
        ['F[0,0]', 'F[1,1]', 'F[2,0]', 'F[2,2]']
        """
        check_choice("kind", kind, ("invariant", "moment"))
        if kind == "invariant":
            return [f"F[{n},{l}]" for n, l in self.pairs]
        return [f"Om[{n},{l},{m}]" for n, l, m in self.nlm.tolist()]

    def _orders_text(self) -> str:
        return f"order={self.order} ({self.plan.index.size} moments m >= 0)"

    def __getitem__(self, key: tuple[int, int, int]) -> Any:
        """The moment :math:`\\Omega_{nl}^m` for the whole batch (``m`` may be negative).

        Raises
        ------
        TypeError
            Not three integers.
        MomentIndexError
            Indices that name no moment (``n - l`` odd or negative, ``|m| > l``) or an order
            above the computed one.
        """
        n, l, m = index_key(key, ("n", "l", "m"), "moments Om")
        pos = self.plan.index.position(n, l, abs(m))
        if pos is None:
            raise MomentIndexError(
                f"Om[{n}, {l}, {m}] is not a computed 3-D Zernike moment: it needs "
                f"0 <= l <= n <= {self.order}, n - l even and |m| <= l")
        v = self._data[..., pos]
        if m < 0:
            v = v.conj() * (-1) ** (m % 2)
        v = v.resolve_conj()
        if not self.kind.numpy:
            return v
        out = v.detach().cpu().numpy()
        return out[()] if out.ndim == 0 else out

    def values(self) -> Any:
        """Stored moments ``(..., K)`` complex, ``m >= 0``, in the order of :attr:`nlm`."""
        return self._out(self._data)

    def invariants(self) -> Any:
        r"""The 3-D Zernike descriptor :math:`F_{nl} = \|\Omega_{nl}\| =
        (\sum_{m=-l}^{l} |\Omega_{nl}^m|^2)^{1/2}` (Novotni and Klein 2003, Eq. 14), as
        ``(..., len(pairs))`` real, columns in the order of :attr:`pairs`.

        Unchanged by rotations of the volume about the ball's centre (the moments of one
        :math:`(n, l)` mix by a unitary Wigner matrix), up to the resampling error.
        """
        pairs, of = _pair_layout(self.order)
        m = torch.as_tensor(self.nlm[:, 2], device=self._data.device)
        w = torch.where(m == 0, 1.0, 2.0).to(self._data.real.dtype)
        sq = self._data.real ** 2 + self._data.imag ** 2
        acc = torch.zeros(*self.batch_shape, len(pairs), dtype=sq.dtype, device=sq.device)
        acc = acc.index_add(-1, torch.as_tensor(of, device=sq.device), sq * w)
        return self._out(torch.sqrt(acc))

    # ------------------------------------------------------------------ reconstruction
    def _order_mask(self, orders: Any) -> np.ndarray:
        n = self.nlm[:, 0]
        if orders is None:
            return np.ones(n.shape, dtype=bool)
        if isinstance(orders, (int, np.integer)) and not isinstance(orders, bool):
            top = check_int("orders", orders, minimum=0, maximum=self.order)
            return n <= top
        if isinstance(orders, tuple) and len(orders) == 2 and all(
                isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in orders):
            lo = check_int("orders", orders[0], minimum=0)
            hi = check_int("orders", orders[1], minimum=0, maximum=self.order)
            if hi < lo:
                raise ValueError(f"orders=(lo, hi) needs lo <= hi, got {orders}")
            return (n >= lo) & (n <= hi)
        if isinstance(orders, (str, bytes)):
            raise TypeError(f"orders must be an int, (lo, hi) or an iterable of ints, got "
                            f"{orders!r}")
        try:
            wanted = {check_int("orders", v, minimum=0, maximum=self.order) for v in orders}
        except TypeError as exc:
            raise TypeError(f"orders must be an int, (lo, hi) or an iterable of ints, got "
                            f"{orders!r}") from exc
        if not wanted:
            raise ValueError("orders must name at least one order")
        return np.isin(n, sorted(wanted))

    def reconstruct(self, orders: Any = None, *, progress: bool | None = None) -> Any:
        r"""The volume rebuilt from (some of) the moments at the voxel centres:

        .. math:: \hat f(x_v) = \sum_{n \in \mathcal{S}} \sum_{l} \sum_{m=-l}^{l}
                  \Omega_{nl}^m Z_{nl}^m(x_v)
                  = \sum \mathrm{Re}\,[\gamma_m \Omega_{nl}^m Z_{nl}^m(x_v)],
                  \quad \gamma_0 = 1,\ \gamma_{m>0} = 2,

        zero at voxels whose centre lies outside the ball.

        Parameters
        ----------
        orders : int, (lo, hi) or iterable of int, optional
            ``T``: orders ``0..T``; ``(lo, hi)``: ``lo..hi``; an iterable lists orders.
            Default: every computed order.
        progress : bool, optional
            A tqdm bar over the chunks (``None``: only for large jobs).

        Returns
        -------
        array
            ``(..., D, H, W)`` real, in the caller's kind.

        Raises
        ------
        ValueError
            Orders above the computed one or an empty selection.
        TypeError
            Orders that are not integers.
        """
        progress = check_progress(progress)
        keep = self._order_mask(orders)
        if not keep.any():
            raise ValueError(f"orders={orders!r} selects no moment")
        m = self.nlm[:, 2]
        gamma = np.where(m == 0, 1.0, 2.0) * keep
        g = torch.as_tensor(gamma, device=self._data.device, dtype=self._data.real.dtype)
        coef = (self._data * g).reshape(-1, self._data.shape[-1])
        if self.plans is None:
            vol = self.plan.synthesize(coef, progress)
        else:
            vol = torch.cat([p.synthesize(coef[i:i + 1], progress)
                             for i, p in enumerate(self.plans)])
        return self._out(vol.reshape(*self.batch_shape, *self.plan.shape))
