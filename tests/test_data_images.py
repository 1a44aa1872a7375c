"""Image files read at their own bit depth and type: fastmoments.data.load_image, image
folders of ``fastmoments.collections`` / ``fastmoments features`` and ``fastmoments
reconstruct``."""

from __future__ import annotations

import re
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from fastmoments import data, features
from fastmoments.cli.main import main
from fastmoments.collections import open_images, read_features, run_features
from tests.reference_disk import moments_direct

tifffile = pytest.importorskip("tifffile")

N = 24


def _pattern(seed: int) -> np.ndarray:
    """A disc and a bar at random places, in [0, 1]."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[:N, :N]
    cy, cx = rng.uniform(8, 16, 2)
    img = ((y - cy) ** 2 + (x - cx) ** 2 < rng.uniform(16, 40)).astype(float)
    img[:, rng.integers(2, N - 2)] += 0.5
    return img / img.max()


def _mixed_folder(tmp: Path) -> tuple[Path, dict[str, np.ndarray]]:
    """16-bit PNGs, float32 TIFFs (negative values too) and 8-bit JPEGs, and the true pixel
    values of each (for a JPEG: the values its decoder gives, read here with Pillow alone)."""
    d = tmp / "mixed"
    d.mkdir()
    truth = {}
    for i in range(3):
        deep = (_pattern(i) * 60000 + 1000 + i).astype(np.uint16)
        Image.fromarray(deep).save(d / f"a{i}.png")
        truth[f"a{i}.png"] = deep.astype(np.float64)
        flt = (_pattern(10 + i) * 0.75 - 0.25 + 1e-3 * i).astype(np.float32)
        tifffile.imwrite(d / f"b{i}.tif", flt)
        truth[f"b{i}.tif"] = flt.astype(np.float64)
        Image.fromarray((_pattern(20 + i) * 250).astype(np.uint8)).save(d / f"c{i}.jpg",
                                                                         quality=90)
        with Image.open(d / f"c{i}.jpg") as im:
            truth[f"c{i}.jpg"] = np.asarray(im, dtype=np.float64)
    return d, truth


def _pairs(names: list[str]) -> list[tuple[int, int]]:
    return [tuple(int(v) for v in re.fullmatch(r"\|A\[(-?\d+),(-?\d+)\]\|", n).groups())
            for n in names]


def test_folder_of_deep_and_float_images_gives_direct_sums_over_true_pixels(tmp_path):
    folder, truth = _mixed_folder(tmp_path)
    src = open_images(folder)
    assert src.pixel_types == ("float32", "uint16", "uint8")
    run_features(src, tmp_path / "f.zarr", family="zernike", orders=4, kind="magnitude",
                 batch=4, progress=False)
    got, names = read_features(tmp_path / "f.zarr")
    pairs = _pairs(names)
    for row, name in zip(got, src.files, strict=True):
        want = np.abs(moments_direct("zernike", truth[name], pairs))
        np.testing.assert_allclose(row, want, rtol=0, atol=1e-12 * want.max(), err_msg=name)
    # and through the command line, to Parquet
    assert main(["features", str(folder), "--out", str(tmp_path / "f.parquet"), "--orders", "4",
                 "--no-progress"]) == 0
    import pandas as pd

    table = pd.read_parquet(tmp_path / "f.parquet")
    np.testing.assert_allclose(table[names].to_numpy(), got, rtol=0, atol=1e-12 * got.max())


@pytest.mark.parametrize(("make", "dtype", "value"), [
    (lambda p: Image.fromarray(np.full((5, 7), 65535, np.uint16)).save(p / "x.png"), "uint16",
     65535),
    (lambda p: tifffile.imwrite(p / "x.tif", np.full((5, 7), 0.25, np.float32)), "float32",
     0.25),
    (lambda p: tifffile.imwrite(p / "x.tif", np.full((5, 7), -3.5, np.float64)), "float64",
     -3.5),
    (lambda p: tifffile.imwrite(p / "x.tif", np.full((5, 7), 70000, np.int32)), "int32", 70000),
    (lambda p: Image.fromarray(np.full((5, 7), 200, np.uint8)).save(p / "x.png"), "uint8", 200),
])
def test_load_image_keeps_type_and_values(tmp_path, make, dtype, value):
    make(tmp_path)
    path = next(tmp_path.iterdir())
    img = data.load_image(path)
    assert img.shape == (5, 5) and img.dtype == np.dtype(dtype)
    assert np.all(img == value)  # the stored value itself, bit for bit
    assert data.image_header(path) == (5, 7, 1, np.dtype(dtype))


def test_colour_needs_grey_or_channel_axis(tmp_path):
    rgb = np.zeros((6, 6, 3), np.uint8)
    rgb[..., 0], rgb[..., 1], rgb[..., 2] = 10, 100, 200
    path = tmp_path / "c.png"
    Image.fromarray(rgb).save(path)
    with pytest.raises(ValueError, match=r"c\.png.*colour image.*grey=True"):
        data.load_image(path)
    grey = data.load_image(path, grey=True)
    assert grey.dtype == np.float64
    np.testing.assert_allclose(grey, 0.299 * 10 + 0.587 * 100 + 0.114 * 200, rtol=1e-15)
    chans = data.load_image(path, channel_axis=0)
    assert chans.shape == (3, 6, 6) and chans.dtype == np.uint8
    np.testing.assert_array_equal(chans[:, 0, 0], [10, 100, 200])
    assert data.load_image(path, channel_axis=-1).shape == (6, 6, 3)
    # a folder with a colour image: refused, naming the file, unless --grey
    d = tmp_path / "d"
    d.mkdir()
    Image.fromarray(rgb).save(d / "colour.png")
    with pytest.raises(ValueError, match=r"'colour\.png'.*colour image.*--grey"):
        open_images(d)
    src = open_images(d, grey=True)
    np.testing.assert_allclose(src.read(0, 1)[0], grey, rtol=1e-15)
    # the output says so
    run_features(src, tmp_path / "g.zarr", orders=2, progress=False)
    import zarr

    assert zarr.open_group(str(tmp_path / "g.zarr"), mode="r").attrs["fastmoments"]["grey"]


def test_nan_pixels_are_refused_naming_the_file(tmp_path, capsys):
    img = np.ones((8, 8), np.float32)
    img[3, 4] = np.nan
    tifffile.imwrite(tmp_path / "nan.tif", img)
    with pytest.raises(ValueError, match=r"nan\.tif.*NaN.*row 3, column 4"):
        data.load_image(tmp_path / "nan.tif")
    d = tmp_path / "d"
    d.mkdir()
    tifffile.imwrite(d / "nan.tif", img)
    assert main(["features", str(d), "--out", str(tmp_path / "f.zarr"), "--orders", "2",
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "nan.tif" in err and "NaN" in err and len(err.strip().splitlines()) == 1
    assert main(["reconstruct", str(tmp_path / "nan.tif"), "--orders", "2", "--k", "1",
                 "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "nan.tif" in err and "NaN" in err and len(err.strip().splitlines()) == 1


def _png16_rgb(path: Path) -> None:
    """A 16-bit RGB PNG, written by hand (Pillow cannot write one)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    w = h = 4
    raw = b"".join(b"\x00" + b"\x12\x34" * 3 * w for _ in range(h))
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2,
                                                                           0, 0, 0))
                     + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def test_16_bit_colour_png_is_refused_not_cut_to_8_bits(tmp_path):
    _png16_rgb(tmp_path / "deep.png")
    with pytest.raises(ValueError, match=r"deep\.png.*16-bit colour PNG.*TIFF"):
        data.load_image(tmp_path / "deep.png", grey=True)


