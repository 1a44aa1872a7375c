"""Build the offline protein set: one density volume per installed PDB file, in one command.

Finds the PDB files of Debian's ``mustang-testdata`` package (or of ``--folders``), turns each
into a Gaussian density volume scaled to the ball of a ``--size``-voxel cube
(:func:`fastmoments.ball.proteins.protein_set`) and writes ``<name>.npy`` (float32,
``(size, size, size)``, axes ``(z, y, x)``) for each, with ``index.json`` listing the names,
files, atom counts, options and versions::

    python benchmarks/build_protein_set.py --size 64 --out protein_set
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))

import fastmoments
from fastmoments.ball.proteins import protein_set


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=64, help="voxels per side (default 64)")
    ap.add_argument("--sigma", type=float, default=1.5, help="Gaussian width in Angstrom")
    ap.add_argument("--margin", type=float, default=3.0,
                    help="ball radius = farthest atom + margin * sigma")
    ap.add_argument("--weights", choices=("mass", "uniform"), default="mass")
    ap.add_argument("--folders", nargs="*", default=None,
                    help="folders of PDB files (default: mustang-testdata's)")
    ap.add_argument("--out", default="protein_set", help="output folder")
    args = ap.parse_args(argv)
    try:
        ps = protein_set(args.size, folders=args.folders, sigma=args.sigma,
                         margin=args.margin, weights=args.weights)
    except FileNotFoundError as exc:
        print(f"build_protein_set: {exc}", file=sys.stderr)
        return 1
    os.makedirs(args.out, exist_ok=True)
    for name, vol in zip(ps.names, ps.volumes, strict=True):
        np.save(os.path.join(args.out, f"{name}.npy"), vol.astype(np.float32))
    index = {
        "volumes": [{"name": n, "file": str(f), "npy": f"{n}.npy", "atoms": a}
                    for n, f, a in zip(ps.names, ps.files, ps.n_atoms, strict=True)],
        "shape": [args.size] * 3,
        "dtype": "float32",
        "axes": "zyx",
        "options": ps.options,
        "fastmoments": fastmoments.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    with open(os.path.join(args.out, "index.json"), "w") as fh:
        json.dump(index, fh, indent=1)
    print(f"wrote {len(ps)} volumes of {args.size}^3 and index.json to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
