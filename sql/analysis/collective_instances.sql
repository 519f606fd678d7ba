-- collective_instance_ranks: each collective call matched with the same collective on the
-- other ranks of its run (rank_runs): by process group and sequence number when the
-- trace records 'Seq', else by order within the process group. Ranks' traces may start
-- at different calls (a profiling window opens while collectives are queued), so the
-- order of each rank is first aligned with the lowest rank's: the shift that makes
-- most calls of the same operation overlap in time (a collective's kernels run at the
-- same time on every rank: none can finish before all have joined). A collective cannot
-- complete before its last rank arrives, so the shortest duration among the ranks (the
-- last to arrive waited least) is its transfer time and each rank's duration beyond that
-- is its wait. Only collectives found on all ranks of the group are kept. One row per
-- collective and rank.
--
-- depends: collectives, traces, nccl_bus_factor
--
-- @column run_id              Distributed run (rank_runs.run_id).
-- @column instance            Collective within the run (0 = first to start).
-- @column rank                Rank.
-- @column trace_id            Trace of the rank.
-- @column pid                 Process of the rank.
-- @column call_index          collectives.call_index of the rank's call.
-- @column arrival_ns          Start of the rank's kernel on the Unix-epoch clock (ns).
-- @column duration_ns         Its duration (ns).
-- @column wait_ns             duration_ns - the collective's transfer_ns: time waiting for other ranks (ns).
-- @column is_last             True for the rank that arrived last.
CREATE OR REPLACE VIEW collective_instance_ranks AS
WITH calls AS (
    SELECT c.*, coalesce(c.process_group_name, '') AS pg,
           c.start_ns + t.clock_offset_ns AS arrival_ns, c.end_ns + t.clock_offset_ns AS end_epoch_ns,
           count(DISTINCT c.rank) OVER (PARTITION BY c.run_id) AS ranks_in_run
    FROM collectives c
    JOIN traces t USING (trace_id)
    WHERE c.rank IS NOT NULL AND t.clock_offset_ns IS NOT NULL
),
ordered AS (
    SELECT *, row_number() OVER (PARTITION BY run_id, rank, pg ORDER BY start_ns, end_ns) - 1 AS pg_ordinal,
           min(rank) OVER (PARTITION BY run_id, pg) AS reference_rank
    FROM calls
    WHERE ranks_in_run >= 2
),
shifts AS (
    -- per rank: the order shift that lines up most same-operation calls that overlap in time
    SELECT o.run_id, o.pg, o.rank, o.pg_ordinal - r.pg_ordinal AS shift, count(*) AS overlapping
    FROM ordered o
    JOIN ordered r ON r.run_id = o.run_id AND r.pg = o.pg AND r.rank = o.reference_rank
                  AND r.arrival_ns < o.end_epoch_ns AND o.arrival_ns < r.end_epoch_ns
                  AND r.operation IS NOT DISTINCT FROM o.operation
    GROUP BY o.run_id, o.pg, o.rank, shift
    QUALIFY row_number() OVER (PARTITION BY o.run_id, o.pg, o.rank ORDER BY count(*) DESC, abs(shift)) = 1
),
keyed AS (
    SELECT o.*, coalesce(o.seq, o.pg_ordinal - coalesce(s.shift, 0)) AS match_key
    FROM ordered o
    LEFT JOIN shifts s USING (run_id, pg, rank)
),
matched AS (
    SELECT *, count(*) OVER w AS ranks_present,
           coalesce(max(group_size) OVER w, ranks_in_run) AS expected_ranks,
           min(duration_ns) OVER w AS transfer_ns,
           max(arrival_ns) OVER w AS last_arrival_ns,
           min(arrival_ns) OVER w AS first_arrival_ns
    FROM keyed
    WINDOW w AS (PARTITION BY run_id, pg, match_key)
)
SELECT run_id,
       CAST(dense_rank() OVER (PARTITION BY run_id ORDER BY first_arrival_ns, pg, match_key) - 1 AS BIGINT) AS instance,
       rank, trace_id, pid, call_index, arrival_ns, duration_ns,
       duration_ns - transfer_ns AS wait_ns,
       arrival_ns = last_arrival_ns AS is_last
FROM matched
WHERE ranks_present = expected_ranks;

