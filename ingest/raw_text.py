"""Turning many raw JSON texts (msgspec.Raw slices of the file) into one Arrow string column.

The slices are joined into one buffer and the Arrow array is built on it directly from their
lengths (offsets): no Python object is made per value and nothing is split or copied again
(measured 2.5x faster than joining with a separator and splitting in Arrow on the `args` of the
89 MB reference trace). Arrow checks the buffer is valid UTF-8; if not, the texts are decoded
with replacement characters first.
"""

from __future__ import annotations

from array import array
from itertools import accumulate

import pyarrow as pa
import pyarrow.compute as pc

_NULL = pa.scalar(None, pa.string())


def texts(raws: list) -> pa.Array:
    """Bytes-like texts (empty = missing) -> string array with NULL for missing; bad UTF-8 replaced."""
    data = b"".join(raws)
    large = len(data) >= 2**31 - 1
    offsets = array("q" if large else "i", accumulate(map(len, raws), initial=0))
    column = pa.Array.from_buffers(pa.large_string() if large else pa.string(), len(raws),
                                   [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    try:
        column.validate(full=True)
    except pa.ArrowInvalid:  # invalid UTF-8 somewhere: replace it, value by value
        column = pa.array([bytes(r).decode("utf-8", "replace") for r in raws],
                          pa.large_string() if large else pa.string())
    empty = pc.equal(pc.binary_length(column), 0)
    return pc.if_else(empty, _NULL, column) if pc.any(empty).as_py() else column
