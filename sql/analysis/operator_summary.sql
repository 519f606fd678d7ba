-- operator_calls: every operator call (op_calls) with its category, its host self time,
-- the GPU work it launched itself, and for calls made by the autograd engine during
-- backward the forward operator they belong to. The input of operator_summary.
--
-- Backward attribution: a call inside 'autograd::engine::evaluate_function: XBackward0'
-- belongs to the autograd node XBackward0; the node's sequence number names the forward
-- operator that created it (the outermost call with that number on the forward side),
-- so aten::mm inside AddmmBackward0 is attributed to aten::addmm. Without a sequence
-- number (or its forward call outside the trace) the node's name is used.
--
-- depends: op_calls, op_launches, op_category
-- materialize: per trace
--
-- @column trace_id          Trace.
-- @column source            'cpu_ops' or 'nvtx'.
-- @column op_id             op_calls.op_id.
-- @column parent_op_id      Enclosing call.
-- @column pid               Process.
-- @column tid               Thread.
-- @column start_ns          Start on the CPU (ns).
-- @column name              Operator name.
-- @column category          op_category(name).
-- @column forward_op        For calls made during backward: the forward operator (or, without a
--                           link, the autograd node); NULL for other calls.
-- @column host_ns           Host (CPU) time of the call (ns).
-- @column host_self_ns      Host time not spent in the calls inside it (ns).
-- @column device_self_ns    GPU time of the work the call launched itself (ns).
-- @column self_kernels      Number of GPU operations it launched itself.
-- @column input_dims        Input shapes (JSON text; NULL without record_shapes).
-- @column input_types       Input dtypes (JSON text; NULL for NVTX ranges).
CREATE OR REPLACE VIEW operator_calls AS
WITH names AS (
    -- one category per name (unnest(list(DISTINCT)) evaluates it once per name)
    SELECT name, op_category_of_base(base, name) AS category, base
    FROM (SELECT name, op_base_name(name) AS base FROM (SELECT unnest(list(DISTINCT name)) AS name FROM op_calls))
),
engine AS (
    -- the autograd engine's 'evaluate_function: XBackward0' calls and their node's sequence
    -- number (NVTX ranges carry it on the node 'XBackward0, seq = N' inside)
    SELECT e.trace_id, e.pid, e.tid, e.op_id, e.start_ns, e.end_ns,
           substr(e.name, length('autograd::engine::evaluate_function: ') + 1) AS node,
           coalesce(e.sequence_number, any_value(n.sequence_number)) AS sequence_number
    FROM op_calls e
    LEFT JOIN op_calls n ON n.trace_id = e.trace_id AND n.parent_op_id = e.op_id
                        AND n.name = substr(e.name, length('autograd::engine::evaluate_function: ') + 1)
    WHERE e.name LIKE 'autograd::engine::evaluate_function: %'
    GROUP BY e.trace_id, e.pid, e.tid, e.op_id, e.start_ns, e.end_ns, e.name, e.sequence_number
),
nodes AS (
    -- the forward call of each node: among the calls outside the engine with the node's
    -- sequence number, the one of the node's operator (AddmmBackward0 -> aten::addmm),
    -- else the outermost
    SELECT e.trace_id, e.pid, e.tid, e.op_id, e.start_ns, e.end_ns,
           coalesce(arg_min(f.name, (fn.base <> op_base_name(e.node), f.depth, f.start_ns, f.name)), e.node) AS forward_op
    FROM engine e
    LEFT JOIN op_calls f ON f.trace_id = e.trace_id AND f.pid = e.pid AND f.sequence_number = e.sequence_number
                        AND f.name NOT LIKE 'autograd::%' AND NOT regexp_matches(f.name, 'Backward[0-9]*$')
    LEFT JOIN names fn ON fn.name = f.name
    GROUP BY e.trace_id, e.pid, e.tid, e.op_id, e.start_ns, e.end_ns, e.node
),
backward AS (
    -- each call inside an engine call on its thread (the engine call that started last at or
    -- before it, if it has not ended by then) with that node's forward operator
    SELECT c.trace_id, c.op_id, e.forward_op
    FROM (SELECT trace_id, pid, tid, start_ns, op_id FROM op_calls) c
    ASOF JOIN nodes e ON e.trace_id = c.trace_id AND e.pid = c.pid AND e.tid = c.tid AND e.start_ns <= c.start_ns
    WHERE e.end_ns >= c.start_ns
),
own AS (
    -- per call, in one pass: the time of the calls inside it, the GPU work it launched
    -- itself, and (during backward) its forward operator
    SELECT trace_id, op_id, sum(child_ns) AS child_ns, sum(device_ns) AS device_self_ns,
           count(device_ns) AS self_kernels, any_value(forward_op) AS forward_op
    FROM (SELECT trace_id, parent_op_id AS op_id, duration_ns AS child_ns, NULL::BIGINT AS device_ns, NULL AS forward_op
          FROM op_calls WHERE parent_op_id IS NOT NULL
          UNION ALL
          SELECT trace_id, op_id, NULL, duration_ns, NULL FROM op_launches
          UNION ALL
          SELECT trace_id, op_id, NULL, NULL, forward_op FROM backward)
    GROUP BY ALL
)
SELECT c.trace_id, c.source, c.op_id, c.parent_op_id, c.pid, c.tid, c.start_ns, c.name, n.category,
       o.forward_op,
       c.duration_ns AS host_ns,
       c.duration_ns - coalesce(o.child_ns, 0) AS host_self_ns,
       coalesce(o.device_self_ns, 0) AS device_self_ns,
       coalesce(o.self_kernels, 0) AS self_kernels,
       -- op_input_dims and op_input_types (sql/base/op_calls.sql; keep in step), the JSON
       -- of a cpu_ops call parsed once for both
       CAST(CASE WHEN c.source = 'nvtx' THEN op_input_dims(c.source, c.inputs_raw)
                 ELSE coalesce(j[1], j[2]) END AS VARCHAR) AS input_dims,
       CAST(CASE WHEN c.source = 'cpu_ops' THEN j[3] END AS VARCHAR) AS input_types
