# ruff: noqa
"""Session 28 scratch: the split of the parity classes (one program per pair of class rows
reading one source row) against a torch reference, bit for bit, and its time (512^3 job)."""
import statistics
import torch
from fastmoments.box import parity_batch

torch.manual_seed(0)
c = torch.randn((1, 501, 501, 501), device="cuda")
order, top = 500, float(c.abs().max())
base = 14 - int(torch.tensor(top).log2().floor())
h = parity_batch.split_classes(c, 3, (251,) * 3, order, True, top)
scale = 2.0 ** h.base
n = torch.arange(501, device="cuda")
ok = True
for cls in range(8):
    s0, s1, s2 = (cls >> 2) & 1, (cls >> 1) & 1, cls & 1
    sub = c[0, s0::2, s1::2, s2::2]
    i0, i1, i2 = n[s0::2], n[s1::2], n[s2::2]
    keep = (i0[:, None, None] + i1[None, :, None] + i2[None, None, :]) <= order
    y = torch.where(keep, sub * scale, 0.0)
    hi = y.half(); lo = (y - hi.float()).half()
    gh, gl = h.hi[cls], h.lo[cls]
    ref_h = torch.zeros_like(gh); ref_l = torch.zeros_like(gl)
    ref_h[: sub.shape[0], : sub.shape[1], : sub.shape[2]] = hi
    ref_l[: sub.shape[0], : sub.shape[1], : sub.shape[2]] = lo
    same = torch.equal(gh, ref_h) and torch.equal(gl, ref_l)
    ok &= same
print("bits equal to the torch reference:", ok)
seen = torch.zeros(parity_batch.TOP_SLOTS, device="cuda")
def med(fn, k=15):
    fn(); fn(); ts = []
    for _ in range(k):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b))
    return statistics.median(ts)
print(f"split: {med(lambda: parity_batch.split_classes(c, 3, (251,) * 3, order, True, top)):.3f} ms; "
      f"with seen: {med(lambda: parity_batch.split_classes(c, 3, (251,) * 3, order, True, top, seen.zero_())):.3f} ms")
print("seen max == in-set max:", float(seen.max()) == float(torch.where(
    (n[:, None, None] + n[None, :, None] + n[None, None, :]) <= order, c[0].abs(), 0).max()))
