-- run_members: which run each trace belongs to (a distributed run's rank files, rank_runs,
-- are one run; every other trace is a run of its own). The views over runs that need only
-- this read it rather than runs, whose steps make it slow to plan (DuckDB binds a view
-- again at every place a query names it).
--
-- depends: traces, rank_runs
--
-- @column trace_id Trace.
-- @column run_id   Run (rank_runs.run_id, else the trace id).
CREATE OR REPLACE VIEW run_members AS
SELECT t.trace_id, coalesce(r.run_id, t.trace_id) AS run_id
FROM traces t
LEFT JOIN (SELECT DISTINCT trace_id, run_id FROM rank_runs) r USING (trace_id);

-- runs: one row per run: a distributed run's rank files (rank_runs) count as one run,
-- every other trace is a run of its own. Per-rank averages make runs with different
-- numbers of ranks comparable; per-step figures make runs of different lengths
-- comparable (when both record steps).
--
-- depends: traces, run_members, kernels, steps, step_phases, temporal_breakdown
--
-- @column run_id             Run (rank_runs.run_id, else the trace id).
-- @column trace_ids          The run's traces, sorted.
-- @column first_file         File name of its first trace (label).
-- @column start_epoch_ns     Start on the Unix-epoch clock (NULL when the trace clock is relative).
-- @column ranks              Processes with GPU work.
-- @column steps_per_rank     Steps recorded per rank (0 when none).
-- @column median_step_ns     Median wall time of the steady steps (step_phases) over all ranks (ns; NULL without steps).
-- @column kernel_ns_per_rank Kernel time per rank (ns).
-- @column idle_pct           GPU idle share of the steady steps' wall time, all ranks; without steps, the
--                            mean over the ranks of the whole trace's idle share (temporal_breakdown) (%).
CREATE OR REPLACE VIEW runs AS
WITH member AS (
    SELECT t.trace_id, m.run_id, t.file_name, t.start_ns + t.clock_offset_ns AS start_epoch_ns
    FROM traces t JOIN run_members m USING (trace_id)
),
procs AS (
    SELECT m.run_id, count(*) AS ranks, avg(b.idle_pct) AS idle_pct
    FROM temporal_breakdown b JOIN member m USING (trace_id) GROUP BY m.run_id
),
kern AS (
    SELECT m.run_id, sum(k.duration_ns) AS kernel_ns FROM kernels k JOIN member m USING (trace_id) GROUP BY m.run_id
),
st AS (
    SELECT m.run_id, count(*) AS steps, median(s.wall_ns) FILTER (WHERE p.phase = 'steady') AS median_step_ns,
           100.0 * sum(s.gpu_idle_ns) FILTER (WHERE p.phase = 'steady')
               / nullif(sum(s.wall_ns) FILTER (WHERE p.phase = 'steady'), 0) AS steady_idle_pct
    FROM steps s
    JOIN (SELECT trace_id, pid, step_index, phase FROM step_phases) p USING (trace_id, pid, step_index)
    JOIN member m USING (trace_id) GROUP BY m.run_id
)
SELECT m.run_id, list_sort(list(m.trace_id)) AS trace_ids, min(m.file_name) AS first_file,
       min(m.start_epoch_ns) AS start_epoch_ns, any_value(p.ranks) AS ranks,
       coalesce(any_value(st.steps), 0) / greatest(any_value(p.ranks), 1) AS steps_per_rank,
       any_value(st.median_step_ns) AS median_step_ns,
       any_value(k.kernel_ns) / greatest(any_value(p.ranks), 1) AS kernel_ns_per_rank,
       coalesce(any_value(st.steady_idle_pct), any_value(p.idle_pct)) AS idle_pct
FROM member m
LEFT JOIN procs p USING (run_id)
LEFT JOIN kern k USING (run_id)
LEFT JOIN st USING (run_id)
GROUP BY m.run_id;

