"""``fastmoments demo``: Zernike and pseudo-Zernike reconstructions of a real photograph."""

from __future__ import annotations

import argparse

from ._args import (
    HelpFormatter,
    add_device,
    add_orders,
    add_out,
    add_progress,
    image_side,
    int_list,
)

#: Defaults per device: (orders, k). The demo shows k = 1 degrading at high order on both.
DEFAULTS = {"cpu": ([40, 80, 160], [1, 3, 5]), "cuda": ([100, 200, 400], [1, 5, 11])}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo", formatter_class=HelpFormatter,
        help="reconstruct scikit-image's camera from its Zernike and pseudo-Zernike "
             "moments (under a minute on a 2-core CPU)",
        description="Computes Zernike and pseudo-Zernike moments of the camera photograph "
                    "shipped with scikit-image, reconstructs it at several orders T and "
                    "sub-pixel counts k, and writes a figure grid (rows k, columns T, as "
                    "Fig. 5.2 of the Zernike thesis), PSNR tables and timings. An estimate of "
                    "the work is printed first.")
    add_orders(p, default=None, help="orders T (default: 40,80,160 on a CPU, 100,200,400 "
                                     "on CUDA)")
    p.add_argument("--k", type=int_list("k", 1), default=None, metavar="K[,K...]",
                   help="sub-pixel points per axis, same syntax as --orders (default: 1,3,5 "
                        "on a CPU, 1,5,11 on CUDA)")
    p.add_argument("--size", type=image_side, default=256, help="image side")
    add_device(p)
    add_out(p, "demo")
    add_progress(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..data import sample_image
    from ._args import device_kind, pick_device, want_progress
    from ._disk_run import run_studies
    from ._estimate import estimate_line
    from ._outputs import OutputFolder

    dev = pick_device(args.device)
    orders, ks = DEFAULTS[device_kind(dev)]
    orders = args.orders or orders
    ks = args.k or ks
    out = OutputFolder(args.out)
    img = sample_image("camera", args.size)
    print(estimate_line("demo", n=args.size, orders=orders, ks=ks, families=2, device=dev),
          flush=True)
    with out as folder:
        report = run_studies(img, families=("zernike", "pseudo-zernike"), orders=orders,
                             ks=ks, device=dev, out=folder, label="scikit-image camera",
                             command="demo", show_progress=want_progress(args.progress))
    print(f"fastmoments demo: figures, PSNR tables and timings in {report.parent}/ "
          f"(start with {report})")
    return 0
