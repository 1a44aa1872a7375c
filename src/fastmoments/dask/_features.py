"""Moment features and plan coefficients of chunked image batches (dask arrays)."""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence
from typing import Any

import dask.array as da
import numpy as np
import torch

from .._array import working_dtype
from .._defaults import FAMILY, KIND, ORDERS
from .._validate import check_choice, check_int
from ..disk.families import FAMILIES, get_family
from ..moments import KINDS
from ..moments import column_names as _column_names
from ..moments import label as _label
from ..recognition.extract import ALGORITHMS, moment_pairs
from ._workers import cached_factory, configure_threads

__all__ = ["feature_names", "features"]


def _check_darr(darr: Any, name: str = "darr", min_ndim: int = 2) -> da.Array:
    if not isinstance(darr, da.Array):
        raise TypeError(f"{name} must be a dask array (dask.array.Array; wrap NumPy data with "
                        f"dask.array.from_array(x, chunks=...)), got {type(darr).__name__}")
    if darr.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimensions, got shape "
                         f"{darr.shape}")
    if any(np.isnan(s) for s in darr.shape):
        raise ValueError(f"{name} has unknown chunk sizes (shape {darr.shape}); call "
                         f"{name}.compute_chunk_sizes() first")
    kind = np.dtype(darr.dtype).kind
    if kind == "c":
        raise ValueError(f"{name} must be real, got complex dtype {darr.dtype}")
    if kind not in "biuf":
        raise TypeError(f"{name} must hold numbers, got dtype {darr.dtype}")
    return darr


def _single_chunk_tail(darr: da.Array, axes: int, rechunk: bool, what: str,
                       name: str = "darr") -> da.Array:
    if not isinstance(rechunk, bool):
        raise TypeError(f"rechunk must be True or False, got {rechunk!r}")
    tail = range(darr.ndim - axes, darr.ndim)
    split = [a for a in tail if len(darr.chunks[a]) > 1]
    if not split:
        return darr
    if not rechunk:
        raise ValueError(f"{name} must hold whole {what} in each chunk: axes {split} are split "
                         f"into chunks {[darr.chunks[a] for a in split]}; rechunk them to one "
                         f"chunk ({name}.rechunk({{{', '.join(f'{a}: -1' for a in split)}}})) or "
                         f"pass rechunk=True")
    return darr.rechunk({a: -1 for a in split})


#: Why fastmoments.dask takes one device, said where a device list is given.
DEVICE_LIST_HINT = ("a device list splits one call over several GPUs in one process; "
                    "fastmoments.dask runs one task per chunk on one device per worker: give "
                    "device='cuda' and start one worker per GPU (dask_cuda.LocalCUDACluster)")


def _device_name(device: Any) -> str | None:
    if device is None:
        return None
    if device == "cuda:all" or (isinstance(device, (list, tuple)) and device):
        raise ValueError(f"device must be one device for fastmoments.dask, got {device!r}: "
                         f"{DEVICE_LIST_HINT}")
    if isinstance(device, torch.device):
        return str(device)
    if isinstance(device, str):
        try:
            torch.device(device)  # syntax only: the GPU lives on the worker, not here
        except RuntimeError as exc:
            raise ValueError(f"device must name a torch device such as 'cpu', 'cuda' or "
                             f"'cuda:1', got {device!r}") from exc
        return device
    raise TypeError(f"device must be None, a str such as 'cuda' or a torch.device, got "
                    f"{device!r}")


def _candidates(family: str, orders: Any, select: Any) -> tuple[tuple[int, int], ...]:
    if not isinstance(family, str):
        raise TypeError(f"family must be a name in {tuple(FAMILIES)}, got {family!r}")
    fam = get_family(family)
    if select is None:
        return tuple(moment_pairs(family, orders))
    if isinstance(select, (int, np.integer)) and not isinstance(select, bool):
        raise ValueError("select must be None or a sequence of (n, m) pairs here: select=int "
                         "picks moments by their variance over the whole collection, which no "
                         "chunk sees; choose them on a sample with "
                         "fastmoments.features(sample, select=c).pairs and pass those")
    try:
        pairs = tuple(fam.check_pair(n, m) for n, m in select)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, ValueError) and "valid" in str(exc):
            raise ValueError(f"select: {exc}") from exc
        raise TypeError(f"select must be a sequence of (n, m) pairs: {exc}") from exc
    if not pairs:
        raise ValueError("select must name at least one moment")
    return pairs


