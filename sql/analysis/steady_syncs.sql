-- steady_syncs: the synchronizing calls of the steady steps, per process and name: the
-- CUDA API calls that wait for the GPU (cudaStreamSynchronize, cudaDeviceSynchronize,
-- cudaEventSynchronize, synchronous cudaMemcpy) and the operators that read a GPU value
-- on the host (aten::item, aten::_local_scalar_dense: `.item()`). A call counts in the
-- steady step it starts in. The evidence of `tracelake diff`'s sync causes.
--
-- depends: api, op_calls, steady_steps
-- materialize: per trace
--
-- @column trace_id     Trace.
-- @column pid          Process.
-- @column name         Call or operator name.
-- @column calls        Calls over the steady steps.
-- @column duration_ns  Their summed duration on the CPU (ns).
CREATE OR REPLACE VIEW steady_syncs AS
WITH calls AS (
    SELECT trace_id, pid, name, start_ns, duration_ns FROM api
    WHERE name IN ('cudaStreamSynchronize', 'cudaDeviceSynchronize', 'cudaEventSynchronize', 'cudaMemcpy')
    UNION ALL
    SELECT trace_id, pid, name, start_ns, duration_ns FROM op_calls
    WHERE name IN ('aten::item', 'aten::_local_scalar_dense')
)
SELECT c.trace_id, c.pid, c.name, count(*) AS calls, sum(c.duration_ns) AS duration_ns
FROM calls c
SEMI JOIN steady_steps s ON s.trace_id = c.trace_id AND s.pid = c.pid  -- host calls: the host range
                        AND c.start_ns >= coalesce(s.host_start_ns, s.start_ns)
                        AND c.start_ns < coalesce(s.host_end_ns, s.end_ns)
GROUP BY ALL;
