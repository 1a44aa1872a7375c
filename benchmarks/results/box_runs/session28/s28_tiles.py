# ruff: noqa
"""Session 28 scratch: rows per program for the interleave and the split of the parity
classes (the 512^3, order-500 job's shapes), CUDA-event medians; bits compared."""
import os, statistics
import torch
from fastmoments.box import parity_batch

dev = "cuda"
cm = torch.randn((8, 251, 251, 251), device=dev)
c = torch.randn((1, 501, 501, 501), device=dev)
top = torch.zeros(parity_batch.TOP_SLOTS, device=dev)


def med(fn, n=15):
    fn(); fn()
    ts = []
    for _ in range(n):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b))
    return statistics.median(ts)


copy = med(lambda: cm.clone())
print(f"copy of cm (1.01 GB moved): {copy:.3f} ms")
ref_i = ref_s = None
for what, variants in (("interleave", ["1,256,4", "1,512,4", "4,512,4", "8,512,4", "16,512,8", "8,512,8"]),
                       ("split", ["1,256,4", "4,256,4", "8,256,4", "16,256,4", "16,256,8", "32,256,8"])):
    for v in variants:
        os.environ["FASTMOMENTS_BOX_ROWS"] = f"{what}:{v}"
        if what == "interleave":
            f = lambda: parity_batch.interleave(cm, 3, 1, (501,) * 3, 500, True, top.zero_())
            out = f()
            same = True if ref_i is None else torch.equal(out, ref_i)
            ref_i = out if ref_i is None else ref_i
            extra = f" top ok {float(top.max()) == float(out.abs().max())}"
        else:
            f = lambda: parity_batch.split_classes(c, 3, (251,) * 3, 500, True, 4.5)
            h = f()
            out = torch.cat([h.hi.flatten(), h.lo.flatten()])
            same = True if ref_s is None else torch.equal(out, ref_s)
            ref_s = out if ref_s is None else ref_s
            extra = ""
        print(f"{what:10s} ROWS,BLOCK,warps={v:9s} {med(f):.3f} ms  same bits {same}{extra}", flush=True)
os.environ.pop("FASTMOMENTS_BOX_ROWS")
