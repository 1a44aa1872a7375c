"""SIMD vectors for the numba kernels of the CPU CWT (:mod:`._numba_cwt`): 256-bit LLVM
vectors of floats (``<8 x float>``, ``<4 x double>``) with loads, stores (plain, widened,
narrowed, non-temporal, complex interleaved, transposed) and arithmetic, as numba
intrinsics.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, models, register_model

__all__: list[str] = []


# ---------------------------------------------------------------------------- SIMD vectors
class _VecType(types.Type):
    """A 256-bit LLVM vector of ``count`` floats (``<8 x float>`` or ``<4 x double>``)."""

    def __init__(self, dtype, count):
        self.dtype = dtype
        self.count = count
        super().__init__(name=f"Vec({dtype}x{count})")


@register_model(_VecType)
class _VecModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        be = ir.VectorType(dmm.lookup(fe_type.dtype).get_value_type(), fe_type.count)
        super().__init__(dmm, fe_type, be)


def _vt(dtype):
    return _VecType(dtype, 256 // dtype.bitwidth)


@intrinsic
def _vload(typingctx, arr, idx):
    """``arr[idx: idx + V]`` (a contiguous 1-D array) as a vector."""
    vt = _vt(arr.dtype)

    def codegen(ctx, builder, sig, args):
        ary = ctx.make_array(sig.args[0])(ctx, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        vp = builder.bitcast(ptr, ctx.get_value_type(vt).as_pointer())
        return builder.load(vp, align=arr.dtype.bitwidth // 8)

    return vt(arr, idx), codegen


@intrinsic
def _vstore(typingctx, arr, idx, v):
    """``arr[idx: idx + V] = v``."""
    def codegen(ctx, builder, sig, args):
        ary = ctx.make_array(sig.args[0])(ctx, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        vp = builder.bitcast(ptr, ctx.get_value_type(sig.args[2]).as_pointer())
        builder.store(args[2], vp, align=arr.dtype.bitwidth // 8)
        return ctx.get_dummy_value()

    return types.none(arr, idx, v), codegen


@intrinsic
def _vsplat(typingctx, x):
    """A vector of ``V`` copies of the scalar ``x``."""
    vt = _vt(x)

    def codegen(ctx, builder, sig, args):
        lt = ctx.get_value_type(vt)
        v = builder.insert_element(ir.Constant(lt, ir.Undefined), args[0],
                                   ir.Constant(ir.IntType(32), 0))
        mask = ir.Constant(ir.VectorType(ir.IntType(32), vt.count), [0] * vt.count)
        return builder.shuffle_vector(v, ir.Constant(lt, ir.Undefined), mask)

    return vt(x), codegen


def _binop(name):
    @intrinsic
    def op(typingctx, a, b):
        def codegen(ctx, builder, sig, args):
            return getattr(builder, name)(args[0], args[1])

        return a(a, b), codegen

    return op


_vadd = _binop("fadd")
_vsub = _binop("fsub")
_vmul = _binop("fmul")


@intrinsic
def _vfma(typingctx, a, b, c):
    """``a * b + c``, one rounding (``llvm.fma``)."""
    def codegen(ctx, builder, sig, args):
        lt = ctx.get_value_type(sig.args[0])
        bits = 32 if lt.element == ir.FloatType() else 64
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(lt, [lt, lt, lt]),
                                            f"llvm.fma.v{lt.count}f{bits}")
        return builder.call(fn, args)

    return a(a, b, c), codegen


def _i32s(values):
    return ir.Constant(ir.VectorType(ir.IntType(32), len(values)), list(values))


@intrinsic
def _vstore_wide(typingctx, arr, idx, v):
    """``arr[idx: idx + V] = v`` widened to float64 (``arr`` float64)."""
    def codegen(ctx, builder, sig, args):
        ary = ctx.make_array(sig.args[0])(ctx, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        val = args[2]
        if val.type.element != ir.DoubleType():
            val = builder.fpext(val, ir.VectorType(ir.DoubleType(), val.type.count))
        builder.store(val, builder.bitcast(ptr, val.type.as_pointer()), align=8)
        return ctx.get_dummy_value()

    return types.none(arr, idx, v), codegen


@intrinsic
def _vstore_narrow(typingctx, arr, idx, v):
    """``arr[idx: idx + 4] = v`` (a float64 vector) rounded to ``arr``'s dtype."""
    def codegen(ctx, builder, sig, args):
        ary = ctx.make_array(sig.args[0])(ctx, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        val = args[2]
        elem = ctx.get_value_type(sig.args[0].dtype)
        if elem != ir.DoubleType():
            val = builder.fptrunc(val, ir.VectorType(elem, val.type.count))
        builder.store(val, builder.bitcast(ptr, val.type.as_pointer()),
                      align=sig.args[0].dtype.bitwidth // 8)
        return ctx.get_dummy_value()

    return types.none(arr, idx, v), codegen


def _nt_store(builder, val, ptr, align, nontemporal):
    """Store the vector ``val`` at ``ptr`` (``align``: its guaranteed alignment in bytes);
    streaming (past the caches, 32-byte aligned) when ``nontemporal``. (Streaming 16-byte
    halves, which 16-byte aligned arrays would allow, measured no faster than plain stores.)
    """
    st = builder.store(val, ptr, align=32 if nontemporal else align)
    if nontemporal:
        st.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32),
                                                                                1)]))


