"""The fp16x3 box engine on float16 halves (box.triton_gemm.Halves, engine._analyze_halves).

Each stage hands the next its result as float16 halves scaled by powers of two known in
advance, so no product splits its data. Runs where the kernels run (CUDA, or the CPU under
TRITON_INTERPRET=1)."""

from __future__ import annotations

import pytest
import torch

from fastmoments.box import JacobiTransform, routes, triton_gemm

DEV = torch.device("cuda" if torch.cuda.is_available() else "cpu")
needs_kernel = pytest.mark.skipif(not triton_gemm.available(DEV),
                                  reason="needs CUDA or TRITON_INTERPRET=1 with Triton")


@pytest.fixture(autouse=True)
def _halves_for_small_jobs(monkeypatch):
    """The halves run from 2^26 samples up; these tests take them for small ones too."""
    monkeypatch.setattr(routes, "HALVES_MIN", 0)


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(torch.linalg.vector_norm(a.double().cpu() - b) / torch.linalg.vector_norm(b))


def _count_calls(monkeypatch, module, names: dict[str, str]) -> dict[str, int]:
    """Count the calls of ``module``'s functions (label -> attribute name) while a test runs."""
    calls = dict.fromkeys(names, 0)

    def counter(label: str, f):
        def counted(*a, **k):
            calls[label] += 1
            return f(*a, **k)
        return counted

    for label, attr in names.items():
        monkeypatch.setattr(module, attr, counter(label, getattr(module, attr)))
    return calls


def _counting(monkeypatch) -> dict[str, int]:
    return _count_calls(monkeypatch, triton_gemm,
                        {"halves": "halves_product", "split inside": "bmm_fp16x3"})


@needs_kernel
@pytest.mark.parametrize(("shape", "order", "block"), [((9, 11), 6, 4), ((7, 6, 9), 6, 4),
                                                      ((20, 18, 33), 20, 16),
                                                      ((70, 66), 64, 16)])
