r"""Moment features of labelled objects, computed on each object's own pixels:
:func:`object_features` (one row per label) and :func:`regionprops_property` (the same numbers
as a ``skimage.measure.regionprops`` extra property).

Both run :func:`fastmoments.disk.labels.object_moments`, which takes every object of the label
image in one pass over its pixels (no resampling, no loop over objects). Its module notes give
the definitions; in short, each pixel :math:`p` of object :math:`L` (pixel centres at integer
coordinates) is mapped to :math:`(p - c_L) / R_L` in the unit disk, with the disk chosen by
``centre=``:

* ``"enclosing"`` (default): the minimum enclosing circle of the object's pixel centres
  (:mod:`fastmoments.disk.enclosing`), as CellProfiler;
* ``"centroid-enclosing"``: centred on the centroid (regionprops' ``centroid``), with the
  smallest radius that holds every pixel square;
* ``"area"``: centred on the centroid, with :math:`R = \sqrt{A/\pi}` for an area of :math:`A`
  pixels (regionprops' ``equivalent_diameter_area / 2``).

and the moments by ``convention=``:

* ``"standard"``: :math:`A_{nm} = \frac{c_{nm}}{R^2} \sum_{\rho_p \le 1} f_p
  R^*_{nm}(\rho_p) e^{-im\theta_p}`, the continuous moment of the object mapped onto the
  unit disk, every family of :data:`fastmoments.disk.FAMILIES`;
* ``"cellprofiler"``: the Zernike features of CellProfiler's ``MeasureObjectSizeShape`` (no
  image) and ``MeasureObjectIntensityDistribution`` (with an image), equal to ``centrosome``'s
  implementation, with their column names.

With ``channel_axis`` each colour channel of the intensity image is one call of the engine, and
an object's row holds its channels' features side by side.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import torch

from .._array import move_channels
from .._validate import check_channel_axis, check_choice, colour_hint
from ..disk.labels import CENTRES, CONVENTIONS, ObjectMoments, object_moments
from .extract import _orders

__all__ = ["CENTRES", "CONVENTIONS", "NORMALIZATIONS", "ObjectMoments", "object_features",
           "regionprops_property"]

#: ``object_features(normalize=...)`` choices (besides None).
NORMALIZATIONS = ("z00",)


def _shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)


def _channel_images(image: Any, channel_axis: Any, lab_shape: tuple[int, ...]) -> list[Any]:
    """The 2-D intensity images to run the engine on: ``[image]``, or one view per channel."""
    shape = _shape(image)
    if channel_axis is None:
        if (len(shape) == 3 and shape[:2] == lab_shape and shape != lab_shape
                and colour_hint(shape)):
            raise ValueError(f"image of shape {shape} has colour channels (labels are "
                             f"{lab_shape}); pass channel_axis=-1 to take each channel's "
                             "features")
        return [image]
    if not isinstance(image, torch.Tensor):
        image = np.asarray(image)
    axis = check_channel_axis(channel_axis, image.ndim, 2, "image")
    img, _move = move_channels(image, axis, 2)
    if img.ndim != 3 or tuple(img.shape[1:]) != lab_shape:
        raise ValueError(f"image must have the shape of labels {lab_shape} plus the channel "
                         f"axis, got {shape}")
    return [img[c] for c in range(img.shape[0])]


def _select(om: ObjectMoments, orders: Any) -> ObjectMoments:
    """The columns of ``om`` whose order ``|n|`` is among ``orders`` (a set)."""
    keep = [k for k, (n, _m) in enumerate(om.pairs) if abs(n) in orders]
    if len(keep) == len(om.pairs):
        return om
    blocks = len(om.names) // len(om.pairs)  # 1, or 2 (Re/Im, magnitude/phase)
    cols = [b * len(om.pairs) + k for b in range(blocks) for k in keep]
    return dataclasses.replace(
        om, pairs=tuple(om.pairs[k] for k in keep), values=om.values[:, keep],
        features=om.features[:, cols], names=[om.names[c] for c in cols])


def _by_z00(om: ObjectMoments, a00: Any) -> ObjectMoments:
    """``om`` divided by :math:`|A_{00}|` row by row (``a00`` the complex :math:`A_{00}`)."""
    z00 = abs(a00)
    zero = z00 == 0
    if bool(zero.any()):
        bad = np.asarray(om.labels)[np.asarray(zero.cpu() if isinstance(zero, torch.Tensor)
                                                else zero)]
        raise ValueError(f"normalize='z00' divides by |A[0,0]|, which is 0 for the label(s) "
                         f"{bad[:8].tolist()}{'...' if len(bad) > 8 else ''} (an object whose "
                         "intensities sum to 0); use normalize=None")
    with np.errstate(invalid="ignore"):  # an object of one pixel: NaN stays NaN
        return dataclasses.replace(om, values=om.values / z00[:, None],
                                   features=om.features / z00[:, None])


def _join_channels(parts: list[ObjectMoments]) -> ObjectMoments:
    """One result from one per channel: features side by side, values ``(n, C, K)``."""
    first = parts[0]
    if isinstance(first.features, torch.Tensor):
        feats = torch.cat([p.features for p in parts], dim=1)
        values = torch.stack([p.values for p in parts], dim=1)
    else:
        feats = np.concatenate([p.features for p in parts], axis=1)
        values = np.stack([p.values for p in parts], axis=1)
    names = [f"{name} (channel {c})" for c, p in enumerate(parts) for name in p.names]
    return dataclasses.replace(first, values=values, features=feats, names=names,
                               channels=len(parts))


def object_features(labels: Any, image: Any = None, *, family: str = "zernike",
                    orders: int | Iterable[int] = 9, centre: str = "enclosing",
                    convention: str = "standard", kind: str = "magnitude",
                    normalize: str | None = None, channel_axis: int | None = None,
                    image_name: str = "image", dtype: Any = None, device: Any = None,
                    memory_budget: float | None = None,
                    progress: bool | None = None) -> ObjectMoments:
    r"""Moment features of every labelled object, on its own pixels, in its own disk.

    Parameters
    ----------
    labels : array_like or torch.Tensor of int
        ``(H, W)`` label image: 0 is background, each positive value one object (as from
        ``skimage.measure.label``); labels need not be contiguous. A boolean mask is one
        object, label 1. Not modified.
    image : array_like or torch.Tensor, optional
        ``(H, W)`` intensities :math:`f_p` (``(H, W, C)`` or another layout with
        ``channel_axis``). Without it every pixel of an object weighs 1 (shape features).
        Not modified.
    family : {"zernike", "pseudo-zernike", "pcet", "pct", "pst"}
        The disk family (``convention="cellprofiler"``: Zernike only).
    orders : int or iterable of int
        ``T``: every stored moment :math:`(n, m \ge 0)` with :math:`|n| \le T` (default 9,
        CellProfiler's degree: 30 Zernike moments); an iterable names the orders kept.
    centre : {"enclosing", "centroid-enclosing", "area"}
        Each object's disk (module notes): the minimum enclosing circle (default, as
        CellProfiler), the centroid with the radius that holds every pixel square, or the
        centroid with the radius of the disk of the object's area.
    convention : {"standard", "cellprofiler"}
        The standard moments :math:`A_{nm}` of the object mapped onto the unit disk, or
        CellProfiler's Zernike features (``family="zernike"``, ``centre="enclosing"``). The
        differences are listed in the notes of :mod:`fastmoments.disk.labels`.
    kind : {"magnitude", "complex"}
        Standard convention: :math:`|A_{nm}|` (invariant to rotation) or the real and
        imaginary parts. CellProfiler's convention gives its own features whatever ``kind``:
        the magnitudes, and with an image the magnitudes and the phases.
    normalize : {None, "z00"}
        ``"z00"``: each object's moments divided by its :math:`|A_{00}|` (of each channel,
        with ``channel_axis``), which makes them invariant to the scale of the intensities;
        standard convention, families with an :math:`A_{00}`.
    channel_axis : int, optional
        The colour channel axis of ``image`` (scikit-image's convention), e.g. ``-1`` for
        ``(H, W, 3)``: one pass per channel, and the row of an object holds its channels'
        features side by side, channel by channel (``.names`` says which channel).
    image_name : str
        The image's name in CellProfiler's intensity feature names
        (``RadialDistribution_ZernikeMagnitude_<image_name>_n_m``).
    dtype : {"float32", "float64"}, optional
        Working precision of the sums (default: float64 for ``convention="cellprofiler"``,
        else the package's dtype policy for ``image``, float32 without one).
    device : str, optional
        Where to compute (``"cuda"`` for the GPU; default: where ``image`` or ``labels`` is).
    memory_budget : float, optional
        Scratch bytes, or a fraction of free memory (<= 1): the image goes in row blocks that
        fit, so memory depends on the budget, not on the image.
    progress : bool, optional
        Progress bar (default: only for long jobs).

    Returns
    -------
    ObjectMoments
        One row per label, labels increasing (regionprops' order): ``.features``
        ``(n_objects, n_features)`` (NumPy for NumPy input, a tensor on the input's device
        for tensors), ``.names``, ``.pairs``, ``.values`` (complex; ``(n_objects, C, K)``
        with ``C`` channels), ``.geometry`` (areas, centroids, centres, radii),
        ``.labels``, ``.route``, ``.to_frame()`` (a pandas DataFrame) and ``.to_dict()``.
        ``np.asarray(result)`` is the feature matrix.

    Raises
    ------
    TypeError
        ``labels`` not integer or boolean, ``image`` not real, ``orders`` not integers.
    ValueError
        ``labels`` not 2-D or negative; ``image`` of another shape, with colour channels but
        no ``channel_axis``, or holding NaN or infinity; an unknown option;
        ``convention="cellprofiler"`` with another family or centre, or with ``normalize``;
        ``normalize="z00"`` where :math:`A_{00}` is 0 or not a moment of the family.

    Notes
    -----
    An object of one pixel has radius 0 under ``centre="enclosing"``; its features are NaN
    (CellProfiler gives NaN too). The definitions, and how the standard and CellProfiler
    conventions differ (normalisation, angle, the pixels on the circle), are in the notes of
    :mod:`fastmoments.disk.labels`; the user guide's "Features of labelled objects" section
    shows them side by side.

    Examples
    --------
    >>> import numpy as np
    >>> lab = np.zeros((40, 40), dtype=int)
    >>> lab[2:8, 2:14] = 1           # a 6 x 12 bar
    >>> lab[20:32, 30:36] = 2        # the same bar, turned by a quarter
    >>> of = object_features(lab, orders=4, dtype="float64")
    >>> of.labels, of.features.shape, of.names[:2]
    (array([1, 2]), (2, 9), ['|A[0,0]|', '|A[1,1]|'])
    >>> bool(np.allclose(of.features[0], of.features[1], rtol=0, atol=1e-12))
    True
    >>> cp = object_features(lab, orders=4, convention="cellprofiler")
    >>> cp.names[:3]
    ['Zernike_0_0', 'Zernike_1_1', 'Zernike_2_0']
    """
    wanted = _orders(orders)
    top = wanted.stop - 1 if isinstance(wanted, range) else max(abs(n) for n in wanted)
    if normalize is not None:
        normalize = check_choice("normalize", normalize, NORMALIZATIONS)
        if convention == "cellprofiler":
            raise ValueError("normalize='z00' is for the standard convention; "
                             "convention='cellprofiler' has its own normalisation")
    if image is None:
        if channel_axis is not None:
            raise ValueError("channel_axis is for a colour intensity image; give image=")
        images = [None]
    else:
        images = _channel_images(image, channel_axis, _shape(labels))
    parts = []
    for img in images:
        om = object_moments(labels, img, family=family, order=top, convention=convention,
                            centre=centre, kind=kind, image_name=image_name, dtype=dtype,
                            device=device, memory_budget=memory_budget, progress=progress)
        if normalize == "z00":
            if (0, 0) not in om.pairs:
                raise ValueError(f"normalize='z00' divides by |A[0,0]|, which family="
                                 f"{family!r} does not have; use normalize=None")
            a00 = om.values[:, om.pairs.index((0, 0))]
            om = dataclasses.replace(_by_z00(om, a00), normalize="z00")
        parts.append(_select(om, wanted))
    return parts[0] if channel_axis is None else _join_channels(parts)


def regionprops_property(*, intensity: bool = False, name: str | None = None,
                         **options: Any) -> Callable[..., np.ndarray]:
    r"""A ``skimage.measure.regionprops`` extra property giving one region's row of
    :func:`object_features`.

    Parameters
    ----------
    intensity : bool
        ``False``: the property is ``f(regionmask)``, the features of the mask. ``True``:
        ``f(regionmask, intensity_image)``, the features of the intensities (regionprops
        then needs ``intensity_image=``).
    name : str, optional
        The property's name (its ``__name__``, the attribute regionprops gives it); default
        ``"zernike_cellprofiler"`` for ``convention="cellprofiler"``, else
        ``"<family>_<kind>"`` with ``-`` as ``_``, e.g. ``"zernike_magnitude"``.
    **options
        :func:`object_features` options (``family``, ``orders``, ``centre``, ``convention``,
        ``kind``, ``normalize``, ``dtype``, ``device`` ...), checked here.

    Returns
    -------
    callable
        Returns the region's feature row (float64 NumPy, ``(n_features,)``). With the standard
        convention it equals the region's row of :func:`object_features` on the whole image
        to rounding: the centre and radius do not depend on the crop regionprops hands over.
        With ``convention="cellprofiler"`` a pixel on the enclosing circle may be kept in one
        and dropped in the other: CellProfiler's test :math:`\rho^2 \le 1` depends on the
        rounding of the centre, which moves with the crop (notes of
        :mod:`fastmoments.disk.labels`).

    Raises
    ------
    TypeError
        ``intensity`` not a bool, an unknown option, or ``labels``, ``image``,
        ``channel_axis`` or ``progress`` among the options.
    ValueError
        ``name`` not a Python identifier, or a bad option value.

    Examples
    --------
    >>> import numpy as np
    >>> from skimage.measure import regionprops
    >>> lab = np.zeros((30, 30), dtype=int); lab[3:12, 4:20] = 1; lab[15:28, 10:14] = 2
    >>> prop = regionprops_property(orders=3, dtype="float64")
    >>> prop.__name__
    'zernike_magnitude'
    >>> rows = np.array([r.zernike_magnitude for r in regionprops(lab, extra_properties=[prop])])
    >>> whole = object_features(lab, orders=3, dtype="float64").features
    >>> bool(np.allclose(rows, whole, rtol=1e-12, atol=1e-14))
    True
    """
    if not isinstance(intensity, bool):
        raise TypeError(f"intensity must be True or False, got {intensity!r}")
    for bad in ("labels", "image", "channel_axis", "progress"):
        if bad in options:
            raise TypeError(f"regionprops_property got the option {bad!r}; regionprops "
                            "gives the region")
    if name is None:
        conv = options.get("convention", "standard")
        name = ("zernike_cellprofiler" if conv == "cellprofiler" else
                f"{options.get('family', 'zernike')}_{options.get('kind', 'magnitude')}")
        name = str(name).replace("-", "_")
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a Python identifier (regionprops makes it an "
                         f"attribute), got {name!r}")
    # check the options once, here, rather than on the first region
    object_features(np.ones((3, 3), np.uint8), **options, progress=False)

    def _row(mask: Any, img: Any) -> np.ndarray:
        of = object_features(np.asarray(mask, dtype=bool), img, progress=False, **options)
        return np.asarray(of, dtype=np.float64)[0]

    if intensity:
        def prop(regionmask: Any, intensity_image: Any) -> np.ndarray:
            return _row(regionmask, intensity_image)
    else:
        def prop(regionmask: Any) -> np.ndarray:  # type: ignore[misc]
            return _row(regionmask, None)
    prop.__name__ = prop.__qualname__ = name
    prop.__doc__ = f"Moment features of one region by fastmoments.object_features{options!r}."
    return prop
