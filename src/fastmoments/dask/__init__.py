"""Dask front end: the transforms of fastmoments on dask arrays, lazily, one task per chunk.

Install with ``pip install "fastmoments[dask]"``. See ``docs/dask.md`` for clusters
(:class:`distributed.LocalCluster`, ``dask_cuda.LocalCUDACluster``, a scheduler address),
chunking advice and thread sizing.

* :func:`features`: moment feature vectors, one row per image of a batch chunked along its
  batch axes; :func:`feature_names` labels the columns.
* :func:`object_features`: moment features of every object of a chunked label image
  (objects that cross chunk edges included), equal to the in-memory
  :func:`fastmoments.recognition.object_features`.
* :func:`moments`: the flat coefficients of any disk or box plan over a chunked batch
  (:func:`flat_index` names them; the plan travels as plain values, :func:`recipe`).
* :func:`zernike3d`: 3-D Zernike invariants (or moments) of a stack of volumes chunked along
  its batch axes (a Zarr store through :func:`dask.array.from_zarr`), one row per volume;
  :func:`zernike3d_names` labels the columns.
* :func:`gaussian_filter1d`, :func:`cwt`: along an axis that is itself chunked (a long
  recording in chunks), each chunk with its neighbours' samples over the plan's kernel support
  (:func:`depth_of`); equal to the one-shot transform, in every boundary mode.
  :func:`gaussian_filter` filters every axis (or ``axes``), as
  :func:`scipy.ndimage.gaussian_filter`; :func:`gaussian_laplace` and
  :func:`gaussian_gradient_magnitude` as scipy.ndimage's. The Gaussian filters take
  ``dask_image.ndfilters``' positional order (array, sigma, order, mode, cval, truncate;
  without ``order`` for the Laplacian and gradient magnitude), so they replace its calls.
* :func:`local_cluster`: a :class:`distributed.LocalCluster` with workers x threads x torch
  threads within the cores, whose workers reuse their freed buffers
  (:mod:`fastmoments.dask.memory`, a worker preload also for real clusters).

Plans are built once per worker process by cached factories keyed on plain values (the tasks
carry sizes, orders and names, never a plan); :func:`plan_builds` counts them.

This module is ``fastmoments.dask``; inside it ``import dask`` is the Dask package.
"""

from __future__ import annotations

try:
    import dask.array  # noqa: F401
except ImportError as _exc:  # pragma: no cover - depends on the install
    raise ModuleNotFoundError(
        "fastmoments.dask needs dask, which is not installed: pip install "
        "\"fastmoments[dask]\" (Dask, distributed, Zarr and pyarrow)", name="dask") from _exc

from ._derived import gaussian_gradient_magnitude, gaussian_laplace
from ._features import feature_names, features
from ._moments import flat_index, moments, recipe
from ._objects import object_features
from ._signal import cwt, depth_of, gaussian_filter, gaussian_filter1d
from ._volumes import zernike3d, zernike3d_names
from ._workers import (
    MEMORY_PRELOAD,
    REUSE_MEMORY_ENV,
    THREADS_ENV,
    configure_threads,
    local_cluster,
    plan_builds,
)

__all__ = [
    "MEMORY_PRELOAD",
    "REUSE_MEMORY_ENV",
    "THREADS_ENV",
    "configure_threads",
    "cwt",
    "depth_of",
    "feature_names",
    "features",
    "flat_index",
    "gaussian_filter",
    "gaussian_filter1d",
    "gaussian_gradient_magnitude",
    "gaussian_laplace",
    "local_cluster",
    "moments",
    "object_features",
    "plan_builds",
    "recipe",
    "zernike3d",
    "zernike3d_names",
]
