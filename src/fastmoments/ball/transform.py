r"""The plan of 3-D Zernike moments, :class:`Zernike3DTransform`, and the one-call
:func:`zernike3d_moments`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .._array import ArrayKind, as_tensor, real_dtype, resolve_device, same_device, to_output
from .._cache import plan_cache
from .._memory import check_memory_budget
from .._progress import check_progress
from .._threads import cpu_call, per_value
from .._validate import check_choice, check_int, check_real, check_shape
from ..parallel import device_key, is_multi, multi_device
from .engine import FORWARD_SCALE, BallEngine
from .moments import Zernike3DMoments
from .sampling import QUADRATURES, ball_sampling, inscribed_placement
from .split import BallSplit

__all__ = ["GRAPH_SCRATCH", "Zernike3DTransform", "cached_transform", "check_placement",
           "placement", "zernike3d_moments"]

#: Largest scratch memory (bytes) of a forward call replayed as a CUDA graph
#: (:mod:`fastmoments._cuda_graph`; ``ring-phases`` routes only): a graph keeps its scratch for
#: as long as its plan keeps it. Larger calls run eagerly, where their launches are a small
#: share of their time.
GRAPH_SCRATCH = 1 << 30


def _check_center(center: Any) -> tuple[float, float, float] | None:
    if center is None:
        return None
    if isinstance(center, str):
        raise ValueError(f"center must be None or a point (d, h, w) for a plan; 'centroid' is "
                         f"taken by zernike3d_moments, got {center!r}")
    if isinstance(center, torch.Tensor):
        center = center.detach().cpu().tolist()
    try:
        items = list(center)
    except TypeError:
        raise TypeError(f"center must be None, 'centroid' or a point (d, h, w) of three "
                        f"numbers, got {center!r}") from None
    if len(items) != 3:
        raise ValueError(f"center must be a point (d, h, w) of three numbers, got {center!r} "
                         f"of length {len(items)}")
    return tuple(check_real(f"center[{i}]", v) for i, v in enumerate(items))  # type: ignore


def _check_radius(radius: Any) -> float | None:
    if radius is None:
        return None
    if isinstance(radius, str):
        raise ValueError(f"radius must be None or a number of voxels > 0 for a plan; "
                         f"'enclosing' is taken by zernike3d_moments, got {radius!r}")
    return check_real("radius", radius, minimum=0.0, strict_minimum=True)


def check_placement(center: Any, radius: Any) -> tuple[Any, Any]:
    """``center`` and ``radius`` of :func:`zernike3d_moments` checked, as plain values:
    ``"centroid"`` / ``"enclosing"`` (resolved per volume) or numbers (``None``: the inscribed
    ball).

    >>> check_placement([4, 4.5, 5], "enclosing")
    ((4.0, 4.5, 5.0), 'enclosing')
    """
    if isinstance(center, str):
        check_choice("center", center, ("centroid",))
    else:
        center = _check_center(center)
    if isinstance(radius, str):
        check_choice("radius", radius, ("enclosing",))
    else:
        radius = _check_radius(radius)
    return center, radius


@multi_device(split=BallSplit)
class Zernike3DTransform:
    r"""3-D Zernike moments of ``(D, H, W)`` volumes, built once and applied to batches.

    Parameters
    ----------
    shape : tuple of 3 int
        Volume shape ``(D, H, W)``.
    order : int
        Highest order :math:`N` (moments :math:`0 \le l \le n \le N`, :math:`n - l` even).
    k : int
        Sample points per voxel and axis (:math:`k^3` per voxel).
    quadrature : {"midpoint", "gauss"}
        Sub-voxel rule: midpoints of :math:`k^3` sub-cubes or tensor Gauss-Legendre.
    center : sequence of 3 float, optional
        Centre of the ball in index coordinates ``(d, h, w)``; default the centre of the box.
    radius : float, optional
        Radius of the ball in voxels; default ``min(D, H, W) / 2`` (the inscribed ball).
    dtype : torch.dtype or str
        Working precision, float32 (default) or float64.
    device : str, torch.device, sequence of them or "cuda:all", optional
        Where the work runs (default CPU). A list builds a
        :class:`~fastmoments.parallel.ParallelPlan`: batches are spread over the devices and
        a job of fewer volumes than devices over shells of the ball
        (:class:`~fastmoments.ball.split.BallSplit`), moments gathered on the first device.
    memory_budget : float, optional
        Scratch bytes (or a fraction of the free memory if <= 1); work is chunked over points
        to fit.

    Raises
    ------
    ValueError
        A shape that is not three sizes >= 1, ``order < 0``, ``k < 1``, an unknown
        ``quadrature``, a ``center`` that is not three finite numbers, a ``radius`` that is
        not > 0, a ball that holds no sample point, a device that is not available.
    TypeError
        Non-integer ``order``, ``k`` or sizes, a ``dtype`` that is not float32 or float64.

    Notes
    -----
    Moments follow Novotni and Klein (2003):

    .. math:: \Omega_{nl}^m = \frac{3}{4\pi} \int_{\|x\| \le 1} f(x)\,
              \overline{Z_{nl}^m(x)}\, dx
              \approx \frac{3}{4\pi} \sum_p w_p f_p \overline{Z_{nl}^m(x_p)},

    with the functions of :mod:`fastmoments.ball.functions` (orthonormal for this inner
    product, spherical harmonics with the Condon-Shortley phase), the sampling of
    :mod:`fastmoments.ball.sampling` and the engine of :mod:`fastmoments.ball.engine`.
    The route (``plan.route``) is decided when the plan is built (:mod:`.routes`).

    Examples
    --------
    >>> plan = Zernike3DTransform((16, 16, 16), 4)
    >>> Om = plan.forward(np.ones((16, 16, 16)))
    >>> round(float(abs(Om[0, 0, 0])), 2)  # the sampled share of the ball (voxel centres inside)
    1.01
    """

    def __init__(self, shape: Sequence[int], order: int, *, k: int = 1,
                 quadrature: str = "midpoint", center: Sequence[float] | None = None,
                 radius: float | None = None, dtype: Any = torch.float32, device: Any = None,
                 memory_budget: float | None = None) -> None:
        self.shape = check_shape("shape", shape, ndim=3)
        self.order = check_int("order", order, minimum=0)
        self.k = check_int("k", k, minimum=1)
        self.quadrature = check_choice("quadrature", quadrature, QUADRATURES)
        self.center = _check_center(center)
        self.radius = _check_radius(radius)
        self.dtype = real_dtype(dtype)
        self.device = resolve_device(device)
        self._budget = check_memory_budget(memory_budget)
        self.sampling = ball_sampling(self.shape, self.k, self.quadrature, self.center,
                                      self.radius)
        self.engine = BallEngine(self.sampling, self.order, self.dtype, self.device,
                                 self._budget)
        self.index = self.engine.index
        self._recon: BallEngine | None = None

    @property
    def route(self):
        """The route this plan takes (:class:`fastmoments._route.Route`)."""
        return self.engine.route

    @property
    def ball_center(self) -> tuple[float, float, float]:
        """The centre in use (index coordinates)."""
        return self.sampling.center

    @property
    def ball_radius(self) -> float:
        """The radius in use (voxels)."""
        return self.sampling.radius

    @property
    def mask(self) -> np.ndarray:
        """Voxels the transform reads, those with a sample point in the ball (``(D, H, W)``
        bool)."""
        return self.sampling.voxel_mask()

    @property
    def reconstruction_mask(self) -> np.ndarray:
        """Voxels whose centre lies in the ball, where reconstructions are evaluated (the
        others are 0): the voxels to measure a reconstruction's error over."""
        if self.k == 1 and self.quadrature == "midpoint":
            return self.mask
        return ball_sampling(self.shape, 1, "midpoint", self.sampling.center,
                             self.sampling.radius).voxel_mask()

    def __repr__(self) -> str:
        return (f"Zernike3DTransform(shape={self.shape}, order={self.order}, k={self.k}, "
                f"quadrature={self.quadrature!r}, center={self.ball_center}, "
                f"radius={self.ball_radius}, dtype={self.dtype}, device={self.device}, "
                f"route={self.route})")

    # ------------------------------------------------------------------ helpers
    def _volumes(self, volume: Any) -> tuple[torch.Tensor, Any, tuple[int, ...]]:
        x, kind = as_tensor(volume, "volume", min_ndim=3, dtype=self.dtype, device=self.device)
        if tuple(x.shape[-3:]) != self.shape:
            raise ValueError(f"volume must have shape (..., {', '.join(map(str, self.shape))})"
                             f" for this plan, got {tuple(x.shape)}")
        batch = tuple(x.shape[:-3])
        return x.reshape(-1, math.prod(self.shape)), kind, batch

    def recon_engine(self) -> BallEngine:
        """Engine on the voxel centres (one point per voxel), for reconstruction."""
        if self._recon is None:
            if self.k == 1 and self.quadrature == "midpoint":
                self._recon = self.engine
            else:
                centre = ball_sampling(self.shape, 1, "midpoint", self.sampling.center,
                                       self.sampling.radius)
                self._recon = BallEngine(centre, self.order, self.dtype, self.device,
                                         self._budget)
        return self._recon

    # ------------------------------------------------------------------ transforms
    # work: (order + 1) k³ per voxel, counted at an eighth of GRAIN's unit: the engine's CPU
    # steps are many small products over slabs (a batch of four 100³ volumes at order 20 took
    # 0.95 s on 2 threads of a loaded 2-core machine, 0.15 s on one)
    @cpu_call(per_value(lambda self, *a, **k: self.k ** 3 * (self.order + 1) / 8, arg=1))
    def forward(self, volume: Any, *, progress: bool | None = None) -> Zernike3DMoments:
        """Moments of ``volume`` shaped ``(..., D, H, W)`` (real; NumPy or torch).

        ``progress``: a tqdm bar over the chunks; ``None`` (default) shows it only for large
        jobs (:data:`fastmoments.ball.engine.PROGRESS_FROM`) that run for over a second.

        Returns
        -------
        Zernike3DMoments
            Indexed ``Om[n, l, m]`` (negative ``m`` included).

        Raises
        ------
        ValueError
            A shape other than ``(..., D, H, W)`` of the plan, NaN or infinity, complex data.
        TypeError
            Input that is not an array of numbers.
        """
        progress = check_progress(progress)
        replayed = self._replayed_forward(volume, progress)
        if replayed is not None:
            coef, kind, batch = replayed
        else:
            x, kind, batch = self._volumes(volume)
            coef = self.engine.forward(x, progress)
        return Zernike3DMoments(coef.reshape(*batch, -1), self, kind)

    __call__ = forward

    def _replayed_forward(self, volume: Any, progress: bool | None
                          ) -> tuple[torch.Tensor, Any, tuple[int, ...]] | None:
        """The forward transform from a replayed CUDA graph (:mod:`fastmoments._cuda_graph`:
        captured on the third call of a shape, the NaN check inside the graph), or None to
        run it eagerly. Only on ``ring-phases`` routes (a fixed sequence of launches, no
        chunks), for a C-contiguous CUDA tensor already in the plan's dtype, shape and device,
        and calls whose scratch is at most :data:`GRAPH_SCRATCH` (one volume at a time: about
        a hundred launches, which the replay issues at once)."""
        from .._cuda_graph import graph_cache

        eng = self.engine
        if not (eng._by_ring and type(volume) is torch.Tensor and volume.is_cuda
                and (progress is None or progress is False) and volume.dtype == self.dtype
                and same_device(volume.device, self.device) and volume.ndim >= 3
                and tuple(volume.shape[-3:]) == self.shape):
            return None
        batch = tuple(volume.shape[:-3])
        B = math.prod(batch)
        if B == 0 or eng.scratch_bytes(B) > GRAPH_SCRATCH:
            return None
        x = volume.reshape(B, math.prod(self.shape))
        try:
            res = graph_cache(self).call(x, ("ball-forward",), lambda t: eng.forward(t, False),
                                         True, B * self.index.size * 2 * x.element_size())
        except ValueError:  # NaN or infinity: the eager call's check names the parameter
            return None
        if res is None:
            return None
        return res[0], ArrayKind(False, volume.device), batch

    def _coefficients(self, moments: Any, name: str) -> tuple[torch.Tensor, Any, tuple]:
        if isinstance(moments, Zernike3DMoments):
            c, kind = moments.data, moments.kind
        else:
            c, kind = as_tensor(moments, name, min_ndim=1, device=self.device,
                                allow_complex=True)
        if c.shape[-1] != self.index.size:
            raise ValueError(f"{name} must have shape (..., {self.index.size}) for order "
                             f"{self.order}, got {tuple(c.shape)}")
        batch = tuple(c.shape[:-1])
        cdt = torch.complex128 if self.dtype == torch.float64 else torch.complex64
        return c.reshape(-1, self.index.size).to(cdt), kind, batch

    @cpu_call(per_value(lambda self, *a, **k: math.prod(self.shape) * (self.order + 1)
                        / (8 * max(1, self.index.size)), arg=1))
    def adjoint(self, moments: Any) -> Any:
        r"""The adjoint :math:`A^H` of :meth:`forward` for the real inner products:
        :math:`\mathrm{Re}\langle A f, y\rangle = \langle f, A^H y\rangle`.

        Parameters
        ----------
        moments : Zernike3DMoments or array_like
            Coefficients ``(..., K)`` (complex) in the plan's flat layout (:attr:`index`).

        Returns
        -------
        array
            ``(..., D, H, W)`` real: :math:`(A^H y)_v = \sum_{p \in v} \tfrac{3}{4\pi}
            w_p\, \mathrm{Re} \sum_K y_K Z_K(x_p)`.
        """
        c, kind, batch = self._coefficients(moments, "moments")
        eng = self.engine
        vals = eng.synthesize(c) * (eng.weight * FORWARD_SCALE)
        vol = eng.scatter(vals).reshape(*batch, *self.shape)
        return to_output(vol, kind)

    def inverse(self, moments: Any, orders: Any = None) -> Any:
        """The volume rebuilt from moments: :meth:`Zernike3DMoments.reconstruct` for a
        moments object or for coefficients ``(..., K)`` in the plan's flat layout
        (:attr:`index`, ``m >= 0``; NumPy in, NumPy out)."""
        if not isinstance(moments, Zernike3DMoments):
            c, kind, batch = self._coefficients(moments, "moments")
            moments = Zernike3DMoments(c.reshape(*batch, -1), self, kind)
        return moments.reconstruct(orders)

    @cpu_call(per_value(lambda self, *a, **k: math.prod(self.shape) * (self.order + 1)
                        / (8 * max(1, self.index.size)), arg=1))
    def synthesize(self, coef: torch.Tensor, progress: bool | None = None) -> torch.Tensor:
        """Real volumes ``(B, D, H, W)`` :math:`\\mathrm{Re} \\sum_K c_K Z_K` at the voxel
        centres (zero outside the ball) from ``(B, K)`` coefficients (``m >= 0``, with the
        weight of negative ``m`` already folded in)."""
        eng = self.recon_engine()
        vals = eng.synthesize(coef, progress)
        return eng.scatter(vals).reshape(-1, *self.shape)


