"""Filters derived from the Gaussian derivatives, with scipy.ndimage's signatures:
:func:`gaussian_laplace` (``Σ_i ∂²/∂x_i²`` of the smoothed input) and
:func:`gaussian_gradient_magnitude` (``sqrt(Σ_i (∂/∂x_i)²)``).

Each term is one :func:`~fastmoments.signal.gaussian_filter` call (the derivative along one
axis, smoothing along the others), so each costs what that call costs: with the SFT routes a
number of operations per sample independent of σ. As in scipy.ndimage, term ``i`` extends
every axis by ``mode[i]`` (the mode of the differentiated axis), and the other keywords go to
:func:`~fastmoments.signal.gaussian_filter` unchanged (``truncate``, ``radius``, ``method``,
``kernel``, ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from .gaussian import _shape
from .gaussian_calls import gaussian_filter
from .gaussian_options import filtered_axes, per_axis
from .output import deliver, is_complex, output_spec, widened

__all__ = ["gaussian_gradient_magnitude", "gaussian_laplace"]


def _terms(x: Any, sigma: Any, order: int, output: Any, mode: Any, cval: Any, axes: Any,
           kwargs: dict) -> tuple[list, Any, Any, Any]:
    """The derivative of ``order`` along each filtered axis (smoothing along the others) and
    the ``output`` spec: ``(terms, data, array, dtype)``."""
    if "out" in kwargs:
        if output is not None:
            raise TypeError("give output= or out=, not both")
        output = kwargs.pop("out")
    for name in ("order", "axis", "channel_axis"):
        if name in kwargs:
            raise TypeError(f"{name} is not an option of this filter (its orders and axes "
                            f"are set by the filter; use axes=)")
    array, dtype = output_spec(output, x)
    want = None if array is None and dtype is None else (
        array.dtype if array is not None else dtype)
    cplx = is_complex(x)
    data = x if isinstance(x, (np.ndarray, torch.Tensor)) else np.asarray(x)
    data = widened(data, want, cplx)
    shape = _shape(data)
    ax = filtered_axes(axes, None, len(shape))
    k = len(ax)
    sigmas = per_axis("sigma", sigma, k)
    modes = per_axis("mode", mode, k)
    same = all(s is sigmas[0] or s == sigmas[0] for s in sigmas)
    terms = []
    for i in range(k):
        orders = [0] * k
        orders[i] = order
        terms.append(gaussian_filter(data, sigmas[0] if same and not isinstance(
            sigma, (Sequence, np.ndarray)) else sigmas, orders, None, modes[i], cval,
            axes=None if axes is None else ax, **kwargs))
    return terms, data, array, dtype


def _copy(data: Any) -> Any:
    return data.clone() if isinstance(data, torch.Tensor) else np.array(data, copy=True)


def gaussian_laplace(input: Any, sigma: float | Sequence[float], output: Any = None,
                     mode: str | Sequence[str] = "reflect", cval: float = 0.0, *,
                     axes: Sequence[int] | None = None, **kwargs: Any) -> Any:
    """Laplacian of Gaussian, ``Σ_i ∂²(G_σ * x)/∂x_i²``, as
    :func:`scipy.ndimage.gaussian_laplace`.

    Parameters
    ----------
    input : array_like or torch.Tensor
        Real or complex input of any shape; never modified.
    sigma : float or sequence of float
        Standard deviation(s) in samples, one or one per filtered axis.
    output : numpy.ndarray, torch.Tensor or dtype, optional
        An array of the input's shape (and kind) to write into (returned), or the result's
        dtype; by default the package's dtype policy (float32 or float64).
    mode : str or sequence of str
        Boundary mode(s) as in :func:`~fastmoments.signal.gaussian_filter`; term ``i``
        extends every axis by ``mode[i]`` (scipy.ndimage's convention).
    cval : float
        Value outside the input for ``mode="constant"``.
    axes : sequence of int, optional
        The axes summed over (default: all).
    **kwargs
        Passed to :func:`~fastmoments.signal.gaussian_filter`: ``truncate``, ``radius``,
        ``method``, ``kernel``, ``engine``, ...

    Returns
    -------
    numpy.ndarray or torch.Tensor
        Same shape as the input (``output`` when an array is given).

    Raises
    ------
    ValueError
        As :func:`~fastmoments.signal.gaussian_filter` (bad σ, repeated or out-of-range
        axes, a bad ``output`` shape).
    TypeError
        For an ``output`` of the wrong kind or a non-numeric dtype, ``order``/``axis`` given.

    Notes
    -----
    ``∇²(G * x) = Σ_i G_DD,i * Π_{j≠i} G_j * x``: one call of the separable filter per axis
    (its order-2 kernel along ``i``). The default second-derivative kernel has zero sum and
    zero first moment, so a constant or a ramp gives exactly 0. scipy.ndimage's does not:
    its sum is ``(M2/S - σ²)/σ⁴`` (``S``, ``M2``: the sum and second moment of the sampled
    Gaussian over ``|k| ≤ round(4σ)``), -0.56 at σ = 0.5, -5.0e-3 at σ = 0.7, -7.2e-5 at
    σ = 1, -4.3e-11 at σ = 5000, and the two results differ by that sum times the smoothed
    input, per axis. On the camera image (512², 0-255) the difference from scipy is at most
    285 at σ = 0.5 (where the Laplacian spans ±626; scipy gives -285 on a constant 255
    image) and 2.5 at σ = 0.7 (range ±182); on a signal with a linear trend at σ = 5000 the
    trend leaks into scipy's second derivative (1.2e-7, six times the true 1.8e-8; here
    9e-13). ``kernel="scipy"`` gives scipy's numbers to float rounding. Complex input is
    filtered as its real and imaginary parts. Differentiable in torch.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import ndimage
    >>> img = np.random.default_rng(0).random((32, 32))
    >>> y = gaussian_laplace(img, 2.0)
    >>> exact = gaussian_laplace(img, 2.0, truncate=20.0)  # the kernel cut at 20σ, exactly
    >>> bool(np.abs(y - exact).max() < 1e-6)  # scipy's truncation at 4σ: 1.2e-4 off
    True
    >>> bool(np.abs(y - ndimage.gaussian_laplace(img, 2.0)).max() < 2e-4)
    True
    >>> y = gaussian_laplace(img, 0.7, kernel="scipy")  # scipy's own kernel, exactly
    >>> bool(np.abs(y - ndimage.gaussian_laplace(img, 0.7)).max() < 1e-13)
    True
    >>> bool(np.abs(gaussian_laplace(np.ones((8, 8)), 0.5)).max() < 1e-13)  # zero sum
    True
    >>> round(float(ndimage.gaussian_laplace(np.ones((8, 8)), 0.5)[4, 4]), 2)  # scipy's
    -1.12
    """
    terms, data, array, dtype = _terms(input, sigma, 2, output, mode, cval, axes, kwargs)
    if not terms:
        return deliver(_copy(data), array, dtype)
    y = terms[0]
    for t in terms[1:]:
        y = y + t
    return deliver(y, array, dtype)


def gaussian_gradient_magnitude(input: Any, sigma: float | Sequence[float], output: Any = None,
                                mode: str | Sequence[str] = "reflect", cval: float = 0.0, *,
                                axes: Sequence[int] | None = None, **kwargs: Any) -> Any:
    """Gradient magnitude of the smoothed input, ``sqrt(Σ_i (∂(G_σ * x)/∂x_i)²)``, as
    :func:`scipy.ndimage.gaussian_gradient_magnitude`.

    Parameters
    ----------
    input : array_like or torch.Tensor
        Real or complex input of any shape; never modified.
    sigma : float or sequence of float
        Standard deviation(s) in samples, one or one per filtered axis.
    output : numpy.ndarray, torch.Tensor or dtype, optional
        An array of the input's shape (and kind) to write into (returned), or the result's
        dtype; by default the package's dtype policy.
    mode : str or sequence of str
        Boundary mode(s); term ``i`` extends every axis by ``mode[i]`` (scipy's convention).
    cval : float
        Value outside the input for ``mode="constant"``.
    axes : sequence of int, optional
        The axes of the gradient (default: all).
    **kwargs
        Passed to :func:`~fastmoments.signal.gaussian_filter`.

    Returns
    -------
    numpy.ndarray or torch.Tensor
        Same shape as the input (``output`` when an array is given).

    Raises
    ------
    ValueError
        As :func:`gaussian_laplace`.
    TypeError
        As :func:`gaussian_laplace`.

    Notes
    -----
    The first-derivative kernel is scipy.ndimage's (``-k g/(σ² S)``); the default route
    applies it to the method's stated error (the FIR at small σ is scipy's kernel widened
    beyond ``4σ``; see :func:`~fastmoments.signal.gaussian_filter`). For complex input the
    result is scipy's ``sqrt(Σ_i g_i²)`` (complex squares, the principal square root), not
    ``sqrt(Σ |g_i|²)``. In torch, real input takes ``torch.linalg.vector_norm`` of the
    derivatives, whose gradient is 0 (not NaN) where they all vanish.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import ndimage
    >>> img = np.random.default_rng(0).random((32, 32))
    >>> y = gaussian_gradient_magnitude(img, 1.5)
    >>> bool(np.abs(y - ndimage.gaussian_gradient_magnitude(img, 1.5)).max() < 1e-4)
    True
    """
    terms, data, array, dtype = _terms(input, sigma, 1, output, mode, cval, axes, kwargs)
    if not terms:
        return deliver(_copy(data), array, dtype)
    if isinstance(terms[0], torch.Tensor):
        if terms[0].is_complex():
            y = torch.sqrt(sum(t * t for t in terms[1:]) + terms[0] * terms[0])
        else:
            y = torch.linalg.vector_norm(torch.stack(terms), dim=0)
    else:
        y = terms[0] * terms[0]
        for t in terms[1:]:
            y = y + t * t
        y = np.sqrt(y)
    return deliver(y, array, dtype)
