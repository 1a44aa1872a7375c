r"""Where the objects of a label image are, in one pass over it: pixel count, centroid,
bounding box, and each object's disk (centre and radius), for all labels together.

The label image (and an intensity image) are read in row blocks that fit the memory budget
(:mod:`fastmoments._memory`), so the scratch is bounded by the budget, not by the image.
Within a block the labelled pixels are found with one ``nonzero`` and their labels mapped to
object indices (a lookup table, or a binary search for very large label values); counts and
coordinate sums go to the objects by ``index_add_``, bounding boxes and each object's
topmost and bottommost pixel of every column by ``scatter_reduce_``. The minimum enclosing
circles are computed from those column extremes (:mod:`fastmoments.disk.enclosing`). Used
by :mod:`fastmoments.disk.labels`; the ``centre=`` choices are described there.

On a CUDA GPU with Triton, the kernels of :mod:`fastmoments.disk._triton_labels` take the
counts, sums and boxes in one pass that reads each row as runs of equal labels, and (for
``centre="enclosing"``) each object's minimum enclosing circle in one program per object
(:func:`_triton_geometry`; the column extremes of CellProfiler's convention likewise,
:func:`_triton_geometry_pass`); the torch passes stay as their reference.

On the CPU, compiled loops (:mod:`fastmoments.disk._numba_labels`) read a host array in
place instead. For ``centre="enclosing"`` one pass reads each row as runs of equal labels:
a run adds its pixel count, its integer sums of rows and columns and its ends to its
label's entries, and each (label, row) pair keeps the first and last column of the label in
that row; every vertex of an object's convex hull is such a row extreme, so the hulls come
from them (columns and rows swapped in Andrew's chain). The other centres take the passes
by pixel (counts, sums and boxes, then the column extremes). Both give the torch passes'
numbers to the bit.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .._array import resolve_device
from .._memory import check_memory_budget, memory_budget, rows_per_chunk
from .._validate import check_choice
from ._host_geometry import ObjectRows, _as_host_array, _fused_pass, _hull_pass
from .enclosing import convex_hulls, minimum_enclosing_circles, minimum_enclosing_circles_torch

__all__ = ["CENTRES", "CPU_BLOCK_BYTES", "LabelGeometry", "label_geometry"]

#: ``centre=`` choices: how each object's disk is placed and sized
#: (:mod:`fastmoments.disk.labels`).
CENTRES = ("enclosing", "centroid-enclosing", "area")

#: On the CPU the moment pass works in row blocks of at most this much scratch, whatever
#: the budget: the block's buffers then stay near the caches. Measured on a 2048 x 2048
#: image of 2601 objects at degree 9 (one core): blocks of 1e8 to 4e8 bytes equally fast,
#: 2e9 bytes (the whole image) 1.4 to 2 times slower, 1e7 bytes 3 times slower (the
#: per-block work of Python).
CPU_BLOCK_BYTES = 2**27


# ------------------------------------------------------------------------------ input
def _check_labels(labels: Any) -> tuple[Any, bool]:
    """``labels`` as a 2-D integer NumPy array or tensor (not copied), and whether it is a
    tensor."""
    if isinstance(labels, torch.Tensor):
        lab = labels.detach()
        if lab.dtype == torch.bool:
            lab = lab.to(torch.uint8)
        if lab.is_floating_point() or lab.is_complex():
            raise TypeError(f"labels must be an integer label image (0 = background), got "
                            f"dtype {lab.dtype}")
        is_tensor = True
    else:
        lab = np.asarray(labels)
        if lab.dtype == bool:
            lab = lab.view(np.uint8)
        if lab.dtype.kind not in "iu":
            raise TypeError(f"labels must be an integer label image (0 = background), got "
                            f"dtype {lab.dtype}; use skimage.measure.label to label a mask")
        is_tensor = False
    if lab.ndim != 2:
        hint = ("; for a 3-D label volume use fastmoments.ball.object_moments3d (3-D Zernike "
                "moments)" if lab.ndim == 3 else "")
        raise ValueError(f"labels must be a 2-D label image, got shape {tuple(lab.shape)}"
                         f"{hint}")
    return lab, is_tensor


def _check_image(image: Any, shape: tuple[int, int]) -> tuple[Any, Any]:
    """``image`` (2-D, real, the shape of the labels) and its dtype; not copied."""
    if isinstance(image, torch.Tensor):
        img = image.detach()
        if img.is_complex():
            raise TypeError(f"image must be real, got complex dtype {img.dtype}")
        if img.dtype == torch.bool:
            img = img.to(torch.uint8)
    else:
        img = np.asarray(image)
        if img.dtype == bool:
            img = img.view(np.uint8)
        if img.dtype.kind not in "iuf":
            raise TypeError(f"image must hold real numbers, got dtype {img.dtype}")
    if tuple(img.shape) != tuple(shape):
        raise ValueError(f"image must have the shape of labels {tuple(shape)}, got "
                         f"{tuple(img.shape)}")
    return img, img.dtype


def _block(x: Any, r0: int, r1: int, device: torch.device, dtype: torch.dtype | None = None
           ) -> torch.Tensor:
    """Rows ``r0:r1`` of a NumPy array or tensor, as a tensor on ``device`` (a copy when a
    conversion is needed; the input is never written)."""
    part = x[r0:r1]
    if not isinstance(part, torch.Tensor):
        if not part.dtype.isnative:
            part = part.astype(part.dtype.newbyteorder("="))
        if part.dtype.kind == "u" and part.dtype.itemsize > 1:
            part = _signed(part)
        part = torch.from_numpy(np.ascontiguousarray(part))
    elif part.dtype in (torch.uint16, torch.uint32, torch.uint64):
        part = torch.from_numpy(_signed(part.cpu().numpy()))
    return part.to(device=device, dtype=dtype if dtype is not None else part.dtype)


def _whole_on_device(lab: Any, dev: torch.device, budget: int) -> bool:
    """Whether the whole label image may be on ``dev`` at once: it is already there, or it
    takes at most half the budget (larger labels are read in row blocks)."""
    if isinstance(lab, torch.Tensor) and lab.device == dev:
        return True
    item = lab.element_size() if isinstance(lab, torch.Tensor) else lab.dtype.itemsize
    return lab.shape[0] * lab.shape[1] * item <= budget // 2


def _signed(part: np.ndarray) -> np.ndarray:
    """Unsigned labels (torch computes little on uint16-64) as int64, checked to fit."""
    if part.dtype == np.uint64 and part.size and int(part.max()) > np.iinfo(np.int64).max:
        raise ValueError(f"labels must be < 2**63, got the label {int(part.max())}")
    return part.astype(np.int64)


def _block_budget(dev: torch.device, budget: int, width: int, per_pixel: int) -> int:
    """The scratch of one row block: the budget, at most :data:`CPU_BLOCK_BYTES` on the CPU
    (but always room for one row when the budget has it)."""
    if dev.type != "cpu":
        return budget
    return min(budget, max(CPU_BLOCK_BYTES, width * per_pixel))


def _row_blocks(height: int, width: int, bytes_per_pixel: int, budget: int, what: str
                ) -> Iterator[tuple[int, int]]:
    rows = rows_per_chunk(max(width, 1) * bytes_per_pixel, budget, max(height, 1), what=what)
    for r0 in range(0, height, rows):
        yield r0, min(height, r0 + rows)


# --------------------------------------------------------------------------- geometry
@dataclass(frozen=True, eq=False)
class LabelGeometry:
    """Where and how large each object is, one entry per label (increasing labels).

    Attributes
    ----------
    labels : numpy.ndarray
        ``(n,)`` int64 labels present (0, the background, excluded).
    area : numpy.ndarray
        ``(n,)`` int64 pixel counts.
    centroid : numpy.ndarray
        ``(n, 2)`` float64 ``(row, col)`` mean pixel centre.
    bbox : numpy.ndarray
        ``(n, 4)`` int64 ``(min_row, min_col, max_row + 1, max_col + 1)`` (regionprops').
    centre : numpy.ndarray
        ``(n, 2)`` float64 ``(row, col)`` centre of each object's disk (``centre=``).
    radius : numpy.ndarray
        ``(n,)`` float64 radius (pixels) of each object's disk.
    centre_kind : str
        The ``centre=`` option.
    """

    labels: np.ndarray
    area: np.ndarray
    centroid: np.ndarray
    bbox: np.ndarray
    centre: np.ndarray
    radius: np.ndarray
    centre_kind: str

    def __len__(self) -> int:
        return len(self.labels)


def _present_labels(lab: Any, dev: torch.device, budget: int) -> np.ndarray:
    """The labels present, increasing (0 excluded). Labels up to what a table of flags within
    the budget can hold are marked in it (one pass, no sort); larger ones are sorted out
    block by block."""
    h, w = lab.shape
    blocks = list(_row_blocks(h, w, 24, _block_budget(dev, budget, w, 24),
                              "finding the labels"))
    top = -1
    for r0, r1 in blocks:
        blk = _block(lab, r0, r1, dev)
        if blk.numel():
            lo, hi = torch.aminmax(blk)
            if int(lo) < 0:
                raise ValueError(f"labels must be >= 0 (0 is background), got the label "
                                 f"{int(lo)}")
            top = max(top, int(hi))
    if top < 1:
        return np.zeros(0, np.int64)
    if top + 1 <= budget // 4:
        seen = torch.zeros(top + 1, dtype=torch.bool, device=dev)
        for r0, r1 in blocks:
            seen[_block(lab, r0, r1, dev).reshape(-1).to(torch.int64)] = True
        seen[0] = False
        return torch.nonzero(seen).reshape(-1).cpu().numpy()
    found = [torch.unique(_block(lab, r0, r1, dev)).to(torch.int64).cpu()
             for r0, r1 in blocks]
    ids = torch.unique(torch.cat(found))
    return ids[ids > 0].numpy()


class _Mapper:
    """Label value -> object index (a dense lookup table when the largest label is small
    enough for the budget, else a binary search)."""

    def __init__(self, ids: np.ndarray, dev: torch.device, budget: int) -> None:
        top = int(ids[-1]) if len(ids) else 0
        self.ids = torch.from_numpy(ids).to(dev)
        self.lut = None
        if (top + 1) * 8 <= budget // 4:
            lut = torch.full((top + 1,), -1, dtype=torch.int64, device=dev)
            lut[self.ids] = torch.arange(len(ids), device=dev)
            self.lut = lut

    def __call__(self, values: torch.Tensor) -> torch.Tensor:
        v = values.to(torch.int64)
        if self.lut is not None:
            return self.lut[v]
        return torch.searchsorted(self.ids, v)


def _pixels(lab: Any, r0: int, r1: int, mapper: _Mapper, dev: torch.device
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Flat index (in the block), row, column and object index of each labelled pixel of
    rows ``r0:r1``."""
    blk = _block(lab, r0, r1, dev)
    w = blk.shape[1]
    flat = blk.reshape(-1)
    idx = torch.nonzero(flat).reshape(-1)
    rows = torch.div(idx, w, rounding_mode="floor") + r0
    cols = idx % w
    return idx, rows, cols, mapper(flat[idx])


def _add_moments(li: torch.Tensor, rows: torch.Tensor, cols: torch.Tensor,
                 count: torch.Tensor, sums: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor
                 ) -> None:
    """Add a block's pixels (object ``li`` at ``rows``, ``cols``) to the objects' pixel
    counts, sums of rows and columns (exact integers in float64) and bounding boxes, in
    place."""
    count.index_add_(0, li, torch.ones_like(li))
    rc = torch.stack([rows, cols], 1)
    sums.index_add_(0, li, rc.to(torch.float64))
    lo.scatter_reduce_(0, li[:, None].expand(-1, 2), rc, "amin")
    hi.scatter_reduce_(0, li[:, None].expand(-1, 2), rc, "amax")


def _geometry_pass(lab: Any, ids: np.ndarray, mapper: _Mapper, dev: torch.device, budget: int
                   ) -> tuple[np.ndarray, ...]:
    """Counts, sums, boxes and column extremes of the objects ``ids`` (the parts of
    :func:`_geometry_parts` after the labels): by the Triton kernels
    (:func:`_triton_geometry_pass`) where they run, else by torch passes over row blocks."""
    res = _triton_geometry_pass(lab, ids, dev, budget)
    if res is not None:
        return res
    h, w = lab.shape
    n = len(ids)
    count = torch.zeros(n, dtype=torch.int64, device=dev)
    sums = torch.zeros(n, 2, dtype=torch.float64, device=dev)  # integer sums, exact
    big = torch.iinfo(torch.int64).max
    lo = torch.full((n, 2), big, dtype=torch.int64, device=dev)
    hi = torch.full((n, 2), -1, dtype=torch.int64, device=dev)
    ext: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = []
    for r0, r1 in _row_blocks(h, w, 96, _block_budget(dev, budget, w, 96),
                              "the geometry of the labels"):
        _, rows, cols, li = _pixels(lab, r0, r1, mapper, dev)
        if li.numel() == 0:
            continue
        _add_moments(li, rows, cols, count, sums, lo, hi)
        ext.append(_column_extremes(li * w + cols, rows))
    if ext:
        keys = torch.cat([e[0] for e in ext])
        uk, inv = torch.unique(keys, return_inverse=True)
        rmin = torch.full((len(uk),), big, dtype=torch.int64, device=dev)
        rmax = torch.full((len(uk),), -1, dtype=torch.int64, device=dev)
        rmin.scatter_reduce_(0, inv, torch.cat([e[1] for e in ext]), "amin")
        rmax.scatter_reduce_(0, inv, torch.cat([e[2] for e in ext]), "amax")
    else:
        uk = rmin = rmax = torch.zeros(0, dtype=torch.int64, device=dev)
    cnt = count.cpu().numpy()
    bbox = np.concatenate([lo.cpu().numpy(), hi.cpu().numpy() + 1], axis=1)
    ukn = uk.cpu().numpy()
    wdt = max(w, 1)
    return (cnt, sums.cpu().numpy(), bbox, ukn // wdt, ukn % wdt, rmin.cpu().numpy(),
            rmax.cpu().numpy())


def _triton_columns(lab: Any, ids: np.ndarray, dev: torch.device, budget: int
                    ) -> tuple[torch.Tensor, ...] | None:
    """By :func:`._triton_labels.label_stats` (counts, sums, boxes of every label value,
    run by run) and :func:`._triton_labels.column_extremes` (one program per object over
    the columns of its box), for the objects ``ids``: ``(host, box, offset, rmin, rmax)``,
    ``host`` the counts, sums and boxes (end excluded) as NumPy arrays, the rest on the
    device (``box`` int32 with inclusive ends; ``offset``, ``rmin``, ``rmax`` as
    :func:`~._triton_labels.column_extremes` gives them). None where they cannot run (as
    :func:`_triton_geometry`)."""
    from . import _triton_labels as tk

    if not tk.available(dev) or len(ids) == 0:
        return None
    h = lab.shape[0]
    top = int(ids[-1])
    if not _whole_on_device(lab, dev, budget) or (top + 1) * 48 > budget // 4:
        return None
    t = _block(lab, 0, h, dev).contiguous()
    if t.dtype not in tk.LABEL_DTYPES:
        return None
    count, srow, scol, box = tk.label_stats(t, top)
    idx = torch.from_numpy(ids).to(dev)
    box = box[idx]
    offset, rmin, rmax = tk.column_extremes(t, idx, box)
    sums = torch.stack([srow[idx], scol[idx]], 1).to(torch.float64)
    bbox = torch.cat([box[:, :2], box[:, 2:] + 1], 1).to(torch.int64)
    host = (count[idx].cpu().numpy(), sums.cpu().numpy(), bbox.cpu().numpy())
    return host, box, offset, rmin, rmax


def _triton_geometry_pass(lab: Any, ids: np.ndarray, dev: torch.device, budget: int
                          ) -> tuple[np.ndarray, ...] | None:
    """:func:`_geometry_pass` by the Triton kernels (:func:`_triton_columns`); the same
    integers. None where they cannot run."""
    res = _triton_columns(lab, ids, dev, budget)
    if res is None:
        return None
    host, box, offset, rmin, rmax = res
    width = (box[:, 3] - box[:, 1] + 1).to(torch.int64)
    obj = torch.repeat_interleave(torch.arange(len(ids), device=dev), width)
    col = torch.arange(len(obj), device=dev) - offset[obj] + box[obj, 1]
    keep = rmax >= 0
    return (*host, obj[keep].cpu().numpy(), col[keep].cpu().numpy(),
            rmin[keep].to(torch.int64).cpu().numpy(), rmax[keep].to(torch.int64).cpu().numpy())


def _triton_hulls(lab: Any, dev: torch.device, budget: int) -> tuple[Any, ...] | None:
    """The labels present, counts, sums and boxes (:func:`_triton_columns`, NumPy) and each
    object's convex hull vertices from its column extremes, on the device
    (:func:`._triton_labels.hulls`: integers, the host's vertices in the host's order, and
    their counts). None where the kernels cannot run, or without labels."""
    from . import _triton_labels as tk

    if not tk.available(dev):
        return None
    ids = _present_labels(lab, dev, budget)
    res = _triton_columns(lab, ids, dev, budget)
    if res is None:
        return None
    host, box, offset, rmin, rmax = res
    return (ids, *host, *tk.hulls(box, offset, rmin, rmax))


def _triton_hull_disks(lab: Any, dev: torch.device, budget: int) -> LabelGeometry | None:
    """``centre="enclosing"`` with CellProfiler's circles: the hulls (:func:`_triton_hulls`)
    and the circles whose steps are clear (:func:`._triton_labels.settled_circles`) on the
    device; the other objects' vertices cross to the host (:func:`.enclosing.
    independent_circles`, or all of them where NumPy's sort decides). None where the
    kernels cannot run."""
    from . import _triton_labels as tk
    from .enclosing import independent_circles

    res = _triton_hulls(lab, dev, budget)
    if res is None:
        return None
    ids, cnt, sums, bbox, pts, counts = res
    cen, rad, ok = tk.settled_circles(pts, counts)
    both = torch.cat([cen, rad[:, None], ok[:, None].to(torch.float64)], 1).cpu().numpy()
    cen, rad = both[:, :2].copy(), both[:, 2].copy()
    left = np.flatnonzero(both[:, 3] == 0)
    if left.size:
        per = counts.cpu().numpy()
        start = np.cumsum(per) - per
        take = per[left]
        at = np.repeat(start[left] - (np.cumsum(take) - take), take) + np.arange(take.sum())
        sub = pts[torch.from_numpy(at).to(dev)].to(torch.float64).cpu().numpy()
        found = independent_circles(sub, take)
        if found is None:  # NumPy's sort of every object's angles decides: all on the host
            cen, rad = minimum_enclosing_circles(pts.to(torch.float64).cpu().numpy(), per)
        else:
            cen[left], rad[left] = found
    return _enclosing_geometry(ids, cnt, sums, bbox, cen, rad)


#: The directions (in the ``(x, y) = (col, row)`` plane, integer vectors so that every
#: projection is an exact integer, in increasing angle) in which :func:`_torch_geometry`
#: takes each object's extreme pixel: 32 of them, at most about 18 degrees apart.
DIRECTIONS = ((1, 0), (3, 1), (2, 1), (3, 2), (1, 1), (2, 3), (1, 2), (1, 3),
              (0, 1), (-1, 3), (-1, 2), (-2, 3), (-1, 1), (-3, 2), (-2, 1), (-3, 1),
              (-1, 0), (-3, -1), (-2, -1), (-3, -2), (-1, -1), (-2, -3), (-1, -2), (-1, -3),
              (0, -1), (1, -3), (1, -2), (2, -3), (1, -1), (3, -2), (2, -1), (3, -1))


def _boundary(blk: torch.Tensor, above: torch.Tensor | None, below: torch.Tensor | None
              ) -> torch.Tensor:
    """Labelled pixels of a row block with a 4-neighbour of another label (or on the image's
    edge): every vertex of an object's convex hull is one. ``above``, ``below``: the rows
    next to the block (None at the image's edges)."""
    up = torch.cat([above if above is not None else torch.full_like(blk[:1], -1), blk[:-1]])
    down = torch.cat([blk[1:], below if below is not None else torch.full_like(blk[:1], -1)])
    edge = (blk != up) | (blk != down)
    edge[:, 0] = True
    edge[:, -1] = True
    edge[:, 1:] |= blk[:, 1:] != blk[:, :-1]
    edge[:, :-1] |= blk[:, :-1] != blk[:, 1:]
    return edge & (blk != 0)


#: The Triton geometry (:func:`_triton_geometry`) solves each object's circle in one
#: program that scans the object's bounding box a few times; an object whose box holds more
#: pixels than this goes to the torch steps instead (they read each pixel once).
TRITON_BOX_PIXELS = 2**22


def _device_geometry(lab: Any, dev: torch.device, budget: int,
                     directions: tuple[tuple[int, int], ...] = DIRECTIONS,
                     triton: bool = True) -> LabelGeometry:
    """``centre="enclosing"`` computed where ``lab`` is: by the Triton kernels of
    :mod:`._triton_labels` (:func:`_triton_geometry`) where they run (``triton``, a CUDA
    device, the default ``directions``), else by :func:`_torch_geometry`."""
    if triton and directions == DIRECTIONS:
        geo = _triton_geometry(lab, dev, budget)
        if geo is not None:
            return geo
    return _torch_geometry(lab, dev, budget, directions)


def _triton_geometry(lab: Any, dev: torch.device, budget: int) -> LabelGeometry | None:
    """``centre="enclosing"`` by the Triton kernels of :mod:`._triton_labels`: the counts,
    sums and boxes of every label value in one pass over the image (run by run), then each
    object's minimum enclosing circle in one program (Elzinga and Hearn's steps over the
    pixels of its box). None when they cannot run here: not a CUDA device (or the
    interpreter), the labels not on the device and larger than half the budget, a label
    value table over the budget, a box over :data:`TRITON_BOX_PIXELS`, or an object whose
    steps did not end (the torch steps then solve every object)."""
    from . import _triton_labels as tk

    if not tk.available(dev):
        return None
    h = lab.shape[0]
    if not _whole_on_device(lab, dev, budget):
        return None
    t = _block(lab, 0, h, dev).contiguous()
    if t.dtype not in tk.LABEL_DTYPES:
        return None
    empty = LabelGeometry(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, 2)),
                          np.zeros((0, 4), np.int64), np.zeros((0, 2)), np.zeros(0),
                          "enclosing")
    if t.numel() == 0:
        return empty
    lo, hi = (int(x) for x in torch.stack(torch.aminmax(t)).tolist())
    if lo < 0:
        raise ValueError(f"labels must be >= 0 (0 is background), got the label {lo}")
    if hi < 1:
        return empty
    if (hi + 1) * 48 > budget // 4:
        return None
    count, srow, scol, box = tk.label_stats(t, hi)
    ids = torch.nonzero(count).reshape(-1)
    box = box[ids]
    size = (box[:, 2] - box[:, 0] + 1).to(torch.int64) * (box[:, 3] - box[:, 1] + 1)
    if int(size.max()) > TRITON_BOX_PIXELS:
        return None
    cnt = count[ids]
    centroid = torch.stack([srow[ids], scol[ids]], 1).to(torch.float64) / cnt[:, None]
    centre, radius, ok = tk.circles(t, ids, box, centroid)
    if not ok:
        return None
    bbox = torch.cat([box[:, :2], box[:, 2:] + 1], 1).to(torch.int64)
    return LabelGeometry(ids.cpu().numpy(), cnt.cpu().numpy(), centroid.cpu().numpy(),
                         bbox.cpu().numpy(), centre.cpu().numpy(), radius.cpu().numpy(),
                         "enclosing")


