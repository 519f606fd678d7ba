-- memcpy_pinned_rates: what each host<->device copy from or to pageable memory would take
-- from pinned memory, for the what-if "pinned copies" (analysis/critpath_scenarios.py).
-- The pinned rate of a copy's direction is the best bandwidth of the trace's own pinned
-- copies of that direction of at least 1 MiB (rate_source 'trace'); else the GPU's PCIe
-- link (gpu_pcie_links) x 0.87, the payload share of the link measured on an H100 (a 64 MiB
-- pinned HtoD copy at 54.7 GB/s on Gen5 x16, 63.0 GB/s: tests/recorded/judgments)
-- (rate_source 'link'); else NULL (the copy is left as it is).
--
-- depends: memcpy, devices, gpu_pcie_links, pcie_gb_per_s
--
-- @column trace_id          Trace.
-- @column pid               Process.
-- @column correlation_id    Correlation id of the copy (joins its launching call).
-- @column copy_kind         HtoD or DtoH.
-- @column bytes             Bytes copied.
-- @column duration_ns       Measured duration of the copy on the GPU (ns).
-- @column pinned_bytes_per_s  The pinned rate of its direction (bytes/s).
-- @column pinned_ns         bytes / pinned_bytes_per_s, at most duration_ns (ns).
-- @column rate_source       'trace' or 'link' (see above).
CREATE OR REPLACE VIEW memcpy_pinned_rates AS
WITH pinned AS (
    SELECT trace_id, copy_kind, max(1e9 * bytes / duration_ns) AS bytes_per_s
    FROM memcpy
    WHERE copy_kind IN ('HtoD', 'DtoH') AND 'pinned' IN (src_kind, dst_kind)
      AND bytes >= 1048576 AND duration_ns > 0
    GROUP BY ALL
),
link AS (
    SELECT d.trace_id, d.device_id,
           (SELECT 0.87e9 * pcie_gb_per_s(l.pcie_generation, l.pcie_lanes) FROM gpu_pcie_links l
            WHERE regexp_matches(d.name, l.name_pattern, 'i')
            ORDER BY length(l.name_pattern) DESC, l.gpu LIMIT 1) AS bytes_per_s
    FROM devices d
),
pageable AS (
    SELECT * FROM memcpy
    WHERE copy_kind IN ('HtoD', 'DtoH') AND 'pageable' IN (src_kind, dst_kind) AND duration_ns > 0
),
rated AS (
    SELECT c.trace_id, c.pid, c.correlation_id, c.copy_kind, c.bytes, c.duration_ns,
           coalesce(p.bytes_per_s, l.bytes_per_s) AS pinned_bytes_per_s,
           CASE WHEN p.bytes_per_s IS NOT NULL THEN 'trace' WHEN l.bytes_per_s IS NOT NULL THEN 'link' END
               AS rate_source
    FROM pageable c
    LEFT JOIN pinned p USING (trace_id, copy_kind)
    LEFT JOIN link l ON l.trace_id = c.trace_id AND l.device_id IS NOT DISTINCT FROM c.device_id
)
SELECT trace_id, pid, correlation_id, copy_kind, bytes, duration_ns, pinned_bytes_per_s,
       CAST(least(duration_ns, round(1e9 * bytes / pinned_bytes_per_s)) AS BIGINT) AS pinned_ns, rate_source
FROM rated
WHERE pinned_bytes_per_s > 0;
