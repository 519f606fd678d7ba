-- temporal_breakdown: where a rank's GPU time goes between its first and last GPU
-- operation, HTA's temporal breakdown: idle time (no operation on any stream), compute
-- (time covered by compute kernels), non-compute (busy but not computing:
-- communication, copies, memsets that no compute kernel overlaps). Unions over all
-- streams and GPUs of the process. One row per trace and process (rank).
-- temporal_breakdown_by_device: the same per GPU.
-- temporal_breakdown_hta: the same computed the way HTA does, for comparisons: each
-- operation's start rounded up and its end rounded down to whole microseconds (HTA's
-- workaround for overlapping ns-resolution events, which adds up to 2 us of idle time
-- per operation), and, when the trace has two or more ProfilerStep ranges, only the
-- operations whose launching API call started by the end of the last one; and HTA
-- counts CPU operators that carry a 'stream' argument (torch.compile's Triton kernel
-- launchers) as compute kernels, which inflates compute on compiled models.
--
-- depends: gpu_class_union_ns, traces
--
-- @column trace_id            Trace.
-- @column rank                Distributed rank (NULL when the trace does not say).
-- @column pid                 Process.
-- @column device_id           GPU (temporal_breakdown_by_device only).
-- @column span_ns             Last end - first start of the GPU operations (ns).
-- @column busy_ns             Time with at least one operation running (ns).
-- @column idle_ns             span_ns - busy_ns.
-- @column compute_ns          Time with at least one compute kernel running (ns).
-- @column non_compute_ns      busy_ns - compute_ns: busy without compute (ns).
-- @column communication_ns    Time with at least one communication kernel running (ns),
--                             overlapped by compute or not.
-- @column memcpy_ns           Time with at least one memcpy or memset running (ns).
-- @column idle_pct            idle_ns / span_ns x 100.
-- @column compute_pct         compute_ns / span_ns x 100.
-- @column non_compute_pct     non_compute_ns / span_ns x 100.
-- @column communication_pct   communication_ns / span_ns x 100.
-- @column memcpy_pct          memcpy_ns / span_ns x 100.

CREATE OR REPLACE MACRO _temporal_breakdown(grain, hta_mode) AS TABLE
SELECT u.trace_id, t.rank, u.pid, u.device_id,
       u.last_ns - u.first_ns AS span_ns,
       CAST(u.busy_ns AS BIGINT) AS busy_ns,
       CAST(u.last_ns - u.first_ns - u.busy_ns AS BIGINT) AS idle_ns,
       CAST(u.compute_ns AS BIGINT) AS compute_ns,
       CAST(u.busy_ns - u.compute_ns AS BIGINT) AS non_compute_ns,
       CAST(u.communication_ns AS BIGINT) AS communication_ns,
       CAST(u.memcpy_ns AS BIGINT) AS memcpy_ns,
       100.0 * (u.last_ns - u.first_ns - u.busy_ns) / nullif(u.last_ns - u.first_ns, 0) AS idle_pct,
       100.0 * u.compute_ns / nullif(u.last_ns - u.first_ns, 0) AS compute_pct,
       100.0 * (u.busy_ns - u.compute_ns) / nullif(u.last_ns - u.first_ns, 0) AS non_compute_pct,
       100.0 * u.communication_ns / nullif(u.last_ns - u.first_ns, 0) AS communication_pct,
       100.0 * u.memcpy_ns / nullif(u.last_ns - u.first_ns, 0) AS memcpy_pct
FROM gpu_class_union_ns(grain, hta_mode) u
JOIN traces t USING (trace_id);

CREATE OR REPLACE VIEW temporal_breakdown AS
SELECT * EXCLUDE (device_id) FROM _temporal_breakdown('process', false);

CREATE OR REPLACE VIEW temporal_breakdown_by_device AS
SELECT * FROM _temporal_breakdown('device', false);

CREATE OR REPLACE VIEW temporal_breakdown_hta AS
SELECT * EXCLUDE (device_id) FROM _temporal_breakdown('process', true);
