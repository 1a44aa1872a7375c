"""``fastmoments characters``: the GB2312 character experiment of the Zernike thesis, chapter 6
(:ref:`bib-zernike-thesis`).

Progress: one bar on stderr (:mod:`fastmoments._progress`; shown by default when stderr is a
terminal) with a total and an estimate of the time left, that moves through every phase of
:func:`fastmoments.recognition.experiment.run_characters`: rendering (per chunk of
:data:`RENDER_CHUNK` characters), moments, pair statistics, the rotation check and the
recognition test (per feature extraction, rotation and nearest-neighbour search). The
experiment has no progress hook of its own for these phases, so the CLI wraps the functions
it calls, for the duration of the run only (:func:`phase_progress`); the total is counted from
the options (:func:`count_steps`) and lowered when a phase turns out to need fewer steps (equal
vectors skip their statistics). The pair statistics of all 6,763 characters take minutes each:
their own bars (blocks of pairs) show below the phase bar.
"""

from __future__ import annotations

import argparse
import contextlib
import math
from collections.abc import Iterator, Sequence
from typing import Any

from ._args import (
    HelpFormatter,
    add_device,
    add_orders,
    add_out,
    add_progress,
    natural,
    number_list,
    positive_int,
)

#: Characters rendered per progress step.
RENDER_CHUNK = 500
#: The GB2312 level-1 and level-2 hanzi: every character of the experiment.
N_CHARACTERS = 6763
#: Pair statistics of the selection phase: the thesis's four vectors, and at most three more
#: where the thesis's moments differ from ours.
MAX_STATS = 7
#: Rotations of the rotation check (90, 180, 270 degrees).
TURNS = 3


def count_steps(n: int, *, recognition: bool, orders: Sequence[int],
                noise: Sequence[float]) -> int:
    """The number of steps of the progress bar (an upper bound: see the module notes).

    >>> count_steps(6763, recognition=False, orders=[2], noise=[0])  # 14 + 2 + 7 + 9
    32
    """
    steps = math.ceil(n / RENDER_CHUNK) + 2 + MAX_STATS + TURNS * 3
    if recognition:
        t = len(set(orders))
        per_noise = 2 + 2 * t + 2 * min(3, t) + 1
        steps += 2 + 1 + len(set(noise)) * per_noise + 1
    return steps


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "characters", formatter_class=HelpFormatter,
        help="reproduce the GB2312 character experiment (thesis Chapter 6)",
        description=(
            "Render the 6,763 GB2312 hanzi as 24x24 binary images (WenQuanYi Micro Hei, "
            "Debian package fonts-wqy-microhei), compute pseudo-Zernike and Zernike moment "
            "features, and write the variance tables, the all-pairs distance histogram, the "
            "closest pairs, the similar-pair distances, the rotation check and a rotated/noisy "
            "nearest-neighbour recognition test to DIR (results.json, report.md, PNG figures)."),
    )
    add_out(p, "characters")
    p.add_argument("--limit", type=positive_int, default=None, metavar="N",
                   help="use only the first N characters (default: all 6,763)")
    p.add_argument("--font", default=None, metavar="PATH",
                   help="the font file to render with (default: wqy-microhei.ttc where "
                        "Debian and other distributions install it)")
    add_device(p, "where moments and distances are computed")
    p.add_argument("--ink", type=int, default=0, choices=(0, 1),
                   help="pixel value of the strokes: 0 as in the thesis, or 1")
    p.add_argument("--no-recognition", action="store_true",
                   help="skip the rotated/noisy recognition test")
    p.add_argument("--noise", type=number_list("noise", float, 0),
                   default=[0.0, 0.3, 0.6], metavar="SIGMA[,SIGMA...]",
                   help="noise levels of the recognition test, comma-separated")
    add_orders(p, default=[2, 4, 6, 8, 10, 12], minimum=1,
               help="highest moment orders of the recognition test")
    p.add_argument("--seed", type=natural, default=0, help="seed of the angles and noise")
    p.add_argument("--no-figures", action="store_true", help="do not draw the PNG figures")
    add_progress(p)
    p.set_defaults(func=_run)


