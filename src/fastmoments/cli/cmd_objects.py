"""``fastmoments objects LABELS [IMAGE] --out TABLE``: moment features of every labelled object.

Reads a label image (PNG or TIFF at its own integer depth, or ``.npy``) and, optionally, an
intensity image of the same size, and writes one row per label (label, area, centre, radius,
then the features of :func:`fastmoments.recognition.object_features`) to a Parquet or CSV
file, chosen by the file name. A 3-D label volume (a TIFF stack or a 3-D ``.npy``) gets the
3-D Zernike moments of :func:`fastmoments.ball.object_moments3d` instead.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from .._defaults import DISK_FAMILIES, FAMILY, KIND, ORDERS
from ._args import HelpFormatter, add_device, add_progress, pick_device, want_progress
from ._errors import UsageError, require

#: The choices of the options, checked before torch is imported (tests check them against
#: the library's tables).
FAMILIES = DISK_FAMILIES
CENTRES = ("enclosing", "centroid-enclosing", "area")
CENTRES3D = ("centroid-enclosing", "volume")
CONVENTIONS = ("standard", "cellprofiler")
KINDS = ("magnitude", "complex")
TABLE_SUFFIXES = (".parquet", ".csv")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "objects", help="moment features of every object of a label image (Parquet, CSV)",
        formatter_class=HelpFormatter,
        description="Computes the moment features of every object of LABELS (a label image: "
                    "0 is background, each positive value one object; PNG or TIFF at its own "
                    "integer depth, or .npy), each on its own pixels in its own disk, and "
                    "writes one row per label to OUTPUT (.parquet or .csv). With IMAGE, the "
                    "features of its intensities over each object; without, of the object's "
                    "shape. --convention cellprofiler gives CellProfiler's Zernike features "
                    "and column names.")
    p.add_argument("labels", metavar="LABELS", help="label image (.png, .tif, .tiff, .npy)")
    p.add_argument("image", metavar="IMAGE", nargs="?", default=None,
                   help="intensity image of the same size (optional)")
    p.add_argument("--out", required=True, metavar="OUTPUT",
                   help="OUTPUT.parquet or OUTPUT.csv")
    p.add_argument("--family", choices=FAMILIES, default=FAMILY, help="the moments")
    p.add_argument("--orders", default=str(ORDERS),
                   help="'T' for orders 0..T, 'LOW-HIGH', or a list '2,4,6' (9 is "
                        "CellProfiler's degree)")
    p.add_argument("--centre", default=None,
                   help="each object's disk: enclosing (the minimum enclosing circle, "
                        "default), centroid-enclosing, or area; of a 3-D label volume, its "
                        "ball: centroid-enclosing (default) or volume")
    p.add_argument("--convention", default="standard",
                   help="standard (default) or cellprofiler")
    p.add_argument("--kind", choices=KINDS, default=KIND,
                   help="magnitude (rotation invariant: of a 3-D label volume, the "
                        "invariants F[n,l]) or complex (Re, Im columns)")
    p.add_argument("--normalize", default=None, help="z00: divide each row by its |A[0,0]|")
    p.add_argument("--image-name", default="image",
                   help="the image's name in CellProfiler's intensity column names")
    p.add_argument("--grey", action="store_true",
                   help="convert a colour IMAGE to grey (0.299 R + 0.587 G + 0.114 B)")
    p.add_argument("--dtype", default=None, help="float32 or float64 (default: float64 for "
                                                  "--convention cellprofiler, else float32)")
    add_device(p)
    add_progress(p)
    p.set_defaults(func=run)


def _choice(option: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise UsageError(f"--{option} must be one of {', '.join(choices)}; got {value!r}")


def _read(path: str, what: str, *, grey: bool = False, labels: bool = False) -> Any:
    """A label or intensity image at its own type: ``.npy`` by NumPy, a TIFF stack by
    tifffile, other files by :func:`fastmoments.data.read_image`; every failure a
    :class:`UsageError` naming it."""
    import numpy as np

    from ..data import read_image
    from ._inputs import _existing_file, _unreadable

    p = _existing_file(path, what)
    try:
        if p.suffix.lower() == ".npy":
            arr = np.load(p, allow_pickle=False)
        elif p.suffix.lower() in (".tif", ".tiff") and _tiff_stack(p):
            import tifffile

            arr = tifffile.imread(p)
        else:
            arr, _colour = read_image(p, grey=grey)
    except ValueError as exc:
        raise UsageError(f"{what} {str(p)!r}: {' '.join(str(exc).split())}") from None
    except Exception as exc:
        raise _unreadable(what, p, "an image", exc) from exc
    if arr.ndim not in (2, 3):
        raise UsageError(f"{what} {str(p)!r} must hold one 2-D image or a 3-D volume, got "
                         f"shape {arr.shape}")
    if labels:
        if arr.dtype.kind not in "biu":
            raise UsageError(f"{what} {str(p)!r} holds {arr.dtype} pixels; a label image "
                             "holds integers (0 background, one value per object)")
        if arr.dtype.kind == "i" and arr.size and int(arr.min()) < 0:
            raise UsageError(f"{what} {str(p)!r} holds negative labels (0 is background)")
    elif arr.dtype.kind not in "biuf":
        raise UsageError(f"{what} {str(p)!r} holds {arr.dtype} pixels; real numbers are "
                         "expected")
    return arr


def _tiff_stack(path: Path) -> bool:
    """Whether a TIFF file holds a grey volume (a first series of three axes, no samples)."""
    import tifffile

    with tifffile.TiffFile(path) as tif:
        series = tif.series[0]
        return len(series.shape) == 3 and "S" not in series.axes


def write_table(columns: dict[str, Any], path: Path) -> None:
    """One row per object: Parquet (pyarrow) or CSV (the standard library), by suffix."""
    import numpy as np

    if path.suffix.lower() == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(pa.table({k: np.asarray(v) for k, v in columns.items()}), path)
        return
    import csv

    names = list(columns)
    cols = [np.asarray(columns[k]).tolist() for k in names]
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(names)
        w.writerows(zip(*cols, strict=True))


def run(args: argparse.Namespace) -> int:
    from ..collections import parse_orders
    from ._outputs import OutputFile

    # every option is checked before anything is read or torch is imported
    _choice("family", args.family, FAMILIES)
    if args.centre is not None:
        _choice("centre", args.centre, CENTRES + CENTRES3D[1:])
    _choice("convention", args.convention, CONVENTIONS)
    _choice("kind", args.kind, KINDS)
    if args.normalize not in (None, "z00"):
        raise UsageError(f"--normalize must be z00; got {args.normalize!r}")
    if args.dtype not in (None, "float32", "float64"):
        raise UsageError(f"--dtype must be float32 or float64, got {args.dtype!r}")
    if args.convention == "cellprofiler":
        if args.family != "zernike" or args.centre not in (None, "enclosing"):
            raise UsageError("--convention cellprofiler computes Zernike moments in the "
                             "minimum enclosing circle: leave --family zernike and --centre "
                             "enclosing")
        if args.normalize is not None:
            raise UsageError("--normalize is for --convention standard")
    orders = parse_orders(args.orders)
    if args.grey and args.image is None:
        raise UsageError("--grey converts a colour IMAGE; give IMAGE")
    out = Path(args.out)
    if out.suffix.lower() == ".parquet":
        require(["pyarrow"], "--out *.parquet (or give --out *.csv)")
    output = OutputFile(args.out, suffixes=TABLE_SUFFIXES)
    from ._inputs import readable_path

    readable_path(args.labels, "LABELS")  # both paths before a file is read
    if args.image is not None:
        readable_path(args.image, "IMAGE")
    labels = _read(args.labels, "LABELS", labels=True)
    if labels.ndim == 3:
        _volume_options(args, orders)
    elif args.centre == "volume":
        raise UsageError("--centre volume is for a 3-D label volume; give enclosing, "
                         "centroid-enclosing or area")
    image = None
    if args.image is not None:
        image = _read(args.image, "IMAGE", grey=args.grey)
        if image.shape != labels.shape:
            raise UsageError(f"IMAGE {args.image!r} has the shape {image.shape}, LABELS "
                             f"{labels.shape}: they must be the same size")
    device = pick_device(args.device)
    if labels.ndim == 3:
        from ..ball.labels import object_moments3d

        om3 = object_moments3d(labels, image, order=orders,
                               centre=args.centre or "centroid-enclosing",
                               kind="invariant" if args.kind == "magnitude" else "complex",
                               dtype=args.dtype, device=device)
        with output as path:
            write_table(om3.to_dict(), path)
        print(f"fastmoments objects: {len(om3)} objects x {len(om3.names)} 3-D Zernike "
              f"features in {os.fspath(path)}")
        return 0

    from ..recognition.objects import object_features

    om = object_features(labels, image, family=args.family, orders=orders,
                         centre=args.centre or "enclosing", convention=args.convention,
                         kind=args.kind, normalize=args.normalize, image_name=args.image_name,
                         dtype=args.dtype, device=device,
                         progress=want_progress(args.progress))
    with output as path:
        write_table(om.to_dict(), path)
    print(f"fastmoments objects: {len(om)} objects x {len(om.names)} features in "
          f"{os.fspath(path)}")
    return 0


def _volume_options(args: argparse.Namespace, orders: Any) -> None:
    """The options a 3-D label volume takes (3-D Zernike moments, every order up to one)."""
    if args.family != "zernike" or args.convention != "standard" or args.normalize:
        raise UsageError("a 3-D label volume gets 3-D Zernike moments: leave --family, "
                         "--convention and --normalize at their defaults")
    if args.centre is not None and args.centre not in CENTRES3D:
        raise UsageError(f"--centre of a 3-D label volume must be one of "
                         f"{', '.join(CENTRES3D)}; got {args.centre!r}")
    if not isinstance(orders, int):
        raise UsageError("--orders of a 3-D label volume is one number T (orders 0..T)")
