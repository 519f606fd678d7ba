"""sql/analysis/kernel_measured_roofline.sql on literal samples (tests/sql/test_gpu_metrics.py's:
[0, 100) 10 %, [100, 200) 30 %, [200, 300) 50 % DRAM read of a 1000 GB/s peak)."""

from __future__ import annotations

import json

from .conftest import given, load_sql, rows
from .test_gpu_metrics import samples

KERNEL = ["trace_id", "device_id", "pid", "stream_id", "name", "start_ns", "end_ns", "correlation_id"]


def test_measured_bytes_against_the_copy_and_the_model(con):
    samples(con)
    # a device-to-device copy over [100, 200): 300 GB/s x 100 ns = 30,000 bytes measured; 15,000 copied
    given(con, "memcpy", ["trace_id", "device_id", "pid", "stream_id", "start_ns", "end_ns", "bytes", "copy_kind",
                          "src_kind", "dst_kind", "name", "correlation_id"],
          [("t", 0, 1, 7, 100, 200, 15_000, "DtoD", "device", "device", "Memcpy DtoD (Device -> Device)", 1)])
    # a GEMM kernel over [200, 300) (500 GB/s: 50,000 bytes) launched by an aten::mm of 64 x 64 x 64
    # fp32: 2 x 64^3 = 524,288 FLOPs, 3 x 64 x 64 x 4 = 49,152 bytes modelled
    given(con, "kernels", KERNEL + ["duration_ns", "tid", "external_id"], [("t", 0, 1, 7, "gemm", 200, 300, 2, 100, 1, 9)])
    args = {"Input Dims": [[64, 64], [64, 64]], "Input type": ["float", "float"], "External id": 9}
    given(con, "cpu_ops", ["trace_id", "op_id", "pid", "tid", "start_ns", "end_ns", "duration_ns", "name", "args_json",
                           "external_id"], [("t", 1, 1, 1, 140, 170, 30, "aten::mm", json.dumps(args), 9)])
    load_sql(con, "analysis/kernel_measured_roofline.sql")
    got = rows(con, "SELECT name, measured_bytes, modelled_bytes, round(measured_to_modelled, 4), flops, "
                    "measured_bound, modelled_bound FROM kernel_measured_roofline ORDER BY name")
    # H100 fp32 ridge: 67 TFLOP/s / 3.35 TB/s = 20 FLOP/byte; measured 524,288 / 50,000 = 10.5 (memory),
    # modelled 524,288 / 49,152 = 10.7 (memory)
    assert got == [("Memcpy DtoD", 30_000, 30_000, 1.0, 0, "memory", "memory"),
                   ("gemm", 50_000, 49_152, round(50_000 / 49_152, 4), 524_288, "memory", "memory")]
