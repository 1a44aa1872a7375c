"""Build the offline nuclei set: a real fluorescence image of nuclei with its label mask, and a
5120 x 5120 tiling of it, in one command.

The image and mask are the 2-D test data that the ``stardist`` package ships in its wheel
(``stardist/data/images/img2d.tif`` and ``mask2d.tif``: a 512 x 512 uint16 fluorescence image
of nuclei from the 2018 Data Science Bowl, Caicedo et al., Nature Methods 16, 2019, and its
hand-made label mask, 125 nuclei). The wheel is a zip file: the two TIFF files are read out of
it without installing or importing stardist (or TensorFlow). ``stardist`` is under the BSD
3-Clause licence (Copyright (c) 2018-2024, Uwe Schmidt, Martin Weigert); its licence text is
copied into the output folder beside the data. The 3-D test volume of the same wheel
(``img3d.tif``, ``mask3d.tif``: synthetic nuclei, 31 x 61 x 57 voxels) is extracted too.

The tiling repeats the 512 x 512 tile ``--tiles`` times along each axis (10: 5120 x 5120,
12,500 nuclei); the labels of tile ``t`` are offset by ``t`` times the largest label so that
every nucleus keeps a label of its own (int32). The wheel is the one given by ``--wheel``, or
fetched by ``pip download stardist==0.9.1 --no-deps`` (the local package index serves it)::

    python benchmarks/build_nuclei_set.py --out nuclei_set

writes ``nuclei_512_image.tif``, ``nuclei_512_labels.tif``, ``nuclei_5120_image.tif``,
``nuclei_5120_labels.tif``, ``nuclei3d_image.tif``, ``nuclei3d_labels.tif``,
``LICENSE-stardist.txt`` and ``index.json`` (shapes, object counts, versions, date).
"""

from __future__ import annotations

import argparse
import datetime
import glob
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import zipfile

import numpy as np

STARDIST = "stardist==0.9.1"
MEMBERS = {"nuclei_512_image": "stardist/data/images/img2d.tif",
           "nuclei_512_labels": "stardist/data/images/mask2d.tif",
           "nuclei3d_image": "stardist/data/images/img3d.tif",
           "nuclei3d_labels": "stardist/data/images/mask3d.tif"}
LICENSE = "stardist-0.9.1.dist-info/LICENSE.txt"


def find_wheel(wheel: str | None, folder: str) -> str:
    """The stardist wheel: ``wheel`` when given, else one ``pip download`` puts in
    ``folder``."""
    if wheel:
        return wheel
    subprocess.run([sys.executable, "-m", "pip", "download", STARDIST, "--no-deps", "-q",
                    "-d", folder], check=True)
    found = glob.glob(os.path.join(folder, "stardist-*.whl"))
    if not found:
        raise FileNotFoundError(f"pip download {STARDIST} left no wheel in {folder}")
    return found[0]


def read_members(wheel: str) -> tuple[dict[str, np.ndarray], str]:
    """The four test arrays and the licence text, read out of the wheel (a zip file)."""
    import tifffile

    out = {}
    with zipfile.ZipFile(wheel) as zf:
        for name, member in MEMBERS.items():
            out[name] = tifffile.imread(io.BytesIO(zf.read(member)))
        licence = zf.read(LICENSE).decode("utf-8")
    return out, licence


def tile_labels(labels: np.ndarray, tiles: int) -> np.ndarray:
    """``labels`` repeated ``tiles x tiles`` times, tile ``t`` (row-major) offset by
    ``t * labels.max()`` (background stays 0), as int32."""
    lab = labels.astype(np.int32)
    top = int(lab.max())
    h, w = lab.shape
    out = np.zeros((h * tiles, w * tiles), np.int32)
    for t in range(tiles * tiles):
        r, c = divmod(t, tiles)
        out[r * h:(r + 1) * h, c * w:(c + 1) * w] = np.where(lab > 0, lab + t * top, 0)
    return out


def load_set(folder: str, size: int = 5120) -> tuple[np.ndarray, np.ndarray]:
    """The ``(labels, image)`` of the set at ``size`` (512 or the tiled size) from ``folder``,
    built there first when missing."""
    import tifffile

    tiles = size // 512
    if tiles * 512 != size:
        raise ValueError(f"size must be a multiple of 512, got {size}")
    lab_path = os.path.join(folder, f"nuclei_{size}_labels.tif")
    if os.path.exists(lab_path):
        return (tifffile.imread(lab_path),
                tifffile.imread(os.path.join(folder, f"nuclei_{size}_image.tif")))
    if not os.path.exists(os.path.join(folder, "nuclei_512_labels.tif")):
        build(folder, None, tiles)
    # the tiling of the 512 x 512 pair, made here (a machine without the package index
    # needs only the two small files)
    lab = tifffile.imread(os.path.join(folder, "nuclei_512_labels.tif"))
    img = tifffile.imread(os.path.join(folder, "nuclei_512_image.tif"))
    return tile_labels(lab, tiles), np.tile(img, (tiles, tiles))


def build(out: str, wheel: str | None, tiles: int) -> dict:
    import tifffile

    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        arrays, licence = read_members(find_wheel(wheel, tmp))
    size = 512 * tiles
    arrays[f"nuclei_{size}_labels"] = tile_labels(arrays["nuclei_512_labels"], tiles)
    arrays[f"nuclei_{size}_image"] = np.tile(arrays["nuclei_512_image"], (tiles, tiles))
    files = {}
    for name, arr in arrays.items():
        tifffile.imwrite(os.path.join(out, f"{name}.tif"), arr, compression="zlib")
        files[name] = {"file": f"{name}.tif", "shape": list(arr.shape), "dtype": str(arr.dtype)}
        if name.endswith("labels"):
            files[name]["objects"] = int(len(np.unique(arr)) - 1)
    with open(os.path.join(out, "LICENSE-stardist.txt"), "w") as fh:
        fh.write(licence)
    index = {
        "source": f"{STARDIST} wheel, stardist/data/images (BSD 3-Clause: LICENSE-stardist.txt)",
        "files": files,
        "tiles": tiles,
        "tifffile": tifffile.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    with open(os.path.join(out, "index.json"), "w") as fh:
        json.dump(index, fh, indent=1)
    return index


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="nuclei_set", help="output folder")
    ap.add_argument("--wheel", default=None, help="a stardist wheel already downloaded")
    ap.add_argument("--tiles", type=int, default=10, help="tiles per side (default 10)")
    args = ap.parse_args(argv)
    try:
        index = build(args.out, args.wheel, args.tiles)
    except (OSError, subprocess.CalledProcessError, KeyError) as exc:
        print(f"build_nuclei_set: {exc}", file=sys.stderr)
        return 1
    for f in index["files"].values():
        print(f"{f['file']}: {f['shape']} {f['dtype']}"
              + (f", {f['objects']} objects" if "objects" in f else ""))
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
