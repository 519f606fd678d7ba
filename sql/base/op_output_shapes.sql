-- op_output_shapes: the shape of each output of an operator call, read from the calls that
-- consume it (op_data_flow). emit_nvtx ranges record only *input* shapes; the output k of call
-- P has the shape that a consumer lists for (P, k). Which consumer: the earliest. A tensor is in
-- use, at its address, from its producer's end until its consumers have started, so the earliest
-- consumer is a true one (when any recorded call consumes it at all); later ones may be tensors
-- made at the same address after it was freed (op_data_flow). Nested calls all return the
-- result, but consumers name the outermost: an inner call (aten::cudnn_convolution inside
-- aten::convolution) usually has no rows.
--
-- depends: op_data_flow
--
-- @column trace_id         Trace.
-- @column pid              Process.
-- @column op_id            op_calls.op_id of the producing call.
-- @column output_index     Which output of the call (0-based).
-- @column shape            The output's shape as its earliest consumer recorded it (BIGINT[]).
-- @column consumer_op_id   op_calls.op_id of that earliest consumer.
-- @column consumers        Number of calls that name (op_id, output_index) among their inputs.
CREATE OR REPLACE VIEW op_output_shapes AS
SELECT trace_id, pid, producer_op_id AS op_id, output_index,
       arg_min(shape, (start_ns, op_id)) AS shape,
       arg_min(op_id, (start_ns, op_id)) AS consumer_op_id,
       count(DISTINCT op_id) AS consumers
FROM op_data_flow
GROUP BY ALL;