@intrinsic
def _vstore_cplx(typingctx, o, idx, re, im, nt):
    """``o[idx + 2j] = re[j]``, ``o[idx + 2j + 1] = im[j]`` (two vector stores; streaming
    ones, 32-byte aligned, for a true ``nt``)."""
    def codegen(ctx, builder, sig, args):
        oa = ctx.make_array(sig.args[0])(ctx, builder, args[0])
        re_, im_ = args[2], args[3]
        cnt = re_.type.count
        vty = re_.type
        align = 4 if re_.type.element == ir.FloatType() else 8
        lo = builder.shuffle_vector(re_, im_, _i32s([j // 2 + (cnt if j % 2 else 0)
                                                     for j in range(cnt)]))
        hi = builder.shuffle_vector(re_, im_, _i32s([cnt // 2 + j // 2 + (cnt if j % 2 else 0)
                                                     for j in range(cnt)]))
        for part, off in ((lo, 0), (hi, cnt)):
            p = builder.gep(oa.data, [builder.add(args[1], ir.Constant(args[1].type, off))])
            p = builder.bitcast(p, vty.as_pointer())
            with builder.if_else(builder.trunc(args[4], ir.IntType(1))) as (yes, no):
                with yes:
                    _nt_store(builder, part, p, align, True)
                with no:
                    builder.store(part, p, align=align)
        return ctx.get_dummy_value()

    return types.none(o, idx, re, im, nt), codegen


@intrinsic
def _tstore(typingctx, y, yoff, o, ooff, ostride, nt):
    """Transpose ``V`` steps of ``V`` lanes: ``y[yoff + (2i + j) V + l]`` (step ``i``, ``j``:
    Re, Im, lane ``l``) to ``o[ooff + l ostride + 2i + j]`` (each lane's ``V`` complex
    samples contiguous), in registers."""
    def codegen(ctx, builder, sig, args):
        ya = ctx.make_array(sig.args[0])(ctx, builder, args[0])
        oa = ctx.make_array(sig.args[2])(ctx, builder, args[2])
        yoff_, ooff_, stride = args[1], args[3], args[4]
        f32 = sig.args[0].dtype == types.float32
        elem = ir.FloatType() if f32 else ir.DoubleType()
        cnt = 8 if f32 else 4
        vty = ir.VectorType(elem, cnt)
        align = 4 if f32 else 8

        def load(off):
            p = builder.gep(ya.data, [builder.add(yoff_, ir.Constant(yoff_.type, off))])
            return builder.load(builder.bitcast(p, vty.as_pointer()), align=align)

        stores = []

        def store(val, lane, off):
            stores.append((val, lane, off))

        re = [load(2 * i * cnt) for i in range(cnt)]
        im = [load((2 * i + 1) * cnt) for i in range(cnt)]
        if f32:
            d4 = ir.VectorType(ir.DoubleType(), 4)
            lo = [builder.bitcast(builder.shuffle_vector(re[i], im[i],
                                                         _i32s([0, 8, 1, 9, 2, 10, 3, 11])), d4)
                  for i in range(8)]
            hi = [builder.bitcast(builder.shuffle_vector(re[i], im[i],
                                                         _i32s([4, 12, 5, 13, 6, 14, 7, 15])), d4)
                  for i in range(8)]

            def t4(m):  # 4 x 4 transpose of complex (64-bit) elements
                t0 = builder.shuffle_vector(m[0], m[1], _i32s([0, 4, 2, 6]))
                t1 = builder.shuffle_vector(m[0], m[1], _i32s([1, 5, 3, 7]))
                t2 = builder.shuffle_vector(m[2], m[3], _i32s([0, 4, 2, 6]))
                t3 = builder.shuffle_vector(m[2], m[3], _i32s([1, 5, 3, 7]))
                return [builder.shuffle_vector(t0, t2, _i32s([0, 1, 4, 5])),
                        builder.shuffle_vector(t1, t3, _i32s([0, 1, 4, 5])),
                        builder.shuffle_vector(t0, t2, _i32s([2, 3, 6, 7])),
                        builder.shuffle_vector(t1, t3, _i32s([2, 3, 6, 7]))]

            for half, rows in ((0, lo), (4, hi)):
                first = t4(rows[:4])  # steps 0-3 of lanes half .. half + 3
                second = t4(rows[4:])  # steps 4-7
                for l4 in range(4):
                    store(builder.bitcast(first[l4], vty), half + l4, 0)
                    store(builder.bitcast(second[l4], vty), half + l4, 8)
        else:
            lo = [builder.shuffle_vector(re[i], im[i], _i32s([0, 4, 1, 5])) for i in range(4)]
            hi = [builder.shuffle_vector(re[i], im[i], _i32s([2, 6, 3, 7])) for i in range(4)]
            for base, rows in ((0, lo), (2, hi)):
                for l2 in range(2):
                    sel = [0, 1, 4, 5] if l2 == 0 else [2, 3, 6, 7]
                    store(builder.shuffle_vector(rows[0], rows[1], _i32s(sel)), base + l2, 0)
                    store(builder.shuffle_vector(rows[2], rows[3], _i32s(sel)), base + l2, 4)

        def emit(nontemporal):
            for val, lane, off in stores:
                base = builder.add(ooff_, builder.mul(stride, ir.Constant(stride.type, lane)))
                p = builder.gep(oa.data, [builder.add(base, ir.Constant(base.type, off))])
                _nt_store(builder, val, builder.bitcast(p, vty.as_pointer()), align,
                          nontemporal)

        with builder.if_else(builder.trunc(args[5], ir.IntType(1))) as (yes, no):
            with yes:
                emit(True)
            with no:
                emit(False)
        return ctx.get_dummy_value()

    return types.none(y, yoff, o, ooff, ostride, nt), codegen