def feature_names(family: str = FAMILY, orders: int | Iterable[int] = ORDERS,
                  kind: str = KIND, *,
                  select: Sequence[tuple[int, int]] | None = None) -> list[str]:
    """Column labels of :func:`features` (the same as :attr:`FeatureSet.names`).

    Examples
    --------
    >>> feature_names("zernike", 1, "complex")
    ['Re A[0,0]', 'Im A[0,0]', 'Re A[1,1]', 'Im A[1,1]']
    """
    kind = check_choice("kind", kind, KINDS)
    pairs = _candidates(family, orders, select)
    return [_label(*c) for c in _column_names(pairs, kind)]


class _FeatureJob:
    """What a worker holds per feature configuration: the options of the in-memory
    :func:`fastmoments.features`, whose plan caches it fills once when built."""

    def __init__(self, family: str, size: int, pairs: tuple[tuple[int, int], ...], kind: str,
                 k: int, quadrature: str, rule: str, dtype: str, device: str | None,
                 algorithm: str) -> None:
        from ..recognition import features as _features

        self._fn = _features
        self.opts = dict(family=family, select=list(pairs), kind=kind, k=k,
                         quadrature=quadrature, rule=rule, dtype=dtype, device=device,
                         algorithm=algorithm, progress=False)
        # build the plans now (one zero image): later chunks only apply them
        warm = _features(np.zeros((1, size, size), dtype=dtype), **self.opts)
        self.n_features = warm.n_features

    def __call__(self, block: np.ndarray) -> np.ndarray:
        batch = block.shape[:-2]
        flat = block.reshape(-1, *block.shape[-2:])
        mat = self._fn(flat, **self.opts).matrix
        if isinstance(mat, torch.Tensor):  # pragma: no cover - NumPy in gives NumPy out
            mat = mat.detach().cpu().numpy()
        return np.asarray(mat).reshape(*batch, self.n_features)


@cached_factory("features", maxsize=32)
def _feature_job(family: str, size: int, pairs: tuple[tuple[int, int], ...], kind: str, k: int,
                 quadrature: str, rule: str, dtype: str, device: str | None,
                 algorithm: str) -> _FeatureJob:
    return _FeatureJob(family, size, pairs, kind, k, quadrature, rule, dtype, device,
                       algorithm)


def _features_block(block: np.ndarray, family: str, size: int,
                    pairs: tuple[tuple[int, int], ...], kind: str, k: int, quadrature: str,
                    rule: str, precision: str, device: str | None, algorithm: str,
                    n_features: int) -> np.ndarray:
    if block.size == 0:
        return np.empty((*block.shape[:-2], n_features), dtype=precision)
    configure_threads()
    job = _feature_job(family, size, pairs, kind, k, quadrature, rule, precision, device,
                       algorithm)
    return job(block)


