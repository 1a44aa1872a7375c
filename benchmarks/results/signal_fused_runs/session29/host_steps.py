"""Session 29 scratch: host time of each step of the batch launch (cuda_sft.apply) and of the
wait after it, 1000 x 102400 float32, GPU idle before each timed step."""
import cProfile
import io
import pstats
import statistics
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from fastmoments.signal import GaussianFilter, cuda_sft
from fastmoments.signal.verdict import Verdict

dev = torch.device("cuda")
N = 102400
x = torch.randn(1000, N, device=dev)
small = torch.randn(1000, 1024, device=dev)
flag = torch.ones((), dtype=torch.uint8, device=dev)
plan = GaussianFilter(1024.0)
bank = plan.bank
for _ in range(3):
    plan(x)
torch.cuda.synchronize()


def host(fn, reps=40, busy=False, sync=True):
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        if busy:
            torch.cuda._sleep(2_000_000)
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    return round(1e6 * statistics.median(ts), 1)


lay = cuda_sft._layout(bank, cuda_sft._options()[1])
out = torch.empty((1000, 1, N), device=dev)
print("empty 410MB (idle)", host(lambda: torch.empty((1000, 1, N), device=dev)))
print("empty 410MB (busy)", host(lambda: torch.empty((1000, 1, N), device=dev), busy=True))
print("empty 4MB", host(lambda: torch.empty((1000, 1, 1024), device=dev)))
print("_options+_layout", host(lambda: cuda_sft._layout(bank, cuda_sft._options()[1])))
print("virtual", host(lambda: lay.virtual(N, "reflect")))
print("_stream", host(lambda: cuda_sft._stream(0)))
print("apply out= (idle)", host(lambda: cuda_sft.apply(bank, x, "reflect", out=out, flag=flag)))
print("apply out= (busy)", host(lambda: cuda_sft.apply(bank, x, "reflect", out=out, flag=flag),
                                busy=True))
print("apply (idle)", host(lambda: cuda_sft.apply(bank, x, "reflect", flag=flag)))
print("apply (busy)", host(lambda: cuda_sft.apply(bank, x, "reflect", flag=flag), busy=True))
print("apply small rows (idle)", host(lambda: cuda_sft.apply(bank, small, "reflect", flag=flag)))
print("plan unchecked (idle)", host(lambda: plan(x, check_finite=False)))
print("plan unchecked (busy)", host(lambda: plan(x, check_finite=False), busy=True))
print("plan small unchecked (idle)", host(lambda: plan(small, check_finite=False)))
print("torch add (idle)", host(lambda: torch.add(small, 1.0)))
print("torch add (busy)", host(lambda: torch.add(small, 1.0), busy=True))
# the wait: launch, then each kind of synchronisation; GPU end -> host wake via events
s = cuda_sft._stream(0)


def wake(sync):
    ts = []
    for _ in range(30):
        torch.cuda.synchronize()
        e = torch.cuda.Event(enable_timing=True)
        cuda_sft.apply(bank, x, "reflect", out=out, flag=flag)
        e.record()
        sync()
        time.perf_counter()
        e2 = torch.cuda.Event(enable_timing=True)
        e2.record()  # GPU idle now: recorded as it arrives
        torch.cuda.synchronize()
        ts.append(e.elapsed_time(e2) * 1e3)
    return round(statistics.median(ts), 1)


print("kernel end -> next record, torch sync", wake(torch.cuda.synchronize))
print("kernel end -> next record, cupy stream sync", wake(s.synchronize))
print("kernel end -> next record, stream sync", wake(torch.cuda.current_stream().synchronize))
v = [None]


def verdict():
    vv = Verdict(dev)
    cuda_sft.apply(bank, x, "reflect", out=out, flag=vv)
    return vv


def wake_verdict():
    ts = []
    for _ in range(30):
        torch.cuda.synchronize()
        vv = verdict()
        e = torch.cuda.Event(enable_timing=True)
        e.record()
        vv.finite()
        e2 = torch.cuda.Event(enable_timing=True)
        e2.record()
        torch.cuda.synchronize()
        ts.append(e.elapsed_time(e2) * 1e3)
    return round(statistics.median(ts), 1)


print("kernel end -> next record, verdict", wake_verdict())
pr = cProfile.Profile()
for _ in range(3):
    torch.cuda.synchronize()
    plan(x, check_finite=False)
torch.cuda.synchronize()
for _ in range(50):
    torch.cuda.synchronize()
    pr.enable()
    plan(x, check_finite=False)
    pr.disable()
torch.cuda.synchronize()
st = io.StringIO()
pstats.Stats(pr, stream=st).sort_stats("tottime").print_stats(18)
print(st.getvalue()[:5000])
