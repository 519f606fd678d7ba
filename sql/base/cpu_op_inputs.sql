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
-- (json_extract with a list of paths parses each call's JSON once for all five)
CREATE OR REPLACE VIEW cpu_op_inputs AS
SELECT trace_id, op_id, name, coalesce(j[1], j[2]) AS input_dims, j[3] AS input_types,
       j[4] AS input_strides, j[5] AS concrete_inputs
FROM (SELECT trace_id, op_id, name,
             json_extract(args_json, ['$."Input Dims"', '$."Input dims"', '$."Input type"',
                                      '$."Input Strides"', '$."Concrete Inputs"']) AS j
      FROM cpu_ops
      WHERE args_json IS NOT NULL);
