"""sql/base/collectives.sql and its name macros: what each collective call was, from the ranges around
its launch or the kernel name; NULL where nothing says."""

from __future__ import annotations

import json

import pytest

from .conftest import given, load_sql, rows

KERNEL = ["trace_id", "pid", "device_id", "stream_id", "start_ns", "end_ns", "name", "correlation_id"]
API = ["trace_id", "pid", "tid", "start_ns", "end_ns", "correlation_id", "name", "api"]
OP = ["trace_id", "pid", "tid", "start_ns", "end_ns", "name", "args_json"]
COLUMNS = """rank, call_index, operation, collective_name, process_group_name, process_group_ranks, group_size, seq,
             dtype, in_nelems, out_nelems, bytes, duration_ns, kernels, launch_op"""

PARAMS = {"Collective name": "_allgather_base", "dtype": "BFloat16", "In msg nelems": 1024, "Out msg nelems": 4096,
          "Group size": 4, "Process Group Name": "0", "Process Group Ranks": "[0, 1, 2, 3]", "Seq": "7"}


def test_pytorch_call_described_by_record_param_comms(con):
    given(con, "traces", ["trace_id", "source", "rank"], [("t", "pytorch", 2)])
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 20, 500, 800, "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 5),
        ("t", 1, 0, 7, 900, 950, "gemm", 6)])
    given(con, "api_calls", API, [("t", 1, 11, 120, 130, 5, "cuLaunchKernelEx", "driver"),
                                  ("t", 1, 11, 300, 310, 6, "cudaLaunchKernel", "runtime")])
    given(con, "cpu_ops", OP, [("t", 1, 11, 100, 200, "c10d::_allgather_base_", None),
                               ("t", 1, 11, 105, 190, "record_param_comms", json.dumps(PARAMS))])
    load_sql(con, "base/collectives.sql")
    assert rows(con, f"SELECT {COLUMNS} FROM collectives") == [
        (2, 0, "all_gather", "_allgather_base", "0", "[0, 1, 2, 3]", 4, 7, "bfloat16", 1024, 4096, 8192, 300, 1,
         "c10d::_allgather_base_")]


def test_old_trace_nccl_range_and_kernel_name(con):
    # 2022-era PyTorch: record_param_comms without args; the nccl:* annotation has the input
    # shape and type. A kernel launched before the window has only its name.
    given(con, "traces", ["trace_id", "source"], [("t", "pytorch")])
    given(con, "kernels", KERNEL, [
        ("t", 1, 0, 20, 50, 60, "ncclKernel_AllReduce_RING_LL_Sum_half(ncclWorkElem)", 1),
        ("t", 1, 0, 20, 500, 600, "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", 5)])
    given(con, "api_calls", API, [("t", 1, 11, 120, 130, 5, "cudaLaunchKernel", "runtime")])
    given(con, "cpu_ops", OP, [("t", 1, 11, 100, 200, "record_param_comms", "{}")])
    given(con, "annotations", ["trace_id", "pid", "tid", "start_ns", "end_ns", "name", "is_gpu", "args_json"], [
        ("t", 1, 11, 110, 190, "nccl:all_to_all", False, '{"Input Dims": [[8, 1024]], "Input type": ["float"]}')])
    load_sql(con, "base/collectives.sql")
    assert rows(con, f"SELECT {COLUMNS} FROM collectives") == [
        (None, 0, "all_reduce", "ncclKernel_AllReduce_RING_LL_Sum_half(ncclWorkElem)", None, None, None, None,
         "float16", None, None, None, 10, 1, None),
        (None, 1, "all_to_all", "nccl:all_to_all", None, None, None, None, "float32", 8192, None, 32768, 100, 1,
         "nccl:all_to_all")]


def test_nsight_nvtx_range_and_ranks_of_the_export(con):
    given(con, "traces", ["trace_id", "source"], [("n", "nsys")])
    given(con, "kernels", KERNEL, [
        ("n", 8, 0, 20, 500, 700, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 5),
        ("n", 9, 1, 20, 520, 700, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 5)])
    given(con, "api_calls", API, [("n", 8, 81, 120, 130, 5, "cuLaunchKernelEx", "driver"),
                                  ("n", 8, 81, 120, 131, 5, "cuLaunchKernelEx", "backtrace"),
                                  ("n", 9, 91, 140, 150, 5, "cuLaunchKernelEx", "driver")])
    given(con, "annotations", ["trace_id", "pid", "tid", "start_ns", "end_ns", "name", "is_gpu"], [
        ("n", 8, 81, 100, 200, "ncclAllReduce", False), ("n", 9, 91, 100, 200, "ncclAllReduce", False)])
    load_sql(con, "base/collectives.sql")
    assert rows(con, "SELECT run_id, rank, pid, operation, dtype, bytes, launch_op FROM collectives ORDER BY pid") == [
        ("n", 0, 8, "all_reduce", "bfloat16", None, "ncclAllReduce"),
        ("n", 1, 9, "all_reduce", "bfloat16", None, "ncclAllReduce")]


@pytest.mark.parametrize("label,operation", [
    ("allreduce", "all_reduce"), ("nccl:all_reduce", "all_reduce"), ("c10d::allreduce_", "all_reduce"),
    ("ncclAllReduce", "all_reduce"), ("_allgather_base", "all_gather"), ("all_gather_into_tensor_coalesced", "all_gather"),
    ("nccl:_reduce_scatter_base", "reduce_scatter"), ("reduce_scatter_tensor", "reduce_scatter"),
    ("all_to_all_single", "all_to_all"), ("c10d::alltoall_base_", "all_to_all"), ("ncclAlltoAll", "all_to_all"),
    ("nccl:broadcast", "broadcast"), ("ncclDevKernel_Broadcast_RING_LL(x)", "broadcast"),
    ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", "send_recv"), ("nccl:send", "send"),
    ("nccl:all_reduce_barrier", "barrier"), ("barrier", "barrier"),
    ("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", None), ("ncclGroupEnd", None)])
def test_operation_spellings(con, label, operation):
    load_sql(con, "base/collective_operation.sql")
    assert rows(con, "SELECT collective_operation(?)", [label]) == [(operation,)]


@pytest.mark.parametrize("kernel,dtype", [
    ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", "float32"), ("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(x)",
                                                                 "bfloat16"),
    ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", "float32"),
    ("ncclKernel_AllReduce_RING_LL_Sum___nv_bfloat16(ncclWorkElem)", "bfloat16"),
    ("ncclKernel_AllReduce_RING_LL_Sum_int64_t(x)", "int64"),
    ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(x)", None), ("ncclDevKernel_AllGather_RING_LL(x)", None)])
def test_kernel_dtype(con, kernel, dtype):
    load_sql(con, "base/collective_dtype.sql")
    assert rows(con, "SELECT collective_kernel_dtype(?)", [kernel]) == [(dtype,)]


def test_nccl_tests_bytes_and_bus_factors(con):
    load_sql(con, "base/collective_bytes.sql")
    assert rows(con, """SELECT collective_bytes('all_gather', 256, NULL, 4), collective_bytes('reduce_scatter', NULL, 256, 4),
                               collective_bytes('all_reduce', 1024, 1024, 4), nccl_bus_factor('all_reduce', 4),
                               nccl_bus_factor('all_to_all', 8), nccl_bus_factor('broadcast', 8),
                               nccl_bus_factor('all_reduce', NULL)""") == [(1024, 1024, 1024, 1.5, 0.875, 1.0, None)]
