r"""Families of transforms on the unit disk: each adds a radial function and a normalization.

A family tells the disk engine

* which ``(n, m)`` exist and how a negative repetition maps onto a stored one
  (:meth:`DiskFamily.stored`),
* the normalization :math:`c_{nm}` of :math:`A_{nm} = c_{nm} \sum_p w_p f_p R^*_{nm}(r_p)
  e^{-im\theta_p}`,
* the radial values :math:`R_{nm}(r)` at the radii of a sampling, as steps
  (:mod:`fastmoments.disk.radial`).

The kernel of every family is :math:`V_{nm}(r, \theta) = R_{nm}(r) e^{im\theta}`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import torch

from .._validate import check_choice, check_int, check_int_pairs
from .indexing import IndexSet
from .radial import PSEUDO_METHODS, ZERNIKE_METHODS, radial_steps

__all__ = ["FAMILIES", "DiskFamily", "PseudoZernikeFamily", "ZernikeFamily", "get_family"]


def check_family_pairs(family: Any, name: str, pairs: Any,
                       labels: tuple[str, str] = ("n", "m")) -> tuple[tuple[int, int], ...]:
    """A user's selection of moments of ``family``: a non-empty sequence of integer pairs
    (:func:`~fastmoments._validate.check_int_pairs`), each one a moment of the family
    (``family.check_pair``); errors name ``name``.

    >>> check_family_pairs(get_family("zernike"), "pairs", [(2, 0), (3, -1)])
    ((2, 0), (3, -1))
    >>> check_family_pairs(get_family("zernike"), "pairs", [(2, 1)])
    Traceback (most recent call last):
    ...
    ValueError: pairs: (2, 1) is not a valid zernike index: need n >= 0, |m| <= n and n - |m| even
    """
    prs = check_int_pairs(name, pairs, allow_empty=True, labels=labels)
    if not prs:
        raise ValueError(f"{name} must name at least one ({labels[0]}, {labels[1]})")
    for n, m in prs:
        try:
            family.check_pair(n, m)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    return prs


class DiskFamily:
    """Base class of the families of disk transforms."""

    name: str = ""
    methods: tuple[str, ...] = ()
    default_method: str = ""
    selection_method: str = ""
    #: True when R_nm is complex (the polar complex exponential transform)
    complex_radial: bool = False

    # -------------------------------------------------------------- index rules
    def is_valid(self, n: int, m: int) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def stored(self, n: int, m: int) -> tuple[int, int, bool]:
        """Map any valid ``(n, m)`` to the stored ``(n', m' >= 0)`` and whether to conjugate
        (for a real image)."""
        if m >= 0:
            return n, m, False
        return n, -m, True

    def check_pair(self, n: object, m: object) -> tuple[int, int]:
        n = check_int("n", n, minimum=None)
        m = check_int("m", m, minimum=None)
        if not self.is_valid(n, m):
            raise ValueError(f"({n}, {m}) is not a valid {self.name} index: {self.rule_text}")
        return n, m

    rule_text: str = ""

    @property
    def key(self) -> tuple[Any, ...]:
        """What identifies the family's basis (equal keys: the same coefficients)."""
        return (self.name,)

    def full(self, order: int, repetitions: Sequence[int] | None = None) -> IndexSet:
        """Every stored moment up to ``order`` (optionally only some repetitions)."""
        raise NotImplementedError  # pragma: no cover

    def selection(self, pairs: Sequence[tuple[int, int]]) -> IndexSet:
        """The stored moments needed for the given ``(n, m)`` (m may be negative)."""
        cols: dict[int, list[int]] = {}
        for n, m in pairs:
            n, m = self.check_pair(n, m)
            sn, sm, _ = self.stored(n, m)
            cols.setdefault(sm, []).append(sn)
        return IndexSet.from_columns(cols)

    # -------------------------------------------------------------- numbers
    def norm(self, index: IndexSet) -> np.ndarray:
        """``(n_cols, n_rows)`` float64 normalization (0 in padding)."""
        raise NotImplementedError  # pragma: no cover

    def check_method(self, method: str | None, selection: bool = False,
                     device: torch.device | None = None) -> str:
        """The radial method: the user's choice, checked, or the default for the job.

        Full sets default to :attr:`default_method` (the thesis's recurrence) on the CPU and
        to :attr:`selection_method` (the Jacobi recurrence, run by the fused Triton kernels)
        on a GPU where Triton is available.
        """
        if method is None:
            if selection:
                return self.selection_method
            if device is not None and self.selection_method:
                from . import triton_radial

                if device.type == "cuda" and triton_radial.available(device):
                    return self.selection_method
            return self.default_method
        return check_choice("method", method, self.methods)

    def radial_steps(self, method: str, r: torch.Tensor, index: IndexSet) -> Iterator:
        raise NotImplementedError  # pragma: no cover


class _ZernikeLike(DiskFamily):
    def norm(self, index: IndexSet) -> np.ndarray:
        n = index.order_table().astype(np.float64)
        return np.where(n >= 0, (n + 1.0) / math.pi, 0.0)

    def radial_steps(self, method: str, r: torch.Tensor, index: IndexSet) -> Iterator:
        return radial_steps(self.name, method, r, index.ms, index.ns)


class ZernikeFamily(_ZernikeLike):
    r"""Zernike moments: :math:`n \ge 0`, :math:`|m| \le n`, :math:`n - |m|` even,
    :math:`c_{nm} = (n+1)/\pi` (equations 2.5-2.10 of the
    :ref:`Zernike thesis <bib-zernike-thesis>`)."""

    name = "zernike"
    methods = ZERNIKE_METHODS
    default_method = "deng"
    selection_method = "jacobi"
    rule_text = "need n >= 0, |m| <= n and n - |m| even"

    def is_valid(self, n: int, m: int) -> bool:
        return n >= 0 and abs(m) <= n and (n - abs(m)) % 2 == 0

    def full(self, order: int, repetitions: Sequence[int] | None = None) -> IndexSet:
        ms = range(order + 1) if repetitions is None else sorted({abs(int(m)) for m in repetitions})
        cols = {m: range(m, order + 1, 2) for m in ms if m <= order}
        return IndexSet.from_columns(cols)


class PseudoZernikeFamily(_ZernikeLike):
    r"""Pseudo-Zernike moments: :math:`n \ge 0`, :math:`|m| \le n`, :math:`c_{nm} = (n+1)/\pi`
    (equations 2.13-2.16 of the :ref:`Zernike thesis <bib-zernike-thesis>`)."""

    name = "pseudo-zernike"
    methods = PSEUDO_METHODS
    default_method = "deng"
    selection_method = "jacobi"
    rule_text = "need n >= 0 and |m| <= n"

    def is_valid(self, n: int, m: int) -> bool:
        return n >= 0 and abs(m) <= n

    def full(self, order: int, repetitions: Sequence[int] | None = None) -> IndexSet:
        ms = range(order + 1) if repetitions is None else sorted({abs(int(m)) for m in repetitions})
        cols = {m: range(m, order + 1) for m in ms if m <= order}
        return IndexSet.from_columns(cols)


FAMILIES: dict[str, DiskFamily] = {
    "zernike": ZernikeFamily(),
    "pseudo-zernike": PseudoZernikeFamily(),
}


def get_family(name: str) -> DiskFamily:
    """The family registered under ``name``."""
    check_choice("family", name, tuple(FAMILIES))
    return FAMILIES[name]
