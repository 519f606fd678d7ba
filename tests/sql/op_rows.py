"""Operator calls and the kernels they launch, as literal base-table rows for the op_* view tests."""

from __future__ import annotations

import json

from .conftest import given

OP = ["trace_id", "op_id", "start_ns", "end_ns", "duration_ns", "pid", "tid", "name", "external_id",
      "parent_op_id", "depth", "args_json"]
KERNEL = ["trace_id", "start_ns", "end_ns", "duration_ns", "device_id", "stream_id", "pid", "tid",
          "correlation_id", "external_id", "name"]
BF, HALF, F32, F8 = "c10::BFloat16", "c10::Half", "float", "c10::Float8_e4m3fn"


def trace(con, device_name: str = "NVIDIA H100 80GB HBM3") -> None:
    """One trace 't' on one GPU."""
    given(con, "traces", ["trace_id", "source", "start_ns", "end_ns"], [("t", "pytorch", 0, 10_000_000)])
    given(con, "devices", ["trace_id", "device_id", "name"], [("t", 0, device_name)])


def op(con, op_id, name, dims, types, concrete=None, start=None, end=None, parent=None, kernel_ns=1000,
       kernel="some_kernel") -> None:
    """A cpu_ops row with record_shapes arguments, and a kernel of kernel_ns it launched (none for 0)."""
    start = op_id * 10_000 if start is None else start
    end = start + 5_000 if end is None else end
    args = {"Input Dims": dims, "Input type": types,
            "Concrete Inputs": concrete if concrete is not None else [""] * len(dims)}
    given(con, "cpu_ops", OP, [("t", op_id, start, end, end - start, 1, 1, name, op_id, parent,
                                0 if parent is None else 1, json.dumps(args))])
    if kernel_ns:
        given(con, "kernels", KERNEL, [("t", start + 100, start + 100 + kernel_ns, kernel_ns, 0, 7, 1, 1, op_id, op_id,
                                        kernel)])
