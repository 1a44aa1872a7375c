"""The box engine's halves products through the persistent, TMA-fed kernel
(:mod:`fastmoments.box.halves_tma`) against the plain kernel and float64.

Runs where the kernels run: a CUDA GPU of compute capability 9.0 or later, or the CPU under
``TRITON_INTERPRET=1`` (``test_box_interpreter.py``), where ``FASTMOMENTS_BOX_TMA=1`` turns
the TMA kernel on."""

from __future__ import annotations

import pytest
import torch

from fastmoments.box import JacobiTransform, engine, halves_tma, triton_gemm

DEV = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _tma_runs() -> bool:
    mp = pytest.MonkeyPatch()
    mp.setenv("FASTMOMENTS_BOX_TMA", "1")
    try:
        return halves_tma.enabled(DEV)
    finally:
        mp.undo()


needs_tma = pytest.mark.skipif(not _tma_runs(),
                               reason="needs a CUDA GPU of compute capability >= 9.0, or "
                                      "TRITON_INTERPRET=1 with Triton")


@pytest.fixture
def tma_launches(monkeypatch):
    """Turn the TMA kernel on and count its launches."""
    monkeypatch.setenv("FASTMOMENTS_BOX_TMA", "1")
    monkeypatch.setattr(engine, "HALVES_MIN", 0)
    calls = {"tma": 0}
    launch = halves_tma.launch

    def counted(*a, **k):
        ran = launch(*a, **k)
        calls["tma"] += bool(ran)  # launches that ran, not those refused
        return ran

    monkeypatch.setattr(halves_tma, "launch", counted)
    return calls


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.linalg.vector_norm(a.double().cpu() - b.double().cpu())
                 / torch.linalg.vector_norm(b.double().cpu()))


def _table(batch: int, rows: int, cols: int, seed: int) -> triton_gemm.SplitOperand:
    g = torch.Generator().manual_seed(seed)
    return triton_gemm.split_of(torch.randn(batch, rows, cols, generator=g).to(DEV))


def _value(t: triton_gemm.SplitOperand) -> torch.Tensor:
    return (t.hi.double() + t.lo.double()) * t.inv_scale


def _both(monkeypatch, run):
    """``run()`` with the TMA kernel, then with the plain kernel."""
    got = run()
    monkeypatch.setenv("FASTMOMENTS_BOX_TMA", "0")
    plain = run()
    monkeypatch.setenv("FASTMOMENTS_BOX_TMA", "1")
    return got, plain


@needs_tma
@pytest.mark.parametrize(("batch", "shared", "free", "m", "k", "launches"),
                         [(1, True, (9, 70), 21, 67, 1), (3, True, (5, 40), 37, 64, 1),
                          (2, False, (18, 32), 19, 72, 1), (2, False, (18, 32), 19, 33, 0)])
def test_table_times_data_on_tma(monkeypatch, tma_launches, batch, shared, free, m, k,
                                 launches):
    """``const @ data`` summing the data's last axis (the table read along K, the data
    along K), halves out: a shared table and one table per batch entry, sizes that are not
    multiples of the tiles (the copy engine's zero fill), against float64 and the plain
    kernel. Data rows shorter than 64 entries are not padded
    (:func:`triton_gemm.padded_row`): rows 33 entries apart do not suit TMA and take the
    plain kernel. Float32 results (the last analysis stage) keep the plain kernel."""
    g = torch.Generator().manual_seed(3)
    x = torch.randn(batch, *free, k, generator=g).to(DEV)
    data = triton_gemm.split_scaled(x)
    const = _table(1 if shared else batch, m, k, 5)
    table = _value(const)
    ref = torch.einsum("bmk,b...k->bm...", table.expand(batch, m, k).cpu(), x.double().cpu())
    rows = triton_gemm.table_exponents(table.abs().amax(0).float())[0].to(DEV)
    undo = torch.exp2(-(data.base + rows.double())).reshape(m, *(1,) * len(free))

    def run():  # halves scaled by 2^(base + rows[m]), those scales undone
        y = triton_gemm.halves_product(data, data.hi.ndim - 1, const, data_first=False,
                                       out_exps=rows)
        return (y.hi.double() + y.lo.double()) * undo

    got, plain = _both(monkeypatch, run)
    assert tma_launches["tma"] == launches
    assert _rel(got, ref) < 1e-6 and _rel(got, plain) < 1e-6
    f32 = triton_gemm.halves_product(data, data.hi.ndim - 1, const, data_first=False,
                                     out_exps=None)
    assert tma_launches["tma"] == launches and _rel(f32, ref) < 1e-6


@needs_tma
@pytest.mark.parametrize(("batch", "k", "free", "n"), [(1, 23, (17, 48), 29), (2, 64, (40,), 70)])
def test_data_times_table_on_tma(monkeypatch, tma_launches, batch, k, free, n):
    """``data @ const`` summing the data's axis 1 (the data read along M, the table along
    N), halves out, against float64 and the plain kernel."""
    g = torch.Generator().manual_seed(4)
    x = torch.randn(batch, k, *free, generator=g).to(DEV)
    data = triton_gemm.split_scaled(x)
    const = _table(1, k, n, 6)
    cols = triton_gemm.table_exponents(_value(const)[0].float())[1].to(DEV)

    def run():  # halves scaled by 2^(base + cols[n]), those scales undone
        y = triton_gemm.halves_product(data, 1, const, data_first=True, out_exps=cols)
        return (y.hi.double() + y.lo.double()) * torch.exp2(-(y.base + cols.double()))

    got, plain = _both(monkeypatch, run)
    assert tma_launches["tma"] == 1
    ref = torch.einsum("bk...,kn->b...n", x.double().cpu(), _value(const)[0].cpu())
    assert _rel(got, ref) < 1e-6 and _rel(got, plain) < 1e-6


