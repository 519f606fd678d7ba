"""sql/base/op_output_shapes.sql: an output's shape from the calls that name it in input_op_ids."""

from __future__ import annotations

from .conftest import given, load_sql, rows
from .op_rows import NVTX, nvtx_range


def test_output_shape_from_the_earliest_consumer(con):
    # annotation ids (op_calls.op_id) 11.. and RecordFunction handles 501.. differ on purpose
    given(con, "annotations", NVTX, [
        # producer: aten::max returns (values [4], indices [4])
        nvtx_range(11, 501, "aten::max", [[4, 6], [], []], [(0, -1), (0, -1), (0, -1)], 0, 100),
        # its two outputs consumed: values by aten::add (input 2), indices by aten::gather (input 3)
        nvtx_range(12, 502, "aten::add", [[4], [4], []], [(0, -1), (501, 0), (0, -1)], 200, 300),
        nvtx_range(13, 503, "aten::gather", [[4, 6], [], [4]], [(0, -1), (0, -1), (501, 1)], 400, 500),
        # later, a tensor made outside any recorded call at the freed address of the values still
        # names (501, 0): a stale entry with another shape, which the earliest consumer outranks
        nvtx_range(14, 504, "aten::mul", [[9, 9]], [(501, 0)], 600, 700),
        # a range without input_op_ids text (plain autograd-nvtx) names nothing
        ("t", 15, 1, 1, 800, 900, "aten::relu, op_id = 505", "push_pop", None, 0),
    ])
    load_sql(con, "base/op_output_shapes.sql")
    assert rows(con, """SELECT op_id, output_index, shape, consumer_op_id, consumers
                        FROM op_output_shapes ORDER BY ALL""") == [(11, 0, [4], 12, 2), (11, 1, [4], 13, 1)]


def test_handles_are_per_process(con):
    other = nvtx_range(21, 501, "aten::neg", [[3]], [(0, -1)], 0, 50)
    given(con, "annotations", NVTX, [
        nvtx_range(11, 501, "aten::neg", [[5]], [(0, -1)], 0, 100),
        nvtx_range(12, 502, "aten::abs", [[5]], [(501, 0)], 200, 300),
        (other[0], other[1], 2, *other[3:]),  # process 2 has its own handle 501, consumed by no call
    ])
    load_sql(con, "base/op_output_shapes.sql")
    assert rows(con, "SELECT pid, op_id, shape FROM op_output_shapes") == [(1, 11, [5])]
