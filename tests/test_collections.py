"""fastmoments.collections: inputs read chunk by chunk, resumable outputs, Dask with a killed
worker."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from fastmoments import features
from fastmoments.collections import (
    compute_chunk,
    open_images,
    parse_orders,
    read_features,
    run_features,
)

from .scripts import load_benchmark

OPTS = {"family": "zernike", "orders": 6, "kind": "magnitude"}


@pytest.fixture(scope="module")
def images() -> np.ndarray:
    """40 small grey images with structure (discs and bars at random places), uint8."""
    rng = np.random.default_rng(14)
    y, x = np.mgrid[:32, :32]
    out = np.zeros((40, 32, 32))
    for i in range(40):
        (cy, cx), r = rng.uniform(8, 24, 2), rng.uniform(3, 9)
        out[i] += 200 * ((y - cy) ** 2 + (x - cx) ** 2 < r * r)
        out[i, rng.integers(0, 28):, rng.integers(0, 28)] += 50
    return np.clip(out + rng.integers(0, 5, out.shape), 0, 255).astype(np.uint8)


def _npy(tmp: Path, imgs: np.ndarray) -> Path:
    p = tmp / "stack.npy"
    np.save(p, imgs)
    return p


def _zarr(tmp: Path, imgs: np.ndarray, group: bool = False) -> Path:
    import zarr

    p = tmp / "stack.zarr"
    if group:
        g = zarr.open_group(str(p), mode="w")
        g.create_array("labels", shape=(3,), dtype="int32")
        g.create_array("images", shape=imgs.shape, chunks=(8, 32, 32), dtype=imgs.dtype)[:] = imgs
    else:
        zarr.create_array(str(p), shape=imgs.shape, chunks=(8, 32, 32), dtype=imgs.dtype)[:] = imgs
    return p


def _folder(tmp: Path, imgs: np.ndarray) -> Path:
    from PIL import Image

    d = tmp / "pngs"
    d.mkdir()
    for i, im in enumerate(imgs):
        Image.fromarray(im).save(d / f"img{i:03d}.png")
    return d


def _close(a: np.ndarray, b: np.ndarray, dtype: str) -> None:
    # float32 matrix products in different batch shapes round differently: a few ulps of the
    # largest feature; float64 the same at 1e-12
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(a, b, rtol=0, atol=tol * np.abs(b).max())


@pytest.mark.parametrize("kind", ["npy", "zarr", "group", "folder"])
def test_inputs_give_the_library_features(images, tmp_path, kind):
    path = {"npy": _npy, "zarr": _zarr, "folder": _folder}.get(kind, _zarr)(tmp_path, images) \
        if kind != "group" else _zarr(tmp_path, images, group=True)
    src = open_images(path, array="images" if kind == "group" else None)
    assert (src.n, src.side) == (40, 32)
    rep = run_features(src, tmp_path / "out.zarr", batch=7, progress=False, **OPTS)
    assert (rep.n_chunks, rep.computed, rep.already_done) == (6, 6, 0)
    got, names = read_features(tmp_path / "out.zarr")
    dtype = "float64" if kind == "folder" else "float32"
    ref = features(images.astype(np.float64) if kind == "folder" else images, **OPTS)
    assert names == ref.names
    assert got.dtype == np.dtype(dtype)
    _close(got, ref.matrix, dtype)


def test_parquet_table_has_named_columns_index_and_files(images, tmp_path):
    import pandas as pd

    src = open_images(_folder(tmp_path, images[:10]))
    run_features(src, tmp_path / "f.parquet", batch=4, progress=False, family="pseudo-zernike",
                 orders=[2, 3], kind="complex")
    table = pd.read_parquet(tmp_path / "f.parquet")
    ref = features(images[:10].astype(np.float64), family="pseudo-zernike", orders=[2, 3],
                   kind="complex")
    assert list(table.columns) == ["index", "file", *ref.names]
    assert table["index"].tolist() == list(range(10))
    assert table["file"].tolist() == [f"img{i:03d}.png" for i in range(10)]
    _close(table[ref.names].to_numpy(), ref.matrix, "float64")
    mat, names = read_features(tmp_path / "f.parquet")
    assert names == ref.names and mat.shape == (10, len(ref.names))


def test_zarr_output_attributes(images, tmp_path):
    import zarr

    src = open_images(_npy(tmp_path, images))
    run_features(src, tmp_path / "f.zarr", batch=16, progress=False, family="pcet", orders=2,
                 kind="real", dtype="float64")
    arr = zarr.open_group(str(tmp_path / "f.zarr"), mode="r")["features"]
    assert arr.shape == (40, len(arr.attrs["columns"]))
    assert arr.attrs["family"] == "pcet" and arr.attrs["kind"] == "real"
    assert arr.attrs["orders"] == [0, 1, 2]
    assert arr.attrs["input"] == str((tmp_path / "stack.npy").resolve())
    assert arr.attrs["columns"][0] == "Re A[-2,0]"


def _counting():
    calls: list[int] = []

    def fn(spec, options):
        calls.append(spec["start"])
        return compute_chunk(spec, options)

    return calls, fn


@pytest.mark.parametrize("out", ["r.zarr", "r.parquet"])
def test_interrupted_run_resumes_without_recomputing(images, tmp_path, out):
    src = open_images(_npy(tmp_path, images))
    full = tmp_path / f"full{Path(out).suffix}"
    run_features(src, full, batch=4, progress=False, **OPTS)

    calls1, fn1 = _counting()

    def stop_after_three(i, done, total):
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_features(src, tmp_path / out, batch=4, progress=False, chunk_function=fn1,
                     on_chunk=stop_after_three, **OPTS)
    # the fourth chunk computed while the third was written; interrupted, it is not on disk
    assert calls1 == [0, 4, 8, 12]
    with pytest.raises(ValueError, match="incomplete: 3 of 10"):
        read_features(tmp_path / out)

    calls2, fn2 = _counting()
    rep = run_features(src, tmp_path / out, batch=4, progress=False, chunk_function=fn2, **OPTS)
    assert (rep.already_done, rep.computed) == (3, 7)
    assert sorted(calls2) == list(range(12, 40, 4))  # every chunk not on disk, none that is
    np.testing.assert_array_equal(read_features(tmp_path / out)[0], read_features(full)[0])

    calls3, fn3 = _counting()
    rep = run_features(src, tmp_path / out, batch=4, progress=False, chunk_function=fn3, **OPTS)
    assert rep.computed == 0 and calls3 == []


def test_other_parameters_refuse_unless_overwrite(images, tmp_path):
    src = open_images(_npy(tmp_path, images))
    run_features(src, tmp_path / "o.zarr", batch=8, progress=False, **OPTS)
    with pytest.raises(ValueError, match="--kind was 'magnitude', now 'real'"):
        run_features(src, tmp_path / "o.zarr", batch=8, progress=False,
                     **{**OPTS, "kind": "real"})
    with pytest.raises(ValueError, match="--batch was 8, now 4"):
        run_features(src, tmp_path / "o.zarr", batch=4, progress=False, **OPTS)
    rep = run_features(src, tmp_path / "o.zarr", batch=8, progress=False, overwrite=True,
                       **{**OPTS, "kind": "real"})
    assert rep.computed == 5
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(ValueError, match="not a fastmoments zarr output"):
        run_features(src, tmp_path / "mine", batch=8, progress=False, overwrite=True, **OPTS)
    assert (tmp_path / "mine" / "notes.txt").exists()


def _done_count(path: Path) -> int:
    import zarr

    try:
        return int(np.count_nonzero(zarr.open_group(str(path), mode="r")["done"][:]))
    except Exception:  # not created yet
        return 0


def test_sigkilled_run_resumes(images, tmp_path):
    """A process killed with SIGKILL mid-run: the rerun completes it, computing only the chunks
    that were not marked done, and the result equals a one-shot run."""
    npy = _npy(tmp_path, images)
    out = tmp_path / "k.zarr"
    script = textwrap.dedent(f"""
        import time
        from fastmoments.collections import open_images, run_features
        run_features(open_images({str(npy)!r}), {str(out)!r}, batch=4, progress=False,
                     on_chunk=lambda i, d, t: time.sleep(3600) if i >= 2 else None,
                     **{OPTS!r})
    """)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    try:
        while _done_count(out) < 3:  # the run then waits in its third chunk's callback
            assert proc.poll() is None, "the run ended before it could be killed"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    done_before = _done_count(out)
    assert 3 <= done_before < 10

    calls, fn = _counting()
    src = open_images(npy)
    rep = run_features(src, out, batch=4, progress=False, chunk_function=fn, **OPTS)
    assert rep.already_done == done_before and len(calls) == 10 - done_before
    assert len(set(calls)) == len(calls)
    ref = read_features(run_features(src, tmp_path / "one.zarr", batch=4, progress=False,
                                     **OPTS).out)[0]
    np.testing.assert_array_equal(read_features(out)[0], ref)


def test_killed_worker_result_is_complete(images, tmp_path):
    """LocalCluster with 2 worker processes; one is SIGKILLed in the middle of the job: Dask
    reruns its tasks and the output equals the single-process features."""
    pytest.importorskip("distributed")

    src = open_images(_zarr(tmp_path, images))
    slow_log = tmp_path / "starts.txt"

    def slow_chunk(spec, options):
        import time as _t

        from fastmoments.collections import compute_chunk as _cc

        with open(slow_log, "a") as fh:
            fh.write(f"{spec['start']}\n")
        _t.sleep(0.3)
        return _cc(spec, options)

    from fastmoments.cli.cmd_features import _client

    killed: list[int] = []
    import dask

    # worker processes start slowly on a busy 2-core machine: allow more than the default 30 s
    with dask.config.set({"distributed.comm.timeouts.connect": "180s"}):
        client, cluster = _client("local", 2)  # what --scheduler local --workers 2 starts
    with cluster, client:
        def kill_one(i, done, total):
            if killed:
                return
            busy = [w for w, keys in client.processing().items() if keys]
            pid = client.run(os.getpid, workers=busy[:1])[busy[0]]
            os.kill(pid, signal.SIGKILL)
            killed.append(done)

        rep = run_features(src, tmp_path / "d.zarr", batch=4, progress=False, client=client,
                           on_chunk=kill_one, chunk_function=slow_chunk, **OPTS)
    assert killed and killed[0] < rep.n_chunks  # killed while work remained
    assert rep.computed == rep.n_chunks == 10
    starts = [int(s) for s in slow_log.read_text().split()]
    assert set(starts) == set(range(0, 40, 4))
    got, names = read_features(tmp_path / "d.zarr")
    ref = features(images, **OPTS)
    assert names == ref.names
    _close(got, ref.matrix, "float32")


@pytest.mark.parametrize(("text", "expected"), [
    ("6", 6), ("0-3", [0, 1, 2, 3]), ("2,4,6", [2, 4, 6]), ("0-2, 5", [0, 1, 2, 5]),
])
def test_parse_orders(text, expected):
    assert parse_orders(text) == expected


@pytest.mark.parametrize("text", ["", "a", "5-2", "-3", "2.5", "1,,x"])
def test_parse_orders_refuses(text):
    with pytest.raises(ValueError, match="--orders"):
        parse_orders(text)


def test_glyph_store_is_deterministic_and_labelled(tmp_path):
    import zarr

    gs = load_benchmark("build_glyph_store")
    fonts = gs.installed_fonts()[:2]
    if not fonts:
        pytest.skip("no CJK font installed")
    kw = {"fonts": fonts, "size": 32, "angles": [0, 90, 15], "limit": 3, "chunk": 4,
          "progress": False}
    gs.build(tmp_path / "a.zarr", **kw)
    gs.build(tmp_path / "b.zarr", **kw)
    a, b = (zarr.open_group(str(tmp_path / f"{x}.zarr"), mode="r") for x in "ab")
    n = len(fonts) * 3 * 3
    assert a["images"].shape == (n, 32, 32) and a["images"].dtype == np.uint8
    np.testing.assert_array_equal(a["images"][:], b["images"][:])
    assert a["font"][:].tolist() == [f for f in range(len(fonts)) for _ in range(9)]
    assert "".join(map(chr, a["char"][:9:3])) == "啊阿埃"
    assert a["angle"][:3].tolist() == [0, 90, 15]
    imgs = a["images"][:]
    np.testing.assert_array_equal(imgs[1], np.rot90(imgs[0]))  # counter-clockwise turn
    assert (imgs.reshape(n, -1).max(axis=1) > 128).all()  # every image has ink
    # a finished store is kept; features of it by the command line
    gs.build(tmp_path / "a.zarr", **kw)
    from fastmoments.cli.main import main

    assert main(["features", str(tmp_path / "a.zarr"), "--array", "images", "--out",
                 str(tmp_path / "f.zarr"), "--orders", "4", "--no-progress"]) == 0
    got, _ = read_features(tmp_path / "f.zarr")
    ref = features(imgs, family="zernike", orders=4, kind="magnitude")
    _close(got, ref.matrix, "float32")


# --------------------------------------------------------------------------- resuming safely

def _interrupted(src, out, n_chunks=3, batch=4):
    """Start a run and stop it after ``n_chunks`` chunks, as Ctrl-C would."""
    def stop(i, done, total):
        if done == n_chunks:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_features(src, out, batch=batch, progress=False, on_chunk=stop, **OPTS)


@pytest.mark.parametrize("out", ["c.zarr", "c.parquet"])
def test_changed_input_is_refused_on_resume_naming_the_chunk(images, tmp_path, out):
    npy = _npy(tmp_path, images)
    _interrupted(open_images(npy), tmp_path / out)
    np.save(npy, images[::-1].copy())  # other pixels, the same shape
    with pytest.raises(ValueError, match=r"changed since output chunk 0 \(images 0:4\).*"
                                         r"--overwrite"):
        run_features(open_images(npy), tmp_path / out, batch=4, progress=False, **OPTS)
    # only the done chunks' inputs are compared: an input changed back resumes
    np.save(npy, images)
    rep = run_features(open_images(npy), tmp_path / out, batch=4, progress=False, **OPTS)
    assert (rep.already_done, rep.computed) == (3, 7)
    ref = features(images, **OPTS).matrix
    _close(read_features(tmp_path / out)[0], ref, "float32")


def test_changed_chunk_after_the_first_is_named(images, tmp_path):
    npy = _npy(tmp_path, images)
    _interrupted(open_images(npy), tmp_path / "c.zarr")
    changed = images.copy()
    changed[9, 3, 3] ^= 1  # one pixel of image 9: chunk 2
    np.save(npy, changed)
    with pytest.raises(ValueError, match=r"output chunk 2 \(images 8:12\)"):
        run_features(open_images(npy), tmp_path / "c.zarr", batch=4, progress=False, **OPTS)


def test_moved_input_resumes(images, tmp_path):
    npy = _npy(tmp_path, images)
    _interrupted(open_images(npy), tmp_path / "m.zarr")
    (tmp_path / "elsewhere").mkdir()
    moved = npy.rename(tmp_path / "elsewhere" / "stack.npy")
    rep = run_features(open_images(moved), tmp_path / "m.zarr", batch=4, progress=False, **OPTS)
    assert (rep.already_done, rep.computed) == (3, 7)


def test_output_records_library_and_refuses_other_versions(images, tmp_path, monkeypatch):
    import zarr

    from fastmoments import __version__, _collection_outputs

    src = open_images(_npy(tmp_path, images))
    _interrupted(src, tmp_path / "v.zarr")
    attrs = zarr.open_group(str(tmp_path / "v.zarr"), mode="r").attrs
    assert attrs["fastmoments_library"]["version"] == __version__
    assert set(attrs["fastmoments_library"]) == {"version", "commit"}
    monkeypatch.setattr(_collection_outputs, "library_identity",
                        lambda: {"version": "99.0", "commit": None})
    with pytest.raises(ValueError, match=r"begun by fastmoments .*this is fastmoments 99\.0.*"
                                         r"--resume-other-version"):
        run_features(src, tmp_path / "v.zarr", batch=4, progress=False, **OPTS)
    rep = run_features(src, tmp_path / "v.zarr", batch=4, progress=False, other_version=True,
                       **OPTS)
    assert (rep.already_done, rep.computed) == (3, 7)


def test_git_commit_is_read_from_a_checkout(tmp_path):
    from fastmoments._collection_outputs import _git_commit

    git = tmp_path / "repo" / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text("a" * 40 + "\n")
    (tmp_path / "repo" / "src" / "pkg").mkdir(parents=True)
    assert _git_commit(tmp_path / "repo" / "src" / "pkg") == "a" * 40
    # a worktree: .git is a file naming its git dir, whose refs live in the common dir
    wt = tmp_path / "wt"
    wt.mkdir()
    wtgit = git / "worktrees" / "wt"
    wtgit.mkdir(parents=True)
    (wt / ".git").write_text(f"gitdir: {wtgit}\n")
    (wtgit / "HEAD").write_text("ref: refs/heads/main\n")
    (wtgit / "commondir").write_text("../..\n")
    assert _git_commit(wt) == "a" * 40
    assert _git_commit(tmp_path / "nowhere") is None


def test_zarr_output_has_dimension_names_and_the_input_labels(images, tmp_path):
    import pandas as pd
    import zarr

    store = _zarr(tmp_path, images, group=True)
    g = zarr.open_group(str(store), mode="r+")
    del g["labels"]
    g.create_array("font", shape=(40,), dtype="int16")[:] = np.arange(40) // 10
    g.create_array("angle", shape=(40,), dtype="float32")[:] = np.arange(40) * 15.0
    src = open_images(store, array="images")
    assert src.labels == ("angle", "font")
    run_features(src, tmp_path / "l.zarr", batch=16, progress=False, **OPTS)
    out = zarr.open_group(str(tmp_path / "l.zarr"), mode="r")
    assert out["features"].metadata.dimension_names == ("image", "feature")
    assert out["font"].metadata.dimension_names == ("image",)
    np.testing.assert_array_equal(out["font"][:], np.arange(40) // 10)
    np.testing.assert_array_equal(out["angle"][:], np.arange(40) * 15.0)
    for name in out.array_keys():  # every array names its dimensions (xarray needs that)
        assert out[name].metadata.dimension_names is not None, name
    run_features(src, tmp_path / "l.parquet", batch=16, progress=False, **OPTS)
    table = pd.read_parquet(tmp_path / "l.parquet")
    assert list(table.columns[:3]) == ["index", "angle", "font"]
    np.testing.assert_array_equal(table["font"], np.arange(40) // 10)


def test_leftover_part_files_are_removed_on_resume(images, tmp_path):
    src = open_images(_npy(tmp_path, images))
    _interrupted(src, tmp_path / "p.parquet")
    left = tmp_path / "p.parquet" / ".part-00000005.0123abcd.tmp"
    left.write_bytes(b"half a parquet file")
    run_features(src, tmp_path / "p.parquet", batch=4, progress=False, **OPTS)
    assert not left.exists()
    assert not list((tmp_path / "p.parquet").glob(".part-*"))


def test_two_runs_creating_one_output_get_a_clear_error(images, tmp_path, monkeypatch):
    from fastmoments import _collection_outputs

    src = open_images(_npy(tmp_path, images))
    out = tmp_path / "two.zarr"
    create = _collection_outputs._ZarrOutput.create
    other_started: list[bool] = []

    def create_then_race(path, *args):
        create(path, *args)
        if not other_started:  # the other run creates the same output in the meantime
            other_started.append(True)
            run_features(src, out, batch=8, progress=False, **OPTS)

    monkeypatch.setattr(_collection_outputs._ZarrOutput, "create",
                        staticmethod(create_then_race))
    with pytest.raises(ValueError, match="created by another run at the same time"):
        run_features(src, out, batch=8, progress=False, **OPTS)
    assert not list(tmp_path.glob(".two.zarr.*.tmp"))
    assert read_features(out)[0].shape == (40, len(features(images[:1], **OPTS).names))


# --------------------------------------------------------------------------- clear errors

def test_damaged_zarr_chunk_is_named(images, tmp_path):
    store = _zarr(tmp_path, images)
    chunk = store / "c" / "2" / "0" / "0"
    chunk.write_bytes(chunk.read_bytes()[:20])  # truncated
    src = open_images(store)
    with pytest.raises(ValueError, match=r"stack\.zarr.*Zarr chunk 'c/2/0/0' \(images 16:24\) "
                                         r"is damaged or truncated") as info:
        run_features(src, tmp_path / "o.zarr", batch=8, progress=False, **OPTS)
    assert "output chunk 2" in str(info.value)
    chunk.write_bytes(b"\x00" * 64)  # garbage of another length
    with pytest.raises(ValueError, match=r"Zarr chunk 'c/2/0/0'"):
        src.read(16, 24)


def test_empty_and_damaged_npy_are_refused(tmp_path):
    (tmp_path / "empty.npy").write_bytes(b"")
    with pytest.raises(ValueError, match=r"empty\.npy.*empty file \(0 bytes\)"):
        open_images(tmp_path / "empty.npy")
    np.save(tmp_path / "t.npy", np.zeros((4, 8, 8)))
    (tmp_path / "t.npy").write_bytes((tmp_path / "t.npy").read_bytes()[:200])
    with pytest.raises(ValueError, match=r"t\.npy.*not a readable \.npy file"):
        open_images(tmp_path / "t.npy")


def test_unwritable_outputs_are_refused(images, tmp_path, monkeypatch):
    from fastmoments import _collection_outputs

    src = open_images(_npy(tmp_path, images))
    (tmp_path / "afile").write_text("")
    with pytest.raises(ValueError, match=r"--out .*afile' is a file, not a folder"):
        run_features(src, tmp_path / "afile" / "o.zarr", progress=False, **OPTS)
    # a read-only folder (simulated: the tests may run as root, who can write anywhere)
    (tmp_path / "ro").mkdir()
    real = os.access
    monkeypatch.setattr(_collection_outputs.os, "access",
                        lambda p, mode: False if Path(p).name == "ro" else real(p, mode))
    with pytest.raises(ValueError, match=r"folder .*ro' is not writable"):
        run_features(src, tmp_path / "ro" / "o.zarr", progress=False, **OPTS)
    monkeypatch.undo()
    # a write that fails (a disk full, a folder made read-only during the run): names the chunk
    out = tmp_path / "w.zarr"

    def failing(self, i, rows, checksum=None):
        raise PermissionError(13, "Permission denied", str(out / "features" / "c" / str(i)))

    monkeypatch.setattr(_collection_outputs._ZarrOutput, "write", failing)
    with pytest.raises(ValueError, match=r"--out .*w\.zarr.*cannot write chunk 0 \(images "
                                         r"0:8\): Permission denied"):
        run_features(src, out, batch=8, progress=False, **OPTS)


def test_nan_in_a_zarr_input_names_the_image_and_chunk(tmp_path):
    imgs = np.ones((12, 16, 16), np.float32)
    imgs[9, 2, 2] = np.nan
    src = open_images(_zarr(tmp_path, imgs))
    with pytest.raises(ValueError, match=r"images 8:12 \(output chunk 1\): image 9 holds NaN"):
        run_features(src, tmp_path / "o.zarr", batch=8, progress=False, **OPTS)


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"orders": 2.5}, TypeError, r"--orders must be an integer T .* got float 2\.5"),
    ({"orders": []}, ValueError, "--orders must list at least one order"),
    ({"client": object()}, TypeError, "client must be a distributed.Client"),
])
def test_run_features_bad_options_are_named(images, tmp_path, kwargs, error, match):
    src = open_images(_npy(tmp_path, images))
    opts = {**OPTS, **kwargs}
    with pytest.raises(error, match=match):
        run_features(src, tmp_path / "o.zarr", progress=False, **opts)
    assert not (tmp_path / "o.zarr").exists()


def test_run_features_wants_an_image_source(tmp_path):
    with pytest.raises(TypeError, match=r"source must be an ImageSource from open_images\(path\)"
                                        r", got str 'x\.npy'"):
        run_features("x.npy", tmp_path / "o.zarr", progress=False)


def test_urls_and_ome_zarr_arrays_say_they_are_not_read(tmp_path):
    with pytest.raises(ValueError, match=r"is a URL: only local paths are read .*fsspec"):
        open_images("s3://bucket/images.zarr")
    imgs = np.zeros((1, 2, 16, 16), np.uint16)  # t, c, y, x
    import zarr

    zarr.create_array(str(tmp_path / "ome.zarr"), shape=imgs.shape, dtype="uint16")[:] = imgs
    with pytest.raises(ValueError, match=r"OME-Zarr array with axes t, c, z, y, x are not read"):
        open_images(tmp_path / "ome.zarr")


def test_an_output_of_the_previous_format_is_refused_with_the_way_out(images, tmp_path):
    import zarr

    src = open_images(_npy(tmp_path, images))
    _interrupted(src, tmp_path / "old.zarr")
    g = zarr.open_group(str(tmp_path / "old.zarr"), mode="r+")
    g.attrs["fastmoments"] = {**g.attrs["fastmoments"], "version": 1}
    with pytest.raises(ValueError, match=r"output format 1, this fastmoments writes format 2.*"
                                         r"--overwrite"):
        run_features(src, tmp_path / "old.zarr", batch=4, progress=False, **OPTS)
    assert run_features(src, tmp_path / "old.zarr", batch=4, progress=False, overwrite=True,
                        **OPTS).computed == 10
