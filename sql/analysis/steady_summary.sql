-- steady_summary: per process, what a step of its steady state looks like: the numbers
-- atop a report page. The steady steps are the steps of steady_state's window (after the
-- leading warm-up steps); start-up is the time from the trace's start to the first
-- steady step, which holds the warm-up steps. Averages are over the steady steps' wall
-- time, so a long step weighs more than a short one:
--   gpu_idle_pct = sum(gpu_idle_ns) / sum(wall_ns) x 100 over the steady steps;
--   main_idle_cause: of the GPU's idle gaps longer than 10 us inside the steady window
--   (largest_gpu_gaps, clipped to the window), the cause with the most idle time, and
--   main_idle_cause_pct its share of the steady steps' GPU idle time (gaps under 10 us
--   carry the rest);
--   mfu_pct: the median of mfu.mfu_pct over the steady steps (NULL when one is unreliable);
--   bound_by: the critical-path class (critical_path_summary) with the most time on the
--   steady steps' paths, summed over them, the host's time inside waiting calls counted as
--   'sync_wait' and 'memcpy' (critical_path_summary.bound_by), and the step time the paths
--   do not cover counted, up to the steps' GPU idle time, for the class of main_idle_cause
--   ('cpu' for host_wait), the rest (the GPU busy with work the path does not run through)
--   for the GPU's busiest class, so that what bounds the step agrees with why the GPU is idle. A GPU that is idle for a quarter of
--   the steady steps or more does not bound them, and host syncs that keep it idle do: there,
--   bound_by is 'sync_wait' when host syncs cause half of the idle time or more (steady_idle's
--   kind 'sync': the thread in cudaStreamSynchronize, cudaDeviceSynchronize,
--   cudaEventSynchronize, cudaMemcpy or .item(), and the late launches after it) in at most two
--   gaps per synchronizing call (the host ahead again right after each: syncs that serialize
--   host and GPU, as a .item() after every layer does, not a CPU-bound step that waits for the
--   host after a sync as it does everywhere else) and the path names GPU work
--   (gpu_compute, communication, kernel_to_kernel) or the host (cpu, launch_overhead); else,
--   where the path names GPU work, the class of main_idle_cause. bound_by_pct is then that
--   idle's share of the steps' time.
--
-- depends: steady_state, steps, step_phases, largest_gpu_gaps, mfu, critical_path_summary, traces,
--          profiler_cost, steady_idle, steady_syncs
--
-- @column trace_id             Trace.
-- @column rank                 Distributed rank (NULL when unknown).
-- @column pid                  Process.
-- @column step_rule            The rule the steps came from (steps.step_rule).
-- @column steps                Steady steps.
-- @column warmup_steps         Leading steps left out as warm-up.
-- @column median_step_ns       Median wall time of the steady steps (ns): the step time (steps.wall_ns).
-- @column step_time_basis      'gpu' when most steady steps start where the GPU's work does (the host runs
--                              ahead of the GPU), else 'host' (steps.step_time_basis).
-- @column median_host_step_ns  Median of the steady steps' host ranges (ns; NULL for 'periodicity').
-- @column p90_step_ns          90th percentile (linear interpolation) of their wall time (ns).
-- @column min_step_ns          Shortest steady step (ns).
-- @column max_step_ns          Longest steady step (ns).
-- @column start_ns             Start of the first steady step (ns).
-- @column end_ns               End of the last steady step (ns).
-- @column startup_ns           start_ns - the trace's start (ns): start-up and warm-up.
-- @column warmup_ns            Wall time of the warm-up steps (ns).
-- @column gpu_idle_pct         GPU idle share of the steady steps' wall time (%).
-- @column compute_pct          Share of the steady steps' wall time with compute kernels running (%).
-- @column communication_pct    Share with communication kernels running (%).
-- @column memcpy_pct           Share with memcpy or memset running (%).
-- @column main_idle_cause      Cause with the most idle time in gaps over 10 us in the window (NULL: none).
-- @column main_idle_cause_pct  Its idle time / the steady steps' GPU idle time x 100 (%).
-- @column mfu_pct              Median MFU of the steady steps (%; NULL without a FLOPs model, or when
--                              a steady step's is unreliable).
-- @column mfu_unreliable       Why a steady step's MFU is unreliable (mfu.mfu_unreliable; NULL: none is).
-- @column bound_by             Critical-path class with the most time over the steady steps, or what
--                              keeps a GPU idle for a quarter of them (see above; NULL: no path).
-- @column bound_by_pct         Its time / the steady steps' time (the path's, or the steps' where the
--                              path is shorter) x 100 (%); for an idle GPU, the idle's share.
-- @column bound_by_basis       'path' (the critical path's class) or 'gpu_idle' (a GPU idle for a
--                              quarter of the steps or more: bound_by_pct is that idle's share).
-- @column path_pct_of_step     The steady steps' critical path / their time x 100 (%): under 100 %,
--                              the rest counts for the class of the main idle cause up to the steps'
--                              GPU idle time, for the GPU's busiest class beyond (see bound_by).
-- @column est_step_without_profiler_ns  profiler_cost.est_step_ns: the median step without the
--                              profiler's own cost, estimated from the events it recorded (ns).
-- @column profiler_inflation_pct  profiler_cost.inflation_pct: how much the profiler lengthened
--                              the step (%).
CREATE OR REPLACE VIEW steady_summary AS
WITH win AS (
    SELECT * FROM steady_state WHERE steps > 0
),
steady_steps AS (
    SELECT s.*
    FROM steps s
    JOIN step_phases p USING (trace_id, pid, step_index)
    SEMI JOIN win w ON w.trace_id = s.trace_id AND w.pid = s.pid
    WHERE p.phase = 'steady'
),
agg AS (
    SELECT trace_id, pid,
           quantile_cont(wall_ns, 0.9) AS p90_step_ns, min(wall_ns) AS min_step_ns, max(wall_ns) AS max_step_ns,
           sum(gpu_idle_ns) AS idle_ns, sum(wall_ns) AS wall_ns, sum(compute_ns) AS compute_ns,
           sum(communication_ns) AS communication_ns, sum(memcpy_ns) AS memcpy_ns,
           CASE WHEN count(*) FILTER (WHERE step_time_basis = 'gpu') * 2 > count(*) THEN 'gpu' ELSE 'host' END
               AS step_time_basis,
           median(host_wall_ns) AS median_host_step_ns
    FROM steady_steps GROUP BY ALL
),
warm AS (
    SELECT s.trace_id, s.pid, sum(s.wall_ns) AS warmup_ns
    FROM steps s JOIN step_phases p USING (trace_id, pid, step_index)
    WHERE p.phase = 'warm-up'
    GROUP BY ALL
),
gap_causes AS (
    SELECT g.trace_id, g.pid, g.cause,
           sum(least(g.end_ns, s.end_ns) - greatest(g.start_ns, s.start_ns)) AS idle_ns
    FROM largest_gpu_gaps g
    JOIN steady_steps s ON s.trace_id = g.trace_id AND s.pid = g.pid
                       AND g.start_ns < s.end_ns AND g.end_ns > s.start_ns
    GROUP BY ALL
),
main_cause AS (
    SELECT trace_id, pid, arg_max(cause, {'ns': idle_ns, 'cause': cause}) AS cause, max(idle_ns) AS idle_ns
    FROM gap_causes GROUP BY ALL
),
sync_idle AS (
    -- the steady steps' idle that host syncs cause (steady_idle's kind 'sync': the launching
    -- thread in a synchronizing call, and the late launches after one), where the host gets
    -- ahead again right after each sync: at most two such gaps per synchronizing CUDA call
    -- (steady_syncs); many more are a host that launches late anyway (a CPU-bound step)
    SELECT i.trace_id, i.pid, sum(i.idle_ns) AS idle_ns
    FROM steady_idle i
    WHERE i.kind = 'sync'
    GROUP BY ALL
    HAVING sum(i.gaps) <= 2 * (SELECT coalesce(sum(c.calls), 0) FROM steady_syncs c
                               WHERE c.trace_id = i.trace_id AND c.pid = i.pid AND c.name LIKE 'cuda%')
),
mfu_steady AS (
    SELECT m.trace_id, m.pid, any_value(m.mfu_unreliable) AS unreliable,
           CASE WHEN count(m.mfu_unreliable) = 0 THEN median(m.mfu_pct) END AS mfu_pct
    FROM mfu m JOIN steady_steps s ON s.trace_id = m.trace_id AND s.pid = m.pid AND s.start_ns = m.start_ns
    WHERE m.mfu_pct IS NOT NULL OR m.mfu_unreliable IS NOT NULL
    GROUP BY ALL
),
path AS (
    SELECT c.trace_id, c.pid, sum(c.path_ns) AS path_ns, sum(c.step_ns) AS step_ns,
           sum(c.cpu_ns) AS cpu, sum(c.data_loading_ns) AS data_loading, sum(c.launch_overhead_ns) AS launch_overhead,
           sum(c.kernel_to_kernel_ns) AS kernel_to_kernel, sum(c.gpu_compute_ns) AS gpu_compute,
           sum(c.communication_ns) AS communication, sum(c.memcpy_ns) AS memcpy, sum(c.sync_wait_ns) AS sync_wait,
           sum(c.blocked_sync_ns) AS blocked_sync, sum(c.blocked_copy_ns) AS blocked_copy
    FROM critical_path_summary c
    JOIN steady_steps s ON s.trace_id = c.trace_id AND s.pid = c.pid AND s.step_index = c.step_index
    GROUP BY ALL
),
uncovered AS (
    -- step time the path does not cover (dependencies the trace does not show: the host's time
    -- between Nsight's API calls, waits without sync events). As much of it as the GPU was idle
    -- in the steps (rest_idle_ns) goes to the class of the steady GPU idle's main cause: the host
    -- ('cpu') for host_wait or an unknown cause, queueing for kernel_wait, the GPU's own graph
    -- for in_graph; the rest, time the GPU was busy with work the path does not run through,
    -- to the GPU's busiest class (compute, communication or copies)
    SELECT p.*, least(p.rest_ns, coalesce(a.idle_ns * p.step_ns / nullif(a.wall_ns, 0), p.rest_ns)) AS rest_idle_ns,
           CASE m.cause WHEN 'kernel_wait' THEN 'kernel_to_kernel' WHEN 'in_graph' THEN 'gpu_compute'
                        WHEN 'other' THEN 'sync_wait' ELSE 'cpu' END AS rest_class,
           CASE greatest(a.compute_ns, a.communication_ns, a.memcpy_ns)
                WHEN a.compute_ns THEN 'gpu_compute' WHEN a.communication_ns THEN 'communication'
                ELSE 'memcpy' END AS busy_class
    FROM (SELECT *, greatest(step_ns - path_ns, 0) AS rest_ns FROM path) p
    LEFT JOIN main_cause m USING (trace_id, pid) LEFT JOIN agg a USING (trace_id, pid)
),
path_classes AS (
    -- each class's time on the path, with its share of the uncovered time
    SELECT trace_id, pid, path_ns, path_only_ns, step_ns, rest_class, c.k,
           c.ns + CASE WHEN c.k = rest_class THEN rest_idle_ns ELSE 0 END
                + CASE WHEN c.k = busy_class THEN rest_ns - rest_idle_ns ELSE 0 END AS ns
    FROM (SELECT trace_id, pid, greatest(path_ns, step_ns) AS path_ns, path_ns AS path_only_ns, step_ns,
                 rest_ns, rest_idle_ns, rest_class, busy_class, unnest([
        {'k': 'cpu', 'ns': cpu - blocked_sync - blocked_copy}, {'k': 'data_loading', 'ns': data_loading},
        {'k': 'launch_overhead', 'ns': launch_overhead}, {'k': 'kernel_to_kernel', 'ns': kernel_to_kernel},
        {'k': 'gpu_compute', 'ns': gpu_compute}, {'k': 'communication', 'ns': communication},
        {'k': 'memcpy', 'ns': memcpy + blocked_copy}, {'k': 'sync_wait', 'ns': sync_wait + blocked_sync}]) AS c
          FROM uncovered)
),
bound AS (
    SELECT trace_id, pid, arg_max(k, {'ns': ns, 'k': k}) AS bound_by,
           100.0 * max(ns) / nullif(any_value(path_ns), 0) AS bound_by_pct,
           100.0 * any_value(path_only_ns) / nullif(any_value(step_ns), 0) AS path_pct_of_step,
           any_value(rest_class) AS idle_class
    FROM path_classes WHERE path_ns > 0 GROUP BY ALL
),
idle_verdict AS (
    -- a GPU idle for a quarter of the steady steps or more does not bound them (see above):
    -- 'syncs' or 'idle' where that decides, NULL where the path's class stands
    SELECT b.*, a.idle_ns, coalesce(si.idle_ns, 0) AS sync_idle_ns, a.wall_ns,
           CASE WHEN 100.0 * a.idle_ns / nullif(a.wall_ns, 0) < 25 THEN NULL
                WHEN coalesce(si.idle_ns, 0) * 2 >= a.idle_ns
                     AND b.bound_by IN ('gpu_compute', 'communication', 'kernel_to_kernel', 'cpu', 'launch_overhead')
                     THEN 'syncs'
                WHEN b.bound_by IN ('gpu_compute', 'communication', 'kernel_to_kernel') THEN 'idle' END AS verdict
    FROM bound b
    JOIN agg a USING (trace_id, pid)
    LEFT JOIN sync_idle si USING (trace_id, pid)
)
SELECT w.trace_id, t.rank, w.pid, w.step_rule, w.steps, w.warmup_steps, w.median_step_ns,
       a.step_time_basis, CAST(a.median_host_step_ns AS BIGINT) AS median_host_step_ns, a.p90_step_ns, a.min_step_ns, a.max_step_ns, w.start_ns, w.end_ns,
       w.start_ns - t.start_ns AS startup_ns, coalesce(wm.warmup_ns, 0) AS warmup_ns,
       100.0 * a.idle_ns / nullif(a.wall_ns, 0) AS gpu_idle_pct,
       100.0 * a.compute_ns / nullif(a.wall_ns, 0) AS compute_pct,
       100.0 * a.communication_ns / nullif(a.wall_ns, 0) AS communication_pct,
       100.0 * a.memcpy_ns / nullif(a.wall_ns, 0) AS memcpy_pct,
       mc.cause AS main_idle_cause, 100.0 * mc.idle_ns / nullif(a.idle_ns, 0) AS main_idle_cause_pct,
       mf.mfu_pct, mf.unreliable AS mfu_unreliable,
       CASE b.verdict WHEN 'syncs' THEN 'sync_wait' WHEN 'idle' THEN b.idle_class ELSE b.bound_by END AS bound_by,
       CASE b.verdict WHEN 'syncs' THEN 100.0 * b.sync_idle_ns / nullif(b.wall_ns, 0)
                      WHEN 'idle' THEN 100.0 * b.idle_ns / nullif(b.wall_ns, 0) ELSE b.bound_by_pct END AS bound_by_pct,
       CASE WHEN b.verdict IS NOT NULL THEN 'gpu_idle' WHEN b.bound_by IS NOT NULL THEN 'path' END AS bound_by_basis,
       b.path_pct_of_step,
       pc.est_step_ns AS est_step_without_profiler_ns, pc.inflation_pct AS profiler_inflation_pct
FROM win w
JOIN traces t ON t.trace_id = w.trace_id
JOIN agg a ON a.trace_id = w.trace_id AND a.pid = w.pid
LEFT JOIN warm wm ON wm.trace_id = w.trace_id AND wm.pid = w.pid
LEFT JOIN main_cause mc ON mc.trace_id = w.trace_id AND mc.pid = w.pid
LEFT JOIN mfu_steady mf ON mf.trace_id = w.trace_id AND mf.pid = w.pid
LEFT JOIN idle_verdict b ON b.trace_id = w.trace_id AND b.pid = w.pid
LEFT JOIN profiler_cost pc ON pc.trace_id = w.trace_id AND pc.pid = w.pid;
