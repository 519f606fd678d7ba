-- gpu_utilization_within(ranges, n): GPU use over time in given ranges: `ranges` names a
-- view with the columns of gpu_active_range (trace_id, pid, device_id, context_id,
-- first_ns, last_ns); each range is cut into n chunks of ceil(span / n) ns (the last one
-- clipped), with the in-use % of each (below).
-- gpu_utilization_series(n): GPU use over time, for charts and for
-- gpu_utilization_chunks. Each process's active range on a GPU (gpu_active_range) is
-- cut into n chunks of ceil(span / n) ns (the last one clipped); a chunk's in-use %
-- is the time of gpu_busy intervals inside it / its length x 100 (concurrent work adds
-- up, so it can exceed 100). One row per chunk.
--
-- depends: gpu_busy, gpu_active_range
-- materialize: per trace
--
-- @column trace_id     Trace.
-- @column pid          Process.
-- @column device_id    GPU.
-- @column context_id   CUDA context (as NVIDIA prints it).
-- @column chunk        Chunk index, 0 .. n-1.
-- @column start_ns     Start of the chunk, or of the low stretch (ns).
-- @column duration_ns  Its length (ns).
-- @column in_use_pct   Busy time / length x 100.
CREATE OR REPLACE MACRO gpu_utilization_within(ranges, n) AS TABLE
WITH chunking AS (
    SELECT trace_id, pid, device_id, context_id, first_ns, last_ns,
           CAST(ceil((last_ns - first_ns) / n) AS BIGINT) AS chunk_ns
    FROM query_table(ranges)
    WHERE last_ns > first_ns
),
chunks AS (
    SELECT c.trace_id, c.pid, c.device_id, c.context_id, i AS chunk,
           c.first_ns + i * c.chunk_ns AS start_ns,
           least(c.first_ns + (i + 1) * c.chunk_ns, c.last_ns) AS end_ns
    FROM chunking c, range(0, n) AS r(i)
    WHERE c.first_ns + i * c.chunk_ns < c.last_ns
),
-- each busy interval with the first and last chunk it touches
busy_chunks AS (
    SELECT b.trace_id, b.pid, b.device_id, b.start_ns, b.end_ns, c.first_ns, c.last_ns, c.chunk_ns,
           CAST((b.start_ns - c.first_ns) // c.chunk_ns AS BIGINT) AS first_chunk,
           CAST((greatest(b.end_ns, b.start_ns + 1) - 1 - c.first_ns) // c.chunk_ns AS BIGINT) AS last_chunk
    FROM gpu_busy b
    JOIN chunking c USING (trace_id, pid, device_id)
),
-- each busy interval, split over the chunks it touches (most touch one: only the others
-- go through range())
busy_in_chunk AS (
    SELECT trace_id, pid, device_id, i AS chunk,
           least(end_ns, first_ns + (i + 1) * chunk_ns, last_ns) - greatest(start_ns, first_ns + i * chunk_ns)
               AS busy_ns
    FROM (SELECT *, first_chunk AS i FROM busy_chunks WHERE first_chunk = last_chunk
          UNION ALL
          SELECT b.*, r.i
          FROM (SELECT * FROM busy_chunks WHERE first_chunk < last_chunk) b,
               range(b.first_chunk, b.last_chunk + 1) AS r(i))
)
SELECT c.trace_id, c.pid, c.device_id, c.context_id, c.chunk, c.start_ns,
       c.end_ns - c.start_ns AS duration_ns,
       100.0 * coalesce(sum(greatest(u.busy_ns, 0)), 0) / (c.end_ns - c.start_ns) AS in_use_pct
FROM chunks c
LEFT JOIN busy_in_chunk u USING (trace_id, pid, device_id, chunk)
GROUP BY c.trace_id, c.pid, c.device_id, c.context_id, c.chunk, c.start_ns, c.end_ns;

CREATE OR REPLACE MACRO gpu_utilization_series(n) AS TABLE
SELECT * FROM gpu_utilization_within('gpu_active_range', n);

-- gpu_utilization_chunks(n, threshold_pct): stretches of low GPU use: chunks of
-- gpu_utilization_series(n) under threshold_pct, consecutive ones merged, with the
-- length-weighted mean in-use % rounded to 0.1. NVIDIA's nsys analyze gpu_time_util.
-- gpu_utilization: the same with NVIDIA's defaults (30 chunks, 50 %).
-- (columns as gpu_utilization_series, without chunk)
CREATE OR REPLACE MACRO gpu_utilization_chunks(n, threshold_pct) AS TABLE
WITH low AS (
    SELECT *, chunk - row_number() OVER (
               PARTITION BY trace_id, pid, device_id ORDER BY chunk) AS run
    FROM gpu_utilization_series(n)
    WHERE in_use_pct < threshold_pct
)
SELECT trace_id, pid, device_id, context_id,
       min(start_ns) AS start_ns,
       CAST(sum(duration_ns) AS BIGINT) AS duration_ns,
       round(sum(in_use_pct * duration_ns) / sum(duration_ns), 1) AS in_use_pct
FROM low
GROUP BY trace_id, pid, device_id, context_id, run;

-- gpu_utilization: (see gpu_utilization_chunks)
CREATE OR REPLACE VIEW gpu_utilization AS
SELECT * FROM gpu_utilization_chunks(30, 50);

-- gpu_utilization_over_time: gpu_utilization_series with 100 chunks per process and
-- GPU, for charts (columns as gpu_utilization_series).
CREATE OR REPLACE VIEW gpu_utilization_over_time AS
SELECT * FROM gpu_utilization_series(100);
