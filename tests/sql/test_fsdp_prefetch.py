"""sql/analysis/fsdp_prefetch.sql: when the compute stream waited for an FSDP all-gather, on literal
ranges, launches and kernels of one rank. The views under it (collectives, steps, gpu_op_class,
collective_instance_ranks) are given as tables holding the columns it reads."""

from __future__ import annotations

from .conftest import FILES, given, rows

US = 1000  # the literals' times are in µs: is_late is a wait of 10 µs or more


def us(columns, data: list[tuple]) -> list[tuple]:
    """The rows with their *_ns columns from µs to ns."""
    return [tuple(v * US if c.endswith("_ns") and v is not None else v for c, v in zip(columns, r)) for r in data]


def table(con, name: str, columns: dict[str, str], data: list[tuple]) -> None:
    con.execute(f"CREATE TABLE {name} ({', '.join(f'{c} {t}' for c, t in columns.items())})")
    con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' for _ in columns)})", us(list(columns), data))


def put(con, name: str, columns: list[str], data: list[tuple]) -> None:
    given(con, name, columns, us(columns, data))


B, INT, V = "BIGINT", "INTEGER", "VARCHAR"


def load(con):
    # main thread 10; all-gathers on stream 20, the compute stream 7
    put(con, "annotations", ["trace_id", "pid", "tid", "name", "start_ns", "end_ns", "is_gpu"], [
        ("t", 1, 10, "FSDP::pre_forward (0)", 90, 460, False),
        ("t", 1, 10, "FSDP::all_gather (0)", 100, 200, False),
        ("t", 1, 10, "FSDP::all_gather_copy_out (0)", 300, 320, False),
        ("t", 1, 10, "FSDP::forward_prefetch for 1", 390, 455, False),  # unit 0 prefetches unit 1
        ("t", 1, 10, "FSDP::all_gather (1)", 400, 450, False),
        ("t", 1, 10, "FSDP::pre_forward (1)", 890, 925, False),
        ("t", 1, 10, "FSDP::all_gather_copy_out (1)", 900, 920, False),
        ("t", 1, 10, "FSDP::pre_backward (2)", 1140, 1530, False),
        ("t", 1, 10, "FSDP::all_gather (2)", 1150, 1170, False),
        ("t", 1, 10, "FSDP::all_gather_copy_out (2)", 1495, 1520, False)])
    put(con, "api_calls", ["trace_id", "pid", "tid", "start_ns", "correlation_id", "api"],
          [("t", 1, 10, 305, 5, "runtime"), ("t", 1, 10, 905, 6, "runtime"), ("t", 1, 10, 950, 7, "runtime"),
           ("t", 1, 10, 1500, 8, "runtime")])
    table(con, "gpu_op_class", {"trace_id": V, "pid": B, "device_id": INT, "stream_id": B, "start_ns": B, "end_ns": B,
                                "op_class": V, "correlation_id": B}, [
        ("t", 1, 0, 7, 200, 250, "compute", 1),
        ("t", 1, 0, 7, 1010, 1015, "compute", 5),    # unit 0's copy-out: after its all-gather ended
        ("t", 1, 0, 7, 1020, 1090, "compute", 7),
        ("t", 1, 0, 7, 1100, 1110, "compute", 6),    # unit 1's: queued behind other work
        ("t", 1, 0, 7, 1510, 1515, "compute", 8),    # unit 2's: launched late by the host
        ("t", 1, 0, 7, 2100, 2200, "compute", 9),
        ("t", 1, 0, 20, 160, 1000, "communication", 2), ("t", 1, 0, 20, 430, 480, "communication", 3),
        ("t", 1, 0, 20, 1200, 1300, "communication", 4), ("t", 1, 0, 20, 2000, 2400, "communication", 10)])
    table(con, "collectives", {"run_id": V, "trace_id": V, "rank": INT, "pid": B, "tid": B, "call_index": B, "operation": V,
                               "launch_start_ns": B, "start_ns": B, "end_ns": B, "device_id": INT, "stream_id": B}, [
        ("run", "t", 0, 1, 10, 0, "all_gather", 150, 160, 1000, 0, 20),
        ("run", "t", 0, 1, 10, 1, "all_gather", 420, 430, 480, 0, 20),
        ("run", "t", 0, 1, 10, 2, "all_gather", 1160, 1200, 1300, 0, 20),
        ("run", "t", 0, 1, 10, 3, "reduce_scatter", 1900, 2000, 2400, 0, 20)])
    table(con, "steps", {"trace_id": V, "pid": B, "step": V, "step_index": B, "start_ns": B, "end_ns": B, "wall_ns": B,
                         "host_start_ns": B, "host_end_ns": B}, [("t", 1, "ProfilerStep#1", 0, 0, 5000, 5000, 0, 5000)])
    table(con, "collective_instance_ranks", {"trace_id": V, "pid": B, "call_index": B, "wait_ns": B},
          [("t", 1, 0, 600)])  # unit 0's all-gather waited 600 µs for the other rank
    con.execute(FILES["lib/intervals.sql"].text)
    con.execute(FILES["analysis/fsdp_prefetch.sql"].text)


def test_the_compute_stream_waits_only_for_an_all_gather_that_ends_after_it_is_ready(con):
    load(con)
    assert rows(con, """SELECT unit, pass, prefetched, ready_ns // 1000, wait_ns // 1000, lead_ns // 1000, is_late,
                               peer_wait_ns // 1000 FROM fsdp_prefetch ORDER BY call_index""") == [
        # copy-out launched at 305 on an idle stream; the all-gather ended at 1000: 695 µs waited
        ("0", "forward", False, 305, 695, -695, True, 600),
        # prefetched: done at 480, long before the stream reached the copy-out (at 1090, behind other work)
        ("1", "forward", True, 1090, 0, 610, False, None),
        # ended at 1300, the host launched the copy-out at 1500: the stream waited for the host, not it
        ("2", "backward", False, 1500, 0, 200, False, None)]


def test_a_step_sums_the_waits_and_the_reduce_scatters_overlap(con):
    load(con)
    assert rows(con, """SELECT all_gathers, prefetched, late, wait_ns // 1000, forward_wait_ns // 1000,
                               backward_wait_ns // 1000, peer_wait_ns // 1000, wait_pct, reduce_scatters,
                               reduce_scatter_ns // 1000, reduce_scatter_overlapped_ns // 1000,
                               reduce_scatter_exposed_ns // 1000 FROM fsdp_prefetch_steps""") == [
        (3, 1, 1, 695, 695, 0, 600, 13.9, 1, 400, 100, 300)]
