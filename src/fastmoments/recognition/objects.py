r"""Moment features of labelled objects: :func:`object_features` (one row per label) and
:func:`regionprops_property` (the same numbers as a ``skimage.measure.regionprops`` property).

Each object of a label image is normalised for position and size before its moments are taken:

1. **Centre**: the object's centroid, the unweighted mean of its pixel coordinates (pixel
   centres at integer coordinates), as ``skimage.measure.regionprops(...).centroid``. The
   intensity image, when given, does not move the centre (``centroid_weighted`` would), so the
   geometry of an object is the same with or without an image.
2. **Radius** :math:`R`, by ``radius=``:

   * ``"enclosing"`` (default): the radius of the smallest disk *centred on the centroid* that
     contains every pixel of the object, pixel squares included:
     :math:`R = \max_{(r,c)} \sqrt{(|r - \bar r| + \tfrac12)^2 + (|c - \bar c| + \tfrac12)^2}`.
     The whole object then lies in the unit disk, so no part of it is lost, and the moments
     are a function of the whole object. It is the default for that reason.
   * ``"area"``: the radius of the disk of the object's area, :math:`R = \sqrt{A / \pi}`
     (``regionprops``' ``equivalent_diameter_area / 2``). It depends on every pixel rather
     than on the farthest one, so it is less sensitive to a stray pixel on the outline, but
     parts of an elongated object fall outside the unit disk and do not enter the moments.

   Other tools: CellProfiler's ``MeasureObjectSizeShape`` computes its Zernike features in
   the object's minimum enclosing circle (centred where that circle is, not on the centroid),
   and ``mahotas.features.zernike_moments`` takes the radius from the caller and centres on
   the centre of mass. ``"enclosing"`` keeps the centroid as the centre, so that the centre
   is the same under both radii and equals regionprops' ``centroid``. Its radius is at least
   that of the minimum enclosing circle (of the pixel squares) and at most twice it: the
   centroid lies in their convex hull, whose points are all within one diameter of each
   other. For a disk-like object the two coincide.

3. **Resampling**: the square :math:`[\bar r - R, \bar r + R] \times [\bar c - R, \bar c + R]`
   is sampled on a ``size x size`` grid of pixel centres
   :math:`\bar r + R\,(2i + 1 - S)/S` (the grid on which the disk engine inscribes the unit
   disk), by bilinear interpolation of the object (``image * mask``, or the 0/1 mask when no
   image is given), with zero outside the source image.
4. **Moments**: the ``(n_objects, size, size)`` stack goes through
   :func:`fastmoments.features` in batches with one cached plan, on the device asked
   for (the resampling runs there too).

The sampling grid is symmetric under quarter turns about the centroid, and bilinear
interpolation commutes with them, so turning the label image by 90 degrees turns each
resampled object exactly: ``kind="magnitude"`` features are then unchanged to rounding. Integer
translations leave them unchanged to rounding as well. A change of scale changes the
rasterisation of the outline, so it changes the features by a resampling error that shrinks as
the objects grow.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._array import ArrayKind, finite_flag, move_channels, resolve_device, working_dtype
from .._validate import check_channel_axis, check_choice, check_int, colour_hint
from .extract import features
from .featureset import FeatureSet

__all__ = ["RADII", "ObjectFeatures", "object_features", "regionprops_property"]

#: ``object_features(radius=...)`` choices.
RADII = ("enclosing", "area")


@dataclass(frozen=True, eq=False)
class ObjectFeatures:
    """Features of labelled objects, one row per label.

    Attributes
    ----------
    labels : numpy.ndarray
        ``(n_objects,)`` the label of each row, increasing (regionprops order).
    centroids : numpy.ndarray
        ``(n_objects, 2)`` float64 ``(row, col)`` centroids.
    radii : numpy.ndarray
        ``(n_objects,)`` float64 radius (pixels) mapped onto the unit disk.
    features : FeatureSet
        The moments of the resampled objects (``.matrix``, ``.names``, ``.columns``,
        ``.pairs``); with colour channels, one row per object and channel (object by
        object).
    channels : int or None
        The number of colour channels of the intensity image (``channel_axis``), else None.
    """

    labels: np.ndarray
    centroids: np.ndarray
    radii: np.ndarray
    features: FeatureSet
    channels: int | None = None

    @property
    def matrix(self) -> Any:
        """``(n_objects, n_features)`` real matrix (NumPy for NumPy input); with ``C`` colour
        channels, each object's ``C`` feature vectors side by side, channel by channel."""
        m = self.features.matrix
        if self.channels is not None:
            m = m.reshape(len(self.labels), -1)
        return m

    @property
    def names(self) -> list[str]:
        """Column labels, as :attr:`FeatureSet.names` (``"|A[2,0]| (channel 1)"`` with colour
        channels)."""
        if self.channels is None:
            return self.features.names
        return [f"{name} (channel {c})" for c in range(self.channels)
                for name in self.features.names]

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        m = self.matrix
        if isinstance(m, torch.Tensor):
            m = m.detach().cpu().numpy()
        return np.asarray(m, dtype=dtype)

    def __len__(self) -> int:
        return len(self.labels)

    def __repr__(self) -> str:
        n_feat = self.features.n_features * (self.channels or 1)
        return (f"<ObjectFeatures objects={len(self)} features={n_feat} "
                f"family={self.features.family} kind={self.features.kind}>")


