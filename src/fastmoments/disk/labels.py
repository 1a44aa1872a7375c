r"""Moments of every object of a label image in one pass over its pixels, on the objects' own
pixels (no resampling), for all objects together.

Geometry (:mod:`fastmoments.disk.label_geometry`: one pass over the label image, all labels at once)
    pixel count, centroid (mean of the pixel centres, pixel :math:`(i, j)` at row :math:`i`,
    column :math:`j`), bounding box, and each object's *centre* :math:`c` and *radius*
    :math:`R` by ``centre=``:

    * ``"enclosing"`` (default): the minimum enclosing circle of the object's pixel centres
      (:mod:`fastmoments.disk.enclosing`), CellProfiler's choice;
    * ``"centroid-enclosing"``: the centroid, and the smallest radius that holds every pixel
      square, :math:`R = \max_p \sqrt{(|i_p - \bar i| + \frac12)^2 + (|j_p - \bar j| +
      \frac12)^2}`;
    * ``"area"``: the centroid and :math:`R = \sqrt{A/\pi}` for an area of :math:`A` pixels.

Moments (a second pass over the pixels)
    every labelled pixel :math:`p` of object :math:`L` gets
    :math:`\rho_p = |p - c_L| / R_L` and its angle; pixels outside the unit disk are left
    out (for the pixels on its edge, see the last point below). Two routes, chosen once per
    call by :func:`choose_route` and shown as ``.route``:

    * ``torch`` (every family, CPU and CUDA): row blocks of the image within the memory
      budget; the kernel values of all moments at all pixels of a block are summed per
      object by one ``index_add_`` over the object index of each pixel. The radial
      functions are the disk families' (:mod:`fastmoments.disk.radial` for Zernike and
      pseudo-Zernike, the polar harmonic families of :mod:`fastmoments.disk.pht`),
      evaluated at each pixel's :math:`\rho`.
    * ``numba`` (Zernike on the CPU, the default there): compiled loops that read the label
      image in place and keep each pixel's values in registers
      (:mod:`fastmoments.disk._numba_labels`), sums in float64.
    * ``triton`` (Zernike on a CUDA GPU where Triton is installed, the default there): one
      program per object's bounding box sums its pixels' kernel values, the radial
      functions from the Jacobi recurrence (:mod:`fastmoments.disk._triton_labels`), in the
      working dtype.

``convention="standard"`` (default)
    .. math:: A_{nm} = \frac{c_{nm}}{R^2} \sum_{p \in L,\ \rho_p \le 1}
              f_p\, R^*_{nm}(\rho_p)\, e^{-im\theta_p},

    with the family's normalisation :math:`c_{nm}` (:math:`(n+1)/\pi` for Zernike and
    pseudo-Zernike) and the pixel area :math:`1/R^2` in disk units, so that :math:`A_{nm}`
    approximates the continuous moment of the object mapped onto the unit disk;
    :math:`\theta = \operatorname{atan2}(y, x)` with :math:`x` along the columns and
    :math:`y` up the rows, the disk engine's orientation. :math:`f_p` is the intensity
    (``image``) or 1 (shape).

``convention="cellprofiler"``
    The Zernike features of CellProfiler (``MeasureObjectSizeShape`` without an image,
    ``MeasureObjectIntensityDistribution`` with one), which call
    ``centrosome.zernike`` (Boland, Markey and Murphy, Cytometry 33, 1998): centre and
    radius of the minimum enclosing circle of the pixel centres, the same pixels
    (:math:`\rho^2 \le 1`, with :math:`\rho^2` computed as
    :math:`((j - c_j)/R)^2 + ((i - c_i)/R)^2`), and

    .. math:: Z_{nm} = \frac{1}{\pi R^2} \Bigl|\sum_p R_{nm}(\rho_p)\,
              (\hat y_p + i \hat x_p)^m / \rho_p^m\Bigr|
              \quad\text{(shape)},\qquad
              \frac{1}{A}\Bigl|\sum_p f_p\, R_{nm}(\rho_p)\,(\hat y_p + i \hat x_p)^m /
              \rho_p^m\Bigr| \quad\text{(intensity)},

    :math:`\hat y = (i - c_i)/R`, :math:`\hat x = (j - c_j)/R`, :math:`A` the object's pixel
    count; the intensity phase is :math:`\operatorname{atan2}(\Re S, \Im S)` of that sum
    :math:`S`. The orders are :math:`n \le` ``order`` with :math:`m \ge 0` (30 pairs for the
    default degree 9), named ``Zernike_n_m`` (shape) and
    ``RadialDistribution_ZernikeMagnitude_<image>_n_m``, ``..._ZernikePhase_...``
    (intensity) as CellProfiler names them.

How the two differ
    * *normalisation*: CellProfiler's shape feature is :math:`|A_{nm}| / (n+1)` of the
      standard one; its intensity magnitude divides by the pixel count :math:`A` instead of
      :math:`\pi R^2` (and so is :math:`|A_{nm}| \pi R^2 / ((n+1) A)`);
    * *angle*: CellProfiler measures the angle from the row axis towards the column axis and
      does not conjugate the kernel (:math:`e^{+im\varphi}`, :math:`\varphi =
      \operatorname{atan2}(\hat x, \hat y)`): magnitudes are equal, phases are not;
    * *centre and radius*: the same minimum enclosing circle by default; the standard
      convention offers the centroid-centred choices too;
    * *pixels*: pixel centres at integer coordinates in both, but the pixels that define
      the minimum enclosing circle (three or more per object) lie exactly on it, and
      CellProfiler's test :math:`\rho^2 \le 1` on the rounded :math:`\rho^2` drops some of
      them, depending on the rounding of the centre and radius (so its features change
      when the object is translated or turned). The standard convention keeps every pixel
      within :data:`ON_CIRCLE` of the circle: the closed disk, whatever the rounding.

An object of one pixel has radius 0 under ``"enclosing"``: its moments are NaN (CellProfiler
gives NaN too).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._array import resolve_device, working_dtype
from .._cache import plan_cache
from .._memory import check_memory_budget
from .._progress import check_progress, progress_bar
from .._route import Route
from .._triton import available as triton_ok
from .._validate import check_choice, check_int
from .families import FAMILIES
from .label_geometry import (
    CENTRES,
    LabelGeometry,
    ObjectRows,
    _as_host_array,
    _block,
    _block_budget,
    _check_finite,
    _check_image,
    _check_labels,
    _cpu_geometry,
    _device_geometry,
    _geometry,
    _Mapper,
    _pixels,
    _row_blocks,
    _whole_on_device,
    label_geometry,
    memory_budget_bytes,
)

__all__ = [
    "CENTRES",
    "CONVENTIONS",
    "METHODS",
    "LabelGeometry",
    "ObjectMoments",
    "choose_route",
    "label_geometry",
    "object_moments",
    "object_table",
]

#: ``convention=`` choices.
CONVENTIONS = ("standard", "cellprofiler")
#: ``kind=`` choices of the standard convention.
KINDS = ("magnitude", "complex")
#: ``method=`` choices (:func:`choose_route`).
METHODS = ("auto", "torch", "numba")

#: The standard convention keeps pixels with rho^2 <= 1 + ON_CIRCLE: the pixel centres that
#: define a minimum enclosing circle lie on it, and rounding puts their computed rho^2 on
#: either side of 1 by a few units of 1e-16 (times the coordinates over the radius).
ON_CIRCLE = 1e-10

# scratch bytes per labelled pixel besides the radial buffers and the moment sums: indices,
# coordinates, radius, angle, weights (about 16 numbers of 8 bytes)
_PIXEL_BYTES = 128


# ---------------------------------------------------------------------------- moments
@dataclass(frozen=True, eq=False)
class _MomentPlan:
    """What one (family, order) computes: the index set, the pairs in output order, the
    layout of the radial steps, the normalisation."""

    family: Any
    method: str
    index: Any
    pairs: tuple[tuple[int, int], ...]
    steps: tuple[int, ...]  # rows of each radial step, in the order the steps come
    gather: np.ndarray  # (K,) output position k <- position in step order
    norm: np.ndarray  # (K,) c_nm
    radial_floats: int  # float scratch per pixel of the radial recurrence


def check_convention(convention: str, family: str, centre: str) -> None:
    """CellProfiler's convention is Zernike moments in the minimum enclosing circle: refuse
    another family or centre with it (a ``ValueError`` naming both)."""
    if convention == "cellprofiler" and (family != "zernike" or centre != "enclosing"):
        raise ValueError(f"convention='cellprofiler' computes Zernike moments in the minimum "
                         f"enclosing circle: family must be 'zernike' and centre "
                         f"'enclosing', got family={family!r}, centre={centre!r}")


@plan_cache(maxsize=16)
def _moment_plan(family_name: str, order: int) -> _MomentPlan:
    fam = FAMILIES[family_name]
    index = fam.full(order)
    pairs = tuple(sorted(index.pairs(), key=lambda p: (p[0], p[1])))
    pos = {p: k for k, p in enumerate(pairs)}
    slot = np.full((index.n_cols, index.n_rows), -1, dtype=np.int64)
    for c, (m, col) in enumerate(zip(index.ms, index.ns, strict=True)):
        for j, n in enumerate(col):
            slot[c, j] = pos[(n, m)]
    # the radial steps come in a fixed order whatever the radii: the sums are laid out in
    # that order (each step fills a contiguous block) and put in (n, m) order at the end
    sizes, where = [], []
    probe = torch.full((1,), 0.5, dtype=torch.float64)
    for cols, rows, _vals in fam.radial_steps(fam.default_method, probe, index):
        c = np.arange(index.n_cols)[cols] if isinstance(cols, slice) else cols.numpy()
        sizes.append(len(c))
        where.extend(slot[c, rows.numpy()])
    gather = np.argsort(np.asarray(where))
    norm_table = fam.norm(index)
    norm = np.zeros(len(pairs))
    for (n, m), k in pos.items():
        c, j = index.position(n, m)
        norm[k] = norm_table[c, j]
    method = fam.default_method
    if family_name == "zernike":
        floats = 3 * (order // 2 + 2)
    elif family_name == "pseudo-zernike":
        floats = 4 * (order + 2)
    else:
        floats = 4 * index.n_cols  # one row of complex values per step
    return _MomentPlan(fam, method, index, pairs, tuple(sizes), gather, norm, floats)


def choose_route(family: str, device: torch.device, method: str) -> Route:
    """The route of the pixel sums, decided once per call from the options (never from
    timing): the fused numba kernel (:mod:`._numba_labels`) for Zernike moments on the CPU,
    the Triton kernel (:func:`._triton_labels.zernike_box_sums`) for Zernike moments on a
    CUDA device where Triton is installed, else the torch path (every family, CPU and
    CUDA; ``method="torch"`` asks for it)."""
    if method == "numba":
        if device.type != "cpu" or family != "zernike":
            raise ValueError(f"method='numba' computes Zernike moments on the CPU, got "
                             f"family={family!r} on {device.type!r}; use method='torch'")
        return Route("deng", "numba", "zernike_label_sums", "method='numba'")
    if method == "auto" and device.type == "cpu" and family == "zernike":
        return Route("deng", "numba", "zernike_label_sums",
                     "Zernike on the CPU: one fused pass over the pixels")
    if method == "auto" and device.type == "cuda" and family == "zernike" and triton_ok(device):
        return Route("jacobi", "triton", "object_box_sums",
                     "Zernike on a GPU: one program per object's bounding box")
    reason = "method='torch'" if method == "torch" else (
        "every labelled pixel once, its moments summed per object")
    return Route(FAMILIES[family].default_method, "torch", "pixels:index_add", reason)


@dataclass(frozen=True, eq=False)
class ObjectMoments:
    """Moments of every object of a label image, one row per label.

    Attributes
    ----------
    geometry : LabelGeometry
        Labels, areas, centroids, bounding boxes, disk centres and radii.
    pairs : tuple of (int, int)
        The ``(n, m)`` of each column of :attr:`values` (``m >= 0``).
    values : numpy.ndarray or torch.Tensor
        ``(n_objects, K)`` complex sums: the standard moments :math:`A_{nm}`, or
        CellProfiler's sums :math:`S` before magnitude and phase (module notes).
    names : list of str
        Column names of :attr:`features`.
    features : numpy.ndarray or torch.Tensor
        ``(n_objects, n_features)`` real features: magnitudes (and phases for CellProfiler's
        intensity Zernikes), or real and imaginary parts for ``kind="complex"``.
    convention, family, kind : str
        The options that made them.
    route : Route
        How they were computed.
    normalize : str or None
        ``"z00"`` when :func:`fastmoments.object_features` divided each row by its
        :math:`|A_{00}|`, else None.
    channels : int or None
        With the colour channels of an intensity image (``object_features(...,
        channel_axis=)``), their number ``C``: :attr:`features` holds each object's ``C``
        feature vectors side by side, :attr:`values` is ``(n_objects, C, K)``. Else None.
    """

    geometry: LabelGeometry
    pairs: tuple[tuple[int, int], ...]
    values: Any
    names: list[str]
    features: Any
    convention: str
    family: str
    kind: str
    route: Route
    normalize: str | None = None
    channels: int | None = None

    @property
    def labels(self) -> np.ndarray:
        """``(n_objects,)`` the label of each row, increasing."""
        return self.geometry.labels

    def __len__(self) -> int:
        return len(self.geometry)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        feats = self.features
        if isinstance(feats, torch.Tensor):
            feats = feats.detach().cpu().numpy()
        return np.asarray(feats, dtype=dtype)

    def to_dict(self) -> dict[str, np.ndarray]:
        """One NumPy array per column: ``label``, ``area``, ``centre_row``, ``centre_col``,
        ``radius``, then the features (complex columns for ``kind="complex"``)."""
        g = self.geometry
        out: dict[str, np.ndarray] = {
            "label": g.labels, "area": g.area, "centre_row": g.centre[:, 0],
            "centre_col": g.centre[:, 1], "radius": g.radius}
        feats = self.features
        if isinstance(feats, torch.Tensor):
            feats = feats.detach().cpu().numpy()
        for k, name in enumerate(self.names):
            out[name] = np.asarray(feats[:, k])
        return out

    def to_frame(self) -> Any:
        """:meth:`to_dict` as a pandas DataFrame (one row per label)."""
        import pandas as pd

        return pd.DataFrame(self.to_dict())

    def __repr__(self) -> str:
        chans = "" if self.channels is None else f" channels={self.channels}"
        return (f"<ObjectMoments objects={len(self)} features={len(self.names)}{chans} "
                f"family={self.family} convention={self.convention} route={self.route}>")


#: The fused CPU kernel reads each object's pixels from its bounding box
#: (:func:`._numba_labels.zernike_box_sums`: no scratch, and only the boxes are read) when
#: the boxes together cover at most this many times the image (objects that hold others in
#: their box, such as rings or long diagonals, make them overlap); else it sorts the
#: labelled pixels of bands of rows by object (:func:`._numba_labels.zernike_image_sums`,
#: two passes over the image). On the 5120 x 5120 nuclei set (boxes 1.4 times the labelled
#: pixels, 0.4 times the image; one thread, degree 9) the boxes pixel by pixel and the bands
#: took the same time within this shared machine's noise (0.12-0.16 s each); the boxes row
#: by row (:data:`ROW_ORDER`) take 0.04-0.06 s. With the rows of the one-pass geometry the
#: boxes are skipped (:func:`_rows_sums`, one thread: shape 17 ms, intensity 41-46 ms).
BOX_COVER = 2.0
#: Up to this degree the boxes go row by row through the monomial sums
#: (:func:`._numba_rowsums.zernike_row_sums`); above it pixel by pixel
#: (:func:`._numba_labels.zernike_box_sums`). The monomial coefficients grow about fourfold
#: a degree (840 at degree 9, 3,780 at 10, 27,720 at 12), and the sums' rounding with them:
#: on the 512 x 512 nuclei set the two agree to 9e-15 times the pixel count at degree 9,
#: 3e-14 at 10, 1.3e-13 at 12, 2e-12 at 16.
ROW_ORDER = 10


def _numba_sums(lab: Any, img: Any, geo: LabelGeometry, plan: _MomentPlan, convention: str,
                dt: torch.dtype, budget: int, show: bool | None, lut: np.ndarray | None,
                origin: tuple[int, int] = (0, 0), boxes: bool = False,
                rows: ObjectRows | None = None) -> torch.Tensor:
    """:func:`_kernel_sums` by the fused CPU kernel (sums in float64, cast at the end):
    over the whole image at once when the geometry pass made a label lookup table ``lut``
    (no scratch), else over row blocks of the labelled pixels. ``origin``: where ``lab``
    lies in the image whose coordinates ``geo`` holds. ``boxes``: ``geo`` is the geometry
    of ``lab`` itself (its bounding boxes may be read, :data:`BOX_COVER`). ``rows``: each
    object's rows from the geometry's pass (:class:`.label_geometry.ObjectRows`), read
    instead of the boxes when given."""
    from ._numba_labels import zernike_box_sums, zernike_image_sums, zernike_label_sums
    from ._numba_rowsums import monomial_table, zernike_row_sums

    h, w = lab.shape
    dev = torch.device("cpu")
    n = len(geo)
    out = np.zeros((n, len(plan.pairs), 2))
    limit = 1.0 if convention == "cellprofiler" else 1.0 + ON_CIRCLE
    cdt = torch.complex128 if dt == torch.float64 else torch.complex64
    pix = np.zeros((0, 0)) if img is None else _host_image(img)
    arr = _as_host_array(lab)
    T = plan.index.max_order
    cp = convention == "cellprofiler"
    whole = boxes and origin == (0, 0) and arr is not None  # the geometry of lab itself
    if whole and rows is not None and pix is not None and T <= ROW_ORDER:
        _rows_sums(arr, pix if img is not None else None, geo, rows, T, cp, limit, out)
        return _complex(out, cdt)
    if whole and pix is not None:
        box = geo.bbox
        cover = float(np.sum((box[:, 2] - box[:, 0]) * (box[:, 3] - box[:, 1])))
        if cover <= BOX_COVER * h * w:
            visit = np.lexsort((box[:, 1], box[:, 0]))  # by the boxes' first row
            if T <= ROW_ORDER:
                zernike_row_sums(arr, geo.labels, box, pix, geo.centre, geo.radius, T, limit,
                                 out, visit, *monomial_table(T, cp))
            else:
                zernike_box_sums(arr, geo.labels, box, pix, geo.centre, geo.radius, T, cp,
                                 limit, out, visit)
            return _complex(out, cdt)
    if lut is not None and pix is not None:
        zernike_image_sums(arr, lut, pix, geo.centre, geo.radius, plan.index.max_order,
                           convention == "cellprofiler", limit, out, origin[0], origin[1])
        return _complex(out, cdt)
    mapper = _Mapper(geo.labels, dev, budget)
    none = np.zeros(0)
    per_pixel = 64
    blocks = list(_row_blocks(h, w, per_pixel, _block_budget(dev, budget, w, per_pixel),
                              "object moments"))
    bar = progress_bar(len(blocks), desc="object moments", show=show, large=len(blocks) > 8)
    for r0, r1 in blocks:
        idx, rows, cols, li = _pixels(lab, r0, r1, mapper, dev)
        if li.numel():
            f = none if img is None else (
                _block(img, r0, r1, dev, torch.float64).reshape(-1)[idx].numpy())
            zernike_label_sums(li.numpy(), rows.numpy() + origin[0],
                               cols.numpy() + origin[1], f, geo.centre,
                               geo.radius, plan.index.max_order, convention == "cellprofiler",
                               limit, out)
        bar.update(1)
    bar.close()
    return _complex(out, cdt)


def _rows_sums(lab: np.ndarray, pix: np.ndarray | None, geo: LabelGeometry, rows: ObjectRows,
               order: int, cp: bool, limit: float, out: np.ndarray) -> None:
    """The sums from each object's rows as the geometry's pass met them: shape moments
    (``pix`` None) from the rows' runs, the labels read only where a row holds more than
    one run of the object (:func:`._numba_weighted.run_sums`); intensity moments by
    a row's weights added to per-column sums of the powers of y
    (:func:`._numba_weighted.weighted_sums`)."""
    from ._numba_rowsums import monomial_table
    from ._numba_weighted import run_sums, weighted_sums

    table = monomial_table(order, cp)
    if pix is None:
        run_sums(lab, geo.labels, geo.bbox, geo.centre, geo.radius, order, limit, out, rows,
                 table)
    else:
        weighted_sums(lab, geo.labels, pix, geo.bbox, geo.centre, geo.radius, order, limit,
                      out, rows, table)


def _complex(out: np.ndarray, cdt: torch.dtype) -> torch.Tensor:
    """``(n, K, 2)`` float64 real and imaginary parts as an ``(n, K)`` complex tensor of
    ``cdt`` (a view, not a copy, for complex128)."""
    if out.size == 0:
        return torch.zeros(out.shape[:2], dtype=cdt)
    return torch.view_as_complex(torch.from_numpy(out)).to(cdt)


def _host_image(img: Any) -> np.ndarray | None:
    """The intensity image as a NumPy array the compiled loops read in place, or None when
    it is not one they can (half precision, big-endian): it then goes by row blocks,
    converted a block at a time, so that no copy of the whole image is made."""
    arr = img.numpy() if isinstance(img, torch.Tensor) else img
    if (arr.dtype.kind == "f" and arr.dtype.itemsize < 4) or not arr.dtype.isnative:
        return None
    return np.ascontiguousarray(arr)  # as the labels (_as_host_array)


def _kernel_sums(lab: Any, img: Any, geo: LabelGeometry, plan: _MomentPlan, convention: str,
                 dt: torch.dtype, dev: torch.device, budget: int, show: bool | None,
                 origin: tuple[int, int] = (0, 0), route: Route | None = None
                 ) -> torch.Tensor:
    """Per object, the sums of ``f_p * kernel(p)`` over its pixels with rho^2 <= 1:
    ``(n, K)`` complex in the working dtype (unnormalised). ``origin``: where ``lab`` lies
    in the image whose coordinates ``geo`` holds. ``route``: :func:`choose_route`'s; its
    Triton route (with ``geo`` the geometry of ``lab`` itself) runs
    :func:`._triton_labels.zernike_box_sums` over each object's bounding box, else the
    torch passes below run."""
    h, w = lab.shape
    n = len(geo)
    K = len(plan.pairs)
    cdt = torch.complex128 if dt == torch.float64 else torch.complex64
    # CellProfiler keeps rho^2 <= 1 as computed; the standard convention keeps the pixels on
    # the circle (those that define the minimum enclosing circle) whatever the rounding
    limit = 1.0 if convention == "cellprofiler" else 1.0 + ON_CIRCLE
    if route is not None and route.backend == "triton" and origin == (0, 0):
        from ._triton_labels import zernike_box_sums

        t = _block(lab, 0, h, dev).contiguous()
        f = None if img is None else _block(img, 0, h, dev, dt).contiguous()
        sums = zernike_box_sums(t, f, geo.labels, geo.bbox, geo.centre, geo.radius,
                                plan.pairs, convention == "cellprofiler", limit, dt)
        return torch.view_as_complex(sums)
    out = torch.zeros(n, K, 2, dtype=dt, device=dev)  # real and imaginary parts
    if n == 0 or h * w == 0:
        return torch.view_as_complex(out)
    ms = list(plan.index.ms)
    esize = 16 if dt == torch.float64 else 8
    per_pixel = (_PIXEL_BYTES + plan.radial_floats * 8
                 + esize * (2 * K + len(ms) + 2))
    mapper = _Mapper(geo.labels, dev, budget)
    cen = torch.from_numpy(geo.centre).to(dev)
    rad = torch.from_numpy(geo.radius).to(dev)
    blocks = list(_row_blocks(h, w, per_pixel, _block_budget(dev, budget, w, per_pixel),
                              "object moments"))
    bar = progress_bar(len(blocks), desc="object moments", show=show, large=len(blocks) > 8)
    for r0, r1 in blocks:
        idx, rows, cols, li = _pixels(lab, r0, r1, mapper, dev)
        if li.numel():
            c, r = cen[li], rad[li]
            rows, cols = rows + origin[0], cols + origin[1]
            dy = (rows.to(torch.float64) - c[:, 0]) / r  # as CellProfiler: (i - c_i) / R
            dx = (cols.to(torch.float64) - c[:, 1]) / r
            rho2 = torch.square(dx) + torch.square(dy)
            keep = torch.nonzero(rho2 <= limit).reshape(-1)  # NaN (radius 0) is left out
            if keep.numel():
                dy, dx, rho2, li = dy[keep], dx[keep], rho2[keep], li[keep]
                rho = torch.sqrt(rho2)
                if convention == "cellprofiler":
                    unit = torch.complex(dy, dx)  # (y + i x) / rho: angle from the row axis
                else:
                    unit = torch.complex(dx, dy)  # (x - i y) / rho with y = -(i - c_i)
                safe = torch.where(rho > 0, rho, torch.ones_like(rho))
                unit = torch.where(rho > 0, unit / safe, torch.zeros_like(unit)).to(cdt)
                if img is not None:
                    f = _block(img, r0, r1, dev, dt).reshape(-1)[idx[keep]]
                else:
                    f = None
                # column c of the index set: unit**ms[c] (times f), as real pairs
                pw = torch.view_as_real(_powers(unit, ms, f))  # (n_cols, G, 2)
                buf = torch.empty(K, li.numel(), 2, dtype=dt, device=dev)
                off = 0
                for (cols_s, _rows, vals), size in zip(
                        plan.family.radial_steps(plan.method, rho.to(dt), plan.index),
                        plan.steps, strict=True):
                    dst = buf[off : off + size]
                    off += size
                    if vals.is_complex():  # polar complex exponentials
                        vals = vals.to(cdt)
                        if convention == "standard":
                            vals = vals.conj()
                        torch.mul(vals, torch.view_as_complex(pw[cols_s]),
                                  out=torch.view_as_complex(dst))
                    else:
                        torch.mul(vals.to(dt)[:, :, None], pw[cols_s], out=dst)
                out.index_add_(0, li, buf.permute(1, 0, 2))
        bar.update(1)
    bar.close()
    gather = torch.from_numpy(plan.gather).to(dev)
    return torch.view_as_complex(out[:, gather].contiguous())


def _powers(unit: torch.Tensor, ms: list[int], f: torch.Tensor | None) -> torch.Tensor:
    """``(len(ms), G)`` rows ``unit**ms[c]`` (``unit**0 = 1``, also where ``unit = 0``),
    times the weights ``f`` when given."""
    out = torch.empty(len(ms), unit.numel(), dtype=unit.dtype, device=unit.device)
    cur = torch.ones_like(unit) if f is None else f.to(unit.dtype)
    row = {m: c for c, m in enumerate(ms)}
    for m in range(max(ms) + 1):
        if m:
            cur = cur * unit
        if m in row:
            out[row[m]] = cur
    return out


def object_moments(labels: Any, image: Any = None, *, family: str = "zernike", order: int = 9,
                   convention: str = "standard", centre: str = "enclosing",
                   kind: str = "magnitude", image_name: str = "image", dtype: Any = None,
                   device: Any = None, method: str = "auto",
                   memory_budget: float | None = None,
                   progress: bool | None = None) -> ObjectMoments:
    r"""Moments of every object of a label image, on each object's own pixels, in one pass.

    Parameters
    ----------
    labels : array_like or torch.Tensor of int
        ``(H, W)`` label image of any integer dtype (0 background; labels need not be
        contiguous). Not modified.
    image : array_like or torch.Tensor, optional
        ``(H, W)`` intensities :math:`f_p`; without it every pixel weighs 1 (shape moments).
    family : {"zernike", "pseudo-zernike", "pcet", "pct", "pst"}
        The disk family (``convention="cellprofiler"`` is Zernike only).
    order : int
        Largest order :math:`n` (``|n|`` for PCET); every stored repetition
        :math:`0 \le m \le n` (the PHT families: :math:`0 \le m \le` ``order``). Default 9,
        CellProfiler's degree.
    convention : {"standard", "cellprofiler"}
        Module notes. ``"cellprofiler"`` requires ``family="zernike"`` and
        ``centre="enclosing"``.
    centre : {"enclosing", "centroid-enclosing", "area"}
        Each object's disk (:func:`label_geometry`).
    kind : {"magnitude", "complex"}
        Standard convention: magnitudes :math:`|A_{nm}|` (rotation invariant) or the complex
        moments (features as real and imaginary parts). CellProfiler's convention gives its
        own features (magnitudes; with an image, magnitudes and phases).
    image_name : str
        The image's name in CellProfiler's intensity feature names.
    dtype : {"float32", "float64"}, optional
        Working precision of the sums: default float64 for ``convention="cellprofiler"``,
        else the package's policy for ``image`` (float32 without an image). Centres, radii
        and pixel positions are always float64.
    device : str, optional
        Where to compute (default: where ``image`` or ``labels`` is, else the CPU). NumPy in
        gives NumPy out; tensors give tensors on their device.
    method : {"auto", "torch", "numba"}
        How the pixel sums are computed (:func:`choose_route`; the result's ``.route`` says
        which ran): ``"auto"`` takes the fused numba kernel for Zernike moments on the CPU
        (sums in float64 whatever ``dtype``) and the torch path otherwise.
    memory_budget : float, optional
        Scratch bytes (or a fraction of free memory, <= 1): the image is processed in row
        blocks that fit (:mod:`fastmoments._memory`).
    progress : bool, optional
        Progress bar (default: only for long jobs).

    Returns
    -------
    ObjectMoments
        ``.features`` ``(n_objects, n_features)``, ``.names``, ``.values`` (complex),
        ``.geometry`` and ``.to_frame()`` / ``.to_dict()``.

    Raises
    ------
    TypeError
        ``labels`` not integer, ``image`` not real, ``order`` not an integer.
    ValueError
        ``labels`` not 2-D or negative, ``image`` of another shape or holding NaN or
        infinity, unknown option, ``convention="cellprofiler"`` with another family or
        centre.

    Examples
    --------
    >>> lab = np.zeros((32, 32), dtype=np.int32)
    >>> lab[4:12, 4:12] = 3
    >>> lab[16:30, 10:20] = 8
    >>> om = object_moments(lab, order=4, convention="cellprofiler")
    >>> om.labels, om.names[:3]
    (array([3, 8]), ['Zernike_0_0', 'Zernike_1_1', 'Zernike_2_0'])
    >>> om.features.shape
    (2, 9)
    """
    lab, lab_tensor = _check_labels(labels)
    family = check_choice("family", family, tuple(FAMILIES))
    order = check_int("order", order, minimum=0)
    convention = check_choice("convention", convention, CONVENTIONS)
    centre = check_choice("centre", centre, CENTRES)
    kind = check_choice("kind", kind, KINDS)
    method = check_choice("method", method, METHODS)
    show = check_progress(progress)
    budget_arg = check_memory_budget(memory_budget)
    if not isinstance(image_name, str):
        raise TypeError(f"image_name must be a string, got {image_name!r}")
    check_convention(convention, family, centre)
    img = None
    in_dev = lab.device if lab_tensor else None
    numpy_out = not lab_tensor
    if image is not None:
        img, in_dtype = _check_image(image, tuple(lab.shape))
        if isinstance(img, torch.Tensor):
            in_dev, numpy_out = img.device, False
    else:
        in_dtype = np.float32
    if dtype is None and convention == "cellprofiler":
        dtype = "float64"
    dt = working_dtype(dtype, in_dtype, name="image" if image is not None else "labels")
    dev = resolve_device(device, in_dev, name="labels")
    budget = memory_budget_bytes(dev, budget_arg)
    if img is not None:
        _check_finite(img, dev, budget)
    route = choose_route(family, dev, method)
    plan = _moment_plan(family, order)
    if route.backend == "numba":
        host = _as_host_array(lab) if isinstance(lab, np.ndarray) else None
        lab = lab if host is None else host  # a strided view copied once, not in each pass
        geo, lut, rows = _cpu_geometry(lab, centre, budget)
        sums = _numba_sums(lab, img, geo, plan, convention, dt, budget, show, lut,
                           boxes=True, rows=rows)
    else:
        if _geometry_on_device(lab, dev, budget, route):
            lab = _block(lab, 0, lab.shape[0], dev).contiguous()  # one copy for both passes
        geo, lut = _route_geometry(lab, centre, convention, dev, budget, route)
        sums = _kernel_sums(lab, img, geo, plan, convention, dt, dev, budget, show,
                            route=route)
    values, feats, names = _finish(sums, geo, plan, convention, kind, img is not None,
                                   image_name, dev)
    if numpy_out:
        values, feats = values.cpu().numpy(), feats.cpu().numpy()
    return ObjectMoments(geo, plan.pairs, values, names, feats, convention, family, kind,
                         route)


def _geometry_on_device(lab: Any, dev: torch.device, budget: int, route: Route) -> bool:
    """Whether host labels go to the GPU once, before the geometry: on the Triton route the
    geometry's passes (the labels present, the run statistics, the column extremes) and the
    box sums all read the whole label image there, which was copied for each of them.
    Labels over half the budget stay on the host (the passes then read row blocks)."""
    if route.backend != "triton" or (isinstance(lab, torch.Tensor) and lab.device == dev):
        return False
    return _whole_on_device(lab, dev, budget)


def _route_geometry(lab: Any, centre: str, convention: str, dev: torch.device, budget: int,
                    route: Route) -> tuple[LabelGeometry, np.ndarray | None]:
    """The geometry where the call runs it (and the label lookup table when the compiled
    pass made one). On a GPU with ``centre="enclosing"``: the standard convention computes
    it all there (:func:`.label_geometry._device_geometry`: Triton kernels on the Triton
    route, torch operations on the torch route; circles equal to the host's to rounding);
    CellProfiler's sums, boxes, column extremes, convex hulls and the circles whose steps
    are clear there (CellProfiler's bits, :func:`.label_geometry._triton_hull_disks` where
    the Triton kernels run), the other circles on the host, whose compiled steps keep its
    bits (measured on an H200 with ``benchmarks/objects_gpu.py``: copying the labels to the
    host for its one-pass geometry took 208 ms of the call at 5120², 12,500 objects).
    Elsewhere :func:`.label_geometry._geometry` (compiled on the CPU for the numba route)."""
    if dev.type == "cuda" and centre == "enclosing" and convention == "standard":
        return _device_geometry(lab, dev, budget, triton=route.backend == "triton"), None
    return _geometry(lab, centre, dev, budget, fused=route.backend == "numba")


def _finish(sums: torch.Tensor, geo: LabelGeometry, plan: _MomentPlan, convention: str,
            kind: str, intensity: bool, image_name: str, dev: torch.device
            ) -> tuple[torch.Tensor, torch.Tensor, list[str]]:
    if (convention == "cellprofiler" and sums.dtype == torch.complex128
            and sums.device.type == "cpu"):
        return (sums, *_finish_host(sums.numpy(), geo, plan, intensity, image_name))
    rdt = sums.real.dtype
    rad = torch.from_numpy(geo.radius).to(device=dev, dtype=torch.float64)
    zero_radius = (rad == 0)[:, None]
    nan = torch.tensor(float("nan"), dtype=rdt, device=dev)
    if convention == "cellprofiler":
        if intensity:
            area = torch.from_numpy(geo.area).to(device=dev, dtype=torch.float64)
            mag = (sums.abs().to(torch.float64) / area[:, None]).to(rdt)
            phase = torch.atan2(sums.real, sums.imag)
            feats = torch.cat([mag, phase], dim=1)
            feats = torch.where(zero_radius.expand_as(feats), nan, feats)
        else:
            area = math.pi * rad * rad
            feats = (sums.abs().to(torch.float64) / area[:, None]).to(rdt)
            feats = torch.where(zero_radius, nan, feats)
        return sums, feats, _cp_names(plan, intensity, image_name)
    norm = torch.from_numpy(plan.norm).to(dev)
    scale = (norm[None, :] / (rad * rad)[:, None]).to(rdt)
    values = sums * scale
    cnan = torch.complex(nan, nan)
    values = torch.where(zero_radius, cnan, values)
    if kind == "magnitude":
        feats = values.abs()
        names = [f"|A[{n},{m}]|" for n, m in plan.pairs]
    else:
        feats = torch.cat([values.real, values.imag], dim=1)
        names = ([f"Re A[{n},{m}]" for n, m in plan.pairs]
                 + [f"Im A[{n},{m}]" for n, m in plan.pairs])
    return values, feats, names


def _cp_names(plan: _MomentPlan, intensity: bool, image_name: str) -> list[str]:
    """CellProfiler's feature names (module notes)."""
    return list(_cp_name_tuple(plan.pairs, intensity, image_name))


@functools.lru_cache(maxsize=64)
def _cp_name_tuple(pairs: tuple[tuple[int, int], ...], intensity: bool, image_name: str
                   ) -> tuple[str, ...]:
    if not intensity:
        return tuple(f"Zernike_{n}_{m}" for n, m in pairs)
    return (tuple(f"RadialDistribution_ZernikeMagnitude_{image_name}_{n}_{m}" for n, m in pairs)
            + tuple(f"RadialDistribution_ZernikePhase_{image_name}_{n}_{m}" for n, m in pairs))


def _finish_host(sums: np.ndarray, geo: LabelGeometry, plan: _MomentPlan, intensity: bool,
                 image_name: str) -> tuple[torch.Tensor, list[str]]:
    """CellProfiler's features from float64 sums on the host: the magnitudes as
    ``sqrt(re^2 + im^2)``, as centrosome computes them, in one compiled loop
    (:func:`._numba_rowsums.cellprofiler_magnitudes`, NumPy's bits), the phases by NumPy's
    ``arctan2``, both written into the one array of features (``_finish``'s numbers to
    rounding, without torch's strided complex kernels: on 12,500 objects 1.5 against 11
    ms; the temporary arrays of NumPy's steps took 3-4 ms more there)."""
    from ._numba_rowsums import cellprofiler_magnitudes

    n, K = sums.shape
    feats = np.empty((n, 2 * K if intensity else K))
    if intensity:
        divisor = geo.area.astype(np.float64)
        np.arctan2(sums.real, sums.imag, out=feats[:, K:])
    else:
        divisor = np.pi * geo.radius * geo.radius
    cellprofiler_magnitudes(sums.real, sums.imag, divisor, geo.radius, feats)
    return torch.from_numpy(feats), _cp_names(plan, intensity, image_name)


def object_table(labels: Any, image: Any = None, **options: Any) -> Any:
    """:func:`object_moments` as a table: a pandas DataFrame with one row per label
    (``label``, ``area``, ``centre_row``, ``centre_col``, ``radius``, then the features), or
    the same columns as a dict of NumPy arrays when pandas is not installed.

    Parameters
    ----------
    labels, image, **options
        As for :func:`object_moments`.

    Examples
    --------
    >>> lab = np.zeros((16, 16), dtype=np.uint8)
    >>> lab[2:9, 3:12] = 1
    >>> t = object_table(lab, order=2)
    >>> list(t.keys())[:5]
    ['label', 'area', 'centre_row', 'centre_col', 'radius']
    """
    om = object_moments(labels, image, **options)
    try:
        import pandas  # noqa: F401
    except ImportError:
        return om.to_dict()
    return om.to_frame()
