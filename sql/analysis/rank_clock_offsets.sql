-- rank_clock_offsets: how far each trace's clock of a distributed run is off the clock of
-- the run's lowest rank, estimated from the collectives matched across ranks
-- (collective_instance_ranks): a ring or tree collective (all_reduce, all_gather,
-- reduce_scatter, barrier) ends at the same moment on all its ranks, since none can
-- finish before the last chunk has gone round, so the difference between the ends of
-- one collective on two ranks, as their traces record them on the Unix-epoch clock, is
-- the difference of their clocks. The offset is the median of that difference over the
-- collectives, and its uncertainty the spread of one collective's difference around it
-- (1.4826 x the median absolute deviation: a standard deviation for normal noise). Ranks
-- whose traces share one clock show how far the ends of one collective really differ:
-- 9-18 us on 2 and 4 H200s over NVLink (the recorded runs of tests/recorded) and 14 us in
-- a 2-rank Nsight export, whose processes have one clock. So an offset is applied
-- (applied_offset_ns) only when it is over 50 us and 3 uncertainties from 0, and
-- estimated from 3 collectives or more; then the cross-rank views (collective_waits) and
-- the run's Perfetto export (`tracelake export --run`) subtract it. The matching itself
-- (collective_instance_ranks) reads the traces' own clocks: without a recorded sequence
-- number it needs each collective's kernels to overlap on them, which an offset larger
-- than a collective's duration breaks. One row per trace of a run of two or more traces
-- (the reference trace with offset 0).
--
-- depends: collective_instance_ranks
--
-- @column run_id             Distributed run.
-- @column trace_id           Trace (one clock).
-- @column rank               Its lowest rank.
-- @column reference_rank     The rank whose trace's clock the offsets are relative to.
-- @column collectives        Collectives whose ends were compared with the reference's.
-- @column offset_ns          Median of (end on this trace - end on the reference) (ns): how far this
--                            trace's clock runs ahead of the reference's.
-- @column uncertainty_ns     1.4826 x median absolute deviation of that difference (ns).
-- @column applied_offset_ns  offset_ns when it is applied (above), else 0 (ns).
CREATE OR REPLACE VIEW rank_clock_offsets AS
WITH ends AS (
    SELECT run_id, instance, trace_id, min(rank) AS rank, max(arrival_ns + duration_ns) AS end_ns
    FROM collective_instance_ranks
    WHERE matched_by <> 'single' AND operation IN ('all_reduce', 'all_gather', 'reduce_scatter', 'barrier')
    GROUP BY ALL
),
reference AS (
    SELECT run_id, arg_min(trace_id, rank) AS trace_id, min(rank) AS rank FROM ends GROUP BY run_id
),
differences AS (
    SELECT e.run_id, e.trace_id, e.rank, r.rank AS reference_rank, e.end_ns - f.end_ns AS difference_ns
    FROM ends e
    JOIN reference r USING (run_id)
    JOIN ends f ON f.run_id = e.run_id AND f.instance = e.instance AND f.trace_id = r.trace_id
),
estimated AS (
    SELECT run_id, trace_id, min(rank) AS rank, any_value(reference_rank) AS reference_rank, count(*) AS collectives,
           CAST(median(difference_ns) AS BIGINT) AS offset_ns,
           CAST(1.4826 * mad(difference_ns) AS BIGINT) AS uncertainty_ns
    FROM differences
    GROUP BY run_id, trace_id
)
SELECT run_id, trace_id, rank, reference_rank, collectives, offset_ns, uncertainty_ns,
       CASE WHEN collectives >= 3 AND abs(offset_ns) > 50000 AND abs(offset_ns) > 3 * uncertainty_ns
            THEN offset_ns ELSE 0 END AS applied_offset_ns
FROM estimated
WHERE (SELECT count(DISTINCT trace_id) FROM ends x WHERE x.run_id = estimated.run_id) >= 2;
