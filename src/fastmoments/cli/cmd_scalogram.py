"""``fastmoments scalogram``: Morlet scalogram of a WAV or CSV signal (or a built-in chirp)."""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from ._args import (
    HelpFormatter,
    add_device,
    add_out,
    add_progress,
    natural,
    number_list,
    positive_float,
    positive_int,
)

#: The built-in chirp: samples and rate (4.1 s at 1 kHz; 5 to 200 Hz).
CHIRP_SAMPLES, CHIRP_RATE = 4096, 1000.0
#: Default number of log-spaced scales: 32 resolve the chirp (one row per 1/4 octave over 7
#: octaves) at half the cost of 64 (the Morlet fits dominate a first call).
NUM_SCALES = 32
#: Below this many coefficients (samples x scales) the CPU transform runs on one thread: it
#: takes ~10-50 ms there (the chirp's 4096 x 32: 14 ms), where a second thread saves
#: nothing, and on a 2-core machine with anything else running each parallel step of a
#: two-thread team waits for a time slice (measured on such a machine: 14 ms against 18 ms
#: for the chirp, 0.15 s against 0.77 s for 16384 x 64). The coefficients are the same bit
#: for bit either way.
ONE_THREAD_BELOW = 1 << 20


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "scalogram", formatter_class=HelpFormatter,
        help="Morlet wavelet scalogram of a WAV or CSV signal, drawn with matplotlib",
        description="Compute the Morlet continuous wavelet transform of a signal (a .wav file, a "
                    ".csv/.txt file of numbers, or 'chirp' for a built-in test chirp) by the "
                    "sliding Fourier transform, and draw |W| as an image.",
    )
    p.add_argument("signal", metavar="SIGNAL",
                   help="a .wav, .csv, .txt or .dat file, or 'chirp'")
    p.add_argument("--scales", type=number_list("scales", float, 0, strict=True), default=None,
                   help=f"scales in samples, comma-separated (default: {NUM_SCALES} log-spaced "
                        "from --min-scale to --max-scale)")
    p.add_argument("--min-scale", type=positive_float, default=2.0,
                   help="smallest scale in samples (highest frequency) of the default scales")
    p.add_argument("--max-scale", type=positive_float, default=None,
                   help="largest scale in samples (default: N/16 for N samples)")
    p.add_argument("--num-scales", type=positive_int, default=NUM_SCALES,
                   help="number of default scales")
    p.add_argument("--xi", type=positive_float, default=6.0,
                   help="Morlet ξ (cycles of the carrier across the envelope, x 2π)")
    p.add_argument("--column", type=natural, default=0,
                   help="CSV column / WAV channel")
    p.add_argument("--rate", type=positive_float, default=None,
                   help="sampling rate in Hz (default: the WAV file's own, 1 for text files "
                        "and 'chirp''s 1000)")
    p.add_argument("--method", default="sft", choices=("sft", "asft", "direct"),
                   help="how the transform is computed: sliding Fourier transform, its "
                        "attenuated form, or direct convolution")
    p.add_argument("--colour", default="amplitude", choices=("amplitude", "magnitude"),
                   help="what the colours show: 'amplitude' is |W| / sqrt(scale), the same "
                        "for a sinusoid of a given amplitude at every frequency, so that high "
                        "frequencies stay visible; 'magnitude' is |W| itself, which grows as "
                        "sqrt(scale) (the wavelets have unit energy)")
    add_device(p)
    add_out(p, "scalogram", what="output folder (it gets scalogram.png); or a figure file "
                                 "name ending in .png, .pdf, .svg or another format matplotlib "
                                 "writes")
    p.add_argument("--save", nargs="?", const="", default=None, metavar="FILE.npz",
                   help="also write the numbers drawn to an .npz file (scalogram.npz in the "
                        "output folder if no name is given): 'coefficients' (complex, scales x "
                        "samples), 'frequencies' (Hz, or cycles per sample), 'scales' "
                        "(samples) and 'rate' (Hz)")
    add_progress(p)
    p.set_defaults(func=run)


