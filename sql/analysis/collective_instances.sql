-- collective_instance_ranks: each collective call matched with the same collective on the
-- other ranks of its run (rank_runs): by process group and sequence number when the
-- trace records 'Seq', else by order within the process group. Ranks' traces may start
-- at different calls (a profiling window opens while collectives are queued), so the
-- order of each rank is first aligned with the lowest rank's: the shift that makes
-- most calls of the same operation overlap in time (a collective's kernels run at the
-- same time on every rank: none can finish before all have joined). A collective cannot
-- complete before its last rank arrives, so the shortest duration among the ranks (the
-- last to arrive waited least) is its transfer time and each rank's duration beyond that
-- is its wait. That holds for ring and tree collectives, where nothing moves before the
-- last rank joins. P2P-based collectives (all_to_all, send/recv) let the early rank push
-- its data into the peer's buffers before the peer arrives, so the last arrival's kernel
-- can be short: a rank that finished before the last arrival never waited, and its
-- duration is a floor (transfer_basis 'finished_early': a sender done before its
-- receiver came); between two ranks exchanging both ways (all_to_all, send_recv), the
-- late rank's data still reaches the early one after the late kernel ends, so the time
-- from the last arrival to the last end is a floor too ('to_last_end'; this reads the
-- ranks' clocks). Checked against back-to-back bursts timed with CUDA events (2-rank H200,
-- tests/test_collectives_skew.py): the last arrival alone is 24-29 % short for 16 MiB
-- all-to-all, 14 % for a 16 MiB exchange; these floors bring every op within 10 %. A P2P-based collective
-- of three or more ranks (all_to_all, batched send/recv: grouped sends and receives per
-- pair) is different: pairs whose ranks have arrived exchange their part before the last
-- rank comes, so the last arrival's kernel is shorter than the transfer. When such a
-- collective's ranks arrived apart (skew over a tenth of its shortest duration), its
-- transfer time is the larger of that shortest duration and the median shortest duration
-- of the same collective (run, group, operation, bytes, dtype) in calls whose ranks
-- arrived together (transfer_basis 'aligned_calls'); without such calls it stays the
-- shortest duration, a lower bound (transfer_basis 'last_arrival'). Collectives not found on all ranks of the group (at the edges of the
-- profiling windows) are left out; when the lake holds only some ranks of a larger group,
-- a collective found on all of those is kept (its numbers are bounds, see
-- collective_instances.is_bound). A trace that is the only rank of its run in the lake
-- (or records no rank) has each call as a collective of its own (matched_by 'single'),
-- whose duration includes waiting for ranks the lake does not have. One row per
-- collective and rank.
--
-- depends: collectives, traces, nccl_bus_factor
-- materialize: per trace: collective_instance_ranks, collective_rank_waits
--
-- @column run_id              Distributed run (rank_runs.run_id; the trace id for a trace of no run).
-- @column instance            Collective within the run (0 = first to start).
-- @column matched_by          'seq', 'order' (aligned call order in the group) or 'single' (one rank only).
-- @column rank                Rank.
-- @column trace_id            Trace of the rank.
-- @column pid                 Process of the rank.
-- @column call_index          collectives.call_index of the rank's call.
-- @column operation           all_reduce, all_gather, ... (collectives.operation).
-- @column process_group_name  Process group, when recorded.
-- @column seq                 Sequence number, when recorded.
-- @column dtype               Element type.
-- @column bytes               Per-rank buffer size as nccl-tests counts it (bytes).
-- @column group_size          Ranks in the process group (recorded, else the ranks of the run).
-- @column arrival_ns          Start of the rank's kernel on the Unix-epoch clock (the trace clock when
--                             the trace has no epoch anchor) (ns).
-- @column duration_ns         Its duration (ns).
-- @column transfer_ns         The collective's transfer time (ns): its shortest duration among the ranks,
--                             or for a P2P-based collective the larger floor described above.
-- @column transfer_basis      'last_arrival' (shortest duration), 'finished_early', 'to_last_end' or
--                             'aligned_calls' (see above).
-- @column wait_ns             duration_ns - transfer_ns, at least 0: time waiting for other ranks (ns).
-- @column is_last             True for the rank that arrived last.
CREATE OR REPLACE VIEW collective_instance_ranks AS
WITH calls AS MATERIALIZED (
    -- a call whose process group is not recorded (launched before the profiling window) is
    -- taken to be of the run's group when the run has only one
    SELECT c.*, coalesce(c.process_group_name,
                         CASE WHEN count(DISTINCT c.process_group_name) OVER (PARTITION BY c.run_id) = 1
                              THEN max(c.process_group_name) OVER (PARTITION BY c.run_id) END, '') AS pg,
           c.start_ns + coalesce(t.clock_offset_ns, 0) AS arrival_ns,
           c.end_ns + coalesce(t.clock_offset_ns, 0) AS end_epoch_ns,
           count(DISTINCT c.rank) OVER (PARTITION BY c.run_id) AS ranks_in_run
    FROM collectives c
    JOIN traces t USING (trace_id)
),
ordered AS MATERIALIZED (
    SELECT *, row_number() OVER (PARTITION BY run_id, rank, pg ORDER BY start_ns, end_ns, call_index) - 1 AS pg_ordinal,
           min(rank) OVER (PARTITION BY run_id, pg) AS reference_rank
    FROM calls
    WHERE ranks_in_run >= 2 AND rank IS NOT NULL
),
shifts AS (
    -- per rank: the order shift that lines up most same-operation calls that overlap in time
    SELECT o.run_id, o.pg, o.rank, o.pg_ordinal - r.pg_ordinal AS shift
    FROM ordered o
    JOIN ordered r ON r.run_id = o.run_id AND r.pg = o.pg AND r.rank = o.reference_rank
                  AND r.arrival_ns < o.end_epoch_ns AND o.arrival_ns < r.end_epoch_ns
                  AND r.operation IS NOT DISTINCT FROM o.operation
    GROUP BY o.run_id, o.pg, o.rank, shift
    QUALIFY row_number() OVER (PARTITION BY o.run_id, o.pg, o.rank ORDER BY count(*) DESC, abs(shift), shift) = 1
),
keyed AS (
    SELECT o.*, CASE WHEN o.seq IS NOT NULL THEN 'seq ' || o.seq
                     ELSE 'order ' || (o.pg_ordinal - coalesce(s.shift, 0)) END AS match_key
    FROM ordered o
    LEFT JOIN shifts s USING (run_id, pg, rank)
),
matched AS (
    SELECT *, count(*) OVER w AS ranks_present,
           coalesce(max(group_size) OVER w, ranks_in_run) AS group_size_,
           -- all ranks of the group, or all the lake has when it holds only some of a larger group
           least(coalesce(max(group_size) OVER w, ranks_in_run), ranks_in_run) AS expected_ranks,
           count(seq) OVER w AS with_seq,
           min(duration_ns) OVER w AS shortest_ns,
           max(arrival_ns) OVER w AS last_arrival_ns,
           min(arrival_ns) OVER w AS first_arrival_ns
    FROM keyed
    WINDOW w AS (PARTITION BY run_id, pg, match_key)
),
p2p AS (
    -- P2P-based collectives (grouped sends and receives per pair): what each call's own
    -- kernels show of its transfer, and for 3+ ranks whether the ranks arrived apart
    SELECT *, operation IN ('all_to_all', 'send', 'recv', 'send_recv') AS is_p2p_op,
              is_p2p_op AND group_size_ >= 3 AS is_p2p,
              last_arrival_ns - first_arrival_ns > shortest_ns / 10 AS arrived_apart,
              -- a rank that finished before the last one arrived never waited for it
              max(CASE WHEN end_epoch_ns <= last_arrival_ns THEN duration_ns END) OVER w AS finished_early_ns,
              max(end_epoch_ns) OVER w - last_arrival_ns AS to_last_end_ns
    FROM matched
    WHERE ranks_present = expected_ranks
    WINDOW w AS (PARTITION BY run_id, pg, match_key)
),
own AS (
    SELECT *, CASE WHEN NOT is_p2p_op THEN shortest_ns
                   ELSE greatest(shortest_ns, finished_early_ns,
                                 -- one pair, both directions: the late rank's data still reaches the
                                 -- early rank after the late rank's kernel ends
                                 CASE WHEN operation IN ('all_to_all', 'send_recv') AND group_size_ = 2
                                      THEN to_last_end_ns END)
              END AS own_ns
    FROM p2p
),
aligned AS (
    -- the transfer of each such collective in the calls whose ranks arrived together
    SELECT run_id, pg, operation, bytes, dtype, group_size_, median(own_ns) AS aligned_ns
    FROM (SELECT DISTINCT run_id, pg, match_key, operation, bytes, dtype, group_size_, own_ns
          FROM own WHERE is_p2p AND NOT arrived_apart)
    GROUP BY ALL
),
transfers AS (
    SELECT p.*, CASE WHEN p.is_p2p AND p.arrived_apart AND a.aligned_ns > p.own_ns THEN 'aligned_calls'
                     WHEN p.own_ns = p.shortest_ns THEN 'last_arrival'
                     WHEN p.own_ns = p.finished_early_ns THEN 'finished_early'
                     ELSE 'to_last_end' END AS transfer_basis,
           CAST(CASE WHEN transfer_basis = 'aligned_calls' THEN a.aligned_ns ELSE p.own_ns END AS BIGINT)
               AS transfer_ns
    FROM own p
    LEFT JOIN aligned a ON p.is_p2p AND p.arrived_apart AND a.run_id = p.run_id AND a.pg = p.pg
                       AND a.operation = p.operation AND a.bytes IS NOT DISTINCT FROM p.bytes
                       AND a.dtype IS NOT DISTINCT FROM p.dtype AND a.group_size_ = p.group_size_
),
multi AS (
    SELECT run_id,
           dense_rank() OVER (PARTITION BY run_id ORDER BY first_arrival_ns, pg, match_key) - 1 AS instance,
           CASE WHEN with_seq = ranks_present THEN 'seq' ELSE 'order' END AS matched_by,
           rank, trace_id, pid, call_index, operation, process_group_name, seq, dtype, bytes,
           group_size_ AS group_size, arrival_ns, duration_ns, transfer_ns, transfer_basis,
           arrival_ns = last_arrival_ns AS is_last
    FROM transfers
),
single AS (
    SELECT run_id, row_number() OVER (PARTITION BY run_id ORDER BY arrival_ns, pid, call_index) - 1 AS instance,
           'single' AS matched_by, rank, trace_id, pid, call_index, operation, process_group_name, seq, dtype,
           bytes, group_size, arrival_ns, duration_ns, duration_ns AS transfer_ns, 'last_arrival' AS transfer_basis,
           true AS is_last
    FROM calls
    WHERE ranks_in_run < 2 OR rank IS NULL
)
SELECT run_id, CAST(instance AS BIGINT) AS instance, matched_by, rank, trace_id, pid, call_index, operation,
       process_group_name, seq, dtype, bytes, CAST(group_size AS BIGINT) AS group_size, arrival_ns, duration_ns,
       transfer_ns, transfer_basis, greatest(duration_ns - transfer_ns, 0) AS wait_ns, is_last
