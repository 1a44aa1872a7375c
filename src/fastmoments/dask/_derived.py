"""The Gaussian derivatives of dask arrays built from :func:`gaussian_filter` (Laplacian and
gradient magnitude, as scipy.ndimage and dask-image define them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dask.array as da

from ._features import _check_darr
from ._signal import _per_axis, gaussian_filter

__all__ = ["gaussian_gradient_magnitude", "gaussian_laplace"]


def _derivative_terms(darr: Any, sigma: Any, order: int, mode: Any, cval: Any, truncate: Any,
                      options: dict) -> list[da.Array]:
    """Term ``i``: the derivative of ``order`` along axis ``i``, smoothing along the others,
    every axis extended by ``mode[i]`` (scipy.ndimage's ``generic_laplace`` and
    ``generic_gradient_magnitude`` convention)."""
    darr = _check_darr(darr, min_ndim=1)
    nd = darr.ndim
    modes = _per_axis("mode", mode, nd)
    sigmas = _per_axis("sigma", sigma, nd)
    return [gaussian_filter(darr, sigmas, [order if j == i else 0 for j in range(nd)],
                            modes[i], cval, truncate, **options) for i in range(nd)]


def gaussian_laplace(darr: Any, sigma: float | Sequence[float],
                     mode: str | Sequence[str] = "reflect", cval: float = 0.0,
                     truncate: float = 4.0, *, method: str = "auto", terms: int | None = None,
                     shift: int | None = None, engine: str = "auto",
                     device: Any = None) -> da.Array:
    """Laplacian of the Gaussian-smoothed array, ``Σ_i ∂²(G_σ * x)/∂x_i²``, lazily, as
    :func:`scipy.ndimage.gaussian_laplace` and ``dask_image.ndfilters.gaussian_laplace``
    (the same positional order: array, sigma, mode, cval, truncate).

    Parameters
    ----------
    darr : dask.array.Array
        Real input of any shape, chunked in any way.
    sigma : float or sequence of float
        Standard deviation(s) in samples, one or one per axis.
    mode : str or sequence of str
        Boundary mode(s); term ``i`` extends every axis by ``mode[i]`` (scipy's convention).
    cval, truncate, method, terms, shift, engine, device
        As in :func:`gaussian_filter`.

    Returns
    -------
    dask.array.Array
        ``darr``'s shape and chunks; float64 for float64 input, else float32.

    Raises
    ------
    TypeError, ValueError
        As :func:`gaussian_filter`.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from fastmoments.signal import gaussian_laplace as in_memory
    >>> img = np.random.default_rng(0).random((40, 30))
    >>> y = gaussian_laplace(da.from_array(img, chunks=(16, 15)), 2.0, "nearest")
    >>> bool(np.abs(y.compute(scheduler="sync") - in_memory(img, 2.0, mode="nearest")
    ...             ).max() < 1e-12)
    True
    """
    opts = dict(method=method, terms=terms, shift=shift, engine=engine, device=device)
    parts = _derivative_terms(darr, sigma, 2, mode, cval, truncate, opts)
    out = parts[0]
    for t in parts[1:]:
        out = out + t
    return out


def gaussian_gradient_magnitude(darr: Any, sigma: float | Sequence[float],
                                mode: str | Sequence[str] = "reflect", cval: float = 0.0,
                                truncate: float = 4.0, *, method: str = "auto",
                                terms: int | None = None, shift: int | None = None,
                                engine: str = "auto", device: Any = None) -> da.Array:
    """Gradient magnitude of the Gaussian-smoothed array, ``sqrt(Σ_i (∂(G_σ * x)/∂x_i)²)``,
    lazily, as :func:`scipy.ndimage.gaussian_gradient_magnitude` and
    ``dask_image.ndfilters.gaussian_gradient_magnitude`` (the same positional order: array,
    sigma, mode, cval, truncate).

    Parameters
    ----------
    darr : dask.array.Array
        Real input of any shape, chunked in any way.
    sigma : float or sequence of float
        Standard deviation(s) in samples, one or one per axis.
    mode : str or sequence of str
        Boundary mode(s); term ``i`` extends every axis by ``mode[i]`` (scipy's convention).
    cval, truncate, method, terms, shift, engine, device
        As in :func:`gaussian_filter`.

    Returns
    -------
    dask.array.Array
        ``darr``'s shape and chunks; float64 for float64 input, else float32.

    Raises
    ------
    TypeError, ValueError
        As :func:`gaussian_filter`.

    Examples
    --------
    >>> import dask.array as da, numpy as np
    >>> from scipy import ndimage
    >>> img = np.random.default_rng(0).random((40, 30))
    >>> y = gaussian_gradient_magnitude(da.from_array(img, chunks=(16, 15)), 1.5)
    >>> ref = ndimage.gaussian_gradient_magnitude(img, 1.5)
    >>> bool(np.abs(y.compute(scheduler="sync") - ref).max() < 1e-4)
    True
    """
    opts = dict(method=method, terms=terms, shift=shift, engine=engine, device=device)
    parts = _derivative_terms(darr, sigma, 1, mode, cval, truncate, opts)
    out = parts[0] * parts[0]
    for t in parts[1:]:
        out = out + t * t
    return da.sqrt(out)
