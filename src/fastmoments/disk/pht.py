r"""Polar harmonic transforms (PCET, PCT, PST) and their generic versions on the disk engine.

The kernels are :math:`H_{nl}(r, \theta) = R_n(r) e^{il\theta}` with the radial functions of
Yap, Jiang and Kot (2010), as restated by Yang et al. (IEEE Access 2020, Eq. 4-18):

* ``pcet``: :math:`R_n(r) = e^{i 2\pi n r^2}` (Eq. 6), normalization :math:`1/\pi` (Eq. 4),
  every integer order :math:`n`;
* ``pct``: :math:`R_n(r) = \cos(\pi n r^2)` (Eq. 11), normalization :math:`\Omega_n`
  (Eq. 9, 12), :math:`n \ge 0`;
* ``pst``: :math:`R_n(r) = \sin(\pi n r^2)` (Eq. 17), normalization :math:`\Omega_n`
  (Eq. 15), :math:`n \ge 1`;

with :math:`\Omega_0 = 1/\pi` and :math:`\Omega_n = 2/\pi` otherwise, and every integer
repetition :math:`l`. The generic transforms of Hoang and Tabbone (2014) replace :math:`r^2`
by :math:`r^s` and multiply the radial function by :math:`\sqrt{s\, r^{s-2}/2}` so that the
same normalizations keep the basis orthogonal (substitute :math:`u = r^s`); :math:`s = 2`
gives the transforms above.

The moments are sums over the sample points of the disk engine (same pixels, sub-pixel
schemes and :math:`\Delta x \Delta y` weights as the Zernike moments):

.. math:: M_{nl} = c_n \sum_p w_p f_p R^*_n(r_p) e^{-il\theta_p}.

For a real image :math:`M_{n,-l} = \overline{M_{-n,l}}` (PCET) and
:math:`M_{n,-l} = \overline{M_{n,l}}` (PCT, PST), so only :math:`l \ge 0` is stored.

Three ways to compute the same sums (``method=``):

* ``"engine"``: the two-stage engine (:mod:`fastmoments.disk.engine`): angular sums over the
  8-fold symmetric orbits, then one small matrix product per repetition with a cached table of
  :math:`R_n(r_g)` over the distinct radii. :math:`O(P L + G K)` for :math:`P` points,
  :math:`G` radii, :math:`L` repetitions and :math:`K` moments.
* ``"gemm"``: one dense matrix product ``images @ W`` with a cached kernel matrix
  :math:`W[p, (n, l)]` (sub-pixel points folded into their pixels). :math:`O(N^2 K)` per
  image but a single large GEMM, the fastest choice on a GPU for the small selections of the
  feature-extraction workloads.
* ``"nufft"``: the sums are a 2-D type-1 non-uniform FFT at the points
  :math:`(a r_p^s, \theta_p)` (:math:`a = 2\pi` for PCET, :math:`\pi` for PCT/PST), see
  :mod:`fastmoments.disk.nufft`; :math:`O(P + K \log K)` per image, to a requested ``eps``.
"""

from __future__ import annotations

from typing import Any

import torch

from .._array import numeric_array, policy_dtype, real_dtype
from .._cache import plan_cache
from .._memory import check_memory_budget
from .._validate import (
    check_choice,
    check_int,
    check_int_pairs,
    check_positive_float,
)
from ..parallel import device_key, first_device, resolve_devices
from .pht_family import KINDS, PolarHarmonicFamily, pht_family
from .pht_moments import PHTMoments
from .pht_plan import METHODS, PolarHarmonicTransform, check_orders
from .placement import Placement, check_center, check_radius
from .sampling import QUADRATURES, RULES
from .transform import (
    channels_first,
    disk_geometry,
    placed_forward,
)

__all__ = [
    "KINDS",
    "METHODS",
    "PHTMoments",
    "PolarHarmonicFamily",
    "PolarHarmonicTransform",
    "pcet",
    "pct",
    "pht_family",
    "pst",
]