-- run_kernel_time: kernel time per run and kernel name, per rank, and per rank and step
-- when the run records steps: the figures runs are compared in.
--
-- depends: runs, kernels
--
-- @column run_id                  Run.
-- @column name                    Kernel name.
-- @column kernel_ns_per_rank      Kernel time over the run, per rank (ns).
-- @column kernel_ns_per_rank_step Kernel time per rank and step (ns); NULL when the run
--                                 records no steps.
-- @column kernels_per_rank        Kernels of that name run over the run, per rank.
CREATE OR REPLACE VIEW run_kernel_time AS
SELECT r.run_id, k.name,
       sum(k.duration_ns) / greatest(r.ranks, 1) AS kernel_ns_per_rank,
       CASE WHEN r.steps_per_rank > 0
            THEN sum(k.duration_ns) / greatest(r.ranks, 1) / r.steps_per_rank END AS kernel_ns_per_rank_step,
       count(*) / greatest(r.ranks, 1) AS kernels_per_rank
FROM runs r, unnest(r.trace_ids) AS u(trace_id)
JOIN kernels k ON k.trace_id = u.trace_id
GROUP BY r.run_id, k.name, r.ranks, r.steps_per_rank;

-- run_identity: what tells whether two runs are the same program (run_comparison pairs only
-- runs alike in all of it): the program's name, the GPU model, the rank, and its steps.
--
-- depends: runs, run_members, kernels, devices, traces
--
-- @column run_id           Run.
-- @column program          The first file's name, lower case, less its extensions, a leading tool
--                          and version tag ('torch-2.11_', 'nsys-2025.3.1_'), a trailing GPU tag
--                          ('_h100', '_h200x2', '_rtx4060ti'), rank and worker numbers
--                          ('rank3', 'worker0') and numbers of 4 digits or more (dates, timestamps);
--                          NULL when nothing is left ('rank0.pt.trace.json').
-- @column gpu_model        The GPU models its kernels ran on (devices.name, 'NVIDIA ' dropped), sorted
--                          and joined by ' + '; NULL when the trace names none.
-- @column ranks            Processes with GPU work (runs.ranks).
-- @column rank             The distributed rank of a run of one trace that says it is a rank
--                          (PyTorch distributedInfo); NULL otherwise (a whole run, or no rank).
-- @column kernels_per_step Kernels per rank and step (NULL without steps).
CREATE OR REPLACE VIEW run_identity AS
WITH run AS MATERIALIZED (SELECT * FROM runs),
member AS (SELECT run_id, trace_id FROM run_members),
gpu AS (
    SELECT m.run_id,
           string_agg(DISTINCT regexp_replace(nullif(d.name, ''), '^NVIDIA ', ''), ' + '
                      ORDER BY regexp_replace(nullif(d.name, ''), '^NVIDIA ', '')) AS gpu_model
    FROM (SELECT DISTINCT trace_id, device_id FROM kernels) k
    JOIN devices d USING (trace_id, device_id)
    JOIN member m USING (trace_id)
    GROUP BY m.run_id
),
one AS (
    SELECT m.run_id, CASE WHEN count(*) = 1 THEN any_value(t.rank) END AS rank
    FROM member m JOIN traces t USING (trace_id) GROUP BY m.run_id
),
launched AS (SELECT m.run_id, count(*) AS kernels FROM kernels k JOIN member m USING (trace_id) GROUP BY m.run_id)
SELECT r.run_id,
       nullif(trim(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
           lower(r.first_file),
           '(\.pt\.trace)?\.(json|sqlite|nsys-rep|qdrep)(\.gz)?$', ''),
           '^[a-z]+-[0-9][0-9.]*_', ''),
           '_[a-z]{1,4}[0-9]{1,4}[a-z]*(x[0-9]+)?(_large)?$', ''),
           '(rank|worker)[_-]?[0-9]+', '', 'g'),
           '[0-9]{4,}', '', 'g'), '._-'), '') AS program,
       g.gpu_model, r.ranks, o.rank,
       CASE WHEN r.steps_per_rank > 0 THEN l.kernels / greatest(r.ranks, 1) / r.steps_per_rank END
           AS kernels_per_step
