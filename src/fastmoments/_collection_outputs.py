"""Outputs of :mod:`fastmoments.collections`: resumable Zarr groups and Parquet datasets."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FeatureOutput", "open_output", "read_features"]

#: The attribute (Zarr) or manifest key holding the run's parameters.
_META = "fastmoments"
_MANIFEST = "_fastmoments.json"
_FORMAT = 1


_OPTION_NAMES = {"input": "INPUT", "array": "--array", "size": "--size", "n_images":
                 "INPUT (number of images)", "side": "INPUT (image size)", "family": "--family",
                 "orders": "--orders", "kind": "--kind", "k": "--k", "dtype": "--dtype",
                 "batch": "--batch", "format": "the output format"}


class FeatureOutput:
    """A resumable feature output: a Zarr group or a Parquet dataset (see :func:`open_output`).

    ``done()`` lists the chunks on disk; ``write(i, rows)`` stores chunk ``i`` durably and then
    marks it done. Writing a chunk twice stores the same rows in the same place.
    """

    path: Path
    params: dict[str, Any]
    n_chunks: int

    def done(self) -> set[int]:
        raise NotImplementedError

    def write(self, i: int, rows: np.ndarray) -> None:
        raise NotImplementedError

    def _rows(self, i: int) -> tuple[int, int]:
        b, n = self.params["batch"], self.params["n_images"]
        return i * b, min(n, (i + 1) * b)


def _fsync(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class _ZarrOutput(FeatureOutput):
    def __init__(self, path: Path, params: dict[str, Any]) -> None:
        import zarr

        self.path = path
        self.params = params
        self.n_chunks = math.ceil(params["n_images"] / params["batch"])
        group = zarr.open_group(str(path), mode="r+")
        self._features = group["features"]
        self._done = group["done"]

    @staticmethod
    def create(path: Path, params: dict[str, Any], columns: list[str],
               files: Sequence[str] | None) -> None:
        import zarr

        n, b = params["n_images"], params["batch"]
        group = zarr.open_group(str(path), mode="w")
        feats = group.create_array("features", shape=(n, len(columns)), chunks=(b, len(columns)),
                                   dtype=params["dtype"], fill_value=np.nan)
        feats.attrs["columns"] = list(columns)
        feats.attrs.update({k: params[k] for k in ("family", "orders", "kind", "k", "input")})
        if files is not None:
            feats.attrs["files"] = list(files)
        group.create_array("done", shape=(math.ceil(n / b),), chunks=(1,), dtype="uint8",
                           fill_value=0, compressors=None)
        group.attrs[_META] = params

    def done(self) -> set[int]:
        return {int(i) for i in np.flatnonzero(self._done[:])}

    def write(self, i: int, rows: np.ndarray) -> None:
        s, e = self._rows(i)
        self._features[s:e] = rows
        # chunk files of the Zarr v3 default key encoding: features/c/<i>/0, done/c/<i>
        _fsync(self.path / "features" / "c" / str(i) / "0")
        _fsync(self.path / "features" / "c" / str(i))
        self._done[i] = 1
        _fsync(self.path / "done" / "c" / str(i))
        _fsync(self.path / "done" / "c")


class _ParquetOutput(FeatureOutput):
    def __init__(self, path: Path, params: dict[str, Any], columns: list[str],
                 files: Sequence[str] | None) -> None:
        self.path = path
        self.params = params
        self.columns = columns
        self.files = files
        self.n_chunks = math.ceil(params["n_images"] / params["batch"])

    @staticmethod
    def create(path: Path, params: dict[str, Any], columns: list[str],
               files: Sequence[str] | None) -> None:
        path.mkdir(parents=True)
        manifest = {_META: params, "columns": columns}
        if files is not None:
            manifest["files"] = list(files)
        (path / _MANIFEST).write_text(json.dumps(manifest))

    def _part(self, i: int) -> Path:
        return self.path / f"part-{i:08d}.parquet"

    def done(self) -> set[int]:
        out = set()
        for f in self.path.iterdir():
            m = re.fullmatch(r"part-(\d{8})\.parquet", f.name)
            if m:
                out.add(int(m.group(1)))
        return out

    def write(self, i: int, rows: np.ndarray) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        s, e = self._rows(i)
        cols: dict[str, Any] = {"index": pa.array(np.arange(s, e, dtype=np.int64))}
        if self.files is not None:
            cols["file"] = pa.array(list(self.files[s:e]), type=pa.string())
        for j, name in enumerate(self.columns):
            cols[name] = pa.array(np.ascontiguousarray(rows[:, j]))
        tmp = self.path / f".part-{i:08d}.{uuid.uuid4().hex}.tmp"
        try:
            with open(tmp, "wb") as fh:
                pq.write_table(pa.table(cols), fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self._part(i))
        finally:
            tmp.unlink(missing_ok=True)
        _fsync(self.path)


def _output_format(out: Path) -> str:
    return "parquet" if out.suffix.lower() == ".parquet" else "zarr"


def _existing_params(out: Path, fmt: str) -> dict[str, Any] | None:
    """The parameters of an existing fastmoments output at ``out`` (None if it is not one)."""
    try:
        if fmt == "parquet":
            return json.loads((out / _MANIFEST).read_text())[_META]
        import zarr

        return dict(zarr.open_group(str(out), mode="r").attrs[_META])
    except Exception:  # anything unreadable is "not ours"
        return None


def open_output(out: str | os.PathLike, params: dict[str, Any], columns: list[str],
                files: Sequence[str] | None = None, *, overwrite: bool = False) -> FeatureOutput:
    """Create the output, or reopen it to resume when it was made with the same parameters.

    The format follows the name: ``*.parquet`` is a Parquet dataset (a folder), anything else a
    Zarr group. A new output is built under a temporary name and renamed into place, so a crash
    while creating it leaves nothing half made.

    Raises
    ------
    ValueError
        If ``out`` exists with other parameters (naming the first option that differs) and
        ``overwrite`` is false, or exists and is not a fastmoments output.
    """
    out = Path(out)
    fmt = _output_format(out)
    params = {**params, "format": fmt, "version": _FORMAT}
    if out.exists():
        old = _existing_params(out, fmt)
        if old is None:
            what = "folder" if out.is_dir() else "file"
            if out.is_dir() and not any(out.iterdir()):
                out.rmdir()
            else:
                raise ValueError(f"--out {str(out)!r} exists and is a {what} that is not a "
                                 f"fastmoments {fmt} output; remove it or choose another name")
        elif old != json.loads(json.dumps(params)):
            if not overwrite:
                key = next(k for k in (*_OPTION_NAMES, "version")
                           if old.get(k) != json.loads(json.dumps(params.get(k))))
                raise ValueError(
                    f"--out {str(out)!r} holds features made with other parameters: "
                    f"{_OPTION_NAMES.get(key, key)} was {old.get(key)!r}, now "
                    f"{params.get(key)!r}; rerun with the same options to resume, or pass "
                    "--overwrite to replace it")
            shutil.rmtree(out)
    if not out.exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex}.tmp")
        try:
            cls = _ParquetOutput if fmt == "parquet" else _ZarrOutput
            cls.create(tmp, params, columns, files)
            os.replace(tmp, out)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)
    if fmt == "parquet":
        return _ParquetOutput(out, params, columns, files)
    return _ZarrOutput(out, params)


def read_features(out: str | os.PathLike) -> tuple[np.ndarray, list[str]]:
    """The ``(n_images, n_features)`` matrix and column names of a finished output.

    Raises
    ------
    ValueError
        If ``out`` is not a fastmoments output, or some chunks are not done yet.
    """
    out = Path(out)
    fmt = _output_format(out)
    params = _existing_params(out, fmt)
    if params is None:
        raise ValueError(f"{str(out)!r} is not a fastmoments features output")
    n_chunks = math.ceil(params["n_images"] / params["batch"])
    if fmt == "parquet":
        import pyarrow.parquet as pq

        cols = json.loads((out / _MANIFEST).read_text())["columns"]
        parts = sorted(out.glob("part-*.parquet"))
        if len(parts) != n_chunks:
            raise ValueError(f"{str(out)!r} is incomplete: {len(parts)} of {n_chunks} chunks")
        table = pq.read_table([str(p) for p in parts], columns=cols) if parts else None
        mat = np.column_stack([table.column(c).to_numpy() for c in cols])
        return mat, cols
    import zarr

    group = zarr.open_group(str(out), mode="r")
    done = int(np.count_nonzero(group["done"][:]))
    if done != n_chunks:
        raise ValueError(f"{str(out)!r} is incomplete: {done} of {n_chunks} chunks")
    return np.asarray(group["features"][:]), list(group["features"].attrs["columns"])


