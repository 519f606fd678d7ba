-- memory_peaks: per training step and device: the highest allocated and reserved memory
-- in the step, and when the allocated peak was reached. Steps are the ranges `steps`
-- reports (ProfilerStep#N, 'step N' NVTX ranges), matched by process; the level carried
-- into the step counts, as torch.cuda.max_memory_allocated() after reset_peak_memory_stats()
-- at the step's start would. One row per trace, process, step and device with allocator
-- events.
-- memory_summary: the same over the whole trace, with the levels at its start and end.
--
-- depends: memory_timeline, nvtx_ranges
--
-- @column trace_id                   Trace.
-- @column source                     'pytorch_allocator' or 'cuda_memory_usage_events'.
-- @column rank                       Distributed rank (NULL when unknown).
-- @column pid                        Process.
-- @column device_type                'cuda' or 'cpu'.
-- @column device_id                  Device (-1 for the CPU).
-- @column step                       Step range name.
-- @column step_index                 Order of the step in its process (0 = first).
-- @column step_start_ns              Step start (ns).
-- @column step_end_ns                Step end (ns).
-- @column peak_allocated_bytes       Highest allocated level in the step (bytes).
-- @column peak_reserved_bytes        Highest reserved level in the step (bytes; NULL for nsys).
-- @column peak_at_ns                 When allocated first reached its peak (ns; the step's
--                                    start when the level carried in was the highest).
-- @column peak_event_id              The event after which allocated was at its peak (what is
--                                    live then: memory_peak_live).
-- @column reserved_at_peak_bytes     Reserved at that moment (bytes).
-- @column allocated_at_start_bytes   Allocated when the step began (bytes).
-- @column allocated_at_end_bytes     Allocated when it ended (bytes).
-- @column allocations                Allocation events in the step.
-- @column allocated_in_step_bytes    Bytes those allocated.
CREATE OR REPLACE VIEW memory_peaks AS
WITH s AS (
    SELECT trace_id, pid, range AS step, start_ns, end_ns,
           row_number() OVER (PARTITION BY trace_id, pid ORDER BY start_ns) - 1 AS step_index
    FROM nvtx_ranges
    WHERE regexp_matches(regexp_replace(range, '^[^:]*:', ''), '^(ProfilerStep#[0-9]+|step[ _#-]?[0-9]+)$', 'i')
),
devices AS (
    SELECT trace_id, pid, device_type, device_id, any_value(source) AS source, any_value(rank) AS rank
    FROM memory_timeline
    GROUP BY ALL
),
inside AS (
    SELECT s.step_index, m.trace_id, m.pid, m.device_type, m.device_id, m.event_id, m.ts_ns,
           m.delta_bytes, m.allocated_bytes, m.reserved_bytes
    FROM memory_timeline m
    ASOF JOIN s ON s.trace_id = m.trace_id AND s.pid = m.pid AND m.ts_ns >= s.start_ns
    WHERE m.ts_ns < s.end_ns
),
carried AS (
    -- the level each step starts from: the device's last event before the step
    SELECT s.step_index, d.trace_id, d.pid, d.device_type, d.device_id, m.event_id,
           s.start_ns AS ts_ns, 0 AS delta_bytes, m.allocated_bytes, m.reserved_bytes
    FROM s
    JOIN devices d USING (trace_id, pid)
    ASOF JOIN memory_timeline m ON m.trace_id = d.trace_id AND m.pid = d.pid AND m.device_type = d.device_type
                               AND m.device_id = d.device_id AND s.start_ns > m.ts_ns
),
candidates AS (
    SELECT *, true AS is_carried FROM carried
    UNION ALL
    SELECT *, false FROM inside
),
per_step AS (
    SELECT trace_id, pid, device_type, device_id, step_index,
           max(allocated_bytes) AS peak_allocated_bytes,
           max(reserved_bytes) AS peak_reserved_bytes,
           arg_max(event_id, allocated_bytes) AS peak_event_id,
           arg_max(ts_ns, allocated_bytes) AS peak_at_ns,
           arg_max(reserved_bytes, allocated_bytes) AS reserved_at_peak_bytes,
           coalesce(any_value(allocated_bytes) FILTER (WHERE is_carried),
                    arg_min(allocated_bytes - delta_bytes, event_id) FILTER (WHERE NOT is_carried))
               AS allocated_at_start_bytes,
           arg_max(allocated_bytes, event_id) AS allocated_at_end_bytes,
           count(*) FILTER (WHERE delta_bytes > 0) AS allocations,
           coalesce(sum(delta_bytes) FILTER (WHERE delta_bytes > 0), 0) AS allocated_in_step_bytes
    FROM candidates
    GROUP BY ALL
)
SELECT p.trace_id, d.source, d.rank, p.pid, p.device_type, p.device_id, s.step, p.step_index,
       s.start_ns AS step_start_ns, s.end_ns AS step_end_ns,
       p.peak_allocated_bytes, p.peak_reserved_bytes, p.peak_at_ns, p.peak_event_id, p.reserved_at_peak_bytes,
       CAST(p.allocated_at_start_bytes AS BIGINT) AS allocated_at_start_bytes, p.allocated_at_end_bytes,
       p.allocations, CAST(p.allocated_in_step_bytes AS BIGINT) AS allocated_in_step_bytes
FROM per_step p
JOIN s USING (trace_id, pid, step_index)
JOIN devices d USING (trace_id, pid, device_type, device_id);

-- memory_summary: (one row per trace, process and device)
--
-- @column events                    Allocator events.
-- @column first_ns                  First event (ns).
-- @column last_ns                   Last event (ns).
-- @column allocated_at_start_bytes  Allocated before the first event (bytes).
-- @column allocated_at_end_bytes    Allocated after the last event (bytes).
-- @column reserved_at_end_bytes     Reserved after the last event (bytes; NULL for nsys).
-- @column peak_allocated_bytes      Highest allocated level (bytes).
-- @column peak_at_ns                When it was first reached (ns).
-- @column peak_reserved_bytes       Highest reserved level (bytes).
-- @column steps                     Steps with a row in memory_peaks.
CREATE OR REPLACE VIEW memory_summary AS
WITH per_device AS (
    SELECT trace_id, pid, device_type, device_id, any_value(source) AS source, any_value(rank) AS rank,
           count(*) AS events, min(ts_ns) AS first_ns, max(ts_ns) AS last_ns,
           arg_min(allocated_bytes - delta_bytes, event_id) AS allocated_at_start_bytes,
           arg_max(allocated_bytes, event_id) AS allocated_at_end_bytes,
           arg_max(reserved_bytes, event_id) AS reserved_at_end_bytes,
           max(allocated_bytes) AS peak_allocated_bytes,
           arg_min(ts_ns, (-allocated_bytes, event_id)) AS peak_at_ns,
           max(reserved_bytes) AS peak_reserved_bytes
    FROM memory_timeline
    GROUP BY trace_id, pid, device_type, device_id
)
SELECT d.*, (SELECT count(*) FROM memory_peaks p WHERE p.trace_id = d.trace_id AND p.pid = d.pid
                                                  AND p.device_type = d.device_type AND p.device_id = d.device_id)
                AS steps
FROM per_device d;
