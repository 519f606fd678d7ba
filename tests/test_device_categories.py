"""Device work in Kineto categories other than CUDA's: MTIA's on-device events are kernels (Kineto
aliases them to CONCURRENT_KERNEL, as HTA reads them), and device work of a category tracelake does
not know is counted and named in a warning, never dropped in silence."""

from __future__ import annotations

import json

import pyarrow.compute as pc
from tracelake.ingest.dispatch import ingest_file
from tracelake.ingest.kineto.tables import UNANALYSED_KEY

PID, TID = 4242, 4243


def _runtime(ts, corr):
    return {"ph": "X", "cat": "mtia_runtime", "name": "mtiaLaunchKernel", "pid": PID, "tid": TID, "ts": ts,
            "dur": 2, "args": {"correlation": corr}}


def _device(cat, ts, dur, corr, name="mtia_gemm"):
    return {"ph": "X", "cat": cat, "name": name, "pid": 0, "tid": 3, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": 3, "correlation": corr}}


def _write(tmp_path, events):
    path = tmp_path / "mtia.pt.trace.json"
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return path


def test_mtia_device_events_are_kernels_of_the_launching_process(tmp_path):
    events = [_runtime(10 * i, i) for i in range(3)] + [_device("mtia_ccp_events", 100 + 50 * i, 40, i)
                                                         for i in range(3)]
    result = ingest_file(str(_write(tmp_path, events)))
    kernels = result.tables["kernels"]
    assert kernels.num_rows == 3
    assert pc.sum(kernels.column("duration_ns")).as_py() == 3 * 40_000
    assert set(kernels.column("pid").to_pylist()) == {PID}
    assert not any("not analysed" in w for w in result.warnings)


def test_unknown_device_category_is_counted_and_named(tmp_path):
    events = [_runtime(0, 1), _device("kernel", 100, 40, 1, "gemm"),
              *[_device("npu_tile_op", 200 + 10 * i, 5, 100 + i, "tile") for i in range(4)],
              # host-side events of unknown categories (no stream, no device) are no device work
              {"ph": "X", "cat": "fwdbwd", "name": "x", "pid": PID, "tid": TID, "ts": 1, "dur": 1, "args": {}}]
    result = ingest_file(str(_write(tmp_path, events)))
    assert result.tables["kernels"].num_rows == 1
    (warning,) = [w for w in result.warnings if "not analysed" in w]
    assert "4 device events of category 'npu_tile_op'" in warning
    metadata = json.loads(result.tables["traces"].column("metadata_json")[0].as_py())
    assert metadata[UNANALYSED_KEY] == {"npu_tile_op": 4}


def test_newer_kineto_fields_are_read_or_ignored(tmp_path):
    """PM sampling counters, GPU-side user annotations and NCCL metadata with seq_num (Kineto builds
    of 2025-26): the kernels and the annotation are read, the rest never breaks the trace."""
    nccl = {"Collective name": "allreduce", "Process Group Name": "0", "Process Group Ranks": "[0, 1]",
            "seq_num": 7, "Group size": 2, "dtype": "Float", "In msg nelems": 1024, "Out msg nelems": 1024}
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": PID, "tid": TID, "ts": 0, "dur": 30,
         "args": {**nccl, "Record function id": 0}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": PID, "tid": TID, "ts": 5, "dur": 3,
         "args": {"correlation": 1}},
        {**_device("kernel", 100, 40, 1, "ncclDevKernel_AllReduce_Sum_f32_RING_LL"),
         "args": {"device": 0, "stream": 3, "correlation": 1, **nccl}},
        {"ph": "X", "cat": "gpu_user_annotation", "name": "allreduce_bucket", "pid": 0, "tid": 3, "ts": 95,
         "dur": 50, "args": {"device": 0, "stream": 3}},
        {"ph": "C", "cat": "pm_sampling", "name": "PM sampling", "pid": 0, "ts": 100,
         "args": {"sm__throughput.avg.pct_of_peak_sustained_elapsed": 41.5, "gpu__time_duration.sum": 40}},
    ]
    result = ingest_file(str(_write(tmp_path, events)))
    kernels = result.tables["kernels"]
    assert kernels.column("name").to_pylist() == ["ncclDevKernel_AllReduce_Sum_f32_RING_LL"]
    assert kernels.column("pid").to_pylist() == [PID]
    annotations = result.tables["annotations"]
    assert annotations.filter(pc.field("is_gpu")).column("name").to_pylist() == ["allreduce_bucket"]
    assert result.tables["cpu_ops"].column("name").to_pylist() == ["record_param_comms"]
    assert not any("not analysed" in w for w in result.warnings)
