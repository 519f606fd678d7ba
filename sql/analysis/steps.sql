-- steps: one row per iteration (a training step, an inference request or decode
-- iteration), with what the GPU did during it: the GPU operations of the same process,
-- clipped to the step's time window, split by class. The window is what the iteration
-- costs, not only the host's range: where the host runs ahead of the GPU (a loop without
-- syncs) its range closes long before the GPU has done the step's work, so the window
-- moves onto the GPU's timeline. Each GPU operation belongs to the step whose host range
-- holds its launch (the API call with its correlation id; a graph replay's operations
-- share one), else its own start. Per process, in step order:
--   start = max(host start, min(prev_end, gpu_first)), kept monotonic (running max), where
--   prev_end is the latest end of GPU work launched before the host start (none: the GPU
--   was idle, prev_end = host start) and gpu_first the first start of the step's own GPU
--   work (none: ignored);
--   end = the next step's start when that start is GPU-defined (the GPU was still busy
--   with this step), else max(host end, end of the step's own GPU work), capped at the
--   next step's start.
-- A loop that syncs each step keeps its host ranges (the GPU has drained when the host
-- opens the next range); a GPU-bound loop gets windows one GPU period long. Steps of
-- the 'periodicity' rule are GPU windows already and are kept as found. All the processes of one run (the
-- rank files of a distributed run, rank_runs; else the trace) take their steps from one
-- rule (step_rule says which):
--   1. the first rule of step_rules that matches at least twice in a process of the run;
--   2. else, where a rule matched once (one ProfilerStep, `schedule(active=1)`), that
--      range is the step, unless every process of the run is periodic: its GPU work inside
--      the range repeats with 3+ steady periods (gpu_periods) and the kernels that start
--      within those periods hold at least half of the kernel time in the range (an
--      inference loop inside one ProfilerStep); then the periods are the steps. A serving
--      engine's iteration ('vllm', 'sglang') that matched once stays the step: periods
--      inside one decode iteration are layers, not iterations;
--   3. else (no markers) the periods, when every process of the run is periodic (the same
--      test over all its kernels); else the run has no steps.
-- The kernels counted are those gpu_periods counts ('replay' and 'eager', unless the
-- process ran no others). The rules:
--   'profiler_step'   ranges named 'ProfilerStep#12', 'step 3', 'step_3';
--   'vllm'            vLLM's per-iteration range 'execute_context_N(T)_generation_M(T)' or
--                     'execute_I_context_N(...)_generation_M(...)' (v1 GPU worker), or
--                     'execute_model' ranges (older engines);
--   'sglang'          SGLang's scheduler iterations: its ranges 'step[DECODE bs=32]',
--                     'step[EXTEND bs=2 toks=107]' (also PREFILL, MIXED, IDLE); in a process
--                     without them, the Python frames of 'sglang/srt/managers/scheduler.py(N):
--                     run_batch', or of '_run_batch_inner' where no run_batch frame encloses it
--                     (older builds record no per-iteration range; their profiler records
--                     Python stacks by default);
--   'record_function' plain record_function / NVTX loops: 'iteration', 'request_3',
--                     'iteration 7', 'iter#2', 'decode_5', 'prefill 1', 'generate_0',
--                     'forward_4', 'infer 9', 'inference_2', 'batch_11', 'token 3' (the
--                     word, optionally a separator ' _#:-' and a number);
--   'periodicity'     the steady-state periods of the GPU work (gpu_periods): the longest
--                     run of equal intervals between executions of the kernel that runs
--                     once per iteration, which leaves out warm-up and graph capture.
-- (patterns: step_rule_pattern)
-- steps_matching(pattern): the same for the CPU-side ranges whose name matches the
-- regular expression `pattern` (step_rule 'pattern').
-- steps_over(pattern): both in one macro (pattern NULL: the rules; steps and
-- steps_matching read it).
--
-- depends: nvtx_ranges, gpu_op_class, api, cpu_ops, traces, python_frames, gpu_periods_of, gpu_op_phases,
--          intervals_union_ns, step_rule_pattern, rank_runs
-- materialize: per trace: step_windows, steps
--
-- @column trace_id          Trace.
-- @column rank              Distributed rank (NULL when unknown).
-- @column pid               Process.
-- @column step              Range name (for 'periodicity': 'period N').
-- @column step_index        Order of the step in its process (0 = first).
-- @column start_ns          Step start (ns): the host range's start, or later where the GPU
--                           was still busy with earlier steps (see above).
-- @column end_ns            Step end (ns).
-- @column wall_ns           end_ns - start_ns: the step time.
-- @column host_start_ns     Start of the step's range on the host (ns; NULL for 'periodicity').
-- @column host_end_ns       End of the step's range on the host (ns; NULL for 'periodicity').
-- @column host_wall_ns      host_end_ns - host_start_ns.
-- @column step_time_basis   What defined start_ns: 'host' (the host range's start) or 'gpu'
--                           (the GPU's work; always for 'periodicity').
-- @column gpu_busy_ns       Time in the step with any GPU operation running (ns).
-- @column gpu_idle_ns       wall_ns - gpu_busy_ns.
-- @column gpu_idle_pct      gpu_idle_ns / wall_ns x 100.
-- @column compute_ns        Time with compute kernels running (ns).
-- @column communication_ns  Time with communication kernels running (ns).
-- @column memcpy_ns         Time with memcpy or memset running (ns).
-- @column dataloader_ns     Time in DataLoader iteration on the CPU (PyTorch
--                           'enumerate(DataLoader)#...__next__' ops) within the host range (ns).
-- @column step_rule         Rule that found the step: 'profiler_step', 'vllm', 'sglang',
--                           'record_function', 'periodicity' or 'pattern'.

-- step_rules: the step rules in the order they are tried (step_rule_pattern(rule): the
-- pattern of one rule).
--
-- @column priority  Order (1 = tried first).
-- @column rule      Rule name (steps.step_rule).
-- @column source    'range' (annotations and NVTX ranges), 'python' (Python frames) or both
--                   ('range, python').
-- @column pattern   Regular expression, case-insensitive, on the range name (NVTX domain
--                   prefix removed) or the frame label.
-- @column meaning   Which tool writes such markers.

-- step_windows: the step windows before measurement: per process, the matches of the
-- rule chosen as above, or its periodic windows.
--
-- @column step_key  Key of the window within the trace and process (unique).

CREATE OR REPLACE VIEW step_rules AS
SELECT priority, rule, source, step_rule_pattern(rule) AS pattern, meaning FROM (VALUES
    (1, 'profiler_step', 'range', 'torch.profiler schedule steps (prof.step()); training loops'),
    (2, 'vllm', 'range', 'vLLM engine iterations (v1 GPU worker profile annotation; older execute_model)'),
    (3, 'sglang', 'range, python', 'SGLang scheduler iterations (step[DECODE bs=N] ranges; else the Python stacks, on by default in its profiler)'),
    (4, 'record_function', 'range', 'plain record_function / NVTX loops, one numbered range per request or iteration')
) AS r(priority, rule, source, meaning);

CREATE OR REPLACE VIEW step_windows AS
WITH named AS (
    SELECT trace_id, pid, range, start_ns, end_ns, annotation_id, regexp_replace(range, '^[^:]*:', '') AS name
    FROM nvtx_ranges
),
ranges AS (
    SELECT trace_id, pid, range AS step, start_ns, end_ns, 'a' || annotation_id AS step_key,
           CASE WHEN regexp_matches(name, step_rule_pattern('profiler_step'), 'i') THEN 'profiler_step'
                WHEN regexp_matches(name, step_rule_pattern('vllm'), 'i') THEN 'vllm'
                WHEN regexp_matches(name, step_rule_pattern('sglang'), 'i') THEN 'sglang'
                WHEN regexp_matches(name, step_rule_pattern('record_function'), 'i') THEN 'record_function'
           END AS rule
    FROM named
),
frames AS (
    -- SGLang's scheduler frames, in processes without its step[...] ranges; the outermost frame
    -- of an iteration (run_batch, or _run_batch_inner where no run_batch encloses it)
    SELECT trace_id, pid, tid, name, start_ns, end_ns, frame_id, function
    FROM python_frames
    WHERE function IN ('run_batch', '_run_batch_inner') AND regexp_matches(name, step_rule_pattern('sglang'), 'i')
      AND (trace_id, pid) NOT IN (SELECT (trace_id, pid) FROM ranges WHERE rule = 'sglang')
),
marker_windows AS (
    SELECT * FROM ranges
    UNION ALL
    SELECT f.trace_id, f.pid, f.name, f.start_ns, f.end_ns, 'f' || f.frame_id, 'sglang'
    FROM frames f
    WHERE f.function = 'run_batch'
       OR NOT EXISTS (SELECT 1 FROM frames o WHERE o.function = 'run_batch' AND o.trace_id = f.trace_id
                      AND o.pid = f.pid AND o.tid = f.tid AND o.start_ns <= f.start_ns AND o.end_ns >= f.end_ns)
),
ruled AS (
    SELECT r.*, u.priority FROM marker_windows r JOIN step_rules u USING (rule)
),
runs AS (
    SELECT t.trace_id, coalesce(r.run_id, t.trace_id) AS run_id
    FROM traces t
    LEFT JOIN (SELECT trace_id, any_value(run_id) AS run_id FROM rank_runs GROUP BY ALL) r USING (trace_id)
),
matches AS (
    SELECT u.run_id, r.priority, max(r.n) AS per_process
    FROM (SELECT trace_id, pid, priority, count(*) AS n FROM ruled GROUP BY ALL) r JOIN runs u USING (trace_id)
    GROUP BY ALL
),
marked AS (
    -- per run, the rule of its markers: the first that repeats in a process, else the first
    -- that matched once
    SELECT run_id, arg_min(priority, (per_process < 2, priority)) AS priority, max(per_process) >= 2 AS repeats
    FROM matches GROUP BY ALL
),
unrepeated AS (
    -- traces whose run has no rule repeating in a process, nor a serving engine's single
    -- iteration: the only ones whose periodicity matters
    SELECT trace_id, run_id FROM runs
    WHERE run_id NOT IN (SELECT run_id FROM marked JOIN step_rules USING (priority)
                         WHERE repeats OR rule IN ('vllm', 'sglang'))
),
single AS (
    -- the range of the rule that matched once, per process
    SELECT r.trace_id, r.pid, r.start_ns, r.end_ns
    FROM ruled r JOIN unrepeated u USING (trace_id) JOIN marked m USING (run_id, priority)
),
kernels AS (
    -- the kernels inside the single range (all of them in a process without one)
    SELECT p.trace_id, p.pid, p.name, p.start_ns, p.end_ns - p.start_ns AS duration_ns, p.phase
    FROM gpu_op_phases p
    SEMI JOIN unrepeated u ON u.trace_id = p.trace_id
    LEFT JOIN single s ON s.trace_id = p.trace_id AND s.pid = p.pid
    WHERE p.category = 'kernel' AND (s.pid IS NULL OR p.start_ns BETWEEN s.start_ns AND s.end_ns)
),
kernel_phases AS (
    -- those gpu_periods counts: 'replay' and 'eager' ones, unless the process ran no others
    SELECT k.* FROM kernels k
    JOIN (SELECT trace_id, pid, bool_or(phase IN ('replay', 'eager')) AS has_steady FROM kernels GROUP BY ALL) h
      USING (trace_id, pid)
    WHERE NOT h.has_steady OR k.phase IN ('replay', 'eager')
),
periods AS MATERIALIZED (
    SELECT * FROM gpu_periods_of(kernel_phases)
),
periodic AS (
    -- processes with 3+ periods whose kernels hold at least half of the kernel time
    SELECT k.trace_id, k.pid
    FROM kernel_phases k
    JOIN (SELECT trace_id, pid, min(start_ns) AS first_ns, max(end_ns) AS last_ns FROM periods
          GROUP BY ALL HAVING count(*) >= 3) p USING (trace_id, pid)
    GROUP BY ALL
    HAVING sum(k.duration_ns) FILTER (WHERE k.start_ns >= p.first_ns AND k.start_ns < p.last_ns)
           >= 0.5 * sum(k.duration_ns)
),
periodic_runs AS (
    -- runs whose every process with kernels is periodic
    SELECT u.run_id
    FROM unrepeated u
    JOIN (SELECT DISTINCT trace_id, pid FROM kernel_phases) k USING (trace_id)
    LEFT JOIN periodic p USING (trace_id, pid)
    GROUP BY ALL
    HAVING bool_and(p.pid IS NOT NULL)
),
chosen AS (
    -- the marker rule of each run, unless it matched once and the run is periodic
    SELECT run_id, priority FROM marked
    WHERE run_id NOT IN (SELECT run_id FROM periodic_runs)
)
SELECT r.trace_id, r.pid, r.step, r.start_ns, r.end_ns, r.rule AS step_rule, r.step_key
FROM ruled r JOIN runs u USING (trace_id) JOIN chosen c USING (run_id, priority)
UNION ALL
SELECT p.trace_id, p.pid, 'period ' || p.period_index, p.start_ns, p.end_ns, 'periodicity', 'p' || p.period_index
FROM periods p JOIN runs u USING (trace_id)
WHERE u.run_id IN (SELECT run_id FROM periodic_runs);

CREATE OR REPLACE MACRO steps_over(pattern) AS TABLE
WITH w AS (
    SELECT trace_id, pid, range AS step, start_ns, end_ns, 'pattern' AS step_rule,
           'a' || annotation_id AS step_key
    FROM nvtx_ranges
    WHERE pattern IS NOT NULL AND regexp_matches(regexp_replace(range, '^[^:]*:', ''), pattern, 'i')
    UNION ALL
    SELECT trace_id, pid, step, start_ns, end_ns, step_rule, step_key FROM step_windows WHERE pattern IS NULL
),
h AS (
    SELECT *, row_number() OVER (PARTITION BY trace_id, pid ORDER BY start_ns, step_key) - 1 AS step_index
    FROM w
),
launched AS (
    -- the GPU operations of processes with steps, each with the host time that places it in
    -- a step: its launch call's start, else its own start
    SELECT o.trace_id, o.pid, o.start_ns, o.end_ns, coalesce(a.start_ns, o.start_ns) AS launch_ns
    FROM gpu_op_class o
    SEMI JOIN (SELECT DISTINCT trace_id, pid FROM h WHERE step_rule <> 'periodicity') p
           ON p.trace_id = o.trace_id AND p.pid = o.pid
    LEFT JOIN api a ON a.trace_id = o.trace_id AND a.pid = o.pid AND a.correlation_id = o.correlation_id
),
placed AS (
    -- the latest step whose host range started at or before the launch (NULL: before the
    -- first step), and whether the range still held it
    SELECT l.trace_id, l.pid, l.start_ns, l.end_ns, h.step_key, l.launch_ns < h.end_ns AS in_range
    FROM launched l
    ASOF LEFT JOIN h ON h.trace_id = l.trace_id AND h.pid = l.pid AND l.launch_ns >= h.start_ns
),
own AS (
    SELECT trace_id, pid, step_key,
           min(start_ns) FILTER (WHERE in_range) AS gpu_first_ns,
           max(end_ns) FILTER (WHERE in_range) AS gpu_last_ns,
           max(end_ns) AS launched_last_ns  -- launched from this host start to the next
    FROM placed GROUP BY ALL
),
prior AS (
    -- the latest end of GPU work launched before a step's host start
    SELECT h.*, o.gpu_first_ns, o.gpu_last_ns,
           greatest(b.last_ns, max(o.launched_last_ns) OVER (
               PARTITION BY h.trace_id, h.pid ORDER BY h.step_index
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)) AS prev_end_ns
    FROM h
    LEFT JOIN own o ON o.trace_id = h.trace_id AND o.pid = h.pid AND o.step_key = h.step_key
    LEFT JOIN (SELECT trace_id, pid, max(end_ns) AS last_ns FROM placed WHERE step_key IS NULL GROUP BY ALL) b
           ON b.trace_id = h.trace_id AND b.pid = h.pid
),
started AS (
    SELECT *, max(CASE WHEN step_rule = 'periodicity' THEN start_ns
                       ELSE greatest(start_ns, least(coalesce(prev_end_ns, start_ns), gpu_first_ns)) END) OVER (
                  PARTITION BY trace_id, pid ORDER BY step_index ROWS UNBOUNDED PRECEDING) AS eff_start_ns
    FROM prior
),
based AS (
    SELECT *, CASE WHEN step_rule = 'periodicity' OR eff_start_ns > start_ns THEN 'gpu' ELSE 'host' END
                  AS step_time_basis
    FROM started
),
s AS (
    SELECT trace_id, pid, step, step_rule, step_key, step_index, step_time_basis,
           CASE WHEN step_rule <> 'periodicity' THEN start_ns END AS host_start_ns,
           CASE WHEN step_rule <> 'periodicity' THEN end_ns END AS host_end_ns,
           eff_start_ns AS start_ns,
           CASE WHEN step_rule = 'periodicity' THEN end_ns
                WHEN lead(step_time_basis) OVER w = 'gpu' THEN lead(eff_start_ns) OVER w
                ELSE least(lead(eff_start_ns) OVER w, greatest(end_ns, gpu_last_ns, eff_start_ns))
           END AS end_ns
    FROM based
    WINDOW w AS (PARTITION BY trace_id, pid ORDER BY step_index)
),
clipped AS (
    SELECT s.trace_id, s.pid, s.step_key, o.op_class,
           greatest(o.start_ns, s.start_ns) AS start_ns, least(o.end_ns, s.end_ns) AS end_ns
    FROM s
    JOIN gpu_op_class o ON o.trace_id = s.trace_id AND o.pid = s.pid
                       AND o.start_ns < s.end_ns AND o.end_ns > s.start_ns
),
sets AS (
    SELECT *, 'all' AS class_set FROM clipped
    UNION ALL SELECT *, 'compute' FROM clipped WHERE op_class = 'compute'
    UNION ALL SELECT *, 'communication' FROM clipped WHERE op_class = 'communication'
    UNION ALL SELECT *, 'memory' FROM clipped WHERE op_class IN ('memcpy', 'memset')
),
laned AS (
    SELECT {'trace_id': trace_id, 'pid': pid, 'step_key': step_key, 'class_set': class_set} AS lane,
           start_ns, end_ns
    FROM sets
),
busy AS (
    SELECT lane.trace_id, lane.pid, lane.step_key, lane.class_set, covered_ns AS ns
    FROM intervals_union_ns(laned)
),
loader AS (
    SELECT s.trace_id, s.pid, s.step_key,
           sum(least(c.end_ns, s.cpu_end_ns) - greatest(c.start_ns, s.cpu_start_ns)) AS ns
    FROM (SELECT *, coalesce(host_start_ns, start_ns) AS cpu_start_ns, coalesce(host_end_ns, end_ns) AS cpu_end_ns
          FROM s) s
    JOIN cpu_ops c ON c.trace_id = s.trace_id AND c.pid = s.pid
                  AND c.start_ns < s.cpu_end_ns AND c.end_ns > s.cpu_start_ns
    WHERE c.name LIKE 'enumerate(DataLoader)#%' OR c.name LIKE 'enumerate(DataPipe)#%'
    GROUP BY ALL
)
SELECT s.trace_id, t.rank, s.pid, s.step, s.step_index, s.start_ns, s.end_ns,
       s.end_ns - s.start_ns AS wall_ns,
       CAST(coalesce(b_all.ns, 0) AS BIGINT) AS gpu_busy_ns,
       CAST(s.end_ns - s.start_ns - coalesce(b_all.ns, 0) AS BIGINT) AS gpu_idle_ns,
       100.0 * (s.end_ns - s.start_ns - coalesce(b_all.ns, 0)) / nullif(s.end_ns - s.start_ns, 0) AS gpu_idle_pct,
       CAST(coalesce(b_comp.ns, 0) AS BIGINT) AS compute_ns,
       CAST(coalesce(b_comm.ns, 0) AS BIGINT) AS communication_ns,
       CAST(coalesce(b_mem.ns, 0) AS BIGINT) AS memcpy_ns,
       CAST(coalesce(l.ns, 0) AS BIGINT) AS dataloader_ns,
       s.step_rule, s.host_start_ns, s.host_end_ns, s.host_end_ns - s.host_start_ns AS host_wall_ns,
       s.step_time_basis
FROM s
JOIN traces t USING (trace_id)
LEFT JOIN busy b_all ON b_all.trace_id = s.trace_id AND b_all.pid = s.pid
                    AND b_all.step_key = s.step_key AND b_all.class_set = 'all'
LEFT JOIN busy b_comp ON b_comp.trace_id = s.trace_id AND b_comp.pid = s.pid
                     AND b_comp.step_key = s.step_key AND b_comp.class_set = 'compute'
LEFT JOIN busy b_comm ON b_comm.trace_id = s.trace_id AND b_comm.pid = s.pid
                     AND b_comm.step_key = s.step_key AND b_comm.class_set = 'communication'
LEFT JOIN busy b_mem ON b_mem.trace_id = s.trace_id AND b_mem.pid = s.pid
                    AND b_mem.step_key = s.step_key AND b_mem.class_set = 'memory'
LEFT JOIN loader l ON l.trace_id = s.trace_id AND l.pid = s.pid AND l.step_key = s.step_key;

CREATE OR REPLACE MACRO steps_matching(pattern) AS TABLE
SELECT * FROM steps_over(pattern);

CREATE OR REPLACE VIEW steps AS
SELECT * FROM steps_over(NULL);
