-- nvtx_summary: time inside named ranges per range name (NVIDIA's nvtx_sum):
-- NVTX push/pop and start/end ranges, and PyTorch user annotations (record_function,
-- ProfilerStep#N). One row per trace, range name and style.
--
-- depends: annotations, traces, duration_stats
--
-- @column trace_id    Trace.
-- @column range       Range name; for NVTX '<domain>:<text>' as NVIDIA prints it
--                     (':text' in the default domain).
-- @column style       'PushPop', 'StartEnd' (NVTX) or 'UserAnnotation' (PyTorch).
-- @column time_pct    total_ns as a percentage of the time of all listed ranges.
-- @column total_ns    Sum of range durations (ns); a range never closed ends at the
--                     end of the trace.
-- @column instances   Number of ranges.
-- @column avg_ns      Mean duration (ns).
-- @column med_ns      Median duration (ns).
-- @column min_ns      Shortest (ns).
-- @column max_ns      Longest (ns).
-- @column stddev_ns   Sample standard deviation (ns); 0 for one range.

-- nvtx_ranges: the CPU-side named ranges, one row each, with NVIDIA's range name
-- and style (the input of nvtx_summary and nvtx_gpu_summary).
--
-- @column annotation_id  annotations.annotation_id.
-- @column depth          Nesting depth on its thread (0 = outermost).
-- @column parent_id      annotation_id of the enclosing range.
-- @column end_ns         End; the trace's end for a range never closed.
CREATE OR REPLACE VIEW nvtx_ranges AS
SELECT a.trace_id, a.annotation_id, a.pid, a.tid, a.depth, a.parent_id, a.start_ns,
       coalesce(a.end_ns, t.end_ns) AS end_ns,
       coalesce(a.end_ns, t.end_ns) - a.start_ns AS duration_ns,
       CASE WHEN a.kind IN ('push_pop', 'start_end')
            THEN coalesce(a.domain, '') || ':' || coalesce(a.name, '')
            ELSE a.name END AS range,
       CASE a.kind WHEN 'push_pop' THEN 'PushPop' WHEN 'start_end' THEN 'StartEnd'
            ELSE 'UserAnnotation' END AS style
FROM annotations a
JOIN traces t USING (trace_id)
WHERE a.kind IN ('push_pop', 'start_end', 'user_annotation');

-- nvtx_summary: (columns above)
CREATE OR REPLACE VIEW nvtx_summary AS
SELECT trace_id, range, style,
       100.0 * sum(duration_ns) / sum(sum(duration_ns)) OVER (PARTITION BY trace_id)
           AS time_pct,
       unnest(duration_stats(duration_ns))
FROM nvtx_ranges
GROUP BY trace_id, range, style;
