-- Memory rules, each a view with the columns of findings (see findings.sql). What a trace
-- cannot show is left out on purpose: memory freed late (a tensor kept alive long after its
-- last use) needs each tensor's last use, and allocator events record only allocation and
-- free, not use; the trace cannot tell a block in use from one merely not yet freed.
--
-- finding_memory_growth: a device whose per-step peak of allocated memory grows across the
-- steps (a leak across iterations). The first step is left out (it allocates optimizer state
-- and warms the caches); of the rest, at least 3, no peak may fall below the one before, at
-- least half must rise, and the last must exceed the first by 1 MiB and 0.1 %. The evidence
-- names the calling context that kept the most of what these steps allocated and never freed
-- (of contexts that kept as much, the first in text order). One row per trace, process and device.
--
-- depends: memory_peaks, memory_summary, memory_device_blocks, memory_call_contexts
-- materialize: per trace
--
-- @column trace_id     Trace.
-- @column rule         Rule name.
-- @column severity     'warning' or 'info'.
-- @column pid          Process.
-- @column device_id    Device (-1 for the CPU).
-- @column start_ns     Start of the first step considered (ns).
-- @column duration_ns  Until the end of the last (ns).
-- @column evidence     What was seen.
-- @column advice       What to do.
CREATE OR REPLACE VIEW finding_memory_growth AS
WITH p AS (
    SELECT *, peak_allocated_bytes - lag(peak_allocated_bytes) OVER (
                  PARTITION BY trace_id, pid, device_type, device_id ORDER BY step_index) AS rise_bytes
    FROM memory_peaks
    WHERE step_index > 0
),
growing AS (
    SELECT trace_id, pid, device_type, device_id, count(*) AS steps,
           min(step_start_ns) AS start_ns, max(step_end_ns) AS end_ns,
           arg_min(peak_allocated_bytes, step_index) AS first_bytes,
           arg_max(peak_allocated_bytes, step_index) AS last_bytes,
           arg_min(step, step_index) AS first_step, arg_max(step, step_index) AS last_step
    FROM p
    GROUP BY ALL
    HAVING count(*) >= 3 AND min(rise_bytes) >= 0 AND count(*) FILTER (WHERE rise_bytes > 0) * 2 >= count(*) - 1
       AND arg_max(peak_allocated_bytes, step_index) - arg_min(peak_allocated_bytes, step_index)
           >= greatest(1048576, arg_min(peak_allocated_bytes, step_index) / 1000)
),
kept AS (
    -- blocks allocated in those steps and never freed, by calling context (last 3 frames)
    SELECT g.trace_id, g.pid, g.device_type, g.device_id,
           array_to_string(string_split(coalesce(c.call_stack, c.operator, '(unknown)'), ' > ')[-3:], ' > ')
               AS context,
           sum(a.bytes) AS bytes
    FROM growing g
    JOIN memory_device_blocks a ON a.trace_id = g.trace_id AND a.pid = g.pid AND a.device_type = g.device_type
                        AND a.device_id = g.device_id AND a.alloc_ns BETWEEN g.start_ns AND g.end_ns
    LEFT JOIN memory_call_contexts c ON c.trace_id = a.trace_id AND c.context_id = a.alloc_context_id
    WHERE a.status = 'never_freed'
    GROUP BY ALL
),
top AS (
    -- the context that kept the most (of contexts that kept as much, the first name)
    SELECT trace_id, pid, device_type, device_id, sum(bytes) AS bytes, arg_min(context, (-bytes, context)) AS context
    FROM kept
    GROUP BY ALL
)
SELECT g.trace_id, 'memory_growth' AS rule, 'warning' AS severity, g.pid, g.device_id,
       g.start_ns, g.end_ns - g.start_ns AS duration_ns,
       printf('peak allocated on %s %d grew from %.1f MiB (%s) to %.1f MiB (%s) over %d steps, %.2f MiB per step',
              g.device_type, g.device_id, g.first_bytes / 1048576, g.first_step, g.last_bytes / 1048576,
              g.last_step, g.steps, (g.last_bytes - g.first_bytes) / 1048576 / (g.steps - 1))
       || CASE WHEN t.bytes > 0
               THEN printf('; %.1f MiB allocated in these steps is never freed, most of it at %s',
                           t.bytes / 1048576, t.context)
               ELSE '' END AS evidence,
       'Memory that grows every step runs out in a long run. Look for tensors kept across iterations: losses '
       || 'summed without .item() or .detach(), lists of outputs, caches that grow per step '
       || '(memory_allocations WHERE status = ''never_freed'' shows what the trace saw allocated and kept).'
           AS advice
FROM growing g
LEFT JOIN top t USING (trace_id, pid, device_type, device_id);

-- finding_memory_fragmentation: a device where PyTorch's caching allocator reserved much
-- more than was ever allocated: at its peak, reserved exceeds allocated by 25 % and 256 MiB.
-- Cached-but-unused memory is what fragmentation (free blocks too small or split for the
-- next request) looks like from outside. One row per trace, process and device.
CREATE OR REPLACE VIEW finding_memory_fragmentation AS
SELECT trace_id, 'memory_fragmentation' AS rule, 'info' AS severity, pid, device_id,
       first_ns AS start_ns, last_ns - first_ns AS duration_ns,
       printf('reserved peaked at %.2f GiB on %s %d while allocated peaked at %.2f GiB (reserved/allocated '
              || '%.2f): %.2f GiB held by the caching allocator but unused',
              peak_reserved_bytes / 2 ^ 30, device_type, device_id, peak_allocated_bytes / 2 ^ 30,
              peak_reserved_bytes / peak_allocated_bytes, (peak_reserved_bytes - peak_allocated_bytes) / 2 ^ 30)
           AS evidence,
       'A large reserved-but-unallocated share usually means fragmentation: freed blocks that do not fit '
       || 'the next requests. Try PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, keep tensor shapes '
       || 'steady (pad variable lengths to a few buckets); torch.cuda.memory_snapshot() shows the segments.'
           AS advice
FROM memory_summary
WHERE source = 'pytorch_allocator' AND device_type = 'cuda' AND peak_allocated_bytes > 0
  AND peak_reserved_bytes >= 1.25 * peak_allocated_bytes
  AND peak_reserved_bytes - peak_allocated_bytes >= 256 * 1048576;
