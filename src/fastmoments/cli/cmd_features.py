"""``fastmoments features INPUT --out OUTPUT``: moment features of a large image collection.

Reads a Zarr store, a folder of images or an ``.npy`` stack chunk by chunk and writes a Zarr
array or a Parquet table, resumably (see :mod:`fastmoments.collections`), in this process or on
a Dask cluster (``--scheduler``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._defaults import DISK_FAMILIES, FAMILY, KIND, KINDS, ORDERS
from ._args import (
    DEVICE_SYNTAX,
    HelpFormatter,
    add_device,
    add_progress,
    positive_int,
)
from ._errors import UsageError, require


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "features", formatter_class=HelpFormatter,
        help="moment features of an image collection (Zarr, folder, .npy)",
        description="Computes moment feature vectors of every image of INPUT (a Zarr store, a "
                    "folder of PNG/TIFF/JPEG files, or an .npy stack of (n, N, N) images) and "
                    "writes them chunk by chunk to OUTPUT: a Parquet table if its name ends in "
                    ".parquet, else a Zarr array. An interrupted run resumes when started "
                    "again with the same command; a finished one does nothing. The defaults "
                    "(Zernike moments of orders 0-9, as magnitudes) are those of "
                    "fastmoments.features and the scikit-learn transformers.")
    p.add_argument("input", metavar="INPUT", help="Zarr store, image folder or .npy file")
    p.add_argument("--out", required=True, metavar="OUTPUT",
                   help="OUTPUT.zarr (or any folder name) or OUTPUT.parquet")
    p.add_argument("--array", default=None, metavar="NAME",
                   help="the array inside a Zarr group")
    p.add_argument("--size", type=positive_int, default=None, metavar="N",
                   help="resample a folder's images to N x N")
    p.add_argument("--channel-axis", type=int, default=None, metavar="AXIS",
                   help="keep the colour channels, features per channel: -1 for a folder of "
                        "colour images; 1 or -1 for (n, C, N, N) or (n, N, N, C) arrays")
    p.add_argument("--grey", action="store_true",
                   help="convert a folder's colour images to grey (0.299 R + 0.587 G + "
                        "0.114 B); without it a colour image is refused")
    p.add_argument("--family", default=FAMILY, choices=DISK_FAMILIES,
                   help="the disk family")
    p.add_argument("--orders", type=feature_orders, default=str(ORDERS), metavar="T|A-B|T,T...",
                   help="'T' for every order 0..T, a range 'A-B', or a list '2,4,6'")
    p.add_argument("--kind", default=KIND, choices=KINDS,
                   help="magnitude (rotation invariant), complex (Re, Im columns) or real")
    p.add_argument("--k", type=positive_int, default=1, help="sub-pixel points per axis")
    p.add_argument("--dtype", default=None, choices=("float32", "float64"),
                   help="working precision (default: float64 for float64 images and image "
                        "folders, else float32)")
    add_device(p, "where the features are computed (with --scheduler, on every worker; auto "
                  "is the CPU of a remote cluster's workers)",
               type=device_list, choices="cpu, cuda, cuda:1, a list cuda:0,cuda:1, or cuda:all")
    p.add_argument("--batch", type=positive_int, default=None, metavar="B",
                   help="images per chunk (default: the Zarr chunk length, at least 256; else "
                        "1024)")
    p.add_argument("--scheduler", default=None, metavar="local|ADDRESS",
                   help="run on Dask: 'local' starts a LocalCluster, an address such as "
                        "tcp://host:8786 joins a running cluster (default: this process)")
    p.add_argument("--workers", type=positive_int, default=None, metavar="N",
                   help="with --scheduler local: worker processes (default 2); with an "
                        "address: wait for N workers")
    p.add_argument("--worker-timeout", type=positive_int, default=60, metavar="SECONDS",
                   help="with --scheduler: how long to wait for the workers to join")
    p.add_argument("--overwrite", action="store_true",
                   help="replace an OUTPUT made with other parameters")
    p.add_argument("--resume-other-version", action="store_true",
                   help="resume an OUTPUT that another fastmoments version began")
    add_progress(p)
    p.set_defaults(func=run)


def feature_orders(text: str) -> Any:
    """``--orders`` as :func:`fastmoments.collections.parse_orders` reads it."""
    from ..collections import parse_orders

    try:
        return parse_orders(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--orders ")) from None


def device_list(text: str) -> str:
    """``--device`` of ``features``: one device, a comma-separated list, or ``cuda:all``."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise argparse.ArgumentTypeError(f"must name a device such as cpu or cuda:0, got "
                                         f"{text!r}")
    for part in parts:
        if (part != "cuda:all" and not DEVICE_SYNTAX.fullmatch(part)) or (
                part == "auto" and len(parts) > 1):
            raise argparse.ArgumentTypeError(
                f"must be auto, cpu, cuda, cuda:N, a list cuda:0,cuda:1 or cuda:all, got "
                f"{text!r}")
    return ",".join(parts)


