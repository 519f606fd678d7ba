-- nvtx_conv_args: what a convolution's FLOPs need that an emit_nvtx range does not record,
-- recovered from the operator tree and the data flow (op_data_flow). A range such as
-- 'aten::convolution, seq = 1, op_id = 3314, sizes = [[32, 3, 224, 224], [64, 3, 7, 7], [], ...]'
-- carries the input and weight shapes but no stride, padding, dilation, transposed or
-- output_mask (docs/operators.md):
--   - output_shape (forward): the convolution's output as its consumers saw it: consumers name
--     the outermost call that returned the tensor (aten::conv2d around aten::convolution, and
--     the autocast aten::conv2d around that), so the call and the convolution calls enclosing it
--     are asked, the innermost with an answer wins. Kept only when it fits the inputs: same rank,
--     same batch, and C_out = weight[0] (or a multiple of weight[1] when transposed); else NULL.
--     FlopCounterMode's count needs nothing more: 2 x N x prod(output spatial) x prod(weight).
--   - transposed: a convolution call enclosing it or inside it is a transposed one
--     (aten::conv_transpose2d, aten::cudnn_convolution_transpose, slow_conv_transpose2d, ...).
--     For aten::convolution_backward, the forward call's (the aten::convolution whose sequence
--     number its autograd node ConvolutionBackward0 carries); NULL without that forward call.
--   - output_mask (backward): which of grad_input, grad_weight, grad_bias were computed:
--     output k was computed when a later call consumes (the call, k). An output that was not
--     computed is an undefined tensor, which the NVTX observer never records, so no call can
--     name it; one computed but consumed by no recorded call (torch.autograd.grad capturing a
--     leaf's gradient, a consumer outside the capture) reads as not computed.
--
-- depends: op_calls, op_data_flow, op_category
--
-- @column trace_id      Trace.
-- @column op_id         op_calls.op_id of the aten::convolution / _convolution / convolution_backward call.
-- @column name          Operator name.
-- @column transposed    Transposed convolution (NULL for a backward call whose forward call is not in the trace).
-- @column output_shape  Forward: the output's shape (BIGINT[]) from its consumers; NULL when none consumed it
--                       or the shape does not fit the inputs. NULL for backward calls.
-- @column output_mask   Backward: [grad_input, grad_weight, grad_bias] computed (BOOLEAN[3]); NULL for forward calls.
CREATE OR REPLACE VIEW nvtx_conv_args AS
WITH RECURSIVE calls AS (
    -- the convolution calls of the NVTX ranges (aten::conv2d, aten::convolution,
    -- aten::cudnn_convolution_transpose, ...) and the autograd nodes (ConvolutionBackward0);
    -- the text test first, on the range text: it spares the other ranges the name parsing
    SELECT trace_id, pid, op_id, parent_op_id, name, sequence_number, inputs_raw
    FROM op_calls
    WHERE source = 'nvtx' AND contains(lower(inputs_raw), 'conv') AND op_category(name) = 'conv'
),
chain AS (
    SELECT * FROM calls WHERE name LIKE 'aten::%'
),
conv AS (
    SELECT *, op_inputs('nvtx', inputs_raw)['Input Dims'] AS d
    FROM chain
    WHERE name IN ('aten::convolution', 'aten::_convolution', 'aten::convolution_backward')
),
up AS (
    -- each convolution call (level 0) and the convolution calls enclosing it
    SELECT trace_id, op_id AS conv_op_id, op_id, parent_op_id, 0 AS level FROM conv
    UNION ALL
    SELECT u.trace_id, u.conv_op_id, p.op_id, p.parent_op_id, u.level + 1
    FROM up u JOIN chain p ON p.trace_id = u.trace_id AND p.op_id = u.parent_op_id
),
down AS (
    -- the convolution calls inside each one
    SELECT trace_id, op_id AS conv_op_id, op_id FROM conv
    UNION ALL
    SELECT d.trace_id, d.conv_op_id, k.op_id
    FROM down d JOIN chain k ON k.trace_id = d.trace_id AND k.parent_op_id = d.op_id
),
named_transposed AS (
    SELECT trace_id, conv_op_id, bool_or(c.name LIKE '%transpose%') AS transposed
    FROM (SELECT trace_id, conv_op_id, op_id FROM up UNION SELECT trace_id, conv_op_id, op_id FROM down) a
    JOIN chain c USING (trace_id, op_id)
    GROUP BY ALL
),
outputs AS (
    -- per convolution call and output index: the shape its earliest consumer saw, from the
    -- innermost call of its chain that consumers name (op_output_shapes, for these calls only)
    SELECT u.trace_id, u.conv_op_id, f.output_index, arg_min(f.shape, (u.level, f.start_ns, f.op_id)) AS shape
    FROM up u
    JOIN op_data_flow f ON f.trace_id = u.trace_id AND f.producer_op_id = u.op_id
    GROUP BY ALL
),
forward AS (
    SELECT c.*, n.transposed, o.shape AS y
    FROM conv c
    JOIN named_transposed n ON n.trace_id = c.trace_id AND n.conv_op_id = c.op_id
    LEFT JOIN outputs o ON o.trace_id = c.trace_id AND o.conv_op_id = c.op_id AND o.output_index = 0
    WHERE c.name <> 'aten::convolution_backward'
),
backward AS (
    -- the autograd node around the call (ConvolutionBackward0) carries the forward call's
    -- sequence number
    SELECT c.trace_id, c.op_id, c.name,
           CASE WHEN min(f.transposed) = max(f.transposed) THEN min(f.transposed) END AS transposed,
           list_transform([0, 1, 2], lambda k: coalesce(list_contains(list(o.output_index), k), false)) AS output_mask
    FROM conv c
    LEFT JOIN calls node ON node.trace_id = c.trace_id AND node.op_id = c.parent_op_id
    LEFT JOIN forward f ON f.trace_id = c.trace_id AND f.pid = c.pid AND f.sequence_number = node.sequence_number
    LEFT JOIN outputs o ON o.trace_id = c.trace_id AND o.conv_op_id = c.op_id
    WHERE c.name = 'aten::convolution_backward'
    GROUP BY ALL
)
SELECT trace_id, op_id, name, transposed,
       CASE WHEN len(y) = len(d[1]) AND y[1] = d[1][1]
                 AND CASE WHEN transposed THEN y[2] % d[2][2] = 0 ELSE y[2] = d[2][1] END
            THEN y END AS output_shape,
       CAST(NULL AS BOOLEAN[]) AS output_mask
FROM forward
UNION ALL
SELECT trace_id, op_id, name, transposed, NULL, output_mask
FROM backward;