def test_reconstruct_reads_16_bit_values(tmp_path, monkeypatch):
    """The image handed to the reconstruction is the file's 16-bit values, not 8-bit ones."""
    from fastmoments.cli import _disk_run

    seen = {}

    def fake(img, **kw):
        seen["img"] = img
        out = kw["out"] / "report.md"
        out.write_text("")
        return out

    monkeypatch.setattr(_disk_run, "run_studies", fake)
    deep = (_pattern(3) * 60000 + 7).astype(np.uint16)
    Image.fromarray(deep).save(tmp_path / "d.png")
    assert main(["reconstruct", str(tmp_path / "d.png"), "--orders", "2", "--k", "1",
                 "--out", str(tmp_path / "r")]) == 0
    np.testing.assert_array_equal(seen["img"], deep.astype(np.float64))


def test_reconstruct_colour_needs_grey(tmp_path, capsys, monkeypatch):
    from fastmoments.cli import _disk_run

    def fake(img, **kw):
        out = kw["out"] / "report.md"
        out.write_text("")
        return out

    monkeypatch.setattr(_disk_run, "run_studies", fake)
    Image.fromarray(np.full((8, 8, 3), 90, np.uint8)).save(tmp_path / "c.png")
    args = ["reconstruct", str(tmp_path / "c.png"), "--orders", "2", "--k", "1", "--out",
            str(tmp_path / "r")]
    assert main(args) == 2
    assert "--grey" in capsys.readouterr().err
    assert main([*args, "--grey"]) == 0
    assert "converted to grey from RGB" in capsys.readouterr().out


