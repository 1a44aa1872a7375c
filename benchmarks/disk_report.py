"""Render the disk benchmark results (JSON in benchmarks/results) as Markdown tables.

    python benchmarks/disk_report.py > benchmarks/results/disk_tables.md
"""

from __future__ import annotations

import json
from pathlib import Path

RES = Path(__file__).resolve().parent / "results"


def psnr_tables() -> str:
    d = json.loads((RES / "disk_psnr.json").read_text())
    out = [f"Device: {d['environment'].get('gpu')} ({d['environment']['date'][:10]}).", ""]
    for r in d["results"]:
        if "psnr" not in r or r["image"] != "camera":
            continue
        head = "| k \\ T | " + " | ".join(map(str, r["orders"])) + " |"
        out += [f"**{r['family']}, {r['quadrature']}** (raw; clipped in brackets)", "", head,
                "|---" * (len(r["orders"]) + 1) + "|"]
        for k, row, clip in zip(r["ks"], r["psnr"], r["psnr_clipped"], strict=True):
            cells = [f"{v:.2f} ({c:.1f})" for v, c in zip(row, clip, strict=True)]
            out.append(f"| {k} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def gpu_table() -> str:
    d = json.loads((RES / "disk_gpu.json").read_text())
    env = d["environment"]
    out = [f"{env.get('gpu')}, torch {env['torch']}, Triton {env.get('triton')}, TF32 off, "
           f"{env['date'][:10]}; camera 512x512 resident on the GPU; median of repeated calls "
           "after warm-up (CUDA events); plan built beforehand (its first call is listed).", "",
           "| family | T | k | dtype | method | forward | reconstruct | first call | thesis "
           "(TITAN V) | speed-up |", "|---" * 10 + "|"]
    for r in d["rows"]:
        rec = f"{r['reconstruct']['median_s'] * 1e3:.1f} ms" if r["reconstruct"] else "-"
        th = f"{r['thesis_s']} s" if r["thesis_s"] else "-"
        sp = f"{r['speedup_forward_vs_thesis']:.0f}x" if r.get("thesis_s") else "-"
        out.append(f"| {r['family']} | {r['T']} | {r['k']} | {r['dtype']} | {r['method']}"
                   f"{' (fused)' if r['fused'] else ' (torch)'} | "
                   f"{r['forward']['median_s'] * 1e3:.1f} ms | {rec} | "
                   f"{r['first_call_s']:.2f} s | {th} | {sp} |")
    out.append("")
    for s in d["selected"]:
        out.append(f"Selected moments, one order (n = {s['order']}, {s['moments']} moments, "
                   f"{s['family']}): {s['forward']['median_s'] * 1e3:.2f} ms.")
    return "\n".join(out)


def cpu_table() -> str:
    p = RES / "disk_cpu.json"
    if not p.exists():
        return "(not measured yet)"
    d = json.loads(p.read_text())
    env = d["environment"]
    out = [f"CPU: {env['cpu_threads']} threads, torch {env['torch']}, {env['date'][:10]}.", ""]
    for r in d["rows"]:
        out.append("* " + ", ".join(f"{k}: {v:.3g}" if isinstance(v, float) else f"{k}: {v}"
                                    for k, v in r.items()))
    return "\n".join(out)


if __name__ == "__main__":
    print("## PSNR\n")
    print(psnr_tables())
    print("## GPU\n")
    print(gpu_table())
    print("\n## CPU\n")
    print(cpu_table())
