"""``fastmoments reconstruct IMAGE``: reconstruction grids for any image file."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reconstruct", help="reconstruct an image file from its disk moments",
        description="Reads an image (any format Pillow reads; colour is converted to grey, "
                    "non-square images are centre-cropped), computes its moments up to the "
                    "highest order for every k, reconstructs at every order and writes a "
                    "figure grid, PSNR table and timings.")
    p.add_argument("image", help="image file")
    p.add_argument("--family", default="zernike",
                   help="zernike, pseudo-zernike (or another registered disk family)")
    p.add_argument("--orders", default="100,300,700", help="orders T, comma-separated")
    p.add_argument("--k", default="1,5,11", help="sub-pixel points per axis, comma-separated")
    p.add_argument("--quadrature", default="midpoint", help="midpoint or gauss")
    p.add_argument("--size", type=int, default=None, help="resize the square to this side")
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--out", default="fastmoments-out", help="output folder")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..data import load_image
    from ..disk import get_family
    from ._args import parse_numbers
    from ._disk_run import run_studies

    get_family(args.family)
    path = Path(args.image)
    if not path.is_file():
        raise FileNotFoundError(f"IMAGE {args.image!r} does not exist")
    img = load_image(str(path), size=args.size)
    report = run_studies(img, families=(args.family,), orders=parse_numbers(args.orders, "orders"),
                         ks=parse_numbers(args.k, "k"), device=args.device, out=Path(args.out),
                         label=path.name, quadrature=args.quadrature)
    print(f"fastmoments reconstruct: results in {report.parent}/ (start with {report})")
    return 0