def _as_labels(labels: Any) -> np.ndarray:
    if isinstance(labels, torch.Tensor):
        labels = labels.detach().cpu().numpy()
    arr = np.asarray(labels)
    if arr.dtype == bool:
        arr = arr.astype(np.int64)
    elif arr.dtype.kind not in "iu":
        raise TypeError(f"labels must be an integer label image (0 = background), got dtype "
                        f"{arr.dtype}; use skimage.measure.label to label a mask")
    if arr.ndim != 2:
        raise ValueError(f"labels must be a 2-D label image, got shape {arr.shape}")
    if arr.size and arr.min() < 0:
        raise ValueError(f"labels must be >= 0 (0 is background), got the label "
                         f"{int(arr.min())}")
    return arr


def _geometry(lab: np.ndarray, ids: np.ndarray, radius: str):
    """Centroids ``(n, 2)``, areas and radii of the objects ``ids`` (float64)."""
    rows, cols = np.nonzero(lab)
    which = np.searchsorted(ids, lab[rows, cols])
    n = len(ids)
    area = np.bincount(which, minlength=n).astype(np.float64)
    cr = np.bincount(which, weights=rows, minlength=n) / area
    cc = np.bincount(which, weights=cols, minlength=n) / area
    if radius == "area":
        rad = np.sqrt(area / np.pi)
    else:
        d2 = (np.abs(rows - cr[which]) + 0.5) ** 2 + (np.abs(cols - cc[which]) + 0.5) ** 2
        far = np.zeros(n)
        np.maximum.at(far, which, d2)
        rad = np.sqrt(far)
    return np.stack([cr, cc], axis=1), rad


def _resample(values: torch.Tensor, lab: torch.Tensor, ids: torch.Tensor,
              centroids: torch.Tensor, radii: torch.Tensor, size: int) -> torch.Tensor:
    """Bilinear samples ``(n, size, size)`` of ``values * (lab == id)`` on each object's
    grid, zero outside the image (float64 coordinates, ``values.dtype`` samples)."""
    h, w = lab.shape
    t = (2 * torch.arange(size, dtype=torch.float64, device=values.device) + 1 - size) / size
    r = centroids[:, 0, None] + radii[:, None] * t[None, :]          # (n, S) row coordinates
    c = centroids[:, 1, None] + radii[:, None] * t[None, :]          # (n, S) col coordinates
    r0, c0 = torch.floor(r), torch.floor(c)
    fr, fc = (r - r0).to(values.dtype), (c - c0).to(values.dtype)
    r0, c0 = r0.long(), c0.long()
    flat_v, flat_l = values.reshape(-1), lab.reshape(-1)
    out = torch.zeros(len(ids), size, size, dtype=values.dtype, device=values.device)
    for dr, wr in ((0, 1 - fr), (1, fr)):
        ri = r0 + dr
        okr = (ri >= 0) & (ri < h)
        for dc, wc in ((0, 1 - fc), (1, fc)):
            ci = c0 + dc
            okc = (ci >= 0) & (ci < w)
            ok = okr[:, :, None] & okc[:, None, :]
            idx = (ri.clamp(0, h - 1)[:, :, None] * w + ci.clamp(0, w - 1)[:, None, :])
            inside = ok & (flat_l[idx] == ids[:, None, None])
            val = torch.where(inside, flat_v[idx], torch.zeros((), dtype=values.dtype,
                                                                device=values.device))
            out += wr[:, :, None] * wc[:, None, :] * val
    return out


