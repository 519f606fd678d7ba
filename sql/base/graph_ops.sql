-- graph_ops: every GPU operation run by a graph replay, with its launch call and the
-- graph it belongs to; a replay that nsys traced as a whole (graph-level tracing) is
-- one row of category 'graph'. graph_key identifies the graph: the CUDA graph id where the
-- trace records one (Kineto 'graph id', nsys graphId), else a hash of the replay's
-- sequence of operation names (HIP traces record no graph id), so that replays of
-- one graph group together either way.
--
-- depends: gpu_ops, graph_executions, graph_launches
--
-- @column trace_id        Trace.
-- @column pid             Process.
-- @column tid             Thread that launched the graph.
-- @column correlation_id  Correlation id of the launch call (shared by the replay's operations).
-- @column category        'kernel', 'memcpy', 'memset' or 'graph'.
-- @column name            Operation name (as in gpu_ops).
-- @column device_id       GPU.
-- @column stream_id       Stream.
-- @column start_ns        Operation start (ns).
-- @column end_ns          Operation end (ns).
-- @column duration_ns     end_ns - start_ns.
-- @column graph_id        CUDA graph id of the replay (from its kernels; NULL when not recorded).
-- @column graph_node_id   CUDA graph node id of the operation (kernels; NULL when not recorded).
-- @column graph_exec_id   Executable graph id (graph-level nsys traces; NULL otherwise).
-- @column graph_key       graph_id, or a hash of the replay's operation names when there is none.
-- @column launch_start_ns Start of the launch call (ns).
-- @column node_index      Position of the operation in its replay, by start (0 = first; then by end,
--                         name, stream and graph node).
CREATE OR REPLACE VIEW graph_ops AS
WITH ops AS (
    SELECT o.trace_id, o.pid, l.tid, o.correlation_id, o.category, o.name, o.device_id, o.stream_id,
           o.start_ns, o.end_ns, o.duration_ns, o.graph_node_id, l.start_ns AS launch_start_ns,
           max(o.graph_id) OVER replay AS graph_id, x.graph_exec_id,
           row_number() OVER (replay ORDER BY o.start_ns, o.end_ns, o.name, o.stream_id, o.graph_node_id) - 1
               AS node_index,
           hash(string_agg(o.name, '|') OVER (replay ORDER BY o.start_ns, o.end_ns, o.name
                                                ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING))
               AS name_hash
    FROM gpu_ops o
    JOIN graph_launches l ON l.trace_id = o.trace_id AND l.pid = o.pid AND l.correlation_id = o.correlation_id
    LEFT JOIN graph_executions x ON o.category = 'graph' AND x.trace_id = o.trace_id AND x.pid = o.pid
                                AND x.correlation_id = o.correlation_id
    WINDOW replay AS (PARTITION BY o.trace_id, o.pid, o.correlation_id)
)
SELECT trace_id, pid, tid, correlation_id, category, name, device_id, stream_id, start_ns, end_ns, duration_ns,
       graph_id, graph_node_id, graph_exec_id,
       coalesce(graph_id, CAST(name_hash % 9007199254740991 AS BIGINT)) AS graph_key,
       launch_start_ns, node_index
FROM ops;
