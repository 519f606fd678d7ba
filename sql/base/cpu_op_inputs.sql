-- cpu_op_inputs: the recorded inputs of each PyTorch operator (record_shapes=True):
-- shapes, dtypes, strides and concrete scalar values, from cpu_ops.args_json.
--
-- depends: cpu_ops
-- materialize: per trace
--
-- @column trace_id         Trace.
-- @column op_id            cpu_ops.op_id.
-- @column name             Operator name (aten::addmm, ...).
-- @column input_dims       Input shapes, JSON list of lists ('Input Dims'; 2021: 'Input dims').
-- @column input_types      Input dtypes, JSON list ('Input type').
-- @column input_strides    Input strides, JSON list of lists ('Input Strides').
-- @column concrete_inputs  Concrete scalar inputs, JSON list ('Concrete Inputs').
CREATE OR REPLACE VIEW cpu_op_inputs AS
SELECT trace_id, op_id, name,
       coalesce(json_extract(args_json, '$."Input Dims"'),
                json_extract(args_json, '$."Input dims"')) AS input_dims,
       json_extract(args_json, '$."Input type"') AS input_types,
       json_extract(args_json, '$."Input Strides"') AS input_strides,
       json_extract(args_json, '$."Concrete Inputs"') AS concrete_inputs
FROM cpu_ops
WHERE args_json IS NOT NULL;