@plan_cache(maxsize=8)
def cached_transform(shape: tuple[int, int, int], order: int, k: int, quadrature: str,
                     center: tuple[float, float, float] | None, radius: float | None,
                     dtype: torch.dtype, device: str, memory_budget: float | None
                     ) -> Zernike3DTransform:
    """A plan for plain, checked arguments (the cache of :func:`zernike3d_moments`)."""
    return Zernike3DTransform(shape, order, k=k, quadrature=quadrature, center=center,
                              radius=radius, dtype=dtype, device=device,
                              memory_budget=memory_budget)


def placement(volume: torch.Tensor, center: Any, radius: Any
              ) -> tuple[tuple[float, float, float] | None, float | None]:
    """Resolve ``center="centroid"`` and ``radius="enclosing"`` for one volume ``(D, H, W)``.

    The centroid is the intensity-weighted centre of mass in index coordinates (the volume's
    total must be > 0). The enclosing radius is the distance from the centre to the farthest
    corner of any non-zero voxel, so that every non-zero voxel lies inside the ball.
    """
    shape = tuple(volume.shape[-3:])
    v = volume.detach().to(torch.float64)
    if isinstance(center, str):
        check_choice("center", center, ("centroid",))
        total = float(v.sum())
        if not total > 0:
            raise ValueError(f"center='centroid' needs a volume with a positive total, got "
                             f"total {total:g}")
        grids = torch.meshgrid(*(torch.arange(s, dtype=torch.float64, device=v.device)
                                 for s in shape), indexing="ij")
        center = tuple(float((v * g).sum()) / total for g in grids)
    else:
        center = _check_center(center)
    if isinstance(radius, str):
        check_choice("radius", radius, ("enclosing",))
        c = center if center is not None else inscribed_placement(shape)[0]  # type: ignore
        nz = torch.nonzero(v != 0).to(torch.float64)
        if nz.shape[0] == 0:
            raise ValueError("radius='enclosing' needs a volume with a non-zero voxel")
        far = (nz - torch.tensor(c, dtype=torch.float64, device=nz.device)).abs() + 0.5
        radius = float(torch.sqrt((far * far).sum(dim=1)).max())
    else:
        radius = _check_radius(radius)
    return center, radius  # type: ignore[return-value]


