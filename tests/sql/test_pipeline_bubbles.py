"""sql/analysis/pipeline_microbatches.sql, pipeline_bubbles.sql: when a micro-batch occupies its stage and what is left
of the step, on literal ranges, operators, launches and kernels of a 2-stage GPipe step (stage 0: 2
micro-batches, stage 1: 1). The views under it (gpu_op_class, steps, rank_runs, collectives,
process_group_calls, rank_clock_offsets) are given as tables holding the columns it reads."""

from __future__ import annotations

from .conftest import FILES, given, rows

B, INT, V = "BIGINT", "INTEGER", "VARCHAR"


def table(con, name: str, columns: dict[str, str], data: list[tuple]) -> None:
    con.execute(f"CREATE TABLE {name} ({', '.join(f'{c} {t}' for c, t in columns.items())})")
    if data:
        con.executemany(f"INSERT INTO {name} VALUES ({', '.join('?' for _ in columns)})", data)


def load(con):
    # trace a: rank 0, pid 1 (main thread 10, autograd thread 11); trace b: rank 1, pid 2 (thread 20);
    # trace c: no pipeline
    given(con, "annotations", ["trace_id", "pid", "tid", "name", "start_ns", "end_ns", "is_gpu"], [
        ("a", 1, 10, "Forward 0", 0, 100, False), ("a", 1, 10, "Forward 1", 100, 200, False),
        ("a", 1, 10, "Backward 0", 500, 700, False), ("a", 1, 10, "Backward 1", 700, 900, False),
        ("b", 2, 20, "Forward 0", 150, 300, False), ("b", 2, 20, "Backward 0", 300, 500, False),
        ("c", 3, 30, "Forward 0", 0, 100, False)])  # a user's own range in a process that sends nothing
    given(con, "cpu_ops", ["trace_id", "pid", "tid", "name", "start_ns", "end_ns", "depth"], [
        ("a", 1, 10, "aten::linear", 10, 60, 0), ("a", 1, 10, "record_param_comms", 70, 80, 0),  # its send
        ("a", 1, 10, "aten::linear", 110, 150, 0),
        ("a", 1, 10, "c10d::recv_", 510, 520, 0), ("a", 1, 11, "autograd::engine::evaluate_function", 560, 620, 0),
        ("a", 1, 10, "c10d::recv_", 710, 720, 0), ("a", 1, 11, "autograd::engine::evaluate_function", 800, 850, 0),
        ("b", 2, 20, "c10d::recv_", 155, 160, 0), ("b", 2, 20, "aten::linear", 210, 260, 0),
        ("b", 2, 20, "aten::ones_like", 310, 400, 0), ("b", 2, 20, "c10d::send", 455, 460, 0)])
    given(con, "api_calls", ["trace_id", "pid", "tid", "start_ns", "correlation_id", "api"], [
        ("a", 1, 10, 20, 1, "runtime"), ("a", 1, 10, 75, 2, "runtime"), ("a", 1, 10, 120, 3, "runtime"),
        ("a", 1, 10, 515, 4, "runtime"), ("a", 1, 11, 565, 5, "runtime"), ("a", 1, 10, 715, 6, "runtime"),
        ("a", 1, 11, 805, 7, "runtime"),
        ("b", 2, 20, 157, 1, "runtime"), ("b", 2, 20, 215, 2, "runtime"), ("b", 2, 20, 320, 3, "runtime"),
        ("b", 2, 20, 457, 4, "runtime"), ("c", 3, 30, 10, 1, "runtime")])
    table(con, "gpu_op_class", {"trace_id": V, "pid": B, "stream_id": B, "start_ns": B, "end_ns": B, "op_class": V,
                                "correlation_id": B}, [
        ("a", 1, 7, 30, 90, "compute", 1), ("a", 1, 9, 95, 150, "communication", 2),
        ("a", 1, 7, 120, 190, "compute", 3),
        ("a", 1, 9, 520, 600, "communication", 4),  # the gradient arrives at 600
        ("a", 1, 7, 605, 680, "compute", 5),
        ("a", 1, 9, 720, 800, "communication", 6), ("a", 1, 7, 810, 880, "compute", 7),
        ("b", 2, 9, 160, 200, "communication", 1), ("b", 2, 7, 220, 280, "compute", 2),
        ("b", 2, 7, 330, 450, "compute", 3), ("b", 2, 9, 470, 500, "communication", 4),
        ("c", 3, 7, 20, 90, "compute", 1)])
    table(con, "collectives", {"trace_id": V, "pid": B, "call_index": B, "operation": V, "start_ns": B, "end_ns": B}, [
        ("a", 1, 0, "send_recv", 95, 150), ("a", 1, 1, "send_recv", 520, 600), ("a", 1, 2, "send_recv", 720, 800),
        ("b", 2, 0, "send_recv", 160, 200), ("b", 2, 1, "send_recv", 470, 500)])
    table(con, "process_group_calls", {"trace_id": V, "pid": B, "call_index": B, "group_ranks": "INTEGER[]", "group_size": B},
          [(t, p, i, [0, 1], 2) for t, p, n in (("a", 1, 3), ("b", 2, 2)) for i in range(n)])
    table(con, "rank_runs", {"trace_id": V, "pid": B, "run_id": V, "rank": INT}, [("a", 1, "run", 0), ("b", 2, "run", 1)])
    table(con, "steps", {"trace_id": V, "pid": B, "step": V, "step_index": B, "start_ns": B, "end_ns": B, "wall_ns": B,
                         "host_start_ns": B, "host_end_ns": B},
          [("a", 1, "ProfilerStep#1", 0, 0, 1000, 1000, 0, 1000), ("b", 2, "ProfilerStep#1", 0, 0, 1000, 1000, 0, 1000)])
    table(con, "rank_clock_offsets", {"run_id": V, "trace_id": V, "applied_offset_ns": B}, [])
    con.execute(FILES["lib/intervals.sql"].text)
    con.execute(FILES["analysis/pipeline_microbatches.sql"].text)
    con.execute(FILES["analysis/pipeline_bubbles.sql"].text)