def test_fp16x3_stages_run_on_halves(monkeypatch, shape, order, block):
    """Every stage on halves, against float64; blocks of 16 (the last stage writes them in
    place) and narrower ones (written through a contiguous result); rows of 64 or more (the
    image, and the coefficients in the reconstruction) split into padded buffers."""
    calls = _counting(monkeypatch)
    x = torch.rand(shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    ref = JacobiTransform(shape, order, alpha=0.3, beta=0.7, dtype=torch.float64)
    plan = JacobiTransform(shape, order, alpha=0.3, beta=0.7, device=DEV, precision="fp16x3",
                           block=block)
    j = plan.forward(x.float().to(DEV)).data
    r = plan.inverse(j)
    assert calls["split inside"] == 0 and calls["halves"] > 2 * len(shape)
    j64 = ref.forward(x).data
    assert _rel(j, j64) < 1e-6 and _rel(r, ref.inverse(j64)) < 1e-6


@needs_kernel
def test_input_out_of_the_scales_range_takes_the_split_inside_kernel(monkeypatch):
    calls = _counting(monkeypatch)
    shape, order = (8, 10), 5
    x = torch.rand(shape, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    x = x * 1e25  # the input's scale would be 2^-69: beyond MAX_EXPONENT
    ref = JacobiTransform(shape, order, alpha=0.3, beta=0.3, dtype=torch.float64)
    plan = JacobiTransform(shape, order, alpha=0.3, beta=0.3, device=DEV, precision="fp16x3")
    j = plan.forward(x.float().to(DEV)).data
    assert calls["split inside"] > 0
    assert _rel(j, ref.forward(x).data) < 1e-6


@needs_kernel
def test_a_wide_dynamic_range_keeps_float32_accuracy():
    # a bright spot on a background 20 decades darker: the scales are set by the spot, the
    # background's entries keep their relative precision as float16 exponents allow
    shape, order = (10, 12, 8), 6
    g = torch.Generator().manual_seed(3)
    x = torch.rand(shape, generator=g, dtype=torch.float64) * 1e-20
    x[4, 5, 3] = 1.0
    ref = JacobiTransform(shape, order, alpha=0.3, beta=0.3, dtype=torch.float64)
    plan = JacobiTransform(shape, order, alpha=0.3, beta=0.3, device=DEV, precision="fp16x3")
    j = plan.forward(x.float().to(DEV)).data
    j64 = ref.forward(x.float().double()).data
    assert _rel(j, j64) < 1e-6
    r = plan.inverse(j)
    assert _rel(r, ref.inverse(j64)) < 1e-6


@needs_kernel
def test_halves_views_and_scales():
    g = torch.Generator().manual_seed(4)
    t = (torch.randn(2, 5, 6, generator=g) * 3e3).to(DEV)
    h = triton_gemm.split_scaled(t)
    top = float(t.abs().max())
    assert h is not None and 2.0**14 <= top * 2.0**h.base < 2.0**15
    back = (h.hi.double() + h.lo.double()) * 2.0 ** -h.base
    assert float((back - t.double()).abs().max()) <= 2.0**-23 * float(t.abs().max())
    assert h.hi.shape == (2, 5, 6) and h.hi.is_contiguous()  # short rows: not padded
    # rows of 4 ROW_ALIGN or more start a multiple of ROW_ALIGN entries apart (strides the
    # products can vectorise), views of a padded buffer
    t70 = (torch.randn(3, 70, generator=g) * 0.5).to(DEV)
    h70 = triton_gemm.split_scaled(t70)
    assert h70.hi.shape == (3, 70) and h70.hi.stride() == h70.lo.stride() == (80, 1)
    back = (h70.hi.double() + h70.lo.double()) * 2.0 ** -h70.base
    assert float((back - t70.double()).abs().max()) <= 2.0**-23 * float(t70.abs().max())
    # a mask of the trailing axes, repeated over the leading one: its entries become 0
    t3 = (torch.randn(2, 3, 70, generator=g) + 3.0).to(DEV)
    mask = torch.rand(3, 70, generator=g) < 0.3
    for m in (mask, mask[0], torch.tensor(True)):
        h3 = triton_gemm.split_scaled(t3, m.to(DEV))
        want = torch.where(m.to(DEV), 0.0, t3).double()
        got = (h3.hi.double() + h3.lo.double()) * 2.0 ** -h3.base
        assert h3.hi.stride() == (240, 80, 1)
        assert float((got - want).abs().max()) <= 2.0**-23 * float(t3.abs().max())
    e = torch.arange(6, dtype=torch.float32, device=DEV)
    h2 = triton_gemm.Halves(h.hi, h.lo, h.base, (None, e))
    v = h2.narrow(2, 1, 3)
    assert v.hi.shape == (2, 5, 3) and v.exps[1].tolist() == [1.0, 2.0, 3.0]
    assert h2.exponents(range(1, 3)).reshape(5, 6)[2].tolist() == (e + h.base).tolist()
    assert h.exponents(range(1, 3)) is None  # one scale: no vector
    assert triton_gemm.split_scaled(torch.tensor([1.0, float("inf")], device=DEV)) is None


@needs_kernel
@pytest.mark.parametrize(("shape", "mask_shape"), [((3, 5, 1100), (5, 1100)),
                                                   ((7, 70), ()), ((2, 9, 501), (501,))])
def test_split_of_padded_rows_with_masks(shape, mask_shape):
    """Rows of 64 samples or more that are not a multiple of 16 go to padded buffers: long
    rows, masks of one row, of several, or one flag."""
    g = torch.Generator().manual_seed(9)
    t = (torch.randn(shape, generator=g) * 40.0).to(DEV)
    mask = (torch.rand(mask_shape, generator=g) < 0.4) if mask_shape else torch.tensor(False)
    h = triton_gemm.split_scaled(t, mask.to(DEV))
    row = shape[-1]
    assert h.hi.shape == shape and h.hi.stride(-2) == -(-row // 16) * 16
    want = torch.where(mask.to(DEV), 0.0, t).double()
    got = (h.hi.double() + h.lo.double()) * 2.0 ** -h.base
    assert float((got - want).abs().max()) <= 2.0**-23 * float(t.abs().max())


@needs_kernel
def test_coefficients_outside_the_set_are_ignored_on_halves(monkeypatch):
    calls = _counting(monkeypatch)
    shape, order = (9, 8, 10), 6
    x = torch.rand(shape, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    plan = JacobiTransform(shape, order, alpha=0.3, beta=0.3, device=DEV, precision="fp16x3",
                           block=2)
    ref = JacobiTransform(shape, order, alpha=0.3, beta=0.3, dtype=torch.float64)
    j = plan.forward(x.float().to(DEV)).data
    outside = plan.outside().to(DEV)
    assert bool((j[outside] == 0).all())  # the forward leaves them at zero
    junk = j.masked_fill(outside, 3.0)
    r = plan.inverse(junk)
    assert calls["split inside"] == 0
    assert _rel(r, ref.inverse(ref.forward(x).data)) < 1e-6


@needs_kernel
def test_small_jobs_keep_the_kernel_that_splits_its_tiles(monkeypatch):
    monkeypatch.setattr(routes, "HALVES_MIN", 10**6)
    calls = _counting(monkeypatch)
    plan = JacobiTransform((8, 9), 4, alpha=0.3, beta=0.3, device=DEV, precision="fp16x3")
    plan.inverse(plan.forward(torch.rand(8, 9, device=DEV)).data)
    assert calls["halves"] == 0 and calls["split inside"] > 0


def _batched_calls(monkeypatch) -> dict[str, int]:
    """Count the one-batch parity passes (:mod:`fastmoments.box.parity_batch`)."""
    from fastmoments.box import parity_batch

    return _count_calls(monkeypatch, parity_batch,
                        {"interleave": "interleave", "split classes": "split_classes"})


@needs_kernel
@pytest.mark.parametrize(("shape", "order", "truncation", "block"),
                         [((2, 9, 11, 10), 8, "total", 4), ((11, 14), 12, "box", 4),
                          ((6, 8, 7), 14, "total", 6)])
def test_parity_classes_as_one_batch_on_halves(monkeypatch, shape, order, truncation, block):
    """parity=True with fp16x3: the classes run as one batch (stacked tables, class-major
    halves), against float64 for the moments and for full and partial reconstructions;
    odd sizes (zero-padded odd parts), a batch of two, both truncations, an order beyond
    the size (every degree of a small axis); the coefficients outside the set come out 0
    and are ignored on the way back."""
    halves = _counting(monkeypatch)
    batched = _batched_calls(monkeypatch)
    spatial = shape[-3:] if len(shape) == 4 else shape
    g = torch.Generator().manual_seed(7)
    x = torch.randn(shape, generator=g, dtype=torch.float64)
    ref = JacobiTransform(spatial, order, alpha=0.4, beta=0.4, truncation=truncation,
                          dtype=torch.float64)
    plan = JacobiTransform(spatial, order, alpha=0.4, beta=0.4, truncation=truncation,
                           device=DEV, precision="fp16x3", parity=True, block=block)
    j = plan.forward(x.float().to(DEV)).data
    j64 = ref.forward(x).data
    assert _rel(j, j64) < 1e-6
    outside = plan.outside()
    if outside is not None:
        assert bool((j[..., outside.to(DEV)] == 0).all())
        j = j.masked_fill(outside.to(DEV), 3.0)
    for m in (order, order // 2):
        assert _rel(plan.inverse(j, order=m), ref.inverse(j64, order=m)) < 1e-6
    assert batched == {"interleave": 1, "split classes": 2}
    assert halves["split inside"] == 0 and halves["halves"] > 0


@needs_kernel
def test_the_reconstruction_reads_the_moments_as_they_are_now():
    """The reconstruction's scale comes from the moments at the call: moments changed in
    place since the forward (here behind torch's back, through ``.data``) are read again."""
    shape = (10, 12, 9)
    plan = JacobiTransform(shape, 9, alpha=0.2, beta=0.2, device=DEV, precision="fp16x3",
                           parity=True, block=4)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(5)).to(DEV)
    moments = plan.forward(x)
    j = moments.data
    first = plan.inverse(moments)
    assert first.shape == shape
    assert torch.equal(first, plan.inverse(j.clone()))
    j.data.mul_(2.0**20)
    again = plan.inverse(moments)
    assert torch.equal(again, plan.inverse(j.clone())) and bool(torch.isfinite(again).all())
    assert _rel(again, first.double().cpu() * 2.0**20) < 1e-6


def test_stacked_tables_bound_both_classes():
    """The stacked even/odd tables share exponents that bound the row and column sums of
    both, and their rows cover the odd class's degrees."""
    from fastmoments.box import parity_batch

    plan = JacobiTransform((9, 12), 10, alpha=0.2, beta=0.2, parity=True)
    op = plan._analysis[9]
    s = parity_batch.stacked(op, 0, 2, 3)
    assert s.split.hi.shape[0] == 4 * 3 and s.nrows == 6 and s.npix == 5
    rows, cols, _top = s.exponents
    for half in op.halves:
        a = half.full.double().abs()
        assert bool((a.sum(1) * 2.0 ** rows[:half.nrows].double() <= 1 + 1e-12).all())
        assert bool((a.sum(0) * 2.0 ** cols[:half.npix].double() <= 1 + 1e-12).all())
    # batch entry c B + b holds the table of class c's parity on this axis (the first of 2)
    back = (s.split.hi.double() + s.split.lo.double()) * s.split.inv_scale
    even, odd = op.halves
    assert torch.allclose(back[0, :even.nrows, :even.npix], even.full.double(), atol=1e-6)
    assert torch.allclose(back[2 * 3, :odd.nrows, :odd.npix], odd.full.double(), atol=1e-6)
    assert float(back[2 * 3, odd.nrows:].abs().max()) == 0.0  # padding rows are zero
    assert [s.rows_upto(d) for d in (-1, 0, 1, 2, 9, 10, 50)] == [0, 1, 1, 2, 5, 6, 6]


@needs_kernel
@pytest.mark.parametrize("shape", [(2, 5, 6, 7), (3, 9, 8)])
def test_fold_into_halves_equals_fold_then_split(shape):
    """One pass that folds and splits gives the bits of the fold followed by the split."""
    from fastmoments.box import fold_kernels

    x = (torch.randn(shape, generator=torch.Generator().manual_seed(10)) * 30.0).to(DEV)
    sym = [True] * (len(shape) - 1)
    want = fold_kernels.fold(x, sym)
    top = float(x.abs().max()) * 2.0 ** len(sym)
    base = triton_gemm.scale_exponent(top)
    both = torch.zeros((2, 8 * x.numel()), dtype=torch.float16, device=DEV)
    hi, start = {}, 0
    for cls, t in want.items():
        hi[cls] = both[0, start:start + t.numel()].view(t.shape)
        start += t.numel()
    fold_kernels.fold_halves(x, sym, hi, both.stride(0), 2.0 ** base)
    for cls, t in want.items():
        ref = triton_gemm.split_scaled(t.contiguous(), top=top)
        lo = both[1].narrow(0, hi[cls].storage_offset(), t.numel()).view(t.shape)
        assert torch.equal(hi[cls], ref.hi) and torch.equal(lo, ref.lo), cls
    with pytest.raises(ValueError, match="hi"):
        fold_kernels.fold_halves(x, sym, {}, 0, 1.0)