def test_colour_channels_kept_with_channel_axis(tmp_path):
    """A folder of RGB images and (n, N, N, C) / (n, C, N, N) stacks with channel_axis: one row
    per image, the features of each channel in turn, equal to the features of each channel."""
    rng = np.random.default_rng(7)
    rgb = (rng.random((5, 16, 16, 3)) * 255).astype(np.uint8)
    d = tmp_path / "rgb"
    d.mkdir()
    for i, im in enumerate(rgb):
        Image.fromarray(im).save(d / f"{i}.png")
    per_channel = [features(rgb[..., c].astype(np.float64), family="zernike", orders=3,
                            kind="magnitude")
                   for c in range(3)]
    want = np.concatenate([f.matrix for f in per_channel], axis=1)
    names = [f"{n} [channel {c}]" for c in range(3) for n in per_channel[0].names]
    src = open_images(d, channel_axis=-1)
    assert src.channels == 3
    run_features(src, tmp_path / "f.zarr", orders=3, batch=2, progress=False)
    got, cols = read_features(tmp_path / "f.zarr")
    assert cols == names
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * np.abs(want).max())
    for arr, axis in ((rgb, -1), (np.moveaxis(rgb, -1, 1), 1)):
        np.save(tmp_path / "s.npy", arr)
        run_features(open_images(tmp_path / "s.npy", channel_axis=axis), tmp_path / "n.zarr",
                     orders=3, batch=2, dtype="float64", progress=False, overwrite=True)
        np.testing.assert_allclose(read_features(tmp_path / "n.zarr")[0], want, rtol=0,
                                   atol=1e-12 * np.abs(want).max())
    # the command line, and the errors
    assert main(["features", str(d), "--out", str(tmp_path / "c.parquet"), "--orders", "3",
                 "--channel-axis", "-1", "--no-progress"]) == 0
    with pytest.raises(ValueError, match="--channel-axis must be -1 for a folder"):
        open_images(d, channel_axis=0)
    with pytest.raises(ValueError, match="cannot be given together"):
        open_images(d, channel_axis=-1, grey=True)
    with pytest.raises(ValueError, match=r"--channel-axis must be 1 or -1"):
        open_images(tmp_path / "s.npy", channel_axis=2)
    Image.fromarray(rgb[0, ..., 0]).save(d / "9grey.png")
    with pytest.raises(ValueError, match=r"'9grey\.png' has 1 channels but '0\.png'"):
        open_images(d, channel_axis=-1)