def chirp(n: int = CHIRP_SAMPLES, rate: float = CHIRP_RATE) -> np.ndarray:
    """A linear chirp from 5 Hz to 200 Hz plus a 50 Hz burst (the built-in test signal)."""
    t = np.arange(n) / rate
    f0, f1 = 5.0, 200.0
    x = np.sin(2 * np.pi * (f0 * t + 0.5 * (f1 - f0) / t[-1] * t**2))
    burst = (t > 0.4 * t[-1]) & (t < 0.6 * t[-1])
    return x + 0.5 * burst * np.sin(2 * np.pi * 50.0 * t)


def run(args: argparse.Namespace) -> int:
    import os

    from ._args import pick_device
    from ._errors import UsageError
    from ._inputs import load_signal_file
    from ._outputs import OutputFile, OutputFolder

    if args.signal != "chirp":  # the paths first: nothing is read or imported before
        from ._inputs import readable_path

        readable_path(args.signal, "SIGNAL")
    folder = None
    if os.path.splitext(args.out)[1]:  # a figure file name
        out = OutputFile(args.out, suffixes=_figure_suffixes())
        figure_path = args.out
    else:
        folder = OutputFolder(args.out)
        out, figure_path = folder, os.path.join(args.out, "scalogram.png")
    if args.save == "" and folder is None:
        raise UsageError("--save without a file name writes into the output folder; give "
                         "--save FILE.npz when --out names a figure file")
    saved = (None if not args.save
             else OutputFile(args.save, "--save", suffixes=(".npz",)))
    if args.signal == "chirp":
        if args.column != 0:
            raise UsageError("--column applies to signal files, not to 'chirp'")
        x, rate = chirp(), CHIRP_RATE
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
    coef, freqs, elapsed = _transform(x, scales, rate, args.xi, args.method,
                                      pick_device(args.device), progress=args.progress)
    from ._drawing import draw

    drawn = _figure_inputs(coef, freqs, scales, n, rate, args)
    with out as where:
        path = where if folder is None else where / "scalogram.png"
        draw(_draw, str(path), drawn)  # in the drawing process when the program has one
        if args.save is not None:
            npz = (where / "scalogram.npz") if args.save == "" else None
            if npz is None and saved is not None:
                with saved as data_path:
                    _save(data_path, coef, freqs, scales, rate)
            else:
                _save(npz, coef, freqs, scales, rate)
    print(f"scalogram of {n} samples at {len(scales)} scales in {elapsed:.3f} s -> "
          f"{figure_path}")
    return 0


def _transform(x: np.ndarray, scales: np.ndarray, rate: float, xi: float, method: str,
               device: str, progress: bool | None = None
               ) -> tuple[np.ndarray, np.ndarray, float]:
    """``(coefficients, frequencies, seconds)`` of the Morlet CWT of ``x`` (``progress`` as
    ``--progress``: ``None`` shows the transform's bar on a terminal for a long job)."""
    import torch

    from fastmoments.signal import Morlet, cwt

    data: Any = x if device == "cpu" else torch.as_tensor(x, device=device)
    threads = torch.get_num_threads()
    small = device == "cpu" and len(x) * len(scales) < ONE_THREAD_BELOW
    t0 = time.perf_counter()
    try:
        if small and threads > 1:
            torch.set_num_threads(1)
        coef, freqs = cwt(data, scales, Morlet(xi), sampling_period=1.0 / rate, method=method,
                          progress=progress)
    finally:
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
    if isinstance(coef, torch.Tensor):
        coef = coef.cpu().numpy()
    return coef, np.asarray(freqs), time.perf_counter() - t0


