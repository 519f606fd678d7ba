-- op_launches: each GPU operation (kernel, memcpy, memset) with the operator call that
-- launched it (op_calls): for PyTorch traces the operator whose External id it carries;
-- for Nsight exports with emit_nvtx ranges, the innermost operator range around its
-- launching API call on the same thread. GPU operations launched outside any operator
-- have no row.
--
-- depends: kernels, memcpy, memset, api_calls, op_calls
-- materialize: per trace
--
-- @column trace_id     Trace.
-- @column op_id        op_calls.op_id of the launching operator call.
-- @column pid          Process.
-- @column tid          Thread of the launch.
-- @column launch_ns    When the launch happened on the CPU (ns): the launching operator's start
--                      (PyTorch) or the API call's start (NVTX).
-- @column category     'kernel', 'memcpy' or 'memset'.
-- @column name         Kernel name (NULL for memory operations).
-- @column device_id    GPU.
-- @column start_ns     Start on the GPU (ns).
-- @column duration_ns  Duration on the GPU (ns).
CREATE OR REPLACE VIEW op_launches AS
WITH gpu AS (
    SELECT trace_id, 'kernel' AS category, name, device_id, start_ns, duration_ns, pid, correlation_id, external_id
    FROM kernels
    UNION ALL
    SELECT trace_id, 'memcpy', NULL, device_id, start_ns, duration_ns, pid, correlation_id, external_id FROM memcpy
    UNION ALL
    SELECT trace_id, 'memset', NULL, device_id, start_ns, duration_ns, pid, correlation_id, external_id FROM memset
),
ranges AS (
    SELECT trace_id, op_id, parent_op_id, depth, pid, tid, start_ns, end_ns
    FROM op_calls
    WHERE source = 'nvtx'
),
nvtx_calls AS (
    -- launches of GPU work in traces with operator ranges (nsys), with the latest range
    -- that started before the call: the innermost range around the call is that one or
    -- one of its ancestors. Of ranges that start in the same ns the deepest (then the lowest
    -- id): its ancestors include the others, which an ASOF join on the start alone could take
    SELECT g.*, a.tid, a.start_ns AS launch_ns, r.op_id AS candidate_id,
           row_number() OVER () AS call_key
    FROM gpu g
    JOIN api_calls a ON a.trace_id = g.trace_id AND a.pid = g.pid AND a.correlation_id = g.correlation_id
                    AND a.api <> 'backtrace'
    ASOF JOIN (SELECT *, {'start_ns': start_ns, 'depth': coalesce(depth, 0), 'id': -op_id} AS k FROM ranges) r
      ON r.trace_id = a.trace_id AND r.pid = a.pid AND r.tid = a.tid
     AND r.k <= {'start_ns': a.start_ns, 'depth': 2147483647, 'id': 9223372036854775807}
    WHERE g.external_id IS NULL
),
nvtx_up AS (
    -- from the candidate up through its ancestors until one ends after the call
    WITH RECURSIVE up(call_key, trace_id, op_id, parent_op_id, start_ns, end_ns, launch_ns, level) AS (
        SELECT c.call_key, c.trace_id, r.op_id, r.parent_op_id, r.start_ns, r.end_ns, c.launch_ns, 0
        FROM nvtx_calls c
        JOIN ranges r ON r.trace_id = c.trace_id AND r.op_id = c.candidate_id
        UNION ALL
        SELECT up.call_key, up.trace_id, r.op_id, r.parent_op_id, r.start_ns, r.end_ns, up.launch_ns, up.level + 1
        FROM up
        JOIN ranges r ON r.trace_id = up.trace_id AND r.op_id = up.parent_op_id
        WHERE up.end_ns < up.launch_ns
    )
    SELECT call_key, arg_max(op_id, level) AS op_id, arg_max(start_ns, level) AS start_ns,
           arg_max(end_ns, level) AS end_ns
    FROM up
    GROUP BY call_key
)
SELECT c.trace_id, o.op_id, c.pid, o.tid, o.start_ns AS launch_ns, c.category, c.name, c.device_id,
       c.start_ns, c.duration_ns
FROM gpu c
JOIN op_calls o ON o.trace_id = c.trace_id AND o.external_id = c.external_id AND o.source = 'cpu_ops'
UNION ALL
SELECT c.trace_id, u.op_id, c.pid, c.tid, c.launch_ns, c.category, c.name, c.device_id, c.start_ns,
       c.duration_ns
FROM nvtx_calls c
JOIN nvtx_up u ON u.call_key = c.call_key AND u.start_ns <= c.launch_ns AND u.end_ns >= c.launch_ns;
