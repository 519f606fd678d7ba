-- gpu_op_class: each GPU operation with its class, the unit of the time breakdowns:
-- 'compute' (kernels that are not communication, and CUDA graph replays traced as a
-- whole, whose nodes are unknown), 'communication' (NCCL/RCCL/HCCL collective and
-- point-to-point kernels), 'memcpy', 'memset'.
--
-- depends: gpu_ops
--
-- @column trace_id        Trace.
-- @column pid             Process (the rank, for one process per GPU).
-- @column device_id       GPU.
-- @column stream_id       Stream.
-- @column start_ns        Start (ns).
-- @column end_ns          End (ns).
-- @column op_class        'compute', 'communication', 'memcpy' or 'memset'.
-- @column name            Kernel or memory-operation name.
-- @column correlation_id  Id of the launching API call.
-- op_class_of(category, name): the class of one operation ('kernel', 'memcpy' or
-- 'memset' and its name), for other views and the reports.
CREATE OR REPLACE MACRO op_class_of(category, name) AS
CASE
    WHEN category = 'graph' THEN 'compute'  -- a graph replay traced as a whole (nodes unknown)
    WHEN category <> 'kernel' THEN category
    WHEN regexp_matches(name, '^(nccl|rccl|hccl)', 'i')
         OR contains(name, 'ncclKernel') OR contains(name, 'ncclDevKernel')
        THEN 'communication'
    ELSE 'compute'
END;

CREATE OR REPLACE VIEW gpu_op_class AS
SELECT trace_id, pid, device_id, stream_id, start_ns, end_ns,
       op_class_of(category, name) AS op_class,
       name, correlation_id
FROM gpu_ops;
