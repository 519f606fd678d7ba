"""Typed views of Kineto `args` objects, one per event family.

Fields are typed Any (or Raw for big nested values) so that odd values never fail the decode;
the builder coerces them. Unknown keys are skipped here and kept verbatim in args_json.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import Raw, field

_EMPTY = Raw(b"")


class GpuArgs(msgspec.Struct, gc=False):
    external_id: Any = field(name="External id", default=None)
    external_id_legacy: Any = field(name="external id", default=None)
    device: Any = None
    context: Any = None
    stream: Any = None
    correlation: Any = None
    registers_per_thread: Any = field(name="registers per thread", default=None)
    shared_memory: Any = field(name="shared memory", default=None)
    blocks_per_sm: Any = field(name="blocks per SM", default=None)
    warps_per_sm: Any = field(name="warps per SM", default=None)
    occupancy: Any = field(name="est. achieved occupancy %", default=None)
    grid: Any = None
    block: Any = None
    graph_id: Any = field(name="graph id", default=None)
    graph_node_id: Any = field(name="graph node id", default=None)
    collective_name: Any = field(name="Collective name", default=None)
    bytes: Any = None
    cbid: Any = None
    cuda_sync_kind: Any = None
    event_id: Any = None


class CpuOpArgs(msgspec.Struct, gc=False):
    external_id: Any = field(name="External id", default=None)
    external_id_legacy: Any = field(name="external id", default=None)
    sequence_number: Any = field(name="Sequence number", default=None)
    fwd_thread_id: Any = field(name="Fwd thread id", default=None)
    input_dims: Raw = field(name="Input Dims", default=_EMPTY)
    input_dims_legacy: Raw = field(name="Input dims", default=_EMPTY)
    input_type: Raw = field(name="Input type", default=_EMPTY)
    input_strides: Raw = field(name="Input Strides", default=_EMPTY)
    concrete_inputs: Raw = field(name="Concrete Inputs", default=_EMPTY)
    call_stack: Any = field(name="Call stack", default=None)
    flops: Any = None


class AnnotationArgs(msgspec.Struct, gc=False):
    external_id: Any = field(name="External id", default=None)
    external_id_legacy: Any = field(name="external id", default=None)


class PythonArgs(msgspec.Struct, gc=False):
    python_id: Any = field(name="Python id", default=None)
    python_parent_id: Any = field(name="Python parent id", default=None)
    python_module_id: Any = field(name="Python module id", default=None)


class MemoryArgs(msgspec.Struct, gc=False):
    device_type: Any = field(name="Device Type", default=None)
    device_id: Any = field(name="Device Id", default=None)
    addr: Any = field(name="Addr", default=None)
    bytes: Any = field(name="Bytes", default=None)
    total_allocated: Any = field(name="Total Allocated", default=None)
    total_reserved: Any = field(name="Total Reserved", default=None)


def decode_all(struct_type: type, events: list) -> list:
    """Decode every event's args with `struct_type`; missing or malformed args give the defaults."""
    decoder = msgspec.json.Decoder(struct_type)
    empty = struct_type()
    out = []
    append = out.append
    for e in events:
        raw = e.args
        if raw:
            try:
                append(decoder.decode(raw))
            except msgspec.DecodeError:
                append(empty)
        else:
            append(empty)
    return out