@needs_tma
@pytest.mark.parametrize(("shape", "order", "parity", "block"),
                         [((70, 66), 64, False, 16), ((5, 6, 72), 20, False, 16),
                          ((2, 6, 8, 130), 12, True, 6), ((9, 7, 129), 14, True, 16)])
def test_engine_on_tma(tma_launches, shape, order, parity, block):
    """The fp16x3 engine's stages (with and without the parity batch) with the TMA kernel
    wherever the operands allow it, against float64: moments (the entries outside the set
    0) and full and partial reconstructions."""
    spatial = shape[-3:] if len(shape) == 4 else shape
    x = torch.randn(shape, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    beta = 0.3 if parity else 0.7  # parity needs alpha == beta
    ref = JacobiTransform(spatial, order, alpha=0.3, beta=beta, dtype=torch.float64)
    plan = JacobiTransform(spatial, order, alpha=0.3, beta=beta, device=DEV,
                           precision="fp16x3", parity=parity, block=block)
    j = plan.forward(x.float().to(DEV)).data
    j64 = ref.forward(x).data
    assert _rel(j, j64) < 1e-6
    for m in (order, order // 2):
        assert _rel(plan.inverse(j, order=m), ref.inverse(j64, order=m)) < 1e-6
    assert tma_launches["tma"] > 0


def test_layouts_that_do_not_suit_tma_take_the_plain_kernel():
    """TMA needs one contiguous axis, the other strides and the addresses in 16-byte
    multiples, and both halves alike; otherwise :func:`halves_tma.layout` says no."""
    a = torch.zeros(2, 24, 40, dtype=torch.float16)
    ok = (a, a.clone())
    s = (a.stride(0), a.stride(1), a.stride(2))
    assert halves_tma.layout(ok, ok, s, (s[0], 1, 40), 24, 24, 40, 2) is not None
    odd = torch.zeros(2, 24, 37, dtype=torch.float16)  # rows 37 entries apart
    so = (odd.stride(0), odd.stride(1), 1)
    assert halves_tma.layout((odd, odd), ok, so, s, 24, 40, 37, 2) is None
    shifted = torch.zeros(2000, dtype=torch.float16)[1:1921].view(a.shape)  # 2 bytes off
    assert halves_tma.layout((shifted, shifted), ok, s, s, 24, 40, 40, 2) is None
    t = a.mT  # read along its rows: stored with M contiguous
    assert halves_tma.layout((t, t), ok, (t.stride(0), t.stride(1), t.stride(2)), s,
                             40, 40, 24, 2) is not None
    assert halves_tma.layout((a, a.mT.contiguous().mT), ok, s, s, 24, 40, 40, 2) is None
    assert halves_tma.layout(ok, ok, s, (s[0], 1, 40), 24, 24, 0, 2) is None  # K of 0
    strided = torch.zeros(2, 24, 80, dtype=torch.float16)[..., ::2]  # no contiguous axis
    st = strided.stride()
    assert halves_tma.layout((strided, strided), ok, st, s, 24, 40, 40, 2) is None


@needs_tma
def test_a_kernel_too_large_for_shared_memory_takes_the_plain_kernel(monkeypatch,
                                                                     tma_launches):
    """On a GPU with less shared memory than the TMA kernel needs even with two stages,
    the product runs on the plain kernel (the launch refuses before anything runs)."""
    from triton.runtime.errors import OutOfResources

    tried = []

    def too_large(grid, *args, **kwargs):
        tried.append(kwargs["num_stages"])
        raise OutOfResources(300_000, 232_448, "shared memory")

    monkeypatch.setattr(halves_tma, "_LAUNCH", too_large)
    monkeypatch.setattr(halves_tma, "_STAGES", {})
    monkeypatch.setattr(triton_gemm, "_tile_halves", lambda m, n, classes=False:
                        (16, 16, 16, 1, 3))
    x = torch.randn(1, 5, 64, generator=torch.Generator().manual_seed(9)).to(DEV)
    data = triton_gemm.split_scaled(x)
    const = _table(1, 7, 64, 10)
    rows = triton_gemm.table_exponents(_value(const)[0].float())[0].to(DEV)
    y = triton_gemm.halves_product(data, 2, const, data_first=False, out_exps=rows)
    got = (y.hi.double() + y.lo.double()) * torch.exp2(-(y.base + rows.double()))[:, None]
    ref = torch.einsum("mk,fk->mf", _value(const)[0].cpu(), x[0].double().cpu())
    assert tried == [3, 2] and _rel(got[0], ref) < 1e-6
    tried.clear()
    triton_gemm.halves_product(data, 2, const, data_first=False, out_exps=rows)
    assert tried == []  # remembered: no second try


def test_the_box_engine_imports_and_runs_without_triton():
    """Triton is optional: with it missing, the box modules import (the kernels' helpers
    are imported only where Triton is) and a plan computes on the CPU."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "class NoTriton:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'triton' or name.startswith('triton.'):\n"
        "            raise ImportError('no triton here')\n"
        "sys.meta_path.insert(0, NoTriton())\n"
        "import torch\n"
        "from fastmoments.box import JacobiTransform, halves_tma, triton_gemm\n"
        "assert not halves_tma.enabled(torch.device('cpu'))\n"
        "x = torch.rand(2, 6, 7, 8, dtype=torch.float64)\n"
        "p = JacobiTransform((6, 7, 8), 5, dtype=torch.float64)\n"
        "r = p.inverse(p.forward(x))\n"
        "print(tuple(r.shape))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "(2, 6, 7, 8)"
