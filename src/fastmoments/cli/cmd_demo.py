"""``fastmoments demo``: Zernike and pseudo-Zernike reconstructions of a real photograph."""

from __future__ import annotations

import argparse

from ._args import device, image_side, number_list


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo", help="reconstruct scikit-image's camera from its Zernike and pseudo-Zernike "
                     "moments (about a minute on a 2-core CPU)",
        description="Computes Zernike and pseudo-Zernike moments of the camera photograph "
                    "shipped with scikit-image, reconstructs it at several orders T and "
                    "sub-pixel counts k, and writes a figure grid (rows k, columns T, as "
                    "Fig. 5.2 of the Zernike thesis), PSNR tables and timings.")
    p.add_argument("--out", default="fastmoments-demo", help="output folder")
    p.add_argument("--size", type=image_side, default=256, help="image side (default 256)")
    p.add_argument("--orders", type=number_list("orders", int, 0), default=[40, 80, 160],
                   help="orders T (default 40,80,160)")
    p.add_argument("--k", type=number_list("k", int, 1), default=[1, 3, 5],
                   help="sub-pixel points per axis (default 1,3,5)")
    p.add_argument("--device", type=device, default="cpu", help="cpu, cuda or cuda:N")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..data import sample_image
    from ._disk_run import run_studies
    from ._outputs import OutputFolder

    out = OutputFolder(args.out)
    img = sample_image("camera", args.size)
    with out as folder:
        report = run_studies(img, families=("zernike", "pseudo-zernike"), orders=args.orders,
                             ks=args.k, device=args.device, out=folder,
                             label="scikit-image camera")
    print(f"fastmoments demo: figures, PSNR tables and timings in {report.parent}/ "
          f"(start with {report})")
    return 0
