"""Chunks handed out one at a time to whichever thread asks first.

A kernel call's threads take the next chunk from a shared counter (``claims[0]``, an atomic
fetch-and-add) instead of a fixed share each: a thread that starts late (waking an idle
thread takes 50-250 microseconds on a virtual machine) or is paused by a busy machine leaves
its chunks to the others instead of making every thread wait for it. Which thread runs a chunk
never changes what the chunk draws (its random stream is its own) nor the totals (integer counts
add up in any order), so results stay identical for any number of threads.

Each thread counts the chunks it has finished in ``claims[1]`` (after the chunk's last write),
so the calling thread knows, the moment its own share ends, whether every chunk is done: then
it need not wait for the other threads to say so (a thread that has not started yet finds no
chunk left and writes nothing).
"""

from __future__ import annotations

from typing import Any

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .shapes import new_claims

__all__ = ["fetch_add", "new_claims"]


@intrinsic
def _fetch_add(typingctx: Any, counter: Any, index: Any, amount: Any) -> Any:
    """``fetch_add(counter, index, amount)``: ``counter[index] += amount`` as one atomic
    operation (sequentially consistent: what the thread wrote before it is seen by a thread
    that reads the result after it); returns the value before it. ``counter``: a 1-d int64
    array; ``index`` within it (not checked)."""
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64 and counter.ndim == 1
            and isinstance(index, types.Integer) and isinstance(amount, types.Integer)):
        return None
    sig = types.int64(counter, index, amount)

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        array_type = signature.args[0]
        array = context.make_array(array_type)(context, builder, args[0])
        at = context.cast(builder, args[1], signature.args[1], types.intp)
        ptr = cgutils.get_item_pointer(context, builder, array_type, array, [at])
        value = context.cast(builder, args[2], signature.args[2], types.int64)
        return builder.atomic_rmw("add", ptr, value, "seq_cst")

    return sig, codegen


#: Called from kernels as ``fetch_add(counter, index, amount)`` (typed Any: the type checker would read
#: the typing function's signature, which takes the typing context first).
fetch_add: Any = _fetch_add
