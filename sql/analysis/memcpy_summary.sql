-- memcpy_time_summary: time of GPU memory operations per operation
-- (NVIDIA's cuda_gpu_mem_time_sum). One row per trace and operation.
--
-- depends: gpu_ops, duration_stats
-- materialize: per trace
--
-- @column trace_id    Trace.
-- @column operation   '[CUDA memcpy Host-to-Device]', ..., '[CUDA memset]'.
-- @column time_pct    total_ns as a percentage of all memory-operation time.
-- @column total_ns    Sum of durations (ns).
-- @column count       Number of operations.
-- @column avg_ns      Mean duration (ns).
-- @column med_ns      Median duration (ns).
-- @column min_ns      Shortest (ns).
-- @column max_ns      Longest (ns).
-- @column stddev_ns   Sample standard deviation (ns); 0 for one operation.
CREATE OR REPLACE VIEW memcpy_time_summary AS
SELECT * RENAME (instances AS count) FROM (
SELECT trace_id, name AS operation,
       100.0 * sum(duration_ns) / sum(sum(duration_ns)) OVER (PARTITION BY trace_id)
           AS time_pct,
       unnest(duration_stats(duration_ns))
FROM gpu_ops
WHERE category IN ('memcpy', 'memset')
GROUP BY trace_id, name
);

-- memcpy_size_summary: bytes moved per operation (NVIDIA's cuda_gpu_mem_size_sum).
--
-- @column trace_id      Trace.
-- @column operation     As in memcpy_time_summary.
-- @column total_bytes   Sum of bytes.
-- @column count         Number of operations.
-- @column avg_bytes     Mean bytes.
-- @column med_bytes     Median bytes.
-- @column min_bytes     Smallest.
-- @column max_bytes     Largest.
-- @column stddev_bytes  Sample standard deviation; 0 for one operation.
CREATE OR REPLACE VIEW memcpy_size_summary AS
SELECT trace_id, name AS operation,
       CAST(sum(bytes) AS BIGINT) AS total_bytes,
       count(*) AS count,
       avg(bytes) AS avg_bytes,
       median(bytes) AS med_bytes,
       min(bytes) AS min_bytes,
       max(bytes) AS max_bytes,
       coalesce(stddev_samp(bytes), 0) AS stddev_bytes
FROM gpu_ops
WHERE category IN ('memcpy', 'memset')
GROUP BY trace_id, name;

-- memcpy_kind_summary: copies by direction and memory kinds (pageable vs pinned)
-- with achieved bandwidth. Pageable host memory makes copies synchronous and slow;
-- this is where that shows.
--
-- depends: memcpy
--
-- @column trace_id                Trace.
-- @column copy_kind               HtoD, DtoH, DtoD, HtoH, PtoP, ...
-- @column src_kind                Source memory kind (pageable, pinned, device, ...).
-- @column dst_kind                Destination memory kind.
-- @column count                   Number of copies.
-- @column total_bytes             Bytes copied.
-- @column total_ns                Time spent copying (ns).
-- @column avg_bytes_per_s         total_bytes / total_ns, in bytes per second
--                                 (time-weighted achieved bandwidth).
-- @column max_bytes_per_s         Best single copy's bandwidth (bytes/s; copies of
--                                 zero duration ignored).
CREATE OR REPLACE VIEW memcpy_kind_summary AS
SELECT trace_id, copy_kind, src_kind, dst_kind,
       count(*) AS count,
       CAST(sum(bytes) AS BIGINT) AS total_bytes,
       CAST(sum(duration_ns) AS BIGINT) AS total_ns,
       1e9 * sum(bytes) / nullif(sum(duration_ns), 0) AS avg_bytes_per_s,
       max(1e9 * bytes / nullif(duration_ns, 0)) AS max_bytes_per_s
FROM memcpy
GROUP BY trace_id, copy_kind, src_kind, dst_kind;
