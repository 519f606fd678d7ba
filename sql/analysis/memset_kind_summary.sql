-- memset_kind_summary: memsets by memory kind, with the achieved fill rate (the
-- memset side of memcpy_kind_summary).
--
-- depends: memset
--
-- @column trace_id         Trace.
-- @column mem_kind         Memory kind set (device, pinned, ...; NULL when the trace
--                          does not say).
-- @column count            Number of memsets.
-- @column total_bytes      Bytes set.
-- @column total_ns         Time spent setting memory (ns).
-- @column avg_bytes_per_s  total_bytes / total_ns, in bytes per second.
CREATE OR REPLACE VIEW memset_kind_summary AS
SELECT trace_id, mem_kind, count(*) AS count,
       CAST(sum(bytes) AS BIGINT) AS total_bytes,
       CAST(sum(duration_ns) AS BIGINT) AS total_ns,
       1e9 * sum(bytes) / nullif(sum(duration_ns), 0) AS avg_bytes_per_s
FROM memset
GROUP BY trace_id, mem_kind;