@plan_cache(maxsize=8)
def _cached_plan(kind: str, size: int, nmax: int | None, lmax: int | None, nmin: int | None,
                 lmin: int | None, pairs: tuple[tuple[int, int], ...] | None, s: float,
                 k: int, quadrature: str, rule: str, method: str, eps: float | None,
                 dtype: torch.dtype, device: str, budget: float | None,
                 placement: Placement | None = None) -> PolarHarmonicTransform:
    return _plan(kind, size, nmax, lmax, nmin, lmin, pairs, s, k, quadrature, rule, method,
                 eps, dtype, device, budget, placement)


def _plan(kind: str, size: int, nmax: int | None, lmax: int | None, nmin: int | None,
          lmin: int | None, pairs: tuple[tuple[int, int], ...] | None, s: float, k: int,
          quadrature: str, rule: str, method: str, eps: float | None, dtype: torch.dtype,
          device: Any, budget: float | None, placement: Placement | None
          ) -> PolarHarmonicTransform:
    where: dict[str, Any] = {}
    shape: Any = size
    if placement is not None:
        shape, where = placement.shape, {"center": placement.centre, "radius": placement.radius}
    return PolarHarmonicTransform(kind, shape, nmax, lmax, nmin=nmin, lmin=lmin, pairs=pairs,
                                  s=s, k=k, quadrature=quadrature, rule=rule, method=method,
                                  eps=eps, dtype=dtype, device=device, memory_budget=budget,
                                  **where)


def _opt_int(name: str, value: Any, minimum: int | None = None) -> int | None:
    return None if value is None else check_int(name, value, minimum=minimum)


def _one_call(kind: str, image: Any, nmax: Any, lmax: Any, *, nmin: Any, lmin: Any,
              pairs: Any, s: float, k: int, quadrature: str, rule: str, method: str,
              eps: float | None, device: Any, dtype: Any, memory_budget: float | None,
              channel_axis: Any = None, center: Any = None, radius: Any = None) -> PHTMoments:
    # every argument is checked and made a plain value of its exact type before the plan
    # cache sees it (the plan cache takes True, 1 and 1.0 for one key)
    image, move = channels_first(image, channel_axis)
    nmax, lmax = _opt_int("nmax", nmax), _opt_int("lmax", lmax)
    nmin, lmin = _opt_int("nmin", nmin), _opt_int("lmin", lmin)
    prs = None if pairs is None else check_int_pairs("pairs", pairs, allow_empty=True,
                                                     labels=("n", "l"))
    if prs is not None and (nmax is not None or lmax is not None):
        raise ValueError("give either nmax/lmax or pairs, not both")
    s = float(check_positive_float("s", s))
    k = check_int("k", k, minimum=1)
    quadrature = check_choice("quadrature", quadrature, QUADRATURES)
    rule = check_choice("rule", rule, RULES)
    method = check_choice("method", method, METHODS)
    eps = None if eps is None else float(check_positive_float("eps", eps))
    memory_budget = check_memory_budget(memory_budget)
    center, radius = check_center(center), check_radius(radius)
    work = None if dtype is None else real_dtype(dtype)
    if isinstance(image, torch.Tensor):
        in_dtype, in_dev = image.dtype, image.device
        shape = tuple(image.shape)
    else:
        arr = numeric_array(image, "image")
        in_dtype, in_dev, shape = arr.dtype, torch.device("cpu"), arr.shape
    size, placement = disk_geometry(shape, None if center == "centroid" else center,
                                    1.0 if center == "centroid" and radius is None else radius,
                                    rule)
    dt = work if work is not None else policy_dtype(in_dtype, name="image")
    dev = resolve_devices(device, in_dev)
    family = pht_family(kind, s)
    # the index checks (and the memory estimate) before the cache: nothing huge is built
    check_orders(family, nmax, lmax, nmin, lmin, prs,
                  size=size if placement is None else placement.shape, k=k, dtype=dt,
                  device=first_device(dev), memory_budget=memory_budget)

    def plan_for(size: int, placement: Placement | None, cached: bool) -> Any:
        args = (kind, size, nmax, lmax, nmin, lmin, prs, s, k, quadrature, rule, method, eps,
                dt)
        if cached:
            return _cached_plan(*args, device_key(dev), memory_budget, placement)
        return _plan(*args, dev, memory_budget, placement)

    out = placed_forward(image, center=center, radius=radius, rule=rule, plan_for=plan_for)
    out.channels = move
    return out


