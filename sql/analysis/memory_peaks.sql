-- memory_peaks: per training step and device: the highest allocated and reserved memory
-- in the step, and when the allocated peak was reached. Steps are the ranges `steps`
-- reports (ProfilerStep#N, 'step N' NVTX ranges), matched by process; the level carried
-- into the step counts, as torch.cuda.max_memory_allocated() after reset_peak_memory_stats()
-- at the step's start would. One row per trace, process, step and device with allocator
-- events in the step.
-- memory_summary: the same over the whole trace, with the levels at its start and end.
--
-- depends: memory_timeline, step_ranges, traces
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
-- @column peak_reserved_bytes        Highest reserved level after an event of the step (bytes;
--                                    NULL for nsys).
-- @column peak_at_ns                 When allocated first reached its peak (ns; the step's
--                                    start when the level carried in was the highest).
-- @column peak_event_id              The event after which allocated was at its peak, the first of
--                                    several that reached it (what is live then: memory_peak_live).
-- @column reserved_at_peak_bytes     Reserved at that moment (bytes; when the level carried in was
--                                    the peak, reserved after the step's first event).
-- @column allocated_at_start_bytes   Allocated when the step began (bytes).
-- @column allocated_at_end_bytes     Allocated when it ended (bytes).
-- @column allocations                Allocation events in the step.
-- @column allocated_in_step_bytes    Bytes those allocated.
CREATE OR REPLACE VIEW memory_peaks AS
WITH s AS (
    SELECT trace_id, pid, step, start_ns, end_ns,
           row_number() OVER (PARTITION BY trace_id, pid ORDER BY start_ns) - 1 AS step_index
    FROM step_ranges
),
per_step AS (
    -- the level carried in is the level before the step's first event (its total less its size)
    SELECT s.trace_id, s.pid, m.device_type, m.device_id, s.step_index,
           any_value(m.source) AS source,
           arg_min(m.allocated_bytes - m.delta_bytes, m.event_id) AS allocated_at_start_bytes,
           min(m.event_id) AS first_event_id,
           max(m.allocated_bytes) AS inside_peak_bytes,
           -- the first event at the peak (several may reach the same level)
           arg_max(m.event_id, (m.allocated_bytes, -m.event_id)) AS inside_peak_event_id,
           arg_max(m.ts_ns, (m.allocated_bytes, -m.event_id)) AS inside_peak_ns,
           arg_max(m.reserved_bytes, (m.allocated_bytes, -m.event_id)) AS inside_reserved_at_peak_bytes,
           max(m.reserved_bytes) AS peak_reserved_bytes,
           arg_min(m.reserved_bytes, m.event_id) AS reserved_at_start_bytes,
           arg_max(m.allocated_bytes, m.event_id) AS allocated_at_end_bytes,
           count(*) FILTER (WHERE m.delta_bytes > 0) AS allocations,
           coalesce(sum(m.delta_bytes) FILTER (WHERE m.delta_bytes > 0), 0) AS allocated_in_step_bytes
    FROM s
    JOIN memory_timeline m ON m.trace_id = s.trace_id AND m.pid = s.pid
                          AND m.ts_ns >= s.start_ns AND m.ts_ns < s.end_ns
    GROUP BY ALL
)
SELECT p.trace_id, p.source, t.rank, p.pid, p.device_type, p.device_id, s.step, p.step_index,
       s.start_ns AS step_start_ns, s.end_ns AS step_end_ns,
       greatest(p.inside_peak_bytes, p.allocated_at_start_bytes) AS peak_allocated_bytes,
       p.peak_reserved_bytes,
       CASE WHEN p.allocated_at_start_bytes >= p.inside_peak_bytes THEN s.start_ns ELSE p.inside_peak_ns END
           AS peak_at_ns,
       -- the set of blocks alive after event id first_event_id - 1 is the one before the step's first event
       CASE WHEN p.allocated_at_start_bytes >= p.inside_peak_bytes THEN p.first_event_id - 1
            ELSE p.inside_peak_event_id END AS peak_event_id,
       CASE WHEN p.allocated_at_start_bytes >= p.inside_peak_bytes THEN p.reserved_at_start_bytes
            ELSE p.inside_reserved_at_peak_bytes END AS reserved_at_peak_bytes,
       CAST(p.allocated_at_start_bytes AS BIGINT) AS allocated_at_start_bytes, p.allocated_at_end_bytes,
       p.allocations, CAST(p.allocated_in_step_bytes AS BIGINT) AS allocated_in_step_bytes
FROM per_step p
JOIN s USING (trace_id, pid, step_index)
JOIN traces t USING (trace_id);

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
CREATE OR REPLACE VIEW memory_summary AS
SELECT trace_id, any_value(source) AS source, pid, device_type, device_id,
       count(*) AS events, min(ts_ns) AS first_ns, max(ts_ns) AS last_ns,
       arg_min(allocated_bytes - delta_bytes, event_id) AS allocated_at_start_bytes,
       arg_max(allocated_bytes, event_id) AS allocated_at_end_bytes,
       arg_max(reserved_bytes, event_id) AS reserved_at_end_bytes,
       max(allocated_bytes) AS peak_allocated_bytes,
       arg_max(ts_ns, (allocated_bytes, -event_id)) AS peak_at_ns,
       max(reserved_bytes) AS peak_reserved_bytes
FROM memory_timeline
GROUP BY trace_id, pid, device_type, device_id;
