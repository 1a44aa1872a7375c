"""``fastmoments reconstruct IMAGE``: reconstruction grids for any image file."""

from __future__ import annotations

import argparse

from .._defaults import FAMILY
from ._args import (
    HelpFormatter,
    add_device,
    add_orders,
    add_out,
    add_progress,
    disk_family,
    image_side,
    int_list,
)

#: Defaults per device: (orders, k, largest default image side). On a CPU the default run takes
#: about 5 s of modelled CPU time at 256 x 256 (images are resized to 256 by default); the
#: sizes and orders of a GPU run are out of a CPU's reach (the old defaults did not finish in
#: 15 minutes).
DEFAULTS = {"cpu": ([50, 100, 200], [1, 3], 256), "cuda": ([100, 300, 700], [1, 5, 11], None)}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reconstruct", formatter_class=HelpFormatter,
        help="reconstruct an image file from its disk moments",
        description="Reads an image at its own bit depth and type (TIFF with tifffile, other "
                    "formats with Pillow; a colour image needs --grey; non-square images are "
                    "centre-cropped), computes its moments up to the "
                    "highest order for every k, reconstructs at every order and writes a "
                    "figure grid, PSNR table and timings. An estimate of the work is printed "
                    "first; the defaults suit the device.")
    p.add_argument("image", metavar="IMAGE", help="image file")
    p.add_argument("--grey", action="store_true",
                   help="convert a colour image to grey (0.299 R + 0.587 G + 0.114 B)")
    p.add_argument("--family", type=disk_family, default=FAMILY,
                   help="the disk family: zernike, pseudo-zernike, pcet, pct or pst")
    add_orders(p, default=None, help="orders T (default: 50,100,200 on a CPU, 100,300,700 "
                                     "on CUDA)")
    p.add_argument("--k", type=int_list("k", 1), default=None, metavar="K[,K...]",
                   help="sub-pixel points per axis, same syntax as --orders (default: 1,3 on "
                        "a CPU, 1,5,11 on CUDA)")
    p.add_argument("--quadrature", default="midpoint", choices=("midpoint", "gauss"),
                   help="sample points inside each pixel")
    p.add_argument("--size", type=image_side, default=None,
                   help="resize the square to this side (default: the image's own side, at "
                        "most 256 on a CPU)")
    add_device(p)
    add_out(p, "reconstruct")
    add_progress(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ._args import device_kind, pick_device, want_progress
    from ._disk_run import run_studies
    from ._estimate import estimate_line, load_factor
    from ._inputs import load_image_file, readable_path
    from ._outputs import OutputFolder

    # the paths first, the image read, then the device (pick_device imports torch)
    readable_path(args.image, "IMAGE")
    out = OutputFolder(args.out)
    img, colour = load_image_file(args.image, size=args.size, grey=args.grey)
    dev = pick_device(args.device)
    orders, ks, cap = DEFAULTS[device_kind(dev)]
    orders = args.orders or orders
    ks = args.k or ks
    if colour != "grey":
        print(f"fastmoments reconstruct: IMAGE converted to {colour} (0.299 R + 0.587 G + "
              "0.114 B)", flush=True)
    if args.size is None and cap is not None and img.shape[0] > cap:
        print(f"fastmoments reconstruct: the image is {img.shape[0]}x{img.shape[0]}; resized "
              f"to {cap}x{cap} on a CPU (give --size to choose)", flush=True)
        img, _ = load_image_file(args.image, size=cap, grey=args.grey)
    print(estimate_line("reconstruct", n=img.shape[0], orders=orders, ks=ks, families=1,
                        device=dev, load=load_factor()), flush=True)
    with out as folder:
        report = run_studies(img, families=(args.family,), orders=orders, ks=ks,
                             device=dev, out=folder, label=Path(args.image).name,
                             quadrature=args.quadrature, command="reconstruct",
                             show_progress=want_progress(args.progress))
    print(f"fastmoments reconstruct: results in {report.parent}/ (start with {report})")
    return 0
