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

#: Defaults per device: (orders, k, size). The highest order is 0.94 x the side on both, where
#: k = 1 has clearly degraded (at 96 x 96, T = 90: 19 dB with k = 1, 30 dB with k = 3); on a
#: CPU about 2 s of modelled CPU time (cli/_estimate.py) for the two families.
DEFAULTS = {"cpu": ([30, 60, 120], [1, 3], 128), "cuda": ([60, 120, 240], [1, 3, 5], 256)}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo", formatter_class=HelpFormatter,
        help="reconstruct scikit-image's camera from its Zernike and pseudo-Zernike "
             "moments (seconds on a 2-core CPU)",
        description="Computes Zernike and pseudo-Zernike moments of the camera photograph "
                    "shipped with scikit-image, reconstructs it at several orders T and "
                    "sub-pixel counts k, and writes a figure grid (rows k, columns T, as "
                    "Fig. 5.2 of the Zernike thesis), PSNR tables and timings. An estimate of "
                    "the work is printed first.")
    add_orders(p, default=None, help="orders T (default: 30,60,120 on a CPU, 60,120,240 "
                                     "on CUDA)")
    p.add_argument("--k", type=int_list("k", 1), default=None, metavar="K[,K...]",
                   help="sub-pixel points per axis, same syntax as --orders (default: 1,3 "
                        "on a CPU, 1,3,5 on CUDA)")
    p.add_argument("--size", type=image_side, default=None,
                   help="image side (default: 128 on a CPU, 256 on CUDA)")
    add_device(p)
    add_out(p, "demo")
    add_progress(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..data import sample_image
    from ._args import device_kind, pick_device, want_progress
    from ._disk_run import run_studies
    from ._estimate import estimate_line, load_factor
    from ._outputs import OutputFolder

    out = OutputFolder(args.out)  # checked before torch is imported (by pick_device)
    dev = pick_device(args.device)
    orders, ks, size = DEFAULTS[device_kind(dev)]
    orders = args.orders or orders
    ks = args.k or ks
    size = args.size or size
    img = sample_image("camera", size)
    print(estimate_line("demo", n=size, orders=orders, ks=ks, families=2, device=dev,
                        load=load_factor()), flush=True)
    with out as folder:
        report = run_studies(img, families=("zernike", "pseudo-zernike"), orders=orders,
                             ks=ks, device=dev, out=folder, label="scikit-image camera",
                             command="demo", show_progress=want_progress(args.progress))
    print(f"fastmoments demo: figures, PSNR tables and timings in {report.parent}/ "
          f"(start with {report})")
    return 0
