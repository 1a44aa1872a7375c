"""``fastmoments reconstruct IMAGE``: reconstruction grids for any image file."""

from __future__ import annotations

import argparse

from ._args import device, disk_family, image_side, number_list


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reconstruct", help="reconstruct an image file from its disk moments",
        description="Reads an image (any format Pillow reads; colour is converted to grey, "
                    "non-square images are centre-cropped), computes its moments up to the "
                    "highest order for every k, reconstructs at every order and writes a "
                    "figure grid, PSNR table and timings.")
    p.add_argument("image", metavar="IMAGE", help="image file")
    p.add_argument("--family", type=disk_family, default="zernike",
                   help="zernike, pseudo-zernike (or another registered disk family)")
    p.add_argument("--orders", type=number_list("orders", int, 0), default=[100, 300, 700],
                   help="orders T, comma-separated (default 100,300,700)")
    p.add_argument("--k", type=number_list("k", int, 1), default=[1, 5, 11],
                   help="sub-pixel points per axis, comma-separated (default 1,5,11)")
    p.add_argument("--quadrature", default="midpoint", choices=("midpoint", "gauss"),
                   help="midpoint or gauss")
    p.add_argument("--size", type=image_side, default=None,
                   help="resize the square to this side")
    p.add_argument("--device", type=device, default="cpu", help="cpu, cuda or cuda:N")
    p.add_argument("--out", default="fastmoments-out", help="output folder")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ._disk_run import run_studies
    from ._inputs import load_image_file
    from ._outputs import OutputFolder

    out = OutputFolder(args.out)
    img = load_image_file(args.image, size=args.size)
    with out as folder:
        report = run_studies(img, families=(args.family,), orders=args.orders, ks=args.k,
                             device=args.device, out=folder, label=Path(args.image).name,
                             quadrature=args.quadrature)
    print(f"fastmoments reconstruct: results in {report.parent}/ (start with {report})")
    return 0
