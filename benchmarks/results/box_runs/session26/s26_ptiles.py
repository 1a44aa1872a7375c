# ruff: noqa
"""Session 26 scratch: product tiles for the parity classes on halves (512^3, order 500)."""
import os, sys
sys.path.insert(0, "benchmarks")
import torch
from box_gpu import bench, summary
from fastmoments.box import JacobiTransform
from fastmoments.box.phantom import phantom_tensor

dev = torch.device("cuda")
x = phantom_tensor((512,) * 3, device=dev, dtype=torch.float32)
plan = JacobiTransform((512,) * 3, 500, alpha=0.3, beta=0.3, k=23, device=dev, precision="fp16x3", parity=True)
tiles = [None, "128,128,64,8,3", "128,128,32,8,4", "128,128,32,4,3", "64,128,64,4,3", "128,64,64,4,3"]
ref = None
for rnd in range(3):
    for tile in tiles:
        if tile is None:
            os.environ.pop("FASTMOMENTS_BOX_TILE", None)
        else:
            os.environ["FASTMOMENTS_BOX_TILE"] = tile
        try:
            j = plan.forward(x).data
            r = plan.inverse(j)
        except Exception as e:
            print(tile, "failed", type(e).__name__, str(e)[:80]); continue
        if ref is None:
            ref = (j, r)
        err = float((r - ref[1]).abs().max() / ref[1].abs().max())
        b = summary(bench(lambda: plan.inverse(plan.forward(x).data), dev, 15))["median_ms"]
        print(f"round {rnd} tile {tile}: both {b:.3f} ms (recon vs default tile {err:.1e})", flush=True)
