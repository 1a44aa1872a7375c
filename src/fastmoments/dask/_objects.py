r"""Moment features of the labelled objects of a chunked label image (dask arrays), objects that
cross chunk edges included, equal to the in-memory :func:`fastmoments.recognition.object_features`.

Two reductions over the chunks, in one Dask graph:

Geometry
    each chunk gives, per label it holds: its pixel count, the sums of its rows and columns
    (integers, exact in float64), its bounding box, and the vertices of the convex hull of
    its pixels there (:mod:`fastmoments.disk.enclosing`), in image coordinates. Parts are
    combined by label, a few at a time: counts and sums add, boxes take the outer bounds,
    and the hull of the union is the hull of the parts' hull vertices, so only those are
    kept. The last combination solves each object's disk from its hull as the in-memory
    code does (the hull, and so the minimum enclosing circle, has the same vertices in the
    same order: the same bits).
Moments
    each chunk, given the geometry, adds the kernel values of its labelled pixels to its
    objects' sums (:func:`fastmoments.disk.labels.object_moments`' kernels, with the chunk's
    position); the sums of the chunks add by label. They equal the in-memory sums up to the
    order of the additions (a few units of 1e-16 relative).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch

import dask

from .._validate import check_choice, check_int
from ..disk.enclosing import convex_hulls
from ..disk.families import FAMILIES
from ._features import _check_darr, _device_name
from ._workers import configure_threads

__all__ = ["object_features"]

#: Parts combined by one task of the tree reductions.
SPLIT_EVERY = 8

_Parts = dict[str, np.ndarray]


# ------------------------------------------------------------------------------ geometry
def _chunk_geometry(block: np.ndarray, row0: int, col0: int) -> _Parts:
    """One chunk's part of the geometry, in image coordinates."""
    from ..disk.label_geometry import _geometry_parts, memory_budget_bytes

    configure_threads()
    dev = torch.device("cpu")
    lab = np.ascontiguousarray(block)
    (ids, cnt, sums, bbox, obj, col, rmin, rmax), _lut = _geometry_parts(
        lab, dev, memory_budget_bytes(dev, None))
    pts, counts = convex_hulls(obj, col, rmin, rmax, len(ids))
    sums = sums + cnt[:, None] * np.array([row0, col0], np.float64)
    bbox = bbox + np.array([row0, col0, row0, col0], np.int64)
    return {"ids": ids.astype(np.int64), "count": cnt.astype(np.int64), "sums": sums,
            "bbox": bbox.astype(np.int64), "obj": np.repeat(np.arange(len(ids)), counts),
            "rows": pts[:, 0] + row0, "cols": pts[:, 1] + col0}


