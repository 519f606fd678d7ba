-- operator_memory: memory per operator, as torch-tb-profiler's memory view defined it: an
-- allocator event belongs to the innermost operator enclosing it on its thread (self) and
-- to every operator enclosing it (total). Per operator name and device:
-- increase = bytes allocated less bytes freed inside the operator; allocations and
-- allocated bytes count allocations only. Self counts the events directly in the operator,
-- not in a child; total counts those of its children too, each event once per operator
-- name even when the name nests in itself (aten::to > aten::_to_copy > aten::to). For nsys
-- the operators are the at::_ops frames of the allocating call's backtrace, else its NVTX
-- ranges. One row per trace, device and operator name with an event.
--
-- depends: memory_device_events, memory_context, memory_call_contexts, cpu_ops
-- materialize: per trace
--
-- @column trace_id              Trace.
-- @column device_type           'cuda' or 'cpu'.
-- @column device_id             Device.
-- @column operator              Operator name.
-- @column calls                 Calls of the operator in the trace (cpu_ops; NULL for nsys).
-- @column increase_bytes        Allocated less freed inside it and its children (bytes).
-- @column self_increase_bytes   Allocated less freed directly inside it (bytes).
-- @column allocations           Allocations inside it and its children.
-- @column self_allocations      Allocations directly inside it.
-- @column allocated_bytes       Bytes those allocated, children included (bytes).
-- @column self_allocated_bytes  Bytes allocated directly inside it (bytes).
CREATE OR REPLACE VIEW operator_memory AS
WITH by_context AS (
    -- events summed per context first: a few hundred contexts for tens of thousands of events
    SELECT m.trace_id, m.device_type, m.device_id, c.context_id,
           sum(m.bytes) AS increase, count(*) FILTER (WHERE m.bytes > 0) AS allocations,
           sum(m.bytes) FILTER (WHERE m.bytes > 0) AS allocated
    FROM memory_device_events m
    JOIN memory_context c USING (trace_id, event_id)
    GROUP BY ALL
),
e AS MATERIALIZED (
    SELECT b.*, x.operator, x.operator_stack
    FROM by_context b
    JOIN memory_call_contexts x USING (trace_id, context_id)
    WHERE x.operator IS NOT NULL
),
self AS (
    SELECT trace_id, device_type, device_id, operator,
           sum(increase) AS increase, sum(allocations) AS allocations, sum(allocated) AS allocated
    FROM e
    GROUP BY ALL
),
total AS (
    SELECT trace_id, device_type, device_id, u.operator,
           sum(increase) AS increase, sum(allocations) AS allocations, sum(allocated) AS allocated
    FROM e, unnest(list_distinct(e.operator_stack)) AS u(operator)
    GROUP BY ALL
),
calls AS (
    SELECT trace_id, name AS operator, count(*) AS calls
    FROM cpu_ops
    WHERE trace_id IN (SELECT trace_id FROM e)
    GROUP BY ALL
)
SELECT t.trace_id, t.device_type, t.device_id, t.operator, c.calls,
       CAST(t.increase AS BIGINT) AS increase_bytes,
       CAST(coalesce(s.increase, 0) AS BIGINT) AS self_increase_bytes,
       CAST(t.allocations AS BIGINT) AS allocations, CAST(coalesce(s.allocations, 0) AS BIGINT) AS self_allocations,
       CAST(coalesce(t.allocated, 0) AS BIGINT) AS allocated_bytes,
       CAST(coalesce(s.allocated, 0) AS BIGINT) AS self_allocated_bytes
FROM total t
LEFT JOIN self s USING (trace_id, device_type, device_id, operator)
LEFT JOIN calls c USING (trace_id, operator);
