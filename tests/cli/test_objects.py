"""``fastmoments objects LABELS [IMAGE] --out TABLE``: the table against object_features, and
clean errors."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from fastmoments.cli import cmd_objects
from fastmoments.cli.main import main
from fastmoments.recognition import object_features

from ..disk.test_objects_labels import ellipses


@pytest.fixture
def files(tmp_path):
    tifffile = pytest.importorskip("tifffile")
    from PIL import Image

    lab = ellipses((64, 80), seed=2, step=16).astype(np.uint16)
    img = (np.random.default_rng(4).random(lab.shape) * 60000).astype(np.uint16)
    tifffile.imwrite(tmp_path / "labels.tif", lab)
    Image.fromarray(lab.astype(np.uint8)).save(tmp_path / "labels.png")
    tifffile.imwrite(tmp_path / "image.tif", img)
    np.save(tmp_path / "labels.npy", lab.astype(np.int64))
    return tmp_path, lab, img


def read_csv(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], np.array(rows[1:], dtype=np.float64)


@pytest.mark.parametrize("labels_file", ["labels.tif", "labels.png", "labels.npy"])
def test_csv_rows_equal_object_features(files, labels_file, capsys):
    tmp, lab, img = files
    out = tmp / "o.csv"
    assert main(["objects", str(tmp / labels_file), str(tmp / "image.tif"), "--out", str(out),
                 "--convention", "cellprofiler", "--image-name", "DNA"]) == 0
    assert f"{len(np.unique(lab)) - 1} objects x 60 features" in capsys.readouterr().out
    names, table = read_csv(out)
    ref = object_features(lab, img.astype(np.float64), convention="cellprofiler",
                          image_name="DNA")
    assert names == ["label", "area", "centre_row", "centre_col", "radius", *ref.names]
    np.testing.assert_array_equal(table[:, 0], ref.labels)
    np.testing.assert_array_equal(table[:, 4], ref.geometry.radius)  # repr: every digit
    np.testing.assert_array_equal(table[:, 5:], ref.features)


def test_parquet_shape_features_with_options(files):
    pq = pytest.importorskip("pyarrow.parquet")
    tmp, lab, _img = files
    out = tmp / "sub" / "o.parquet"
    assert main(["objects", str(tmp / "labels.tif"), "--out", str(out), "--family", "pcet",
                 "--orders", "0-3", "--centre", "area", "--kind", "complex",
                 "--dtype", "float64"]) == 0
    t = pq.read_table(out).to_pydict()
    ref = object_features(lab, family="pcet", orders=3, centre="area", kind="complex",
                          dtype="float64")
    np.testing.assert_array_equal(t["label"], ref.labels)
    got = np.stack([t[n] for n in ref.names], axis=1)
    np.testing.assert_array_equal(got, ref.features)


def test_the_option_tables_are_the_library_ones():
    from fastmoments.disk.families import FAMILIES
    from fastmoments.disk.labels import CENTRES, CONVENTIONS, KINDS

    assert set(cmd_objects.FAMILIES) == set(FAMILIES)
    assert cmd_objects.CENTRES == CENTRES
    assert cmd_objects.CONVENTIONS == CONVENTIONS
    assert cmd_objects.KINDS == KINDS


def test_a_family_not_in_the_table_gets_the_usage_and_a_suggestion(files, capsys):
    tmp, _lab, _img = files
    assert main(["objects", str(tmp / "labels.tif"), "--out", str(tmp / "o.csv"),
                 "--family", "zernik"]) == 2
    err = capsys.readouterr().err
    assert "usage: fastmoments objects" in err and "zernike" in err
    assert not (tmp / "o.csv").exists()


@pytest.mark.parametrize(("extra", "message"), [
    (["--centre", "middle"], "--centre must be one of"),
    (["--convention", "cellprofiler", "--family", "pcet"], "--convention cellprofiler"),
    (["--normalize", "max"], "--normalize must be z00"),
    (["--dtype", "float16"], "--dtype must be float32 or float64"),
    (["--orders", "x"], "--orders"),
    (["--grey"], "--grey converts a colour IMAGE"),
])
def test_bad_options_exit_2_with_one_line(files, extra, message, capsys):
    tmp, _lab, _img = files
    assert main(["objects", str(tmp / "labels.tif"), "--out", str(tmp / "o.csv"),
                 *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert not (tmp / "o.csv").exists()


def test_bad_files_exit_2_with_one_line(files, capsys):
    tmp, _lab, _img = files
    np.save(tmp / "float.npy", np.zeros((8, 8)))
    np.save(tmp / "small.npy", np.zeros((4, 4), np.int32))
    np.save(tmp / "cube.npy", np.zeros((4, 4, 4), np.int32))
    np.save(tmp / "four.npy", np.zeros((2, 2, 2, 2), np.int32))
    cases = [
        ([str(tmp / "missing.tif")], "does not exist"),
        ([str(tmp / "four.npy")], "must hold one 2-D image or a 3-D volume"),
        ([str(tmp / "float.npy")], "a label image holds integers"),
        ([str(tmp / "cube.npy"), str(tmp / "small.npy")], "must be the same size"),
        ([str(tmp / "labels.tif"), str(tmp / "small.npy")], "must be the same size"),
        ([str(tmp / "labels.tif"), "--out", str(tmp / "o.txt")], "must end in one of"),
    ]
    for args, message in cases:
        out = [] if "--out" in args else ["--out", str(tmp / "o.csv")]
        assert main(["objects", *args, *out]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err, err


def test_a_label_volume_gets_3d_zernike_moments(tmp_path, capsys):
    tifffile = pytest.importorskip("tifffile")
    from fastmoments.ball.labels import object_moments3d

    from ..ball.test_object_moments3d import ellipsoids

    lab = ellipsoids(seed=7).astype(np.uint16)
    img = np.random.default_rng(8).random(lab.shape)
    tifffile.imwrite(tmp_path / "vol.tif", lab)
    np.save(tmp_path / "img.npy", img)
    out = tmp_path / "o.csv"
    assert main(["objects", str(tmp_path / "vol.tif"), str(tmp_path / "img.npy"), "--out",
                 str(out), "--orders", "4", "--centre", "volume"]) == 0
    assert "3-D Zernike features" in capsys.readouterr().out
    names, table = read_csv(out)
    ref = object_moments3d(lab, img, order=4, centre="volume")
    assert names == ["label", "volume", "centre_d", "centre_h", "centre_w", "radius",
                     *ref.names]
    np.testing.assert_array_equal(table[:, 0], ref.labels)
    np.testing.assert_array_equal(table[:, 6:], ref.features)
    for extra, message in ((["--convention", "cellprofiler"], "3-D Zernike moments"),
                           (["--centre", "area"], "--centre of a 3-D label volume"),
                           (["--orders", "2,4"], "one number")):
        assert main(["objects", str(tmp_path / "vol.tif"), "--out", str(out), *extra]) == 2
        assert message in capsys.readouterr().err
