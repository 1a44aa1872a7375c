"""The CUDA C++ source of the batch SFT kernel of :mod:`.cuda_sft`, generated per bank.

The bank's constants are compiled into its module: the recursion is straight-line code whose
constants are operands of the multiply-adds, terms that round to zero dropped (see the notes of
:mod:`.cuda_sft` for the algorithm).
"""

from __future__ import annotations

import numpy as np

from .chunked import _powers, group_tables

__all__ = ["FOLD_TILES", "SEG", "THREADS", "constants", "folds", "strided_tail"]


SEG = 16  # samples per thread


THREADS = 128


_SOURCE = r"""
#define SEG %(seg)d
#define NTHR %(threads)d
#define NW (NTHR / 32)
#define TILE (SEG * NTHR)
#define PADS (SEG + 1)
#define KSTRIDE ((NTHR / SEG) * PADS)
#define EXACT %(exact)d
#define CPLX %(cplx)d
#define EVERY %(every)d
#define TAIL_WARP ((TILE - LEN) / (32 * SEG))
#define STRIDED %(strided)d
#define TJ ((LEN + 31) / 32)
#define TAIL_FIRST (STRIDED ? NW - 1 : TAIL_WARP)
#define R %(rows)d
#define FOLD %(fold)d

%(tables)s

// the arguments as one struct: one parameter to marshal on the host instead of ten
struct Args {
    const float* x; long long sx; long long n; float* y; long long sy; unsigned char* flag;
    int nt; int nv; int mode; float cval;
    // the first anchor (see virtual_tiles)
    int fold; int kx; long long va; long long vlo; long long vbase;
};

#if FOLD
// q^k in float64 for row r (the phase reduced modulo 2 pi, as on the host)
__device__ __forceinline__ void qpow(int r, double k, double& pr, double& pi) {
    double c, s2;
    sincos(fmod(OMEGA[r] * k, 6.283185307179586), &s2, &c);
    const double m = ALPHA[r] == 0.0 ? 1.0 : exp(-ALPHA[r] * k);
    pr = m * c; pi = m * s2;
}

// the first anchor s (shared memory, interleaved) from the virtual tiles' state s at the
// last tile's start b, over [lo, n), and their state va at A (a tile start; or, direct, from
// s less the few samples [lo, A)): fold 1, v_A + q^{L-1} conj(v_lo) with v_lo = q^{b-lo} s
// (mirror: less x[n-1] q^{n-1-lo}); fold 2, v_A + v q^{n-A} (1 - q^m) / (1 - q), m = A + L - n,
// v = x[n-1] or cval. Not inlined: it runs once per signal, and inlined it made the loop spill
__device__ __noinline__ void fold_anchor(float* s, const float* va, const float* __restrict__ xs,
                                         long long n, long long a, long long lo, long long b,
                                         int fold, bool direct, int mode, float cval) {
    const double xl = (double)__ldg(xs + n - 1);
    for (int r = 0; r < R; ++r) {
        double pr, pi, zr, zi, ar = va[2 * r], ai = va[2 * r + 1];
        if (fold == 1) {
            qpow(r, (double)(b - lo), pr, pi);
            const double cr = s[2 * r], ci = s[2 * r + 1];
            double vr = pr * cr - pi * ci, vi = pr * ci + pi * cr;
            if (direct) {  // v_A = q^{lo-A} (v_lo - Σ_{j ∈ [lo, A)} x[j] q^{j-lo})
                double dr = 0.0, di = 0.0, qr, qi;
                qpow(r, 1.0, qr, qi);
                for (long long j = a - 1; j >= lo; --j) {  // Horner from the top
                    const double t = dr * qr - di * qi + (double)__ldg(xs + j);
                    di = dr * qi + di * qr; dr = t;
                }
                qpow(r, (double)(lo - a), pr, pi);
                ar = pr * (vr - dr) - pi * (vi - di); ai = pr * (vi - di) + pi * (vr - dr);
            }
            if (mode == 2) {  // mirror: the reflected half leaves out x[n - 1]
                qpow(r, (double)(n - 1 - lo), pr, pi);
                vr -= xl * pr; vi -= xl * pi;
            }
            qpow(r, (double)(LEN - 1), pr, pi);  // q^{L-1} conj(v)
            zr = pr * vr + pi * vi; zi = pi * vr - pr * vi;
        } else {
            const double v = mode == 1 ? xl : (double)cval;
            const double m = (double)(a + LEN - n);
            double gr, gi;
            if (ALPHA[r] == 0.0 && OMEGA[r] == 0.0) {
                gr = m; gi = 0.0;
            } else {  // (1 - q^m) / (1 - q)
                qpow(r, m, pr, pi);
                double ur = 1.0 - pr, ui = -pi;
                qpow(r, 1.0, pr, pi);
                const double dr = 1.0 - pr, di = -pi, dd = dr * dr + di * di;
                gr = (ur * dr + ui * di) / dd; gi = (ui * dr - ur * di) / dd;
            }
            qpow(r, (double)(n - a), pr, pi);
            zr = v * (pr * gr - pi * gi); zi = v * (pr * gi + pi * gr);
        }
        s[2 * r] = (float)(ar + zr);
        s[2 * r + 1] = (float)(ai + zi);
    }
}
#endif

// the boundary modes of a position beyond one reflection of the signal (short signals),
// by the remainder
__device__ __forceinline__ long long far_index(long long pos, long long n, int mode) {
    long long j;
    if (mode == 0) {  // reflect: period 2n, half-sample symmetric
        long long per = 2 * n;
        j = pos %% per; if (j < 0) j += per; if (j >= n) j = per - 1 - j;
    } else if (mode == 2) {  // mirror: period 2n - 2, whole-sample symmetric
        long long per = 2 * n - 2; if (per < 1) per = 1;
        j = pos %% per; if (j < 0) j += per; if (j >= n) j = per - j;
    } else {  // wrap
        j = pos %% n; if (j < 0) j += n;
    }
    return j;
}

__device__ __forceinline__ float load_ext(const float* __restrict__ base, long long pos,
                                          long long n, float cval, int mode) {
    // positions within one reflection of the signal (every tile of a signal longer than
    // its window's half) by comparisons; a 64-bit remainder costs about a hundred
    // instructions, and at σ = 8192 most loads of a 102400-sample signal come here
    long long j = pos;
    if (pos < 0 || pos >= n) {
        if (mode == 4) return cval;  // constant
        const bool below = pos < 0;
        if (mode == 1) {  // nearest
            j = below ? 0 : n - 1;
        } else if (mode == 0 && pos >= -n && pos < 2 * n) {  // reflect
            j = below ? -1 - pos : 2 * n - 1 - pos;
        } else if (mode == 2 && n > 1 && pos > -n && pos < 2 * n - 1) {  // mirror
            j = below ? -pos : 2 * n - 2 - pos;
        } else if (mode == 3 && pos >= -n && pos < 2 * n) {  // wrap
            j = below ? pos + n : pos - n;
        } else {
            j = far_index(pos, n, mode);
        }
    }
    return __ldg(base + j);
}

__device__ __forceinline__ void cmul_add(float& vr, float& vi, float ar, float ai,
                                         float ur, float ui) {
    // v += a * u (complex)
    vr = fmaf(ar, ur, fmaf(-ai, ui, vr));
    vi = fmaf(ar, ui, fmaf(ai, ur, vi));
}

extern "C" __global__ void __launch_bounds__(NTHR, %(blocks)d)
sft_rows(const Args args) {
    const float* __restrict__ x = args.x;
    float* __restrict__ y = args.y;
    const long long sx = args.sx, n = args.n, sy = args.sy;
    const int nt = args.nt, nv = args.nv, mode = args.mode, fold = args.fold;
    const float cval = args.cval;
    unsigned char* flag = args.flag;
    __shared__ float xa[NTHR * PADS];
    __shared__ float xb[NTHR * PADS];
    __shared__ float wsum[NW][2 * R];
    __shared__ float carry[NW][2 * R];
    __shared__ float anchor[2 * R];
#if FOLD
    __shared__ float vsnap[2 * R];  // the state at A (a folded first anchor)
#endif
#if EXACT
    __shared__ float tsum[NW][2 * R];
#endif
#if STRIDED
    __shared__ float part[32][2 * R + 1];
#endif
    const int tid = threadIdx.x, lane = tid & 31, w = tid >> 5;
    const float* xs = x + (long long)blockIdx.x * sx;
    float* ys = y + (long long)blockIdx.x * sy;
    if (tid < 2 * R) anchor[tid] = 0.f;
    int bad = 0;
    // thread tid loads samples tid + k NTHR of a tile: segment (tid + k NTHR) / SEG, place
    // tid %% SEG (NTHR is a multiple of SEG), padded so that the segment reads do not conflict
    const int at0 = (tid / SEG) * PADS + tid %% SEG;
    float* ra = xa + tid * PADS;
    float* rb = xb + tid * PADS;
    // tiles whose reads lie within one reflection of the signal, in (-n, 2n), take 32-bit
    // indices (signals shorter than 2^29 samples)
    const bool near = n > 1 && n < (1LL << 29);
    for (int t = nt + nv - 1; t >= 0; --t) {
        const bool virt = !EXACT && t >= nt;  // (exact anchors: no virtual tiles)
        // folded: the virtual tiles run over the signal's samples [lo, n), from vbase
        const bool vfold = FOLD && virt && fold != 0;
        const long long a0 = vfold ? args.vbase + (long long)(t - nt) * TILE
                                   : (long long)t * TILE + OFF;
        // the window of the first anchor ends at x̃[nt T + off + L)
        const long long lim = virt ? (long long)nt * TILE + OFF + LEN : a0 + TILE;
        const bool in_a = a0 >= 0 && a0 + TILE <= n;
        const bool in_b = a0 + LEN >= 0 && a0 + LEN + TILE <= n;
        __syncthreads();  // the previous tile is out of shared memory
#if FOLD
        // the first real tile: fold the virtual tiles' states into the first anchor (here,
        // where no recursion state is live: a call inside the loop body made it spill)
        if (fold != 0 && t == nt - 1 && tid == 0)
            fold_anchor(anchor, vsnap, xs, n, args.va, args.vlo, args.vbase, fold, args.kx < 0,
                        mode, cval);
#endif
        if (vfold) {
#pragma unroll
            for (int k = 0; k < SEG; ++k) {
                const long long pos = a0 + tid + k * NTHR;
                xa[at0 + k * KSTRIDE] = pos >= args.vlo && pos < n ? __ldg(xs + pos) : 0.f;
            }
        } else if (!virt && in_a && in_b) {  // inside the signal: plain loads, all issued at once
            const float* pa = xs + a0 + tid;
#pragma unroll
            for (int k = 0; k < SEG; ++k) {
                xa[at0 + k * KSTRIDE] = __ldg(pa + k * NTHR);
                xb[at0 + k * KSTRIDE] = __ldg(pa + LEN + k * NTHR);
            }
        } else if (!EXACT && near && a0 > -n && (virt ? a0 + TILE : a0 + LEN + TILE) < 2 * n) {
            // (exact anchors: only the first and the last tile come here, and the branch made
            // the compiler spill)
            // within one reflection of the signal (the edge tiles and the virtual ones of
            // long windows): 32-bit indices by comparisons, loads all issued at once
            // j = f pos + c below the signal (b) and above it (a); (re)computed here, where
            // they are used: kept over the whole loop, they made the compiler spill
            const int n32 = (int)n;
            int fb = 0, cb = 0, fa = 0, ca = n32 - 1;  // nearest (constant: any index)
            if (mode == 0) { fb = -1; cb = -1; fa = -1; ca = 2 * n32 - 1; }  // reflect
            else if (mode == 2) { fb = -1; cb = 0; fa = -1; ca = 2 * n32 - 2; }  // mirror
            else if (mode == 3) { fb = 1; cb = n32; fa = 1; ca = -n32; }  // wrap
            const int p0 = (int)a0 + tid;
            const int live = (int)min(lim - a0, (long long)TILE);  // (virtual: the window's end)
#pragma unroll
            for (int k = 0; k < SEG; ++k) {
                const int pos = p0 + k * NTHR;
                const int j = pos < 0 ? fb * pos + cb : (pos >= n32 ? fa * pos + ca : pos);
                float va = __ldg(xs + j);
                if (mode == 4 && (unsigned)pos >= (unsigned)n32) va = cval;
                xa[at0 + k * KSTRIDE] = tid + k * NTHR < live ? va : 0.f;
            }
            if (!virt) {  // (virtual tiles read no x_B)
#pragma unroll
                for (int k = 0; k < SEG; ++k) {
                    const int pos = p0 + (int)LEN + k * NTHR;
                    const int j = pos < 0 ? fb * pos + cb : (pos >= n32 ? fa * pos + ca : pos);
                    float vb = __ldg(xs + j);
                    if (mode == 4 && (unsigned)pos >= (unsigned)n32) vb = cval;
                    xb[at0 + k * KSTRIDE] = vb;
                }
            }
        } else {  // anywhere (short signals): the boundary modes by the remainder
#pragma unroll 4
            for (int k = 0; k < SEG; ++k) {
                const long long pos = a0 + k * NTHR + tid;
                float va = 0.f;
                if (pos < lim) va = in_a ? __ldg(xs + pos) : load_ext(xs, pos, n, cval, mode);
                xa[at0 + k * KSTRIDE] = va;
                if (!virt)  // (virtual tiles read no x_B)
                    xb[at0 + k * KSTRIDE] = in_b ? __ldg(xs + pos + LEN)
                                                 : load_ext(xs, pos + LEN, n, cval, mode);
            }
        }
        __syncthreads();
#if EXACT
        // every EVERY-th tile and the last one
        const bool exact_now = (t %% EVERY == EVERY - 1) || t == nt - 1;
        // the anchor S[(t+1)T] = Σ_{u ∈ [T-L, T)} q^{u-(T-L)} x_B[u], exactly. Longer tails:
        // the threads holding that tail of the second read sum their part (Horner from the
        // end, then the weight q^{u0-(T-L)} of their first tail sample u0), then a sum over
        // the tail warps
        {
            float tr[R], ti[R];
#pragma unroll
            for (int r = 0; r < R; ++r) { tr[r] = 0.f; ti[r] = 0.f; }
#if STRIDED
            // strided (L <= 32 SEG: the tail lies in the last warp's segments): lane i sums
            // the samples u = T - L + i + 32 j (Horner in j with q^32), times its weight q^i
            if (exact_now && w == NW - 1) {
#pragma unroll
                for (int j = TJ - 1; j >= 0; --j) {
                    if (lane + 32 * j < LEN) {
                        const int u = TILE - LEN + lane + 32 * j;
                        const float vb = xb[(u / SEG) * PADS + u %% SEG];
#pragma unroll
                        for (int r = 0; r < R; ++r) {
                            const float nr = fmaf(QP_R[r], tr[r], fmaf(-QP_I[r], ti[r], vb));
                            const float ni = fmaf(QP_R[r], ti[r], QP_I[r] * tr[r]);
                            tr[r] = nr; ti[r] = ni;
                        }
                    }
                }
                bad |= !(fabsf(tr[0]) + fabsf(ti[0]) <= 3.402823466e38f);  // weight 1
#pragma unroll
                for (int r = 0; r < R; ++r) {  // times q^i
                    const float a = tr[r], b = ti[r];
                    const float wr = __ldg(&TAILW[2 * r][tid]);
                    const float wi = __ldg(&TAILW[2 * r + 1][tid]);
                    part[lane][2 * r] = a * wr - b * wi;
                    part[lane][2 * r + 1] = a * wi + b * wr;
                }
                // the warp's sum through shared memory: shuffles in a branch that the compiler
                // cannot prove warp-uniform compile to slow collective operations
                __syncwarp();  // (also: the tail's reads come before the y_loc writes below)
                if (lane < 2 * R) {
                    float s0 = 0.f, s1 = 0.f;
#pragma unroll
                    for (int k = 0; k < 32; k += 2) {
                        s0 += part[k][lane]; s1 += part[k + 1][lane];
                    }
                    tsum[NW - 1][lane] = s0 + s1;
                }
            }
#else
            if (exact_now && w >= TAIL_WARP) {
                const int s0 = max(0, (int)(TILE - LEN) - tid * SEG);
                if (s0 < SEG) {
#pragma unroll
                    for (int s = SEG - 1; s >= 0; --s) {
                        if (s >= s0) {
                            const float vb = rb[s];
#pragma unroll
                            for (int r = 0; r < R; ++r) {
                                const float nr = fmaf(Q_R[r], tr[r], fmaf(-Q_I[r], ti[r], vb));
                                const float ni = fmaf(Q_R[r], ti[r], Q_I[r] * tr[r]);
                                tr[r] = nr; ti[r] = ni;
                            }
                        }
                    }
                    bad |= !(fabsf(tr[0]) + fabsf(ti[0]) <= 3.402823466e38f);  // weight 1
#pragma unroll
                    for (int r = 0; r < R; ++r) {  // times q^{u0-(T-L)}
                        const float a = tr[r], b = ti[r];
                        const float wr = __ldg(&TAILW[2 * r][tid]);
                        const float wi = __ldg(&TAILW[2 * r + 1][tid]);
                        tr[r] = a * wr - b * wi;
                        ti[r] = a * wi + b * wr;
                    }
                }
#pragma unroll
                for (int d = 16; d >= 1; d >>= 1) {
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        tr[r] += __shfl_xor_sync(0xffffffffu, tr[r], d);
                        ti[r] += __shfl_xor_sync(0xffffffffu, ti[r], d);
                    }
                }
                if (lane == 0) {
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        tsum[w][2 * r] = tr[r]; tsum[w][2 * r + 1] = ti[r];
                    }
                }
            }
#endif
        }
#endif
        // 2. the recursion over the thread's segment from zero; y_loc into xb
        float sr[R], si[R];
#pragma unroll
        for (int r = 0; r < R; ++r) { sr[r] = 0.f; si[r] = 0.f; }
        if (virt) {  // the first anchor only: no second read, no output
#pragma unroll
            for (int s = SEG - 1; s >= 0; --s) {
                const float va = ra[s];
                STEP_V
            }
        } else
#pragma unroll
        for (int s = SEG - 1; s >= 0; --s) {
            const float va = ra[s], vb = rb[s];
            float yl = 0.f;
#if CPLX
            float yli = 0.f;
#endif
            STEP
            rb[s] = yl;
#if CPLX
            ra[s] = yli;  // (complex output: the imaginary part where x_A was)
#endif
        }
        // every x_A sample enters row 0 with weight 1: NaN or infinity leaves it non-finite
        bad |= !(fabsf(sr[0]) + fabsf(si[0]) <= 3.402823466e38f);
        // 3. reverse scan of the segment totals: v_l = Σ_{j ≥ l} Q^{j-l} agg_j in the warp
#pragma unroll
        for (int k = 0; k < 5; ++k) {
            const int d = 1 << k;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const float ur = __shfl_down_sync(0xffffffffu, sr[r], d);
                const float ui = __shfl_down_sync(0xffffffffu, si[r], d);
                if (lane + d < 32) cmul_add(sr[r], si[r], QK_R[k][r], QK_I[k][r], ur, ui);
            }
        }
        if (lane == 0) {
#pragma unroll
            for (int r = 0; r < R; ++r) { wsum[w][2 * r] = sr[r]; wsum[w][2 * r + 1] = si[r]; }
        }
        __syncthreads();
        if (tid == 0) {  // carries into the warps, from the anchor; the tile start is the next
            float cr[R], ci[R];
#pragma unroll
            for (int r = 0; r < R; ++r) { cr[r] = anchor[2 * r]; ci[r] = anchor[2 * r + 1]; }
#if EXACT
            if (exact_now)
#pragma unroll
            for (int r = 0; r < R; ++r) {  // the exact tail sum instead of the carried anchor
                cr[r] = 0.f; ci[r] = 0.f;
                for (int v = TAIL_FIRST; v < NW; ++v) {
                    cr[r] += tsum[v][2 * r];
                    ci[r] += tsum[v][2 * r + 1];
                }
            }
#endif
            for (int v = NW - 1; v >= 0; --v) {
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    carry[v][2 * r] = cr[r]; carry[v][2 * r + 1] = ci[r];
                    float a = wsum[v][2 * r], b = wsum[v][2 * r + 1];
                    cmul_add(a, b, QK_R[5][r], QK_I[5][r], cr[r], ci[r]);
                    cr[r] = a; ci[r] = b;
                }
            }
#pragma unroll
            for (int r = 0; r < R; ++r) { anchor[2 * r] = cr[r]; anchor[2 * r + 1] = ci[r]; }
#if FOLD
            if (vfold && t == nt + args.kx)  // the state at A
                for (int r = 0; r < 2 * R; ++r) vsnap[r] = anchor[r];
#endif
        }
        __syncthreads();
        if (virt) continue;
        // E_l = I_{l+1}, I_l = v_l + Q^{32-l} carry_w (lane 31: the carry itself)
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const float cr = carry[w][2 * r], ci = carry[w][2 * r + 1];
            float ir = sr[r], ii = si[r];
            cmul_add(ir, ii, __ldg(&QLANE[2 * r][lane]), __ldg(&QLANE[2 * r + 1][lane]), cr, ci);
            const float er = __shfl_down_sync(0xffffffffu, ir, 1);
            const float ei = __shfl_down_sync(0xffffffffu, ii, 1);
            sr[r] = lane == 31 ? cr : er;
            si[r] = lane == 31 ? ci : ei;
        }
        // 4. y[s] = y_loc[s] + Σ_r Re(F[s][r] E_r)
#pragma unroll
        for (int s = 0; s < SEG; ++s) {
            float acc = rb[s];
            FIXUP
            rb[s] = acc;
#if CPLX
            acc = ra[s];
            FIXUP_IM
            ra[s] = acc;
#endif
        }
        __syncthreads();
        const long long y0 = (long long)t * TILE;
#if CPLX
        float2* yc = reinterpret_cast<float2*>(ys);  // complex64: (re, im) pairs
#pragma unroll 4
        for (int k = 0; k < SEG; ++k) {
            if (y0 + tid + k * NTHR < n)
                yc[y0 + tid + k * NTHR] = make_float2(xb[at0 + k * KSTRIDE], xa[at0 + k * KSTRIDE]);
        }
#else
        if (y0 + TILE <= n) {
#pragma unroll
            for (int k = 0; k < SEG; ++k) ys[y0 + tid + k * NTHR] = xb[at0 + k * KSTRIDE];
        } else {
            for (int k = 0; k < SEG; ++k) {
                if (y0 + tid + k * NTHR < n) ys[y0 + tid + k * NTHR] = xb[at0 + k * KSTRIDE];
            }
        }
#endif
    }
    if (bad && flag != nullptr) *flag = 0;
}
"""


