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

__all__ = ["FeatureOutput", "library_identity", "open_output", "read_features"]

#: The attribute (Zarr) or manifest key holding the run's parameters.
_META = "fastmoments"
#: The attribute (Zarr) or manifest key naming the library that wrote the output.
_LIBRARY = "fastmoments_library"
_MANIFEST = "_fastmoments.json"
#: 2: input checksums per chunk, the library's identity, labels, dimension names.
_FORMAT = 2
#: The Parquet part files' metadata key holding the checksum of the chunk's input.
_PART_CHECKSUM = b"fastmoments_input_checksum"


_OPTION_NAMES = {"input": "INPUT", "array": "--array", "size": "--size", "grey": "--grey",
                 "channels": "--channel-axis (the channels kept)",
                 "n_images": "INPUT (number of images)", "side": "INPUT (image size)",
                 "family": "--family", "orders": "--orders", "kind": "--kind", "k": "--k",
                 "dtype": "--dtype", "batch": "--batch", "format": "the output format",
                 "labels": "INPUT (its per-image labels)",
                 "version": "the output's format version"}

#: Parameters recorded but not compared on resume: the input may move (its checksums, not its
#: path, say whether it is the same).
_NOT_COMPARED = ("input",)


def _git_commit(start: Path) -> str | None:
    """The commit checked out in the git work tree holding ``start``, read from its files."""
    for folder in (start, *start.parents):
        dot = folder / ".git"
        if not dot.exists():
            continue
        try:
            git = dot
            if dot.is_file():  # a worktree or submodule: "gitdir: PATH"
                git = (folder / dot.read_text().split(":", 1)[1].strip()).resolve()
            head = (git / "HEAD").read_text().strip()
            if not head.startswith("ref:"):
                return head
            ref = head.split(":", 1)[1].strip()
            common = git
            if (git / "commondir").is_file():
                common = (git / (git / "commondir").read_text().strip()).resolve()
            for base in (git, common):
                if (base / ref).is_file():
                    return (base / ref).read_text().strip()
            packed = common / "packed-refs"
            if packed.is_file():
                for line in packed.read_text().splitlines():
                    if line.endswith(" " + ref):
                        return line.split()[0]
        except OSError:
            return None
        return None
    return None


def library_identity() -> dict[str, str | None]:
    """``{"version": ..., "commit": ...}`` of this fastmoments (the commit where the package is
    a git checkout, else ``None``), recorded in every output.

    Examples
    --------
    >>> sorted(library_identity())
    ['commit', 'version']
    """
    from . import __version__

    return {"version": str(__version__), "commit": _git_commit(Path(__file__).resolve().parent)}


def _same_library(old: Any, new: dict[str, Any]) -> bool:
    if not isinstance(old, dict) or old.get("version") != new["version"]:
        return False
    return old.get("commit") is None or new["commit"] is None or old["commit"] == new["commit"]


def _describe(identity: Any) -> str:
    if not isinstance(identity, dict):
        return "an unknown version"
    commit = identity.get("commit")
    return f"fastmoments {identity.get('version')}" + (f" (commit {commit[:12]})" if commit
                                                        else "")


class FeatureOutput:
    """A resumable feature output: a Zarr group or a Parquet dataset (see :func:`open_output`).

    ``done()`` lists the chunks on disk; ``write(i, rows, checksum)`` stores chunk ``i`` and the
    checksum of the images it came from durably, then marks it done; ``checksums()`` gives the
    recorded checksum of every done chunk. Writing a chunk twice stores the same rows in the
    same place.
    """

    path: Path
    params: dict[str, Any]
    n_chunks: int

    def done(self) -> set[int]:
        raise NotImplementedError

    def checksums(self) -> dict[int, str | None]:
        raise NotImplementedError

    def write(self, i: int, rows: np.ndarray, checksum: str | None = None) -> None:
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


def _words(checksum: str | None) -> list[int]:
    """A 32-hex-digit checksum as two uint64 words (0, 0 for none)."""
    if checksum is None:
        return [0, 0]
    return [int(checksum[:16], 16), int(checksum[16:32], 16)]


