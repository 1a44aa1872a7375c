"""What bounds the CPU engine of the CWT on one thread: matrix products by dtype, and the
elementwise passes of the anchors.

The 64-scale CWT on one CPU thread spends most of its time in float32 matrix products that
already run near the core's float32 peak, and in the float64 anchor passes. This script
measures, on the machine it runs on:

* GEMM throughput for the CPU engine's product shapes (chunk C = 64, 11 rows per scale) in
  float32, bfloat16 (AMX on CPUs that have it) and int8, and whether this torch offers a
  bfloat16 product with a float32 result on the CPU (``torch.mm(..., out_dtype=...)``), the
  building block of a split-bfloat16 product with float32 accuracy;
* the cost per element of the torch operations the anchors are made of (complex products,
  prefix sums, differences), against a plain real product over the same bytes.

Usage: ``python benchmarks/signal_cpu_limits.py`` (writes
``benchmarks/results/signal_cpu_limits.{json,md}``).
"""

from __future__ import annotations

import datetime
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import torch

RESULTS = Path(__file__).resolve().parent / "results"
C, R = 64, 11  # CPU chunk length and the Morlet's rows per scale (ξ = 6)
N_OUT = 102400 // C


def _median_us(fn, repeat: int = 50) -> float:
    for _ in range(3):
        fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e6 * statistics.median(times)


def gemm_rates() -> list[dict]:
    """GFLOPS (GOPS for int8) of ``(M, K) @ (K, N)`` for the engine's shapes."""
    shapes = [  # (what, M, K, N)
        ("near field (one read)", N_OUT, C, 2 * C),
        ("chunk totals", N_OUT, C, 4 * R),
        ("far field", N_OUT, 2 * R, 2 * C),
        ("large square (reference)", 4096, 512, 512),
    ]
    rows = []
    gen = torch.Generator().manual_seed(0)
    for what, m, k, n in shapes:
        a = torch.randn(m, k, generator=gen)
        b = torch.randn(k, n, generator=gen)
        flops = 2 * m * k * n
        entry = {"product": what, "M": m, "K": k, "N": n}
        entry["float32_gflops"] = flops / _median_us(lambda a=a, b=b: a @ b) / 1e3
        ab, bb = a.bfloat16(), b.bfloat16()
        entry["bfloat16_gflops"] = flops / _median_us(lambda ab=ab, bb=bb: ab @ bb) / 1e3
        ai = torch.randint(-127, 128, (m, k), dtype=torch.int8, generator=gen)
        bi = torch.randint(-127, 128, (k, n), dtype=torch.int8, generator=gen)
        try:
            us = _median_us(lambda ai=ai, bi=bi: torch._int_mm(ai, bi))
            entry["int8_gops"] = flops / us / 1e3
        except RuntimeError as err:  # pragma: no cover - depends on the build
            entry["int8_gops"] = f"unavailable: {str(err).splitlines()[0]}"
        rows.append(entry)
    return rows


def bf16_to_f32_product() -> str:
    """Whether a bfloat16 x bfloat16 -> float32 product exists on the CPU in this torch."""
    a = torch.randn(64, 64).bfloat16()
    try:
        y = torch.mm(a, a, out_dtype=torch.float32)
    except (RuntimeError, TypeError, NotImplementedError) as err:
        return f"not available: {str(err).splitlines()[0][:160]}"
    return f"available (result {y.dtype})"


def elementwise_costs() -> list[dict]:
    """ns per element of the anchor operations on one block of 3 scales (n chunks x 11 rows)."""
    n = N_OUT + 140
    shape = (3, n, R)
    gen = torch.Generator().manual_seed(1)
    c128 = torch.randn(*shape, dtype=torch.complex128, generator=gen)
    c128b = torch.randn(*shape, dtype=torch.complex128, generator=gen)
    c64 = c128.to(torch.complex64)
    c64b = c128b.to(torch.complex64)
    r64 = torch.view_as_real(c128).clone()
    out128, out64 = torch.empty_like(c128), torch.empty_like(c64)
    ops = {
        "complex128 product": lambda: torch.mul(c128, c128b, out=out128),
        "complex64 product": lambda: torch.mul(c64, c64b, out=out64),
        "complex128 prefix sum (over chunks)": lambda: torch.cumsum(c128, 1, out=out128),
        "complex128 difference": lambda: torch.sub(c128, c128b, out=out128),
        "complex128 -> complex64 copy": lambda: out64.copy_(c128),
        "float64 scalar product over the same bytes": lambda: r64.mul_(1.0000001),
    }
    elements = c128.numel()
    return [{"operation": k, "ns_per_complex_element": 1e3 * _median_us(f) / elements}
            for k, f in ops.items()]


def main() -> None:
    torch.set_num_threads(1)
    result = {
        "date": datetime.date.today().isoformat(),
        "machine": platform.processor() or platform.machine(),
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "threads": 1,
        "bf16_to_f32_product": bf16_to_f32_product(),
        "gemm": gemm_rates(),
        "elementwise": elementwise_costs(),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "signal_cpu_limits.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# What bounds the CPU CWT engine (one thread)",
        "",
        f"{result['date']}, torch {result['torch']}, Python {result['python']}, "
        f"`python benchmarks/signal_cpu_limits.py`.",
        "",
        "## Matrix products by dtype (shapes of the CPU engine: C = 64, 11 rows per scale)",
        "",
        "| product | M × K × N | float32 GFLOPS | bfloat16 GFLOPS (bfloat16 result) | int8 GOPS |",
        "|---|---|---|---|---|",
    ]
    for g in result["gemm"]:
        i8 = g["int8_gops"]
        i8 = f"{i8:.0f}" if isinstance(i8, float) else i8
        lines.append(f"| {g['product']} | {g['M']} × {g['K']} × {g['N']} | "
                     f"{g['float32_gflops']:.0f} | {g['bfloat16_gflops']:.0f} | {i8} |")
    lines += [
        "",
        f"bfloat16 × bfloat16 → float32 product on the CPU: {result['bf16_to_f32_product']}.",
        "",
        "## Elementwise operations of the anchors (3 scales × 1740 chunks × 11 rows)",
        "",
        "| operation | ns per complex element |",
        "|---|---|",
    ]
    lines += [f"| {e['operation']} | {e['ns_per_complex_element']:.2f} |"
              for e in result["elementwise"]]
    (RESULTS / "signal_cpu_limits.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
