-- op_calls: every PyTorch operator call with its place in the operator tree and its
-- recorded inputs, from either source: PyTorch profiler traces (cpu_ops, with
-- record_shapes for the inputs) and Nsight Systems exports of programs run under
-- torch.autograd.profiler.emit_nvtx (`nsys profile --pytorch=autograd-nvtx` or
-- `autograd-shapes-nvtx`), whose NVTX ranges are named
-- 'aten::addmm, seq = 6, op_id = 955, sizes = [[2304], [2048, 768], ...], input_op_ids = ...'.
-- NVTX ranges carry shapes only (no dtypes, no scalar arguments): those columns are NULL.
--
-- depends: cpu_ops, annotations
-- materialize: per trace
--
-- @column trace_id         Trace.
-- @column source           'cpu_ops' (PyTorch profiler) or 'nvtx' (emit_nvtx ranges in an nsys export).
-- @column op_id            cpu_ops.op_id, or annotations.annotation_id for NVTX ranges.
-- @column parent_op_id     The enclosing operator (or range) on the same thread; NULL at top.
-- @column depth            Nesting depth on the thread (0 = top level).
-- @column pid              Process.
-- @column tid              Thread.
-- @column start_ns         Start on the CPU (ns).
-- @column end_ns           End on the CPU (ns).
-- @column duration_ns      end_ns - start_ns (ns).
-- @column name             Operator name (aten::addmm, AddmmBackward0, ...).
-- @column sequence_number  Autograd sequence number: a backward node carries its forward operator's.
-- @column external_id      PyTorch External id (the key of the GPU work it launched); NULL for NVTX.
-- @column inputs_raw       Where the inputs are recorded: cpu_ops.args_json, or the NVTX range text.
--                          Read them with op_input_dims / op_input_types / op_concrete_inputs(source,
--                          inputs_raw), after filtering: parsing every call's arguments is slow.
--
-- op_input_dims(source, inputs_raw): input shapes, JSON list of lists (NULL without record_shapes).
-- op_input_types(source, inputs_raw): input dtypes, JSON list (NULL for NVTX ranges).
-- op_concrete_inputs(source, inputs_raw): scalar arguments, JSON list of strings (NULL for NVTX ranges).
-- op_inputs(source, inputs_raw): all three parsed at once (one JSON parse), as a STRUCT
-- ("Input Dims" BIGINT[][], "Input type" VARCHAR[], "Concrete Inputs" VARCHAR[]).
CREATE OR REPLACE MACRO op_input_dims(source, raw) AS
CASE WHEN source = 'nvtx' THEN CAST(nullif(regexp_extract(raw, ', sizes = (\[.*\]), input_op_ids = ', 1), '') AS JSON)
     ELSE coalesce(json_extract(raw, '$."Input Dims"'), json_extract(raw, '$."Input dims"')) END;

CREATE OR REPLACE MACRO op_input_types(source, raw) AS
CASE WHEN source = 'cpu_ops' THEN json_extract(raw, '$."Input type"') END;

CREATE OR REPLACE MACRO op_concrete_inputs(source, raw) AS
CASE WHEN source = 'cpu_ops' THEN json_extract(raw, '$."Concrete Inputs"') END;

CREATE OR REPLACE MACRO op_inputs(source, raw) AS
CASE WHEN source = 'nvtx'
     THEN {'Input Dims': json_transform(CAST(nullif(regexp_extract(raw, ', sizes = (\[.*\]), input_op_ids = ', 1), '')
                                                 AS JSON), '[["BIGINT"]]'),
           'Input type': CAST(NULL AS VARCHAR[]), 'Concrete Inputs': CAST(NULL AS VARCHAR[])}
     -- 2021 traces write 'Input dims'
     ELSE json_transform(CASE WHEN contains(raw, '"Input dims"') THEN replace(raw, '"Input dims"', '"Input Dims"')
                              ELSE raw END,
                         '{"Input Dims": [["BIGINT"]], "Input type": ["VARCHAR"], "Concrete Inputs": ["VARCHAR"]}')
END;

CREATE OR REPLACE VIEW op_calls AS
SELECT trace_id, 'cpu_ops' AS source, op_id, parent_op_id, depth, pid, tid, start_ns, end_ns, duration_ns,
       name, sequence_number, external_id, args_json AS inputs_raw
FROM cpu_ops
UNION ALL
SELECT trace_id, 'nvtx', annotation_id, parent_id, depth, pid, tid, start_ns, end_ns, duration_ns,
       regexp_extract(name, '^(.*?), (seq = -?[0-9]+, )?op_id = [0-9]+', 1),
       TRY_CAST(nullif(regexp_extract(name, ', seq = (-?[0-9]+), op_id = ', 1), '') AS BIGINT),
       NULL, name
FROM annotations
WHERE kind = 'push_pop' AND domain IS NULL AND end_ns IS NOT NULL
  AND regexp_matches(name, '^[^,]+, (seq = -?[0-9]+, )?op_id = [0-9]+');

-- op_shapes_recorded: the processes whose operator calls carry input shapes (PyTorch
-- record_shapes, or emit_nvtx ranges with sizes): without them no call can be modelled,
-- and the model views say NULL rather than 0.
--
-- @column trace_id  Trace.
-- @column pid       Process.
CREATE OR REPLACE VIEW op_shapes_recorded AS
SELECT DISTINCT trace_id, pid
FROM op_calls
WHERE CASE source WHEN 'nvtx' THEN contains(inputs_raw, ', sizes = ')
                  ELSE contains(inputs_raw, '"Input Dims"') OR contains(inputs_raw, '"Input dims"') END;