def _literal(v: float) -> str:
    return repr(float(np.float32(v))) + "f"


def _interleave(z: np.ndarray) -> np.ndarray:
    """``(R, M)`` complex -> ``(2R, M)`` real, rows ``(Re z_0, Im z_0, Re z_1, ...)``."""
    return np.stack([z.real, z.imag], axis=1).reshape(2 * z.shape[0], -1)


def _array(name: str, a: np.ndarray, const: bool = False, double: bool = False) -> str:
    """A C array of the float32-rounded ``a`` (``double``: of ``a`` in float64, as
    ``double``): ``__device__ constexpr`` (indexed with unrolled, compile-time indices:
    immediates) or, with ``const``, ``__device__ const`` in global memory (indexed by the
    thread)."""
    a = np.asarray(a, dtype=np.float64)
    literal = (lambda t: repr(float(t))) if double else _literal

    def body(v):
        if v.ndim == 1:
            return "{" + ", ".join(literal(t) for t in v) + "}"
        return "{" + ", ".join(body(t) for t in v) + "}"

    dims = "".join(f"[{d}]" for d in a.shape)
    kind = "const" if const else "constexpr"
    return f"__device__ {kind} {'double' if double else 'float'} {name}{dims} = {body(a)};"


def _sum(terms: list[tuple[float, str]], base: str | None = None) -> str:
    """``base + Σ c·v`` as nested ``fmaf`` in float32, terms whose constant rounds to 0
    dropped (``"0.f"`` when nothing is left)."""
    expr = base
    for c, v in terms:
        c = float(np.float32(c))
        if c == 0.0:
            continue
        if expr is None:
            expr = v if c == 1.0 else f"-{v}" if c == -1.0 else f"{_literal(c)} * {v}"
        elif c == 1.0:
            expr = f"({expr} + {v})"
        elif c == -1.0:
            expr = f"({expr} - {v})"
        else:
            expr = f"fmaf({_literal(c)}, {v}, {expr})"
    return expr if expr is not None else "0.f"