def parse_device(text: str | None) -> Any:
    """``--device`` text as ``device=`` takes it: one name, or a list for ``a,b``."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise ValueError(f"--device must name a device such as cpu or cuda:0, got {text!r}")
    return parts[0] if len(parts) == 1 else parts


def check(args: argparse.Namespace) -> None:
    """Everything that can be checked before torch is imported: the options that go
    together, INPUT, OUTPUT's folder, and the packages INPUT, OUTPUT and ``--scheduler``
    need."""
    from .._collection_inputs import _is_zarr
    from ._inputs import readable_path
    from ._outputs import OutputFolder

    if args.workers is not None and args.scheduler is None:
        raise UsageError("--workers needs --scheduler (local or a scheduler address)")
    if "://" not in args.input:
        src = readable_path(args.input, "INPUT", folder=True)
        if _is_zarr(src):
            require(["zarr"], f"INPUT {args.input!r} (a Zarr store)")
    out = str(args.out)
    if out.lower().endswith(".parquet"):
        require(["pyarrow"], f"--out {out!r} (a Parquet table)")
    else:
        require(["zarr"], f"--out {out!r} (a Zarr array)")
    OutputFolder(out)  # a folder either way: it exists and is writable, or can be made
    if args.scheduler is not None:
        require(["dask", "distributed"], "--scheduler")


def run(args: argparse.Namespace) -> int:
    check(args)
    from ..collections import open_images, run_features
    from ._args import pick_device, want_progress

    source = open_images(args.input, array=args.array, size=args.size, grey=args.grey,
                         channel_axis=args.channel_axis)
    # the images are checked (above, no torch yet); now the device
    device = parse_device(args.device)
    remote = args.scheduler not in (None, "local")
    if device == "auto":
        # this machine's GPU, if it has one (also the local cluster's); a remote cluster's
        # workers compute where their images are, on their CPUs, unless --device names CUDA
        device = None if remote else pick_device("auto")
    elif isinstance(device, str) and device != "cuda:all" and not remote:
        device = pick_device(device)
    if source.pixel_types is not None:
        print(f"fastmoments features: {source.n} images ({', '.join(source.pixel_types)} "
              "pixels, read exactly into float64"
              + ("; colour converted to grey, 0.299 R + 0.587 G + 0.114 B" if args.grey else "")
              + ")", flush=True)

    client, cluster = _client(args.scheduler, args.workers, args.worker_timeout)
    if client is not None:
        import logging

        logging.getLogger("tornado.application").addFilter(_NoInterruptNoise())
    try:
        report = run_features(source, args.out, family=args.family, orders=args.orders,
                              kind=args.kind, k=args.k, dtype=args.dtype, device=device,
                              batch=args.batch, client=client, overwrite=args.overwrite,
                              progress=want_progress(args.progress),
                              other_version=args.resume_other_version,
                              worker_timeout=args.worker_timeout)
    except KeyboardInterrupt:
        if cluster is not None:
            _quiet_shutdown()
        print(f"fastmoments features: interrupted; the chunks written so far are kept in "
              f"{args.out}: run the same command again to resume", file=sys.stderr)
        return 130
    finally:
        _close(client, cluster)
    if report.computed == 0:
        print(f"fastmoments features: {args.out} is already complete ({report.n_images} "
              f"images, {report.n_chunks} chunks, {len(report.columns)} features); nothing "
              "to do")
    else:
        resumed = (f", resumed after {report.already_done} chunks done before"
                   if report.already_done else "")
        print(f"fastmoments features: {report.n_images} images x {len(report.columns)} features "
              f"in {args.out} ({report.computed} chunks computed{resumed})")
    return 0


class _NoInterruptNoise:
    """Logging filter: drops the error that distributed's ``sync`` logs when Ctrl-C interrupts
    the client while it waits (its ``cancel`` callback fails on the event loop's thread, before
    this command can say anything); other records pass."""

    def filter(self, record: Any) -> bool:
        return "sync.<locals>.cancel" not in record.getMessage()


def _quiet_shutdown() -> None:
    """After Ctrl-C, the cluster's shutdown is not news: its loggers are silenced (the
    worker processes, interrupted too, are told the same by the preload below)."""
    import logging

    for name in ("distributed", "tornado", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _close(client: Any, cluster: Any) -> None:
    """Close the client and the cluster this command started, whatever state they are in."""
    for thing in (client, cluster):
        if thing is None:
            continue
        try:
            thing.close()
        except (Exception, KeyboardInterrupt):  # a second Ctrl-C or a dying cluster
            pass


def _client(scheduler: str | None, workers: int | None,
            timeout: float = 60) -> tuple[Any, Any]:
    """A ``distributed.Client`` for ``--scheduler`` (and the LocalCluster it started)."""
    if scheduler is None:
        return None, None
    try:
        from distributed import Client

        from ..dask import local_cluster
    except ImportError:
        raise UsageError('--scheduler needs Dask: pip install "fastmoments[dask]"') from None
    if scheduler == "local":
        from ..dask._workers import available_cores

        n = workers or 2
        # worker processes x torch threads <= cores (kept by restarted workers too), and
        # workers that reuse their freed buffers (the preload fastmoments.dask.memory)
        # and workers that leave Ctrl-C to this command (the preload _worker_preload)
        cluster = local_cluster(n_workers=n, threads_per_worker=1,
                                torch_threads=max(1, available_cores() // n), processes=True,
                                dashboard_address=":0",
                                preload=["fastmoments.cli._worker_preload"])
        return Client(cluster), cluster
    try:
        client = Client(scheduler, timeout=f"{max(1, min(int(timeout), 30))}s")
    except (Exception, TimeoutError) as exc:  # OSError, a bad address's ValueError, ...
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ValueError(f"--scheduler {scheduler!r}: cannot reach a Dask scheduler there "
                         f"({reason}); give 'local' or an address such as "
                         "tcp://host:8786") from None
    if workers is not None:
        from .. import _collection_cluster

        try:
            _collection_cluster.wait_for_workers(client, workers, timeout)
        except ValueError:
            client.close()
            raise
    return client, None
