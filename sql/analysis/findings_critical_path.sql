-- finding_critical_path: what bounds the steady steps of each process (step_phases: warm-up
-- steps are left out), from their critical paths (critical_path_summary): the class with the most time summed over the steps, with the
-- operators or kernels that put the most of it on the path (their time a step, as the path's), and
-- advice for that class. One row
-- per trace and process; 'info' when GPU compute bounds the steps (the GPU is the bottleneck,
-- as it should be), 'warning' otherwise, and where the path is mostly GPU compute but the
-- headline (steady_summary.bound_by: the step time the path does not cover, or a GPU idle a
-- quarter of the steps or more) names another class: the advice then says that class bounds them. The
-- steps are those of the steps view, whatever rule found them (critical_path_steps cuts a path built
-- for other steps at theirs). A trace without steps (the '(trace)' step, pid NULL) gets one finding
-- on the whole trace, whose path leaves out process start-up and teardown (critpath_graph), with its
-- advice of the loop.
--
-- depends: critical_path_summary, critical_path_ops, critical_path_steps, step_phases, steady_summary
-- materialize: per trace
--
-- @column trace_id     Trace.
-- @column rule         'critical_path_bound'.
-- @column severity     'warning' or 'info'.
-- @column pid          Process.
-- @column start_ns     Start of the first step (ns).
-- @column duration_ns  Critical path length summed over the steady steps (ns).
-- @column evidence     What was seen.
-- @column advice       What to do.
CREATE OR REPLACE VIEW finding_critical_path AS
WITH sums AS (
    SELECT trace_id, pid, count(*) AS steps, sum(path_ns) AS path_ns, sum(step_ns) AS step_ns,
           bool_or(is_lower_bound) AS lower_bound,
           [{'k': 'cpu', 'ns': sum(cpu_ns)}, {'k': 'data_loading', 'ns': sum(data_loading_ns)},
            {'k': 'launch_overhead', 'ns': sum(launch_overhead_ns)},
            {'k': 'kernel_to_kernel', 'ns': sum(kernel_to_kernel_ns)},
            {'k': 'gpu_compute', 'ns': sum(gpu_compute_ns)}, {'k': 'communication', 'ns': sum(communication_ns)},
            {'k': 'memcpy', 'ns': sum(memcpy_ns)}, {'k': 'sync_wait', 'ns': sum(sync_wait_ns)}] AS classes
    FROM critical_path_summary  -- a step without a phase (no steps: the '(trace)' step) counts
    LEFT JOIN (SELECT trace_id, pid, step_index, phase FROM step_phases) p USING (trace_id, pid, step_index)
    WHERE coalesce(p.phase, 'steady') = 'steady'
    GROUP BY trace_id, pid
),
per_class AS (
    SELECT trace_id, pid, steps, path_ns, step_ns, lower_bound, unnest(classes) AS c FROM sums
),
bound AS (
    SELECT trace_id, pid, steps, path_ns, step_ns, lower_bound, c.k AS class, c.ns AS class_ns
    FROM per_class
    WHERE path_ns > 0
    QUALIFY row_number() OVER (PARTITION BY trace_id, pid ORDER BY c.ns DESC, c.k) = 1
),
top_ops AS (
    SELECT trace_id, pid, class, name, sum(path_ns) AS ns
    FROM critical_path_ops
    LEFT JOIN (SELECT trace_id, pid, step_index, phase FROM step_phases) p USING (trace_id, pid, step_index)
    WHERE coalesce(p.phase, 'steady') = 'steady'
    GROUP BY trace_id, pid, class, name
    QUALIFY row_number() OVER (PARTITION BY trace_id, pid, class ORDER BY ns DESC, name) <= 3
),
top AS (
    -- an operator's time on the path as the evidence's path is given: a step's mean with steps,
    -- the whole trace's without
    SELECT o.trace_id, o.pid, o.class,
           string_agg(CASE WHEN length(o.name) > 70 THEN left(o.name, 67) || '...' ELSE o.name END
                      || ' (' || round(o.ns / CASE WHEN o.pid IS NULL THEN 1 ELSE s.steps END / 1e6, 2)
                      || CASE WHEN o.pid IS NULL THEN ' ms)' ELSE ' ms a step)' END,
                      ', ' ORDER BY o.ns DESC, o.name) AS names
    FROM top_ops o
    JOIN sums s ON s.trace_id = o.trace_id AND s.pid IS NOT DISTINCT FROM o.pid
    GROUP BY o.trace_id, o.pid, o.class
),
first_step AS (
    SELECT trace_id, pid, min(start_ns) AS start_ns FROM critical_path_steps GROUP BY trace_id, pid
),
headline AS (
    -- what the page's headline says bounds the steady steps (steady_summary.bound_by: the
    -- path's classes with the step time it does not cover, or the GPU's idle where that decides)
    SELECT trace_id, pid, bound_by, gpu_idle_pct FROM steady_summary
)
SELECT b.trace_id, 'critical_path_bound' AS rule,
       CASE WHEN b.class = 'gpu_compute' AND coalesce(h.bound_by, 'gpu_compute') = 'gpu_compute' THEN 'info'
            ELSE 'warning' END AS severity,
       b.pid, f.start_ns, b.path_ns AS duration_ns,
       CASE WHEN b.pid IS NULL  -- no steps: the '(trace)' step, start-up and teardown left out
            THEN printf('No steps were found: over the whole trace (process start-up and teardown left out) the critical '
                        || 'path is %.2f ms (%.0f%% of the trace); ', b.path_ns / 1e6, 100.0 * b.path_ns / nullif(b.step_ns, 0))
            ELSE printf('Over %d steady steps the critical path averages %.2f ms (%.0f%% of the %.2f ms steps); ',
                        b.steps, b.path_ns / b.steps / 1e6, 100.0 * b.path_ns / nullif(b.step_ns, 0),
                        b.step_ns / b.steps / 1e6) END
       || printf('%.0f%% of it is %s%s%s',
              100.0 * b.class_ns / b.path_ns, replace(b.class, '_', ' '),
              CASE WHEN t.names IS NOT NULL THEN '; most of it from ' || t.names ELSE '' END,
              CASE WHEN b.lower_bound THEN '. The trace has no CUDA synchronization events, so host waits on the '
                   || 'GPU are unseen and the path may be longer (record with the profiler''s '
                   || 'experimental_config=_ExperimentalConfig(enable_cuda_sync_events=True))' ELSE '' END) AS evidence,
       -- without steps the advice speaks of the loop the trace holds, not of a step
       replace(CASE b.class
           WHEN 'cpu' THEN 'The host bounds the step and the GPU waits for it: cut Python and operator overhead '
                || '(torch.compile, fewer small ops, larger batches) and replay the step as a CUDA graph '
                || '(torch.compile mode="reduce-overhead" or torch.cuda.CUDAGraph).'
           WHEN 'data_loading' THEN 'The input pipeline bounds the step: more DataLoader workers (num_workers), '
                || 'pin_memory=True, prefetch_factor and persistent_workers, or preprocessing on the GPU.'
           WHEN 'launch_overhead' THEN 'Kernel launches bound the step: fuse small kernels (torch.compile) and '
                || 'launch the step as a CUDA graph to pay the launch cost once.'
           WHEN 'kernel_to_kernel' THEN 'Gaps between back-to-back kernels bound the step: CUDA graphs remove the '
                || 'per-kernel launch gap; fusing kernels removes kernels.'
           WHEN 'gpu_compute' THEN CASE WHEN coalesce(h.bound_by, 'gpu_compute') <> 'gpu_compute'
                THEN printf('The path runs mostly through GPU compute, but it covers %.0f%% of the step and the GPU is '
                            || 'idle %.0f%% of it: %s bounds the step (the headline; why the GPU waits). Then speed up '
                            || 'the kernels on the path.', 100.0 * b.path_ns / nullif(b.step_ns, 0), h.gpu_idle_pct,
                            replace(h.bound_by, '_', ' '))
                ELSE 'GPU compute bounds the step, as it should: speed up the kernels on the path '
                || '(bf16/fp16 on Tensor Cores, fused attention, better-shaped GEMMs); the host is not the limit.' END
           WHEN 'communication' THEN 'Communication bounds the step: overlap it with compute (DDP bucket_cap_mb, '
                || 'gradient accumulation with no_sync, FSDP prefetching) and send less (bf16 gradients, compression).'
           WHEN 'memcpy' THEN 'Memory copies bound the step: pinned host memory with non_blocking=True copies, '
                || 'fewer host round trips, and copies on a side stream overlapped with compute.'
           ELSE 'Host-device synchronizations bound the step: remove .item(), .cpu(), .tolist() and printing of '
                || 'tensors inside the step, or defer them to the end of the step.'
       END, 'the step', CASE WHEN b.pid IS NULL THEN 'the loop' ELSE 'the step' END) AS advice
FROM bound b
LEFT JOIN top t ON t.trace_id = b.trace_id AND t.pid IS NOT DISTINCT FROM b.pid AND t.class = b.class
LEFT JOIN first_step f ON f.trace_id = b.trace_id AND f.pid IS NOT DISTINCT FROM b.pid
LEFT JOIN headline h ON h.trace_id = b.trace_id AND h.pid = b.pid;