@cpu_call(per_value(lambda volume, order, *a, k=1, **kw: k ** 3 * (order + 1) / 8))
def zernike3d_moments(volume: Any, order: int, *, k: int = 1, quadrature: str = "midpoint",
                      center: Any = None, radius: Any = None, dtype: Any = None,
                      device: Any = None, memory_budget: float | None = None,
                      progress: bool | None = None) -> Zernike3DMoments:
    r"""3-D Zernike moments :math:`\Omega_{nl}^m` of a volume or a batch ``(..., D, H, W)``.

    Builds (or reuses) a :class:`Zernike3DTransform` and applies it.

    Parameters
    ----------
    volume : array_like or torch.Tensor
        Real volume(s) ``(..., D, H, W)``; not modified.
    order : int
        Highest order :math:`N \ge 0`.
    k, quadrature, memory_budget :
        As for :class:`Zernike3DTransform`.
    progress : bool, optional
        As for :meth:`Zernike3DTransform.forward`.
    center : None, "centroid" or sequence of 3 float
        Centre of the ball: the box's centre (default), the volume's intensity-weighted
        centroid (per volume of a batch), or a point ``(d, h, w)`` in index coordinates.
    radius : None, "enclosing" or float
        Radius in voxels: ``min(D, H, W) / 2`` (default), the smallest ball about the centre
        that holds every non-zero voxel whole (per volume), or a number.
    dtype : torch.dtype or str, optional
        Working dtype; default from the input (float64 stays float64, else float32).
    device : str, torch.device, sequence of them or "cuda:all", optional
        Default: the input's device. A list spreads a batch over the devices, or one large
        job over shells of the ball (:mod:`fastmoments.ball.split`); the moments are gathered
        on the first device.

    Returns
    -------
    Zernike3DMoments

    Raises
    ------
    ValueError
        A volume that is not ``(..., D, H, W)``, NaN or infinity, ``order < 0``, a bad
        ``center``/``radius``/``k``/``quadrature``, a ball that holds no voxel.
    TypeError
        Non-integer ``order`` or ``k``, input that is not an array of numbers.

    Examples
    --------
    >>> vol = np.zeros((12, 12, 12)); vol[4:8, 4:8, 4:8] = 1.0
    >>> Om = zernike3d_moments(vol, 6)
    >>> Om.invariants().shape  # ||Omega_nl|| for the 16 pairs (n, l)
    (16,)
    """
    order = check_int("order", order, minimum=0)
    k = check_int("k", k, minimum=1)
    quadrature = check_choice("quadrature", quadrature, QUADRATURES)
    budget = check_memory_budget(memory_budget)
    progress = check_progress(progress)
    multi = device is not None and is_multi(device)
    x, kind = as_tensor(volume, "volume", min_ndim=3, device=None if multi else device,
                        dtype=None if dtype is None else real_dtype(dtype))
    if min(x.shape[-3:]) < 1:
        raise ValueError(f"volume must have at least one voxel per axis, got shape "
                         f"{tuple(x.shape)}")
    shape = tuple(int(s) for s in x.shape[-3:])
    dev = device_key(device) if multi else str(x.device)
    per_volume = isinstance(center, str) or isinstance(radius, str)
    if not per_volume:
        c, r = _check_center(center), _check_radius(radius)
        plan = cached_transform(shape, order, k, quadrature, c, r, x.dtype, dev, budget)
        return _with_kind(plan.forward(x, progress=progress), kind)
    flat = x.reshape(-1, *shape)
    results = []
    for i in range(flat.shape[0]):
        c, r = placement(flat[i], center, radius)
        plan = cached_transform(shape, order, k, quadrature, c, r, x.dtype, dev, budget)
        results.append(plan.forward(flat[i], progress=progress))
    data = torch.stack([m.data for m in results]).reshape(*x.shape[:-3], -1)
    out = Zernike3DMoments(data, results[0].plan, kind)
    out.plans = [m.plan for m in results]
    return out


def _with_kind(moments: Zernike3DMoments, kind: Any) -> Zernike3DMoments:
    moments.kind = kind
    return moments