def test_a_micro_batch_occupies_its_stage_from_its_first_operator_or_its_input(con):
    load(con)
    assert rows(con, """SELECT trace_id, stage, phase, microbatch, start_ns, end_ns, input_wait_ns
                        FROM pipeline_microbatches ORDER BY trace_id, start_ns""") == [
        ("a", 0, "forward", 0, 10, 90, 10),      # first operator to last kernel (the send is not its work)
        ("a", 0, "forward", 1, 110, 190, 10),
        ("a", 0, "backward", 0, 600, 680, 100),  # the autograd thread's operator began at 560, the gradient came at 600
        ("a", 0, "backward", 1, 800, 880, 100),
        ("b", 1, "forward", 0, 210, 280, 60),
        ("b", 1, "backward", 0, 310, 450, 10)]   # ends with its kernel, before its send


def test_the_bubble_is_the_rest_of_the_step_against_the_theoretical(con):
    load(con)
    assert rows(con, """SELECT stage, stages, microbatches, busy_ns, bubble_ns, bubble_pct, p2p_wait_ns, schedule_ns,
                               round(schedule_bubble_pct, 2), round(theoretical_bubble_pct, 2), is_holding
                        FROM pipeline_bubbles ORDER BY stage""") == [
        # busy 4 x 80; blocked on its receives 15 + 80 + 80 (the send's 95..110 before Forward 1 began);
        # the schedule: 10 (stage 0's first start) .. 880; (p - 1) / (m + p - 1) = 1 / 3
        (0, 2, 2, 320, 680, 68.0, 175, 870, 63.22, 33.33, True),
        (1, 2, 1, 210, 790, 79.0, 70, 870, 75.86, 50.0, False)]
