# ruff: noqa
"""Session 28 scratch: the host's Python in a replayed forward + reconstruction of the
512^3 job (cProfile over 20 calls; the GPU waits are in the synchronising calls)."""
import cProfile, pstats, io
import torch
from fastmoments.box import JacobiTransform
from fastmoments.box.phantom import phantom_tensor

x = phantom_tensor((512,) * 3, device="cuda", dtype=torch.float32)
plan = JacobiTransform((512,) * 3, 500, alpha=0.3, beta=0.3, k=23, device="cuda")
for _ in range(6):
    plan.inverse(plan.forward(x))
torch.cuda.synchronize()
pr = cProfile.Profile()
pr.enable()
for _ in range(20):
    plan.inverse(plan.forward(x))
torch.cuda.synchronize()
pr.disable()
for key in ("tottime", "cumulative"):
    s = io.StringIO()
    pstats.Stats(pr, stream=s).sort_stats(key).print_stats(32)
    print("\n".join(l for l in s.getvalue().splitlines() if l.strip())[:9000])