def _step(q: np.ndarray, ql: np.ndarray, comb_a: np.ndarray, comb_b: np.ndarray,
          real_rows: np.ndarray, output: bool = True) -> str:
    """One sample of the recursion ``S = q S + x_A - q^L x_B`` and of ``y_loc``, row by row
    (straight-line C with the bank's constants; rows with real ``q`` and ``q^L`` keep no
    imaginary part). A complex comb (complex output) also sums ``yli``, the imaginary part.
    Without ``output``, the recursion alone (with ``ql = 0``: the virtual tiles' step
    ``S = q S + x_A``, whose zero terms :func:`_sum` drops)."""
    cplx = np.iscomplexobj(comb_a) or np.iscomplexobj(comb_b)
    ca, cb = np.asarray(comb_a, dtype=complex), np.asarray(comb_b, dtype=complex)
    lines = []

    def out(r):
        terms = [(ca[r].real, f"sr[{r}]")] + ([] if real_rows[r] else [(cb[r].real, f"si[{r}]")])
        lines.append(f"yl = {_sum(terms, 'yl')};")
        if cplx:
            terms = [(ca[r].imag, f"sr[{r}]")] + ([] if real_rows[r] else
                                                  [(cb[r].imag, f"si[{r}]")])
            lines.append(f"yli = {_sum(terms, 'yli')};")

    for r in range(len(q)):
        if not real_rows[r] and abs(ql[r] - q[r]) <= 1e-12:  # q^{L-1} = 1 (SFT harmonics)
            # S = q (S - x_B) + x_A: one subtraction shared by both parts
            nr = _sum([(-q[r].imag, f"si[{r}]"), (q[r].real, "d")], "va")
            ni = _sum([(q[r].imag, "d"), (q[r].real, f"si[{r}]")])
            lines.append(f"{{ const float d = sr[{r}] - vb; const float nr = {nr}, ni = {ni}; "
                         f"sr[{r}] = nr; si[{r}] = ni; }}")
        elif real_rows[r]:
            re = _sum([(q[r].real, f"sr[{r}]"), (-ql[r].real, "vb")], "va")
            lines.append(f"sr[{r}] = {re};")
        else:
            re = _sum([(q[r].real, f"sr[{r}]"), (-q[r].imag, f"si[{r}]"), (-ql[r].real, "vb")],
                      "va")
            im = _sum([(q[r].real, f"si[{r}]"), (q[r].imag, f"sr[{r}]"), (-ql[r].imag, "vb")])
            lines.append(f"{{ const float nr = {re}, ni = {im}; sr[{r}] = nr; si[{r}] = ni; }}")
        if output:
            out(r)
    return "\n            ".join(lines)


