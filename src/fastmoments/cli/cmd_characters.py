"""``fastmoments characters``: the GB2312 character experiment of thesis Chapter 6."""

from __future__ import annotations

import argparse

from ._args import device, natural, nonnegative_float, positive_int


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "characters",
        help="reproduce the GB2312 character experiment (thesis Chapter 6)",
        description=(
            "Render the 6,763 GB2312 hanzi as 24x24 binary images (WenQuanYi Micro Hei, "
            "Debian package fonts-wqy-microhei), compute pseudo-Zernike and Zernike moment "
            "features, and write the variance tables, the all-pairs distance histogram, the "
            "closest pairs, the similar-pair distances, the rotation check and a rotated/noisy "
            "nearest-neighbour recognition test to DIR (results.json, report.md, PNG figures)."),
    )
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--limit", type=positive_int, default=None, metavar="N",
                   help="use only the first N characters (default: all 6,763)")
    p.add_argument("--device", type=device, default="cpu",
                   help="where moments and distances are computed: cpu, cuda or cuda:N "
                        "(default: cpu)")
    p.add_argument("--ink", type=int, default=0, choices=(0, 1),
                   help="pixel value of the strokes: 0 as in the thesis (default), or 1")
    p.add_argument("--no-recognition", action="store_true",
                   help="skip the rotated/noisy recognition test")
    p.add_argument("--noise", type=nonnegative_float, nargs="+", default=[0.0, 0.3, 0.6],
                   metavar="SIGMA",
                   help="noise levels of the recognition test (default: 0 0.3 0.6)")
    p.add_argument("--orders", type=positive_int, nargs="+", default=[2, 4, 6, 8, 10, 12],
                   metavar="T",
                   help="highest moment orders of the recognition test")
    p.add_argument("--seed", type=natural, default=0, help="seed of the angles and noise")
    p.add_argument("--no-figures", action="store_true", help="do not draw the PNG figures")
    p.add_argument("--progress", action="store_true", help="show progress bars")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from fastmoments.features.experiment import run_characters
    from fastmoments.features.glyphs import find_font

    from ._errors import UsageError
    from ._outputs import OutputFolder

    if args.limit is not None and args.limit < 2:
        raise UsageError(f"--limit must be at least 2, got {args.limit}")
    out = OutputFolder(args.out)
    try:
        find_font()  # before the output folder is made
    except FileNotFoundError as exc:
        raise UsageError(str(exc)) from exc
    with out as folder:
        result = run_characters(folder, limit=args.limit, device=args.device, ink=args.ink,
                                recognition=not args.no_recognition,
                                recognition_orders=tuple(args.orders), noise=tuple(args.noise),
                                seed=args.seed, figures=not args.no_figures,
                                progress=True if args.progress else False)
    t = result["timings_s"]
    print(f"{result['meta']['n_characters']} characters on {result['meta']['device']}: "
          f"{t['total']:.1f} s; report in {args.out}/report.md")
    return 0
