"""Sweep the forward radial kernel's radius block and warps (set through the environment
variables FASTMOMENTS_RADIAL_BLOCK_G / FASTMOMENTS_RADIAL_WARPS, read at import). Prints
one JSON line per configuration; run it once per configuration::

    FASTMOMENTS_RADIAL_BLOCK_G=2048 FASTMOMENTS_RADIAL_WARPS=8 \\
        PYTHONPATH=src python benchmarks/disk_sweep.py
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fastmoments as fm
from disk_common import timeit
from fastmoments.disk import DiskTransform


def main() -> None:
    dev = torch.device("cuda")
    x = torch.tensor(fm.data.sample_image("camera", 512), dtype=torch.float32, device=dev)
    out = {"block_g": os.environ.get("FASTMOMENTS_RADIAL_BLOCK_G", "default"),
           "warps": os.environ.get("FASTMOMENTS_RADIAL_WARPS", "default")}
    for fam, k, rep in (("zernike", 1, 5), ("zernike", 11, 2), ("pseudo-zernike", 1, 5)):
        p = DiskTransform(fam, 512, 700, k=k, device=dev)
        p.forward(x)
        out[f"{fam}_k{k}_ms"] = timeit(lambda p=p: p.forward(x), dev, warmup=1,
                                       repeat=rep)["median_s"] * 1e3
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
