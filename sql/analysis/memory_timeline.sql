-- memory_timeline: allocated and reserved memory over time, one row per allocator
-- event (each change), per trace, process and device. PyTorch: the running totals the
-- caching allocator writes on each [memory] event ('Total Allocated', 'Total Reserved'),
-- absolute even when the trace starts mid-run. Nsight: the running sum of the CUDA memory
-- usage events (nsys --cuda-memory-usage=true) from the start of the capture: device memory
-- allocated with cudaMalloc and friends (for a PyTorch program, what its caching allocator
-- reserved from CUDA); it has no reserved figure. PyTorch events without the totals (2021
-- traces) also get the running sum, which then counts from 0 at the trace's start.
-- `source` says which.
-- memory_timeline_buckets(n): the same in n equal slices of each trace, for charts: the
-- highest and lowest level in each slice, so that no peak is lost. Slices without events
-- are left out (the level did not change).
-- memory_timeline_bucketed: memory_timeline_buckets(400).
-- memory_sources: one row per trace: where its memory timeline comes from, or why it has none.
--
-- depends: memory_device_events, traces, api
--
-- @column trace_id         Trace.
-- @column source           'pytorch_allocator' or 'cuda_memory_usage_events'.
-- @column pid              Process.
-- @column device_type      'cuda' or 'cpu'.
-- @column device_id        Device (-1 for the CPU).
-- @column event_id         The event (memory_events.event_id).
-- @column ts_ns            When (ns).
-- @column delta_bytes      Change: > 0 allocation, < 0 free (bytes).
-- @column allocated_bytes  Allocated after the event (bytes).
-- @column reserved_bytes   Reserved by PyTorch's caching allocator after the event (bytes);
--                          NULL for nsys.
CREATE OR REPLACE VIEW memory_timeline AS
SELECT trace_id, source, pid, device_type, device_id, event_id, ts_ns, bytes AS delta_bytes,
       total_allocated_bytes AS allocated_bytes, total_reserved_bytes AS reserved_bytes
FROM memory_device_events
WHERE total_allocated_bytes IS NOT NULL
UNION ALL
SELECT trace_id, source, pid, device_type, device_id, event_id, ts_ns, bytes,
       CAST(sum(bytes) OVER (PARTITION BY trace_id, pid, device_type, device_id ORDER BY event_id
                             ROWS UNBOUNDED PRECEDING) AS BIGINT),
       NULL
FROM memory_device_events
WHERE total_allocated_bytes IS NULL;

-- memory_timeline_buckets: (columns of memory_timeline, less the event's, plus)
--
-- @column bucket                Slice number, 0 .. n-1.
-- @column bucket_start_ns       Slice start (ns).
-- @column bucket_end_ns         Slice end (ns).
-- @column events                Allocator events in the slice.
-- @column max_allocated_bytes   Highest allocated level in the slice (bytes).
-- @column min_allocated_bytes   Lowest (bytes).
-- @column last_allocated_bytes  Level after the slice's last event (bytes).
-- @column max_reserved_bytes    Highest reserved level (bytes; NULL for nsys).
-- @column last_reserved_bytes   Reserved after the slice's last event (bytes).
CREATE OR REPLACE MACRO memory_timeline_buckets(n) AS TABLE
WITH span AS (
    SELECT trace_id, start_ns, greatest(end_ns - start_ns, 1) / n AS width_ns FROM traces
),
b AS (
    SELECT m.*, s.start_ns AS trace_start_ns, s.width_ns,
           least(n - 1, CAST(floor((m.ts_ns - s.start_ns) / s.width_ns) AS BIGINT)) AS bucket
    FROM memory_timeline m
    JOIN span s USING (trace_id)
)
SELECT trace_id, any_value(source) AS source, pid, device_type, device_id, bucket,
       CAST(any_value(trace_start_ns) + bucket * any_value(width_ns) AS BIGINT) AS bucket_start_ns,
       CAST(any_value(trace_start_ns) + (bucket + 1) * any_value(width_ns) AS BIGINT) AS bucket_end_ns,
       count(*) AS events,
       max(allocated_bytes) AS max_allocated_bytes,
       min(allocated_bytes) AS min_allocated_bytes,
       arg_max(allocated_bytes, event_id) AS last_allocated_bytes,
       max(reserved_bytes) AS max_reserved_bytes,
       arg_max(reserved_bytes, event_id) AS last_reserved_bytes
FROM b
GROUP BY trace_id, pid, device_type, device_id, bucket;

-- memory_timeline_bucketed: (columns of memory_timeline_buckets)
CREATE OR REPLACE VIEW memory_timeline_bucketed AS
SELECT * FROM memory_timeline_buckets(400);

-- memory_sources: (one row per trace)
--
-- @column source  'pytorch_allocator', 'cuda_memory_usage_events', or NULL when the trace
--                 has no allocator events.
-- @column events  Allocator events counted by memory_timeline.
-- @column note    What the numbers mean, or how to record them.
CREATE OR REPLACE VIEW memory_sources AS
WITH counted AS (
    SELECT trace_id, any_value(source) AS source, count(*) AS events FROM memory_device_events GROUP BY trace_id
),
calls AS (
    SELECT trace_id,
           count(*) FILTER (WHERE name LIKE 'cudaMalloc%' OR name LIKE 'cuMemAlloc%') AS mallocs,
           count(*) FILTER (WHERE name LIKE 'cudaFree%' OR name LIKE 'cuMemFree%') AS frees
    FROM api
    WHERE name LIKE 'cudaMalloc%' OR name LIKE 'cuMemAlloc%' OR name LIKE 'cudaFree%' OR name LIKE 'cuMemFree%'
    GROUP BY trace_id
)
SELECT t.trace_id, c.source, coalesce(c.events, 0) AS events,
       CASE
           WHEN c.source = 'pytorch_allocator'
               THEN 'PyTorch caching allocator totals ([memory] events): allocated = live tensors, '
                    || 'reserved = allocated plus cached blocks'
           WHEN c.source = 'cuda_memory_usage_events'
               THEN 'CUDA memory usage events: device memory allocated through the CUDA API since the '
                    || 'capture started (for PyTorch, its reserved memory); no reserved figure'
           WHEN t.source = 'nsys'
               THEN printf('no CUDA memory usage events in the export (record with nsys profile '
                           || '--cuda-memory-usage=true); %d cudaMalloc and %d cudaFree calls were traced, '
                           || 'without their sizes', coalesce(a.mallocs, 0), coalesce(a.frees, 0))
           ELSE 'no [memory] events in the trace (record with torch.profiler.profile(profile_memory=True))'
       END AS note
FROM traces t
LEFT JOIN counted c USING (trace_id)
LEFT JOIN calls a USING (trace_id);