class _ZarrOutput(FeatureOutput):
    def __init__(self, path: Path, params: dict[str, Any]) -> None:
        import zarr

        self.path = path
        self.params = params
        self.n_chunks = math.ceil(params["n_images"] / params["batch"])
        group = zarr.open_group(str(path), mode="r+")
        self._features = group["features"]
        self._done = group["done"]
        self._sums = group["input_checksums"]

    @staticmethod
    def create(path: Path, params: dict[str, Any], columns: list[str],
               files: Sequence[str] | None, labels: dict[str, np.ndarray]) -> None:
        import zarr

        n, b = params["n_images"], params["batch"]
        group = zarr.open_group(str(path), mode="w")
        feats = group.create_array("features", shape=(n, len(columns)), chunks=(b, len(columns)),
                                   dtype=params["dtype"], fill_value=np.nan,
                                   dimension_names=("image", "feature"))
        feats.attrs["columns"] = list(columns)
        feats.attrs.update({k: params[k] for k in ("family", "orders", "kind", "k", "input")})
        if files is not None:
            feats.attrs["files"] = list(files)
        n_chunks = math.ceil(n / b)
        group.create_array("done", shape=(n_chunks,), chunks=(1,), dtype="uint8",
                           fill_value=0, compressors=None, dimension_names=("chunk",))
        group.create_array("input_checksums", shape=(n_chunks, 2), chunks=(1, 2),
                           dtype="uint64", fill_value=0, compressors=None,
                           dimension_names=("chunk", "checksum_word"))
        for name, values in labels.items():
            arr = group.create_array(name, shape=values.shape, dtype=values.dtype,
                                     dimension_names=("image",))
            arr[:] = values
        group.attrs[_META] = params

    def done(self) -> set[int]:
        return {int(i) for i in np.flatnonzero(self._done[:])}

    def checksums(self) -> dict[int, str | None]:
        words = np.asarray(self._sums[:])
        return {i: (None if not words[i].any() else f"{int(words[i, 0]):016x}"
                    f"{int(words[i, 1]):016x}") for i in self.done()}

    def write(self, i: int, rows: np.ndarray, checksum: str | None = None) -> None:
        s, e = self._rows(i)
        self._features[s:e] = rows
        # chunk files of the Zarr v3 default key encoding: features/c/<i>/0, done/c/<i>
        _fsync(self.path / "features" / "c" / str(i) / "0")
        _fsync(self.path / "features" / "c" / str(i))
        self._sums[i] = np.asarray(_words(checksum), dtype=np.uint64)
        _fsync(self.path / "input_checksums" / "c" / str(i) / "0")
        self._done[i] = 1
        _fsync(self.path / "done" / "c" / str(i))
        _fsync(self.path / "done" / "c")


class _ParquetOutput(FeatureOutput):
    def __init__(self, path: Path, params: dict[str, Any], columns: list[str],
                 files: Sequence[str] | None, labels: dict[str, np.ndarray]) -> None:
        self.path = path
        self.params = params
        self.columns = columns
        self.files = files
        self.labels = labels
        self.n_chunks = math.ceil(params["n_images"] / params["batch"])
        # files of writes that a killed run left behind (written under a temporary name,
        # renamed into place only when complete)
        for f in path.glob(".part-*.tmp"):
            f.unlink(missing_ok=True)

    @staticmethod
    def create(path: Path, params: dict[str, Any], columns: list[str],
               files: Sequence[str] | None, labels: dict[str, np.ndarray]) -> None:
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

    def checksums(self) -> dict[int, str | None]:
        import pyarrow.parquet as pq

        out: dict[int, str | None] = {}
        for i in self.done():
            meta = pq.read_schema(self._part(i)).metadata or {}
            value = meta.get(_PART_CHECKSUM)
            out[i] = value.decode() if value else None
        return out

    def write(self, i: int, rows: np.ndarray, checksum: str | None = None) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        s, e = self._rows(i)
        cols: dict[str, Any] = {"index": pa.array(np.arange(s, e, dtype=np.int64))}
        if self.files is not None:
            cols["file"] = pa.array(list(self.files[s:e]), type=pa.string())
        for name, values in self.labels.items():
            cols[name] = pa.array(np.asarray(values[s:e]))
        for j, name in enumerate(self.columns):
            cols[name] = pa.array(np.ascontiguousarray(rows[:, j]))
        table = pa.table(cols)
        if checksum is not None:
            table = table.replace_schema_metadata({_PART_CHECKSUM: checksum.encode()})
        tmp = self.path / f".part-{i:08d}.{uuid.uuid4().hex}.tmp"
        try:
            with open(tmp, "wb") as fh:
                pq.write_table(table, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self._part(i))
        finally:
            tmp.unlink(missing_ok=True)
        _fsync(self.path)


def _output_format(out: Path) -> str:
    return "parquet" if out.suffix.lower() == ".parquet" else "zarr"


def _existing(out: Path, fmt: str) -> tuple[dict[str, Any], Any] | None:
    """The parameters and library identity of an existing fastmoments output at ``out`` (None
    if it is not one)."""
    try:
        if fmt == "parquet":
            manifest = json.loads((out / _MANIFEST).read_text())
            return manifest[_META], manifest.get(_LIBRARY)
        import zarr

        attrs = zarr.open_group(str(out), mode="r").attrs
        return dict(attrs[_META]), attrs.get(_LIBRARY)
    except Exception:  # anything unreadable is "not ours"
        return None


def _existing_params(out: Path, fmt: str) -> dict[str, Any] | None:
    found = _existing(out, fmt)
    return None if found is None else found[0]


def _check_place(out: Path) -> None:
    """``--out`` can be created or written: its parents are folders, the folder it goes in
    (or the existing output) is writable."""
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(f"--out {str(out)!r}: {str(parent)!r} is a file, not a folder")
            break
    if out.exists():
        if out.is_dir() and not os.access(out, os.W_OK | os.X_OK):
            raise ValueError(f"--out {str(out)!r} is not writable (permission denied)")
        return
    parent = next((q for q in out.parents if q.exists()), None)
    if parent is not None and not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"--out {str(out)!r}: folder {str(parent)!r} is not writable "
                         "(permission denied)")


