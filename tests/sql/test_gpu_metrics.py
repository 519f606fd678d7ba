"""gpu_metric_samples, gpu_metrics_over and the views and rules over them, on literal samples.

Samples at 0, 100 and 200 ns: each covers up to the next (the last as long as the one before), so
[0, 100), [100, 200), [200, 300). DRAM peak 1000 GB/s (memoryBandwidth 1e12 B/s); an H100's PCIe
link is Gen5 x16 (63.0 GB/s per direction)."""

from __future__ import annotations

import pytest

from .conftest import given, load_sql, rows

H100 = "NVIDIA H100 80GB HBM3"


def samples(con, trace="t", dram_read=(10, 30, 50), tensor=(0, 0, 0), rx=(0, 0, 0), tx=(0, 0, 0)):
    given(con, "devices", ["trace_id", "device_id", "name", "memory_bandwidth_bytes_per_s"],
          [(trace, 0, H100, 10 ** 12)])
    data = []
    for i, ts in enumerate((0, 100, 200)):
        for metric, values in (("DRAM Read Bandwidth", dram_read), ("DRAM Write Bandwidth", (0, 0, 0)),
                               ("Tensor Active", tensor), ("SMs Active", (100, 100, 100)),
                               ("PCIe RX Throughput", rx), ("PCIe TX Throughput", tx)):
            data.append((trace, 0, ts, metric, "Throughput %", values[i]))
        data.append((trace, 0, ts, "GPC Clock Frequency", "Hz", 1.98e9))
    given(con, "gpu_metrics", ["trace_id", "device_id", "timestamp_ns", "metric", "unit", "value"], data)


def test_samples_cover_until_the_next_and_convert_to_gb_per_s(con):
    samples(con, rx=(0, 50, 100))
    load_sql(con, "base/gpu_metric_samples.sql")
    got = rows(con, "SELECT sample_index, start_ns, end_ns, dram_read_gb_per_s, round(pcie_rx_gb_per_s, 3), "
                    "tensor_active_pct FROM gpu_metric_samples ORDER BY 1")
    gen5_x16 = 32 * 16 * 128 / 130 / 8
    assert got == [(0, 0, 100, 100.0, 0.0, 0.0), (1, 100, 200, 300.0, round(gen5_x16 / 2, 3), 0.0),
                   (2, 200, 300, 500.0, round(gen5_x16, 3), 0.0)]


def test_unknown_gpu_has_no_pcie_rate(con):
    samples(con)
    con.execute("UPDATE devices SET name = 'Some GPU'")
    load_sql(con, "base/gpu_metric_samples.sql")
    assert rows(con, "SELECT DISTINCT pcie_peak_gb_per_s, dram_peak_gb_per_s FROM gpu_metric_samples") == [(None, 1000.0)]


def test_intervals_are_cut_at_the_sample_edges(con):
    samples(con)
    given(con, "kernels", ["trace_id", "device_id", "pid", "name", "start_ns", "end_ns"],
          [("t", 0, 1, "k", 50, 250),     # 50 ns of 10 %, 100 of 30 %, 50 of 50 %: 30 % = 300 GB/s
           ("t", 0, 1, "early", -50, 50),  # half before the samples: only [0, 50) is sampled
           ("t", 0, 1, "before", -100, -50), ("t", 0, 1, "after", 300, 400),  # outside: no row
           ("t", 1, 1, "other_gpu", 0, 100)])  # a device without samples
    load_sql(con, "analysis/kernel_gpu_metrics.sql")
    got = rows(con, "SELECT name, instances, duration_ns, sampled_ns, dram_read_gb_per_s, sm_active_pct "
                    "FROM kernel_gpu_metrics ORDER BY name")
    assert got == [("early", 1, 100, 50, 100.0, 100.0), ("k", 1, 200, 200, 300.0, 100.0)]


def test_a_lane_averages_over_all_its_intervals(con):
    samples(con)
    given(con, "kernels", ["trace_id", "device_id", "pid", "name", "start_ns", "end_ns"],
          [("t", 0, 1, "k", 0, 100), ("t", 0, 1, "k", 150, 200)])  # 100 ns at 10 %, 50 at 30 %
    load_sql(con, "analysis/kernel_gpu_metrics.sql")
    (instances, duration, read), = rows(con, "SELECT instances, duration_ns, dram_read_gb_per_s FROM kernel_gpu_metrics")
    assert (instances, duration) == (2, 150)
    assert read == pytest.approx((100 * 100 + 50 * 300) / 150)


