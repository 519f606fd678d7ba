-- collective_bytes(operation, in_bytes, out_bytes, group_size): the per-rank buffer size
-- nccl-tests prints as 'size': the larger of input and output (all-gather: the gathered
-- output; reduce-scatter: the full input; all-reduce, broadcast, all-to-all: the buffer).
-- nccl_bus_factor(operation, n): nccl-tests' busbw / algbw for n ranks: all-reduce
-- 2(n-1)/n; all-gather, reduce-scatter, all-to-all, gather, scatter (n-1)/n; broadcast,
-- reduce, send/recv 1 (barrier counted as an all-reduce).
--
-- depends: (none)

CREATE OR REPLACE MACRO collective_bytes(operation, in_bytes, out_bytes, group_size) AS
CASE operation
    WHEN 'all_gather' THEN coalesce(out_bytes, in_bytes * group_size)
    WHEN 'reduce_scatter' THEN coalesce(in_bytes, out_bytes * group_size)
    ELSE coalesce(greatest(in_bytes, out_bytes), in_bytes, out_bytes)
END;

CREATE OR REPLACE MACRO nccl_bus_factor(operation, n) AS
CASE WHEN n IS NULL OR n < 1 THEN NULL
     WHEN operation IN ('all_reduce', 'barrier') THEN 2.0 * (n - 1) / n
     WHEN operation IN ('all_gather', 'reduce_scatter', 'all_to_all', 'gather', 'scatter') THEN 1.0 * (n - 1) / n
     WHEN operation IN ('broadcast', 'reduce', 'send', 'recv', 'send_recv') THEN 1.0
END;
