-- steady_gpu_work: the GPU work of the steady steps, per process, operation and the
-- operator that launched it: what `tracelake diff` compares kernel by kernel. An
-- operation counts in the steady step its start falls in (steady_steps); divide by the
-- process's steady steps for a per-step figure. Memory copies are named by direction
-- ('Memcpy HtoD'), the same for both sources, with the memory at each end beside.
--
-- depends: gpu_ops, memcpy, op_class_of, steady_steps, op_launches, operator_calls
-- materialize: per trace
--
-- @column trace_id         Trace.
-- @column pid              Process.
-- @column op_class         'compute', 'communication', 'memcpy' or 'memset' (gpu_op_class).
-- @column name             Kernel name; for copies 'Memcpy <kind>' (HtoD, DtoH, DtoD, ...); memsets 'Memset'.
-- @column memory           For copies, the memory kinds at each end ('pageable -> device'); else NULL.
-- @column launcher         Name of the operator that launched it (op_launches; NULL when none).
-- @column launcher_shapes  Its input shapes (JSON text; NULL without record_shapes).
-- @column launcher_dtypes  Its input dtypes (JSON text; NULL for NVTX ranges).
-- @column calls            Operations over the steady steps.
-- @column duration_ns      Their summed GPU time (ns).
-- @column bytes            Bytes they moved or set (NULL for kernels).
CREATE OR REPLACE VIEW steady_gpu_work AS
WITH ops AS (
    SELECT o.trace_id, o.pid, o.device_id, o.category, o.start_ns, o.duration_ns, o.bytes,
           op_class_of(o.category, o.name) AS op_class,
           CASE o.category WHEN 'memset' THEN 'Memset'
                WHEN 'memcpy' THEN coalesce('Memcpy ' || m.copy_kind, o.name)
                ELSE o.name END AS name,
           m.src_kind || ' -> ' || m.dst_kind AS memory
    FROM gpu_ops o
    SEMI JOIN steady_steps s ON s.trace_id = o.trace_id AND s.pid = o.pid
                            AND o.start_ns >= s.start_ns AND o.start_ns < s.end_ns
    LEFT JOIN memcpy m ON o.category = 'memcpy' AND m.trace_id = o.trace_id AND m.pid = o.pid
                      AND m.device_id = o.device_id AND m.start_ns = o.start_ns
                      AND m.correlation_id IS NOT DISTINCT FROM o.correlation_id
),
launched AS (
    -- the launcher's shapes and dtypes as operator_calls parsed them (op_input_dims, op_input_types)
    SELECT o.*, c.name AS launcher, c.input_dims AS launcher_shapes, c.input_types AS launcher_dtypes
    FROM ops o
    LEFT JOIN op_launches l ON l.trace_id = o.trace_id AND l.pid = o.pid AND l.device_id = o.device_id
                           AND l.start_ns = o.start_ns AND l.category = o.category
    LEFT JOIN operator_calls c ON c.trace_id = l.trace_id AND c.op_id = l.op_id
)
SELECT trace_id, pid, op_class, name, memory, launcher, launcher_shapes, launcher_dtypes,
       count(*) AS calls, sum(duration_ns) AS duration_ns, sum(bytes) AS bytes
FROM launched
GROUP BY ALL;
