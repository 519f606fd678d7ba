"""Typed views of Kineto `args` objects, one per event family, decoded in one batch per table.

Fast path: the raw `args` texts of a table, joined into one buffer (raw_text.JoinedTexts), are
decoded with a typed struct in a single msgspec call (no per-event call overhead). If any value has an
unexpected shape (a string where an int belongs, say), the table falls back to a lenient
per-event decode whose values are coerced (non-numbers become NULL). Unknown keys are skipped
here and kept verbatim in args_json.
"""

from __future__ import annotations

import re
from typing import Any, get_args

import msgspec
from msgspec import Raw, field

from ..raw_text import JoinedTexts

_EMPTY = Raw(b"")
Int = int | None
Float = float | None


class GpuArgs(msgspec.Struct, gc=False):
    external_id: Int = field(name="External id", default=None)
    external_id_legacy: Int = field(name="external id", default=None)
    device: Int = None
    context: Int = None
    stream: Int = None
    correlation: Int = None
    registers_per_thread: Int = field(name="registers per thread", default=None)
    shared_memory: Int = field(name="shared memory", default=None)
    blocks_per_sm: Float = field(name="blocks per SM", default=None)
    warps_per_sm: Float = field(name="warps per SM", default=None)
    occupancy: Float = field(name="est. achieved occupancy %", default=None)
    grid: list[Int] | None = None
    block: list[Int] | None = None
    graph_id: Int = field(name="graph id", default=None)
    graph_node_id: Int = field(name="graph node id", default=None)
    collective_name: str | None = field(name="Collective name", default=None)
    bytes: Int = None
    cbid: Int = None
    cuda_sync_kind: str | None = None
    event_id: Int = None


class CpuOpArgs(msgspec.Struct, gc=False):
    external_id: Int = field(name="External id", default=None)
    external_id_legacy: Int = field(name="external id", default=None)
    sequence_number: Int = field(name="Sequence number", default=None)
    fwd_thread_id: Int = field(name="Fwd thread id", default=None)
    call_stack: str | None = field(name="Call stack", default=None)
    flops: Int = None


class AnnotationArgs(msgspec.Struct, gc=False):
    external_id: Int = field(name="External id", default=None)
    external_id_legacy: Int = field(name="external id", default=None)


class PythonArgs(msgspec.Struct, gc=False):
    python_id: Int = field(name="Python id", default=None)
    python_parent_id: Int = field(name="Python parent id", default=None)
    python_module_id: Int = field(name="Python module id", default=None)


class MemoryArgs(msgspec.Struct, gc=False):
    device_type: Int = field(name="Device Type", default=None)
    device_id: Int = field(name="Device Id", default=None)
    addr: Int = field(name="Addr", default=None)
    bytes: Int = field(name="Bytes", default=None)
    total_allocated: Int = field(name="Total Allocated", default=None)
    total_reserved: Int = field(name="Total Reserved", default=None)


_FIRST_INT = re.compile(r"-?\d+")


def to_int(x: Any) -> int | None:
    """Lenient integer: ints pass, digit strings and whole floats convert, anything else is NULL."""
    if type(x) is int:
        return x
    if x is None or isinstance(x, bool):
        return None
    if isinstance(x, float):
        return int(x) if x == x and abs(x) < 9.2e18 else None
    if isinstance(x, str):
        m = _FIRST_INT.search(x)
        return int(m.group()) if m else None
    return None


def to_float(x: Any) -> float | None:
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            return None
    return None


def _coercer(annotation):
    if annotation is Raw:
        return lambda v: v if isinstance(v, Raw) else _EMPTY
    if annotation == Int:
        return to_int
    if annotation == Float:
        return to_float
    if annotation == str | None:
        return lambda v: v if isinstance(v, str) else None
    inner = get_args(annotation)[0]  # list[Int] | None
    if get_args(inner):
        return lambda v: [to_int(x) for x in v] if isinstance(v, list) else None
    raise TypeError(f"no coercion for {annotation}")


class _Lenient:
    """A per-struct pair: an all-Any twin decoder and the coercions back to the typed struct."""

    def __init__(self, typed: type):
        fields = msgspec.structs.fields(typed)
        twin = msgspec.defstruct(
            f"{typed.__name__}Lenient",
            [(f.name, Raw if f.type is Raw else Any, field(name=f.encode_name, default=f.default)) for f in fields],
            gc=False,
        )
        self.decoder = msgspec.json.Decoder(twin)
        self.coerce = [(f.name, _coercer(f.type)) for f in fields]
        self.typed = typed

    def decode(self, raw) -> Any:
        try:
            loose = self.decoder.decode(raw)
        except msgspec.DecodeError:
            return self.typed()
        return self.typed(**{name: fn(getattr(loose, name)) for name, fn in self.coerce})


_BATCH: dict[type, msgspec.json.Decoder] = {}
_LENIENT: dict[type, _Lenient] = {}


def decode_all(struct_type: type, texts: JoinedTexts) -> list:
    """Decode every event's args with `struct_type`; missing or malformed args give the defaults."""
    decoder = _BATCH.get(struct_type)
    if decoder is None:
        decoder = _BATCH[struct_type] = msgspec.json.Decoder(struct_type)
    try:
        decoded = decoder.decode_lines(texts.data)
    except msgspec.DecodeError:
        decoded = None
    if decoded is not None and len(decoded) == len(texts.raws):
        return decoded
    if decoded is not None and len(decoded) == sum(1 for raw in texts.raws if raw):
        # some events have no args (an empty text adds nothing to the buffer)
        found, default = iter(decoded), struct_type()
        return [next(found) if raw else default for raw in texts.raws]
    lenient = _LENIENT.get(struct_type)
    if lenient is None:
        lenient = _LENIENT[struct_type] = _Lenient(struct_type)
    return [lenient.decode(raw) if raw else struct_type() for raw in texts.raws]
