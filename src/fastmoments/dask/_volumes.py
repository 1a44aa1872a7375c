r"""3-D Zernike moments and invariants of chunked stacks of volumes (dask arrays), one task per
chunk: a Zarr store of volumes ``(N, D, H, W)`` chunked along ``N``, opened with
:func:`dask.array.from_zarr`, gives one descriptor row per volume without loading the stack."""

from __future__ import annotations

import string
from typing import Any

import dask.array as da
import numpy as np
import torch

from .._array import complex_dtype, working_dtype
from .._validate import check_choice, check_int
from ..ball.engine import BallIndex
from ..ball.moments import Zernike3DMoments, invariant_pairs
from ..ball.sampling import QUADRATURES
from ..ball.transform import check_placement
from ._features import _check_darr, _device_name, _single_chunk_tail
from ._workers import cached_factory, configure_threads

__all__ = ["zernike3d", "zernike3d_names"]

#: What :func:`zernike3d` returns per volume: the descriptor :math:`\|\Omega_{nl}\|` (real) or
#: the moments :math:`\Omega_{nl}^m`, ``m >= 0`` (complex).
VOLUME_KINDS = ("invariants", "moments")


def zernike3d_names(order: int, kind: str = "invariants") -> list[str]:
    """Column labels of :func:`zernike3d`: ``"F[n,l]"`` for the invariants, ``"Om[n,l,m]"``
    for the moments (``m >= 0``), as :meth:`Zernike3DMoments.names` gives them.

    Examples
    --------
    >>> zernike3d_names(2)
    ['F[0,0]', 'F[1,1]', 'F[2,0]', 'F[2,2]']
    >>> zernike3d_names(1, "moments")
    ['Om[0,0,0]', 'Om[1,1,0]', 'Om[1,1,1]']
    """
    order = check_int("order", order, minimum=0)
    kind = check_choice("kind", kind, VOLUME_KINDS)
    if kind == "invariants":
        return [f"F[{n},{l}]" for n, l in invariant_pairs(order)]
    return [f"Om[{n},{l},{m}]" for n, l, m in BallIndex(order).nlm.tolist()]


class _VolumeJob:
    """What a worker holds per configuration: one :class:`~fastmoments.ball.Zernike3DTransform`
    (or, for a placement per volume, the options of :func:`~fastmoments.ball.zernike3d_moments`,
    whose plan cache builds the plans)."""

    def __init__(self, shape: tuple[int, int, int], order: int, k: int, quadrature: str,
                 center: Any, radius: Any, dtype: str, device: str | None, kind: str) -> None:
        from ..ball import Zernike3DTransform, zernike3d_moments

        self.kind = kind
        self.per_volume = isinstance(center, str) or isinstance(radius, str)
        self.opts = dict(order=order, k=k, quadrature=quadrature, center=center,
                         radius=radius, dtype=dtype, device=device, progress=False)
        self._one_call = zernike3d_moments
        self.plan = None if self.per_volume else Zernike3DTransform(
            shape, order, k=k, quadrature=quadrature, center=center, radius=radius,
            dtype=dtype, device=device)

    def __call__(self, block: np.ndarray) -> np.ndarray:
        batch = block.shape[:-3]
        flat = block.reshape(-1, *block.shape[-3:])
        if self.plan is not None:
            Om: Zernike3DMoments = self.plan.forward(flat, progress=False)
        else:
            Om = self._one_call(flat, **self.opts)
        out = Om.invariants() if self.kind == "invariants" else Om.values()
        if isinstance(out, torch.Tensor):  # pragma: no cover - NumPy in gives NumPy out
            out = out.detach().cpu().numpy()
        out = np.asarray(out)
        return out.reshape(*batch, out.shape[-1])


@cached_factory("zernike3d", maxsize=16)
def _volume_job(shape: tuple[int, int, int], order: int, k: int, quadrature: str, center: Any,
                radius: Any, dtype: str, device: str | None, kind: str) -> _VolumeJob:
    return _VolumeJob(shape, order, k, quadrature, center, radius, dtype, device, kind)


def _volumes_block(block: np.ndarray, shape: tuple[int, int, int], order: int, k: int,
                   quadrature: str, center: Any, radius: Any, precision: str,
                   device: str | None, kind: str, n_columns: int, out_dtype: str
                   ) -> np.ndarray:
    if block.size == 0:
        return np.empty((*block.shape[:-3], n_columns), dtype=out_dtype)
    configure_threads()
    job = _volume_job(shape, order, k, quadrature, center, radius, precision, device, kind)
    return job(block)