def _differing_key(old: dict[str, Any], params: dict[str, Any]) -> str | None:
    plain = json.loads(json.dumps(params))
    for key in _OPTION_NAMES:
        if key not in _NOT_COMPARED and old.get(key) != plain.get(key):
            return key
    return None


def _labels_param(labels: dict[str, np.ndarray]) -> list[str]:
    return sorted(labels)


def open_output(out: str | os.PathLike, params: dict[str, Any], columns: list[str],
                files: Sequence[str] | None = None, *, overwrite: bool = False,
                labels: dict[str, np.ndarray] | None = None,
                other_version: bool = False) -> FeatureOutput:
    """Create the output, or reopen it to resume when it was made with the same parameters.

    The format follows the name: ``*.parquet`` is a Parquet dataset (a folder), anything else a
    Zarr group. A new output is built under a temporary name and renamed into place, so a crash
    while creating it leaves nothing half made. Every output records the library that wrote it
    (:func:`library_identity`) and, with each chunk, a checksum of the images it came from.

    Parameters
    ----------
    labels : dict of str to 1-D array, optional
        Per-image values (a Zarr input's ``font``, ``angle``, ...) stored beside the features:
        arrays of the Zarr group with the dimension ``image``, columns of the Parquet table.
    other_version : bool
        Resume an output that another version (or git commit) of fastmoments began.

    Raises
    ------
    ValueError
        If ``out`` exists with other parameters (naming the first option that differs) and
        ``overwrite`` is false, was begun by another library version and neither
        ``other_version`` nor ``overwrite`` is given, exists and is not a fastmoments output,
        cannot be written (a parent that is a file, a read-only folder), or was created by
        another run at the same moment.
    """
    out = Path(out)
    labels = dict(labels or {})
    fmt = _output_format(out)
    params = {**params, "format": fmt, "version": _FORMAT, "labels": _labels_param(labels)}
    identity = library_identity()
    _check_place(out)
    if out.exists():
        found = _existing(out, fmt)
        if found is None:
            what = "folder" if out.is_dir() else "file"
            if out.is_dir() and not any(out.iterdir()):
                out.rmdir()
            else:
                raise ValueError(f"--out {str(out)!r} exists and is a {what} that is not a "
                                 f"fastmoments {fmt} output; remove it or choose another name")
        else:
            old, old_identity = found
            key = _differing_key(old, params)
            if key is not None or not (_same_library(old_identity, identity) or other_version):
                if not overwrite:
                    raise ValueError(_refusal(out, key, old, params, old_identity, identity))
                shutil.rmtree(out)
    if not out.exists():
        _create(out, fmt, params, columns, files, labels, identity)
    if fmt == "parquet":
        return _ParquetOutput(out, params, columns, files, labels)
    return _ZarrOutput(out, params)


def _refusal(out: Path, key: str | None, old: dict[str, Any], params: dict[str, Any],
             old_identity: Any, identity: dict[str, Any]) -> str:
    if key == "version":
        return (f"--out {str(out)!r} was written in output format {old.get(key)!r}, this "
                f"fastmoments writes format {params.get(key)!r} (with input checksums and the "
                "library's version): pass --overwrite to compute it again")
    if key is not None:
        return (f"--out {str(out)!r} holds features made with other parameters: "
                f"{_OPTION_NAMES.get(key, key)} was {old.get(key)!r}, now {params.get(key)!r}; "
                "rerun with the same options to resume, or pass --overwrite to replace it")
    return (f"--out {str(out)!r} was begun by {_describe(old_identity)}, this is "
            f"{_describe(identity)}: its chunks would mix the two versions' values; pass "
            "--resume-other-version (other_version=True) to resume anyway, or --overwrite to "
            "start again")


def _create(out: Path, fmt: str, params: dict[str, Any], columns: list[str],
            files: Sequence[str] | None, labels: dict[str, np.ndarray],
            identity: dict[str, Any]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{uuid.uuid4().hex}.tmp")
    try:
        if fmt == "parquet":
            _ParquetOutput.create(tmp, params, columns, files, labels)
            manifest = json.loads((tmp / _MANIFEST).read_text())
            (tmp / _MANIFEST).write_text(json.dumps({**manifest, _LIBRARY: identity}))
        else:
            _ZarrOutput.create(tmp, params, columns, files, labels)
            import zarr

            zarr.open_group(str(tmp), mode="r+").attrs[_LIBRARY] = identity
        try:
            os.replace(tmp, out)
        except OSError as exc:
            if out.exists():  # another run created it between our check and now
                raise ValueError(f"--out {str(out)!r} was created by another run at the same "
                                 "time; one output takes one run at a time: wait for the "
                                 "other run, then rerun this command to resume") from exc
            raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


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


