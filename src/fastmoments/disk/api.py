"""One-call functions for the Zernike and pseudo-Zernike moments (they reuse cached plans)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from .._array import input_shape, numeric_array, policy_dtype, real_dtype
from .._memory import check_memory_budget, format_bytes
from .._memory import memory_budget as _memory_budget
from .._progress import check_progress
from .._validate import check_choice, check_int, check_int_list
from ..parallel import first_device, resolve_devices
from .families import check_family_pairs, get_family
from .moments import DiskMoments
from .placement import check_center, check_radius
from .sampling import QUADRATURES, RULES
from .transform import (
    cached_transform,
    channels_first,
    disk_geometry,
    estimate_disk_memory,
    placed_forward,
    transform_for,
)

__all__ = ["order_pairs", "pseudo_zernike_moments", "zernike_moments"]


def order_pairs(family: str, n: int) -> list[tuple[int, int]]:
    """All stored ``(n, m)`` (``m >= 0``) of one order: the selection of the single-order
    experiments of the :ref:`re-layout paper <bib-relayout-paper>`.

    >>> order_pairs("zernike", 4)
    [(4, 0), (4, 2), (4, 4)]
    """
    fam = get_family(family)
    n = check_int("n", n, minimum=0)
    need, budget = (n + 1) * _PAIR_BYTES, _memory_budget(torch.device("cpu"), None)
    if need > budget:
        raise MemoryError(f"order_pairs of order n={n} needs at least {format_bytes(need)} for "
                          f"its list but the memory budget is {format_bytes(budget)}")
    return [(n, m) for m in range(n + 1) if fam.is_valid(n, m)]


#: Host memory of one ``(n, m)`` tuple in a list (tuple, two ints, list slot), rounded up.
_PAIR_BYTES = 128


def _moments(family: str, image: Any, order: int | None, *, k: int, quadrature: str,
             rule: str, method: str | None, repetitions: Sequence[int] | None,
             pairs: Sequence[tuple[int, int]] | None, device: Any, dtype: Any,
             memory_budget: float | None, progress: bool | None = None,
             channel_axis: Any = None, center: Any = None, radius: Any = None) -> DiskMoments:
    # every argument is checked and made a plain value of its exact type before the plan
    # cache sees it (the plan cache takes True, 1 and 1.0 for one key)
    fam = get_family(family)
    image, move = channels_first(image, channel_axis)
    if order is not None and pairs is not None:
        raise ValueError("give exactly one of order and pairs, not both")
    if order is None and pairs is None:
        raise ValueError("give exactly one of order (every moment up to it) and pairs (a "
                         "selection)")
    if order is not None:
        order = check_int("order", order, minimum=0)
    if pairs is not None:
        pairs = check_family_pairs(fam, "pairs", pairs)
        if repetitions is not None:
            raise ValueError("give repetitions only with order, not with pairs")
    k = check_int("k", k, minimum=1)
    quadrature = check_choice("quadrature", quadrature, QUADRATURES)
    rule = check_choice("rule", rule, RULES)
    if method is not None:
        method = check_choice("method", method, fam.methods)
    if repetitions is not None:
        repetitions = check_int_list("repetitions", repetitions, minimum=None, allow_empty=True)
        if not repetitions:
            raise ValueError("repetitions must name at least one repetition (or be None for "
                             "all of them)")
        assert order is not None
        bad = [m for m in repetitions if abs(m) > order]
        if bad:
            raise ValueError(f"repetitions must satisfy |m| <= order={order}, got {bad}")
    memory_budget = check_memory_budget(memory_budget)
    progress = check_progress(progress)
    center, radius = check_center(center), check_radius(radius)
    work = None if dtype is None else real_dtype(dtype)
    if isinstance(image, torch.Tensor):
        in_dtype, in_dev = image.dtype, image.device
    else:
        arr = numeric_array(image, "image")
        in_dtype, in_dev = arr.dtype, torch.device("cpu")
    dt = work if work is not None else policy_dtype(in_dtype, name="image")
    dev = resolve_devices(device, in_dev)
    shape = input_shape(image, "image")
    size, placement = disk_geometry(shape, None if center == "centroid" else center,
                                    1.0 if center == "centroid" and radius is None else radius,
                                    rule)
    estimate_disk_memory(fam, size if placement is None else placement.shape,
                         order if pairs is None else None, pairs=pairs,
                         repetitions=repetitions, k=k, dtype=dt, device=first_device(dev),
                         memory_budget=memory_budget)
    options = {"k": k, "quadrature": quadrature, "rule": rule, "method": method,
               "repetitions": repetitions, "pairs": pairs, "dtype": dt,
               "memory_budget": memory_budget}

    def plan_for(size: int, placement: Any, cached: bool) -> Any:
        if cached:
            return cached_transform(fam.name, size, order or 0, device=dev,
                                    placement=placement, **options)
        return transform_for(fam.name, size, order or 0, device=dev, placement=placement,
                             **options)

    out = placed_forward(image, center=center, radius=radius, rule=rule, plan_for=plan_for,
                         progress=progress)
    out.channels = move
    return out


_DOC = r"""{title} of an image or a batch of images.

    Parameters
    ----------
    image : array_like or torch.Tensor
        ``(..., N, N)`` real images (NumPy or torch; float32, float64 or integers), or
        ``(..., H, W)`` of any shape with ``center`` or ``radius`` (a non-square image
        needs one of them: the disk is then placed on it).
    order : int
        Highest order ``T``: every moment with ``n <= T`` is computed ({count}).
    pairs : sequence of (n, m), optional
        Instead of ``order``: compute only these moments (selected moments; negative ``m``
        allowed). :func:`order_pairs` lists one order's repetitions.
    k : int
        Sample points per pixel and axis (thesis Eq. 3.19-3.23).
    quadrature : {{"midpoint", "gauss"}}
        k x k midpoint sub-regions (thesis) or a k-point Gauss-Legendre rule per axis.
    rule : {{"inscribed", "centre"}}
        Use pixels entirely inside the unit disk (thesis) or those whose centre is inside.
    method : str, optional
        Radial polynomial method: {methods}. Default ``"deng"`` (the thesis's recurrence,
        Eq. {eqs}) for full sets, ``"jacobi"`` for selections.
    repetitions : sequence of int, optional
        With ``order``: compute only these repetitions.
    device : str or torch.device, optional
        Where to compute (default: where the input is).
    dtype : {{"float32", "float64"}}, optional
        Working precision (default from the input: float64 stays float64, else float32).
    memory_budget : float, optional
        Scratch memory in bytes (or fraction of free memory if <= 1).
    progress : bool, optional
        A progress bar over the radius groups: ``None`` (default) for large jobs that run
        for more than a second, ``True`` always, ``False`` never.
    channel_axis : int, optional
        The axis of ``image`` that holds colour channels (scikit-image's convention), e.g.
        ``-1`` for ``(H, W, 3)``. Each channel is transformed as an image of the batch: the
        channels become the last batch axis of the moments (``A.batch_shape == (3,)`` for
        ``(H, W, 3)``, ``(B, 3)`` for ``(B, H, W, 3)`` or ``(B, 3, H, W)`` with
        ``channel_axis=1``), and ``A.reconstruct()`` puts them back where they were. Without
        it, a non-square ``(..., H, W, 3)`` or ``(..., H, W, 4)`` image is refused with a
        message about colour channels.
    center : (float, float), "centroid" or None, optional
        Centre ``(row, col)`` of the disk in pixels, pixel centres at integers (mahotas'
        and scikit-image's convention); ``"centroid"``: the intensity centre of mass of each
        image (:func:`fastmoments.disk.placement.centroid`; images of a batch are grouped by
        equal centre, one plan per group, and ``A.center`` lists the centres); None
        (default): the image centre.
    radius : float, optional
        Radius of the disk in pixels; default the largest disk around the centre inside
        the image (``N/2`` for the centre of a square image: the default mapping, unchanged).
        Pixels outside the disk (by ``rule``) and parts of the disk outside the image are
        ignored; see :mod:`fastmoments.disk.placement` and, for mahotas' numbers, the disk
        guide's section "Coming from mahotas / scikit-image".

    Returns
    -------
    DiskMoments
        ``A[n, m]``, ``A.reconstruct(...)``, ``A.invariants()``.

    Raises
    ------
    ValueError
        Non-square images without ``center`` or ``radius``, NaN/inf images, negative
        order, k < 1, unknown options, invalid pairs, both ``order`` and ``pairs``,
        ``repetitions`` with ``pairs`` or beyond the order; a ``center`` outside the image,
        not of length 2 or with NaN, a ``radius`` <= 0 or NaN, a disk that holds no pixel,
        ``center="centroid"`` on an image that sums to 0.
    TypeError
        Orders, ``k``, repetitions or pairs that are not integers (floats and bools are
        not integers: ``2.5`` is never truncated), a bad ``memory_budget`` or ``dtype``.
        Every argument is checked before a cached plan is looked up.
    MemoryError
        Before anything is built, when the moments' index and one image's coefficients do not
        fit in the memory budget, and when even the smallest chunk does not fit (the message
        names the order and says how much is needed and what the budget is).

    Notes
    -----
    {notes}

    float32 accuracy: against float64 the relative error of the moment vector is below
    ``1e-5`` at ``T <= 100`` and below ``2e-4`` at ``T = 700`` (tests check the first bound).

    Examples
    --------
    >>> import numpy as np
    >>> img = np.zeros((64, 64)); img[20:40, 24:44] = 1.0
    >>> A = {func}(img, 10)
    >>> bool(np.isclose(A[3, -1], np.conj(A[3, 1])))
    True
    >>> A.reconstruct().shape
    (64, 64)
    >>> rgb = np.stack([img, img.T, 1 - img], axis=-1)       # (64, 64, 3)
    >>> C = {func}(rgb, 4, channel_axis=-1)
    >>> C.batch_shape, C[2, 0].shape, C.reconstruct().shape
    ((3,), (3,), (64, 64, 3))
    >>> D = {func}(img[:, :50], 6, center=(30, 33), radius=12.5)  # any shape, any disk
    >>> D.center, D.radius, D.reconstruct().shape
    ((30.0, 33.0), 12.5, (64, 50))
"""


def zernike_moments(image: Any, order: int | None = None, *, pairs: Any = None, k: int = 1,
                    quadrature: str = "midpoint", rule: str = "inscribed",
                    method: str | None = None, repetitions: Sequence[int] | None = None,
                    device: Any = None, dtype: Any = None,
                    memory_budget: float | None = None,
                    progress: bool | None = None,
                    channel_axis: int | None = None, center: Any = None,
                    radius: float | None = None) -> DiskMoments:
    return _moments("zernike", image, order, k=k, quadrature=quadrature, rule=rule,
                    method=method, repetitions=repetitions, pairs=pairs, device=device,
                    dtype=dtype, memory_budget=memory_budget, progress=progress,
                    channel_axis=channel_axis, center=center, radius=radius)


def pseudo_zernike_moments(image: Any, order: int | None = None, *, pairs: Any = None,
                           k: int = 1, quadrature: str = "midpoint", rule: str = "inscribed",
                           method: str | None = None, repetitions: Sequence[int] | None = None,
                           device: Any = None, dtype: Any = None,
                           memory_budget: float | None = None,
                           progress: bool | None = None,
                           channel_axis: int | None = None, center: Any = None,
                           radius: float | None = None) -> DiskMoments:
    return _moments("pseudo-zernike", image, order, k=k, quadrature=quadrature, rule=rule,
                    method=method, repetitions=repetitions, pairs=pairs, device=device,
                    dtype=dtype, memory_budget=memory_budget, progress=progress,
                    channel_axis=channel_axis, center=center, radius=radius)


zernike_moments.__doc__ = _DOC.format(
    title="Zernike moments", count="(T+1)(T+2)/2 of them, stored for m >= 0",
    methods='"deng", "kintner", "q-recursive", "direct", "jacobi"', eqs="3.10-3.11",
    func="zernike_moments",
    notes=(r":math:`A_{nm} = \frac{n+1}{\pi}\sum f(x, y) R_{nm}(\rho) e^{-im\theta} \Delta x "
           r"\Delta y` over the sample points (thesis Eq. 2.10, 3.23), with "
           r":math:`\Delta x = \Delta y = 2/(Nk)` (:math:`1/(kR)` on a disk of radius "
           r":math:`R` pixels)."))
pseudo_zernike_moments.__doc__ = _DOC.format(
    title="Pseudo-Zernike moments", count="(T+1)^2 of them, stored for m >= 0",
    methods='"deng", "direct", "jacobi"', eqs="3.12-3.15", func="pseudo_zernike_moments",
    notes=(r"Same normalization as the Zernike moments (thesis Eq. 2.16) with the radial "
           r"polynomial of Eq. 2.14."))
