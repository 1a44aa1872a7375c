"""Plans for disk transforms: built once for a geometry, applied to batches ``(..., N, N)``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .._array import (
    ArrayKind,
    ChannelMove,
    as_tensor,
    complex_dtype,
    input_shape,
    move_channels,
    numeric_array,
    real_dtype,
    resolve_device,
    same_device,
    to_output,
)
from .._cache import plan_cache
from .._memory import check_memory_budget
from .._progress import check_progress
from .._route import Route
from .._threads import cpu_call, per_value
from .._validate import check_channel_axis, check_choice, check_int, colour_hint
from ..parallel import device_key, multi_device
from .checks import (
    check_disk_pixels,
    check_placed_pixels,
    estimate_disk_memory,
    image_size,
    moment_index,
)
from .engine import DiskEngine
from .families import FAMILIES, DiskFamily, get_family
from .geometric import make_engine
from .indexing import IndexSet
from .placement import Placement, check_center, check_radius, resolve_placement
from .sampling import QUADRATURES, RULES, disk_sampling, placed_sampling
from .split import DiskSplit

__all__ = ["DiskTransform", "PseudoZernikeTransform", "ZernikeTransform", "cached_transform",
           "channels_first", "disk_geometry", "estimate_disk_memory", "placed_forward"]

#: Largest scratch memory (bytes) of a forward transform that is replayed as a CUDA graph:
#: a graph keeps its scratch for as long as its plan keeps it. Larger jobs run eagerly, and
#: their launches are a small share of their time anyway.
GRAPH_SCRATCH = 1 << 30


@multi_device(split=DiskSplit)
class DiskTransform:
    r"""A transform on the unit disk for ``N x N`` images, built once and applied to batches.

    Parameters
    ----------
    family : str
        ``"zernike"`` or ``"pseudo-zernike"`` (the polar harmonic families register more).
    size : int or (int, int)
        Image side ``N``, or the image shape ``(H, W)`` (any shape, with ``center`` and
        ``radius`` placing the disk on it).
    order : int
        Highest order ``T`` (leave it at 0 when ``pairs`` or ``index`` is given: another
        value with them is an error).
    k : int
        Sample points per pixel and axis (thesis Eq. 3.19-3.23).
    quadrature : {"midpoint", "gauss"}
        Sub-pixel rule: the thesis's k x k midpoint sub-regions or Gauss-Legendre.
    rule : {"inscribed", "centre"}
        Which pixels are used: those entirely inside the disk (thesis) or whose centre is.
    method : str, optional
        Radial method (:mod:`fastmoments.disk.radial`); default ``"deng"`` (the thesis's
        recurrence) for full sets on the CPU, ``"jacobi"`` for selections and for full sets
        on a CUDA device with Triton (it runs in the fused kernels of
        :mod:`fastmoments.disk.triton_radial`).
    repetitions : sequence of int, optional
        Compute only these repetitions (all orders of each).
    pairs : sequence of (n, m), optional
        Compute only these moments (selected moments).
    dtype : torch.dtype or str
        Working precision: float32 (default) or float64.
    device : str or torch.device, optional
        Where the work runs (default CPU).
    memory_budget : int or float, optional
        Scratch memory in bytes (or a fraction of free memory if <= 1).
    center : (float, float), optional
        Centre ``(row, col)`` of the disk in pixels (pixel centres at integers); default the
        image centre. A plan is built for one centre: for the centre of mass of each image
        use the one-call functions with ``center="centroid"``.
    radius : float, optional
        Radius of the disk in pixels; default the largest disk around the centre inside
        the image (``N/2`` for the image centre: the inscribed disk). Pixels outside the
        disk (by ``rule``) and parts of the disk outside the image are ignored
        (:mod:`fastmoments.disk.placement`).

    Notes
    -----
    Moments follow the thesis's normalization (Eq. 2.10 / 3.23):
    :math:`A_{nm} = \frac{n+1}{\pi} \sum f\, V^*_{nm}\, \Delta x \Delta y` with
    :math:`\Delta x = \Delta y = 2/(Nk)` (:math:`1/(kR)` for a disk of radius :math:`R`
    pixels); the two-stage engine is described in :mod:`fastmoments.disk.engine`.
    """

    def __init__(self, family: str | DiskFamily, size: int | tuple[int, int], order: int = 0,
                 *, k: int = 1,
                 quadrature: str = "midpoint", rule: str = "inscribed", method: str | None = None,
                 repetitions: Sequence[int] | None = None,
                 pairs: Sequence[tuple[int, int]] | None = None,
                 dtype: torch.dtype | str = torch.float32, device: Any = None,
                 memory_budget: float | None = None, index: IndexSet | None = None,
                 center: Any = None, radius: Any = None) -> None:
        if isinstance(family, str):
            self.family = get_family(family)
        elif isinstance(family, DiskFamily):
            self.family = family
        else:
            raise TypeError(f"family must be a family name, one of {tuple(FAMILIES)}, or a "
                            f"DiskFamily, got {family!r}")
        self.shape = plan_shape(size)
        self.placement: Placement | None = resolve_placement(
            self.shape, check_center(center, self.shape, allow_centroid=False),
            check_radius(radius))
        #: the image side ``N`` of square images (None for ``H != W``)
        self.size = self.shape[0] if self.shape[0] == self.shape[1] else None
        self.k = check_int("k", k, minimum=1)
        self.quadrature = check_choice("quadrature", quadrature, QUADRATURES)
        self.rule = check_choice("rule", rule, RULES)
        self.dtype = real_dtype(dtype)
        self.device = resolve_device(device)
        memory_budget = check_memory_budget(memory_budget)
        if index is not None and (pairs is not None or repetitions is not None):
            raise ValueError("give index alone, not with pairs or repetitions")
        if (pairs is not None or index is not None) and check_int("order", order) != 0:
            raise ValueError(f"give either order or pairs, not both (got order={order})")
        if pairs is not None and repetitions is not None:
            raise ValueError("give repetitions only with order, not with pairs")
        selection = pairs is not None or repetitions is not None
        self.method = self.family.check_method(method, selection=selection, device=self.device)
        if self.placement is not None and self.method.startswith("geometric"):
            raise ValueError(f"method={self.method!r} maps the whole N x N image onto the disk; "
                             "with center= or radius= (or a non-square image) use another "
                             "method")
        self.index = moment_index(self.family, self.shape, order, repetitions, pairs, index,
                                  k=self.k, dtype=self.dtype, device=self.device,
                                  memory_budget=memory_budget)
        self.order = self.index.max_order
        self._budget = memory_budget
        if self.placement is None:
            check_disk_pixels(self.size, self.rule)
            self.sampling = disk_sampling(self.size, self.k, self.quadrature, self.rule)
        else:
            self.sampling = placed_sampling(self.placement, self.k, self.quadrature,
                                            self.rule)
            check_placed_pixels(self.placement, self.sampling)
        self.engine = make_engine(self.sampling, self.family, self.index, self.method,
                                  self.dtype, self.device, memory_budget)
        self._recon_engine: DiskEngine | None = None

    # ------------------------------------------------------------------ helpers
    @property
    def route(self) -> Route:
        """What the forward transform runs (:mod:`fastmoments.disk.routes`), decided when
        the plan was built: the radial method, the backend of the angular stage and the
        radial stage (``"compressed"``, ``"fused"``, ``"table"`` or ``"streamed"``), for a
        call of one image (:meth:`route_for` for a batch)."""
        return self.route_for(1)

    def route_for(self, batch: int) -> Route:
        """The route a forward call of ``batch`` images takes (the same on every call)."""
        return self.engine.route_for(batch)

    def __repr__(self) -> str:
        dtype = str(self.dtype).replace("torch.", "")
        return (f"{type(self).__name__}({self.family.name!r}, size={self._size_text()}, "
                f"order={self.order}, moments={self.index.size}, k={self.k}, "
                f"dtype={dtype}, device={self.device}, route={self.route})")

    def _size_text(self) -> str:
        """``N``, or the shape, centre and radius of a placed disk (for ``repr``)."""
        p = self.placement
        if p is None:
            return str(self.size)
        return f"{p.shape}, center={p.centre}, radius={p.radius}"

    @property
    def center(self) -> tuple[float, float]:
        """Centre ``(row, col)`` of the disk in pixels."""
        if self.placement is None:
            return ((self.size - 1) / 2, (self.size - 1) / 2)
        return self.placement.centre

    @property
    def radius(self) -> float:
        """Radius of the disk in pixels."""
        return self.size / 2 if self.placement is None else self.placement.radius

    @property
    def mask(self) -> np.ndarray:
        """Pixels used by the transform (``(H, W)`` bool)."""
        return self.sampling.mask

    def _images(self, image: Any) -> tuple[torch.Tensor, Any, tuple[int, ...]]:
        x, kind = as_tensor(image, "image", min_ndim=2, dtype=self.dtype, device=self.device)
        if self.placement is not None:
            H, W = self.shape
            if tuple(x.shape[-2:]) != (H, W):
                raise ValueError(colour_hint(x.shape) or
                                 f"image must be {H}x{W} for this plan, got shape "
                                 f"{tuple(x.shape)}")
            return x.reshape(-1, H * W), kind, tuple(x.shape[:-2])
        if x.shape[-1] != x.shape[-2]:
            raise ValueError(colour_hint(x.shape) or
                             f"image must be square (..., N, N) to map onto the unit disk, got "
                             f"shape {tuple(x.shape)}; crop or pad it first")
        if x.shape[-1] != self.size:
            raise ValueError(f"image must be {self.size}x{self.size} for this plan, got shape "
                             f"{tuple(x.shape)}")
        batch = tuple(x.shape[:-2])
        return x.reshape(-1, self.size * self.size), kind, batch

    def recon_engine(self) -> DiskEngine:
        """Engine on the pixel centres (one point per pixel) for reconstruction."""
        if self._recon_engine is None and self.k == 1 and self.quadrature == "midpoint":
            self._recon_engine = self.engine  # the sample points are the pixel centres
        if self._recon_engine is None:
            if self.placement is None:
                centre = disk_sampling(self.size, 1, "midpoint", self.rule)
            else:
                centre = placed_sampling(self.placement, 1, "midpoint", self.rule)
            self._recon_engine = make_engine(centre, self.family, self.index, self.method,
                                             self.dtype, self.device, self._budget)
        return self._recon_engine

    # ------------------------------------------------------------------ transforms
    @cpu_call(per_value(lambda self, *a, **k: self.k ** 2 * (self.order + 1), arg=1))
    def forward(self, image: Any, *, progress: bool | None = None,
                channel_axis: int | None = None):
        """Moments of ``image`` shaped ``(..., N, N)`` (``(..., H, W)``: the plan's
        :attr:`shape`); returns :class:`DiskMoments`.

        ``progress``: a tqdm bar over the radius groups; ``None`` (default) shows it only for
        large jobs that run for more than a second (see
        :data:`fastmoments.disk.engine.PROGRESS_FROM`), ``False`` never.

        ``channel_axis`` (scikit-image's convention): the axis of ``image`` that holds colour
        channels, e.g. ``-1`` for ``(H, W, 3)``. Each channel is transformed as an image of
        the batch; the channels become the last batch axis of the moments (``(H, W, 3)`` gives
        ``batch_shape == (3,)``, ``(B, H, W, 3)`` gives ``(B, 3)``), and
        :meth:`DiskMoments.reconstruct` puts them back where they were in ``image``.
        """
        from .moments import DiskMoments

        progress = check_progress(progress)
        image, move = channels_first(image, channel_axis)
        replayed = self._replayed_forward(image, progress)
        if replayed is not None:
            coef, kind, batch = replayed
        else:
            x, kind, batch = self._images(image)
            coef = self.engine.forward(x, progress)
        coef = coef.reshape(*batch, self.index.n_cols, self.index.n_rows)
        out = DiskMoments(coef, self, kind)
        out.channels = move
        return out

    __call__ = forward

    def _replayed_forward(self, image: Any, progress: bool | None
                          ) -> tuple[torch.Tensor, Any, tuple[int, ...]] | None:
        """The forward transform from a replayed CUDA graph (see
        :mod:`fastmoments._cuda_graph`: captured on the third call of a shape, the NaN
        check inside the graph), or None to run it eagerly. Only for a C-contiguous CUDA
        tensor already in the plan's dtype, shape and device, and small jobs: a graph keeps
        its scratch memory for as long as the plan keeps it."""
        from .._cuda_graph import graph_cache

        # progress=False asks for no bar, which a replay never shows: eligible like None
        if not (type(image) is torch.Tensor and image.is_cuda
                and (progress is None or progress is False) and image.dtype == self.dtype
                and same_device(image.device, self.device) and image.ndim >= 2
                and tuple(image.shape[-2:]) == self.shape):
            return None
        batch = tuple(image.shape[:-2])
        B = math.prod(batch)
        scratch = getattr(self.engine, "scratch_bytes", None)
        if B == 0 or scratch is None or scratch(B) > GRAPH_SCRATCH:
            return None
        x = image.reshape(B, self.shape[0] * self.shape[1])
        eng = self.engine
        res = graph_cache(self).call(
            x, ("disk-forward",), lambda t: eng.forward(t, False), True,
            B * self.index.n_cols * self.index.n_rows * 2 * x.element_size())
        if res is None:
            return None
        return res[0], ArrayKind(False, image.device), batch

    def _coef_tensor(self, moments: Any) -> tuple[torch.Tensor, Any, tuple[int, ...]]:
        from .moments import DiskMoments

        if isinstance(moments, DiskMoments):
            self.check_compatible(moments.plan)
            data = moments.data.to(device=self.device, dtype=complex_dtype(self.dtype))
            return data, moments.kind, moments.batch_shape
        t, kind = as_tensor(moments, "moments", min_ndim=2, allow_complex=True,
                            dtype=self.dtype, device=self.device)
        shape = (self.index.n_cols, self.index.n_rows)
        if tuple(t.shape[-2:]) != shape:
            raise ValueError(f"moments must have shape (..., {shape[0]}, {shape[1]}), got "
                             f"{tuple(t.shape)}")
        return t, kind, tuple(t.shape[:-2])

    # ------------------------------------------------------------------ compatibility
    def coefficient_key(self) -> dict[str, Any]:
        """What decides the coefficients a plan computes, by name.

        Two plans give the same coefficients (up to rounding) exactly when these agree: the
        family (its name; for the polar harmonic transforms the kind and the exponent ``s``),
        the image shape and the disk's placement on it, the sampling (``k``, ``quadrature``,
        ``rule``) and the set of stored
        moments in its layout (order, repetitions or pairs). The radial ``method``, ``eps``,
        dtype, device and memory budget change how the sums are computed and to what
        rounding, not which sums: moments are cast to the plan's dtype and moved to its
        device.
        """
        return {"family": self.family.key, "size": self.size, "placement": self.placement,
                "k": self.k, "quadrature": self.quadrature, "rule": self.rule,
                "moments": self.index}

    def check_compatible(self, other: DiskTransform, name: str = "moments") -> None:
        """Raise a ``ValueError`` naming what differs when ``other`` computes other
        coefficients than this plan (see :meth:`coefficient_key`)."""
        if not isinstance(other, DiskTransform):
            raise TypeError(f"{name} must come from a disk transform plan, got "
                            f"{type(other).__name__}")
        mine, theirs = self.coefficient_key(), other.coefficient_key()
        diffs = []
        for key, value in mine.items():
            if theirs[key] != value:
                if key == "moments":
                    diffs.append(f"another set of moments ({theirs[key].size} moments up to "
                                 f"order {theirs[key].max_order}, this plan has {value.size} "
                                 f"up to order {value.max_order})")
                elif key == "family":
                    diffs.append(f"family {other.family.name!r} (this plan: "
                                 f"{self.family.name!r})")
                else:
                    diffs.append(f"{key}={theirs[key]!r} (this plan: {value!r})")
        if diffs:
            raise ValueError(f"{name} were computed by a plan with {'; '.join(diffs)}: they "
                             "are other coefficients, so this plan cannot use them")

    @cpu_call(per_value(lambda self, *a, **k: math.prod(self.shape) * (self.order + 1)
                        / max(1, self.index.size), arg=1))
    def adjoint(self, moments: Any) -> Any:
        r"""The adjoint of :meth:`forward` for the real inner product on images and
        :math:`\mathrm{Re}\langle a, b\rangle` on the stored coefficients."""
        coef, kind, batch = self._coef_tensor(moments)
        gamma = torch.ones(self.index.n_cols, device=self.device)
        img = self.engine.synthesize(coef.reshape(-1, *coef.shape[-2:]), gamma=gamma,
                                     weighted=True, normalized=True)
        return to_output(img.reshape(*batch, *self.shape), kind)

    def partial_plan(self, index: IndexSet, device: torch.device,
                     arguments: dict[str, Any]) -> DiskTransform:
        """The plan of some of this plan's columns on ``device``, for a split over devices.

        ``arguments`` are those this plan was built with (by name): the options that do not
        name the moments are passed on.
        """
        keep = ("k", "quadrature", "rule", "method", "dtype", "memory_budget")
        return DiskTransform(self.family, self.shape, 0, index=index, device=device,
                             **self._placement_arguments(),
                             **{k: arguments[k] for k in keep if k in arguments})

    def _placement_arguments(self) -> dict[str, Any]:
        """``center`` and ``radius`` of this plan, for a plan of the same geometry."""
        p = self.placement
        return {} if p is None else {"center": p.centre, "radius": p.radius}

    @cpu_call(per_value(lambda self, *a, **k: math.prod(self.shape) * (self.order + 1)
                        / max(1, self.index.size), arg=1))
    def synthesize(self, coef: torch.Tensor, gamma: torch.Tensor) -> torch.Tensor:
        """Reconstruct at pixel centres from ``(B, cols, rows)`` coefficients (unmasked
        pixels are 0)."""
        eng = self.recon_engine()
        return eng.synthesize(coef, gamma=gamma, weighted=False, normalized=False)


class ZernikeTransform(DiskTransform):
    """Zernike moments plan: ``ZernikeTransform(size, order, k=..., ...)``.

    Examples
    --------
    >>> import numpy as np
    >>> plan = ZernikeTransform(32, 10)
    >>> A = plan.forward(np.ones((32, 32)))
    >>> # A_00 of a constant image is (0+1)/pi times the area of the used pixels
    >>> bool(np.isclose(A[0, 0].real * np.pi, plan.mask.sum() * (2 / 32) ** 2))
    True
    >>> # a disk of radius 12.5 pixels centred on pixel (20, 31) of 40 x 60 images
    >>> placed = ZernikeTransform((40, 60), 10, center=(20, 31), radius=12.5, rule="centre")
    >>> B = placed.forward(np.ones((40, 60)))
    >>> bool(np.isclose(B[0, 0].real * np.pi, placed.mask.sum() / 12.5**2))
    True
    """

    def __init__(self, size: int | tuple[int, int], order: int = 0, **kwargs: Any) -> None:
        super().__init__("zernike", size, order, **kwargs)


class PseudoZernikeTransform(DiskTransform):
    """Pseudo-Zernike moments plan: ``PseudoZernikeTransform(size, order, k=..., ...)``."""

    def __init__(self, size: int | tuple[int, int], order: int = 0, **kwargs: Any) -> None:
        super().__init__("pseudo-zernike", size, order, **kwargs)


@plan_cache(maxsize=8)
def _cached(family: str, size: int, order: int, k: int, quadrature: str, rule: str,
            method: str | None, repetitions: tuple[int, ...] | None,
            pairs: tuple[tuple[int, int], ...] | None, dtype: torch.dtype, device: str,
            budget: float | None, placement: Placement | None = None) -> DiskTransform:
    return transform_for(family, size, order, k=k, quadrature=quadrature, rule=rule,
                         method=method, repetitions=repetitions, pairs=pairs, dtype=dtype,
                         device=device, memory_budget=budget, placement=placement)


def transform_for(family: str, size: int, order: int, *, placement: Placement | None,
                  **options: Any) -> DiskTransform:
    """A new plan of an ``N x N`` image (``placement=None``) or of a placed disk."""
    if placement is None:
        return DiskTransform(family, size, order, **options)
    return DiskTransform(family, placement.shape, order, center=placement.centre,
                         radius=placement.radius, **options)


def cached_transform(family: str, size: int, order: int, *, k: int, quadrature: str, rule: str,
                     method: str | None, repetitions: Sequence[int] | None,
                     pairs: Sequence[tuple[int, int]] | None, dtype: torch.dtype,
                     device: torch.device, memory_budget: float | None,
                     placement: Placement | None = None) -> DiskTransform:
    """A plan from a small cache keyed on plain values (never tensors); ``placement``
    (a plain-valued :class:`~fastmoments.disk.placement.Placement`) for a disk placed on an
    image of any shape, ``size`` is then ignored."""
    reps = None if repetitions is None else tuple(int(m) for m in repetitions)
    prs = None if pairs is None else tuple((int(n), int(m)) for n, m in pairs)
    if placement is not None:
        size = 0
    return _cached(family, size, order, k, quadrature, rule, method, reps, prs, dtype,
                   device_key(device), memory_budget, placement)


def channels_first(image: Any, channel_axis: Any, name: str = "image"
                   ) -> tuple[Any, ChannelMove | None]:
    """Check ``channel_axis`` against ``image`` and move the channels in front of the two
    image axes (a view), so that they are the last batch axis; ``(image, None)`` without
    channels. See :func:`fastmoments._array.move_channels`.

    >>> import numpy as np
    >>> x, move = channels_first(np.zeros((16, 16, 3)), -1)
    >>> x.shape, move.axis
    ((3, 16, 16), 2)
    """
    if channel_axis is None:
        return image, None
    shape = input_shape(image, "image")
    axis = check_channel_axis(channel_axis, len(shape), 2, name)
    return move_channels(image, axis, 2)


def plan_shape(size: Any) -> tuple[int, int]:
    """``(N, N)`` for an int ``size``, ``(H, W)`` for a pair; a ``TypeError`` or
    ``ValueError`` naming ``size`` otherwise.

    >>> plan_shape(16), plan_shape((12, 20))
    ((16, 16), (12, 20))
    """
    if isinstance(size, (tuple, list)) or (isinstance(size, torch.Size)):
        if len(size) != 2:
            raise ValueError(f"size must be an int N or an image shape (H, W), got {size!r}")
        return (check_int("size[0]", size[0], minimum=1), check_int("size[1]", size[1],
                                                                     minimum=1))
    n = check_int("size", size, minimum=1)
    return (n, n)


def disk_geometry(shape: Sequence[int], center: Any, radius: float | None, rule: str,
                  name: str = "image") -> tuple[int, Placement | None]:
    """The side ``N`` (default mapping, ``placement`` None) or the :class:`Placement` of
    checked ``center`` (a point or None) and ``radius`` on images of ``shape``
    ``(..., H, W)``. Without ``center`` and ``radius`` the image must be square (the
    default mapping, and its errors); with either, any shape takes a disk.

    >>> disk_geometry((4, 16, 16), None, None, "inscribed")
    (16, None)
    >>> disk_geometry((16, 24), (7.5, 11.5), None, "inscribed")[1]
    Placement(height=16, width=24, centre=(7.5, 11.5), radius=8.0)
    """
    shape = tuple(int(s) for s in shape)
    if center is None and radius is None:
        return image_size(shape, name, rule=rule), None
    if len(shape) < 2:
        raise ValueError(f"{name} must be 2-D or a batch (..., H, W), got shape {shape}")
    hint = colour_hint(shape, name)
    if hint:
        raise ValueError(hint)
    if shape[-1] == 0 or shape[-2] == 0:
        raise ValueError(f"{name} must have at least one pixel, got shape {shape}")
    placement = resolve_placement(shape[-2:], center, radius)
    if placement is None:
        return image_size(shape, name, rule=rule), None
    return 0, placement


def placed_forward(image: Any, *, center: Any, radius: Any, rule: str,
                   plan_for: Any, progress: bool | None = None) -> Any:
    """Moments of ``image`` on the disk that ``center`` and ``radius`` place on it.

    ``plan_for(size, placement, cached)`` returns the plan of one geometry. For
    ``center="centroid"`` the centre of mass of each image of the batch is computed
    (:func:`~fastmoments.disk.placement.centroid`), the images are grouped by equal
    centre, and each group runs through the plan of its centre (built for the call, not
    kept in the plan cache, since centres of mass rarely repeat); the moments are put back
    in batch order. They keep every plan: :attr:`DiskMoments.center` gives each image's
    centre and ``reconstruct()`` uses each image's own disk.
    """
    center = check_center(center)
    radius = check_radius(radius)
    if not isinstance(image, torch.Tensor):
        image = numeric_array(image, "image")
    shape = input_shape(image, "image")
    if center != "centroid":
        size, placement = disk_geometry(shape, center, radius, rule)
        return plan_for(size, placement, True).forward(image, progress=progress)
    from .placement import centroid

    disk_geometry(shape, None, 1.0, rule)  # the shape's errors
    H, W = shape[-2:]
    batch = tuple(shape[:-2])
    flat = image.reshape(-1, H, W)
    cents = centroid(flat) if flat.shape[0] else np.zeros((0, 2))
    if cents.shape[0] == 0:
        size, placement = disk_geometry(shape, None, radius, rule)
        return plan_for(size, placement, True).forward(image, progress=progress)
    uniq, inverse = np.unique(cents, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    parts = []
    for u in range(uniq.shape[0]):
        idx = np.flatnonzero(inverse == u)
        placement = resolve_placement((H, W), (float(uniq[u, 0]), float(uniq[u, 1])), radius)
        plan = plan_for(H if placement is None else 0, placement, placement is None)
        sel = (torch.as_tensor(idx, device=flat.device) if isinstance(flat, torch.Tensor)
               else idx)
        parts.append((plan, idx, plan.forward(flat[sel], progress=progress)))
    first = parts[0][2]
    if len(parts) == 1:
        data = first.data
    else:
        data = torch.empty((cents.shape[0], *first.data.shape[1:]), dtype=first.data.dtype,
                           device=first.data.device)
        for _plan, idx, out in parts:
            data[torch.as_tensor(idx, device=data.device)] = out.data
    moments = type(first)(data.reshape(*batch, *data.shape[1:]), parts[0][0], first.kind)
    moments.placed = [(plan, idx) for plan, idx, _out in parts]
    moments.centers = cents.reshape(*batch, 2)
    return moments
