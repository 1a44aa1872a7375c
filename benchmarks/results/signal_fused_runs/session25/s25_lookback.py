# ruff: noqa  (a scratch script, kept as it was run; run from the repository root)
"""Session 25 scratch: the decoupled look-back for carried anchors, against float64 and
against the one-block-per-signal kernel (FASTMOMENTS_SFT_CUDA_TUNE=lookback=0)."""
import json
import os
import sys
import time

sys.path.insert(0, "benchmarks")
import numpy as np
import torch

from fastmoments.signal import GaussianFilter, MorletTransform, cuda_sft
from fastmoments.signal.chunked import chunked_apply
from signal_common import timer

dev = torch.device("cuda")
rng = np.random.default_rng(0)
MODES = ["reflect", "nearest", "mirror", "wrap", "constant"]
TUNE = "FASTMOMENTS_SFT_CUDA_TUNE"


def run(bank, x, mode, look, **kw):
    if look is True:
        os.environ.pop(TUNE, None)
    elif look is False:
        os.environ[TUNE] = "lookback=0"
    else:
        os.environ[TUNE] = look
    return cuda_sft.apply(bank, x, mode, 0.5, **kw)


t0 = time.time()
# a first small launch (a hang here would be a deadlock)
bank = GaussianFilter(8192.0).bank
x = torch.tensor(rng.standard_normal((5, 102400)), dtype=torch.float32, device=dev)
f = torch.ones((), dtype=torch.uint8, device=dev)
y = run(bank, x, "reflect", True, flag=f)
torch.cuda.synchronize()
print("first launch ok", time.time() - t0, int(f), flush=True)
ref = chunked_apply(bank, x.double(), "reflect", 0.5)
print("err", float((y.double() - ref).abs().max() / ref.abs().max()), flush=True)
for i in range(3):
    f.fill_(1); t1 = time.time()
    run(bank, x, "reflect", True, flag=f); torch.cuda.synchronize()
    print("launch", i, time.time() - t1, int(f), flush=True)
if os.environ.get("FIRST_ONLY"):
    sys.exit(0)
for sigma, order in ((8192.0, 0), (1024.0, 2), (300.0, 0), (1024.0, None), (1024.0, 1),
                     (8192.0, None), (1024.0, "asft"), (4096.0, 0)):
    bank = (MorletTransform(sigma, 6.0).bank if order is None
            else GaussianFilter(sigma, method="asft").bank if order == "asft"
            else GaussianFilter(sigma, order=order, method="sft").bank)
    j = np.arange(-bank.pad, bank.pad + 1)
    scale = np.abs(bank.kernel(j)).sum(1).max()
    for n in (1, 5, 2047, 2049, 5000, 30000, 65536, 100000, 100001, 102400, 131072):
        x = torch.tensor(rng.standard_normal((3, n)), dtype=torch.float32, device=dev)
        x[2] = torch.cumsum(x[2], 0) / 30
        for mode in MODES:
            if mode == "mirror" and n == 1:
                continue
            y = run(bank, x, mode, True)
            yo = run(bank, x, mode, False)
            ref = chunked_apply(bank, x.double(), mode, 0.5)
            den = scale * float(x.abs().max())
            err = float((y.to(ref.dtype) - ref).abs().max()) / den
            erro = float((yo.to(ref.dtype) - ref).abs().max()) / den
            lay = cuda_sft._layout(bank)
            print(json.dumps({"sigma": sigma, "order": order, "n": n, "mode": mode,
                              "lookback": lay.lookback, "err": err, "err_old": erro,
                              "ok": err < 4e-6}, default=lambda o: o.item()), flush=True)
        del x
print("checks done", time.time() - t0, flush=True)
# NaN flag
bank = GaussianFilter(8192.0).bank
x = torch.tensor(rng.standard_normal((300, 102400)), dtype=torch.float32, device=dev)
for pos in (0, 50000, 102397):
    xb = x.clone()
    xb[7, pos] = float("nan")
    for mode in MODES:
        f = torch.ones((), dtype=torch.uint8, device=dev)
        run(bank, xb, mode, True, flag=f)
        print("nan flag", pos, mode, int(f), flush=True)
f = torch.ones((), dtype=torch.uint8, device=dev)
run(bank, x, "reflect", True, flag=f)
print("finite flag", int(f))
# repeatability: the same bits on repeated launches (the look-back's order may vary)
ya = run(bank, x, "reflect", True)
same = all(torch.equal(ya, run(bank, x, "reflect", True)) for _ in range(5))
print("bit-identical over 5 launches:", same, flush=True)
del x, xb, ya
torch.cuda.empty_cache()
# timing, alternating
N = 102400
x = torch.tensor(rng.standard_normal((1000, N)), dtype=torch.float32, device=dev)
flag = torch.ones((), dtype=torch.uint8, device=dev)
for sigma, order in ((8192.0, 0), (4096.0, 0), (1024.0, 0), (1024.0, 2), (300.0, 0),
                     (1024.0, None), (1024.0, "asft"), (8192.0, None)):
    plan = (MorletTransform(sigma, 6.0) if order is None
            else GaussianFilter(sigma, method="asft") if order == "asft"
            else GaussianFilter(sigma, order=order))
    bank = plan.bank
    V = (("new", True), ("old", False), ("new_b6", "blocks=6"), ("new_b4", "blocks=4"))
    row = {"sigma": sigma, "order": order, **{k: [] for k, _ in V}}
    for _ in range(2):
        for k, look in V:
            row[k].append(round(timer(lambda lk=look: run(bank, x, "reflect", lk, flag=flag),
                                      warmup=2, repeat=15, device_only=True)[0], 4))
    for mode in ("nearest", "wrap"):
        row[mode] = [round(timer(lambda lk=look: run(bank, x, mode, lk, flag=flag), warmup=2,
                                 repeat=10, device_only=True)[0], 4) for look in (True, False)]
    print(json.dumps(row), flush=True)
    torch.cuda.empty_cache()
print("done", time.time() - t0)
