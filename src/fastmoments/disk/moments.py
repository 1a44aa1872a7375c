"""Moments on the unit disk: ``A[n, m]`` for any valid index, reconstruction, invariants."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from .._array import ChannelMove, restore_channels
from .._cache import plan_cache
from .._validate import check_choice, check_int, check_int_list
from ..moments import KINDS, MomentIndexError, Moments, column_labels, index_key
from .indexing import REPETITION_SETS

if TYPE_CHECKING:  # pragma: no cover
    from .transform import DiskTransform

__all__ = ["DiskMoments"]


class DiskMoments(Moments):
    r"""Moments of a batch of images on the unit disk.

    ``A[n, m]`` gives the moment of order ``n`` and repetition ``m`` (negative ``m``
    included, through the family's symmetry for real images, e.g.
    :math:`A_{n,-m} = \overline{A_{n,m}}` for Zernike), as a complex scalar for one image or an
    array over the batch. The key is exactly two integers: negative ``n`` never wraps around,
    an extra index is a ``TypeError`` (never taken for the batch: index the result,
    ``A[n, m][i]``), and a moment the family does not have or the plan did not compute is a
    :class:`~fastmoments.moments.MomentIndexError` (an ``IndexError``, also a ``KeyError``)
    naming ``n`` and ``m``.

    **Column order.** :attr:`pairs`, :meth:`values`, :meth:`invariants`, :meth:`names`,
    ``np.asarray(A)`` and :attr:`shape` list the stored moments by order ``n``, then
    repetition ``m`` (``sorted((n, m))``): the column order of
    :func:`fastmoments.features` and of the scikit-learn transformers, so the columns of
    all of them match by name (``"|A[4,2]|"``).

    **As an array.** ``np.asarray(A)`` is :meth:`values` as NumPy: ``batch_shape + (K,)``
    complex, one column per stored moment in the order of :attr:`pairs` (the dense
    ``(columns, rows)`` storage of the plan is :attr:`data`); :attr:`shape` is its shape.

    Attributes
    ----------
    plan : DiskTransform
        The plan that computed the moments.
    pairs : list of (n, m)
        The stored moments (``m >= 0``), ordered by ``n`` then ``m``: the order of
        :meth:`values`, :meth:`invariants` and :meth:`names`.

    Examples
    --------
    >>> import numpy as np
    >>> from fastmoments import zernike_moments
    >>> A = zernike_moments(np.ones((3, 16, 16)), 2)
    >>> A.pairs, A.shape, np.asarray(A).shape
    ([(0, 0), (1, 1), (2, 0), (2, 2)], (3, 4), (3, 4))
    >>> A.names()
    ['|A[0,0]|', '|A[1,1]|', '|A[2,0]|', '|A[2,2]|']
    >>> A  # doctest: +ELLIPSIS
    <DiskMoments zernike order=2 (4 moments) batch_shape=(3,) shape=(3, 4) dtype=...>
    """

    def __init__(self, data: torch.Tensor, plan: DiskTransform, kind: Any) -> None:
        shape = (plan.index.n_cols, plan.index.n_rows)
        if data.ndim < 2 or tuple(data.shape[-2:]) != shape:
            raise ValueError(f"data must have shape (..., {shape[0]}, {shape[1]}) for the "
                             f"moments of this plan, got {tuple(data.shape)}")
        super().__init__(data, plan, kind, ncoef_dims=2)
        self.family = plan.family.name
        #: Where the colour channels were in the input (``channel_axis``), or None.
        self.channels: ChannelMove | None = None
        #: With ``center="centroid"``: each image's centre of mass ``batch_shape + (2,)``
        #: (else None: every image has the plan's centre).
        self.centers: np.ndarray | None = None
        #: With ``center="centroid"``: the plan of each group of images of equal centre and
        #: the flat batch indices of its images (else None: one plan, :attr:`plan`).
        self.placed: list[tuple[Any, np.ndarray]] | None = None

    # ------------------------------------------------------------------ placement
    @property
    def center(self) -> Any:
        """Centre ``(row, col)`` of the disk in pixels (pixel centres at integers): a tuple,
        or with ``center="centroid"`` each image's centre, ``batch_shape + (2,)``."""
        if self.centers is not None:
            return self.centers
        return self.plan.center

    @property
    def radius(self) -> Any:
        """Radius of the disk in pixels: a float, or with ``center="centroid"`` and no
        ``radius`` each image's, ``batch_shape``."""
        if self.placed is None or len({p.radius for p, _i in self.placed}) == 1:
            return self.plan.radius
        out = np.empty(int(np.prod(self.batch_shape)))
        for plan, idx in self.placed:
            out[idx] = plan.radius
        return out.reshape(self.batch_shape)

    def _synthesize(self, coef: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
        """``plan.synthesize`` of flat ``(B, cols, rows)`` coefficients, each image on its
        own disk when the images have different centres."""
        if self.placed is None or len(self.placed) == 1:
            return self.plan.synthesize(coef, gamma)
        h, w = self.plan.shape
        out = None
        for plan, idx in self.placed:
            sel = torch.as_tensor(idx, device=coef.device)
            part = plan.synthesize(coef[sel], gamma)
            if out is None:
                out = torch.zeros(coef.shape[0], h * w, dtype=part.dtype, device=part.device)
            out[sel.to(part.device)] = part
        assert out is not None
        return out

    # ------------------------------------------------------------------ access
    @property
    def order(self) -> int:
        return self.plan.order

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """The stored moments ``(n, m)``, ``m >= 0``, ordered by ``n`` then ``m``."""
        return list(_nm_order(self.plan.index)[0])

    def names(self, kind: str = "magnitude") -> list[str]:
        """Column labels of :meth:`invariants` (``kind="magnitude"``: ``"|A[n,m]|"``), of
        :meth:`values` (``kind="value"``: ``"A[n,m]"``), or of the feature matrix of
        :func:`fastmoments.features` with that ``kind`` (``"real"``: ``"Re A[n,m]"``,
        ``"complex"``: ``"Re A[n,m]"``, ``"Im A[n,m]"`` per moment): the same labels as
        :attr:`fastmoments.FeatureSet.names` and ``get_feature_names_out`` of
        :mod:`fastmoments.sklearn`.

        >>> import numpy as np
        >>> from fastmoments import zernike_moments
        >>> zernike_moments(np.ones((8, 8)), 1).names("complex")
        ['Re A[0,0]', 'Im A[0,0]', 'Re A[1,1]', 'Im A[1,1]']
        """
        kind = check_choice("kind", kind, (*KINDS, "value"))
        if kind == "value":
            return [f"A[{n},{m}]" for n, m in self.pairs]
        return column_labels(self.pairs, kind)

    def _array_tensor(self) -> torch.Tensor:
        return self._flat()

    @property
    def shape(self) -> tuple[int, ...]:
        """``batch_shape + (K,)``: the shape of ``np.asarray(A)`` and :meth:`values`."""
        return (*self.batch_shape, self.plan.index.size)

    def _orders_text(self) -> str:
        return f"order={self.order} ({self.plan.index.size} moments)"

    def __getitem__(self, key: tuple[int, int]) -> Any:
        """The moment ``A[n, m]`` for the whole batch.

        Exactly two integer indices (see :func:`fastmoments.moments.index_key`): a scalar for
        one image, an array shaped like the batch otherwise (index it to pick images).
        Negative ``n`` never wraps around (it is a valid order only in families that have
        negative orders, such as PCET).

        Raises
        ------
        TypeError
            Not two integers (an extra index is never taken for the batch).
        MomentIndexError
            An ``(n, m)`` that is not a moment of the family, or one this plan did not
            compute (an :class:`IndexError`, also a :class:`KeyError`).
        """
        n, m = index_key(key, ("n", "m"), "moments A")
        fam = self.plan.family
        if not fam.is_valid(n, m):
            raise MomentIndexError(f"A[{n}, {m}] is not a {fam.name} moment (index n={n}, "
                                   f"m={m}): {fam.rule_text}")
        sn, sm, conj = fam.stored(n, m)
        pos = self.plan.index.position(sn, sm)
        if pos is None:
            raise MomentIndexError(
                f"moment A[{n}, {m}] was not computed by this plan (order {self.order}, "
                f"{self.plan.index.size} moments): index n={n}, m={m} is out of range")
        v = self._data[..., pos[0], pos[1]]
        if conj:
            v = v.conj()
        if not self.kind.numpy:
            return v.resolve_conj()
        out = v.resolve_conj().detach().cpu().numpy()
        return out[()] if out.ndim == 0 else out

    def _flat(self) -> torch.Tensor:
        _pairs, cols, rows = _nm_order(self.plan.index)
        dev = self._data.device
        return self._data[..., torch.as_tensor(cols, device=dev),
                          torch.as_tensor(rows, device=dev)]

    def values(self) -> Any:
        """Stored moments as ``(..., K)`` complex, in the order of :attr:`pairs` (``n``,
        then ``m``)."""
        return self._out(self._flat())

    def invariants(self) -> Any:
        r"""Rotation invariants :math:`|A_{nm}|` as ``(..., K)`` real, in the order of
        :attr:`pairs` (``n``, then ``m``; rotation by :math:`\alpha` multiplies
        :math:`A_{nm}` by :math:`e^{-im\alpha}`, equations 2.8-2.9 of the
        :ref:`Zernike thesis <bib-zernike-thesis>`). The columns are
        named by :meth:`names` and equal ``features(..., kind="magnitude")`` of the same
        orders."""
        return self._out(self._flat().abs())

    def dense(self) -> Any:
        """All moments in a dense ``(..., n_max - n_min + 1, 2 M + 1)`` array indexed
        ``[n - n_min, m + M]`` (negative ``m`` filled in, zeros where no moment exists)."""
        pairs = self.pairs
        nmin = min(min(n, self.plan.family.stored(n, -m)[0]) for n, m in pairs)
        nmax = max(max(n, self.plan.family.stored(n, -m)[0]) for n, m in pairs)
        M = max(m for _n, m in pairs)
        flat = self._flat()
        out = torch.zeros(*self.batch_shape, nmax - nmin + 1, 2 * M + 1, dtype=flat.dtype,
                          device=flat.device)
        fam = self.plan.family
        rows, cols, src, conj = [], [], [], []
        for i, (n, m) in enumerate(pairs):
            rows.append(n - nmin)
            cols.append(m + M)
            src.append(i)
            conj.append(False)
            if m > 0:
                # the stored partner of (n', -m) is (n, m); every family maps n' to n or -n
                for n2 in {n, -n}:
                    if fam.is_valid(n2, -m) and fam.stored(n2, -m)[:2] == (n, m):
                        rows.append(n2 - nmin)
                        cols.append(M - m)
                        src.append(i)
                        conj.append(True)
        dev = flat.device
        vals = flat[..., torch.as_tensor(src, device=dev)]
        vals = torch.where(torch.as_tensor(conj, device=dev), vals.conj(), vals)
        out[..., torch.as_tensor(rows, device=dev), torch.as_tensor(cols, device=dev)] = vals
        return self._out(out)

    # ------------------------------------------------------------------ reconstruction
    def reconstruct(self, orders: Any = None, repetitions: str | Iterable[int] | None = "all"
                    ) -> Any:
        r"""Reconstruct the image at the pixel centres from (some of) the moments.

        .. math:: \hat f(x_i, y_j) = \sum_{(n, m) \in \mathcal{S}} A_{nm} V_{nm}(x_i, y_j)

        (thesis Eq. 2.12); pixels outside the transform's mask are 0.

        Parameters
        ----------
        orders : int, (lo, hi), range or iterable of int, optional
            Orders to use: ``T`` means ``0..T``; ``(lo, hi)`` means ``lo..hi`` inclusive
            (thesis Fig. 5.6 / 5.12); an iterable lists orders. Default (``None``): all
            computed orders.
        repetitions : str, iterable of int or None
            ``"all"`` (or ``None``, the same), ``"positive"`` (:math:`m > 0`), ``"negative"``
            (:math:`m < 0`), ``"zero"``, ``"nonnegative"``, ``"nonpositive"`` (thesis
            Fig. 5.7 / 5.13), or an explicit list of repetitions. Sets that are not closed
            under :math:`m \to -m` give a complex field; its real part is returned (for a
            real image the sets ``m > 0`` and ``m < 0`` give the same real part, as the
            thesis observes).

        Returns
        -------
        array
            ``(..., H, W)`` real, in the caller's kind and dtype; for the moments of a colour
            image (``channel_axis``), the input's layout, channels where they were.

        Raises
        ------
        ValueError
            When ``orders`` or ``repetitions`` ask for moments that were not computed (an
            order above the highest computed one, a listed order or repetition with no
            computed moment), or when together they select no moment at all: a
            reconstruction from nothing would be an all-zero image.
        TypeError
            Orders or repetitions that are not integers.
        """
        plan = self.plan
        idx = plan.index
        keep_n = self._order_filter(orders)
        gamma, col_keep = self._repetition_weights(repetitions)
        n_table = torch.as_tensor(idx.order_table(), device=self._data.device)
        valid = torch.as_tensor(idx.valid_mask(), device=self._data.device)
        mask = valid & col_keep[:, None]  # orders may be negative (PCET): use the slot mask
        if keep_n is not None:
            mask &= torch.isin(n_table, torch.as_tensor(sorted(keep_n), dtype=n_table.dtype,
                                                         device=n_table.device))
        if not bool(mask.any()):
            raise ValueError(f"orders={orders!r} and repetitions={repetitions!r} select none "
                             f"of the computed moments (order {self.order}, repetitions "
                             f"{_span(idx.ms)}): the reconstruction would be all zeros")
        coef = self._data * mask.to(self._data.real.dtype)
        coef = coef.reshape(-1, idx.n_cols, idx.n_rows)
        img = self._synthesize(coef, gamma)
        img = img.reshape(*self.batch_shape, *plan.shape)
        # moments of a colour image (channel_axis): the channels go back where they were
        return self._out(restore_channels(img, self.channels))

    def _computed_orders(self) -> list[int]:
        return sorted({n for col in self.plan.index.ns for n in col})

    def _order_filter(self, orders: Any) -> set[int] | None:
        if orders is None:
            return None
        computed = self._computed_orders()
        lo_c, hi_c = computed[0], computed[-1]
        if isinstance(orders, (int, np.integer)) and not isinstance(orders, bool):
            top = check_int("orders", orders, minimum=0)
            if top > hi_c:
                raise ValueError(f"orders={top} asks for orders up to {top}, but these "
                                 f"moments were computed up to order {hi_c}")
            return set(range(top + 1))
        if isinstance(orders, tuple) and len(orders) == 2 and all(
                isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in orders):
            lo = check_int("orders", orders[0], minimum=None)
            hi = check_int("orders", orders[1], minimum=None)
            if hi < lo:
                raise ValueError(f"orders=(lo, hi) needs lo <= hi, got {orders}")
            if lo < lo_c or hi > hi_c:
                raise ValueError(f"orders={orders} asks for orders outside the computed "
                                 f"ones ({lo_c}..{hi_c})")
            return set(range(lo, hi + 1))
        if isinstance(orders, (str, bytes)):
            raise TypeError(f"orders must be an int, (lo, hi) or an iterable of ints, "
                            f"got {orders!r}")
        try:
            wanted = {check_int("orders", v, minimum=None) for v in orders}
        except TypeError as exc:
            raise TypeError(f"orders must be an int, (lo, hi) or an iterable of ints, "
                            f"got {orders!r}") from exc
        missing = sorted(wanted - set(computed))
        if missing:
            raise ValueError(f"orders lists {missing}, which were not computed (computed "
                             f"orders: {_span(computed)})")
        return wanted

    def _repetition_weights(self, repetitions: Any) -> tuple[torch.Tensor, torch.Tensor]:
        ms = torch.as_tensor(self.plan.index.ms, device=self._data.device)
        zero = ms == 0
        one = torch.ones(len(ms), device=ms.device)
        if repetitions is None:
            repetitions = "all"
        if isinstance(repetitions, str):
            check_choice("repetitions", repetitions, REPETITION_SETS)
            if repetitions == "all":
                gamma = torch.where(zero, one, 2 * one)
            elif repetitions in ("positive", "negative"):
                gamma = torch.where(zero, 0 * one, one)
            elif repetitions == "zero":
                gamma = torch.where(zero, one, 0 * one)
            else:  # nonnegative, nonpositive
                gamma = one
            return gamma, gamma != 0
        try:
            wanted = set(check_int_list("repetitions", repetitions, minimum=None, allow_empty=True))
        except TypeError as exc:
            raise TypeError(f"repetitions must be one of {REPETITION_SETS}, None or an "
                            f"iterable of ints: {exc}") from exc
        stored = set(self.plan.index.ms)
        missing = sorted(m for m in wanted if abs(m) not in stored)
        if missing:
            raise ValueError(f"repetitions lists {missing}, which were not computed "
                             f"(computed |m|: {_span(sorted(stored))})")
        # the stored column m carries +m and (through the partner rule) -m
        gamma = torch.tensor([(1.0 if int(m) in wanted else 0.0)
                              + (1.0 if (int(m) != 0 and -int(m) in wanted) else 0.0)
                              for m in ms.tolist()], device=ms.device)
        return gamma, gamma != 0


@plan_cache(maxsize=32)
def _nm_order(index: Any) -> tuple[tuple[tuple[int, int], ...], np.ndarray, np.ndarray]:
    """The stored moments of ``index`` sorted by ``(n, m)``, with their ``(column, row)``
    slots in the dense layout."""
    pairs = tuple(sorted(index.pairs()))
    pos = np.array([index.position(n, m) for n, m in pairs], dtype=np.int64).reshape(-1, 2)
    return pairs, pos[:, 0], pos[:, 1]


def _span(values: Iterable[int]) -> str:
    """``0..10`` for a run of consecutive integers, else the list (shortened)."""
    v = sorted(values)
    if v and v == list(range(v[0], v[-1] + 1)):
        return f"{v[0]}..{v[-1]}"
    return str(v if len(v) <= 8 else [*v[:4], "...", *v[-2:]])
