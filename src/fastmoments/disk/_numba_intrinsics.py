"""LLVM operations that numba's compiled loops of the per-object passes cannot spell in
Python, written through numba's public ``intrinsic`` extension: a prefetch hint
(:func:`prefetch`), the changes between neighbouring labels of a row as bits of one
integer (:func:`changes`, one vector comparison) and the index of an integer's lowest
set bit (:func:`lowest_bit`).

Imported lazily; the functions that use them are compiled with ``cache=True``.
"""

from __future__ import annotations

from llvmlite import ir
from llvmlite.binding import llvm_version_info
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["CHANGE_BYTES", "changes", "lowest_bit", "prefetch"]

#: LLVM's name of its prefetch for a pointer of address space 0: mangled with the pointee
#: type while pointers were typed (LLVM before 16, numba before 0.61), not since.
_PREFETCH = ("llvm.prefetch.p0" if llvm_version_info[0] >= 16 else "llvm.prefetch.p0i8")

#: :func:`changes` compares this many bytes of a row at once (one 512-bit vector; LLVM
#: splits it where the processor's vectors are narrower): ``CHANGE_BYTES // itemsize``
#: labels.
CHANGE_BYTES = 64


@intrinsic
def prefetch(typingctx, a, i, j):  # pragma: no cover - compiled
    """Ask the processor to bring element ``(i, j)`` of the 2-D array ``a`` into the caches
    (LLVM's ``llvm.prefetch``: a hint, no load, no fault; nothing is returned)."""
    sig = types.void(a, i, j)

    def codegen(context, builder, signature, args):
        aty = signature.args[0]
        ary = context.make_array(aty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aty, ary, [args[1], args[2]],
                                       wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
            _PREFETCH)
        # read, highest locality, data cache
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def changes(typingctx, lab, i, j):  # pragma: no cover - compiled
    """Bit ``t`` (``0 <= t < CHANGE_BYTES // lab.itemsize``) set where ``lab[i, j + t] !=
    lab[i, j + t - 1]``, as a ``uint64``: two unaligned vector loads of a C-contiguous 2-D
    integer array, read in place (no view of the row), and one comparison. The caller
    keeps ``1 <= j`` and ``j + lanes <= lab.shape[1]``."""
    if not (isinstance(lab, types.Array) and lab.ndim == 2 and lab.layout == "C"
            and isinstance(lab.dtype, (types.Integer, types.Boolean))):
        return None
    sig = types.uint64(lab, i, j)

    def codegen(context, builder, signature, args):
        aty = signature.args[0]
        ary = context.make_array(aty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aty, ary, [args[1], args[2]],
                                       wraparound=False)
        ety = context.get_data_type(aty.dtype)
        lanes = CHANGE_BYTES // (ety.width // 8)
        vty = ir.VectorType(ety, lanes)
        before = builder.gep(ptr, [ir.Constant(ir.IntType(64), -1)], source_etype=ety)
        cur = builder.load(builder.bitcast(ptr, vty.as_pointer()), typ=vty, align=1)
        old = builder.load(builder.bitcast(before, vty.as_pointer()), typ=vty, align=1)
        bits = builder.bitcast(builder.icmp_unsigned("!=", cur, old), ir.IntType(lanes))
        return builder.zext(bits, ir.IntType(64))

    return sig, codegen


@intrinsic
def lowest_bit(typingctx, m):  # pragma: no cover - compiled
    """The index of the lowest set bit of the ``uint64`` ``m`` (LLVM's ``cttz``; the caller
    keeps ``m != 0``), as an ``int64``."""
    sig = types.int64(m)

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return sig, codegen
