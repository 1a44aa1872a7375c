#!/usr/bin/env bash
# Nsight Compute and register counts of the fused SFT kernels on a batch of 1000 signals
# (results summarised in benchmarks/results/signal_fused_ncu.md; ncu profiles the second Gaussian
# call). Run from the repository root
# on the GPU machine: bash benchmarks/signal_fused_profile.sh
set -u
export PYTHONPATH=src
cat > /tmp/fm_sft_batch.py <<'PY'
import torch
from fastmoments.signal import GaussianFilter, MorletTransform
from fastmoments.signal import triton_sft as ts
x = torch.randn(1000, 102400, device="cuda")
for p in (GaussianFilter(256.0), GaussianFilter(256.0), MorletTransform(256.0, 6.0)):
    ts.fused_apply(p.bank, x, "reflect")
    torch.cuda.synchronize()
for name, k in (("tile_totals", ts._tile_totals), ("sft_output", ts._sft_output)):
    for cache in k.device_caches.values():
        for ck in (cache[0] if isinstance(cache, tuple) else cache).values():
            print(name, "registers", ck.n_regs, "spills", ck.n_spills, "shared",
                  ck.metadata.shared, "warps", ck.metadata.num_warps)
PY
python /tmp/fm_sft_batch.py
if command -v ncu > /dev/null; then
    ncu --launch-skip 2 --launch-count 2 --section SpeedOfLight --section Occupancy \
        --section LaunchStats python /tmp/fm_sft_batch.py 2>&1 | grep -v "^==PROF=="
fi
