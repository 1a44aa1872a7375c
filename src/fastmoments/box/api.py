r"""Jacobi, Legendre and Gegenbauer moments of images and volumes: the one-call functions.

:func:`jacobi_moments`, :func:`legendre_moments` and :func:`gegenbauer_moments` check their
arguments, then build (or reuse, :func:`fastmoments._cache.plan_cache`) the plan of
:mod:`.plan` for the input's trailing shape, order, options, dtype and device, and run its
forward: they take the plan's route (:mod:`.routes`). The conventions (axes, sets, the
float32 bound) are those of :mod:`.plan`.
"""

from __future__ import annotations

from typing import Any

import torch

from .._array import as_tensor, move_channels
from .._cache import plan_cache
from .._validate import check_channel_axis, check_choice, check_int
from ..parallel import device_key, is_multi
from .moments import BoxMoments
from .plan import (
    MAX_ALPHA_PLUS_BETA,
    TRUNCATIONS,
    JacobiTransform,
    _check_alpha_beta,
    _check_param,
)
from .quadrature import QUADRATURES

__all__ = [
    "TRUNCATIONS",
    "JacobiTransform",
    "gegenbauer_moments",
    "jacobi_moments",
    "legendre_moments",
]


@plan_cache(maxsize=8)
def _plan(shape: tuple[int, ...], order: int, alpha: float, beta: float, k: int,
          quadrature: str, truncation: str, normalization: str, dtype: torch.dtype,
          device: str) -> JacobiTransform:
    return JacobiTransform(shape, order, alpha=alpha, beta=beta, k=k, quadrature=quadrature,
                           truncation=truncation, normalization=normalization, dtype=dtype,
                           device=device)


def _resolve_ndim(ndim: Any, shape: tuple[int, ...], channels: bool = False) -> int:
    if ndim is None:
        if len(shape) == 2 or (channels and len(shape) == 3):
            return 2
        hint = ""
        if len(shape) == 3 and shape[-1] in (3, 4) and not channels:
            hint = (f"; if x is one colour image with {shape[-1]} channels last, pass "
                    "channel_axis=-1")
        raise ValueError("ndim must be given (2: x is images (..., H, W); 3: x is volumes "
                         f"(..., D, H, W)) when x has 3 or more dimensions, got shape {shape}"
                         f"{hint}")
    nd = check_int("ndim", ndim, minimum=2, maximum=3)
    if len(shape) < nd:
        raise ValueError(f"x must have at least {nd} dimensions for ndim={nd}, got shape {shape}")
    return nd


def _moments(x: Any, order: int, alpha: Any, beta: Any, ndim: Any, k: int, quadrature: str,
             truncation: str, normalization: str, device: Any,
             channel_axis: Any = None) -> BoxMoments:
    multi = is_multi(device)  # (a device list checks x here: its plans take checked input)
    t, kind = as_tensor(x, "x", min_ndim=2, device=None if multi else device,
                        check_finite=multi)
    nd = _resolve_ndim(ndim, tuple(t.shape), channels=channel_axis is not None)
    axis = check_channel_axis(channel_axis, t.ndim, nd, "x")
    t, move = move_channels(t, axis, nd)
    if min(t.shape[-nd:]) < 1:
        raise ValueError(f"x must have non-empty spatial axes (the last {nd}), got shape "
                         f"{tuple(t.shape)}")
    order = check_int("order", order, minimum=0)
    alpha = _check_param("alpha", alpha, greater=-1.0)
    beta = _check_param("beta", beta, greater=-1.0)
    _check_alpha_beta(alpha, beta)
    k = check_int("k", k, minimum=1)
    check_choice("quadrature", quadrature, QUADRATURES)
    check_choice("truncation", truncation, TRUNCATIONS)
    plan = _plan(tuple(t.shape[-nd:]), order, alpha, beta, k, quadrature, truncation,
                 normalization, t.dtype, device_key(device, t.device))
    # one pass checks x for NaN and infinity and finds the halves' scale (plan.forward's)
    out = plan._forward_tensor(t, kind) if multi else plan._forward_tensor(t, kind, source=x)
    out.channels = move
    return out


