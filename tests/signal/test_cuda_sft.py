"""The CUDA C++ batch kernel (:mod:`fastmoments.signal.cuda_sft`).

On the CPU: its algorithm (tiles from the end, segment recursions, the scan, the exact tail
anchors or the carried ones with virtual tiles) and its constants, emulated in float64 NumPy
against the chunked engine, and its eligibility rules. On CUDA with CuPy: the kernel itself
against float64, its NaN/inf flag, ``out=``, and the public call's dispatch.
"""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pytest
import torch

from fastmoments.signal import GaussianFilter, MorletTransform
from fastmoments.signal import cuda_sft as cs
from fastmoments.signal import cuda_sft_source as csrc
from fastmoments.signal.chunked import chunked_apply, group_tables

NP_MODES = {"reflect": "symmetric", "nearest": "edge", "mirror": "reflect", "wrap": "wrap",
            "constant": "constant"}


def _extended(x: np.ndarray, mode: str, cval: float, left: int, right: int) -> np.ndarray:
    """``x`` padded by NumPy's own boundary modes (scipy's names mapped to NumPy's)."""
    kw = {"constant_values": cval} if mode == "constant" else {}
    return np.pad(x, (left, right), mode=NP_MODES[mode], **kw)


def emulate(bank, x: np.ndarray, mode: str, cval: float = 0.0, seg: int = 8,
            threads: int = 8, strided: bool = False, fold: bool = True,
            every: int = 1) -> np.ndarray:
    """The kernel's algorithm for one signal, in float64, on its constants (``strided``: the
    exact anchor summed by the last warp's lanes, when the window allows it; ``fold``: the
    first carried anchor from the signal's last samples, :func:`~fastmoments.signal.
    cuda_sft.virtual_tiles`; ``every``: exact anchors on every ``every``-th tile and the
    last one only, carried between)."""
    (g,) = group_tables(bank)
    strided = strided and cs.strided_tail(int(g.L), seg) and g.L < seg * threads
    k = csrc.constants(bank, seg, threads, strided)
    (g,) = group_tables(bank)
    q, ql, qseg, fix = k["q"], k["ql"], k["qk"][0], k["fix"]
    big_t, n, big_l, off = seg * threads, x.size, int(g.L), int(g.off)
    nt = -(-n // big_t)
    exact = big_l < big_t
    vt = cs.virtual_tiles(g, n, big_t, mode)
    if not fold:
        vt = vt._replace(fold=0, nv=-(-big_l // big_t))
    v_a = None
    nv = 0 if exact else vt.nv
    left = max(0, -off)
    xe = _extended(x, mode, cval, left, (nt + nv + 1) * big_t + big_l + abs(off))
    y = np.zeros(nt * big_t, dtype=complex if bank.complex_output else float)
    anchor = np.zeros(q.size, dtype=complex)
    j = np.arange(big_t)
    for t in range(nt + nv - 1, -1, -1):
        virt = t >= nt
        a0 = t * big_t + off
        if virt and vt.fold:  # the signal's samples [lo, n), the last tile from base
            a0 = vt.base + (t - nt) * big_t
            pos = a0 + j
            xa = np.where((pos >= vt.lo) & (pos < n), x[np.clip(pos, 0, n - 1)], 0.0)
        else:
            xa = xe[a0 + j + left]
        if virt and not vt.fold:  # the window of the first anchor ends at x̃[nt T + off + L)
            xa = np.where(a0 + j < nt * big_t + off + big_l, xa, 0.0)
        xb = np.zeros(big_t) if virt else xe[a0 + big_l + j + left]
        d = (xa[None, :] - ql[:, None] * xb[None, :]).reshape(q.size, threads, seg)
        s_loc = np.zeros_like(d)
        acc = np.zeros(d.shape[:2], dtype=complex)
        for s in range(seg - 1, -1, -1):
            acc = q[:, None] * acc + d[:, :, s]
            s_loc[:, :, s] = acc
        y_loc = np.einsum("r,rts->ts", k["comb_a"], s_loc.real) + np.einsum(
            "r,rts->ts", k["comb_b"], s_loc.imag)  # complex for a complex comb
        exact_now = exact and (t % every == every - 1 or t == nt - 1)
        if exact_now and strided:  # lane i: samples T - L + i + 32 j, Horner in j with q^32
            anchor = np.zeros(q.size, dtype=complex)
            for i in range(min(32, big_l)):
                h = np.zeros(q.size, dtype=complex)
                for u in range(big_t - big_l + i + 32 * ((big_l - 1 - i) // 32), big_t - big_l - 1,
                               -32):
                    h = k["qp"] * h + xb[u]
                anchor += h * k["tailw"][:, threads - 32 + i]
        elif exact_now:  # the sum over the last L samples of the second read, thread by thread
            anchor = np.zeros(q.size, dtype=complex)
            xbs = xb.reshape(threads, seg)
            for i in range(threads):
                s0 = max(0, big_t - big_l - i * seg)
                if s0 >= seg:
                    continue
                h = np.zeros(q.size, dtype=complex)
                for s in range(seg - 1, s0 - 1, -1):
                    h = q * h + xbs[i, s]
                anchor += h * k["tailw"][:, i]
        ends = np.zeros((q.size, threads), dtype=complex)  # S at each segment's end
        e = anchor
        for i in range(threads - 1, -1, -1):
            ends[:, i] = e
            e = s_loc[:, i, 0] + qseg * e
        anchor = e  # the tile's start: the next tile's anchor
        if virt and vt.fold and t == nt + vt.kx:
            v_a = anchor  # the state at A
        if virt and vt.fold and t == nt:
            anchor = _folded_anchor(g, vt, anchor, v_a, x, n, mode, cval)
        if not virt:
            yt = y_loc + np.einsum("sr,rt->ts", fix, ends).real
            if bank.complex_output:
                yt = yt + 1j * np.einsum("sr,rt->ts", k["fix_im"], ends).real
            y[t * big_t:(t + 1) * big_t] = yt.reshape(-1)
    return y[:n]


def _folded_anchor(g, vt, v_end, v_a, x, n, mode, cval):
    """The first anchor from the virtual tiles' state ``v_end`` at the last tile's start and
    ``v_a`` at ``A`` (``None`` when it is formed from the state at ``lo``), in float64: the
    kernel's fold step."""
    def qp(k):
        return csrc._powers(g.alpha, g.omega, np.asarray(k, dtype=float))

    if vt.fold == 2:  # + the constant beyond the end times Σ_{p ∈ [n, A + L)} q^{p - A}
        v = x[n - 1] if mode == "nearest" else cval
        return v_a + v * qp(np.arange(n, vt.a + int(g.L)) - vt.a).sum(axis=1)
    v_lo = qp(vt.base - vt.lo) * v_end  # the state at lo
    if v_a is None:  # less the samples [lo, A), moved to A
        j = np.arange(vt.lo, vt.a)
        v_a = qp(vt.lo - vt.a) * (v_lo - (x[j] * qp(j - vt.lo)).sum(axis=1))
    if mode == "mirror":  # (its half leaves out x[n - 1])
        v_lo = v_lo - x[n - 1] * qp(n - 1 - vt.lo)
    return v_a + qp(int(g.L) - 1) * np.conj(v_lo)


BANKS = [GaussianFilter(3.0).bank, GaussianFilter(4.0, order=2).bank,
         GaussianFilter(9.0, order=1, method="asft").bank, GaussianFilter(40.0).bank,
         MorletTransform(3.0, 6.0).bank, MorletTransform(20.0, 6.0).bank]


@pytest.mark.parametrize("bank", BANKS, ids=["s3", "s4o2", "s9o1asft", "s40", "morlet3",
                                              "morlet20"])
@pytest.mark.parametrize("mode", list(NP_MODES))
@pytest.mark.parametrize("layout", [(8, 8, False), (4, 64, True)], ids=["tile64", "tile256"])
def test_algorithm_and_constants_against_the_chunked_engine(bank, mode, layout, rng):
    """Tiles of 64 samples: exact tail anchors (L < 64) and carried anchors with virtual
    tiles (σ = 40, L > 64); tiles of 256 samples: tails summed strided by the last warp
    (L ≤ 128), by the threads holding them (Morlet σ = 20) and carried (σ = 40); signal
    lengths around the tile size."""
    seg, threads, strided = layout
    j = np.arange(-bank.pad, bank.pad + 1)
    scale = np.abs(bank.kernel(j)).sum(1).max()
    tile = seg * threads
    for n in (1, 5, tile, 2 * tile + 2, 5 * tile + 13):
        if mode == "mirror" and n == 1:
            continue
        x = rng.standard_normal(n)
        y = emulate(bank, x, mode, 0.5, seg, threads, strided)
        ref = chunked_apply(bank, torch.tensor(x[None]), mode, 0.5)[0, 0].numpy()
        np.testing.assert_allclose(y, ref, rtol=0, atol=1e-12 * scale * np.abs(x).max())


@pytest.mark.parametrize("every", [2, 3])
@pytest.mark.parametrize("strided", [False, True])
def test_exact_anchors_on_some_tiles_only(every, strided, rng):
    """Exact anchors every ``every``-th tile (and on the last), carried between (the default
    for tails the last warp does not sum, :data:`~fastmoments.signal.cuda_sft.EVERY_LONG`):
    the emulated kernel against the chunked engine, and the layout's default."""
    bank = MorletTransform(20.0, 6.0).bank if not strided else GaussianFilter(3.0).bank
    j = np.arange(-bank.pad, bank.pad + 1)
    scale = np.abs(bank.kernel(j)).sum(1).max()
    for mode in ("reflect", "wrap", "constant"):
        for n in (300, 7 * 256 + 13):
            x = rng.standard_normal(n)
            y = emulate(bank, x, mode, 0.5, 4, 64, strided, every=every)
            ref = chunked_apply(bank, torch.tensor(x[None]), mode, 0.5)[0, 0].numpy()
            np.testing.assert_allclose(y, ref, rtol=0, atol=1e-12 * scale * np.abs(x).max())
    assert cs._Layout(GaussianFilter(16.0).bank).every == 1  # (strided: every tile)
    long_tail = cs._Layout(GaussianFilter(100.0).bank)
    assert long_tail.exact and not long_tail.strided and long_tail.every == cs.EVERY_LONG


def _split(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [*parts, cur]


def _macro(src: str, name: str) -> str:
    """A generated ``#define`` of the kernel's source as Python statements (``fmaf(a, b, c)``
    evaluated as ``a * b + c`` in float64)."""
    start = src.index(f"#define {name} ") + len(f"#define {name} ")
    body = src[start:].split("\n#define", 1)[0]
    body = body.split("\n\n", 1)[0].replace("\\\n", " ").replace("{", " ").replace("}", " ")
    body = re.sub(r"(\d[\d.]*(?:e[+-]?\d+)?)f\b", r"\1", body)  # float literals
    out = []
    for stmt in (t.strip() for t in _split(body, ";")):
        if stmt.startswith("const float "):
            out += [p.strip() for p in _split(stmt[len("const float "):], ",")]
        elif stmt:
            out.append(stmt)
    return "\n".join(out)


@pytest.mark.parametrize("bank", BANKS[:3] + BANKS[4:5], ids=["s3", "s4o2", "s9o1asft",
                                                              "morlet3"])
def test_generated_code_runs_the_recursion(bank, rng):
    """The straight-line code compiled into the kernel (the sample step and the fix-ups),
    executed as Python on one segment, against the recursion written directly."""
    src = csrc._source(bank)
    k = csrc.constants(bank)
    q, ql = k["q"], k["ql"]
    r_n = q.size
    env = {"fmaf": lambda a, b, c: a * b + c, "sr": [0.0] * r_n, "si": [0.0] * r_n}
    for name in ("FIX", "FIXIM"):
        table = k["fix" if name == "FIX" else "fix_im"]
        env[name + "_R"], env[name + "_I"] = table.real, table.imag
    step, step_v, fix, fix_im = (compile(_macro(src, m), m, "exec")
                                 for m in ("STEP", "STEP_V", "FIXUP", "FIXUP_IM"))
    xa, xb = rng.standard_normal(cs.SEG), rng.standard_normal(cs.SEG)
    # the virtual tiles' step: the recursion with no second read, S = q S + x_A
    s_ref = np.zeros(r_n, dtype=complex)
    for s in range(cs.SEG - 1, -1, -1):
        env.update(va=xa[s])
        exec(step_v, env)
        s_ref = q * s_ref + xa[s]
        got = np.array(env["sr"]) + 1j * np.array(env["si"])
        np.testing.assert_allclose(got, s_ref, rtol=0, atol=1e-6 * np.abs(s_ref).max())
    env["sr"], env["si"] = [0.0] * r_n, [0.0] * r_n
    s_ref = np.zeros(r_n, dtype=complex)
    for s in range(cs.SEG - 1, -1, -1):
        env.update(va=xa[s], vb=xb[s], yl=0.0, yli=0.0)
        exec(step, env)
        s_ref = q * s_ref + xa[s] - ql * xb[s]
        y_ref = k["comb_a"] @ s_ref.real + k["comb_b"] @ s_ref.imag
        got = np.array(env["sr"]) + 1j * np.array(env["si"])
        np.testing.assert_allclose(got, s_ref, rtol=0, atol=1e-6 * np.abs(s_ref).max())
        # the constants are float32 literals: errors relative to the terms, not to y
        terms = np.abs(k["comb_a"]) @ np.abs(s_ref) + np.abs(k["comb_b"]) @ np.abs(s_ref)
        np.testing.assert_allclose(env["yl"] + 1j * env["yli"], y_ref, rtol=0,
                                   atol=2e-6 * terms)
    e = rng.standard_normal(r_n) + 1j * rng.standard_normal(r_n)
    env["sr"], env["si"] = list(e.real), list(e.imag)
    for s in range(cs.SEG):
        env.update(s=s, acc=0.0)
        exec(fix, env)
        assert env["acc"] == pytest.approx((k["fix"][s] @ e).real, rel=1e-12, abs=1e-15)
        if bank.complex_output:
            env["acc"] = 0.0
            exec(fix_im, env)
            assert env["acc"] == pytest.approx((k["fix_im"][s] @ e).real, rel=1e-12,
                                               abs=1e-15)


def test_sum_drops_zero_terms():
    assert csrc._sum([(0.0, "a"), (1.0, "b"), (-1.0, "c"), (0.5, "d")], "v") == (
        "fmaf(0.5f, d, ((v + b) - c))")
    assert csrc._sum([(0.0, "a")]) == "0.f"
    assert csrc._sum([(-1.0, "a")]) == "-a"


def test_source_compiles_the_constants_in():
    bank = GaussianFilter(16.0).bank
    src = csrc._source(bank)
    (g,) = group_tables(bank)
    assert f"#define LEN ({g.L}LL)" in src and "#define EXACT 1" in src
    assert "nanf" not in src and "inff" not in src  # every constant is a finite literal
    # the first row (q = 1) keeps no imaginary part, the others do
    step = src[src.index("#define STEP"):src.index("#define FIXUP")]
    assert "si[0]" not in step and "si[1]" in step
    assert "#define EXACT 0" in csrc._source(GaussianFilter(1024.0).bank)  # L > 2048


def test_eligibility_on_the_cpu():
    bank = GaussianFilter(16.0).bank
    x = torch.zeros(1024, 4096)
    assert not cs.takes(bank, x, "reflect")  # CPU tensor
    assert not cs.takes(MorletTransform(16.0, 6.0).bank, x, "reflect")
    from fastmoments.signal import CWT
    from fastmoments.signal.cwt import _group_bank

    cwt = _group_bank(tuple(CWT([2.0, 7.0]).plans))  # several channels: never eligible
    assert not cs._layout(cwt).eligible
    assert cs._layout(MorletTransform(16.0, 6.0).bank).eligible


def test_layout_decisions():
    """Exact anchors for windows shorter than a tile; their tail summed strided by the last
    warp up to 32 segments (else by the threads holding it)."""
    bank = GaussianFilter(16.0).bank
    assert cs._layout(bank).strided and cs._layout(bank).exact
    assert not cs._layout(GaussianFilter(64.0).bank).strided  # L > 32 seg: by segments
    assert not cs._layout(GaussianFilter(1024.0).bank).exact  # L > a tile: carried


def test_a_kernel_that_does_not_compile_falls_back(monkeypatch):
    """A CuPy that cannot compile (built for another CUDA, say): one warning, then the
    bank is no longer eligible (the Triton kernels run)."""

    class Broken:
        class RawModule:
            def __init__(self, **kw):
                raise RuntimeError("nvrtc: no such CUDA")

    monkeypatch.setattr(cs, "cupy", Broken)
    lay = cs._Layout(GaussianFilter(16.0).bank)
    assert lay.eligible
    with pytest.warns(RuntimeWarning, match="did not compile"):
        assert lay.kernel is None
    assert not lay.eligible


@pytest.mark.parametrize("mode", list(NP_MODES))
def test_folded_first_anchor(mode, rng):
    """The first carried anchor from the signal's last samples (:func:`~fastmoments.signal.
    cuda_sft.virtual_tiles`): the state at ``A`` taken at a tile start or formed from the one
    at ``lo``, reflect/mirror (conjugated half) and nearest/constant (geometric sum), against
    the chunked engine and against the unfolded tiles; the fold saves virtual tiles."""
    bank = GaussianFilter(40.0).bank  # L = 341, tiles of 64
    (g,) = group_tables(bank)
    j = np.arange(-bank.pad, bank.pad + 1)
    scale = np.abs(bank.kernel(j)).sum(1).max()
    seen = set()
    asft = GaussianFilter(30.0, method="asft").bank  # α > 0, L = 255: nearest/constant fold
    (ga,) = group_tables(asft)
    for n in (300, 333, 448):
        x = rng.standard_normal(n) + 3.0
        ref = chunked_apply(asft, torch.tensor(x[None]), mode, 0.5)[0, 0].numpy()
        y = emulate(asft, x, mode, 0.5, 8, 8)
        np.testing.assert_allclose(y, ref, rtol=0, atol=1e-12 * np.abs(ref).max())
        assert cs.virtual_tiles(ga, n, 64, mode).fold == (2 if mode in ("nearest", "constant")
                                                          else 0)
    for n in (320, 333, 384, 400, 448, 600, 1000):
        vt = cs.virtual_tiles(g, n, 64, mode)
        seen.add((vt.fold, vt.kx < 0))
        if vt.fold:
            assert vt.nv < -(-int(g.L) // 64)
        x = rng.standard_normal(n) + 3.0  # (an offset: the sums do not cancel)
        ref = chunked_apply(bank, torch.tensor(x[None]), mode, 0.5)[0, 0].numpy()
        for fold in (True, False):
            y = emulate(bank, x, mode, 0.5, 8, 8, fold=fold)
            np.testing.assert_allclose(y, ref, rtol=0, atol=1e-12 * scale * np.abs(x).max())
    expected = {"reflect": {(1, True), (1, False)}, "mirror": {(1, True), (1, False)},
                "nearest": {(2, False)}, "constant": {(2, False)}, "wrap": {(0, False)}}
    assert expected[mode] <= seen, seen


def test_no_fold_for_short_windows_or_attenuation():
    """Windows of fewer than FOLD_TILES tiles, and reflections of attenuated rows, keep the
    unfolded virtual tiles."""
    (g,) = group_tables(GaussianFilter(40.0).bank)  # L = 341
    assert cs.virtual_tiles(g, 384, 256, "reflect").fold == 0  # 2 tiles of 256
    assert cs.virtual_tiles(g, 384, 64, "reflect").fold == 1
    (ga,) = group_tables(GaussianFilter(30.0, method="asft").bank)
    if np.any(np.asarray(ga.alpha) > 0) and ga.L >= 192:
        assert cs.virtual_tiles(ga, 8 * 64, 64, "reflect").fold == 0
        assert cs.virtual_tiles(ga, 8 * 64, 64, "nearest").fold in (0, 2)


cuda_cupy = pytest.mark.skipif(
    not torch.cuda.is_available() or importlib.util.find_spec("cupy") is None,
    reason="needs CUDA and CuPy")


@cuda_cupy
def test_kernel_against_float64(rng):
    """Exact anchors (σ ≤ 240) and carried ones, every mode, lengths around the tile; at
    σ = 8192 the virtual tiles read within one reflection (n = 102400: 32-bit indices by
    comparisons) or beyond it (n = 30000: the remainder), and the first anchor is folded
    with the state at ``A`` formed directly (n = 102400) or at a tile start (n = 100000);
    an attenuated bank (ASFT) folds only for nearest/constant (the geometric sum)."""
    for sigma, order in ((3.0, 0), (16.0, 2), (64.0, 1), (300.0, 0), (1024.0, 2),
                         (16.0, None), (300.0, None), (8192.0, 0), (1024.0, "asft")):
        bank = (MorletTransform(sigma, 6.0).bank if order is None
                else GaussianFilter(sigma, method="asft").bank if order == "asft"
                else GaussianFilter(sigma, order=order, method="sft").bank)
        j = np.arange(-bank.pad, bank.pad + 1)
        scale = np.abs(bank.kernel(j)).sum(1).max()
        for n in (1, 5, 2047, 2049, 30000) + ((102400, 100000) if sigma > 4096 else ()):
            x = torch.tensor(rng.standard_normal((3, n)), dtype=torch.float32, device="cuda")
            for mode in NP_MODES:
                if mode == "mirror" and n == 1:
                    continue
                y = cs.apply(bank, x, mode, 0.5)
                ref = chunked_apply(bank, x.double(), mode, 0.5)
                err = float((y.to(ref.dtype) - ref).abs().max()) / (scale * float(x.abs().max()))
                # float32: the Triton kernels' bound, twice for anchors carried over tiles
                assert err < 4e-6, (sigma, order, n, mode, err)


@cuda_cupy
def test_kernel_flag_and_out(rng):
    bank = GaussianFilter(16.0).bank
    x = torch.tensor(rng.standard_normal((4, 10000)), dtype=torch.float32, device="cuda")
    flag = torch.ones((), dtype=torch.uint8, device="cuda")
    ref = cs.apply(bank, x, "reflect", flag=flag)
    assert int(flag) == 1
    for pos in (0, 5000, 9999):
        for bad in (float("nan"), float("inf")):
            xb = x.clone()
            xb[2, pos] = bad
            flag.fill_(1)
            cs.apply(bank, xb, "reflect", flag=flag)
            assert int(flag) == 0, (pos, bad)
    buf = torch.full((4, 2, 10000), 7.0, device="cuda")
    o = buf[:, :1]
    assert cs.apply(bank, x, "reflect", out=o) is o
    assert torch.equal(o, ref) and bool((buf[:, 1] == 7.0).all())


@cuda_cupy
def test_launches_from_another_thread_give_the_same_bits(rng):
    """A launch from a new thread (where the device may not be current yet: the launch
    makes the input's device current) gives the same bits and the same NaN/inf flag."""
    import threading

    bank = GaussianFilter(16.0).bank
    x = torch.tensor(rng.standard_normal((4, 10000)), dtype=torch.float32, device="cuda")
    y = cs.apply(bank, x, "reflect")
    got = {}

    def other():
        got["y"] = cs.apply(bank, x, "reflect")
        flag = torch.ones((), dtype=torch.uint8, device=x.device)
        xb = x.clone()
        xb[1, 7] = float("nan")
        cs.apply(bank, xb, "reflect", flag=flag)
        got["finite"] = bool(flag)

    th = threading.Thread(target=other)
    th.start()
    th.join()
    assert torch.equal(got["y"], y) and got["finite"] is False


@cuda_cupy
def test_public_batches_take_the_kernel(rng, monkeypatch):
    calls = []  # the kernel's launches
    real = cs.apply
    monkeypatch.setattr(cs, "apply", lambda *a, **k: calls.append(1) or real(*a, **k))
    plan = GaussianFilter(16.0, order=1)
    n = cs.MIN_BYTES // (8 * cs.MIN_SIGNALS) + 1  # too large for the plans' CUDA graphs
    x = torch.tensor(rng.standard_normal((cs.MIN_SIGNALS, n)), dtype=torch.float32,
                     device="cuda")
    y = plan(x)
    assert calls == [1]
    assert torch.equal(plan(x, progress=False), y) and calls == [1, 1]
    morlet = MorletTransform(16.0, 6.0)
    z = morlet(x)
    assert z.dtype == torch.complex64 and torch.equal(morlet(x, progress=False), z)
    assert torch.equal(plan(x[None], axis=2), y[None])  # batch axes of any shape
    calls.clear()
    with monkeypatch.context() as m:  # the Triton kernels
        m.setattr(cs, "eligible_layout", lambda *a: None)
        ref = plan(x)
    assert calls == []
    assert float((y - ref).abs().max()) <= 4e-6 * float(ref.abs().max())
    x[7, 100] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        plan(x)
    x[7, 100] = 0.0
    assert plan(x).shape == x.shape
    assert calls == [1, 1]
    assert not cs.takes(plan.bank, x[: cs.MIN_SIGNALS - 1], "reflect")  # small batches: Triton
    assert not cs.takes(plan.bank, x[:, : n // 2], "reflect")  # graph-sized calls: Triton


@cuda_cupy
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_batches_on_a_second_gpu(rng):
    """A batch on cuda:1 with cuda:0 current (the plan's call makes cuda:1 current, see
    ``tests/test_device_follows_input.py``) and with cuda:1 current: the same bits on every
    call, the result on the input's device, the NaN/inf error,
    and the first GPU's result within float32 rounding."""
    n = cs.MIN_BYTES // (8 * cs.MIN_SIGNALS) + 1
    x0 = torch.tensor(rng.standard_normal((cs.MIN_SIGNALS, n)), dtype=torch.float32,
                      device="cuda:0")
    x1 = x0.to("cuda:1")
    ref = GaussianFilter(64.0)(x0).cpu()
    for current in (0, 1):
        plan = GaussianFilter(64.0)
        with torch.cuda.device(current):
            ys = [plan(x1) for _ in range(3)]
            assert all(y.device == x1.device for y in ys)
            assert all(torch.equal(y, ys[0]) for y in ys[1:])
            xb = x1.clone()
            xb[3, 5] = float("nan")
            with pytest.raises(ValueError, match="NaN or infinity"):
                plan(xb)
        y = ys[0].cpu()
        assert float((y - ref).abs().max()) <= 4e-6 * float(ref.abs().max())


@pytest.mark.parametrize("sigma", [16.0, 1024.0, 8192.0])
@pytest.mark.parametrize("mode", list(NP_MODES))
def test_launch_fields_and_the_in_kernel_check(sigma, mode):
    """The fields of ``struct Args`` after the pointers (:func:`cuda_sft._fields`): the tiles, the
    mode's index, ``cval``, and the first anchor's virtual tiles (none with exact anchors);
    and whether the kernel's reads cover every sample, so that it forms the NaN/inf verdict
    itself (a window centred on the output sample: always)."""
    bank = GaussianFilter(sigma).bank
    lay = cs._Layout(bank)
    for n in (1000, 102400, 300000):
        nt, nv, m, cval, fold, kx, a, lo, base = cs._fields(lay, n, mode, 0.25)
        assert nt == -(-n // lay.tile) and m == cs.MODES.index(mode) and cval == 0.25
        vt = (0, 0, 0, 0, 0, 0) if lay.exact else tuple(cs.virtual_tiles(lay.g, n, lay.tile,
                                                                          mode))
        assert (fold, nv, a, lo, base, kx) == vt
        assert lay.exact == (lay.g.L < lay.tile)
        assert cs._checks_inside(lay.g, n, lay.tile)
