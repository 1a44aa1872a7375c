"""
Shape retrieval of real proteins with 3-D Zernike descriptors
=============================================================

A protein's shape can be compared with others' by the 3-D Zernike descriptor of a density
made from its atoms (the method behind the RCSB PDB's shape search). Here: the 15 zinc-finger
domains that Debian's ``mustang-testdata`` package installs (``apt-get install
mustang-testdata``; the tutorial prints a note and stops where it is absent), each turned into
a Gaussian density scaled to the ball, their descriptors, and a small retrieval test: rotated
copies of each structure (the atoms rotated, the density rebuilt) find their own structure
first. ``benchmarks/ball_retrieval.py`` runs the full test (20 rotations each, larger grids).
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

import fastmoments as fm
from fastmoments.ball.density import read_pdb_atoms
from fastmoments.ball.proteins import protein_density, protein_files

files = protein_files()  # the PDB files of mustang-testdata, if installed
if not files:
    print("Debian's mustang-testdata is not installed here: nothing to show "
          "(apt-get install mustang-testdata).")
else:
    names = [f.stem for f in files]
    atoms = [read_pdb_atoms(f) for f in files]
    N = 40
    vols = np.stack([protein_density(a, N) for a in atoms])  # (15, 40, 40, 40)
    print(f"{len(names)} structures, {min(len(a[0]) for a in atoms)}-"
          f"{max(len(a[0]) for a in atoms)} atoms each, volumes {vols.shape[1:]}")

    fig, axes = plt.subplots(1, 4, figsize=(9, 2.6))
    for ax, i in zip(axes, [0, 3, 5, 11], strict=True):
        ax.imshow(vols[i].max(axis=0), cmap="magma", origin="lower")
        ax.set_title(names[i])
        ax.set_axis_off()
    fig.suptitle("Densities (largest value along z)")
    plt.show()

# %%
# Descriptors and distances
# -------------------------
# The descriptor (the norms of the moments of each order n and degree l) up to order 20 has
# 121 values. Divided by its norm, it compares shapes whatever the total density; the matrix
# shows the Euclidean distances between the 15 structures (similar folds, so the distances
# are small but not zero).
if files:
    plan = fm.Zernike3DTransform((N, N, N), 20)
    F = np.asarray(plan.forward(vols.astype(np.float32)).invariants(), dtype=np.float64)
    F /= np.linalg.norm(F, axis=1, keepdims=True)
    D = np.linalg.norm(F[:, None] - F[None], axis=-1)
    fig, ax = plt.subplots(figsize=(5.2, 4.4))
    im = ax.imshow(D, cmap="viridis")
    ax.set_xticks(range(len(names)), names, rotation=90, fontsize=7)
    ax.set_yticks(range(len(names)), names, fontsize=7)
    fig.colorbar(im, ax=ax, label="descriptor distance")
    fig.tight_layout()
    plt.show()

# %%
# Rotated copies find themselves
# ------------------------------
# Each structure is rotated at random three times: the atom coordinates are rotated and the
# density rebuilt, so the voxels of a query are not those of the database. The descriptor
# changes only by that resampling error, far less than the distance to any other structure.
if files:
    rng = np.random.default_rng(0)

    def random_rotation():
        a, b, c, d = (q := rng.normal(size=4)) / np.linalg.norm(q)
        return np.array([[a*a + b*b - c*c - d*d, 2*(b*c - a*d), 2*(b*d + a*c)],
                         [2*(b*c + a*d), a*a - b*b + c*c - d*d, 2*(c*d - a*b)],
                         [2*(b*d - a*c), 2*(c*d + a*b), a*a - b*b - c*c + d*d]])

    own, other, hits = [], [], 0
    for i, a in enumerate(atoms):
        queries = np.stack([protein_density(a, N, rotation=random_rotation())
                            for _ in range(3)]).astype(np.float32)
        Fq = np.asarray(plan.forward(queries).invariants(), dtype=np.float64)
        Fq /= np.linalg.norm(Fq, axis=1, keepdims=True)
        d = np.linalg.norm(Fq[:, None] - F[None], axis=-1)  # (3 queries, 15 structures)
        hits += int((d.argmin(axis=1) == i).sum())
        own += list(d[:, i])
        other += list(np.delete(d, i, axis=1).min(axis=1))
    print(f"top-1 precision: {hits}/{3 * len(atoms)}")
    fig, ax = plt.subplots(figsize=(5.5, 3))
    bins = np.logspace(np.log10(min(own)) - 0.2, np.log10(max(other)) + 0.2, 40)
    ax.hist(own, bins=bins, label="query to its own structure")
    ax.hist(other, bins=bins, label="query to the nearest other")
    ax.set_xscale("log")
    ax.set_xlabel("descriptor distance")
    ax.legend(fontsize=8)
    fig.tight_layout()
    plt.show()
