r"""Real protein shapes that install offline: the PDB files shipped by system packages, as
density volumes.

Debian's ``mustang-testdata`` package (``apt-get install mustang-testdata``) ships 15 small
PDB files of DNA-binding zinc-finger domains (the test set of the MUSTANG structural aligner,
Konagurthu et al. 2006) under :data:`MUSTANG_PDBS`. :func:`protein_files` finds them (and PDB
files in any folders given), :func:`protein_density` turns one structure into a density
volume and :func:`protein_set` builds the whole set in one call
(``benchmarks/build_protein_set.py`` writes it to disk).

A structure becomes a volume as in BioZernike (Guzenko et al. 2020): an isotropic Gaussian
on every atom (:func:`~fastmoments.ball.density.atoms_to_density`), the grid centred on the
atoms' weighted centroid, and scaled to the ball: the sphere about the centroid through the
farthest atom plus ``margin`` Gaussian widths becomes the ball inscribed in the ``size``-voxel
cube (radius ``size / 2`` voxels), so every structure fills the ball whatever its size and
the descriptor compares shapes, not sizes. Both the centroid and the farthest-atom distance
are unchanged by rotations of the coordinates, so a rotated structure gives (up to
resampling) the rotated volume.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._validate import check_choice, check_int, check_positive_float
from .density import atoms_to_density, read_pdb_atoms

__all__ = ["MUSTANG_PDBS", "ProteinSet", "protein_density", "protein_files", "protein_set"]

#: Where Debian's ``mustang-testdata`` package puts its PDB files.
MUSTANG_PDBS = Path("/usr/share/doc/mustang-testdata/examples/pdbs")

#: Atomic masses (u) of the elements of proteins and nucleic acids; other elements weigh 12.
ATOMIC_MASS = {"H": 1.008, "C": 12.011, "N": 14.007, "O": 15.999, "P": 30.974, "S": 32.06,
               "Se": 78.971, "Zn": 65.38, "Fe": 55.845, "Mg": 24.305, "Ca": 40.078}

WEIGHTS = ("mass", "uniform")


def protein_files(folders: str | os.PathLike | Iterable[str | os.PathLike] | None = None
                  ) -> list[Path]:
    """The PDB files (``*.pdb``, ``*.ent``, not compressed) found in ``folders``.

    Parameters
    ----------
    folders : path or iterable of paths, optional
        Where to look (not recursively). Default: :data:`MUSTANG_PDBS`, the files of
        Debian's ``mustang-testdata`` package.

    Returns
    -------
    list of pathlib.Path
        Sorted by name; empty when the folders do not exist or hold no PDB file.

    Examples
    --------
    >>> files = protein_files()
    >>> all(f.suffix in (".pdb", ".ent") for f in files)
    True
    """
    if folders is None:
        dirs = [MUSTANG_PDBS]
    elif isinstance(folders, (str, os.PathLike)):
        dirs = [Path(folders)]
    else:
        dirs = [Path(f) for f in folders]
    found: list[Path] = []
    for d in dirs:
        if d.is_dir():
            found += [p for p in d.iterdir() if p.suffix.lower() in (".pdb", ".ent")
                      and p.is_file()]
    return sorted(found, key=lambda p: (p.name, str(p)))


def _weights(elements: Sequence[str], weights: str) -> np.ndarray:
    check_choice("weights", weights, WEIGHTS)
    if weights == "uniform":
        return np.ones(len(elements))
    return np.array([ATOMIC_MASS.get(e, 12.0) for e in elements])


def protein_density(source: Any, size: int = 32, *, sigma: float = 1.5,
                    margin: float = 3.0, weights: str = "mass", rotation: Any = None,
                    hetatm: bool = False) -> np.ndarray:
    r"""The Gaussian density volume of one structure, scaled to the ball of a ``size``-cube.

    Parameters
    ----------
    source : str, os.PathLike or (coords, elements)
        A PDB file (or its text), read with :func:`~fastmoments.ball.density.read_pdb_atoms`,
        or atoms already read: ``(coords (N, 3), elements)``.
    size : int
        Voxels per side (>= 4).
    sigma : float
        Width of each atom's Gaussian (Ångström).
    margin : float
        The ball's radius is the farthest atom's distance from the centroid plus
        ``margin * sigma`` (>= 0).
    weights : {"mass", "uniform"}
        Each atom weighs its atomic mass (:data:`ATOMIC_MASS`) or 1; the centroid is weighted
        alike.
    rotation : array_like (3, 3), optional
        A rotation matrix applied to the coordinates about their centroid first (the volume
        of the rotated structure; used by the retrieval benchmark).
    hetatm : bool
        Also read ``HETATM`` records of a file.

    Returns
    -------
    ndarray, shape (size, size, size)
        float64 density, axes ``(z, y, x)``, the centroid at the cube's centre and the
        structure inside the inscribed ball (radius ``size / 2`` voxels).

    Raises
    ------
    ValueError
        A file without atoms, ``size < 4``, ``sigma <= 0``, ``margin < 0``, an unknown
        ``weights``, a ``rotation`` that is not a ``(3, 3)`` orthogonal matrix of
        determinant 1.

    Notes
    -----
    The voxel side is :math:`s = (r_{\max} + \text{margin}\,\sigma) / (\text{size}/2)`, with
    :math:`r_{\max}` the largest distance of an atom from the weighted centroid; the volume
    is :func:`~fastmoments.ball.density.atoms_to_density` with that spacing.

    Examples
    --------
    >>> text = ("ATOM      1  CA  GLY A   1       0.000   0.000   0.000  1.00  0.00\n"
    ...         "ATOM      2  CA  GLY A   2       3.800   0.000   0.000  1.00  0.00\n")
    >>> vol = protein_density(text, 16)
    >>> vol.shape, bool(vol[8, 7, 7] > vol[8, 0, 0])
    ((16, 16, 16), True)
    """
    size = check_int("size", size, minimum=4)
    sigma = check_positive_float("sigma", sigma)
    margin = float(margin)
    if not np.isfinite(margin) or margin < 0:
        raise ValueError(f"margin must be a finite number >= 0, got {margin!r}")
    if isinstance(source, tuple) and len(source) == 2:
        coords, elements = source
        coords = np.array(coords, dtype=np.float64)  # a copy: the input is never modified
        elements = list(elements)
        if coords.ndim != 2 or coords.shape[1] != 3 or len(elements) != len(coords):
            raise ValueError(f"source as (coords, elements) needs coords (N, 3) and N "
                             f"elements, got {coords.shape} and {len(elements)}")
    else:
        coords, elements = read_pdb_atoms(source, hetatm=hetatm)
    w = _weights(elements, weights)
    centroid = (w[:, None] * coords).sum(axis=0) / w.sum()
    rel = coords - centroid
    if rotation is not None:
        rot = np.asarray(rotation, dtype=np.float64)
        if rot.shape != (3, 3) or not np.allclose(rot @ rot.T, np.eye(3), atol=1e-9) or \
                not np.linalg.det(rot) > 0:
            raise ValueError(f"rotation must be a (3, 3) rotation matrix (orthogonal, "
                             f"determinant 1), got shape {rot.shape}")
        rel = rel @ rot.T
    rmax = float(np.sqrt((rel * rel).sum(axis=1)).max())
    spacing = (rmax + margin * sigma) / (size / 2.0)
    return atoms_to_density(rel, weights=w, sigma=sigma, spacing=spacing, size=size)


@dataclass
class ProteinSet:
    """Density volumes of a set of structures (:func:`protein_set`).

    Attributes
    ----------
    names : list of str
        The file stems (``"1ard"``), in the order of :attr:`volumes`.
    volumes : ndarray, shape (n, size, size, size)
        float64 densities.
    files : list of pathlib.Path
        Where each came from.
    n_atoms : list of int
        Atoms read from each file.
    options : dict
        The arguments of :func:`protein_density` used.
    """

    names: list[str]
    volumes: np.ndarray
    files: list[Path]
    n_atoms: list[int]
    options: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.names)


def protein_set(size: int = 32, *, folders: Any = None, sigma: float = 1.5,
                margin: float = 3.0, weights: str = "mass", hetatm: bool = False
                ) -> ProteinSet:
    """The density volumes of every structure found by :func:`protein_files`, in one call.

    Parameters
    ----------
    size, sigma, margin, weights, hetatm :
        As for :func:`protein_density`.
    folders : path or iterable of paths, optional
        As for :func:`protein_files` (default: Debian's ``mustang-testdata``).

    Returns
    -------
    ProteinSet

    Raises
    ------
    FileNotFoundError
        No PDB file is found (the message says which package installs them).
    ValueError
        Bad options, as for :func:`protein_density`.

    Examples
    --------
    >>> if protein_files():  # with mustang-testdata installed
    ...     ps = protein_set(16)
    ...     print(ps.volumes.shape[1:])
    ... else:
    ...     print((16, 16, 16))
    (16, 16, 16)
    """
    size = check_int("size", size, minimum=4)
    files = protein_files(folders)
    if not files:
        where = MUSTANG_PDBS if folders is None else folders
        raise FileNotFoundError(f"no PDB file found in {where}; install Debian's "
                                f"mustang-testdata (apt-get install mustang-testdata) or give "
                                f"folders=")
    vols, counts = [], []
    for f in files:
        coords, elements = read_pdb_atoms(f, hetatm=hetatm)
        counts.append(len(coords))
        vols.append(protein_density((coords, elements), size, sigma=sigma, margin=margin,
                                    weights=weights))
    options = {"size": size, "sigma": sigma, "margin": margin, "weights": weights,
               "hetatm": hetatm}
    return ProteinSet([f.stem for f in files], np.stack(vols), files, counts, options)
