"""Session 29 scratch: how the host waits for a batch kernel, and what that does to the next
call. Strategies: stream synchronisation (as shipped), a Python loop on cudaEventQuery, a Python
loop on a pinned host word written by cuStreamWriteValue32 after the kernel."""
import ctypes
import statistics
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from disk_common import time_samples
from fastmoments._launches import libcuda
from fastmoments.signal import GaussianFilter, cuda_sft
from fastmoments.signal import verdict as vmod

dev = torch.device("cuda")
N = 102400
x = torch.randn(1000, N, device=dev)
out = torch.empty((1000, 1, N), device=dev)
flag = torch.ones((), dtype=torch.uint8, device=dev)
cu = libcuda()
word = torch.zeros(4, dtype=torch.int32, pin_memory=True)
wv = word.numpy()
seq = [0]


def stream_sync():
    torch.cuda.current_stream().synchronize()


def event_spin():
    e = torch.cuda.Event()
    e.record()
    while not e.query():
        pass


def word_spin():
    seq[0] += 1
    s = torch.cuda.current_stream().cuda_stream
    st = cu.cuStreamWriteValue32(ctypes.c_void_p(s), ctypes.c_uint64(word.data_ptr()),
                                 ctypes.c_uint32(seq[0]), ctypes.c_uint(0))
    assert st == 0, st
    while wv[0] != seq[0]:
        pass


def word_spin_sleep():
    seq[0] += 1
    s = torch.cuda.current_stream().cuda_stream
    cu.cuStreamWriteValue32(ctypes.c_void_p(s), ctypes.c_uint64(word.data_ptr()),
                            ctypes.c_uint32(seq[0]), ctypes.c_uint(0))
    while wv[0] != seq[0]:
        time.sleep(0)


MODES = {"stream_sync": stream_sync, "event_spin": event_spin, "word_spin": word_spin,
         "word_spin_sleep0": word_spin_sleep}
for sigma in (16.0, 1024.0):
    plan = GaussianFilter(sigma)
    bank = plan.bank
    for _ in range(3):
        plan(x)
    print("sigma", sigma)
    for rnd in range(2):
        for name, wait in MODES.items():
            # wake latency: kernel end -> the next event recorded by the host
            ts = []
            e2 = torch.cuda.Event(enable_timing=True)
            for _ in range(20):
                torch.cuda.synchronize()
                cuda_sft.apply(bank, x, "reflect", out=out, flag=flag)
                e = torch.cuda.Event(enable_timing=True)
                e.record()
                wait()
                e2.record()
                torch.cuda.synchronize()
                ts.append(e.elapsed_time(e2) * 1e3)
            wake = statistics.median(ts)

            # the public call with its verdict read after this wait
            def finite(self, wait=wait):
                ok = True
                if self._host is not None:
                    wait()
                    ok = bool(self._host[1][()])
                    vmod._release(self._host)
                    self._host = None
                if self._flag is not None:
                    ok = bool(self._flag) and ok
                return ok
            orig = vmod.Verdict.finite
            vmod.Verdict.finite = finite
            try:
                pub = 1e3 * statistics.median(time_samples(lambda p=plan: p(x), dev, warmup=3,
                                                           repeat=30))
                # back to back, no sync between calls but the verdict's
                ts = []
                for _ in range(5):
                    torch.cuda.synchronize()
                    t0 = time.perf_counter()
                    for _ in range(10):
                        plan(x)
                    torch.cuda.synchronize()
                    ts.append((time.perf_counter() - t0) / 10)
                loop = 1e3 * statistics.median(ts)
            finally:
                vmod.Verdict.finite = orig
            print(f"  round {rnd} {name:18s} wake {wake:6.1f} us  public {pub:.3f} ms  "
                  f"loop {loop:.3f} ms", flush=True)
    torch.cuda.empty_cache()
