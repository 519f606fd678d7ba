-- collectives: one row per collective call per rank: which operation, over which process
-- group, how many elements of which type, and when its communication kernel ran. The
-- kernels are the 'communication' class of gpu_op_class (the ones overlap and the time
-- breakdowns count); what they did comes from the ranges enclosing the API call that
-- launched them on its thread: PyTorch's record_param_comms operator (Collective name,
-- In/Out msg nelems, dtype, Group size, Process Group Name/Ranks, Seq), the nccl:*
-- annotation (Input Dims, Input type), the c10d:: operator, and NCCL's own NVTX ranges
-- (ncclAllReduce, ...) in Nsight exports; the kernel name fills in the operation (and,
-- for reducing kernels, the element type) when nothing else says. A batch of sends and
-- receives (batch_isend_irecv) launches its kernel after its operators' records: it takes
-- their sizes and dtype (p2p_batches below). A field the trace does not record is NULL.
-- Kernels launched under one operator (coalesced calls) make one call.
--
-- depends: gpu_op_class, api_calls, cpu_ops, annotations, traces, rank_runs,
--          collective_operation, collective_dtype, collective_kernel_dtype,
--          dtype_size_bytes, collective_bytes
-- materialize: per trace
--
-- @column trace_id             Trace.
-- @column run_id               Distributed run (rank_runs.run_id); the trace id when the trace is no rank of one.
-- @column rank                 Rank within the run (rank_runs; else distributedInfo.rank; NULL when unknown).
-- @column pid                  Process.
-- @column tid                  Thread that launched the kernel (NULL when its launch is not in the trace).
-- @column call_index           Order of the call in its process (0 = first kernel start; calls that start
--                              together by end, then device, stream and kernel name).
-- @column operation            'all_reduce', 'all_gather', 'reduce_scatter', 'all_to_all', 'broadcast',
--                              'reduce', 'send', 'recv', 'send_recv', 'gather', 'scatter', 'barrier';
--                              NULL when nothing names it.
-- @column collective_name      The name as recorded: record_param_comms 'Collective name', else the
--                              nccl:* / NVTX range, else the kernel name.
-- @column process_group_name   PyTorch 'Process Group Name' (NULL when not recorded).
-- @column process_group_desc   PyTorch 'Process Group Description' (e.g. 'default_pg').
-- @column process_group_ranks  PyTorch 'Process Group Ranks' as recorded, e.g. '[0, 1]'.
-- @column group_size           Ranks in the process group ('Group size'; NULL when not recorded).
-- @column seq                  Sequence number of the call in its process group ('Seq'; NULL when not recorded).
-- @column dtype                Element type (collective_dtype spelling).
-- @column in_nelems            Elements in the input ('In msg nelems', else the nccl:* range's Input Dims;
--                              for a batch of sends and receives, the elements its sends carry).
-- @column out_nelems           Elements in the output ('Out msg nelems'; for a batch, its receives').
-- @column bytes                Per-rank buffer size as nccl-tests counts it (collective_bytes) (bytes).
-- @column start_ns             First kernel start (ns, trace clock).
-- @column end_ns               Last kernel end (ns, trace clock).
-- @column duration_ns          end_ns - start_ns: the transfer plus any wait for other ranks (ns).
-- @column device_id            GPU.
-- @column stream_id            Stream of the (first) kernel (of kernels that start together, the lowest
--                              device and stream).
-- @column kernel_name          Communication kernel name (the first, for coalesced calls).
-- @column kernels              Kernels of the call.
-- @column launch_op            The operator or range that launched it: the c10d:: op, else the nccl:*
--                              or NVTX range, else record_param_comms (NULL when the launch is not in the trace).
-- @column launch_start_ns      Start of the launching API call (ns, trace clock).
CREATE OR REPLACE VIEW collectives AS
WITH kernels_launched AS (
    SELECT o.trace_id, o.pid, o.device_id, o.stream_id, o.start_ns, o.end_ns, o.name AS kernel_name,
           a.tid, a.start_ns AS launch_start_ns,
           row_number() OVER (PARTITION BY o.trace_id, o.pid ORDER BY o.start_ns, o.end_ns) AS kernel_key
    FROM gpu_op_class o
    LEFT JOIN api_calls a ON a.trace_id = o.trace_id AND a.pid = o.pid AND a.correlation_id = o.correlation_id
                         AND a.api IS DISTINCT FROM 'backtrace'
    WHERE o.op_class = 'communication'
),
ranges AS (
    -- what may enclose a launch: record_param_comms, c10d:: ops, nccl:* / NCCL NVTX ranges
    SELECT trace_id, pid, tid, start_ns, end_ns, 'params' AS kind, name, args_json
    FROM cpu_ops WHERE name = 'record_param_comms'
    UNION ALL
    SELECT trace_id, pid, tid, start_ns, end_ns, 'c10d', name, NULL FROM cpu_ops WHERE name LIKE 'c10d::%'
    UNION ALL
    SELECT trace_id, pid, tid, start_ns, end_ns, 'range', name, args_json
    FROM annotations
    WHERE NOT coalesce(is_gpu, false) AND end_ns IS NOT NULL
      AND regexp_matches(name, '^(nccl|rccl)', 'i') AND collective_operation(name) IS NOT NULL
),
described AS (
    -- the innermost enclosing range of each kind (latest start; of ranges that start in the
    -- same ns, the one that ends first, then the first name and arguments)
    SELECT k.trace_id, k.pid, k.kernel_key, k.device_id, k.stream_id, k.start_ns, k.end_ns, k.kernel_name,
           k.tid, k.launch_start_ns,
           arg_min(r.args_json, r.innermost) FILTER (WHERE r.kind = 'params') AS params,
           arg_min(r.name, r.innermost) FILTER (WHERE r.kind = 'c10d') AS c10d_op,
           arg_min(r.name, r.innermost) FILTER (WHERE r.kind = 'range') AS range_name,
           arg_min(r.args_json, r.innermost) FILTER (WHERE r.kind = 'range') AS range_args,
           -- kernels under one launching operator are one (coalesced) call
           coalesce(max(r.start_ns) FILTER (WHERE r.kind = 'params'), max(r.start_ns) FILTER (WHERE r.kind = 'c10d'),
                    max(r.start_ns) FILTER (WHERE r.kind = 'range')) AS op_start_ns
    FROM kernels_launched k
    LEFT JOIN (SELECT *, (-start_ns, end_ns, name, coalesce(args_json, '')) AS innermost FROM ranges) r
           ON r.trace_id = k.trace_id AND r.pid = k.pid AND r.tid = k.tid
                      AND k.launch_start_ns >= r.start_ns AND k.launch_start_ns <= r.end_ns
    GROUP BY ALL
),
calls AS (
    SELECT trace_id, pid, any_value(tid) AS tid,
           min(start_ns) AS start_ns, max(end_ns) AS end_ns,
           -- the first kernel's (of kernels that start in the same ns, the lowest device and stream)
           arg_min(device_id, (start_ns, device_id, stream_id, kernel_name)) AS device_id,
           arg_min(stream_id, (start_ns, device_id, stream_id, kernel_name)) AS stream_id,
           arg_min(kernel_name, (start_ns, device_id, stream_id, kernel_name)) AS kernel_name, count(*) AS kernels,
           min(launch_start_ns) AS launch_start_ns,
           any_value(params) AS params, any_value(c10d_op) AS c10d_op,
           any_value(range_name) AS range_name, any_value(range_args) AS range_args
    FROM described
    GROUP BY trace_id, pid, tid, coalesce(op_start_ns, -kernel_key)
),
p2p_batches AS (
    -- batched sends and receives (batch_isend_irecv): each c10d::send / recv_ records its
    -- record_param_comms (sizes, dtype) but launches nothing; the group's one kernel is
    -- launched after them, under nccl:coalesced, which records no sizes. Such a kernel takes
    -- the send / recv records of its thread since the thread's previous communication launch.
    SELECT c.trace_id, c.pid, c.tid, c.launch_start_ns,
           sum(TRY_CAST(p.args_json ->> '$."In msg nelems"' AS BIGINT))
               FILTER (WHERE p.args_json ->> '$."Collective name"' = 'send') AS sent_nelems,
           sum(TRY_CAST(p.args_json ->> '$."Out msg nelems"' AS BIGINT))
               FILTER (WHERE p.args_json ->> '$."Collective name"' = 'recv') AS received_nelems,
           CASE WHEN count(DISTINCT p.args_json ->> '$.dtype') = 1 THEN any_value(p.args_json ->> '$.dtype') END
               AS batch_dtype,
           max(TRY_CAST(p.args_json ->> '$."Group size"' AS BIGINT)) AS batch_group_size
    FROM (SELECT *, lag(launch_start_ns) OVER (PARTITION BY trace_id, pid, tid ORDER BY launch_start_ns)
                        AS previous_launch_ns
          FROM calls) c
    JOIN cpu_ops p ON p.trace_id = c.trace_id AND p.pid = c.pid AND p.tid = c.tid
                  AND p.name = 'record_param_comms'
                  AND p.args_json ->> '$."Collective name"' IN ('send', 'recv')
                  AND p.start_ns > coalesce(c.previous_launch_ns, -1) AND p.end_ns <= c.launch_start_ns
    WHERE c.params IS NULL AND c.launch_start_ns IS NOT NULL
      AND collective_operation(c.kernel_name) IN ('send', 'recv', 'send_recv')
    GROUP BY ALL
),
fields AS (
    SELECT c.*, b.sent_nelems, b.received_nelems,
           params ->> '$."Collective name"' AS params_name,
           collective_dtype(coalesce(params ->> '$.dtype',
                                     range_args ->> '$."Input type"[0]',
                                     b.batch_dtype,
                                     collective_kernel_dtype(kernel_name))) AS dtype_,
           coalesce(TRY_CAST(params ->> '$."Group size"' AS BIGINT), b.batch_group_size) AS group_size_,
           coalesce(TRY_CAST(params ->> '$."In msg nelems"' AS BIGINT), b.sent_nelems) AS params_in,
           coalesce(TRY_CAST(params ->> '$."Out msg nelems"' AS BIGINT), b.received_nelems) AS params_out,
           CAST(list_product(TRY_CAST(range_args -> '$."Input Dims"[0]' AS BIGINT[])) AS BIGINT) AS range_in
    FROM calls c
    LEFT JOIN p2p_batches b ON b.trace_id = c.trace_id AND b.pid = c.pid AND b.tid = c.tid
                           AND b.launch_start_ns = c.launch_start_ns
)
SELECT f.trace_id, coalesce(r.run_id, f.trace_id) AS run_id, coalesce(r.rank, t.rank) AS rank, f.pid, f.tid,
       CAST(row_number() OVER (PARTITION BY f.trace_id, f.pid
                               ORDER BY f.start_ns, f.end_ns, f.device_id, f.stream_id, f.kernel_name) - 1 AS BIGINT)
           AS call_index,
       coalesce(collective_operation(f.params_name), collective_operation(f.range_name),
                collective_operation(f.c10d_op), collective_operation(f.kernel_name)) AS operation,
       coalesce(f.params_name, f.range_name, f.kernel_name) AS collective_name,
       f.params ->> '$."Process Group Name"' AS process_group_name,
       f.params ->> '$."Process Group Description"' AS process_group_desc,
       f.params ->> '$."Process Group Ranks"' AS process_group_ranks,
       f.group_size_ AS group_size,
       TRY_CAST(f.params ->> '$.Seq' AS BIGINT) AS seq,
       f.dtype_ AS dtype,
       coalesce(f.params_in, f.range_in) AS in_nelems,
       f.params_out AS out_nelems,
       CAST(collective_bytes(operation, coalesce(f.params_in, f.range_in) * dtype_size_bytes(f.dtype_),
                             f.params_out * dtype_size_bytes(f.dtype_), f.group_size_) AS BIGINT) AS bytes,
       f.start_ns, f.end_ns, f.end_ns - f.start_ns AS duration_ns,
       f.device_id, f.stream_id, f.kernel_name, f.kernels,
       coalesce(f.c10d_op, f.range_name, CASE WHEN f.params IS NOT NULL THEN 'record_param_comms' END) AS launch_op,
       f.launch_start_ns
FROM fields f
JOIN traces t ON t.trace_id = f.trace_id
LEFT JOIN rank_runs r ON r.trace_id = f.trace_id AND r.pid = f.pid;