FROM (SELECT * FROM multi UNION ALL BY NAME SELECT * FROM single);

-- collective_instances: one row per collective of a distributed run, matched across its
-- ranks (collective_instance_ranks), with the numbers nccl-tests prints: transfer time,
-- algorithm bandwidth bytes / transfer_ns and bus bandwidth algbw x nccl_bus_factor (in
-- decimal GB/s), and how the ranks' arrivals were spread. A trace that is the only rank
-- of its run (or records no rank) gets one row per call of its own, with bounds: its
-- duration includes waiting for ranks that are not in the lake, so transfer_ns is an
-- upper bound and the bandwidths are lower bounds (is_bound = true); so are they when the
-- lake holds only some of the group's ranks.
--
-- @column run_id              Distributed run (rank_runs.run_id; the trace id for a trace of no run).
-- @column instance            Collective within the run (0 = first to start).
-- @column process_group_name  Process group ('Process Group Name'; NULL when not recorded).
-- @column seq                 Sequence number in the group, when recorded.
-- @column matched_by          'seq', 'order' (aligned call order in the group) or 'single' (one rank only).
-- @column operation           all_reduce, all_gather, ... (collectives.operation): the ranks' most common,
--                             ties to the first name ('recv' for a send matched with its recv).
-- @column dtype               Element type (the ranks' most common, ties to the first name).
-- @column bytes               Per-rank buffer size as nccl-tests counts it (largest among the ranks) (bytes).
-- @column group_size          Ranks in the process group (recorded, else the ranks of the run).
-- @column ranks_matched       Ranks whose call was matched.
-- @column start_ns            First arrival on the Unix-epoch clock (ns).
-- @column skew_ns             Last arrival - first arrival (ns).
-- @column transfer_ns         Shortest duration among the ranks (ns): the time the transfer took once all had
--                             joined; for a P2P-based collective of 3+ ranks that arrived apart, at least its
--                             transfer in calls whose ranks arrived together (collective_instance_ranks).
-- @column transfer_basis      'last_arrival', 'finished_early', 'to_last_end' or 'aligned_calls'
--                             (collective_instance_ranks).
-- @column last_rank           Rank that arrived last (the lowest of those that arrived at the same time).
-- @column max_wait_ns         Longest wait of a rank (ns).
-- @column total_wait_ns       Sum of the ranks' waits (ns).
-- @column ranks               The ranks, in order.
-- @column wait_ns_by_rank     Each rank's wait_ns, in the order of ranks (ns).
-- @column algbw_gb_per_s      bytes / transfer_ns (decimal GB/s).
-- @column busbw_gb_per_s      algbw_gb_per_s x nccl_bus_factor(operation, group_size) (decimal GB/s).
-- @column is_bound            True when not all ranks of the group are in the lake (bounds, see above).
CREATE OR REPLACE VIEW collective_instances AS
WITH grouped AS (
    SELECT run_id, instance, any_value(process_group_name) AS process_group_name, any_value(seq) AS seq,
           any_value(matched_by) AS matched_by,
           -- ties (a send on one rank, its recv on the other) go to the first name
           mode(operation ORDER BY operation) AS operation, mode(dtype ORDER BY dtype) AS dtype,
           max(bytes) AS bytes, max(group_size) AS group_size, count(*) AS ranks_matched,
           min(arrival_ns) AS start_ns, max(arrival_ns) - min(arrival_ns) AS skew_ns,
           min(transfer_ns) AS transfer_ns, max(transfer_basis) AS transfer_basis,
           min(rank) FILTER (WHERE is_last) AS last_rank,
           max(wait_ns) AS max_wait_ns, sum(wait_ns) AS total_wait_ns,
           list(rank ORDER BY rank) AS ranks, list(wait_ns ORDER BY rank) AS wait_ns_by_rank
    FROM collective_instance_ranks
    GROUP BY run_id, instance
)
SELECT run_id, instance, process_group_name, seq, matched_by, operation, dtype, bytes, group_size,
       ranks_matched, start_ns, skew_ns, transfer_ns, transfer_basis, last_rank, max_wait_ns,
       CAST(total_wait_ns AS BIGINT) AS total_wait_ns, ranks, wait_ns_by_rank,
       bytes / nullif(transfer_ns, 0) AS algbw_gb_per_s,
       bytes / nullif(transfer_ns, 0) * nccl_bus_factor(operation, group_size) AS busbw_gb_per_s,
       matched_by = 'single' OR ranks_matched < group_size AS is_bound
FROM grouped;

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
-- @column is_bound            True when not all ranks of the group are in the lake (bandwidths are lower bounds).
CREATE OR REPLACE VIEW collective_bandwidth AS
WITH instances AS MATERIALIZED (
    SELECT * FROM collective_instances
),
wait_stats AS (
    SELECT run_id, operation, bytes, dtype, group_size, is_bound,
           CAST(quantile_cont(wait_ns, 0.5) AS BIGINT) AS p50_wait_ns,
           CAST(quantile_cont(wait_ns, 0.9) AS BIGINT) AS p90_wait_ns,
           CAST(sum(wait_ns) AS BIGINT) AS total_wait_ns
    FROM (SELECT *, unnest(wait_ns_by_rank) AS wait_ns FROM instances)
    GROUP BY ALL
),
sizes AS (
    SELECT run_id, operation, bytes, dtype, group_size, is_bound, count(*) AS count,
           CAST(median(transfer_ns) AS BIGINT) AS median_transfer_ns
    FROM instances
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

-- collective_rank_waits: per rank of a distributed run (two or more ranks in the lake), how long its collectives waited
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
    WHERE l.is_last AND l.matched_by <> 'single'
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
WHERE w.matched_by <> 'single'
GROUP BY w.run_id, w.rank;