FROM run r
LEFT JOIN gpu g USING (run_id)
LEFT JOIN one o USING (run_id)
LEFT JOIN launched l USING (run_id);

-- run_signature: a run's names, the sets run_comparison compares: its operators (PyTorch
-- cpu_ops) and CPU-side ranges (NVTX, user annotations), digits masked ('ProfilerStep#12' ->
-- 'ProfilerStep###'), as kind 'operators and ranges' (when it has any); and its kernel names,
-- as kind 'kernels'.
--
-- depends: run_members, kernels, cpu_ops, annotations
--
-- @column run_id Run.
-- @column kind   'operators and ranges', or 'kernels'.
-- @column name   A name, once per run.
CREATE OR REPLACE VIEW run_signature AS
WITH member AS (SELECT run_id, trace_id FROM run_members),
named AS (
    SELECT DISTINCT m.run_id, o.name FROM cpu_ops o JOIN member m USING (trace_id)
    UNION
    SELECT DISTINCT m.run_id, regexp_replace(a.name, '[0-9]', '#', 'g')
    FROM annotations a JOIN member m USING (trace_id) WHERE NOT coalesce(a.is_gpu, false)
)
SELECT run_id, 'operators and ranges' AS kind, name FROM named
UNION ALL
SELECT DISTINCT m.run_id, 'kernels', k.name FROM kernels k JOIN member m USING (trace_id);

