"""sql/base/op_data_flow.sql: each tensor input of an emit_nvtx range with the call that produced it."""

from __future__ import annotations

from .conftest import given, load_sql, rows
from .op_rows import NVTX, nvtx_range


def test_inputs_with_their_producers(con):
    given(con, "annotations", NVTX, [
        # annotation ids 11.. and RecordFunction handles 501.. differ on purpose
        nvtx_range(11, 501, "aten::randn", [[], [], [], [], []], [(0, -1)] * 5, 0, 100),
        nvtx_range(12, 502, "aten::sum", [[4, 6], [], []], [(501, 0), (0, -1), (0, -1)], 200, 300, seq=3),
        # a tensor list flattened (aten::cat's two tensors), then the dim; a 0-dim tensor's shape is []
        nvtx_range(13, 503, "aten::cat", [[4, 6], [], []], [(501, 0), (502, 0), (0, -1)], 400, 500),
        # a tensor no recorded call produced names (0,-1): no row
        nvtx_range(14, 504, "aten::neg", [[8]], [(0, -1)], 600, 700),
        # plain autograd-nvtx ranges (no shapes, no input_op_ids), user ranges: no rows
        ("t", 15, 1, 1, 800, 900, "aten::relu, op_id = 505", "push_pop", None, 0),
        ("t", 16, 1, 1, 0, 1000, "step 1", "push_pop", None, 0),
    ])
    load_sql(con, "base/op_data_flow.sql")
    assert rows(con, """SELECT op_id, start_ns, input_index, shape, producer_op_id, output_index
                        FROM op_data_flow ORDER BY op_id, input_index""") == [
        (12, 200, 0, [4, 6], 11, 0), (13, 400, 0, [4, 6], 11, 0), (13, 400, 1, [], 12, 0)]
