-- gpu_ops: every GPU operation (kernel, memcpy, memset) of every trace, one row each,
-- and each CUDA graph replay that nsys traced as a whole (graph_executions, category
-- 'graph': its nodes are not recorded one by one).
-- The common shape the summaries and timeline views read.
--
-- depends: kernels, memcpy, memset, graph_executions
--
-- @column trace_id        Trace the operation belongs to.
-- @column category        'kernel', 'memcpy', 'memset' or 'graph'.
-- @column start_ns        Start on the trace clock (ns).
-- @column end_ns          End on the trace clock (ns).
-- @column duration_ns     end_ns - start_ns.
-- @column device_id       GPU index.
-- @column context_id      CUDA context.
-- @column stream_id       Stream.
-- @column pid             Process that launched it.
-- @column tid             Thread that launched it (NULL if unknown).
-- @column correlation_id  Id of the launching API call (same pid).
-- @column name            Kernel name; for memory operations NVIDIA's label,
--                         '[CUDA memcpy Host-to-Device]', '[CUDA memset]', ...; for a
--                         graph replay '[CUDA graph <graph_exec_id>]'.
-- @column bytes           Bytes moved or set (NULL for kernels).
-- @column graph_id        CUDA graph id of a kernel run by a graph replay, or of a graph
--                         replay (NULL otherwise, and for memory operations).
-- @column graph_node_id   Its graph node id.
CREATE OR REPLACE VIEW gpu_ops AS
SELECT trace_id, 'kernel' AS category, start_ns, end_ns, duration_ns,
       device_id, context_id, stream_id, pid, tid, correlation_id, name,
       CAST(NULL AS BIGINT) AS bytes, graph_id, graph_node_id
FROM kernels
UNION ALL
SELECT trace_id, 'memcpy', start_ns, end_ns, duration_ns,
       device_id, context_id, stream_id, pid, tid, correlation_id,
       '[CUDA memcpy ' || coalesce(operation, 'Unknown') || ']', bytes, NULL, NULL
FROM memcpy
UNION ALL
SELECT trace_id, 'memset', start_ns, end_ns, duration_ns,
       device_id, context_id, stream_id, pid, tid, correlation_id,
       '[CUDA memset]', bytes, NULL, NULL
FROM memset
UNION ALL
SELECT trace_id, 'graph', start_ns, end_ns, duration_ns,
       device_id, context_id, stream_id, pid, tid, correlation_id,
       '[CUDA graph ' || graph_exec_id || ']', NULL, graph_id, NULL
FROM graph_executions;