FROM (SELECT *, CASE WHEN source = 'cpu_ops'
                     THEN json_extract(inputs_raw, ['$."Input Dims"', '$."Input dims"', '$."Input type"']) END AS j
      FROM op_calls) c
JOIN names n USING (name)
LEFT JOIN own o ON o.trace_id = c.trace_id AND o.op_id = c.op_id;

-- operator_summary: per PyTorch operator (and, for backward calls, the forward operator
-- they belong to): calls, host time, and the GPU time of the work it launched, itself
-- and through the operators inside it. A GPU operation counts once per row, however
-- many calls of the row's operator it sits under (aten::to inside aten::to); summing
-- device_ns over rows counts nested work more than once, device_self_ns does not.
-- One row per trace, operator and forward_op.
-- operator_summary_by_shapes: the same per input shapes and dtypes too (PyTorch's
-- key_averages(group_by_input_shape=True)).
-- operator_summary_by(with_shapes): both, as a table macro.
--
-- depends: operator_calls, op_launches, op_calls
--
-- @column trace_id        Trace.
-- @column name            Operator name.
-- @column category        op_category(name).
-- @column forward_op      For backward calls, the forward operator (or autograd node); NULL otherwise.
-- @column input_dims      Input shapes (operator_summary_by_shapes only).
-- @column input_types     Input dtypes (operator_summary_by_shapes only).
-- @column calls           Number of calls.
-- @column host_ns         Host time of all calls (ns; nested calls of the same operator count twice).
-- @column host_self_ns    Host self time (ns).
-- @column device_ns       GPU time of the work launched by the calls or inside them (ns), each GPU
--                         operation once.
-- @column device_self_ns  GPU time of the work the calls launched themselves (ns).
-- @column kernels         Number of GPU operations behind device_ns.
-- @column self_kernels    Number of GPU operations the calls launched themselves.
-- @column device_pct      device_ns as a percentage of the trace's GPU time launched by operators.
CREATE OR REPLACE MACRO operator_summary_by(with_shapes) AS TABLE
WITH RECURSIVE parents AS MATERIALIZED (
    SELECT trace_id, op_id, parent_op_id FROM op_calls WHERE parent_op_id IS NOT NULL
),
oc AS MATERIALIZED (
    SELECT trace_id, op_id, name, category, forward_op, host_ns, host_self_ns, device_self_ns, self_kernels,
           CASE WHEN with_shapes THEN input_dims END AS input_dims,
           CASE WHEN with_shapes THEN input_types END AS input_types
    FROM operator_calls
),
up(trace_id, launch_key, op_id, duration_ns) AS (
    -- each GPU operation with every call it sits under (its launcher and their ancestors)
    SELECT l.trace_id, row_number() OVER () AS launch_key, l.op_id, l.duration_ns
    FROM op_launches l
    UNION ALL
    SELECT up.trace_id, up.launch_key, p.parent_op_id, up.duration_ns
    FROM up
    JOIN parents p ON p.trace_id = up.trace_id AND p.op_id = up.op_id
),
calls AS (
    SELECT trace_id, name, any_value(category) AS category, forward_op, input_dims, input_types,
           count(*) AS calls, sum(host_ns) AS host_ns, sum(host_self_ns) AS host_self_ns,
           sum(device_self_ns) AS device_self_ns, sum(self_kernels) AS self_kernels
    FROM oc
    GROUP BY trace_id, name, forward_op, input_dims, input_types
),
under AS (
    -- GPU operations under each row's calls, each once
    SELECT trace_id, name, forward_op, input_dims, input_types, sum(duration_ns) AS device_ns, count(*) AS kernels
    FROM (
        SELECT DISTINCT up.trace_id, c.name, c.forward_op, c.input_dims, c.input_types, up.launch_key,
                        up.duration_ns
        FROM up
        JOIN oc c ON c.trace_id = up.trace_id AND c.op_id = up.op_id
    )
    GROUP BY ALL
)
SELECT c.trace_id, c.name, c.category, c.forward_op, c.input_dims, c.input_types, c.calls,
       CAST(c.host_ns AS BIGINT) AS host_ns, CAST(c.host_self_ns AS BIGINT) AS host_self_ns,
       CAST(coalesce(u.device_ns, 0) AS BIGINT) AS device_ns,
       CAST(c.device_self_ns AS BIGINT) AS device_self_ns,
       coalesce(u.kernels, 0) AS kernels, CAST(c.self_kernels AS BIGINT) AS self_kernels,
       100.0 * coalesce(u.device_ns, 0) / nullif(sum(c.device_self_ns) OVER (PARTITION BY c.trace_id), 0)
           AS device_pct
FROM calls c
LEFT JOIN under u ON u.trace_id = c.trace_id AND u.name = c.name
                 AND u.forward_op IS NOT DISTINCT FROM c.forward_op
                 AND u.input_dims IS NOT DISTINCT FROM c.input_dims
                 AND u.input_types IS NOT DISTINCT FROM c.input_types;

CREATE OR REPLACE VIEW operator_summary AS
SELECT * EXCLUDE (input_dims, input_types) FROM operator_summary_by(false);

CREATE OR REPLACE VIEW operator_summary_by_shapes AS
SELECT * FROM operator_summary_by(true);