def zernike3d(darr: Any, order: int, *, kind: str = "invariants", k: int = 1,
              quadrature: str = "midpoint", center: Any = None, radius: Any = None,
              dtype: Any = None, device: Any = None, rechunk: bool = True) -> da.Array:
    r"""3-D Zernike invariants (or moments) of a chunked stack of volumes, lazily: one row per
    volume.

    Parameters
    ----------
    darr : dask.array.Array
        ``(..., D, H, W)`` real volumes, chunked along the batch axes ``...`` (for a Zarr
        store of volumes ``(N, D, H, W)`` chunked along ``N``: ``dask.array.from_zarr(path)``).
    order : int
        Highest order :math:`N` of the moments.
    kind : {"invariants", "moments"}
        The descriptor :math:`F_{nl} = \|\Omega_{nl}\|` (real, columns
        :func:`zernike3d_names`), or the moments :math:`\Omega_{nl}^m` with :math:`m \ge 0`
        (complex, in the flat order of the plan's ``index``).
    k, quadrature, center, radius
        The sampling of the ball, as for :func:`fastmoments.ball.zernike3d_moments`:
        ``center="centroid"`` and ``radius="enclosing"`` place the ball per volume.
    dtype : {"float32", "float64"}, optional
        Working precision (default from ``darr``: float64 stays float64, else float32).
    device : str or torch.device, optional
        Where each task computes on its worker (``"cuda"`` on a ``dask_cuda`` worker is that
        worker's GPU); chunks come back to the host as NumPy.
    rechunk : bool
        Merge the volume axes into one chunk when they are split (default); ``False`` raises
        instead.

    Returns
    -------
    dask.array.Array
        ``(..., n_columns)``, chunked like ``darr``'s batch axes with one chunk of columns;
        float for the invariants, complex for the moments.

    Raises
    ------
    TypeError
        ``darr`` not a dask array or not numeric; a non-integer ``order`` or ``k``; a bad
        ``device`` type.
    ValueError
        Fewer than 3 dimensions, complex data, volume axes split with ``rechunk=False``, an
        unknown ``kind``/``quadrature``, a bad ``center``/``radius``, a device list. NaN or
        infinity in the volumes, and a ball that holds no voxel, raise when the chunk is
        computed.

    Notes
    -----
    Each chunk is one task carrying plain values (shape, order, options); its worker builds
    the plan once through a cached factory (:func:`plan_builds` counts them) and applies it to
    every chunk it gets. Row by row the values equal those of the in-memory
    :class:`~fastmoments.ball.Zernike3DTransform` (up to the rounding of a batch of another
    size). To keep the results of a long job as it runs, write them with
    :func:`dask.array.to_zarr`: chunk by chunk, each written once.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> vols = np.random.default_rng(0).random((6, 8, 8, 8))
    >>> x = da.from_array(vols, chunks=(2, 8, 8, 8))
    >>> F = zernike3d(x, 4)
    >>> F.shape, F.chunks, F.dtype
    ((6, 9), ((2, 2, 2), (9,)), dtype('float64'))
    >>> from fastmoments.ball import Zernike3DTransform
    >>> ref = Zernike3DTransform((8, 8, 8), 4, dtype="float64").forward(vols).invariants()
    >>> bool(np.allclose(F.compute(scheduler="sync"), ref, rtol=1e-13, atol=0))
    True
    """
    darr = _check_darr(darr, min_ndim=3)
    order = check_int("order", order, minimum=0)
    kind = check_choice("kind", kind, VOLUME_KINDS)
    k = check_int("k", k, minimum=1)
    quadrature = check_choice("quadrature", quadrature, QUADRATURES)
    center, radius = check_placement(center, radius)
    dt = working_dtype(dtype, darr.dtype, name="darr")
    precision = "float64" if dt == torch.float64 else "float32"
    out_dtype = precision if kind == "invariants" else str(complex_dtype(dt)).split(".")[-1]
    dev = _device_name(device)
    darr = _single_chunk_tail(darr, 3, rechunk, "volumes")
    if min(darr.shape[-3:]) < 1:
        raise ValueError(f"darr must have at least one voxel per axis, got shape {darr.shape}")
    shape = tuple(int(s) for s in darr.shape[-3:])
    n_columns = len(zernike3d_names(order, kind))
    batch = string.ascii_letters[: darr.ndim - 3]
    return da.blockwise(
        _volumes_block, batch + "f", darr, batch + "zyx",
        shape=shape, order=order, k=k, quadrature=quadrature, center=center, radius=radius,
        precision=precision, device=dev, kind=kind, n_columns=n_columns, out_dtype=out_dtype,
        new_axes={"f": n_columns}, concatenate=True, dtype=np.dtype(out_dtype),
        meta=np.empty((0,) * (darr.ndim - 2), dtype=out_dtype),
        token="fastmoments-zernike3d")