-- run_comparison: each run next to the previous run of the same program. Two runs are the
-- same program when they ran on the same GPU model (run_identity.gpu_model; runs that name
-- none pair only with each other), with as many ranks, as the same rank when each is one rank
-- of a distributed run (never two ranks of one run), share enough of their names
-- (run_signature: their operators and ranges when both have some, else their kernels; Jaccard
-- similarity, shared / all names, >= 0.5 when their program names are equal, >= 0.9 when
-- they differ), and, when both record steps, launch
-- within 2x as many kernels per step. The previous run is the latest earlier one (by epoch
-- start, then file name) of that kind; runs with none are left out. Kernel time is compared
-- per rank and step when both runs record steps, else per rank over the run. `tracelake diff
-- A B` compares any two runs.
--
-- depends: runs, run_kernel_time, run_identity, run_signature
--
-- @column run_id                           Run.
-- @column previous_run_id                  The run it is compared with.
-- @column similarity                       Jaccard similarity of their names (run_signature) (0..1).
-- @column paired_because                   Why the two are the same program, in words: e.g. 'same
--                                          program name (gpt2-train), same GPU (H100 80GB HBM3),
--                                          97 % of operators and ranges shared, 412 and 409 kernels per step'.
-- @column median_step_ns                   Median step time of the run (ns).
-- @column previous_median_step_ns          Same for the previous run (ns).
-- @column step_change_pct                  (median_step_ns / previous_median_step_ns - 1) x 100.
-- @column compared_per                     'step' when both runs record steps, else 'run'.
-- @column kernel_ns_per_rank               Kernel time over the run, per rank (ns).
-- @column previous_kernel_ns_per_rank      Same for the previous run (ns).
-- @column kernel_ns_per_rank_step          Kernel time per rank and step (ns); NULL unless
--                                          compared_per = 'step'.
-- @column previous_kernel_ns_per_rank_step Same for the previous run (ns).
-- @column kernel_change_pct                Change of kernel time in the compared unit
--                                          (per step or per run) x 100; > 0: slower.
CREATE OR REPLACE VIEW run_comparison AS
WITH run AS MATERIALIZED (SELECT * FROM runs),
signature AS MATERIALIZED (SELECT * FROM run_signature),
identity AS MATERIALIZED (SELECT * FROM run_identity),
sizes AS (SELECT run_id, kind, count(*) AS n FROM signature GROUP BY ALL),
shared AS (
    SELECT a.run_id AS run_a, b.run_id AS run_b, a.kind, count(*) AS n_shared
    FROM signature a JOIN signature b ON a.kind = b.kind AND a.name = b.name AND a.run_id <> b.run_id
    GROUP BY ALL
),
ordered AS (
    SELECT run_id, row_number() OVER (ORDER BY start_epoch_ns NULLS LAST, first_file, run_id) AS seq FROM run
),
with_ops AS (SELECT run_id FROM sizes WHERE kind = 'operators and ranges'),
pairs AS (
    SELECT s.run_a AS run_id, s.run_b AS previous_run_id, s.kind,
           s.n_shared / (sa.n + sb.n - s.n_shared) AS similarity, oa.seq, ob.seq AS previous_seq,
           ia.program, ib.program AS previous_program, ia.gpu_model, ia.ranks, ia.rank,
           ia.kernels_per_step, ib.kernels_per_step AS previous_kernels_per_step
    FROM shared s
    JOIN sizes sa ON sa.run_id = s.run_a AND sa.kind = s.kind
    JOIN sizes sb ON sb.run_id = s.run_b AND sb.kind = s.kind
    JOIN ordered oa ON oa.run_id = s.run_a JOIN ordered ob ON ob.run_id = s.run_b
    JOIN identity ia ON ia.run_id = s.run_a JOIN identity ib ON ib.run_id = s.run_b
    WHERE ob.seq < oa.seq
      AND (s.kind = 'operators and ranges'
           OR s.run_a NOT IN (SELECT run_id FROM with_ops) OR s.run_b NOT IN (SELECT run_id FROM with_ops))
      AND ia.gpu_model IS NOT DISTINCT FROM ib.gpu_model
      AND ia.ranks IS NOT DISTINCT FROM ib.ranks AND ia.rank IS NOT DISTINCT FROM ib.rank
      AND s.n_shared / (sa.n + sb.n - s.n_shared) >= CASE WHEN ia.program = ib.program THEN 0.5 ELSE 0.9 END
      AND coalesce(greatest(ia.kernels_per_step, ib.kernels_per_step)
                   <= 2 * least(ia.kernels_per_step, ib.kernels_per_step), true)
),
chosen AS (
    SELECT * FROM pairs QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY previous_seq DESC) = 1
),
compared AS (
    SELECT c.run_id, c.previous_run_id, c.similarity,
           concat_ws(', ',
                     CASE WHEN c.program = c.previous_program THEN 'same program name (' || c.program || ')'
                          ELSE 'program names differ (' || coalesce(c.program, '–') || ', '
                               || coalesce(c.previous_program, '–') || ')' END,
                     coalesce('same GPU (' || c.gpu_model || ')', 'GPU model recorded in neither'),
                     CASE WHEN c.rank IS NOT NULL THEN 'both rank ' || c.rank
                          WHEN c.ranks > 1 THEN c.ranks || ' ranks each' END,
                     printf('%d %% of %s shared', floor(100 * c.similarity)::INTEGER, c.kind),
                     CASE WHEN c.kernels_per_step IS NOT NULL AND c.previous_kernels_per_step IS NOT NULL
                          THEN printf('%d and %d kernels per step', round(c.kernels_per_step)::BIGINT,
                                      round(c.previous_kernels_per_step)::BIGINT) END) AS paired_because,
           a.median_step_ns, b.median_step_ns AS previous_median_step_ns,
           CASE WHEN a.steps_per_rank > 0 AND b.steps_per_rank > 0 THEN 'step' ELSE 'run' END AS compared_per,
           a.kernel_ns_per_rank, b.kernel_ns_per_rank AS previous_kernel_ns_per_rank,
           CASE WHEN compared_per = 'step' THEN a.kernel_ns_per_rank / a.steps_per_rank END
               AS kernel_ns_per_rank_step,
           CASE WHEN compared_per = 'step' THEN b.kernel_ns_per_rank / b.steps_per_rank END
               AS previous_kernel_ns_per_rank_step
    FROM chosen c
    JOIN run a ON a.run_id = c.run_id
    JOIN run b ON b.run_id = c.previous_run_id
)
SELECT run_id, previous_run_id, similarity, paired_because, median_step_ns, previous_median_step_ns,
       100.0 * (median_step_ns / previous_median_step_ns - 1) AS step_change_pct,
       compared_per, kernel_ns_per_rank, previous_kernel_ns_per_rank,
       kernel_ns_per_rank_step, previous_kernel_ns_per_rank_step,
       100.0 * (coalesce(kernel_ns_per_rank_step / previous_kernel_ns_per_rank_step,
                         kernel_ns_per_rank / previous_kernel_ns_per_rank) - 1) AS kernel_change_pct