def _fixup(fix: np.ndarray, real_rows: np.ndarray, name: str = "FIX") -> str:
    """``acc += Σ_r Re(F[s][r] E_r)`` (``s`` is the unrolled loop index: a table lookup)."""
    lines = []
    for r in range(fix.shape[1]):
        lines.append(f"acc = fmaf({name}_R[s][{r}], sr[{r}], acc);")
        if not real_rows[r]:
            lines.append(f"acc = fmaf(-{name}_I[s][{r}], si[{r}], acc);")
    return "\n            ".join(lines)


def strided_tail(length: int, seg: int = SEG) -> bool:
    """Whether the exact anchor's tail of ``length`` samples is summed strided by the last warp
    (it lies in that warp's segments): lane ``i`` takes every 32nd sample from ``i``, ⌈L/32⌉
    steps instead of ``seg`` on fewer lanes, and the lanes' sum goes through shared memory."""
    return 0 < length <= 32 * seg


def constants(bank, seg: int = SEG, threads: int = THREADS,
              strided: bool = False) -> dict[str, np.ndarray]:
    """The kernel's constants for ``bank`` (one row group), float64/complex128, before the
    rounding to float32: ``q``, ``ql`` (``q^L``), ``qk`` (``Q^{2^k}``, ``Q = q^seg``,
    ``k < 6``), ``qlane`` (``Q^{32 - lane}``), ``tailw`` (each thread's weight
    ``q^{u0 - (T - L)}`` of its first sample ``u0`` in the last ``L`` samples of a tile, 0
    for threads before them; ``strided``: ``q^i`` for lane ``i < L`` of the last warp),
    ``qp`` (``q^32``), ``comb_a``, ``comb_b`` (complex for complex output), ``fix``
    (``(Re a - i Re b) q^{seg - s}``, ``(seg, R)``) and ``fix_im`` (the same with the
    imaginary parts of the comb): ``y = y_loc + Re(fix E) + i Re(fix_im E)``."""
    (g,) = group_tables(bank)
    a, w = g.alpha, g.omega
    tile = seg * threads
    u0 = np.maximum(np.arange(threads) * seg, tile - g.L)  # first tail sample of each thread
    tailw = np.zeros((len(a), threads), dtype=complex)
    if g.L < tile and strided:  # lane i of the last warp: weight q^i
        i = np.arange(threads) - (threads - 32)
        tailw = np.where((i >= 0) & (i < g.L), _powers(a, w, np.maximum(i, 0)), 0)
    elif g.L < tile:
        inside = u0 < np.arange(1, threads + 1) * seg
        tailw = np.where(inside, _powers(a, w, np.maximum(u0 - (tile - g.L), 0)), 0)
    ca, cb = np.asarray(g.comb_a), np.asarray(g.comb_b)
    if not bank.complex_output:
        ca, cb = ca.real.astype(float), cb.real.astype(float)
    # comb terms 2^-40 below the largest (real and imaginary parts apart) are far below
    # float32 rounding: dropped
    tiny = 2.0**-40 * max(np.abs(ca).max(), np.abs(cb).max())

    def drop(u):
        return np.where(np.abs(u) > tiny, u, 0.0)

    def clean(v):
        return drop(v.real) + 1j * drop(v.imag) if np.iscomplexobj(v) else drop(v)

    ca, cb = clean(ca), clean(cb)
    tail = _powers(a, w, seg - np.arange(seg)).T  # q^{seg - s}: (seg, R)
    return {"q": _powers(a, w, 1.0), "ql": _powers(a, w, float(g.L)),
            "qk": np.stack([_powers(a, w, float(seg << k)) for k in range(6)]),
            "qlane": _powers(a, w, (32 - np.arange(32)) * float(seg)), "tailw": tailw,
            "qp": _powers(a, w, 32.0),
            "comb_a": ca, "comb_b": cb,
            "fix": (ca.real - 1j * cb.real)[None, :] * tail,
            "fix_im": (np.imag(ca) - 1j * np.imag(cb))[None, :] * tail}


