"""``fastmoments characters``: the GB2312 character experiment of the Zernike thesis, chapter 6
(:ref:`bib-zernike-thesis`).

Progress: one bar on stderr (shown by default when stderr is a terminal) that moves through
every phase of :func:`fastmoments.recognition.experiment.run_characters`: rendering (per chunk
of :data:`RENDER_CHUNK` characters), moments, pair statistics, the rotation check and the
recognition test (per feature extraction, rotation and nearest-neighbour search). The
experiment has no progress hook of its own for these phases, so the CLI wraps the functions
it calls, for the duration of the run only (:func:`phase_progress`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import Any

from ._args import (
    HelpFormatter,
    SpacedList,
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
    p.add_argument("--noise", type=number_list("noise", float, 0), nargs="+",
                   action=SpacedList, default=[0.0, 0.3, 0.6], metavar="SIGMA[,SIGMA...]",
                   help="noise levels of the recognition test, comma-separated (the "
                        "space-separated form is deprecated)")
    add_orders(p, default=[2, 4, 6, 8, 10, 12], minimum=1, spaced=True,
               help="highest moment orders of the recognition test (the space-separated "
                    "form is deprecated)")
    p.add_argument("--seed", type=natural, default=0, help="seed of the angles and noise")
    p.add_argument("--no-figures", action="store_true", help="do not draw the PNG figures")
    add_progress(p)
    p.set_defaults(func=_run)


@contextlib.contextmanager
def phase_progress(show: bool) -> Iterator[Any]:
    """A bar that advances on every call the experiment makes to its building blocks and
    names the phase it is in; the module's functions are restored on exit."""
    import importlib

    from tqdm.auto import tqdm

    # import_module: the package's attribute 'features' is the function, not the subpackage
    ex = importlib.import_module("fastmoments.recognition.experiment")

    bar = tqdm(total=None, desc="characters", unit="step", disable=not show, leave=False,
               file=sys.stderr, mininterval=0.5)
    state = {"phase": "rendering", "stats": False}
    originals = {name: getattr(ex, name) for name in
                 ("render_glyphs", "features", "pair_statistics", "rotate_images",
                  "nearest_neighbours")}

    def show_phase(phase: str) -> None:
        if phase != state["phase"] or bar.n == 0:
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
        if state["phase"] == "recognition":
            return "recognition"
        return "rotation check" if state["stats"] else "moments"

    def stats_phase() -> str:
        state["stats"] = True
        return "rotation check" if state["phase"] == "rotation check" else "pair statistics"

    wrapped = {"render_glyphs": render, "features": step("features", features_phase),
               "pair_statistics": step("pair_statistics", stats_phase),
               "rotate_images": step("rotate_images", "recognition"),
               "nearest_neighbours": step("nearest_neighbours", "recognition")}
    try:
        for name, fn in wrapped.items():
            setattr(ex, name, fn)
        yield bar
    finally:
        for name, fn in originals.items():
            setattr(ex, name, fn)
        bar.close()


def _run(args: argparse.Namespace) -> int:
    from fastmoments.recognition.experiment import run_characters
    from fastmoments.recognition.glyphs import find_font

    from ._args import pick_device, want_progress
    from ._errors import UsageError
    from ._outputs import OutputFolder

    if args.limit is not None and args.limit < 2:
        raise UsageError(f"--limit must be at least 2, got {args.limit}")
    out = OutputFolder(args.out)
    try:
        font = find_font(args.font)  # before the output folder is made
    except FileNotFoundError as exc:
        raise UsageError(f"--font: {exc}" if args.font is not None else str(exc)) from exc
    show = want_progress(args.progress)
    with out as folder, phase_progress(show):
        result = run_characters(folder, limit=args.limit, device=pick_device(args.device),
                                ink=args.ink, recognition=not args.no_recognition,
                                recognition_orders=tuple(args.orders), noise=tuple(args.noise),
                                seed=args.seed, figures=not args.no_figures,
                                progress=None if show else False, font=font)
    t = result["timings_s"]
    print(f"{result['meta']['n_characters']} characters on {result['meta']['device']}: "
          f"{t['total']:.1f} s; results in {args.out}/ (start with {args.out}/report.md)")
    return 0