-- collective_instances: one row per collective of a distributed run, matched across its
-- ranks (collective_instance_ranks), with the numbers nccl-tests prints: transfer time,
-- algorithm bandwidth bytes / transfer_ns and bus bandwidth algbw x nccl_bus_factor (in
-- decimal GB/s), and how the ranks' arrivals were spread. A trace that is the only rank
-- of its run (or records no rank) gets one row per call of its own, with bounds: its
-- duration includes waiting for ranks that are not in the lake, so transfer_ns is an
-- upper bound and the bandwidths are lower bounds (is_bound = true).
--
-- @column run_id              Distributed run (rank_runs.run_id; the trace id for a lone trace).
-- @column instance            Collective within the run (0 = first to start).
-- @column process_group_name  Process group ('Process Group Name'; NULL when not recorded).
-- @column seq                 Sequence number in the group, when recorded.
-- @column matched_by          'seq', 'order' (aligned call order in the group) or 'single' (one rank only).
-- @column operation           all_reduce, all_gather, ... (collectives.operation).
-- @column dtype               Element type.
-- @column bytes               Per-rank buffer size as nccl-tests counts it (largest among the ranks) (bytes).
-- @column group_size          Ranks in the process group (recorded, else the ranks matched).
-- @column ranks_matched       Ranks whose call was matched.
-- @column start_ns            First arrival on the Unix-epoch clock (ns).
-- @column skew_ns             Last arrival - first arrival (ns).
-- @column transfer_ns         Shortest duration among the ranks (ns): the time the transfer took once all had joined.
-- @column last_rank           Rank that arrived last.
-- @column max_wait_ns         Longest wait of a rank (ns).
-- @column total_wait_ns       Sum of the ranks' waits (ns).
-- @column ranks               The ranks, in order.
-- @column wait_ns_by_rank     Each rank's wait_ns, in the order of ranks (ns).
-- @column algbw_gb_per_s      bytes / transfer_ns (decimal GB/s).
-- @column busbw_gb_per_s      algbw_gb_per_s x nccl_bus_factor(operation, group_size) (decimal GB/s).
-- @column is_bound            True when only one rank is in the lake (bounds, see above).
CREATE OR REPLACE VIEW collective_instances AS
WITH multi AS (
    SELECT w.run_id, w.instance,
           any_value(c.process_group_name) AS process_group_name, any_value(c.seq) AS seq,
           CASE WHEN count(c.seq) = count(*) THEN 'seq' ELSE 'order' END AS matched_by,
           mode(c.operation) AS operation, mode(c.dtype) AS dtype, max(c.bytes) AS bytes,
           coalesce(max(c.group_size), count(*)) AS group_size, count(*) AS ranks_matched,
           min(w.arrival_ns) AS start_ns, max(w.arrival_ns) - min(w.arrival_ns) AS skew_ns,
           min(w.duration_ns) AS transfer_ns, arg_max(w.rank, w.arrival_ns) AS last_rank,
           max(w.wait_ns) AS max_wait_ns, sum(w.wait_ns) AS total_wait_ns,
           list(w.rank ORDER BY w.rank) AS ranks, list(w.wait_ns ORDER BY w.rank) AS wait_ns_by_rank,
           false AS is_bound
    FROM collective_instance_ranks w
    JOIN collectives c ON c.trace_id = w.trace_id AND c.pid = w.pid AND c.call_index = w.call_index
    GROUP BY w.run_id, w.instance
),
single AS (
    SELECT c.run_id,
           row_number() OVER (PARTITION BY c.run_id ORDER BY c.start_ns, c.pid) - 1 AS instance,
           c.process_group_name, c.seq, 'single' AS matched_by, c.operation, c.dtype, c.bytes,
           c.group_size, 1 AS ranks_matched,
           c.start_ns + coalesce(t.clock_offset_ns, 0) AS start_ns, 0 AS skew_ns,
           c.duration_ns AS transfer_ns, c.rank AS last_rank, 0 AS max_wait_ns, 0 AS total_wait_ns,
           [c.rank] AS ranks, [0] AS wait_ns_by_rank, true AS is_bound
    FROM collectives c
    JOIN traces t USING (trace_id)
    WHERE c.run_id NOT IN (SELECT run_id FROM collectives WHERE rank IS NOT NULL
                           GROUP BY run_id HAVING count(DISTINCT rank) >= 2)
),
both_kinds AS (
    SELECT * FROM multi
    UNION ALL BY NAME
    SELECT * FROM single
)
SELECT run_id, CAST(instance AS BIGINT) AS instance, process_group_name, CAST(seq AS BIGINT) AS seq, matched_by,
       operation, dtype, CAST(bytes AS BIGINT) AS bytes, CAST(group_size AS BIGINT) AS group_size,
       CAST(ranks_matched AS BIGINT) AS ranks_matched, CAST(start_ns AS BIGINT) AS start_ns,
       CAST(skew_ns AS BIGINT) AS skew_ns, CAST(transfer_ns AS BIGINT) AS transfer_ns,
       CAST(last_rank AS INTEGER) AS last_rank, CAST(max_wait_ns AS BIGINT) AS max_wait_ns,
       CAST(total_wait_ns AS BIGINT) AS total_wait_ns, CAST(ranks AS INTEGER[]) AS ranks,
       CAST(wait_ns_by_rank AS BIGINT[]) AS wait_ns_by_rank,
       bytes / nullif(transfer_ns, 0) AS algbw_gb_per_s,
       bytes / nullif(transfer_ns, 0) * nccl_bus_factor(operation, group_size) AS busbw_gb_per_s,
       is_bound
FROM both_kinds;

