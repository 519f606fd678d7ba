-- fsdp_prefetch: FSDP2's all-gathers, one per unit (layer) and pass, against the compute
-- that needs their parameters: when each all-gather ended, and when the compute stream
-- could have started the first operation that reads its output (FSDP's copy-out) had the
-- parameters been there. The compute stream waits for the all-gather's event before the
-- copy-out, so an all-gather that ends after that moment kept the compute stream waiting
-- (a late prefetch): wait_ns. The moment is the later of the copy-out kernel's launch
-- and the end of the stream's previous operation: a stream that sat idle for the host
-- (its launches late) did not wait for the all-gather, however long it ran. Read from
-- FSDP2's ranges ('FSDP::all_gather (<unit>)' around the all-gather's launch,
-- 'FSDP::all_gather_copy_out (<unit>)' around the copy-out's, inside 'FSDP::pre_forward',
-- 'FSDP::pre_backward' or an explicit or implicit 'FSDP::forward_prefetch for' /
-- 'FSDP::backward_prefetch for'); FSDP1 and traces without them have no rows. One row per
-- all-gather call with an FSDP unit.
--
-- depends: collectives, annotations, api_calls, gpu_op_class, steps, collective_instance_ranks
--
-- @column run_id            Distributed run (collectives.run_id).
-- @column trace_id          Trace.
-- @column rank              Rank (NULL when unknown).
-- @column pid               Process.
-- @column step              Step whose host range the all-gather was launched in (NULL outside steps).
-- @column step_index        Its steps.step_index.
-- @column call_index        collectives.call_index of the all-gather.
-- @column unit              The FSDP unit it gathers (the module's name in FSDP's ranges, e.g. '3').
-- @column pass              'forward' or 'backward': the pass it gathers for.
-- @column prefetched        True when issued ahead by a prefetch ('FSDP::forward_prefetch for' /
--                           'FSDP::backward_prefetch for'), false when by the unit's own pre-forward or
--                           pre-backward.
-- @column issued_ns         Launch of the all-gather on the host (ns, trace clock).
-- @column start_ns          All-gather kernel start (ns).
-- @column end_ns            All-gather kernel end (ns).
-- @column duration_ns       end_ns - start_ns (ns): transfer and any wait for the other ranks.
-- @column peer_wait_ns      Part of duration_ns spent waiting for the rank that arrived last
--                           (collective_instance_ranks.wait_ns; NULL when not matched across ranks) (ns).
-- @column consumer_stream_id Stream of the copy-out: the compute stream.
-- @column ready_ns          When the compute stream could have run the copy-out: the later of its launch
--                           and the end of the stream's previous operation (ns).
-- @column consumer_start_ns Copy-out kernel start (ns).
-- @column wait_ns           How long the compute stream waited for the all-gather: the part of
--                           ready_ns .. consumer_start_ns before the all-gather ended (ns; 0 when it ended in time).
-- @column lead_ns           ready_ns - end_ns: how far ahead of its use the all-gather finished (ns;
--                           negative when late).
-- @column is_late           wait_ns >= 10 us (a kernel launch's latency: shorter waits are noise).
CREATE OR REPLACE VIEW fsdp_prefetch AS
WITH fsdp_traces AS (
    SELECT DISTINCT trace_id FROM annotations WHERE NOT is_gpu AND starts_with(name, 'FSDP::all_gather (')
),
ranges AS (
    SELECT a.trace_id, a.pid, a.tid, a.start_ns, a.end_ns, a.name
    FROM annotations a
    WHERE NOT a.is_gpu AND a.trace_id IN (SELECT trace_id FROM fsdp_traces)
      AND regexp_matches(a.name, '^FSDP::(all_gather|all_gather_copy_out) \(|^FSDP::(pre_forward|pre_backward|root_pre_forward)|^FSDP::(forward|backward)_prefetch for ')
),
gathers AS (
    SELECT c.run_id, c.trace_id, c.rank, c.pid, c.tid, c.call_index, c.launch_start_ns, c.start_ns, c.end_ns,
           c.device_id, c.stream_id, r.start_ns AS range_start_ns,
           regexp_extract(r.name, '^FSDP::all_gather \((.*)\)$', 1) AS unit
    FROM collectives c
    JOIN ranges r ON r.trace_id = c.trace_id AND r.pid = c.pid AND r.tid = c.tid
                 AND r.start_ns <= c.launch_start_ns AND r.end_ns >= c.launch_start_ns
                 AND starts_with(r.name, 'FSDP::all_gather (')
    WHERE c.operation = 'all_gather' AND c.trace_id IN (SELECT trace_id FROM fsdp_traces)
),
issued_by AS (
    -- the innermost pre-forward / pre-backward / prefetch range around the launch: which pass, and
    -- whether a prefetch issued it
    -- (of ranges that start in the same ns, the one that ends first, then the first name)
    SELECT g.trace_id, g.pid, g.call_index, arg_min(r.name, (-r.start_ns, r.end_ns, r.name)) AS issuer
    FROM gathers g
    JOIN ranges r ON r.trace_id = g.trace_id AND r.pid = g.pid AND r.tid = g.tid
                 AND r.start_ns <= g.launch_start_ns AND r.end_ns >= g.launch_start_ns
                 AND regexp_matches(r.name, '^FSDP::(pre_forward|pre_backward|root_pre_forward)|^FSDP::(forward|backward)_prefetch for ')
    GROUP BY ALL
),
copy_outs AS (
    SELECT trace_id, pid, tid, start_ns, end_ns, regexp_extract(name, '^FSDP::all_gather_copy_out \((.*)\)$', 1) AS unit
    FROM ranges WHERE starts_with(name, 'FSDP::all_gather_copy_out (')
),
paired AS (
    -- the unit's first copy-out after its all-gather was issued
    SELECT g.trace_id, g.pid, g.call_index, o.tid AS copy_tid, o.start_ns AS copy_start_ns, o.end_ns AS copy_end_ns
    FROM gathers g
    ASOF JOIN copy_outs o ON o.trace_id = g.trace_id AND o.pid = g.pid AND o.unit = g.unit
                         AND o.start_ns >= g.range_start_ns
),
stream_ops AS (
    SELECT trace_id, pid, device_id, stream_id, start_ns, correlation_id,
           max(end_ns) OVER (PARTITION BY trace_id, device_id, stream_id ORDER BY start_ns, end_ns
                             ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS previous_end_ns
    FROM gpu_op_class
    WHERE trace_id IN (SELECT trace_id FROM fsdp_traces)
),
consumers AS (
    SELECT p.trace_id, p.pid, p.call_index, o.stream_id, o.start_ns,
           greatest(a.start_ns, coalesce(o.previous_end_ns, a.start_ns)) AS ready_ns
    FROM paired p
    JOIN api_calls a ON a.trace_id = p.trace_id AND a.pid = p.pid AND a.tid = p.copy_tid
                    AND a.start_ns >= p.copy_start_ns AND a.start_ns <= p.copy_end_ns
                    AND a.api IS DISTINCT FROM 'backtrace'
    JOIN stream_ops o ON o.trace_id = a.trace_id AND o.pid = a.pid AND o.correlation_id = a.correlation_id
    QUALIFY row_number() OVER (PARTITION BY p.trace_id, p.pid, p.call_index
                               ORDER BY o.start_ns, o.stream_id, o.correlation_id) = 1
)
SELECT g.run_id, g.trace_id, g.rank, g.pid, s.step, s.step_index, g.call_index, g.unit,
       CASE WHEN regexp_matches(i.issuer, 'backward') THEN 'backward' ELSE 'forward' END AS pass,
       coalesce(regexp_matches(i.issuer, '_prefetch for '), false) AS prefetched,
       g.launch_start_ns AS issued_ns, g.start_ns, g.end_ns, g.end_ns - g.start_ns AS duration_ns,
       w.wait_ns AS peer_wait_ns, k.stream_id AS consumer_stream_id, k.ready_ns, k.start_ns AS consumer_start_ns,
       greatest(0, least(k.start_ns, g.end_ns) - k.ready_ns) AS wait_ns,
       k.ready_ns - g.end_ns AS lead_ns,
       greatest(0, least(k.start_ns, g.end_ns) - k.ready_ns) >= 10000 AS is_late
FROM gathers g
LEFT JOIN issued_by i USING (trace_id, pid, call_index)
LEFT JOIN consumers k USING (trace_id, pid, call_index)
LEFT JOIN collective_instance_ranks w ON w.trace_id = g.trace_id AND w.pid = g.pid AND w.call_index = g.call_index
LEFT JOIN steps s ON s.trace_id = g.trace_id AND s.pid = g.pid
                 AND coalesce(g.launch_start_ns, g.start_ns) >= coalesce(s.host_start_ns, s.start_ns)
                 AND coalesce(g.launch_start_ns, g.start_ns) < coalesce(s.host_end_ns, s.end_ns);

-- fsdp_prefetch_steps: per step and rank of an FSDP2 run, how long the compute stream
-- waited for all-gathers (fsdp_prefetch: late prefetches), in the forward and in the
-- backward, and how much of that the all-gathers spent waiting for another rank; and the
-- reduce-scatters of the step: how long they ran and how much of it backward compute hid
-- (overlapped) or not (exposed, as comm_overlap counts communication). One row per step
-- and rank with FSDP all-gathers.
--
-- depends: fsdp_prefetch, steps, collectives, gpu_op_class, intervals_union_ns
--
-- @column run_id                 Distributed run.
-- @column trace_id               Trace.
-- @column rank                   Rank.
-- @column pid                    Process.
-- @column step                   Step name.
-- @column step_index             steps.step_index.
-- @column wall_ns                Step length (ns).
-- @column all_gathers            All-gathers of FSDP units launched in the step.
-- @column prefetched             Of them, issued ahead by a prefetch.
-- @column late                   Of them, late (fsdp_prefetch.is_late).
-- @column wait_ns                The compute stream's waits for them, summed (ns).
-- @column forward_wait_ns        Of it, in the forward (ns).
-- @column backward_wait_ns       Of it, in the backward (ns).
-- @column peer_wait_ns           Of it, the part the late all-gathers spent waiting for another rank (ns):
--                                lateness that prefetching earlier on this rank would not remove.
-- @column wait_pct               wait_ns / wall_ns x 100.
-- @column reduce_scatters        Reduce-scatter calls with kernels in the step.
-- @column reduce_scatter_ns      Time in the step with reduce-scatters running (ns).
-- @column reduce_scatter_overlapped_ns Part of it with compute running too (ns).
-- @column reduce_scatter_exposed_ns    reduce_scatter_ns - reduce_scatter_overlapped_ns (ns).
CREATE OR REPLACE VIEW fsdp_prefetch_steps AS
WITH waits AS (
    SELECT run_id, trace_id, rank, pid, step_index, count(*) AS all_gathers,
           count(*) FILTER (WHERE prefetched) AS prefetched, count(*) FILTER (WHERE is_late) AS late,
           sum(wait_ns) AS wait_ns, coalesce(sum(wait_ns) FILTER (WHERE pass = 'forward'), 0) AS forward_wait_ns,
           coalesce(sum(wait_ns) FILTER (WHERE pass = 'backward'), 0) AS backward_wait_ns,
           sum(least(wait_ns, peer_wait_ns)) AS peer_wait_ns
    FROM fsdp_prefetch
    WHERE step_index IS NOT NULL
    GROUP BY ALL
),
windows AS MATERIALIZED (
    SELECT s.trace_id, s.pid, s.step_index, s.start_ns, s.end_ns
    FROM waits w JOIN steps s USING (trace_id, pid, step_index)
),
rs AS MATERIALIZED (
    SELECT s.trace_id, s.pid, s.step_index, greatest(c.start_ns, s.start_ns) AS start_ns, least(c.end_ns, s.end_ns) AS end_ns
    FROM windows s
    JOIN collectives c ON c.trace_id = s.trace_id AND c.pid = s.pid AND c.start_ns < s.end_ns AND c.end_ns > s.start_ns
    WHERE c.operation = 'reduce_scatter'
),
compute AS MATERIALIZED (
    SELECT s.trace_id, s.pid, s.step_index, greatest(o.start_ns, s.start_ns) AS start_ns, least(o.end_ns, s.end_ns) AS end_ns
    FROM windows s
    JOIN gpu_op_class o ON o.trace_id = s.trace_id AND o.pid = s.pid AND o.start_ns < s.end_ns AND o.end_ns > s.start_ns
    WHERE o.op_class = 'compute'
),
rs_only AS (
    SELECT {'trace_id': trace_id, 'pid': pid, 'step_index': step_index} AS lane, start_ns, end_ns FROM rs
),
compute_only AS (
    SELECT {'trace_id': trace_id, 'pid': pid, 'step_index': step_index} AS lane, start_ns, end_ns FROM compute
),
either AS (
    SELECT * FROM rs_only UNION ALL SELECT * FROM compute_only
),
lengths AS (
    SELECT r.lane.trace_id, r.lane.pid, r.lane.step_index, r.covered_ns AS rs_ns,
           coalesce(k.covered_ns, 0) AS compute_ns, e.covered_ns AS either_ns
    FROM intervals_union_ns(rs_only) r
    JOIN intervals_union_ns(either) e ON e.lane = r.lane
    LEFT JOIN intervals_union_ns(compute_only) k ON k.lane = r.lane
),
calls AS (
    SELECT trace_id, pid, step_index, count(*) AS reduce_scatters FROM rs GROUP BY ALL
)
SELECT w.run_id, w.trace_id, w.rank, w.pid, s.step, w.step_index, s.wall_ns, w.all_gathers, w.prefetched, w.late,
       CAST(w.wait_ns AS BIGINT) AS wait_ns, CAST(w.forward_wait_ns AS BIGINT) AS forward_wait_ns,
       CAST(w.backward_wait_ns AS BIGINT) AS backward_wait_ns, CAST(coalesce(w.peer_wait_ns, 0) AS BIGINT) AS peer_wait_ns,
       100.0 * w.wait_ns / nullif(s.wall_ns, 0) AS wait_pct,
       coalesce(n.reduce_scatters, 0) AS reduce_scatters, CAST(coalesce(l.rs_ns, 0) AS BIGINT) AS reduce_scatter_ns,
       CAST(coalesce(l.rs_ns + l.compute_ns - l.either_ns, 0) AS BIGINT) AS reduce_scatter_overlapped_ns,
       CAST(coalesce(l.either_ns - l.compute_ns, 0) AS BIGINT) AS reduce_scatter_exposed_ns
FROM waits w
JOIN steps s USING (trace_id, pid, step_index)
LEFT JOIN lengths l USING (trace_id, pid, step_index)
LEFT JOIN calls n USING (trace_id, pid, step_index);