def _extremes(obj: np.ndarray, rows: np.ndarray, cols: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per (object, column) of a point set, sorted by object then column: the object, the
    column, and the smallest and largest row."""
    if len(obj) == 0:
        z = np.zeros(0, np.int64)
        return z, z, z, z
    top = int(cols.max()) + 1
    key = obj * top + cols
    uk, inv = np.unique(key, return_inverse=True)
    rmin = np.full(len(uk), np.iinfo(np.int64).max, np.int64)
    rmax = np.full(len(uk), -1, np.int64)
    np.minimum.at(rmin, inv, rows)
    np.maximum.at(rmax, inv, rows)
    return uk // top, uk % top, rmin, rmax


def _combine_geometry(parts: Sequence[_Parts]) -> _Parts:
    """Parts combined by label; the hull points reduced to the vertices of each object's
    hull of the union."""
    ids = np.concatenate([p["ids"] for p in parts])
    uid, inv = np.unique(ids, return_inverse=True)
    n = len(uid)
    cnt = np.zeros(n, np.int64)
    np.add.at(cnt, inv, np.concatenate([p["count"] for p in parts]))
    sums = np.zeros((n, 2))
    np.add.at(sums, inv, np.concatenate([p["sums"] for p in parts]))
    bb = np.concatenate([p["bbox"] for p in parts])
    bbox = np.empty((n, 4), np.int64)
    bbox[:, :2] = np.iinfo(np.int64).max
    bbox[:, 2:] = np.iinfo(np.int64).min
    np.minimum.at(bbox[:, :2], inv, bb[:, :2])
    np.maximum.at(bbox[:, 2:], inv, bb[:, 2:])
    offsets = np.cumsum([0] + [len(p["ids"]) for p in parts[:-1]])
    obj = inv[np.concatenate([p["obj"] + o for p, o in zip(parts, offsets, strict=True)])]
    rows = np.concatenate([p["rows"] for p in parts])
    cols = np.concatenate([p["cols"] for p in parts])
    o, c, r0, r1 = _extremes(obj, rows, cols)
    pts, counts = convex_hulls(o, c, r0, r1, n)
    return {"ids": uid, "count": cnt, "sums": sums, "bbox": bbox,
            "obj": np.repeat(np.arange(n), counts), "rows": pts[:, 0], "cols": pts[:, 1]}


def _finish_geometry(parts: Sequence[_Parts], centre: str) -> Any:
    from ..disk.label_geometry import _disks

    p = _combine_geometry(parts)
    o, c, r0, r1 = _extremes(p["obj"], p["rows"], p["cols"])
    return _disks(p["ids"], p["count"], p["sums"], p["bbox"], o, c, r0, r1, centre)


# ------------------------------------------------------------------------------- moments
def _chunk_route(family: str, dev: torch.device) -> Any:
    """The route of a chunk's sums: the in-memory call's (:func:`~fastmoments.disk.labels.
    choose_route`), except that the Triton kernel, which reads each object's whole bounding
    box, gives way to the per-pixel torch path (an object's box reaches past its chunk)."""
    from .._route import Route
    from ..disk.labels import choose_route

    route = choose_route(family, dev, "auto")
    if route.backend == "triton":
        torch_route = choose_route(family, dev, "torch")
        return Route(torch_route.method, torch_route.backend, torch_route.kernel,
                     "chunks of a Dask array: each pixel summed into its object (an "
                     "object's bounding box reaches past its chunk)")
    return route


def _chunk_sums(block: np.ndarray, image: np.ndarray | None, row0: int, col0: int, geo: Any,
                family: str, order: int, convention: str, dtype: str, device: str | None
                ) -> _Parts:
    """One chunk's per-object sums (float64 real and imaginary parts), by label."""
    from ..disk.label_geometry import LabelGeometry, memory_budget_bytes
    from ..disk.labels import _kernel_sums, _moment_plan, _numba_sums

    configure_threads()
    dev = torch.device(device or "cpu")
    dt = torch.float64 if dtype == "float64" else torch.float32
    lab = np.ascontiguousarray(block)
    if lab.dtype.kind == "u" and lab.dtype.itemsize > 4:
        lab = lab.astype(np.int64)
    ids = np.unique(lab)
    ids = ids[ids > 0].astype(np.int64)
    plan = _moment_plan(family, order)
    K = len(plan.pairs)
    if len(ids) == 0:
        return {"ids": ids, "sums": np.zeros((0, K, 2))}
    k = np.searchsorted(geo.labels, ids)
    sub = LabelGeometry(ids, geo.area[k], geo.centroid[k], geo.bbox[k], geo.centre[k],
                        geo.radius[k], geo.centre_kind)
    img = None if image is None else np.ascontiguousarray(image)
    budget = memory_budget_bytes(dev, None)
    route = _chunk_route(family, dev)
    if route.backend == "numba":
        lut = None
        if (int(ids[-1]) + 1) * 8 <= budget // 4:
            lut = np.full(int(ids[-1]) + 1, -1, np.int64)
            lut[ids] = np.arange(len(ids))
        sums = _numba_sums(lab, img, sub, plan, convention, torch.float64, budget, False, lut,
                           (row0, col0))
    else:
        sums = _kernel_sums(lab, img, sub, plan, convention, dt, dev, budget, False,
                            (row0, col0))
    s = torch.view_as_real(sums.to(torch.complex128)).cpu().numpy()
    return {"ids": ids, "sums": s}


def _combine_sums(parts: Sequence[_Parts]) -> _Parts:
    ids = np.concatenate([p["ids"] for p in parts])
    uid, inv = np.unique(ids, return_inverse=True)
    sums = np.zeros((len(uid), *parts[0]["sums"].shape[1:]))
    np.add.at(sums, inv, np.concatenate([p["sums"] for p in parts]))
    return {"ids": uid, "sums": sums}


def _tree(parts: list[Any], combine: Any) -> list[Any]:
    """Delayed parts combined ``SPLIT_EVERY`` at a time, until at most that many are left."""
    while len(parts) > SPLIT_EVERY:
        parts = [dask.delayed(combine, pure=True)(parts[i:i + SPLIT_EVERY])
                 for i in range(0, len(parts), SPLIT_EVERY)]
    return parts


def _finish(sums_parts: Sequence[_Parts], geo: Any, family: str, order: int, convention: str,
            kind: str, intensity: bool, image_name: str, dtype: str, device: str | None
            ) -> Any:
    from ..disk.labels import ObjectMoments, _finish, _moment_plan

    p = _combine_sums(sums_parts)
    n = len(geo)
    plan = _moment_plan(family, order)
    dev = torch.device(device or "cpu")
    cdt = torch.complex128 if dtype == "float64" else torch.complex64
    full = np.zeros((n, len(plan.pairs), 2))
    full[np.searchsorted(geo.labels, p["ids"])] = p["sums"]
    t = torch.from_numpy(full)
    sums = torch.complex(t[..., 0], t[..., 1]).to(device=dev, dtype=cdt)
    values, feats, names = _finish(sums, geo, plan, convention, kind, intensity, image_name,
                                   dev)
    route = _chunk_route(family, dev)
    return ObjectMoments(geo, plan.pairs, values.cpu().numpy(), names, feats.cpu().numpy(),
                         convention, family, kind, route)


def _origins(chunks: tuple[tuple[int, ...], ...]) -> tuple[np.ndarray, np.ndarray]:
    return (np.concatenate([[0], np.cumsum(chunks[0])[:-1]]).astype(int),
            np.concatenate([[0], np.cumsum(chunks[1])[:-1]]).astype(int))


def object_features(labels: Any, image: Any = None, *, family: str = "zernike",
                    orders: int | Iterable[int] = 9, centre: str = "enclosing",
                    convention: str = "standard", kind: str = "magnitude",
                    normalize: str | None = None, image_name: str = "image",
                    dtype: Any = None, device: Any = None, compute: bool = True) -> Any:
    r"""Moment features of every labelled object of a chunked label image, each object on its
    own pixels in its own disk, objects that cross chunk edges included.

    The result equals :func:`fastmoments.recognition.object_features` on the whole image
    (module notes): the same geometry (counts, centroids, boxes, and the same centres and
    radii to the bit), and moments equal to the order of the additions.

    Parameters
    ----------
    labels : dask.array.Array of int
        ``(H, W)`` label image, chunked along both axes as it likes (a Zarr array read with
        :func:`dask.array.from_zarr`, say): 0 is background, each positive value one object.
    image : dask.array.Array, optional
        ``(H, W)`` intensities, rechunked to the chunks of ``labels`` when they differ.
        Without it every pixel weighs 1 (shape features).
    family, orders, centre, convention, kind, normalize, image_name, dtype
        As for :func:`fastmoments.recognition.object_features`.
    device : str, optional
        Where the workers compute the moments (``"cuda"`` with one GPU per worker); the
        geometry runs on the workers' CPUs.
    compute : bool
        ``True`` (default): compute, with the scheduler in use (a
        :class:`distributed.Client`, if one is active), and return the result.
        ``False``: return a :class:`dask.delayed.Delayed` of it (one graph: the geometry
        reduction, then the moments of every chunk).

    Returns
    -------
    ObjectMoments
        As :func:`fastmoments.recognition.object_features` (NumPy arrays, labels
        increasing), or its ``Delayed`` with ``compute=False``.

    Raises
    ------
    TypeError
        ``labels`` or ``image`` not a dask array, ``labels`` not integer, ``image`` not real.
    ValueError
        ``labels`` not 2-D, ``image`` of another shape, an unknown option, or an option
        combination that the in-memory function refuses.

    Examples
    --------
    >>> import dask.array as da
    >>> lab = np.zeros((40, 40), dtype=np.int32)
    >>> lab[5:25, 8:30] = 1                  # crosses the chunk edges at 16 and 32
    >>> lab[30:38, 2:10] = 2
    >>> of = object_features(da.from_array(lab, chunks=16), orders=4,
    ...                      convention="cellprofiler")
    >>> of.labels, of.features.shape
    (array([1, 2]), (2, 9))
    """
    from .._array import working_dtype
    from ..disk.label_geometry import CENTRES
    from ..disk.labels import CONVENTIONS, KINDS, check_convention
    from ..recognition.extract import _orders
    from ..recognition.objects import NORMALIZATIONS, _by_z00, _select

    labels = _check_darr(labels, "labels")
    if labels.ndim != 2:
        raise ValueError(f"labels must be 2-D (H, W), got shape {labels.shape}")
    if np.dtype(labels.dtype).kind not in "iub":
        raise TypeError(f"labels must hold integers, got dtype {labels.dtype}")
    family = check_choice("family", family, tuple(FAMILIES))
    convention = check_choice("convention", convention, CONVENTIONS)
    centre = check_choice("centre", centre, CENTRES)
    kind = check_choice("kind", kind, KINDS)
    if not isinstance(compute, bool):
        raise TypeError(f"compute must be True or False, got {compute!r}")
    if not isinstance(image_name, str):
        raise TypeError(f"image_name must be a string, got {image_name!r}")
    check_convention(convention, family, centre)
    if normalize is not None:
        normalize = check_choice("normalize", normalize, NORMALIZATIONS)
        if convention == "cellprofiler":
            raise ValueError("normalize='z00' is for the standard convention; "
                             "convention='cellprofiler' has its own normalisation")
    wanted = _orders(orders)
    top = wanted.stop - 1 if isinstance(wanted, range) else max(abs(n) for n in wanted)
    top = check_int("orders", top, minimum=0)
    dev = _device_name(device)
    if np.dtype(labels.dtype).kind == "b":
        labels = labels.astype(np.uint8)
    if image is not None:
        image = _check_darr(image, "image")
        if tuple(image.shape) != tuple(labels.shape):
            raise ValueError(f"image must have the shape of labels {tuple(labels.shape)}, got "
                             f"{tuple(image.shape)}")
        if image.chunks != labels.chunks:
            image = image.rechunk(labels.chunks)
        in_dtype = np.dtype(image.dtype)
    else:
        in_dtype = np.float32
    if dtype is None and convention == "cellprofiler":
        dtype = "float64"
    dt = working_dtype(dtype, in_dtype, name="image" if image is not None else "labels")
    dname = "float64" if dt == torch.float64 else "float32"

    r0s, c0s = _origins(labels.chunks)
    blocks = labels.to_delayed()
    pix = None if image is None else image.to_delayed()
    geo_parts = [dask.delayed(_chunk_geometry, pure=True)(blocks[i, j], int(r0s[i]),
                                                          int(c0s[j]))
                 for i in range(blocks.shape[0]) for j in range(blocks.shape[1])]
    geo = dask.delayed(_finish_geometry, pure=True)(_tree(geo_parts, _combine_geometry),
                                                    centre)
    sums = [dask.delayed(_chunk_sums, pure=True)(
                blocks[i, j], None if pix is None else pix[i, j], int(r0s[i]), int(c0s[j]),
                geo, family, top, convention, dname, dev)
            for i in range(blocks.shape[0]) for j in range(blocks.shape[1])]
    res = dask.delayed(_finish, pure=True)(_tree(sums, _combine_sums), geo, family, top,
                                           convention, kind, image is not None, image_name,
                                           dname, dev)

    def _after(om: Any) -> Any:
        if normalize == "z00":
            if (0, 0) not in om.pairs:
                raise ValueError(f"normalize='z00' divides by |A[0,0]|, which family="
                                 f"{family!r} does not have; use normalize=None")
            om = dataclasses.replace(_by_z00(om, om.values[:, om.pairs.index((0, 0))]),
                                     normalize="z00")
        return _select(om, wanted)

    out = dask.delayed(_after, pure=True)(res)
    return out.compute() if compute else out