-- collective_bandwidth: what each kind of collective achieves in a run: per operation,
-- size, element type and group size, the median transfer time and the bandwidths it
-- gives (as nccl-tests reports per size), and how long ranks waited.
--
-- @column run_id              Run.
-- @column operation           all_reduce, all_gather, ...
-- @column bytes               Per-rank buffer size (bytes).
-- @column dtype               Element type.
-- @column group_size          Ranks in the group.
-- @column count               Collectives.
-- @column median_transfer_ns  Median transfer_ns (ns).
-- @column algbw_gb_per_s      bytes / median_transfer_ns (decimal GB/s).
-- @column busbw_gb_per_s      algbw_gb_per_s x nccl_bus_factor (decimal GB/s).
-- @column p50_wait_ns         Median wait of a rank (ns).
-- @column p90_wait_ns         90th percentile of the ranks' waits (ns).
-- @column total_wait_ns       Sum of all waits (ns).
-- @column is_bound            True for lone-rank traces (bandwidths are lower bounds).
CREATE OR REPLACE VIEW collective_bandwidth AS
WITH waits AS (
    SELECT i.run_id, i.instance, unnest(i.wait_ns_by_rank) AS wait_ns FROM collective_instances i
),
wait_stats AS (
    SELECT i.run_id, i.operation, i.bytes, i.dtype, i.group_size, i.is_bound,
           CAST(quantile_cont(w.wait_ns, 0.5) AS BIGINT) AS p50_wait_ns,
           CAST(quantile_cont(w.wait_ns, 0.9) AS BIGINT) AS p90_wait_ns,
           CAST(sum(w.wait_ns) AS BIGINT) AS total_wait_ns
    FROM collective_instances i JOIN waits w USING (run_id, instance)
    GROUP BY ALL
),
sizes AS (
    SELECT run_id, operation, bytes, dtype, group_size, is_bound, count(*) AS count,
           CAST(median(transfer_ns) AS BIGINT) AS median_transfer_ns
    FROM collective_instances
    GROUP BY ALL
)
SELECT s.run_id, s.operation, s.bytes, s.dtype, s.group_size, s.count, s.median_transfer_ns,
       s.bytes / nullif(s.median_transfer_ns, 0) AS algbw_gb_per_s,
       s.bytes / nullif(s.median_transfer_ns, 0) * nccl_bus_factor(s.operation, s.group_size) AS busbw_gb_per_s,
       w.p50_wait_ns, w.p90_wait_ns, w.total_wait_ns, s.is_bound
FROM sizes s
JOIN wait_stats w ON w.run_id = s.run_id AND w.operation IS NOT DISTINCT FROM s.operation
                 AND w.bytes IS NOT DISTINCT FROM s.bytes AND w.dtype IS NOT DISTINCT FROM s.dtype
                 AND w.group_size IS NOT DISTINCT FROM s.group_size AND w.is_bound = s.is_bound;

-- collective_rank_waits: per rank of a distributed run, how long its collectives waited
-- for the others and how often it was the one they waited for.
--
-- @column run_id          Run.
-- @column rank            Rank.
-- @column trace_id        Its trace.
-- @column pid             Its process.
-- @column collectives     Matched collectives it took part in.
-- @column times_last      How many of them it arrived last at.
-- @column last_pct        times_last / collectives x 100.
-- @column wait_ns         Total time its collectives waited for other ranks (ns).
-- @column transfer_ns     Total transfer time of its collectives (ns).
-- @column wait_pct        wait_ns / (wait_ns + transfer_ns) x 100: share of its communication time spent waiting.
-- @column max_wait_ns     Longest single wait (ns).
-- @column p50_wait_ns     Median wait (ns).
-- @column others_wait_ns  Time the other ranks waited at collectives this rank arrived last at (ns).
CREATE OR REPLACE VIEW collective_rank_waits AS
WITH others AS (
    SELECT l.run_id, l.rank, sum(o.wait_ns) AS others_wait_ns
    FROM collective_instance_ranks l
    JOIN collective_instance_ranks o ON o.run_id = l.run_id AND o.instance = l.instance AND o.rank <> l.rank
    WHERE l.is_last
    GROUP BY ALL
)
SELECT w.run_id, w.rank, any_value(w.trace_id) AS trace_id, any_value(w.pid) AS pid,
       count(*) AS collectives, count(*) FILTER (WHERE w.is_last) AS times_last,
       100.0 * count(*) FILTER (WHERE w.is_last) / count(*) AS last_pct,
       CAST(sum(w.wait_ns) AS BIGINT) AS wait_ns,
       CAST(sum(w.duration_ns - w.wait_ns) AS BIGINT) AS transfer_ns,
       100.0 * sum(w.wait_ns) / nullif(sum(w.duration_ns), 0) AS wait_pct,
       max(w.wait_ns) AS max_wait_ns,
       CAST(median(w.wait_ns) AS BIGINT) AS p50_wait_ns,
       CAST(coalesce(any_value(o.others_wait_ns), 0) AS BIGINT) AS others_wait_ns
FROM collective_instance_ranks w
LEFT JOIN others o ON o.run_id = w.run_id AND o.rank = w.rank
GROUP BY w.run_id, w.rank;