_DOC = r"""{title} of an image or a batch of images.

    Parameters
    ----------
    image : array_like or torch.Tensor
        ``(..., N, N)`` real images (NumPy or torch; float32, float64 or integers), or
        ``(..., H, W)`` of any shape with ``center`` or ``radius``.
    nmax, lmax : int
        Highest order and repetition: every ``(n, l)`` with {nrange} and ``|l| <= lmax``.
    nmin, lmin : int, optional
        Lowest order and repetition instead (e.g. ``nmin=1, lmin=1`` for the paper's
        ``1 <= n, l <= 25``).
    pairs : sequence of (n, l), optional
        Compute exactly these moments (leave ``nmax``/``lmax`` out: giving both is an error).
    s : float
        Exponent of the generic transform (Hoang and Tabbone): radial kernel
        {radial_s} times :math:`\sqrt{{s r^{{s-2}}/2}}`; 2 is the classical one.
    k : int
        Sample points per pixel and axis.
    quadrature : {{"midpoint", "gauss"}}
        Sub-pixel rule, as for the Zernike moments.
    rule : {{"inscribed", "centre"}}
        Pixels entirely inside the unit disk, or those whose centre is.
    method : {{"auto", "engine", "gemm", "nufft"}}
        Two-stage engine, dense kernel GEMM or type-1 NUFFT (``finufft``); ``"auto"``
        chooses per device and size.
    eps : float, optional
        Requested accuracy of the NUFFT (default 1e-6 in float32, 1e-12 in float64).
    device : str or torch.device, optional
        Where to compute (default: where the input is).
    dtype : {{"float32", "float64"}}, optional
        Working precision (default from the input).
    memory_budget : float, optional
        Scratch memory in bytes (or fraction of free memory if <= 1).
    channel_axis : int, optional
        The axis of ``image`` that holds colour channels (scikit-image's convention), e.g.
        ``-1`` for ``(H, W, 3)``: each channel is transformed as an image, the channels
        become the last batch axis of the moments, and ``reconstruct()`` returns them where
        they were. Without it, a non-square ``(..., H, W, 3)`` or ``(..., H, W, 4)`` image is
        refused with a message about colour channels.
    center : (float, float), "centroid" or None, optional
        Centre ``(row, col)`` of the disk in pixels (pixel centres at integers),
        ``"centroid"`` (each image's intensity centre of mass) or None (the image centre),
        as for :func:`fastmoments.zernike_moments`.
    radius : float, optional
        Radius of the disk in pixels (default: the largest disk around the centre inside
        the image); pixels outside it are ignored.

    Returns
    -------
    PHTMoments
        ``M[n, l]`` (negative ``l`` included), ``M.invariants()``, ``M.reconstruct(...)``.

    Raises
    ------
    ValueError
        Non-square images without ``center`` or ``radius``, NaN/inf images, invalid
        orders, unknown options, both ``nmax``/``lmax`` and ``pairs``; a ``center`` outside
        the image, not of length 2 or with NaN, a ``radius`` <= 0 or NaN, a disk that holds
        no pixel.
    TypeError
        Orders, ``k`` or pairs that are not integers (floats and bools are not integers),
        ``s`` or ``eps`` that are not real numbers. Every argument is checked before a cached
        plan is looked up.
    MemoryError
        When the work cannot fit the memory budget (the message says how much it needs),
        checked before the moments' index is built.

    Notes
    -----
    {notes} Sums run over the disk engine's sample points with their
    :math:`\Delta x \Delta y` weights (pixels mapped onto the unit disk as for the Zernike
    moments). float32 agrees with float64 to a relative error below 1e-5 on small images
    (tested) and up to about 1.3e-5 on large ones (measured, see
    :class:`PolarHarmonicTransform`).

    Examples
    --------
    >>> import numpy as np
    >>> img = np.zeros((32, 32)); img[8:20, 10:24] = 1.0
    >>> M = {func}(img, 3, 3)
    >>> bool(np.isclose(M[{n}, -2], np.conj(M[{npartner}, 2])))
    True
    >>> M.reconstruct().shape
    (32, 32)
"""


