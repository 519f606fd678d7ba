"""gpu_gap_causes (why the GPU sat idle) and run_comparison (what changed between runs of one
workload), on traces whose answer is known by construction, and on the real sample lake."""

from __future__ import annotations

import gzip
import json

from conftest import DATA
from tracelake.cli.main import main
from tracelake.lake.database import connect


def _kernel(name, ts, dur, corr):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": 7, "correlation": corr}}


def _call(name, ts, dur, corr=None):
    args = {"correlation": corr} if corr is not None else {}
    return {"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args}


def test_gap_causes_by_construction(tmp_path):
    events = [
        _call("cudaLaunchKernel", 95, 2, 1), _kernel("A", 100, 10, 1),
        # B was launched before A finished, yet started 190 µs after it: the GPU waited on something else
        _call("cudaLaunchKernel", 105, 2, 2), _kernel("B", 300, 10, 2),
        # C was launched 95 µs after B finished, while the host sat in a synchronize: the host was late
        _call("cudaStreamSynchronize", 305, 100), _call("cudaLaunchKernel", 405, 2, 3), _kernel("C", 420, 10, 3),
    ]
    trace = tmp_path / "gaps.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    lake = tmp_path / "lake"
    assert main(["ingest", str(trace), "--lake", str(lake), "-q"]) == 0
    con = connect(lake)
    rows = con.sql("""SELECT duration_ns, next_op, cause, launch_delay_ns, host_activity FROM gpu_gap_causes
                      ORDER BY start_ns""").fetchall()
    con.close()
    assert rows == [(190_000, "B", "other", -5_000, None),
                    (110_000, "C", "host_wait", 95_000, "cudaStreamSynchronize")]


def test_host_activity_is_the_inner_of_an_operator_and_a_range_that_start_together(tmp_path):
    """At the gap start the launching thread runs an operator and a range that began in the same
    microsecond (a record_function around an op): the one that ends first is the innermost, either
    way round (before, one of the two came out whichever came first in DuckDB's rows)."""
    answers = []
    for op_us, range_us in ((95, 295), (295, 95)):
        events = [_call("cudaLaunchKernel", 95, 2, 1), _kernel("A", 100, 10, 1),
                  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 105, "dur": op_us},
                  {"ph": "X", "cat": "user_annotation", "name": "my_range", "pid": 1, "tid": 1, "ts": 105,
                   "dur": range_us},
                  _call("cudaLaunchKernel", 450, 2, 2), _kernel("B", 460, 10, 2)]
        trace = tmp_path / f"tie{op_us}.json"
        trace.write_text(json.dumps({"traceEvents": events}))
        lake = tmp_path / f"lake{op_us}"
        assert main(["ingest", str(trace), "--lake", str(lake), "-q"]) == 0
        con = connect(lake)
        answers += con.sql("SELECT next_op, host_activity FROM gpu_gap_causes").fetchall()
        con.close()
    assert answers == [("B", "aten::mm"), ("B", "my_range")]


def test_gap_causes_cover_every_gap_of_the_real_sample(sample_con):
    both = sample_con.sql("""
        SELECT (SELECT count(*) FROM gpu_gaps_over(10000)), (SELECT count(*) FROM gpu_gap_causes_over(10000)),
               (SELECT sum(duration_ns) FROM gpu_gaps_over(10000)),
               (SELECT sum(duration_ns) FROM gpu_gap_causes_over(10000)),
               (SELECT count(*) FROM gpu_gap_causes_over(10000) WHERE next_op IS NULL)""").fetchall()[0]
    assert both[0] == both[1] > 100 and both[2] == both[3] and both[4] == 0
    # The sample nsys export's longest gap (3.9 s, NVIDIA's gpu_gaps agrees) ends with a host-to-device
    # copy issued after the host returned from a synchronize: the script's data loading.
    row = sample_con.sql("""SELECT next_op, cause, host_activity FROM gpu_gap_causes
                            WHERE trace_id LIKE 'nsys-%' ORDER BY duration_ns DESC LIMIT 1""").fetchall()[0]
    assert row == ("[CUDA memcpy Host-to-Device]", "host_wait", "cudaStreamSynchronize")


def _slowed_copy(src, dst, kernel_prefix, factor):
    """The trace with one kernel family's durations multiplied by `factor` (a known regression)."""
    doc = json.loads(gzip.decompress(src.read_bytes()))
    slowed = 0
    for e in doc["traceEvents"]:
        if e.get("cat") == "kernel" and str(e.get("name", "")).startswith(kernel_prefix):
            e["dur"] = round(e["dur"] * factor, 3)
            slowed += 1
    assert slowed > 0
    dst.write_bytes(gzip.compress(json.dumps(doc).encode()))


def test_run_comparison_finds_the_slowed_kernel(tmp_path):
    src = DATA / "torch-2.11_mnist-cnn-train_h100.pt.trace.json.gz"
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a_before.pt.trace.json.gz").write_bytes(src.read_bytes())
    _slowed_copy(src, runs / "b_after.pt.trace.json.gz", "sm80_xmma_gemm", 3.0)
    lake = tmp_path / "lake"
    assert main(["ingest", str(runs), "--lake", str(lake), "-q"]) == 0
    con = connect(lake)
    pair = con.sql("""SELECT a.first_file, b.first_file, c.similarity, c.compared_per, c.kernel_change_pct
                      FROM run_comparison c JOIN runs a ON a.run_id = c.run_id
                      JOIN runs b ON b.run_id = c.previous_run_id""").fetchall()
    changes = con.sql("SELECT name, change_pct FROM run_kernel_changes ORDER BY delta_ns_per_rank_step DESC").fetchall()
    con.close()
    assert len(pair) == 1
    after, before, similarity, unit, kernel_change = pair[0]
    assert (after, before, similarity, unit) == ("b_after.pt.trace.json.gz", "a_before.pt.trace.json.gz", 1.0,
                                                 "step")
    assert kernel_change > 5
    slower = [(n, c) for n, c in changes if abs(c) > 0.01]
    assert slower and all(n.startswith("sm80_xmma_gemm") and abs(c - 200) < 0.5 for n, c in slower)


def test_different_workloads_are_not_compared(sample_con):
    assert sample_con.sql("SELECT count(*) FROM run_comparison").fetchall() == [(0,)]
    assert sample_con.sql("SELECT count(*) FROM runs").fetchall() == [(4,)]
