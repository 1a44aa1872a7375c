r"""3-D Zernike moments of every object of a label volume, each on its own voxels in its own
ball, all objects in one pass over the voxels (no cropping, no loop over objects).

Geometry (one pass over the labelled voxels, all labels at once)
    voxel count, centroid (mean voxel centre, voxel :math:`(d, h, w)` at index coordinates
    :math:`(d, h, w)`), bounding box, and each object's ball, by ``centre=``:

    * ``"centroid-enclosing"`` (default): centred on the centroid :math:`\bar p`, with the
      smallest radius that holds every voxel of the object whole,
      :math:`R = \max_p \| |p - \bar p| + \tfrac12 \|` (the absolute value and the
      :math:`\tfrac12` per axis): ``zernike3d_moments(..., center="centroid",
      radius="enclosing")`` of the object alone;
    * ``"volume"``: centred on the centroid, with the radius of the ball of the object's
      volume, :math:`R = (3V / 4\pi)^{1/3}` for :math:`V` voxels (voxels outside it are left
      out).

Moments (a second pass)
    voxel :math:`p` of object :math:`L` has ball coordinates
    :math:`(x, y, z) = ((p_w - c_w), (p_h - c_h), (p_d - c_d)) / R_L` (the axes of
    :mod:`fastmoments.ball.sampling`), weight :math:`R_L^{-3}` (its volume in ball units),
    and with :math:`x^2 + y^2 + z^2 \le 1`

    .. math:: \Omega_{nl}^m = \tfrac{3}{4\pi} \sum_{p \in L} R_L^{-3} f_p
              \overline{Z_{nl}^m(x_p, y_p, z_p)}
              = \sqrt{\tfrac{3}{4\pi}}\, R_L^{-3} \sum_{p \in L} f_p R_{nl}(r_p)
              \overline{Y_l^m(\theta_p, \varphi_p)},

    the midpoint rule (``k=1``) of :func:`fastmoments.ball.zernike3d_moments` on a volume
    that holds the object alone, with its centre and radius. The radial polynomials and
    harmonics are :mod:`fastmoments.ball.functions`' (float64 recurrences), evaluated at
    each voxel and summed per object by one ``index_add_`` over the object index of every
    voxel of a block of slices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from .. import _memory
from .._array import resolve_device
from .._memory import check_memory_budget, rows_per_chunk
from .._validate import check_choice, check_int
from .engine import FORWARD_SCALE, BallIndex
from .functions import radial_table, spherical_harmonics
from .moments import _pair_layout

__all__ = ["CENTRES3D", "ObjectMoments3D", "object_moments3d"]

#: ``centre=`` choices of :func:`object_moments3d`.
CENTRES3D = ("centroid-enclosing", "volume")
#: ``kind=`` choices: the rotation invariants :math:`F_{nl}`, or the complex moments.
KINDS3D = ("invariant", "complex")
#: Points with :math:`r^2 \le 1 +` this are kept (rounding of voxels on the sphere).
ON_SPHERE = 1e-10


@dataclass(frozen=True, eq=False)
class ObjectMoments3D:
    """3-D Zernike moments of every object of a label volume, one row per label.

    Attributes
    ----------
    labels : numpy.ndarray
        ``(n,)`` labels present, increasing.
    volume : numpy.ndarray
        ``(n,)`` voxel counts.
    centroid, centre : numpy.ndarray
        ``(n, 3)`` float64 ``(d, h, w)``: mean voxel centre, centre of each ball.
    bbox : numpy.ndarray
        ``(n, 6)`` ``(min_d, min_h, min_w, max_d + 1, max_h + 1, max_w + 1)``.
    radius : numpy.ndarray
        ``(n,)`` float64 ball radius in voxels.
    nlm : numpy.ndarray
        ``(K, 3)`` the ``(n, l, m >= 0)`` of each column of :attr:`values`
        (:class:`fastmoments.ball.Zernike3DMoments`' order).
    values : numpy.ndarray or torch.Tensor
        ``(n, K)`` complex moments :math:`\\Omega_{nl}^m`.
    names : list of str
        Column names of :attr:`features`.
    features : numpy.ndarray or torch.Tensor
        ``(n, F)``: the invariants :math:`F_{nl}` (``kind="invariant"``, columns ``F[n,l]``)
        or the real and imaginary parts of the moments.
    centre_kind, kind : str
        The options that made them.
    """

    labels: np.ndarray
    volume: np.ndarray
    centroid: np.ndarray
    bbox: np.ndarray
    centre: np.ndarray
    radius: np.ndarray
    nlm: np.ndarray
    values: Any
    names: list[str]
    features: Any
    centre_kind: str
    kind: str

    def __len__(self) -> int:
        return len(self.labels)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        feats = self.features
        if isinstance(feats, torch.Tensor):
            feats = feats.detach().cpu().numpy()
        return np.asarray(feats, dtype=dtype)

    def to_dict(self) -> dict[str, np.ndarray]:
        """One NumPy array per column: ``label``, ``volume``, ``centre_d``, ``centre_h``,
        ``centre_w``, ``radius``, then the features."""
        out: dict[str, np.ndarray] = {
            "label": self.labels, "volume": self.volume, "centre_d": self.centre[:, 0],
            "centre_h": self.centre[:, 1], "centre_w": self.centre[:, 2],
            "radius": self.radius}
        feats = np.asarray(self)
        for k, name in enumerate(self.names):
            out[name] = feats[:, k]
        return out


def _check_labels3d(labels: Any) -> tuple[torch.Tensor, bool]:
    is_tensor = isinstance(labels, torch.Tensor)
    arr = labels if is_tensor else np.asarray(labels)
    if arr.ndim != 3:
        raise ValueError(f"labels must be a 3-D label volume (D, H, W), got shape "
                         f"{tuple(arr.shape)}")
    if is_tensor:
        if arr.dtype == torch.bool:
            arr = arr.to(torch.uint8)
        if arr.is_floating_point() or arr.is_complex():
            raise TypeError(f"labels must hold integers, got {arr.dtype}")
        t = arr.to(torch.int64) if arr.dtype != torch.int64 else arr
    else:
        if arr.dtype.kind == "b":
            arr = arr.astype(np.uint8)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"labels must hold integers, got dtype {arr.dtype}")
        if arr.dtype == np.uint64 and arr.size and int(arr.max()) > np.iinfo(np.int64).max:
            raise ValueError(f"labels must be < 2**63, got the label {int(arr.max())}")
        t = torch.from_numpy(np.ascontiguousarray(arr).astype(np.int64, copy=False))
    if t.numel() and int(t.min()) < 0:
        raise ValueError(f"labels must be >= 0 (0 is background), got the label "
                         f"{int(t.min())}")
    return t, is_tensor


def _slabs(depth: int, plane: int, bytes_per_voxel: int, budget: int):
    rows = rows_per_chunk(max(plane, 1) * bytes_per_voxel, budget, max(depth, 1),
                          what="3-D object moments")
    for d0 in range(0, depth, rows):
        yield d0, min(depth, d0 + rows)


def _voxels(lab: torch.Tensor, d0: int, d1: int, ids: torch.Tensor
            ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Flat index in the slab, ``(G, 3)`` float64 coordinates and object index of every
    labelled voxel of slices ``d0:d1``."""
    blk = lab[d0:d1]
    _, h, w = blk.shape
    flat = blk.reshape(-1)
    idx = torch.nonzero(flat).reshape(-1)
    d = torch.div(idx, h * w, rounding_mode="floor")
    rem = idx - d * (h * w)
    hh = torch.div(rem, w, rounding_mode="floor")
    coords = torch.stack([d + d0, hh, rem - hh * w], dim=1).to(torch.float64)
    return idx, coords, torch.searchsorted(ids, flat[idx])


def _check_image3d(image: Any, shape: tuple[int, ...]) -> tuple[torch.Tensor | None, bool]:
    """The intensity volume in float64 (checked: the labels' shape, real, finite) and whether
    it came as float64; ``(None, False)`` without one."""
    if image is None:
        return None, False
    is_t = isinstance(image, torch.Tensor)
    arr = image if is_t else np.asarray(image)
    if tuple(arr.shape) != shape:
        raise ValueError(f"image must have the shape of labels {shape}, got "
                         f"{tuple(arr.shape)}")
    if (arr.is_complex() if is_t else arr.dtype.kind == "c"):
        raise TypeError("image must be real, got complex values")
    if not is_t and arr.dtype.kind not in "biuf":
        raise TypeError(f"image must hold numbers, got dtype {arr.dtype}")
    img = (arr if is_t else torch.from_numpy(np.ascontiguousarray(arr))).to(torch.float64)
    if not bool(torch.isfinite(img).all()):
        raise ValueError("image contains NaN or infinity")
    return img, arr.dtype in (torch.float64, np.float64)


def _geometry3d(lab: torch.Tensor, ids: torch.Tensor, centre: str, budget: float) -> tuple:
    """Each object's voxel count, centroid, ball radius and box (corners ``lo``, ``hi``)."""
    # geometry: counts, coordinate sums (integers, exact in float64), boxes
    n = len(ids)
    dev = lab.device
    D, H, W = lab.shape
    count = torch.zeros(n, dtype=torch.int64, device=dev)
    sums = torch.zeros(n, 3, dtype=torch.float64, device=dev)
    lo = torch.full((n, 3), torch.iinfo(torch.int64).max, dtype=torch.int64, device=dev)
    hi = torch.full((n, 3), -1, dtype=torch.int64, device=dev)
    for d0, d1 in _slabs(D, H * W, 96, budget):
        _, xyz, li = _voxels(lab, d0, d1, ids)
        if li.numel() == 0:
            continue
        count.index_add_(0, li, torch.ones_like(li))
        sums.index_add_(0, li, xyz)
        c = xyz.to(torch.int64)
        lo.scatter_reduce_(0, li[:, None].expand(-1, 3), c, "amin")
        hi.scatter_reduce_(0, li[:, None].expand(-1, 3), c, "amax")
    centroid = sums / count.clamp(min=1)[:, None].to(torch.float64)
    if centre == "volume":
        radius = (3.0 * count.to(torch.float64) / (4.0 * math.pi)) ** (1.0 / 3.0)
    else:
        far = torch.zeros(n, dtype=torch.float64, device=dev)
        for d0, d1 in _slabs(D, H * W, 96, budget):
            _, xyz, li = _voxels(lab, d0, d1, ids)
            if li.numel():
                e = (xyz - centroid[li]).abs() + 0.5
                far.scatter_reduce_(0, li, (e * e).sum(1), "amax")
        radius = torch.sqrt(far)
    return count, centroid, radius, lo, hi


def _moment_sums3d(lab: torch.Tensor, img: torch.Tensor | None, ids: torch.Tensor,
                   index: Any, order: int, centroid: torch.Tensor, radius: torch.Tensor,
                   budget: float) -> torch.Tensor:
    """``(objects, K, 2)`` float64 sums of every voxel's ``f R_nl(r) conj(Y_lm)`` (re, im)
    per object, slab by slab."""
    # moments: every voxel's R_nl(r) conj(Y_lm), summed per object
    n, K, dev = len(ids), len(index.nlm), lab.device
    D, H, W = lab.shape
    acc = torch.zeros(n, K, 2, dtype=torch.float64, device=dev)
    n_harm = index.n_harmonics
    per_voxel = 8 * (6 * K + 4 * n_harm + 4 * (order + 1) + 32)
    lsizes = [index.n_orders(l) for l in range(order + 1)]
    for d0, d1 in _slabs(D, H * W, per_voxel, budget):
        idx, xyz, li = _voxels(lab, d0, d1, ids)
        if li.numel() == 0:
            continue
        r_obj = radius[li]
        u = (xyz - centroid[li]) / r_obj[:, None]  # (z, y, x) in ball units
        r2 = (u * u).sum(1)
        keep = torch.nonzero(r2 <= 1.0 + ON_SPHERE).reshape(-1)
        if keep.numel() == 0:
            continue
        u, li, r2 = u[keep], li[keep], r2[keep]
        f = torch.ones(len(keep), dtype=torch.float64, device=dev)
        if img is not None:
            f = img[d0:d1].reshape(-1)[idx[keep]]
        rad = radial_table(order, order, torch.sqrt(r2).clamp(max=1.0))
        Y = spherical_harmonics(order, u[:, 2], u[:, 1], u[:, 0])  # (G, n_harm, 2)
        parts = []
        for l in range(order + 1):
            y = Y[:, l * (l + 1) // 2: l * (l + 1) // 2 + l + 1]  # (G, l + 1, 2)
            rr = rad[l][:, : lsizes[l]] * f[:, None]  # (G, n_l)
            v = rr[:, :, None, None] * y[:, None, :, :]  # (G, n_l, l + 1, 2)
            parts.append(v.reshape(len(keep), -1, 2))
        vals = torch.cat(parts, dim=1)
        vals[..., 1] = -vals[..., 1]  # conj(Y)
        acc.index_add_(0, li, vals)
    return acc


def object_moments3d(labels: Any, image: Any = None, *, order: int = 8,
                     centre: str = "centroid-enclosing", kind: str = "invariant",
                     dtype: Any = None, device: Any = None,
                     memory_budget: float | None = None) -> ObjectMoments3D:
    r"""3-D Zernike moments of every object of a label volume, each on its own voxels in its
    own ball, all objects together (module notes).

    Parameters
    ----------
    labels : array_like or torch.Tensor of int
        ``(D, H, W)`` label volume: 0 is background, each positive value one object (labels
        need not be contiguous). Not modified.
    image : array_like or torch.Tensor, optional
        ``(D, H, W)`` intensities :math:`f_p`; without it every voxel weighs 1 (shape).
    order : int
        Largest order :math:`n` (default 8).
    centre : {"centroid-enclosing", "volume"}
        Each object's ball (module notes).
    kind : {"invariant", "complex"}
        Features: the rotation invariants :math:`F_{nl} = (\sum_{m=-l}^{l}
        |\Omega_{nl}^m|^2)^{1/2}` (Novotni and Klein 2003), or the real and imaginary parts
        of the moments (``m >= 0``).
    dtype : {"float32", "float64"}, optional
        Precision of the result (default float64 when ``image`` is float64, else float32);
        the sums run in float64.
    device : str, optional
        Where to compute (default: where ``labels`` or ``image`` is, else the CPU). NumPy in
        gives NumPy out.
    memory_budget : float, optional
        Scratch bytes (or a fraction of free memory, <= 1): the volume goes in slabs of
        slices that fit.

    Returns
    -------
    ObjectMoments3D

    Raises
    ------
    TypeError
        ``labels`` not integer, ``image`` not real, ``order`` not an integer.
    ValueError
        ``labels`` not 3-D or negative, ``image`` of another shape or not finite, an unknown
        option.

    Examples
    --------
    >>> lab = np.zeros((12, 12, 12), dtype=np.int32)
    >>> lab[2:6, 2:6, 2:6] = 1
    >>> lab[6:11, 5:10, 4:8] = 4
    >>> om = object_moments3d(lab, order=4)
    >>> om.labels, om.features.shape, om.names[:3]
    (array([1, 4]), (2, 9), ['F[0,0]', 'F[1,1]', 'F[2,0]'])
    """
    lab, lab_tensor = _check_labels3d(labels)
    order = check_int("order", order, minimum=0)
    centre = check_choice("centre", centre, CENTRES3D)
    kind = check_choice("kind", kind, KINDS3D)
    budget_arg = check_memory_budget(memory_budget)
    in_dev = labels.device if lab_tensor else None
    numpy_out = not lab_tensor
    img, float64 = _check_image3d(image, tuple(lab.shape))
    if isinstance(image, torch.Tensor):
        in_dev, numpy_out = image.device, False
    if dtype is None:
        out_dt = torch.float64 if float64 else torch.float32
    else:
        name = check_choice("dtype", str(dtype).removeprefix("torch."), ("float32", "float64"))
        out_dt = torch.float64 if name == "float64" else torch.float32
    dev = resolve_device(device, in_dev, name="labels")
    budget = _memory.memory_budget(dev, budget_arg)
    lab = lab.to(dev)
    if img is not None:
        img = img.to(dev)
    ids = torch.unique(lab)
    ids = ids[ids > 0]
    n = len(ids)
    index = BallIndex(order)
    nlm = index.nlm
    count, centroid, radius, lo, hi = _geometry3d(lab, ids, centre, budget)
    acc = _moment_sums3d(lab, img, ids, index, order, centroid, radius, budget)
    scale = FORWARD_SCALE / radius ** 3
    values = torch.complex(acc[..., 0], acc[..., 1]) * scale[:, None]
    if kind == "invariant":
        pairs, of = _pair_layout(order)
        m = torch.as_tensor(nlm[:, 2], device=dev)
        w = torch.where(m == 0, 1.0, 2.0).to(torch.float64)
        sq = (values.real ** 2 + values.imag ** 2) * w
        inv = torch.zeros(n, len(pairs), dtype=torch.float64, device=dev)
        inv.index_add_(1, torch.as_tensor(of, device=dev), sq)
        feats = torch.sqrt(inv)
        names = [f"F[{a},{b}]" for a, b in pairs]
    else:
        feats = torch.cat([values.real, values.imag], dim=1)
        names = ([f"Re Omega[{a},{b},{c}]" for a, b, c in nlm]
                 + [f"Im Omega[{a},{b},{c}]" for a, b, c in nlm])
    cdt = torch.complex128 if out_dt == torch.float64 else torch.complex64
    values, feats = values.to(cdt), feats.to(out_dt)
    if numpy_out:
        values, feats = values.cpu().numpy(), feats.cpu().numpy()
    bbox = torch.cat([lo, hi + 1], dim=1)
    return ObjectMoments3D(ids.cpu().numpy(), count.cpu().numpy(), centroid.cpu().numpy(),
                           bbox.cpu().numpy(), centroid.cpu().numpy().copy(),
                           radius.cpu().numpy(), nlm, values, names, feats, centre, kind)
