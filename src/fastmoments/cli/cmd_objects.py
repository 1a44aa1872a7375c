"""``fastmoments objects LABELS [IMAGE] --out TABLE``: moment features of every labelled object.

Reads a label image (PNG or TIFF at its own integer depth, or ``.npy``) and, optionally, an
intensity image of the same size, and writes one row per label (label, area, centre, radius,
then the features of :func:`fastmoments.recognition.object_features`) to a Parquet or CSV
file, chosen by the file name.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from ._errors import UsageError

#: The choices of the options, checked before torch is imported (tests check them against
#: the library's tables).
FAMILIES = ("zernike", "pseudo-zernike", "pcet", "pct", "pst")
CENTRES = ("enclosing", "centroid-enclosing", "area")
CONVENTIONS = ("standard", "cellprofiler")
KINDS = ("magnitude", "complex")
TABLE_SUFFIXES = (".parquet", ".csv")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "objects", help="moment features of every object of a label image (Parquet, CSV)",
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
    p.add_argument("--family", default="zernike",
                   help=f"{', '.join(FAMILIES)} (default zernike)")
    p.add_argument("--orders", default="9",
                   help="'T' for orders 0..T, 'LOW-HIGH', or a list '2,4,6' (default 9, "
                        "CellProfiler's degree)")
    p.add_argument("--centre", default="enclosing",
                   help="each object's disk: enclosing (the minimum enclosing circle, "
                        "default), centroid-enclosing, or area")
    p.add_argument("--convention", default="standard",
                   help="standard (default) or cellprofiler")
    p.add_argument("--kind", default="magnitude",
                   help="magnitude (default; rotation invariant) or complex (Re, Im columns)")
    p.add_argument("--normalize", default=None, help="z00: divide each row by its |A[0,0]|")
    p.add_argument("--image-name", default="image",
                   help="the image's name in CellProfiler's intensity column names")
    p.add_argument("--grey", action="store_true",
                   help="convert a colour IMAGE to grey (0.299 R + 0.587 G + 0.114 B)")
    p.add_argument("--dtype", default=None, help="float32 or float64 (default: float64 for "
                                                  "--convention cellprofiler, else float32)")
    p.add_argument("--device", default=None, help="cpu or cuda (default cpu)")
    p.set_defaults(func=run)


def _choice(option: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise UsageError(f"--{option} must be one of {', '.join(choices)}; got {value!r}")


def _read(path: str, what: str, *, grey: bool = False, labels: bool = False) -> Any:
    """A label or intensity image at its own type: ``.npy`` by NumPy, other files by
    :func:`fastmoments.data.read_image`, every failure a :class:`UsageError` naming it."""
    import numpy as np

    from ..data import read_image
    from ._inputs import _existing_file, _unreadable

    p = _existing_file(path, what)
    try:
        if p.suffix.lower() == ".npy":
            arr = np.load(p, allow_pickle=False)
        else:
            arr, _colour = read_image(p, grey=grey)
    except ValueError as exc:
        raise UsageError(f"{what} {str(p)!r}: {' '.join(str(exc).split())}") from None
    except Exception as exc:
        raise _unreadable(what, p, "an image", exc) from exc
    if arr.ndim != 2:
        raise UsageError(f"{what} {str(p)!r} must hold one 2-D image, got shape {arr.shape}")
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
    _choice("centre", args.centre, CENTRES)
    _choice("convention", args.convention, CONVENTIONS)
    _choice("kind", args.kind, KINDS)
    if args.normalize not in (None, "z00"):
        raise UsageError(f"--normalize must be z00; got {args.normalize!r}")
    if args.dtype not in (None, "float32", "float64"):
        raise UsageError(f"--dtype must be float32 or float64, got {args.dtype!r}")
    if args.convention == "cellprofiler":
        if args.family != "zernike" or args.centre != "enclosing":
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
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise UsageError("--out *.parquet needs pyarrow: pip install 'fastmoments[dask]' "
                             "(or pyarrow), or give --out *.csv") from None
    output = OutputFile(args.out, suffixes=TABLE_SUFFIXES)
    labels = _read(args.labels, "LABELS", labels=True)
    image = None
    if args.image is not None:
        image = _read(args.image, "IMAGE", grey=args.grey)
        if image.shape != labels.shape:
            raise UsageError(f"IMAGE {args.image!r} is {image.shape[1]} x {image.shape[0]} "
                             f"pixels, LABELS {labels.shape[1]} x {labels.shape[0]}: they must "
                             "be the same size")

    from ..recognition.objects import object_features

    om = object_features(labels, image, family=args.family, orders=orders, centre=args.centre,
                         convention=args.convention, kind=args.kind, normalize=args.normalize,
                         image_name=args.image_name, dtype=args.dtype, device=args.device,
                         progress=False)
    with output as path:
        write_table(om.to_dict(), path)
    print(f"fastmoments objects: {len(om)} objects x {len(om.names)} features in "
          f"{os.fspath(path)}")
    return 0
