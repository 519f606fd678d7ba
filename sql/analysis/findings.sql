-- findings: one row per detected problem, from every rule, with what was seen and
-- what to do. The rules: NVIDIA's four nsys analyze rules (findings_cuda_rules.sql),
-- the deep-learning rules (findings_dl_rules.sql), what bounds the steps
-- (findings_critical_path.sql), the memory rules (findings_memory.sql), the collective
-- rules (findings_collectives.sql) and the operator-efficiency rules (findings_op_efficiency.sql).
--
-- depends: traces, finding_cuda_memcpy_async, finding_cuda_memcpy_sync,
--          finding_cuda_memset_sync, finding_cuda_api_sync, finding_tensor_core_alignment,
--          finding_fp32_gemm, finding_launch_bound, finding_host_sync_in_step,
--          finding_pageable_copy_in_step, finding_gpu_idle_in_step, finding_straggler_rank,
--          finding_critical_path, finding_memory_growth, finding_memory_fragmentation,
--          finding_collective_straggler, finding_low_collective_bandwidth, finding_tiny_collectives,
--          finding_memory_bound_matmul, finding_matmul_below_roof, finding_fp32_matmul,
--          finding_unfused_attention
--
-- @column trace_id     Trace.
-- @column rule         Rule name.
-- @column severity     'warning' or 'info'.
-- @column rank         Distributed rank of the trace (NULL when unknown).
-- @column pid          Process.
-- @column tid          Thread (NULL when not a host-side finding).
-- @column device_id    GPU (NULL for host-side findings).
-- @column stream_id    Stream (NULL for host-side findings).
-- @column start_ns     Start of the flagged operation or API call (ns).
-- @column duration_ns  Its duration (ns).
-- @column api_name     The API call involved, as recorded.
-- @column evidence     What was seen, in words.
-- @column advice       What to do about it.
CREATE OR REPLACE VIEW findings AS
WITH rules AS (
    SELECT * FROM finding_cuda_memcpy_async
    UNION ALL BY NAME SELECT * FROM finding_cuda_memcpy_sync
    UNION ALL BY NAME SELECT * FROM finding_cuda_memset_sync
    UNION ALL BY NAME SELECT * FROM finding_cuda_api_sync
    UNION ALL BY NAME SELECT * FROM finding_tensor_core_alignment
    UNION ALL BY NAME SELECT * FROM finding_fp32_gemm
    UNION ALL BY NAME SELECT * FROM finding_launch_bound
    UNION ALL BY NAME SELECT * FROM finding_host_sync_in_step
    UNION ALL BY NAME SELECT * FROM finding_pageable_copy_in_step
    UNION ALL BY NAME SELECT * FROM finding_gpu_idle_in_step
    UNION ALL BY NAME SELECT * FROM finding_straggler_rank
    UNION ALL BY NAME SELECT * FROM finding_critical_path
    UNION ALL BY NAME SELECT * FROM finding_memory_growth
    UNION ALL BY NAME SELECT * FROM finding_memory_fragmentation
    UNION ALL BY NAME SELECT * FROM finding_collective_straggler
    UNION ALL BY NAME SELECT * FROM finding_low_collective_bandwidth
    UNION ALL BY NAME SELECT * FROM finding_tiny_collectives
    UNION ALL BY NAME SELECT * FROM finding_memory_bound_matmul
    UNION ALL BY NAME SELECT * FROM finding_matmul_below_roof
    UNION ALL BY NAME SELECT * FROM finding_fp32_matmul
    UNION ALL BY NAME SELECT * FROM finding_unfused_attention
)
SELECT r.trace_id, r.rule, r.severity, t.rank, r.pid, r.tid, r.device_id, r.stream_id,
       r.start_ns, r.duration_ns, r.api_name, r.evidence, r.advice
FROM rules r
JOIN traces t USING (trace_id);