def object_features(labels: Any, image: Any = None, *, family: str = "zernike",
                    orders: int | Iterable[int] = 8, kind: str = "magnitude", size: int = 64,
                    radius: str = "enclosing", k: int = 1, quadrature: str = "midpoint",
                    rule: str = "inscribed", device: Any = None, dtype: Any = None,
                    batch_size: int | None = None, normalize: str | None = None,
                    channel_axis: int | None = None) -> ObjectFeatures:
    r"""Moment features of every labelled object, each centred and scaled to its own disk.

    Parameters
    ----------
    labels : array_like of int
        ``(H, W)`` label image: 0 is background, each positive value one object (as from
        ``skimage.measure.label``). A boolean mask counts as one object, label 1.
    image : array_like, optional
        ``(H, W)`` intensities; each object is ``image * mask``. Without it, each object is its
        0/1 mask (shape features).
    family, orders, kind, k, quadrature, rule
        The moments, as in :func:`fastmoments.features` (default: Zernike magnitudes
        up to order 8, which are invariant to rotation).
    size : int
        Side of the grid each object is resampled onto (``size x size``).
    radius : {"enclosing", "area"}
        How an object's size is measured (module notes): the smallest centroid-centred disk
        holding every pixel (default: the whole object lies in the unit disk), or
        :math:`\sqrt{\mathrm{area}/\pi}`.
    device : str, optional
        Where to resample and compute (``"cuda"`` for the GPU; default: where ``image`` is, or
        the CPU).
    dtype : {"float32", "float64"}, optional
        Working precision (default from ``image`` by the package's dtype policy: float64 stays
        float64, else float32; float32 without an image).
    batch_size : int, optional
        Objects resampled and transformed per batch (default: about :math:`2^{19}`
        resampled pixels per batch, 128 objects at ``size=64``).
    normalize : {None, "pixels", "z00"}
        Normalization of the moments, as in :func:`fastmoments.features`
        (``"pixels"``: the re-layout paper's :math:`\lambda_N`, the pixels of the
        ``size x size`` grid in the disk; ``"z00"``: divided by :math:`|A_{00}|`).
    channel_axis : int, optional
        The colour channel axis of ``image`` (scikit-image's convention), e.g. ``-1`` for
        ``(H, W, 3)`` with ``(H, W)`` labels: each channel of each object is resampled and
        transformed, and the row of an object holds its channels' features side by side
        (``.names`` says which channel).

    Returns
    -------
    ObjectFeatures
        ``.labels`` (increasing, as regionprops orders regions), ``.matrix``
        ``(n_objects, n_features)``, ``.names``, ``.centroids``, ``.radii``, and the
        :class:`FeatureSet` as ``.features``. No object gives zero rows.

    Raises
    ------
    TypeError
        ``labels`` not integer (or boolean), ``image`` not real numbers, non-integer ``size``.
    ValueError
        ``labels`` not 2-D or negative, ``image`` of another shape, NaN or infinity in
        ``image``, unknown ``radius``, ``kind`` or ``family``.

    Notes
    -----
    The moments of each resampled object are those of the unit disk inscribed in its
    ``size x size`` grid (thesis Eq. 2.10, 2.16), so an object of radius :math:`R` pixels is
    seen at a resolution of ``size / (2 R)`` grid points per source pixel. ``size`` should be
    at least the diameter of the largest object to keep its detail.

    Examples
    --------
    >>> import numpy as np
    >>> lab = np.zeros((40, 40), dtype=int)
    >>> lab[2:8, 2:14] = 1           # a 6 x 12 bar
    >>> lab[14:38, 20:32] = 2        # the same bar, twice as large and turned
    >>> of = object_features(lab, orders=4, size=32)
    >>> of.labels, of.matrix.shape
    (array([1, 2]), (2, 9))
    >>> bool(np.abs(of.matrix[0] - of.matrix[1]).max() < 0.03 * of.matrix.max())
    True
    >>> of.names[:2]
    ['|A[0,0]|', '|A[1,1]|']
    """
    lab = _as_labels(labels)
    radius = check_choice("radius", radius, RADII)
    size = check_int("size", size, minimum=1)

    if batch_size is None:
        # about 2**19 resampled pixels per batch: the gathers stay in cache (on one CPU
        # thread, 1849 objects at size 64 resampled in 1.6 s in batches of 128, 5.0 s in
        # batches of 1024)
        batch_size = max(1, min(4096, 2**19 // (size * size)))
    batch_size = check_int("batch_size", batch_size, minimum=1)
    in_dev = torch.device("cpu")
    numpy_out = True
    if image is not None:
        if isinstance(image, torch.Tensor):
            if image.is_complex():
                raise TypeError(f"image must be real, got complex dtype {image.dtype}")
            in_dev, numpy_out = image.device, False
            img = image.detach()
            in_dtype = img.dtype
        else:
            arr = np.asarray(image)
            if arr.dtype == object or arr.dtype.kind not in "biuf":
                raise TypeError(f"image must hold real numbers, got dtype {arr.dtype}")
            in_dtype = arr.dtype
            img = torch.from_numpy(np.array(arr, dtype=np.float64))  # a copy, exact
        if channel_axis is not None:
            axis = check_channel_axis(channel_axis, img.ndim, 2, "image")
            img, _move = move_channels(img, axis, 2)
        elif tuple(img.shape) != lab.shape and colour_hint(img.shape) \
                and tuple(img.shape[:2]) == lab.shape:
            raise ValueError(f"image of shape {tuple(img.shape)} has colour channels (labels "
                             f"are {lab.shape}); pass channel_axis=-1 to take each channel's "
                             "features")
        if tuple(img.shape[-2:]) != lab.shape or img.ndim != 2 + (channel_axis is not None):
            raise ValueError(f"image must have the shape of labels {lab.shape}"
                             f"{' plus the channel axis' if channel_axis is not None else ''}"
                             f", got {tuple(img.shape)}")
        dt = working_dtype(dtype, in_dtype, name="image")
    else:
        if channel_axis is not None:
            raise ValueError("channel_axis is for a colour intensity image; give image=")
        dt = working_dtype(dtype, np.float32, name="labels")
    dev = resolve_device(device, in_dev)
    if image is not None:
        img = img.to(device=dev, dtype=dt)
        if not bool(finite_flag(img)):
            raise ValueError("image contains NaN or infinity")

    ids = np.unique(lab)
    ids = ids[ids > 0]
    kwargs = dict(family=family, orders=orders, kind=kind, k=k, quadrature=quadrature,
                  rule=rule, device=dev, dtype=dt, progress=False, normalize=normalize)
    channels = int(img.shape[0]) if channel_axis is not None else None
    if len(ids) == 0:
        blank = torch.ones(1, size, size, dtype=dt, device=dev)  # (A_00 != 0 for "z00")
        fs = features(blank, **kwargs).subset(slice(0, 0))
        fs = FeatureSet(fs.family, fs.kind, fs.pairs, fs.columns, fs.moments,
                        _kind_out(numpy_out, in_dev), fs.normalize)
        return ObjectFeatures(ids.astype(lab.dtype), np.zeros((0, 2)), np.zeros(0), fs,
                              channels)

    centroids, radii = _geometry(lab, ids, radius)
    lab_t = torch.from_numpy(np.ascontiguousarray(lab).astype(np.int64)).to(dev)
    values = img if image is not None else torch.ones(lab.shape, dtype=dt, device=dev)
    ids_t = torch.from_numpy(ids.astype(np.int64)).to(dev)
    cen_t = torch.from_numpy(centroids).to(dev)
    rad_t = torch.from_numpy(radii).to(dev)
    parts = []
    for s in range(0, len(ids), batch_size):
        sl = slice(s, s + batch_size)
        if channels is None:
            stack = _resample(values, lab_t, ids_t[sl], cen_t[sl], rad_t[sl], size)
        else:  # (objects, channels, size, size): rows object by object
            stack = torch.stack([_resample(values[c], lab_t, ids_t[sl], cen_t[sl], rad_t[sl],
                                           size) for c in range(channels)], dim=1)
        parts.append(features(stack, **kwargs))
    moments = torch.cat([p.moments for p in parts]) if len(parts) > 1 else parts[0].moments
    first = parts[0]
    fs = FeatureSet(first.family, first.kind, first.pairs, first.columns, moments,
                    _kind_out(numpy_out, in_dev), first.normalize)
    return ObjectFeatures(ids, centroids, radii, fs, channels)


def _kind_out(numpy_out: bool, device: torch.device) -> ArrayKind:
    return ArrayKind(numpy=numpy_out, device=device)


def regionprops_property(*, family: str = "zernike", orders: int | Iterable[int] = 8,
                         kind: str = "magnitude", size: int = 64, radius: str = "enclosing",
                         intensity: bool = False, name: str | None = None,
                         **options: Any) -> Callable[..., np.ndarray]:
    """A ``skimage.measure.regionprops`` extra property giving :func:`object_features`.

    Parameters
    ----------
    family, orders, kind, size, radius
        As in :func:`object_features`.
    intensity : bool
        ``False``: the property is ``f(regionmask)``, the features of the mask. ``True``:
        ``f(regionmask, intensity_image)``, the features of the masked intensities
        (regionprops then needs ``intensity_image=``).
    name : str, optional
        The property's name (its ``__name__``, the attribute regionprops gives it); default
        ``"<family>_<kind>"`` with ``-`` as ``_``, e.g. ``"zernike_magnitude"``.
    **options
        ``k``, ``quadrature``, ``rule``, ``device``, ``dtype``, ``normalize`` for
        :func:`object_features`.

    Returns
    -------
    callable
        Returns the feature row (float64 NumPy, ``(n_features,)``) of one region, equal to the
        region's row of :func:`object_features` with the same options: the centroid and radius
        do not depend on the bounding-box crop regionprops hands over.

    Examples
    --------
    >>> import numpy as np
    >>> from skimage.measure import regionprops
    >>> lab = np.zeros((30, 30), dtype=int); lab[3:12, 4:20] = 1; lab[15:28, 10:14] = 2
    >>> prop = regionprops_property(orders=3, size=24, dtype="float64")
    >>> prop.__name__
    'zernike_magnitude'
    >>> regions = regionprops(lab, extra_properties=[prop])
    >>> rows = np.array([r.zernike_magnitude for r in regions])
    >>> of = object_features(lab, orders=3, size=24, dtype="float64")
    >>> bool(np.allclose(rows, of.matrix, rtol=1e-12, atol=1e-14))
    True
    """
    kw = dict(family=family, orders=orders, kind=kind, size=size, radius=radius, **options)
    unknown = set(options) - {"k", "quadrature", "rule", "device", "dtype", "normalize"}
    if unknown:
        raise TypeError(f"regionprops_property got unknown options {sorted(unknown)}")
    if not isinstance(intensity, bool):
        raise TypeError(f"intensity must be a bool, got {intensity!r}")
    check_choice("radius", radius, RADII)
    fam = family if isinstance(family, str) else str(family)
    label = name if name is not None else f"{fam}_{kind}".replace("-", "_")
    if not label.isidentifier():
        raise ValueError(f"name must be a Python identifier (regionprops makes it an "
                         f"attribute), got {label!r}")

    def _row(mask: Any, img: Any) -> np.ndarray:
        of = object_features(np.asarray(mask, dtype=bool), img, **kw)
        if len(of) != 1:
            raise ValueError(f"regionmask must hold one region, got {len(of)}")
        return np.asarray(of, dtype=np.float64)[0]

    if intensity:
        def prop(regionmask: Any, intensity_image: Any) -> np.ndarray:
            return _row(regionmask, intensity_image)
    else:
        def prop(regionmask: Any) -> np.ndarray:  # type: ignore[misc]
            return _row(regionmask, None)
    prop.__name__ = prop.__qualname__ = label
    prop.__doc__ = (f"{family} {kind} moment features (orders={orders!r}, size={size}, "
                    f"radius={radius!r}) of one region, by fastmoments.object_features.")
    return prop
