"""A synthetic 3-D head phantom: the Shepp-Logan ellipsoids (Kak and Slaney's 3-D version).

The volume is the sum of ten ellipsoids of constant intensity, the contrast-enhanced ("modified")
intensities, on the cube [-1, 1]^3 sampled at voxel centres. Axes are ``(D, H, W) = (z, y, x)``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .._validate import check_int

__all__ = ["ELLIPSOIDS", "phantom_tensor", "shepp_logan_3d"]

#: intensity, semi-axes (a, b, c) along x, y, z, centre (x0, y0, z0), rotation about z (degrees)
ELLIPSOIDS = (
    (1.0, 0.69, 0.92, 0.81, 0.0, 0.0, 0.0, 0.0),
    (-0.8, 0.6624, 0.874, 0.78, 0.0, -0.0184, 0.0, 0.0),
    (-0.2, 0.11, 0.31, 0.22, 0.22, 0.0, 0.0, -18.0),
    (-0.2, 0.16, 0.41, 0.28, -0.22, 0.0, 0.0, 18.0),
    (0.1, 0.21, 0.25, 0.41, 0.0, 0.35, -0.15, 0.0),
    (0.1, 0.046, 0.046, 0.05, 0.0, 0.1, 0.25, 0.0),
    (0.1, 0.046, 0.046, 0.05, 0.0, -0.1, 0.25, 0.0),
    (0.1, 0.046, 0.023, 0.05, -0.08, -0.605, 0.0, 0.0),
    (0.1, 0.023, 0.023, 0.02, 0.0, -0.606, 0.0, 0.0),
    (0.1, 0.023, 0.046, 0.02, 0.06, -0.605, 0.0, 0.0),
)


def shepp_logan_3d(shape: int | tuple[int, int, int] = 128, *, scale: float = 255.0,
                   dtype: type = np.float32) -> np.ndarray:
    """The 3-D Shepp-Logan phantom as a ``(D, H, W)`` array with values in ``[0, scale]``.

    Parameters
    ----------
    shape : int or tuple of 3 ints
        Voxels per axis (an int gives a cube). Rectangular shapes stretch the phantom.
    scale : float
        Grey level of the brightest tissue (the skull, intensity 1): 255 like an 8-bit scan.
    dtype : numpy dtype
        Output dtype.

    Examples
    --------
    >>> v = shepp_logan_3d(32)
    >>> v.shape, float(v.max()), float(v.min())
    ((32, 32, 32), 255.0, 0.0)
    """
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),) * 3
    shape = tuple(check_int("shape", int(s), minimum=1) for s in shape)
    if len(shape) != 3:
        raise ValueError(f"shape must be an int or (D, H, W), got {shape}")
    out = phantom_tensor(shape, scale=scale).numpy()
    return out.astype(dtype)


def phantom_tensor(shape: tuple[int, int, int], *, scale: float = 255.0,
                   device: str | torch.device = "cpu",
                   dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """:func:`shepp_logan_3d` as a tensor built directly on ``device`` (e.g. a GPU)."""
    d, h, w = shape
    kw = {"dtype": torch.float64, "device": device}
    z = (torch.arange(d, **kw) + 0.5) * (2.0 / d) - 1.0
    y = (torch.arange(h, **kw) + 0.5) * (2.0 / h) - 1.0
    x = (torch.arange(w, **kw) + 0.5) * (2.0 / w) - 1.0
    out = torch.zeros(shape, **kw)
    yy, xx = torch.meshgrid(y, x, indexing="ij")
    for amp, a, b, c, x0, y0, z0, phi in ELLIPSOIDS:
        cp, sp = math.cos(math.radians(phi)), math.sin(math.radians(phi))
        u = (cp * (xx - x0) + sp * (yy - y0)) / a
        v = (-sp * (xx - x0) + cp * (yy - y0)) / b
        r2 = u * u + v * v                                     # (H, W)
        zr2 = ((z - z0) / c) ** 2                              # (D,)
        for i in range(d):                                     # one plane at a time
            out[i] += amp * (r2 + zr2[i] <= 1.0)
    out.clamp_(min=0.0)
    out *= scale / max(float(out.max()), 1e-300)
    return out.to(dtype)
