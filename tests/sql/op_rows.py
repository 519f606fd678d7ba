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


NVTX = ["trace_id", "annotation_id", "pid", "tid", "start_ns", "end_ns", "name", "kind", "parent_id", "depth"]


def nvtx_range(annotation_id: int, handle: int, name: str, sizes: list, producers: list, start: int, end: int,
               parent: int | None = None, seq: int | None = None, tid: int = 1) -> tuple:
    """An annotations row as `nsys profile --pytorch=autograd-shapes-nvtx` writes one: the operator,
    its sequence number, its RecordFunction handle (`op_id = `, not the annotation_id), input shapes
    and, per input, the (handle, output index) of the call that returned it ((0, -1): none)."""
    text = (f"{name}, {'' if seq is None else f'seq = {seq}, '}op_id = {handle}, sizes = {sizes}, "
            f"input_op_ids = [{', '.join(f'({h},{k})' for h, k in producers)}]")
    return ("t", annotation_id, 1, tid, start, end, text, "push_pop", parent, 0 if parent is None else 1)


X, W = [2, 4, 9, 9], [6, 2, 3, 3]  # groups 2, stride 2, padding 1, dilation 2: output [2, 6, 4, 4]


def conv_chain(first_id: int, handle: int, start: int, seq: int, outer: str = "aten::conv2d",
               backend: str = "aten::cudnn_convolution", x=X, w=W) -> list[tuple]:
    """Autocast's aten::conv2d > aten::conv2d > aten::convolution > aten::_convolution > backend,
    as annotation ids first_id.. and handles handle..; aten::convolution is first_id + 2."""
    names = [outer, outer, "aten::convolution", "aten::_convolution", backend]
    return [nvtx_range(first_id + i, handle + i, n, [x, w] + [[]] * 7, [(90, 0), (91, 0)] + [(0, -1)] * 7,
                       start + 10 * i, start + 1000 - 10 * i, parent=None if i == 0 else first_id + i - 1,
                       seq=seq if n in (outer, "aten::convolution") and i else None)
            for i, n in enumerate(names)]