FROM compared;

-- run_kernel_changes: per compared pair of runs (run_comparison), each kernel's time in
-- both runs, per rank and (when compared per step) per rank and step; kernels found in
-- one run only count as 0 in the other.
--
-- depends: run_comparison, run_kernel_time
--
-- @column run_id                           Run.
-- @column previous_run_id                  The run it is compared with.
-- @column name                             Kernel name.
-- @column compared_per                     As in run_comparison: 'step' or 'run'.
-- @column kernel_ns_per_rank               Kernel time over the run, per rank (ns).
-- @column previous_kernel_ns_per_rank      Same in the previous run (ns).
-- @column delta_ns_per_rank                kernel_ns_per_rank - previous_kernel_ns_per_rank (ns; > 0: slower).
-- @column kernel_ns_per_rank_step          Kernel time per rank and step (ns); NULL unless
--                                          compared_per = 'step'.
-- @column previous_kernel_ns_per_rank_step Same in the previous run (ns).
-- @column delta_ns_per_rank_step           kernel_ns_per_rank_step - previous_kernel_ns_per_rank_step (ns).
-- @column change_pct                       Change in the compared unit x 100 (NULL when new).
CREATE OR REPLACE VIEW run_kernel_changes AS
WITH sides AS (
    SELECT c.run_id, c.previous_run_id, c.compared_per, k.run_id AS side, k.name,
           k.kernel_ns_per_rank,
           CASE WHEN c.compared_per = 'step' THEN k.kernel_ns_per_rank_step END AS kernel_ns_per_rank_step
    FROM run_comparison c
    JOIN run_kernel_time k ON k.run_id IN (c.run_id, c.previous_run_id)
),
paired AS (
    SELECT run_id, previous_run_id, name, compared_per,
           coalesce(sum(kernel_ns_per_rank) FILTER (WHERE side = run_id), 0) AS kernel_ns_per_rank,
           coalesce(sum(kernel_ns_per_rank) FILTER (WHERE side = previous_run_id), 0)
               AS previous_kernel_ns_per_rank,
           CASE WHEN compared_per = 'step'
                THEN coalesce(sum(kernel_ns_per_rank_step) FILTER (WHERE side = run_id), 0) END
               AS kernel_ns_per_rank_step,
           CASE WHEN compared_per = 'step'
                THEN coalesce(sum(kernel_ns_per_rank_step) FILTER (WHERE side = previous_run_id), 0) END
               AS previous_kernel_ns_per_rank_step
    FROM sides
    GROUP BY run_id, previous_run_id, name, compared_per
)
SELECT run_id, previous_run_id, name, compared_per,
       kernel_ns_per_rank, previous_kernel_ns_per_rank,
       kernel_ns_per_rank - previous_kernel_ns_per_rank AS delta_ns_per_rank,
       kernel_ns_per_rank_step, previous_kernel_ns_per_rank_step,
       kernel_ns_per_rank_step - previous_kernel_ns_per_rank_step AS delta_ns_per_rank_step,
       100.0 * (coalesce(kernel_ns_per_rank_step / nullif(previous_kernel_ns_per_rank_step, 0),
                         kernel_ns_per_rank / nullif(previous_kernel_ns_per_rank, 0)) - 1) AS change_pct
FROM paired;
