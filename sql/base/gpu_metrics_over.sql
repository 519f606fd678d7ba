-- gpu_metrics_over(tbl): the GPU metric samples' time-weighted averages over intervals.
-- tbl is a table or CTE of intervals with the columns (trace_id, device_id, lane, start_ns,
-- end_ns); `lane` groups them (a kernel name, a range id, a STRUCT of several keys). Each
-- interval is cut into the sampling periods of its device it overlaps (gpu_metric_samples),
-- each piece weighs its length, so a sample that a interval only half covers counts half;
-- a lane's average is over all its pieces (overlapping intervals of one lane count twice).
-- The samples are found by two as-of joins (the sample holding the start, the one holding
-- the end) and the periods between, never by comparing every interval with every sample.
-- Intervals on devices without samples, or outside the sampled time, give no row.
-- Returns (trace_id, device_id, lane, intervals, duration_ns, sampled_ns, sm_active_pct,
-- sm_issue_pct, tensor_active_pct, dram_read_gb_per_s, dram_write_gb_per_s,
-- dram_peak_gb_per_s, pcie_rx_gb_per_s, pcie_tx_gb_per_s, pcie_peak_gb_per_s):
-- intervals and duration_ns (their summed length) count every interval of the lane,
-- sampled_ns the part that lies inside sampling periods; each metric is
-- sum(piece_ns x value) / sum(piece_ns) over the pieces where the metric is not NULL.
--
-- depends: gpu_metric_samples
CREATE OR REPLACE MACRO gpu_metrics_over(tbl) AS TABLE
WITH sampled AS (
    SELECT trace_id, device_id, min(sample_index) AS first_index
    FROM gpu_metric_samples
    GROUP BY ALL
),
iv AS (
    SELECT trace_id, device_id, lane, start_ns, end_ns
    FROM query_table(tbl)
    SEMI JOIN sampled USING (trace_id, device_id)
    WHERE start_ns IS NOT NULL AND end_ns > start_ns
),
lanes AS (
    SELECT trace_id, device_id, lane, count(*) AS intervals, sum(end_ns - start_ns) AS duration_ns
    FROM iv
    GROUP BY ALL
),
opened AS (
    SELECT iv.*, s.sample_index AS first_index
    FROM iv
    ASOF LEFT JOIN gpu_metric_samples s
      ON iv.trace_id = s.trace_id AND iv.device_id = s.device_id AND iv.start_ns >= s.start_ns
),
spans AS (
    SELECT o.trace_id, o.device_id, o.lane, o.start_ns, o.end_ns,
           coalesce(o.first_index, f.first_index) AS first_index, s.sample_index AS last_index
    FROM opened o
    ASOF JOIN gpu_metric_samples s
      ON o.trace_id = s.trace_id AND o.device_id = s.device_id AND o.end_ns > s.start_ns
    JOIN sampled f ON f.trace_id = o.trace_id AND f.device_id = o.device_id
),
pieces AS (
    SELECT trace_id, device_id, lane, start_ns, end_ns,
           unnest(range(first_index, last_index + 1)) AS sample_index
    FROM spans
),
weighted AS (
    SELECT p.trace_id, p.device_id, p.lane,
           least(p.end_ns, s.end_ns) - greatest(p.start_ns, s.start_ns) AS w, s.*
           EXCLUDE (trace_id, device_id, sample_index, start_ns, end_ns)
    FROM pieces p
    JOIN gpu_metric_samples s USING (trace_id, device_id, sample_index)
    WHERE least(p.end_ns, s.end_ns) > greatest(p.start_ns, s.start_ns)
),
averaged AS (
    SELECT trace_id, device_id, lane, sum(w) AS sampled_ns,
           sum(w * sm_active_pct) / sum(w) FILTER (WHERE sm_active_pct IS NOT NULL) AS sm_active_pct,
           sum(w * sm_issue_pct) / sum(w) FILTER (WHERE sm_issue_pct IS NOT NULL) AS sm_issue_pct,
           sum(w * tensor_active_pct) / sum(w) FILTER (WHERE tensor_active_pct IS NOT NULL) AS tensor_active_pct,
           sum(w * dram_read_gb_per_s) / sum(w) FILTER (WHERE dram_read_gb_per_s IS NOT NULL)
               AS dram_read_gb_per_s,
           sum(w * dram_write_gb_per_s) / sum(w) FILTER (WHERE dram_write_gb_per_s IS NOT NULL)
               AS dram_write_gb_per_s,
           any_value(dram_peak_gb_per_s) AS dram_peak_gb_per_s,
           sum(w * pcie_rx_gb_per_s) / sum(w) FILTER (WHERE pcie_rx_gb_per_s IS NOT NULL) AS pcie_rx_gb_per_s,
           sum(w * pcie_tx_gb_per_s) / sum(w) FILTER (WHERE pcie_tx_gb_per_s IS NOT NULL) AS pcie_tx_gb_per_s,
           any_value(pcie_peak_gb_per_s) AS pcie_peak_gb_per_s
    FROM weighted
    GROUP BY ALL
)
SELECT l.trace_id, l.device_id, l.lane, l.intervals, CAST(l.duration_ns AS BIGINT) AS duration_ns,
       CAST(a.sampled_ns AS BIGINT) AS sampled_ns,
       a.* EXCLUDE (trace_id, device_id, lane, sampled_ns)
FROM lanes l
JOIN averaged a ON a.trace_id = l.trace_id AND a.device_id = l.device_id AND a.lane IS NOT DISTINCT FROM l.lane;
