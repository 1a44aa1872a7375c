"""Atoms to density volumes, and the descriptors of the result."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fastmoments.ball import zernike3d_moments
from fastmoments.ball.density import atoms_to_density, read_pdb_atoms

PDB = """\
HEADER    TEST
ATOM      1  N   GLY A   1      -1.000   0.500   2.000  1.00  0.00           N
ATOM      2  CA  GLY A   1       0.000   1.500   0.000  1.00  0.00           C
ATOM      3  CA BGLY A   1       9.000   9.000   9.000  0.50  0.00           C
ATOM      4  O   GLY A   1       2.500  -1.000   1.000  1.00  0.00
HETATM    5  O   HOH A 101       5.000   5.000   5.000  1.00  0.00           O
ENDMDL
ATOM      6  CA  GLY A   1      50.000  50.000  50.000  1.00  0.00           C
"""


def test_read_pdb_atoms(tmp_path):
    xyz, el = read_pdb_atoms(PDB)
    assert xyz.tolist() == [[-1.0, 0.5, 2.0], [0.0, 1.5, 0.0], [2.5, -1.0, 1.0]]
    assert el == ["N", "C", "O"]
    path = tmp_path / "t.pdb"
    path.write_text(PDB)
    xyz2, _ = read_pdb_atoms(path, hetatm=True)
    assert len(xyz2) == 4
    with pytest.raises(ValueError, match="no ATOM"):
        read_pdb_atoms("HEADER\n")


def test_density_mass_and_centre():
    xyz, _ = read_pdb_atoms(PDB)
    vol = atoms_to_density(xyz, sigma=1.2, spacing=0.5)
    n = vol.shape[0]
    # each Gaussian integrates to (2 pi sigma^2)^(3/2); the grid sums it to far below the
    # cut at 4 sigma, which leaves out 1 - erf(4 / sqrt 2)^3 = 1.9e-4 at most (a ball of 4
    # sigma; the cube keeps more: measured 2.5e-5)
    mass = 3 * (2 * math.pi * 1.2**2) ** 1.5
    assert 1 - 2e-4 < vol.sum() * 0.5**3 / mass < 1
    grid = (np.arange(n) - (n - 1) / 2)
    centre = [(vol.sum(axis=tuple(j for j in range(3) if j != i)) * grid).sum() / vol.sum()
              for i in range(3)]
    assert np.allclose(centre, 0, atol=1e-4)  # centred on the centroid (up to the cut)


def test_quarter_turn_of_the_atoms_is_a_rot90_of_the_volume():
    rng = np.random.default_rng(2)
    xyz = rng.normal(scale=4.0, size=(20, 3))
    turned = xyz @ np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1]]).T  # about z: (x, y) -> (-y, x)
    a = atoms_to_density(xyz, size=25)
    b = atoms_to_density(turned, size=25)
    assert np.allclose(np.rot90(a, 1, axes=(2, 1)), b, atol=1e-12)
    fa = zernike3d_moments(a, 8, dtype="float64").invariants()
    fb = zernike3d_moments(b, 8, dtype="float64").invariants()
    assert np.max(np.abs(fa - fb)) <= 1e-14 * fa.max()


@pytest.mark.parametrize("kwargs, match", [
    ({"coords": np.zeros((3, 2))}, "coords"),
    ({"coords": [[np.nan, 0, 0]]}, "coords"),
    ({"weights": [1.0]}, "weights"),
    ({"sigma": 0}, "sigma"),
    ({"size": 0}, "size"),
])
def test_density_bad_input(kwargs, match):
    args = {"coords": np.zeros((2, 3))} | kwargs
    with pytest.raises((ValueError, TypeError), match=match):
        atoms_to_density(args.pop("coords"), **args)