def features(darr: Any, family: str = FAMILY, orders: int | Iterable[int] = ORDERS,
             kind: str = KIND, *, select: Sequence[tuple[int, int]] | None = None,
             k: int = 1, quadrature: str = "midpoint", rule: str = "inscribed",
             dtype: Any = None, device: Any = None, algorithm: str = "auto",
             rechunk: bool = True) -> da.Array:
    r"""Moment feature vectors of a chunked batch of images, lazily: one row per image.

    Parameters
    ----------
    darr : dask.array.Array
        ``(..., N, N)`` real images, chunked along the batch axes ``...``.
    family : str
        Disk family (as in :func:`fastmoments.features`): ``"zernike"`` (default),
        ``"pseudo-zernike"``, or any name in :data:`fastmoments.disk.FAMILIES`.
    orders : int or iterable of int
        ``T`` for every stored moment with ``n <= T`` (default 9), or the orders themselves.
    kind : {"magnitude", "complex", "real"}
        Magnitudes (default), ``(Re, Im)`` column pairs, or real parts.
    select : sequence of (n, m), optional
        Exactly these moments, in this order (``orders`` is then ignored). Selection by
        variance (``select=int``) needs the whole collection and is refused here.
    k, quadrature, rule
        Sampling of the disk (as in :func:`fastmoments.features`).
    dtype : {"float32", "float64"}, optional
        Working precision (default from ``darr``: float64 stays float64, else float32); the
        result has this dtype.
    device : str or torch.device, optional
        Where each task computes, on its worker: ``"cuda"`` on a ``dask_cuda`` worker is that
        worker's GPU. Chunks come back to the host as NumPy.
    algorithm : {"auto", "dense", "engine"}
        As in :func:`fastmoments.features`.
    rechunk : bool
        Merge the last two axes into one chunk when they are split (default); ``False``
        raises instead.

    Returns
    -------
    dask.array.Array
        ``(..., n_features)`` real, chunked like ``darr``'s batch axes with one chunk of
        features; column labels from :func:`feature_names`.

    Raises
    ------
    TypeError
        ``darr`` not a dask array or not numeric; non-integer orders; bad ``device`` type.
    ValueError
        Fewer than 2 dimensions, non-square images, image axes split with ``rechunk=False``,
        unknown family/kind/quadrature/rule/algorithm, ``select`` given as a count, invalid
        moments. NaN or infinity in the images raise when the chunk is computed.

    Notes
    -----
    Each chunk is one task carrying plain values (family, size, moments, options). Its worker
    builds the plan once through a cached factory (:func:`plan_builds` counts them) and applies
    it to every chunk it gets; the values equal the in-memory
    :func:`fastmoments.features` row by row.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> x = da.from_array(np.random.default_rng(0).random((6, 16, 16)), chunks=(2, 16, 16))
    >>> f = features(x, "zernike", 2, kind="magnitude")
    >>> f.shape, f.chunks, f.dtype
    ((6, 4), ((2, 2, 2), (4,)), dtype('float64'))
    >>> from fastmoments.recognition import features as in_memory
    >>> ref = in_memory(x.compute(), family="zernike", orders=2, kind="magnitude").matrix
    >>> bool(np.allclose(f.compute(scheduler="sync"), ref, rtol=1e-12, atol=0))
    True
    """
    darr = _check_darr(darr)
    if darr.shape[-1] != darr.shape[-2]:
        raise ValueError(f"darr must be square images (..., N, N) to map onto the unit disk, "
                         f"got shape {darr.shape}; crop or pad them first")
    kind = check_choice("kind", kind, KINDS)
    pairs = _candidates(family, orders, select)
    k = check_int("k", k, minimum=1)
    quadrature = check_choice("quadrature", quadrature, ("midpoint", "gauss"))
    rule = check_choice("rule", rule, ("inscribed", "centre"))
    algorithm = check_choice("algorithm", algorithm, ALGORITHMS)
    dt = working_dtype(dtype, darr.dtype, name="darr")
    dtype_name = "float64" if dt == torch.float64 else "float32"
    dev = _device_name(device)
    darr = _single_chunk_tail(darr, 2, rechunk, "images")
    size = int(darr.shape[-1])
    n_features = len(_column_names(pairs, kind))
    batch = string.ascii_letters[: darr.ndim - 2]
    return da.blockwise(
        _features_block, batch + "f", darr, batch + "yx",
        family=family, size=size, pairs=pairs, kind=kind, k=k, quadrature=quadrature,
        rule=rule, precision=dtype_name, device=dev, algorithm=algorithm, n_features=n_features,
        new_axes={"f": n_features}, concatenate=True, dtype=np.dtype(dtype_name),
        meta=np.empty((0,) * (darr.ndim - 1), dtype=dtype_name),
        token="fastmoments-features")