def jacobi_moments(x: Any, order: int, *, alpha: float, beta: float, ndim: int | None = None,
                   k: int = 1, quadrature: str = "midpoint", truncation: str = "total",
                   device: Any = None, channel_axis: int | None = None) -> BoxMoments:
    r"""Jacobi moments :math:`J_{m,n}` / :math:`J_{m,n,o}` of images or volumes (Eq. 21/24, 31-44).

    Parameters
    ----------
    x : array_like or torch.Tensor
        Images ``(..., H, W)`` or volumes ``(..., D, H, W)``; never modified. float32 stays
        float32, float64 stays float64, integers are computed in float32.
    order : int
        Maximum order.
    alpha, beta : float
        Jacobi parameters, > -1.
    ndim : {2, 3}, optional
        2 if ``x`` holds images, 3 if it holds volumes. Required when ``x`` has 3 or more
        dimensions (a 3-D array could be a batch of images or one volume); a 2-D ``x`` is an
        image.
    k : int
        Integration points per pixel and axis.
    quadrature : {'midpoint', 'gauss'}
        Per-pixel rule (``'midpoint'`` is the thesis's k x k sub-regions).
    truncation : {'total', 'box'}
        Keep indices with sum <= order (thesis) or each index <= order.
    device : str or torch.device, optional
        Where to compute (default: where ``x`` is).
    channel_axis : int, optional
        The axis of ``x`` holding colour channels (scikit-image's convention), e.g. ``-1``
        for an ``(H, W, 3)`` image (``ndim`` then defaults to 2). Each channel is transformed
        as an item of the batch: the channels become the last batch axis of the moments
        (``J.batch_shape == (3,)``, ``J[p, q]`` has one value per channel), and
        ``J.reconstruct()`` puts them back where they were (``(H, W, 3)``). The same holds
        for :func:`legendre_moments` and :func:`gegenbauer_moments`.

    Returns
    -------
    BoxMoments
        Indexed ``J[p, q]`` (p along H, q along W) or ``J[p, q, r]`` (along D, H, W);
        ``J.reconstruct()`` rebuilds the input. See :mod:`fastmoments.box.plan` for the
        conventions and the float32 error bound.

    Raises
    ------
    ValueError
        For alpha or beta <= -1 or ``alpha + beta > 1000``, a missing or wrong ``ndim``, NaN
        or infinity in ``x``, an empty spatial axis, an unknown ``quadrature`` or
        ``truncation``, a negative ``order``.
    TypeError
        For ``order``, ``k`` or ``ndim`` that are not integers (bools and floats included),
        and ``alpha``/``beta`` that are not real numbers (bools and strings included); all
        checked before the plan cache is consulted.
    MemoryError
        If the tables or one batch element do not fit the memory budget (from
        ``FASTMOMENTS_MEMORY_BUDGET`` or the free memory), before anything is allocated.

    Examples
    --------
    >>> import numpy as np
    >>> img = np.outer(np.ones(64), np.linspace(0, 1, 64))
    >>> J = jacobi_moments(img, 8, alpha=0.3, beta=0.3, k=3)
    >>> float(J[0, 0].round(3)), float(J[1, 0].round(12))   # mean along W; nothing along H
    (0.5, 0.0)
    >>> rec = J.reconstruct()
    >>> bool(np.abs(rec - img).mean() < 2e-3)    # the error shrinks as k grows
    True
    """
    return _moments(x, order, alpha, beta, ndim, k, quadrature, truncation, "jacobi", device,
                    channel_axis)


def legendre_moments(x: Any, order: int, *, ndim: int | None = None, k: int = 1,
                     quadrature: str = "midpoint", truncation: str = "total",
                     device: Any = None, channel_axis: int | None = None) -> BoxMoments:
    r"""Legendre moments: :func:`jacobi_moments` with :math:`\alpha=\beta=0` (Eq. 19).

    Examples
    --------
    >>> import numpy as np
    >>> vol = np.ones((2, 8, 8, 8))                 # two volumes: ndim=3 says so
    >>> L = legendre_moments(vol, 4, ndim=3)
    >>> L[0, 0, 0]
    array([1., 1.])
    """
    return _moments(x, order, 0.0, 0.0, ndim, k, quadrature, truncation, "jacobi", device,
                    channel_axis)


def gegenbauer_moments(x: Any, order: int, *, lam: float, ndim: int | None = None, k: int = 1,
                       quadrature: str = "midpoint", truncation: str = "total",
                       device: Any = None, channel_axis: int | None = None) -> BoxMoments:
    r"""Gegenbauer moments with :math:`G_n^{(\lambda)}` and weight :math:`(1-x^2)^{\lambda-1/2}`.

    Computed as Jacobi moments with :math:`\alpha=\beta=\lambda-1/2`, rescaled to the
    Gegenbauer polynomials (Eq. 20): :math:`J^G_{m,n} = J_{m,n}/(c_m c_n)`. ``lam`` must be
    > -1/2 and != 0.

    Examples
    --------
    >>> import numpy as np
    >>> one = np.ones((16, 16))                  # G_00 of a constant image is that constant
    >>> round(float(gegenbauer_moments(one, 4, lam=1.0)[0, 0]), 4)          # 1 point per pixel
    1.0096
    >>> round(float(gegenbauer_moments(one, 4, lam=1.0, k=16, quadrature="gauss")[0, 0]), 4)
    1.0
    """
    lam = _check_param("lam", lam, greater=-0.5)
    if lam == 0.0:
        raise ValueError("lam must be != 0 (G^(0) is degenerate); use jacobi_moments with "
                         "alpha = beta = -0.5 for Chebyshev moments")
    if 2 * lam - 1 > MAX_ALPHA_PLUS_BETA:
        raise ValueError(f"lam must be <= {(MAX_ALPHA_PLUS_BETA + 1) / 2:g} (alpha = beta = "
                         f"lam - 1/2 with alpha + beta <= {MAX_ALPHA_PLUS_BETA:g}; beyond it the "
                         f"float64 tables overflow), got lam={lam}")
    return _moments(x, order, lam - 0.5, lam - 0.5, ndim, k, quadrature, truncation,
                    "gegenbauer", device, channel_axis)