def _figure_inputs(coef: np.ndarray, freqs: np.ndarray, scales: np.ndarray, n: int,
                   rate: float, args: argparse.Namespace) -> dict[str, Any]:
    """What the figure shows, as plain arrays and strings (picklable, small: a long signal's
    columns are reduced to the ones drawn, :func:`~fastmoments.viz.figures.column_peaks`)."""
    from ..viz.figures import column_peaks

    hz = rate != 1.0
    values = np.abs(coef)
    what = "|W|"
    if args.colour == "amplitude":
        values = values / np.sqrt(np.asarray(scales, dtype=np.float64))[:, None]
        what = "|W| / √scale"
    t, values = column_peaks(np.arange(n) / rate, values)
    return dict(
        t=t, freqs=np.asarray(freqs), values=values,
        title=f"Morlet scalogram, {what} (ξ = {args.xi:g}, {len(scales)} scales, "
              f"{args.method.upper()})",
        colour_label=what + (" (amplitude: equal for equal sinusoids)"
                             if args.colour == "amplitude" else " (wavelets of unit energy)"),
        time_label="time (s)" if hz else "sample",
        freq_label="frequency (Hz)" if hz else "frequency (cycles / sample)")


def _build(drawn: dict[str, Any]) -> Any:
    """The scalogram figure of :func:`_figure_inputs`'s values."""
    from ..viz.figures import scalogram_figure

    drawn = dict(drawn)
    fig = scalogram_figure(drawn.pop("t"), drawn.pop("freqs"), drawn.pop("values"), **drawn)
    _plain_log_ticks(fig.axes[0].yaxis)
    return fig


def _draw(path: str, drawn: dict[str, Any]) -> None:
    """Build the figure and write it to ``path`` (run by the drawing process, or here)."""
    from ..viz.figures import save_figure

    save_figure(_build(drawn), path, dpi=120, bbox_inches=None)


def _figure(coef: np.ndarray, freqs: np.ndarray, scales: np.ndarray, n: int, rate: float,
            args: argparse.Namespace) -> Any:
    """The scalogram figure (no timing in it: the same input gives the same figure)."""
    return _build(_figure_inputs(coef, freqs, scales, n, rate, args))


def _plain_log_ticks(axis: Any) -> None:
    """Label a logarithmic axis with plain numbers (1, 2, 5, 10, 20, ... of each decade that
    the axis shows) instead of matplotlib's default powers of ten: easier to read off a
    frequency, and drawn without mathtext, whose parser costs a first call about 0.15 s."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

    lo, hi = sorted(axis.get_view_interval())
    lo, hi = max(lo, np.finfo(float).tiny), max(hi, np.finfo(float).tiny)
    decades = np.arange(np.floor(np.log10(lo)), np.ceil(np.log10(hi)) + 1)
    steps = (1.0, 2.0, 5.0) if len(decades) <= 4 else (1.0,)
    ticks = [s * 10.0**d for d in decades for s in steps]
    ticks = [t for t in ticks if lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)]
    if len(ticks) < 2:  # less than a step: keep matplotlib's own ticks
        return
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    axis.set_minor_locator(NullLocator())
    axis.set_minor_formatter(NullFormatter())


def _save(path: Any, coef: np.ndarray, freqs: np.ndarray, scales: np.ndarray,
          rate: float) -> None:
    from .._collection_outputs import library_identity

    made_by = library_identity()  # plain strings: np.load reads them without allow_pickle
    np.savez(path, coefficients=coef, frequencies=np.asarray(freqs), scales=scales,
             rate=np.float64(rate), fastmoments_version=np.str_(made_by["version"]),
             fastmoments_commit=np.str_(made_by["commit"] or ""))


def _figure_suffixes() -> tuple[str, ...]:
    """The file suffixes matplotlib's Agg canvas writes (``.png``, ``.pdf``, ``.svg``, ...)."""
    from matplotlib.backend_bases import FigureCanvasBase

    return tuple(f".{ext}" for ext in FigureCanvasBase.get_supported_filetypes())
