"""Real protein shapes (Debian's mustang-testdata) as density volumes, and their descriptors."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from fastmoments.ball import zernike3d_moments
from fastmoments.ball.density import read_pdb_atoms
from fastmoments.ball.proteins import (
    ATOMIC_MASS,
    protein_density,
    protein_files,
    protein_set,
)

from ..scripts import load_benchmark

FILES = protein_files()
needs_pdbs = pytest.mark.skipif(not FILES, reason="Debian's mustang-testdata is not installed")



def _pick(name: str) -> Path:
    return next(f for f in FILES if f.stem == name)


def _rotation(seed: int) -> np.ndarray:
    q = np.random.default_rng(seed).normal(size=4)
    a, b, c, d = q / np.linalg.norm(q)
    return np.array([[a*a + b*b - c*c - d*d, 2*(b*c - a*d), 2*(b*d + a*c)],
                     [2*(b*c + a*d), a*a - b*b + c*c - d*d, 2*(c*d - a*b)],
                     [2*(b*d - a*c), 2*(c*d + a*b), a*a - b*b - c*c + d*d]])


@needs_pdbs
def test_density_of_a_real_file_centred_and_in_the_ball():
    f = _pick("1znf")
    xyz, el = read_pdb_atoms(f)
    xyz0 = xyz.copy()
    size, sigma = 24, 1.5
    vol = protein_density((xyz, el), size, sigma=sigma)
    assert np.array_equal(xyz, xyz0)  # the input is not modified
    assert vol.shape == (size,) * 3 and vol.dtype == np.float64
    # mass: each Gaussian integrates to w (2 pi s^2)^{3/2} voxels, s = sigma / spacing
    w = np.array([ATOMIC_MASS.get(e, 12.0) for e in el])
    rel = xyz - (w[:, None] * xyz).sum(0) / w.sum()
    spacing = (np.linalg.norm(rel, axis=1).max() + 3.0 * sigma) / (size / 2)
    s = sigma / spacing
    assert vol.sum() == pytest.approx(w.sum() * (2 * math.pi * s * s) ** 1.5, rel=1e-3)
    # the weighted centroid of the density sits at the cube's centre
    idx = np.indices(vol.shape).reshape(3, -1)
    centre = (idx * vol.reshape(-1)).sum(1) / vol.sum()
    assert np.allclose(centre, (size - 1) / 2, atol=0.05)
    # almost all of it inside the inscribed ball
    r = np.linalg.norm(idx - (size - 1) / 2, axis=0).reshape(vol.shape)
    assert vol[r > size / 2].sum() < 2e-3 * vol.sum()


@needs_pdbs
def test_quarter_turn_of_the_atoms_is_a_rot90_of_the_volume():
    f = _pick("1ard")
    quarter = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # about z
    vol = protein_density(f, 20)
    rot = protein_density(f, 20, rotation=quarter)
    # x -> y, y -> -x: axes (z, y, x), so a rot90 in the (y, x) plane
    expected = np.rot90(vol, k=1, axes=(2, 1))
    assert np.allclose(rot, expected, rtol=0, atol=1e-12 * vol.max())


@needs_pdbs
def test_rotated_structure_keeps_its_descriptor_and_differs_from_others():
    a, b = _pick("1ard"), _pick("2drp1")
    va = protein_density(a, 24)
    vr = protein_density(a, 24, rotation=_rotation(3))
    vb = protein_density(b, 24)
    F = zernike3d_moments(np.stack([va, vr, vb]), 10, dtype="float64").invariants()
    F = F / np.linalg.norm(F, axis=1, keepdims=True)
    same, other = np.linalg.norm(F[0] - F[1]), np.linalg.norm(F[0] - F[2])
    assert same < 0.02 and same < other / 3


@needs_pdbs
def test_protein_set_matches_one_by_one(tmp_path):
    ps = protein_set(12)
    assert len(ps) == len(FILES) == ps.volumes.shape[0]
    assert ps.names == [f.stem for f in FILES]
    i = ps.names.index("1znm")
    assert np.array_equal(ps.volumes[i], protein_density(FILES[i], 12))
    assert ps.n_atoms[i] == len(read_pdb_atoms(FILES[i])[0])
    # a folder given explicitly; uniform weights differ from masses
    (tmp_path / "x.pdb").write_text(FILES[i].read_text())
    one = protein_set(12, folders=[tmp_path], weights="uniform")
    assert one.names == ["x"] and not np.allclose(one.volumes[0], ps.volumes[i])


@needs_pdbs
def test_build_script_writes_volumes_and_index(tmp_path):
    mod = load_benchmark("build_protein_set")
    assert mod.main(["--size", "8", "--out", str(tmp_path)]) == 0
    index = json.loads((tmp_path / "index.json").read_text())
    assert len(index["volumes"]) == len(FILES) and index["shape"] == [8, 8, 8]
    vol = np.load(tmp_path / index["volumes"][0]["npy"])
    assert vol.shape == (8, 8, 8) and vol.dtype == np.float32


def test_no_files_and_bad_input(tmp_path):
    assert protein_files(tmp_path) == []
    with pytest.raises(FileNotFoundError, match="mustang-testdata"):
        protein_set(8, folders=tmp_path)
    atoms = (np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]), ["C", "N"])
    with pytest.raises(ValueError, match="size"):
        protein_density(atoms, 2)
    with pytest.raises(ValueError, match="sigma"):
        protein_density(atoms, 8, sigma=0)
    with pytest.raises(ValueError, match="margin"):
        protein_density(atoms, 8, margin=-1)
    with pytest.raises(ValueError, match="weights"):
        protein_density(atoms, 8, weights="charge")
    with pytest.raises(ValueError, match="rotation"):
        protein_density(atoms, 8, rotation=np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="source"):
        protein_density((np.zeros((2, 2)), ["C", "C"]), 8)


@needs_pdbs
def test_retrieval_benchmark_runs(tmp_path):
    mod = load_benchmark("ball_retrieval")
    rot = mod.random_rotation(np.random.default_rng(0))
    assert np.allclose(rot @ rot.T, np.eye(3), atol=1e-12) and np.linalg.det(rot) > 0
    assert mod.main(["--size", "16", "--order", "6", "--rotations", "1",
                     "--out", str(tmp_path)]) == 0
    r = json.loads((tmp_path / "ball_retrieval_cpu.json").read_text())
    assert r["queries"] == len(FILES) and 0 <= r["precision_top1"]["raw"] <= 1
    assert (tmp_path / "ball_retrieval_cpu.md").read_text().startswith("# Shape retrieval")
