"""The SFT engines, the boundary modes and the scalogram command."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.ndimage import correlate1d

from fastmoments.cli.main import main
from fastmoments.signal.boundary import MODES, extend, extension_indices
from fastmoments.signal.sliding import SFTBank, _cumsum, scan_linear


def _random_bank(rng, alpha: bool) -> SFTBank:
    r = 7
    half = np.array([3, 3, 9, 9, 9, 20, 20])
    return SFTBank(
        omega=rng.uniform(-3, 3, r), alpha=rng.uniform(0.01, 0.3, r) if alpha else np.zeros(r),
        half=half, shift=np.array([0, 0, 2, 2, 2, -4, -4]) if alpha else np.zeros(r, int),
        mu=rng.standard_normal(r) + 1j * rng.standard_normal(r),
        nu=rng.standard_normal(r) + 1j * rng.standard_normal(r),
        channel=np.array([0, 0, 1, 1, 1, 2, 2]), n_channels=3, complex_output=True)


@pytest.mark.parametrize("alpha", [False, True])
def test_engines_match_the_bank_kernel(alpha, rng, device):
    """Each engine computes Σ_j h[j] x[n - j] with h = SFTBank.kernel (direct double sum)."""
    bank = _random_bank(rng, alpha)
    n = 64
    xp = torch.tensor(rng.standard_normal((2, n + 2 * bank.pad)), device=device)
    j = np.arange(-bank.pad, bank.pad + 1)
    h = bank.kernel(j)  # (3, 2 pad + 1)
    xnp = xp.cpu().numpy()
    ref = np.zeros((2, 3, n), complex)
    for t, jj in enumerate(j):  # y[n] = Σ_j h[j] xp[pad + n - j]
        ref += h[None, :, t, None] * xnp[:, None, bank.pad - jj: bank.pad - jj + n]
    for engine in ("recursive", "sliding") + (() if alpha else ("prefix",)):
        y = bank.apply(xp, n, engine).cpu().numpy()
        np.testing.assert_allclose(y, ref, rtol=0, atol=1e-12)


def test_scan_linear_matches_the_recursion(rng):
    x = rng.standard_normal((2, 1000))
    r = np.array([0.999 * np.exp(0.3j), np.exp(-1.7j)])
    ref = np.zeros((2, 1000), complex)
    for k in range(2):
        acc = 0
        for i in range(1000):
            acc = x[k, i] + r[k] * acc
            ref[k, i] = acc
    v = scan_linear(torch.tensor(x), torch.tensor(r), block=16).numpy()
    np.testing.assert_allclose(v, ref, rtol=0, atol=1e-11)


def test_two_level_cumsum(rng, device):
    f = torch.tensor(rng.standard_normal((3, 5000)) + 1j * rng.standard_normal((3, 5000)),
                     device=device)
    np.testing.assert_allclose(_cumsum(f, block=256, two_level=True).cpu().numpy(),
                               torch.cumsum(f, -1).cpu().numpy(), atol=1e-11)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", [1, 2, 7])
@pytest.mark.parametrize(("left", "right"), [(11, 13), (0, 5), (4, 0), (0, 0)])
def test_extension_matches_scipy(mode, n, left, right, rng):
    x = rng.standard_normal(n)
    ext = extend(torch.tensor(x)[None], left, right, mode, cval=2.5)[0].numpy()
    assert ext.shape == (n + left + right,)
    for off in range(-left, right + 1):  # correlate1d with a shifted delta reads x[i + off]
        w = np.zeros(2 * max(left, right) + 1)
        w[max(left, right) + off] = 1.0
        ref = correlate1d(x, w, mode=mode, cval=2.5)
        np.testing.assert_allclose(ext[left + off: left + off + n], ref, atol=0)
    assert extension_indices(n, left, right, mode).shape == (n + left + right,)
    # differentiable: the gradient of the sum counts how often each sample is read
    xt = torch.tensor(x, requires_grad=True)
    extend(xt[None], left, right, mode, cval=2.5).sum().backward()
    idx = extension_indices(n, left, right, mode)
    np.testing.assert_array_equal(xt.grad.numpy(), np.bincount(idx[idx >= 0], minlength=n))


def test_scalogram_cli(tmp_path, rng, capsys):
    from scipy.io import wavfile

    out = tmp_path / "chirp.png"
    assert main(["scalogram", "chirp", "--num-scales", "12", "--out", str(out)]) == 0
    assert out.stat().st_size > 1000
    csv = tmp_path / "sig.csv"
    np.savetxt(csv, np.c_[np.arange(600), np.sin(0.2 * np.arange(600))], delimiter=",")
    assert main(["scalogram", str(csv), "--column", "1", "--scales", "3,6,12",
                 "--rate", "100", "--out", str(tmp_path / "csv.png")]) == 0
    wav = tmp_path / "sig.wav"
    wavfile.write(wav, 8000, (1000 * rng.standard_normal((800, 2))).astype(np.int16))
    assert main(["scalogram", str(wav), "--max-scale", "40", "--num-scales", "6",
                 "--method", "asft", "--out", str(tmp_path / "wav.png")]) == 0
    assert "scalogram of 800 samples at 6 scales" in capsys.readouterr().out
    assert main(["scalogram", str(tmp_path / "missing.wav"), "--out", str(out)]) == 2
    assert main(["scalogram", "chirp", "--xi", "-1", "--out", str(out)]) == 2
    assert "xi" in capsys.readouterr().err