def test_tensor_cores_idle_flags_a_gemm_without_tensor_activity(con):
    samples(con, tensor=(0, 1, 0))
    given(con, "kernels", ["trace_id", "device_id", "pid", "name", "start_ns", "end_ns", "duration_ns"],
          [("t", 0, 1, "sm80_xmma_gemm_f32f32_ffma", 0, 300, 300), ("t", 0, 1, "vectorized_add", 300, 310, 10)])
    load_sql(con, "analysis/findings_gpu_metrics.sql")
    # too short to judge (1 ms of samples is the minimum): no finding
    assert rows(con, "SELECT count(*) FROM finding_tensor_cores_idle") == [(0,)]
    con.execute("UPDATE gpu_metrics SET timestamp_ns = timestamp_ns * 1000000")
    con.execute("UPDATE kernels SET start_ns = start_ns * 1000000, end_ns = end_ns * 1000000, "
                "duration_ns = duration_ns * 1000000")
    got = rows(con, "SELECT rule, pid, device_id, start_ns, duration_ns FROM finding_tensor_cores_idle")
    assert got == [("tensor_cores_idle", 1, 0, 0, 300_000_000)]
    con.execute("UPDATE gpu_metrics SET value = 40 WHERE metric = 'Tensor Active'")
    assert rows(con, "SELECT count(*) FROM finding_tensor_cores_idle") == [(0,)]


def test_pcie_bound_copies_need_a_busy_link(con):
    ms = 1_000_000
    samples(con, rx=(90, 90, 90), tx=(10, 10, 10))
    con.execute(f"UPDATE gpu_metrics SET timestamp_ns = timestamp_ns * {ms}")
    given(con, "traces", ["trace_id", "start_ns", "end_ns", "duration_ns"], [("t", 0, 300 * ms, 300 * ms)])
    given(con, "memcpy", ["trace_id", "device_id", "pid", "operation", "start_ns", "end_ns", "bytes"],
          [("t", 0, 1, "Host-to-Device", 0, 200 * ms, 10 ** 10), ("t", 0, 1, "Device-to-Host", 200 * ms, 300 * ms, 10 ** 9)])
    load_sql(con, "analysis/findings_gpu_metrics.sql")
    got = rows(con, "SELECT rule, start_ns, duration_ns FROM finding_pcie_bound_copies")
    assert got == [("pcie_bound_copies", 0, 200 * ms)]  # tx at 10 % of the link: not bound


def test_memory_bound_range(con):
    ms = 1_000_000
    samples(con, dram_read=(70, 70, 20))
    con.execute(f"UPDATE gpu_metrics SET timestamp_ns = timestamp_ns * {ms}")
    given(con, "traces", ["trace_id", "start_ns", "end_ns"], [("t", 0, 300 * ms)])
    given(con, "annotations", ["trace_id", "annotation_id", "pid", "tid", "depth", "start_ns", "end_ns", "name",
                               "domain", "kind"],
          [("t", 0, 1, 1, 0, 0, 200 * ms, "copy", None, "push_pop"),
           ("t", 1, 1, 1, 0, 200 * ms, 300 * ms, "other", None, "push_pop")])
    given(con, "api_calls", ["trace_id", "pid", "tid", "correlation_id", "start_ns", "end_ns", "name", "api"],
          [("t", 1, 1, 1, 1, 2, "cudaLaunchKernel", "runtime"),
           ("t", 1, 1, 2, 200 * ms + 1, 200 * ms + 2, "cudaLaunchKernel", "runtime")])
    given(con, "kernels", ["trace_id", "device_id", "pid", "correlation_id", "name", "start_ns", "end_ns", "duration_ns"],
          [("t", 0, 1, 1, "copy_kernel", 0, 200 * ms, 200 * ms), ("t", 0, 1, 2, "k", 200 * ms, 300 * ms, 100 * ms)])
    load_sql(con, "analysis/findings_gpu_metrics.sql")
    got = rows(con, "SELECT rule, pid, start_ns, duration_ns, evidence LIKE ':copy: 1 range(s)%70 % of the 1000 GB/s%' "
                    "FROM finding_memory_bound")
    assert got == [("memory_bound", 1, 0, 200 * ms, True)]
