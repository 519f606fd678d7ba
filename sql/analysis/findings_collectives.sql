-- Collective rules, each a view with the columns of findings (see findings.sql).
--
-- finding_collective_straggler: the rank the others waited for in a distributed run: it
-- kept them waiting more than half of all the time ranks waited at collectives
-- (collective_rank_waits.others_wait_ns), and arrived last more often than its share
-- (1 / ranks). Evidence: how often it was last, how long the others waited in total and,
-- at the collectives it held up by more than 1 ms, the median and longest wait. One row
-- per run, on the straggler's trace.
--
-- depends: collective_rank_waits, collective_instances, collectives, collective_bandwidth,
--          nccl_bus_factor
-- materialize: per trace
--
-- @column trace_id     Trace.
-- @column rule         Rule name.
-- @column severity     'warning' or 'info'.
-- @column pid          Process.
-- @column device_id    GPU.
-- @column stream_id    Stream.
-- @column start_ns     Start of the first flagged collective (ns, trace clock).
-- @column duration_ns  Time it stands for (ns).
-- @column evidence     What was seen.
-- @column advice       What to do.
CREATE OR REPLACE VIEW finding_collective_straggler AS
WITH runs AS (
    SELECT run_id, count(*) AS ranks, sum(others_wait_ns) AS all_wait_ns FROM collective_rank_waits GROUP BY run_id
),
held AS (
    SELECT run_id, last_rank AS rank, count(*) AS held, median(max_wait_ns) AS median_wait_ns,
           max(max_wait_ns) AS max_wait_ns
    FROM collective_instances
    WHERE NOT is_bound AND max_wait_ns > 1000000
    GROUP BY ALL
)
SELECT w.trace_id, 'collective_straggler' AS rule, 'warning' AS severity, w.pid,
       c.device_id, c.stream_id, c.start_ns, w.others_wait_ns AS duration_ns,
       printf('rank %d arrived last at %d of %d collectives; the other ranks waited %.3f ms for it in total '
              || '(%.0f %% of all waiting); at the %d it held up by more than 1 ms they waited %.3f ms '
              || '(median), up to %.3f ms',
              w.rank, w.times_last, w.collectives, w.others_wait_ns / 1e6,
              100.0 * w.others_wait_ns / r.all_wait_ns, coalesce(h.held, 0),
              coalesce(h.median_wait_ns, 0) / 1e6, coalesce(h.max_wait_ns, 0) / 1e6) AS evidence,
       'Find what delays this rank before its collectives (data loading, extra work, host sleeps or syncs, '
       || 'a slower GPU or host) in its own trace; balance the work across ranks.' AS advice
FROM collective_rank_waits w
JOIN runs r USING (run_id)
LEFT JOIN held h ON h.run_id = w.run_id AND h.rank = w.rank
JOIN collectives c ON c.trace_id = w.trace_id AND c.pid = w.pid AND c.call_index = 0
WHERE w.others_wait_ns * 2 > r.all_wait_ns AND w.times_last * r.ranks > w.collectives
  AND w.others_wait_ns > 1000000;

-- finding_low_collective_bandwidth: collectives of at least 1 MiB whose bus bandwidth is
-- below half of what the same operation, size and type reach in the same run (median of
-- at least 3), although all ranks had joined (waiting is not counted: the transfer is).
-- One row per run, operation, size and type, on the lowest rank's trace.
CREATE OR REPLACE VIEW finding_low_collective_bandwidth AS
WITH typical AS (
    SELECT run_id, operation, bytes, dtype, group_size, busbw_gb_per_s AS median_busbw
    FROM collective_bandwidth
    WHERE NOT is_bound AND count >= 3 AND bytes >= 1048576 AND operation <> 'barrier'
),
slow AS (
    SELECT i.run_id, i.operation, i.bytes, i.dtype, any_value(t.median_busbw) AS median_busbw,
           count(*) AS slow, min(i.busbw_gb_per_s) AS worst_busbw, min(i.instance) AS first_instance,
           sum(i.transfer_ns) AS transfer_ns,
           sum(i.transfer_ns - i.bytes / (t.median_busbw / nccl_bus_factor(i.operation, i.group_size)))
               AS extra_ns
    FROM collective_instances i
    JOIN typical t ON t.run_id = i.run_id AND t.operation = i.operation AND t.bytes = i.bytes
                  AND t.dtype IS NOT DISTINCT FROM i.dtype AND t.group_size = i.group_size
    WHERE NOT i.is_bound AND i.busbw_gb_per_s < 0.5 * t.median_busbw
    GROUP BY ALL
),
anchor AS (
    SELECT run_id, trace_id, pid, device_id, stream_id, start_ns FROM collectives
    QUALIFY row_number() OVER (PARTITION BY run_id ORDER BY rank, pid, call_index) = 1
)
SELECT a.trace_id, 'low_collective_bandwidth' AS rule, 'info' AS severity, a.pid, a.device_id, a.stream_id,
       a.start_ns, CAST(s.extra_ns AS BIGINT) AS duration_ns,
       printf('%d %s of %s %s reached %.1f GB/s bus bandwidth or less, under half the %.1f GB/s the same '
              || 'size reaches elsewhere in the run; %.3f ms lost', s.slow, s.operation,
              format_bytes(s.bytes), coalesce(s.dtype, '?'), s.worst_busbw, s.median_busbw, s.extra_ns / 1e6)
           AS evidence,
       'Check what else used the links or the GPU at that time (overlapping collectives on other streams, '
       || 'copies, compute that takes the SMs NCCL needs) and NCCL''s protocol and algorithm choice '
       || '(NCCL_DEBUG=INFO).' AS advice
FROM slow s
JOIN anchor a USING (run_id);

-- finding_tiny_collectives: a rank issuing many small collectives (under 1 MiB, barriers
-- aside): each costs a fixed latency of several microseconds however little it moves, so
-- many of them waste time a few large ones would not (DDP: raise bucket_cap_mb; FSDP:
-- wrap larger units; coalesce small tensors). Fires at 50 or more such calls making at
-- least half of the rank's collectives. One row per trace and process.
CREATE OR REPLACE VIEW finding_tiny_collectives AS
SELECT trace_id, 'tiny_collectives' AS rule, 'info' AS severity, pid,
       arg_min(device_id, (start_ns, call_index)) AS device_id, arg_min(stream_id, (start_ns, call_index)) AS stream_id,
       min(start_ns) AS start_ns,
       CAST(sum(duration_ns) FILTER (WHERE bytes < 1048576) AS BIGINT) AS duration_ns,
       printf('%d of %d collectives move under 1 MiB (median %s) and take %.3f ms',
              count(*) FILTER (WHERE bytes < 1048576), count(*),
              format_bytes(CAST(median(bytes) FILTER (WHERE bytes < 1048576) AS BIGINT)),
              sum(duration_ns) FILTER (WHERE bytes < 1048576) / 1e6) AS evidence,
       'Send fewer, larger messages: raise DDP''s bucket_cap_mb, wrap larger FSDP units, or '
       || 'flatten small tensors into one buffer before communicating.' AS advice
FROM collectives
WHERE operation IS DISTINCT FROM 'barrier' AND bytes IS NOT NULL
GROUP BY trace_id, pid
HAVING count(*) FILTER (WHERE bytes < 1048576) >= 50
   AND count(*) FILTER (WHERE bytes < 1048576) * 2 >= count(*);
