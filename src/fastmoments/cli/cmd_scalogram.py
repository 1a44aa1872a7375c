"""``fastmoments scalogram``: Morlet scalogram of a WAV or CSV signal (or a built-in chirp)."""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from ._args import device, natural, number_list, positive_float, positive_int


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "scalogram",
        help="Morlet wavelet scalogram of a WAV or CSV signal, drawn with matplotlib",
        description="Compute the Morlet continuous wavelet transform of a signal (a .wav file, a "
                    ".csv/.txt file of numbers, or 'chirp' for a built-in test chirp) by the "
                    "sliding Fourier transform, and draw |W| as an image.",
    )
    p.add_argument("signal", metavar="SIGNAL",
                   help="a .wav, .csv, .txt or .dat file, or 'chirp'")
    p.add_argument("--scales", type=number_list("scales", float, 0, strict=True), default=None,
                   help="scales in samples, comma separated (default: 64 log-spaced from 2 to "
                        "N/16); or give --min-scale/--max-scale/--num-scales")
    p.add_argument("--min-scale", type=positive_float, default=2.0)
    p.add_argument("--max-scale", type=positive_float, default=None)
    p.add_argument("--num-scales", type=positive_int, default=64)
    p.add_argument("--xi", type=positive_float, default=6.0, help="Morlet ξ (default 6)")
    p.add_argument("--column", type=natural, default=0,
                   help="CSV column / WAV channel (default 0)")
    p.add_argument("--rate", type=positive_float, default=None,
                   help="sampling rate in Hz (default: the WAV file's own, 1 for text files "
                        "and 'chirp''s 1000)")
    p.add_argument("--method", default="sft", choices=("sft", "asft", "direct"),
                   help="'sft', 'asft' or 'direct'")
    p.add_argument("--device", type=device, default=None,
                   help="cpu, cuda or cuda:N (default cpu)")
    p.add_argument("--out", required=True,
                   help="output figure (.png, .pdf, .svg or another format matplotlib writes)")
    p.add_argument("--save", default=None, metavar="FILE.npz",
                   help="also write the numbers drawn to an .npz file: 'coefficients' (complex, "
                        "scales x samples), 'frequencies' (Hz, or cycles per sample), 'scales' "
                        "(samples) and 'rate' (Hz)")
    p.set_defaults(func=run)


def chirp(n: int = 8192, rate: float = 1000.0) -> np.ndarray:
    """A linear chirp from 5 Hz to 200 Hz plus a 50 Hz burst (the built-in test signal)."""
    t = np.arange(n) / rate
    f0, f1 = 5.0, 200.0
    x = np.sin(2 * np.pi * (f0 * t + 0.5 * (f1 - f0) / t[-1] * t**2))
    burst = (t > 0.4 * t[-1]) & (t < 0.6 * t[-1])
    return x + 0.5 * burst * np.sin(2 * np.pi * 50.0 * t)


def run(args: argparse.Namespace) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import torch

    from fastmoments.signal import Morlet, cwt

    from ..viz.figures import save_figure
    from ._errors import UsageError
    from ._inputs import load_signal_file
    from ._outputs import OutputFile

    out = OutputFile(args.out, suffixes=_figure_suffixes())
    saved = None if args.save is None else OutputFile(args.save, "--save", suffixes=(".npz",))
    if args.signal == "chirp":
        if args.column != 0:
            raise UsageError("--column applies to signal files, not to 'chirp'")
        x, rate = chirp(), 1000.0
    else:
        x, rate = load_signal_file(args.signal, column=args.column)
    if args.rate is not None:
        rate = args.rate
    elif rate is None:
        rate = 1.0
    n = len(x)
    if args.scales is not None:
        scales = np.asarray(args.scales)
    else:
        hi = args.max_scale if args.max_scale is not None else max(args.min_scale * 2, n / 16)
        if hi < args.min_scale:
            raise UsageError(f"--max-scale {hi:g} is below --min-scale {args.min_scale:g}")
        scales = np.geomspace(args.min_scale, hi, args.num_scales)
    data: Any = x
    if args.device:
        data = torch.as_tensor(x, device=args.device)
    t0 = time.perf_counter()
    coef, freqs = cwt(data, scales, Morlet(args.xi), sampling_period=1.0 / rate,
                      method=args.method)
    if isinstance(coef, torch.Tensor):
        coef = coef.cpu().numpy()
    elapsed = time.perf_counter() - t0
    fig, ax = plt.subplots(figsize=(9, 4.5))
    t = np.arange(n) / rate
    rows = np.argsort(freqs)  # pcolormesh needs monotonic frequencies; --scales may be in any order
    ax.pcolormesh(t, np.asarray(freqs)[rows], np.abs(coef)[rows], shading="nearest",
                  cmap="magma")
    ax.set_yscale("log")
    ax.set_xlabel("time (s)" if rate != 1.0 else "sample")
    ax.set_ylabel("frequency (Hz)" if rate != 1.0 else "cycles / sample")
    ax.set_title(f"Morlet scalogram (ξ = {args.xi:g}, {len(scales)} scales, "
                 f"{args.method.upper()}, {elapsed * 1e3:.0f} ms)")
    fig.tight_layout()
    with out as path:
        save_figure(fig, path, dpi=120, bbox_inches=None)
        if saved is not None:
            with saved as data_path:
                np.savez(data_path, coefficients=coef, frequencies=np.asarray(freqs),
                         scales=scales, rate=np.float64(rate))
    print(f"scalogram of {n} samples at {len(scales)} scales in {elapsed:.3f} s -> {args.out}")
    return 0


def _figure_suffixes() -> tuple[str, ...]:
    """The file suffixes matplotlib's Agg canvas writes (``.png``, ``.pdf``, ``.svg``, ...)."""
    from matplotlib.backend_bases import FigureCanvasBase

    return tuple(f".{ext}" for ext in FigureCanvasBase.get_supported_filetypes())