def pcet(image: Any, nmax: int | None = None, lmax: int | None = None, *,
         nmin: int | None = None, lmin: int | None = None, pairs: Any = None, s: float = 2.0,
         k: int = 1, quadrature: str = "midpoint", rule: str = "inscribed",
         method: str = "auto", eps: float | None = None, device: Any = None, dtype: Any = None,
         memory_budget: float | None = None, channel_axis: int | None = None,
         center: Any = None, radius: float | None = None) -> PHTMoments:
    return _one_call("pcet", image, nmax, lmax, nmin=nmin, lmin=lmin, pairs=pairs, s=s, k=k,
                     quadrature=quadrature, rule=rule, method=method, eps=eps, device=device,
                     dtype=dtype, memory_budget=memory_budget, channel_axis=channel_axis,
                     center=center, radius=radius)


def pct(image: Any, nmax: int | None = None, lmax: int | None = None, *,
        nmin: int | None = None, lmin: int | None = None, pairs: Any = None, s: float = 2.0,
        k: int = 1, quadrature: str = "midpoint", rule: str = "inscribed",
        method: str = "auto", eps: float | None = None, device: Any = None, dtype: Any = None,
        memory_budget: float | None = None, channel_axis: int | None = None,
        center: Any = None, radius: float | None = None) -> PHTMoments:
    return _one_call("pct", image, nmax, lmax, nmin=nmin, lmin=lmin, pairs=pairs, s=s, k=k,
                     quadrature=quadrature, rule=rule, method=method, eps=eps, device=device,
                     dtype=dtype, memory_budget=memory_budget, channel_axis=channel_axis,
                     center=center, radius=radius)


def pst(image: Any, nmax: int | None = None, lmax: int | None = None, *,
        nmin: int | None = None, lmin: int | None = None, pairs: Any = None, s: float = 2.0,
        k: int = 1, quadrature: str = "midpoint", rule: str = "inscribed",
        method: str = "auto", eps: float | None = None, device: Any = None, dtype: Any = None,
        memory_budget: float | None = None, channel_axis: int | None = None,
        center: Any = None, radius: float | None = None) -> PHTMoments:
    return _one_call("pst", image, nmax, lmax, nmin=nmin, lmin=lmin, pairs=pairs, s=s, k=k,
                     quadrature=quadrature, rule=rule, method=method, eps=eps, device=device,
                     dtype=dtype, memory_budget=memory_budget, channel_axis=channel_axis,
                     center=center, radius=radius)


pcet.__doc__ = _DOC.format(
    title="Polar complex exponential transform (PCET)", nrange="``|n| <= nmax``",
    radial_s=r":math:`e^{i 2\pi n r^s}`",
    notes=(r":math:`M_{nl} = \frac{1}{\pi}\sum f\, e^{-i 2\pi n r^2} e^{-il\theta}"
           r"\Delta x\Delta y` (Yang et al. 2020, Eq. 4-7)."),
    func="pcet", n="1", npartner="-1")
pct.__doc__ = _DOC.format(
    title="Polar cosine transform (PCT)", nrange="``0 <= n <= nmax``",
    radial_s=r":math:`\cos(\pi n r^s)`",
    notes=(r":math:`M^C_{nl} = \Omega_n\sum f \cos(\pi n r^2) e^{-il\theta}\Delta x\Delta y`, "
           r":math:`\Omega_0 = 1/\pi`, :math:`\Omega_n = 2/\pi` (Eq. 9-13)."),
    func="pct", n="1", npartner="1")
pst.__doc__ = _DOC.format(
    title="Polar sine transform (PST)", nrange="``1 <= n <= nmax``",
    radial_s=r":math:`\sin(\pi n r^s)`",
    notes=(r":math:`M^S_{nl} = \Omega_n\sum f \sin(\pi n r^2) e^{-il\theta}\Delta x\Delta y` "
           r"(Eq. 15-18)."),
    func="pst", n="1", npartner="1")