def _torch_geometry(lab: Any, dev: torch.device, budget: int,
                    directions: tuple[tuple[int, int], ...] = DIRECTIONS) -> LabelGeometry:
    """``centre="enclosing"`` computed where ``lab`` is, in torch operations (the reference
    of :func:`_triton_geometry`; it runs on the CPU too), with no per-object loop on the
    host.

    * counts, sums and bounding boxes of the labelled pixels by ``index_add_`` and
      ``scatter_reduce_`` over their object indices, as :func:`_geometry_pass`;
    * each object's extreme pixel in each of the ``directions`` (:data:`DIRECTIONS`:
      integer vectors with components of at most 3, in increasing angle; the largest
      projection, ties to the largest projection on the perpendicular: a vertex of the
      object's convex hull), from its boundary pixels (:func:`_boundary`), by one
      ``scatter_reduce_`` of an exact integer key per direction;
    * those vertices (a subset of the hull's, in convex position), put in order of their
      angle about the centroid, go through Chrystal's steps
      (:func:`.enclosing.minimum_enclosing_circles_torch`): the smallest circle around them;
    * a check of every boundary pixel against its object's circle: where one lies outside
      (a hull vertex between two directions decides the circle), the farthest boundary
      pixel (a hull vertex) joins the object's points and its circle is solved again, until
      none lies outside.

    The circle is each object's minimum enclosing circle, up to rounding (the host's
    :func:`.enclosing.minimum_enclosing_circles` gives CellProfiler's bits)."""
    h, w = lab.shape
    ids = _present_labels(lab, dev, budget)
    n = len(ids)
    mapper = _Mapper(ids, dev, budget)
    big = torch.iinfo(torch.int64).max
    count = torch.zeros(n, dtype=torch.int64, device=dev)
    sums = torch.zeros(n, 2, dtype=torch.float64, device=dev)
    lo = torch.full((n, 2), big, dtype=torch.int64, device=dev)
    hi = torch.full((n, 2), -1, dtype=torch.int64, device=dev)
    dirs = torch.tensor(directions, dtype=torch.int64, device=dev)  # (D, 2): (x, y) steps
    D = len(directions)
    reach = 6 * (max(h, w) + 1)  # |projection| < reach: the components are at most 3
    ext = torch.full((n, D), -big, dtype=torch.int64, device=dev)
    edge_rows, edge_cols, edge_obj = [], [], []
    per_pixel = 64 + 16 * D
    blocks = list(_row_blocks(h, w, per_pixel, _block_budget(dev, budget, w, per_pixel),
                              "the geometry of the labels"))
    for r0, r1 in blocks:
        _, rows, cols, li = _pixels(lab, r0, r1, mapper, dev)
        if li.numel() == 0:
            continue
        _add_moments(li, rows, cols, count, sums, lo, hi)
        blk = _block(lab, r0, r1, dev)
        above = _block(lab, r0 - 1, r0, dev) if r0 > 0 else None
        below = _block(lab, r1, r1 + 1, dev) if r1 < h else None
        flat = torch.nonzero(_boundary(blk, above, below).reshape(-1)).reshape(-1)
        er = torch.div(flat, w, rounding_mode="floor") + r0
        ec = flat % w
        eo = mapper(blk.reshape(-1)[flat])
        # key: projection on the direction, then on its perpendicular (a quarter turn
        # counter-clockwise), both exact integers
        proj = ec[:, None] * dirs[None, :, 0] + er[:, None] * dirs[None, :, 1]
        perp = -ec[:, None] * dirs[None, :, 1] + er[:, None] * dirs[None, :, 0]
        key = proj * (2 * reach) + (perp + reach)
        ext.scatter_reduce_(0, eo[:, None].expand(-1, D), key, "amax")
        edge_rows.append(er)
        edge_cols.append(ec)
        edge_obj.append(eo)
    centroid = sums / count.clamp(min=1)[:, None]
    if n == 0:
        empty = np.zeros((0, 2))
        return LabelGeometry(ids.astype(np.int64), np.zeros(0, np.int64), empty,
                             np.zeros((0, 4), np.int64), empty, np.zeros(0), "enclosing")
    er, ec, eo = torch.cat(edge_rows), torch.cat(edge_cols), torch.cat(edge_obj)
    # back from the keys to the pixels: proj = a x + b y, perp = -b x + a y
    proj = torch.div(ext, 2 * reach, rounding_mode="floor")
    perp = ext - proj * (2 * reach) - reach
    a, b = dirs[:, 0], dirs[:, 1]
    norm = a * a + b * b
    px = torch.div(a * proj - b * perp, norm, rounding_mode="floor")
    py = torch.div(b * proj + a * perp, norm, rounding_mode="floor")
    cand_obj = torch.arange(n, device=dev)[:, None].expand(-1, D).reshape(-1)
    cand_row, cand_col = py.reshape(-1), px.reshape(-1)
    centre, radius = _circles_of_points(cand_obj, cand_row, cand_col, centroid, n, h, w)
    erf, ecf = er.to(torch.float64), ec.to(torch.float64)
    while True:  # each round adds a hull vertex to each object it solves again
        d2 = (erf - centre[eo, 0]) ** 2 + (ecf - centre[eo, 1]) ** 2
        far = torch.zeros(n, dtype=torch.float64, device=dev)
        far.scatter_reduce_(0, eo, d2, "amax")
        bad = far > radius * radius * (1 + 1e-12)
        if not bool(bad.any()):
            break
        pick = bad[eo] & (d2 == far[eo])
        cand_obj = torch.cat([cand_obj, eo[pick]])
        cand_row = torch.cat([cand_row, er[pick]])
        cand_col = torch.cat([cand_col, ec[pick]])
        # solve again the objects that had a pixel outside, with all their points
        redo = torch.nonzero(bad).reshape(-1)
        renum = torch.full((n,), -1, dtype=torch.int64, device=dev)
        renum[redo] = torch.arange(len(redo), device=dev)
        sel = bad[cand_obj]
        c2, r2 = _circles_of_points(renum[cand_obj[sel]], cand_row[sel], cand_col[sel],
                                    centroid[redo], len(redo), h, w)
        centre[redo], radius[redo] = c2, r2
    bbox = torch.cat([lo, hi + 1], dim=1)
    return LabelGeometry(ids.astype(np.int64), count.cpu().numpy(), centroid.cpu().numpy(),
                         bbox.cpu().numpy(), centre.cpu().numpy(), radius.cpu().numpy(),
                         "enclosing")