@contextlib.contextmanager
def phase_progress(show: bool, total: int) -> Iterator[Any]:
    """A bar of ``total`` steps that advances on every call the experiment makes to its
    building blocks and names the phase it is in; the module's functions are restored on
    exit."""
    import importlib

    from .._progress import progress_bar

    # import_module: the package's attribute 'features' is the function, not the subpackage
    ex = importlib.import_module("fastmoments.recognition.experiment")

    bar = progress_bar(total, desc="characters", show=show, unit="step")
    state = {"phase": "rendering", "stats": 0, "turn_stats": 0}
    originals = {name: getattr(ex, name) for name in
                 ("render_glyphs", "features", "pair_statistics", "rotate_images",
                  "nearest_neighbours")}

    def lower(by: int) -> None:
        if by > 0 and getattr(bar, "total", None):
            bar.total -= by
            bar.refresh()

    def show_phase(phase: str) -> None:
        if phase == state["phase"] and bar.n:
            return
        if state["phase"] == "pair statistics" and phase == "rotation check":
            lower(MAX_STATS - state["stats"])
        if state["phase"] == "rotation check" and phase == "recognition":
            lower(TURNS - state["turn_stats"])
        state["phase"] = phase
        bar.set_description_str(f"characters: {phase}", refresh=True)

    def render(chars: Any, **kwargs: Any) -> Any:
        import numpy as np

        show_phase("rendering")
        chars = list(chars)
        parts = []
        for s in range(0, len(chars), RENDER_CHUNK):
            parts.append(originals["render_glyphs"](chars[s:s + RENDER_CHUNK], **kwargs))
            bar.update(1)
        return np.concatenate(parts) if parts else originals["render_glyphs"](chars, **kwargs)

    def step(name: str, phase: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            show_phase(phase() if callable(phase) else phase)
            result = originals[name](*args, **kwargs)
            bar.update(1)
            return result
        return call

    def features_phase() -> str:
        if state["phase"] in ("recognition", "rotation check"):
            return state["phase"]
        return "rotation check" if state["stats"] else "moments"

    def stats_phase() -> str:
        if state["phase"] == "rotation check":
            state["turn_stats"] += 1
            return "rotation check"
        state["stats"] += 1
        return "pair statistics"

    wrapped = {"render_glyphs": render, "features": step("features", features_phase),
               "pair_statistics": step("pair_statistics", stats_phase),
               "rotate_images": step("rotate_images", "recognition"),
               "nearest_neighbours": step("nearest_neighbours", "recognition")}
    try:
        for name, fn in wrapped.items():
            setattr(ex, name, fn)
        yield bar
        if getattr(bar, "total", None):
            bar.total = bar.n  # the steps the run took (the total is an upper bound)
            bar.refresh()
    finally:
        for name, fn in originals.items():
            setattr(ex, name, fn)
        bar.close()


def _run(args: argparse.Namespace) -> int:
    from ._args import pick_device
    from ._errors import UsageError
    from ._inputs import readable_path
    from ._outputs import OutputFolder

    # the options, the output folder and the font, before torch is imported
    if args.limit is not None and args.limit < 2:
        raise UsageError(f"--limit must be at least 2, got {args.limit}")
    out = OutputFolder(args.out)
    from fastmoments.recognition.glyphs import find_font  # no torch: see recognition/

    if args.font is not None:
        font = readable_path(args.font, "--font")
    else:
        try:
            font = find_font()
        except FileNotFoundError as exc:
            raise UsageError(str(exc)) from exc
    device = pick_device(args.device)
    from fastmoments.recognition.experiment import run_characters

    from .._progress import resolve_progress

    n = min(args.limit or N_CHARACTERS, N_CHARACTERS)
    total = count_steps(n, recognition=not args.no_recognition, orders=args.orders,
                        noise=args.noise)
    show = resolve_progress(args.progress)
    phases = "rendering, moments, pair statistics, rotation check" + (
        "" if args.no_recognition else ", recognition test")
    # said at once, also when no bar is shown (a log file): the statistics of every pair of
    # the 6,763 characters take minutes
    print(f"fastmoments characters: {n} characters on {device}: {phases} ({total} steps"
          + ("" if show else "; --progress shows a bar") + ")", flush=True)
    with out as folder, phase_progress(show, total):
        result = run_characters(folder, limit=args.limit, device=device,
                                ink=args.ink, recognition=not args.no_recognition,
                                recognition_orders=tuple(args.orders), noise=tuple(args.noise),
                                seed=args.seed, figures=not args.no_figures,
                                progress=None if show else False, font=font)
    t = result["timings_s"]
    print(f"{result['meta']['n_characters']} characters on {result['meta']['device']}: "
          f"{t['total']:.1f} s; results in {args.out}/ (start with {args.out}/report.md)")
    return 0
