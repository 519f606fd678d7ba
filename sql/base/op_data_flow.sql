-- op_data_flow: which operator call produced each tensor input of an operator call, in Nsight
-- exports of programs run under emit_nvtx with shapes (`nsys profile
-- --pytorch=autograd-shapes-nvtx`). Each range names its inputs' producers:
-- 'aten::batch_norm, seq = 2, op_id = 3318, sizes = [[32, 64, 112, 112], [64], ...],
-- input_op_ids = [(3304,0), (1391,0), ...]', one (op_id, output_index) per entry of sizes
-- (PyTorch's NVTX observer): op_id is the RecordFunction handle of the call that last returned
-- that tensor, numbered per process, (0,-1) for a non-tensor argument or a tensor that no recorded
-- call returned. Nested calls (aten::conv2d > aten::convolution > aten::cudnn_convolution) all
-- return their result; the outermost ends last, so consumers name it.
-- The observer keys tensors by address: a tensor made outside any recorded call (a saved
-- variable unpacked in backward) at the address of a freed one still names the old producer,
-- so a producer's later consumers may be such strangers (op_output_shapes takes the earliest).
-- PyTorch traces (record_shapes) have no data flow: no rows.
--
-- depends: op_calls
--
-- @column trace_id         Trace.
-- @column pid              Process.
-- @column op_id            op_calls.op_id of the consuming call.
-- @column start_ns         Start of the consuming call on the CPU (ns).
-- @column input_index      Which input of the consuming call (0-based; tensor lists flattened, as in sizes).
-- @column shape            The input's shape as the consuming call recorded it (BIGINT[]; [] for a 0-dim tensor).
-- @column producer_op_id   op_calls.op_id of the call that returned the tensor.
-- @column output_index     Which output of the producing call it is (0-based).
CREATE OR REPLACE VIEW op_data_flow AS
WITH ranges AS (
    -- the text ends '..., sizes = [[32, 64], [], ...], input_op_ids = [(3290,0), (0,-1), ...]'
    -- (string functions: several times faster than regular expressions or JSON here)
    SELECT trace_id, pid, op_id, start_ns, inputs_raw,
           strpos(inputs_raw, ', sizes = [') AS sizes_at,
           strpos(inputs_raw, ', input_op_ids = [(') AS ids_at,
           TRY_CAST(split_part(substr(inputs_raw, strpos(inputs_raw, ', op_id = ') + 10), ',', 1) AS BIGINT) AS handle
    FROM op_calls
    WHERE source = 'nvtx'
),
inputs AS (
    SELECT trace_id, pid, op_id, start_ns, i - 1 AS input_index, CAST('[' || sizes[i] || ']' AS BIGINT[]) AS shape,
           CAST(split_part(producers[i], ',', 1) AS BIGINT) AS producer,
           CAST(split_part(producers[i], ',', 2) AS INTEGER) AS output_index
    FROM (SELECT *, unnest(range(1, len(producers) + 1)) AS i
          FROM (SELECT trace_id, pid, op_id, start_ns,
                       string_split(substr(inputs_raw, sizes_at + 12, ids_at - sizes_at - 14), '], [') AS sizes,
                       string_split(substr(inputs_raw, ids_at + 19, length(inputs_raw) - ids_at - 20), '), (') AS producers
                FROM ranges
                WHERE ids_at > 0 AND sizes_at > 0))
    WHERE NOT ends_with(producers[i], ',-1')
)
SELECT i.trace_id, i.pid, i.op_id, i.start_ns, i.input_index, i.shape, p.op_id AS producer_op_id, i.output_index
FROM inputs i
JOIN ranges p ON p.trace_id = i.trace_id AND p.pid = i.pid AND p.handle = i.producer;
