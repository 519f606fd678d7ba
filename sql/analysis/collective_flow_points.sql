-- collective_flow_points: where each rank's part of a collective matched across the ranks
-- of a run (collective_instance_ranks, not 'single') starts, for `tracelake export --run`:
-- the rank's first kernel of the call (collectives: start, GPU, stream) and its place in
-- the chain that links the instance's ranks in the exported file, in order of arrival on
-- the run's common clock (arrival_ns, less the trace's applied clock offset,
-- rank_clock_offsets, as the export shifts its events; ties by rank). One row per
-- instance and rank.
--
-- depends: collective_instance_ranks, collectives, rank_clock_offsets
--
-- @column run_id      Run (rank_runs.run_id).
-- @column instance    Collective within the run (collective_instance_ranks.instance).
-- @column rank        Rank.
-- @column trace_id    Trace of the rank.
-- @column operation   all_reduce, all_gather, ...
-- @column device_id   GPU of the kernel.
-- @column stream_id   Stream of the kernel.
-- @column start_ns    Kernel start (ns, the rank's trace clock).
-- @column arrival_ns  Kernel start on the Unix-epoch clock, of the reference rank (rank_clock_offsets)
--                     (ns; the trace clock without an epoch anchor).
-- @column wait_ns     The rank's wait for the last rank (collective_instance_ranks.wait_ns) (ns).
-- @column hop         Place in the chain (0 = first to arrive).
-- @column hops        Ranks in the chain.
CREATE OR REPLACE VIEW collective_flow_points AS
SELECT r.run_id, r.instance, r.rank, r.trace_id, r.operation, c.device_id, c.stream_id, c.start_ns,
       r.arrival_ns - coalesce(o.applied_offset_ns, 0) AS arrival_ns, r.wait_ns,
       row_number() OVER (PARTITION BY r.run_id, r.instance ORDER BY r.arrival_ns - coalesce(o.applied_offset_ns, 0), r.rank)
           - 1 AS hop,
       count(*) OVER (PARTITION BY r.run_id, r.instance) AS hops
FROM collective_instance_ranks r
JOIN collectives c ON c.trace_id = r.trace_id AND c.pid = r.pid AND c.call_index = r.call_index
LEFT JOIN rank_clock_offsets o ON o.run_id = r.run_id AND o.trace_id = r.trace_id
WHERE r.matched_by <> 'single';
