"""Session 29 scratch: every public call family on CUDA under
torch.use_deterministic_algorithms(True) (a user's setting that makes torch refuse
non-deterministic kernels). Prints ok or the error per call."""
import os

import torch

import fastmoments as fm

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
torch.use_deterministic_algorithms(True)
dev = "cuda"
img = torch.rand(64, 64, device=dev)
vol = torch.rand(32, 32, 32, device=dev)
sig = torch.randn(4, 3000, device=dev)
big = torch.randn(300, 131073, device=dev)


def t(name, f):
    try:
        for _ in range(4):
            f()
        torch.cuda.synchronize()
        print("ok  ", name, flush=True)
    except Exception as e:
        print("FAIL", name, type(e).__name__, str(e)[:160], flush=True)


t("legendre 2d", lambda: fm.legendre_moments(img, 20).reconstruct())
t("legendre 3d", lambda: fm.legendre_moments(vol, 12, ndim=3).reconstruct())
t("zernike", lambda: fm.zernike_moments(img, 20).reconstruct())
t("zernike k=3", lambda: fm.zernike_moments(img, 20, k=3).reconstruct())
t("pzm", lambda: fm.pseudo_zernike_moments(img, 12).reconstruct())
t("pcet", lambda: fm.pcet(img, 6, 6).reconstruct())
t("features", lambda: fm.features(img[None].expand(3, 64, 64), orders=6).tensor)
t("object_features", lambda: fm.object_features((img > 0.5).to(torch.int32), img))
t("gaussian1d", lambda: fm.gaussian_filter1d(sig, 16.0))
t("gaussian2d", lambda: fm.gaussian_filter(img, 3.0))
t("morlet", lambda: fm.morlet_transform(sig, 16.0))
t("cwt", lambda: fm.cwt(sig, [4.0, 9.0, 30.0]))
t("batch kernel", lambda: fm.GaussianFilter(16.0)(big))
t("psnr", lambda: fm.psnr(img, img * 0.9))
