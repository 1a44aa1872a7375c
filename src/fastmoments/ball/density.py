r"""Atomic structures as density volumes: the input of 3-D Zernike shape descriptors.

Shape retrieval of proteins (BioZernike, Guzenko et al. 2020) describes a structure by the
moments of a density volume made from its atoms. :func:`read_pdb_atoms` reads the atoms of a
PDB file; :func:`atoms_to_density` places an isotropic Gaussian on every atom,

.. math:: \rho(x) = \sum_a w_a \exp\left(-\frac{\|x - x_a\|^2}{2\sigma^2}\right),

sampled at the voxel centres of a cubic grid centred on the atoms' weighted centroid, each
Gaussian cut at :math:`4\sigma` (a cube of side :math:`2\lceil 4\sigma \rceil + 1` voxels
about the atom; the mass it leaves out is below :math:`3 \times 10^{-5}` of the atom's). The
volume's axes are ``(D, H, W) = (z, y, x)``, as the 3-D Zernike transforms read them, so a
rotation of the coordinates by a quarter turn about a grid axis is a ``rot90`` of the volume.
"""

from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from .._validate import check_int, check_positive_float

__all__ = ["atoms_to_density", "read_pdb_atoms"]


def read_pdb_atoms(source: Any, *, hetatm: bool = False) -> tuple[np.ndarray, list[str]]:
    """Coordinates and elements of the atoms of a PDB file (first model, first alternate
    location of each atom).

    Parameters
    ----------
    source : str or os.PathLike
        A path to a ``.pdb`` file, or the text of one (anything holding a newline).
    hetatm : bool
        Also read ``HETATM`` records (ligands, water); default only ``ATOM``.

    Returns
    -------
    coords : ndarray, shape (N, 3)
        ``x, y, z`` in Ångström.
    elements : list of str
        Element symbols (columns 77-78, or the first letter of the atom name when empty).

    Raises
    ------
    ValueError
        When no atom is found.

    Examples
    --------
    >>> text = ("ATOM      1  CA  GLY A   1       1.000   2.000   3.000  1.00  0.00"
    ...         "           C\\n")
    >>> xyz, el = read_pdb_atoms(text)
    >>> xyz.tolist(), el
    ([[1.0, 2.0, 3.0]], ['C'])
    """
    if isinstance(source, str) and "\n" in source:
        lines = source.splitlines()
    else:
        with open(os.fspath(source)) as fh:
            lines = fh.read().splitlines()
    kinds = ("ATOM  ", "HETATM") if hetatm else ("ATOM  ",)
    coords, elements = [], []
    for line in lines:
        if line.startswith("ENDMDL"):
            break
        if not line.startswith(kinds) or line[16:17] not in (" ", "A", "1"):
            continue
        coords.append((float(line[30:38]), float(line[38:46]), float(line[46:54])))
        element = line[76:78].strip() or line[12:16].strip()[:1]
        elements.append(element.capitalize())
    if not coords:
        raise ValueError("source holds no ATOM record" + ("" if hetatm else
                                                          " (HETATM is read with hetatm=True)"))
    return np.array(coords, dtype=np.float64), elements


def atoms_to_density(coords: Any, *, weights: Any = None, sigma: float = 1.5,
                     spacing: float = 1.0, size: int | None = None) -> np.ndarray:
    """A Gaussian density volume of atoms on a cubic grid centred on their weighted centroid.

    Parameters
    ----------
    coords : array_like, shape (N, 3)
        Atom positions ``x, y, z`` (Ångström).
    weights : array_like, shape (N,), optional
        Weight of each atom (default 1: every atom alike).
    sigma : float
        Width of each Gaussian (Ångström).
    spacing : float
        Voxel side (Ångström).
    size : int, optional
        Voxels per side. Default: the smallest that holds the ball about the centroid through
        the farthest atom plus ``4 sigma`` (the descriptor's inscribed ball then holds the
        whole density).

    Returns
    -------
    ndarray, shape (size, size, size)
        float64 density, axes ``(z, y, x)``; voxel ``(d, h, w)`` is centred at
        ``centroid + spacing * ((w, h, d) - (size - 1) / 2)``.

    Raises
    ------
    ValueError
        Coordinates that are not ``(N, 3)`` or not finite, weights of the wrong length or
        with a non-positive total, ``sigma``/``spacing``/``size`` out of range.

    Examples
    --------
    >>> vol = atoms_to_density([[0.0, 0.0, 0.0], [3.0, 0.0, 0.0]], sigma=1.0)
    >>> vol.shape  # reach 1.5 + 4 sigma = 5.5 voxels from the centroid, each way
    (13, 13, 13)
    """
    xyz = np.asarray(coords, dtype=np.float64)
    if xyz.ndim != 2 or xyz.shape[1] != 3 or xyz.shape[0] == 0:
        raise ValueError(f"coords must have shape (N, 3) with N >= 1, got {xyz.shape}")
    if not np.isfinite(xyz).all():
        raise ValueError("coords contains NaN or infinity")
    w = np.ones(len(xyz)) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (len(xyz),) or not np.isfinite(w).all() or not w.sum() > 0:
        raise ValueError(f"weights must be {len(xyz)} finite numbers with a positive total")
    sigma = check_positive_float("sigma", sigma)
    spacing = check_positive_float("spacing", spacing)
    centroid = (w[:, None] * xyz).sum(axis=0) / w.sum()
    rel = (xyz - centroid) / spacing  # in voxels
    if size is None:
        reach = np.linalg.norm(rel, axis=1).max() + 4.0 * sigma / spacing
        size = 2 * math.ceil(reach) + 1
    size = check_int("size", size, minimum=1)
    half = (size - 1) / 2.0
    s = sigma / spacing
    reach = math.ceil(4.0 * s)
    vol = np.zeros((size, size, size))
    for (ax, ay, az), wa in zip(rel + half, w, strict=True):
        lo = [max(0, math.floor(c) - reach) for c in (az, ay, ax)]
        hi = [min(size, math.ceil(c) + reach + 1) for c in (az, ay, ax)]
        if any(a >= b for a, b in zip(lo, hi, strict=True)):
            continue
        gz, gy, gx = (np.exp(-((np.arange(a, b) - c) ** 2) / (2 * s * s))
                      for a, b, c in zip(lo, hi, (az, ay, ax), strict=True))
        vol[lo[0]:hi[0], lo[1]:hi[1], lo[2]:hi[2]] += wa * (
            gz[:, None, None] * gy[None, :, None] * gx[None, None, :])
    return vol
