"""NEAR (one output kernel, anchors from the second read) against the two kernels."""
import os, sys, json, statistics
import numpy as np, torch
sys.path.insert(0, "benchmarks")
from signal_common import timer
from signal_fused import copy_bandwidth
from fastmoments.signal import GaussianFilter, MorletTransform, CWT
from fastmoments.signal.chunked import chunked_apply
from fastmoments.signal.triton_sft import fused_apply
import fastmoments.signal.triton_sft as ts

dev = torch.device("cuda")
rng = np.random.default_rng(0)
x = torch.tensor(rng.standard_normal((1000, 102400)), dtype=torch.float32, device=dev)
res = {"copy_GBps": copy_bandwidth(dev), "device": torch.cuda.get_device_name()}
print(res, flush=True)
def setenv(**kw):
    for k, v in kw.items():
        os.environ["FASTMOMENTS_SFT_" + k] = v
jobs = [("gauss", 16.0, 0), ("gauss", 64.0, 0), ("gauss", 200.0, 0), ("gauss", 16.0, 2),
        ("morlet", 16.0, None), ("morlet", 64.0, None)]
out = {}
for kind, sigma, order in jobs:
    plan = GaussianFilter(sigma, order=order) if kind == "gauss" else MorletTransform(sigma, 6.0)
    bank = plan.bank
    name = f"{kind} s={sigma:g} o={order}"
    # correctness: NEAR vs two kernels vs float64 (first 3 rows)
    setenv(NEAR="0"); y0 = fused_apply(bank, x[:3], "reflect")
    setenv(NEAR="1"); y1 = fused_apply(bank, x[:3], "reflect")
    ref = chunked_apply(bank, x[:3].double(), "reflect")
    e0 = float((y0.to(ref.dtype) - ref).abs().max() / ref.abs().max())
    e1 = float((y1.to(ref.dtype) - ref).abs().max() / ref.abs().max())
    f = torch.ones((), dtype=torch.uint8, device=dev)
    xb = x[:4].clone(); xb[3, 102399] = float("nan")
    fused_apply(bank, xb, "reflect", flag=f)
    r = {"err_two": e0, "err_near": e1, "nan_flag": int(f)}
    for variant, env in (("two", dict(NEAR="0")), ("near", dict(NEAR="1")),
                         ("near_join1", dict(NEAR="1", JOIN="1")),
                         ("near_join0", dict(NEAR="1", JOIN="0")), ("two_b", dict(NEAR="0")),
                         ("near_b", dict(NEAR="1"))):
        setenv(**env)
        fl = torch.ones((), dtype=torch.uint8, device=dev)
        r[variant] = timer(lambda: fused_apply(bank, x, "reflect", flag=fl), warmup=2, repeat=15)[0]
        os.environ.pop("FASTMOMENTS_SFT_JOIN", None)
    for variant, env in (("pub_two", dict(NEAR="0")), ("pub_near", dict(NEAR="1"))):
        setenv(**env)
        r[variant] = timer(lambda: plan(x), warmup=2, repeat=9)[0]
    # one signal: single launch (default), two kernels, NEAR
    x1 = x[:1].contiguous()
    for variant, env in (("one_single", dict(SINGLE="1", NEAR="0")),
                         ("one_two", dict(SINGLE="0", NEAR="0")),
                         ("one_near", dict(SINGLE="0", NEAR="1"))):
        setenv(**env)
        fl = torch.ones((), dtype=torch.uint8, device=dev)
        r[variant] = timer(lambda: fused_apply(bank, x1, "reflect", flag=fl), warmup=3, repeat=50)[0]
    os.environ.pop("FASTMOMENTS_SFT_SINGLE", None)
    moved = 1000 * 102400 * (4 + (8 if kind == "morlet" else 4))
    for k in ("two", "near", "pub_two", "pub_near"):
        r["bw_" + k] = moved / r[k] / 1e6 / res["copy_GBps"]
    out[name] = r
    print(name, json.dumps(r), flush=True)
res["jobs"] = out
os.makedirs(os.environ.get("OUT", "/tmp"), exist_ok=True)
json.dump(res, open(os.path.join(os.environ.get("OUT", "/tmp"), "near_ab.json"), "w"), indent=1)