def _circles_of_points(obj: torch.Tensor, row: torch.Tensor, col: torch.Tensor,
                       centroid: torch.Tensor, n: int, h: int, w: int
                       ) -> tuple[torch.Tensor, torch.Tensor]:
    """The smallest circle around each object's points (hull vertices of it, with
    repeats): the distinct points, in order of their angle about the object's centroid
    (convex position), through :func:`.enclosing.minimum_enclosing_circles_torch`."""
    key = (obj * (h + 1) + row) * (w + 1) + col
    key = torch.unique(key)  # sorted: object by object
    o = torch.div(key, (h + 1) * (w + 1), rounding_mode="floor")
    rest = key - o * (h + 1) * (w + 1)
    r = torch.div(rest, w + 1, rounding_mode="floor")
    c = rest - r * (w + 1)
    ang = torch.atan2(r.to(torch.float64) - centroid[o, 0], c.to(torch.float64) - centroid[o, 1])
    order = torch.argsort(ang, stable=True)
    order = order[torch.argsort(o[order], stable=True)]
    pts = torch.stack([r[order], c[order]], 1).to(torch.float64)
    counts = torch.bincount(o, minlength=n)
    return minimum_enclosing_circles_torch(pts, counts)


def _column_extremes(keys: torch.Tensor, rows: torch.Tensor
                     ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    uk, inv = torch.unique(keys, return_inverse=True)
    big = torch.iinfo(torch.int64).max
    rmin = torch.full((len(uk),), big, dtype=torch.int64, device=keys.device)
    rmax = torch.full((len(uk),), -1, dtype=torch.int64, device=keys.device)
    rmin.scatter_reduce_(0, inv, rows, "amin")
    rmax.scatter_reduce_(0, inv, rows, "amax")
    return uk, rmin, rmax


def label_geometry(labels: Any, *, centre: str = "enclosing", device: Any = None,
                   method: str = "auto", memory_budget: float | None = None
                   ) -> LabelGeometry:
    r"""Pixel count, centroid, bounding box and disk (centre, radius) of every object.

    Parameters
    ----------
    labels : array_like or torch.Tensor of int
        ``(H, W)`` label image of any integer dtype: 0 is background, every positive value an
        object; labels need not be contiguous. A boolean mask is one object, label 1.
    centre : {"enclosing", "centroid-enclosing", "area"}
        How each object's disk is placed and sized (module notes).
    device : str, optional
        Where the pass over the pixels runs (default: where ``labels`` is, else the CPU).
    method : {"auto", "torch", "numba"}
        ``"auto"``: on the CPU, compiled loops over the whole image (no scratch but
        per-object arrays) when the largest label fits a lookup table in the budget, else the
        torch passes over row blocks (``"torch"``; the only path on a GPU). ``"numba"``
        asks for the compiled loops (CPU only). Both give the same numbers, to the bit.
    memory_budget : float, optional
        Scratch bytes (or a fraction of the free memory, <= 1); default
        :func:`fastmoments._memory.memory_budget`. The image is read in row blocks that fit.

    Returns
    -------
    LabelGeometry

    Raises
    ------
    TypeError
        ``labels`` not integer.
    ValueError
        ``labels`` not 2-D or negative; unknown ``centre``.

    Examples
    --------
    >>> lab = np.zeros((9, 9), dtype=np.uint16)
    >>> lab[1:4, 1:4] = 7
    >>> g = label_geometry(lab)
    >>> g.labels, g.area, g.centre, g.radius
    (array([7]), array([9]), array([[2., 2.]]), array([1.41421356]))
    """
    lab, is_tensor = _check_labels(labels)
    centre = check_choice("centre", centre, CENTRES)
    method = check_choice("method", method, ("auto", "torch", "numba"))
    budget_arg = check_memory_budget(memory_budget)
    dev = resolve_device(device, lab.device if is_tensor else None, name="labels")
    if method == "numba" and dev.type != "cpu":
        raise ValueError(f"method='numba' runs on the CPU, got device {dev.type!r}")
    budget = memory_budget_bytes(dev, budget_arg)
    return _geometry(lab, centre, dev, budget, fused=method != "torch")[0]


def memory_budget_bytes(dev: torch.device, budget: float | None) -> int:
    """The budget in bytes (:func:`fastmoments._memory.memory_budget`)."""
    return memory_budget(dev, budget)


#: The error of an intensity image that holds NaN or infinity.
NOT_FINITE = "image contains NaN or infinity"


def _geometry_parts(lab: Any, dev: torch.device, budget: int, fused: bool = True
                    ) -> tuple[tuple[np.ndarray, ...], np.ndarray | None]:
    """One pass over the labels: ``(ids, count, sums, bbox, obj, col, row_min, row_max)``
    (labels present, pixel counts, sums of rows and columns, bounding boxes, and the column
    extremes of every object, see :mod:`.enclosing`), and the label lookup table when the
    compiled pass made it (None otherwise). ``fused``: the compiled pass may be used (CPU
    only)."""
    res = _fused_pass(lab, budget) if fused and dev.type == "cpu" else None
    if res is not None:
        return res[:-1], res[-1]
    ids = _present_labels(lab, dev, budget)
    mapper = _Mapper(ids, dev, budget)
    return (ids, *_geometry_pass(lab, ids, mapper, dev, budget)), None


def _disks(ids: np.ndarray, cnt: np.ndarray, sums: np.ndarray, bbox: np.ndarray,
           obj: np.ndarray, col: np.ndarray, rmin: np.ndarray, rmax: np.ndarray, centre: str,
           circle_device: torch.device | None = None) -> LabelGeometry:
    """The geometry from the pass's parts (:func:`_geometry_parts`): centroids, and each
    object's disk by ``centre``. The column extremes may be those of any set of the
    object's pixels that holds the vertices of its convex hull. ``circle_device``: solve the
    minimum enclosing circles there, in torch (:func:`.enclosing.
    minimum_enclosing_circles_torch`), instead of with NumPy on the host."""
    n = len(ids)
    if centre == "enclosing":
        return _hull_disks(ids, cnt, sums, bbox, *convex_hulls(obj, col, rmin, rmax, n),
                           circle_device)
    centroid = sums / np.maximum(cnt, 1)[:, None]
    if centre == "area":
        cen, rad = centroid.copy(), np.sqrt(cnt / np.pi)
    else:
        # the farthest pixel square from the centroid: a convex function of the pixel
        # position, so its maximum is at a column extreme
        d2 = np.zeros(n)
        for r in (rmin, rmax):
            v = ((np.abs(r - centroid[obj, 0]) + 0.5) ** 2
                 + (np.abs(col - centroid[obj, 1]) + 0.5) ** 2)
            np.maximum.at(d2, obj, v)
        cen, rad = centroid.copy(), np.sqrt(d2)
    return LabelGeometry(ids.astype(np.int64), cnt.astype(np.int64), centroid,
                         bbox.astype(np.int64), cen, rad, centre)


def _hull_disks(ids: np.ndarray, cnt: np.ndarray, sums: np.ndarray, bbox: np.ndarray,
                pts: np.ndarray, counts: np.ndarray,
                circle_device: torch.device | None = None) -> LabelGeometry:
    """The geometry of ``centre="enclosing"`` from the objects' convex hull vertices
    (:func:`.enclosing.convex_hulls`): each object's minimum enclosing circle."""
    if circle_device is not None:
        c, r = minimum_enclosing_circles_torch(
            torch.from_numpy(pts.astype(np.float64)).to(circle_device),
            torch.from_numpy(counts).to(circle_device))
        cen, rad = c.cpu().numpy(), r.cpu().numpy()
    else:
        cen, rad = minimum_enclosing_circles(np.asarray(pts, dtype=np.float64), counts)
    return _enclosing_geometry(ids, cnt, sums, bbox, cen, rad)


def _enclosing_geometry(ids: np.ndarray, cnt: np.ndarray, sums: np.ndarray,
                        bbox: np.ndarray, cen: np.ndarray, rad: np.ndarray) -> LabelGeometry:
    """The geometry of ``centre="enclosing"`` from the pass's labels, counts, sums and
    boxes and the objects' minimum enclosing circles."""
    centroid = sums / np.maximum(cnt, 1)[:, None]
    return LabelGeometry(ids.astype(np.int64), cnt.astype(np.int64), centroid,
                         bbox.astype(np.int64), cen, rad, "enclosing")


def _geometry(lab: Any, centre: str, dev: torch.device, budget: int, fused: bool = True,
              circle_device: torch.device | None = None
              ) -> tuple[LabelGeometry, np.ndarray | None]:
    """The geometry, and the label lookup table when the compiled pass made it (None
    otherwise). ``fused``: the compiled passes may be used (CPU only; for
    ``centre="enclosing"``, the one pass of :func:`_hull_pass` when it can; on CUDA the
    hulls and the circles on the device, :func:`_triton_hull_disks`, when the Triton
    kernels run); ``circle_device``: as for :func:`_disks`."""
    if fused and dev.type == "cpu" and centre == "enclosing":
        res = _hull_pass(lab, budget)
        if res is not None:
            *parts, lut, _rows = res
            return _hull_disks(*parts, circle_device), lut
    if dev.type == "cuda" and centre == "enclosing" and circle_device is None:
        geo = _triton_hull_disks(lab, dev, budget)
        if geo is not None:
            return geo, None
    parts, lut = _geometry_parts(lab, dev, budget, fused)
    return _disks(*parts, centre, circle_device), lut


def _cpu_geometry(lab: Any, centre: str, budget: int
                  ) -> tuple[LabelGeometry, np.ndarray | None, ObjectRows | None]:
    """:func:`_geometry` by the compiled passes on the CPU, with the label lookup table and,
    from the one pass of ``centre="enclosing"``, each object's rows (else None)."""
    if centre == "enclosing":
        res = _hull_pass(lab, budget)
        if res is not None:
            *parts, lut, rows = res
            return _hull_disks(*parts), lut, rows
    parts, lut = _geometry_parts(lab, torch.device("cpu"), budget, True)
    return _disks(*parts, centre), lut, None


def _check_finite(img: Any, dev: torch.device, budget: int) -> None:
    """Raise :data:`NOT_FINITE` when the float image ``img`` holds NaN or infinity (an
    integer image is finite)."""
    if not (img.is_floating_point() if isinstance(img, torch.Tensor)
            else img.dtype.kind == "f"):
        return
    arr = _as_host_array(img)
    if arr is not None and arr.dtype.itemsize >= 4:
        from ._numba_labels import all_finite

        if not all_finite(arr):  # one compiled pass, no scratch
            raise ValueError(NOT_FINITE)
        return
    h, w = img.shape
    for r0, r1 in _row_blocks(h, w, 16, _block_budget(dev, budget, w, 16),
                              "checking the image"):
        blk = _block(img, r0, r1, dev)
        if not bool(torch.isfinite(blk).all()):
            raise ValueError(NOT_FINITE)
