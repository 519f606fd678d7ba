-- nvtx_ranges: the CPU-side named ranges (NVTX push/pop and start/end ranges, PyTorch
-- user annotations), one row each, with NVIDIA's range name and style: the input of
-- nvtx_summary, nvtx_gpu_summary and steps.
--
-- depends: annotations, traces
--
-- @column trace_id       Trace.
-- @column annotation_id  annotations.annotation_id.
-- @column pid            Process.
-- @column tid            Thread.
-- @column depth          Nesting depth on its thread (0 = outermost).
-- @column parent_id      annotation_id of the enclosing range.
-- @column start_ns       Start (ns).
-- @column end_ns         End; the trace's end for a range never closed (ns).
-- @column duration_ns    end_ns - start_ns.
-- @column range          Range name; for NVTX '<domain>:<text>' as NVIDIA prints it
--                        (':text' in the default domain).
-- @column style          'PushPop', 'StartEnd' (NVTX) or 'UserAnnotation' (PyTorch).
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