def _source(bank, seg: int = SEG, threads: int = THREADS, blocks: int = 8,
            exact: bool = True, every: int = 1, strided: bool = False) -> str:
    """The kernel's source with ``bank``'s constants compiled in (float64, rounded once)."""
    (g,) = group_tables(bank)
    strided = strided and exact and strided_tail(int(g.L), seg) and g.L < seg * threads
    k = constants(bank, seg, threads, strided)
    q, ql, fix = k["q"], k["ql"], k["fix"]
    real_rows = (np.float32(q.imag) == 0) & (np.float32(ql.imag) == 0)
    tables = "\n".join([
        f"#define OFF ({int(g.off)}LL)", f"#define LEN ({int(g.L)}LL)",
        _array("QK_R", k["qk"].real), _array("QK_I", k["qk"].imag),
        _array("ALPHA", g.alpha, double=True), _array("OMEGA", g.omega, double=True),
        _array("Q_R", q.real), _array("Q_I", q.imag),
        _array("QP_R", k["qp"].real), _array("QP_I", k["qp"].imag),
        _array("QLANE", _interleave(k["qlane"]), const=True),
        _array("TAILW", _interleave(k["tailw"]), const=True),
        _array("FIX_R", fix.real), _array("FIX_I", fix.imag),
        _array("FIXIM_R", k["fix_im"].real), _array("FIXIM_I", k["fix_im"].imag),
        "#define STEP " + _step(q, ql, k["comb_a"], k["comb_b"], real_rows).replace(
            "\n", " \\\n"),
        "#define STEP_V " + _step(q, np.zeros_like(ql), k["comb_a"], k["comb_b"], real_rows,
                                  output=False).replace("\n", " \\\n"),
        "#define FIXUP " + _fixup(fix, real_rows).replace("\n", " \\\n"),
        "#define FIXUP_IM " + _fixup(k["fix_im"], real_rows, "FIXIM").replace(
            "\n", " \\\n")])
    return _SOURCE % {"seg": seg, "threads": threads, "rows": len(q), "tables": tables,
                      "blocks": blocks, "exact": int(exact and g.L < seg * threads),
                      "every": every, "cplx": int(bank.complex_output),
                      "strided": int(strided),
                      "fold": int(folds(int(g.L), seg * threads))}


#: Fold the first anchor only for windows of at least this many tiles (shorter ones would
#: save at most a tile, and the fold's code costs the loop about 1 % on an H100).
FOLD_TILES = 3


def folds(length: int, tile: int) -> bool:
    """Whether the kernel for windows of ``length`` samples and tiles of ``tile`` can fold its
    first anchor (:func:`virtual_tiles`): carried anchors, ``⌈L/T⌉ ≥`` :data:`FOLD_TILES`."""
    return length >= tile and -(-length // tile) >= FOLD_TILES
