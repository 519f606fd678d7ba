-- Deep-learning rules, each a view with the columns of findings (see findings.sql).
--
-- finding_tensor_core_alignment: matrix multiplies whose matrix dimensions are not
-- multiples of what Tensor Cores need (8 for fp16/bf16, 4 for fp32 via TF32, 16 for
-- int8), from the operator's recorded input shapes (PyTorch record_shapes). The rows
-- M of the first matrix are exempt when fewer than the multiple (a decode step's M=1 is
-- no padding problem). One row per operator and distinct input shapes; start and
-- duration are the first call's.
--
-- depends: step_phases, cpu_op_inputs, cpu_ops, kernels, devices, kernel_launch_summary, temporal_breakdown,
--          steps, api, memcpy, stragglers, rank_runs
-- materialize: per trace
--
-- @column trace_id     Trace.
-- @column rule         Rule name.
-- @column severity     'warning' or 'info'.
-- @column pid          Process.
-- @column start_ns     Start of the (first) flagged operation (ns).
-- @column duration_ns  Its duration (ns).
-- @column evidence     What was seen.
-- @column advice       What to do.
CREATE OR REPLACE VIEW finding_tensor_core_alignment AS
WITH mm AS (
    SELECT i.trace_id, i.op_id, i.name,
           json_transform(i.input_dims, '[["BIGINT"]]') AS dims,
           json_transform(i.input_types, '["VARCHAR"]') AS types
    FROM cpu_op_inputs i
    WHERE i.name IN ('aten::mm', 'aten::addmm', 'aten::bmm', 'aten::baddbmm', 'aten::matmul', 'aten::linear')
),
matrices AS (
    -- the two multiplied matrices: the last two tensors of rank >= 2
    SELECT trace_id, op_id, name, dims, types, i AS arg, dims[i] AS shape, types[i] AS dtype
    FROM mm, range(1, len(dims) + 1) AS r(i)
    WHERE len(dims[i]) >= 2
),
checked AS (
    SELECT *, CASE WHEN dtype IN ('c10::Half', 'c10::BFloat16') THEN 8
                   WHEN dtype = 'float' THEN 4
                   WHEN dtype IN ('signed char', 'c10::qint8', 'int8') THEN 16 END AS align,
           arg = min(arg) OVER (PARTITION BY trace_id, op_id) AS is_first
    FROM matrices
),
bad AS (
    SELECT DISTINCT trace_id, op_id, name, dims, dtype, align
    FROM checked
    WHERE align IS NOT NULL
      AND (shape[len(shape)] % align <> 0
           OR (shape[len(shape) - 1] % align <> 0 AND NOT (is_first AND shape[len(shape) - 1] < align)))
),
on_gpu AS (
    -- only operators that launched GPU kernels (same External id)
    SELECT DISTINCT c.trace_id, c.op_id
    FROM cpu_ops c
    JOIN kernels k ON k.trace_id = c.trace_id AND k.external_id = c.external_id
    WHERE c.external_id IS NOT NULL
)
SELECT b.trace_id, 'tensor_core_alignment' AS rule, 'warning' AS severity, c.pid,
       min(c.start_ns) AS start_ns, arg_min(c.duration_ns, (c.start_ns, c.op_id)) AS duration_ns,
       printf('%s with %s inputs of shapes %s (%d calls): a dimension is not a multiple of %d',
              b.name, b.dtype, CAST(b.dims AS VARCHAR), count(*), b.align) AS evidence,
       printf('Pad the dimensions to multiples of %d (vocabulary, hidden and batch sizes) so '
              || 'the GEMM runs on Tensor Cores.', b.align) AS advice
FROM bad b
JOIN on_gpu USING (trace_id, op_id)
JOIN cpu_ops c ON c.trace_id = b.trace_id AND c.op_id = b.op_id
GROUP BY b.trace_id, c.pid, b.name, b.dims, b.dtype, b.align;

-- finding_fp32_gemm: fp32 matrix-multiply kernels running on CUDA cores (SGEMM/FFMA)
-- on a GPU with Tensor Cores for TF32 (compute capability 8.0+). One row per kernel name.
CREATE OR REPLACE VIEW finding_fp32_gemm AS
SELECT k.trace_id, 'fp32_gemm' AS rule, 'warning' AS severity, k.pid,
       min(k.start_ns) AS start_ns, CAST(sum(k.duration_ns) AS BIGINT) AS duration_ns,
       printf('%d fp32 GEMM kernels (%s) took %.3f ms on CUDA cores of a compute capability %d.%d GPU, whose Tensor Cores run TF32',
              count(*), any_value(k.short_name), sum(k.duration_ns) / 1e6, any_value(d.compute_major),
              any_value(d.compute_minor)) AS evidence,
       'Enable TF32 (torch.backends.cuda.matmul.allow_tf32 = True, or '
       || 'torch.set_float32_matmul_precision(''high'')) or use AMP (bf16/fp16 autocast).' AS advice
FROM kernels k
JOIN devices d ON d.trace_id = k.trace_id AND d.device_id = k.device_id
WHERE d.compute_major >= 8
  AND (regexp_matches(k.name, 'sgemm', 'i')
       OR (regexp_matches(k.name, 'gemm', 'i') AND regexp_matches(k.name, 'ffma', 'i')))
  AND NOT regexp_matches(k.name, 'tf32|hmma|bf16|f16', 'i')
GROUP BY k.trace_id, k.pid, k.name;

-- finding_launch_bound: processes whose GPU mostly waits for launches: at least half
-- of the directly launched kernels of the steady work (kernel_launch_summary: not
-- warm-up or graph capture) run shorter than the CPU call that launched them, and the
-- GPU is idle at least 30 % of its active time. Kernels run by CUDA graph replays are
-- not counted (a replay is one launch). A process whose graph replays hold 90 % or more
-- of that kernel time is not flagged; where some work is already graphed the advice is
-- to graph the rest rather than to start using CUDA graphs.
CREATE OR REPLACE VIEW finding_launch_bound AS
SELECT s.trace_id, 'launch_bound' AS rule, 'warning' AS severity, s.pid,
       b.span_ns AS duration_ns,
       (SELECT min(start_ns) FROM kernels k WHERE k.trace_id = s.trace_id AND k.pid = s.pid) AS start_ns,
       printf('%.0f %% of %d directly launched kernels ran shorter than their launch call (median kernel '
              || '%.1f us, mean launch %.1f us); the GPU was idle %.0f %% of the time',
              s.short_kernel_pct, s.eager_kernels, s.p50_kernel_ns / 1e3, s.avg_launch_ns / 1e3,
              b.idle_pct)
           || CASE WHEN s.graphed_time_pct > 0
                   THEN printf('; CUDA graph replays already run %.0f %% of the kernel time', s.graphed_time_pct)
                   ELSE '' END AS evidence,
       CASE WHEN s.graphed_time_pct > 0
            THEN 'Graph the work still launched kernel by kernel (it runs outside the captured graphs: '
                 || 'kernel_launches WHERE phase = ''eager''), fuse ops, or use larger batches.'
            ELSE 'Launch fewer, bigger kernels: CUDA graphs (torch.compile mode="reduce-overhead", '
                 || 'torch.cuda.graphs), fused ops, larger batches.' END AS advice
FROM kernel_launch_summary s
JOIN temporal_breakdown b ON b.trace_id = s.trace_id AND b.pid = s.pid
WHERE s.short_kernel_pct >= 50 AND b.idle_pct >= 30 AND coalesce(s.graphed_time_pct, 0) < 90;

-- finding_host_sync_in_step: training steps in which the host blocked on the GPU
-- (cudaStreamSynchronize, cudaDeviceSynchronize, synchronous cudaMemcpy, e.g. from
-- .item(), .cpu(), print(tensor)). One row per step; the evidence names the calls in
-- alphabetical order (the same text at every run).
CREATE OR REPLACE VIEW finding_host_sync_in_step AS
SELECT s.trace_id, 'host_sync_in_step' AS rule, 'warning' AS severity, s.pid,
       min(a.start_ns) AS start_ns, CAST(sum(a.duration_ns) AS BIGINT) AS duration_ns,
       printf('%d blocking calls in %s (%s), %.3f ms in total', count(*), s.step,
              string_agg(DISTINCT a.name, ', ' ORDER BY a.name), sum(a.duration_ns) / 1e6) AS evidence,
       'Keep values on the GPU inside the step (accumulate losses as tensors, log every N '
       || 'steps); avoid .item()/.cpu()/print on GPU tensors in the loop.' AS advice
FROM steps s
JOIN api a ON a.trace_id = s.trace_id AND a.pid = s.pid  -- host calls: the host range
          AND a.start_ns >= coalesce(s.host_start_ns, s.start_ns) AND a.start_ns < coalesce(s.host_end_ns, s.end_ns)
WHERE a.name IN ('cudaStreamSynchronize', 'cudaDeviceSynchronize', 'cudaMemcpy')
GROUP BY s.trace_id, s.pid, s.step;

-- finding_pageable_copy_in_step: host-to-device copies from pageable memory inside
-- training steps (each one is synchronous and slow). One row per step.
CREATE OR REPLACE VIEW finding_pageable_copy_in_step AS
SELECT s.trace_id, 'pageable_copy_in_step' AS rule, 'warning' AS severity, s.pid,
       min(m.start_ns) AS start_ns, CAST(sum(m.duration_ns) AS BIGINT) AS duration_ns,
       printf('%d pageable host-to-device copies in %s: %.1f MB in %.3f ms (%.1f GB/s)', count(*), s.step,
              sum(m.bytes) / 1e6, sum(m.duration_ns) / 1e6, sum(m.bytes) / nullif(sum(m.duration_ns), 0)) AS evidence,
       'Load batches into pinned memory (DataLoader(pin_memory=True)) and copy with '
       || '.to(device, non_blocking=True).' AS advice
FROM steps s
JOIN memcpy m ON m.trace_id = s.trace_id AND m.pid = s.pid
             AND m.start_ns >= s.start_ns AND m.start_ns < s.end_ns
WHERE m.copy_kind = 'HtoD' AND m.src_kind = 'pageable'
GROUP BY s.trace_id, s.pid, s.step;

-- finding_gpu_idle_in_step: steady steps (step_phases: warm-up steps are left out) in
-- which the GPU was idle more than half of the step. One row per step.
CREATE OR REPLACE VIEW finding_gpu_idle_in_step AS
SELECT trace_id, 'gpu_idle_in_step' AS rule, 'warning' AS severity, pid, start_ns,
       gpu_idle_ns AS duration_ns,
       printf('GPU idle %.0f %% of %s (%.3f of %.3f ms)', gpu_idle_pct, step, gpu_idle_ns / 1e6,
              wall_ns / 1e6) AS evidence,
       'See idle_breakdown for the causes: host_wait means the CPU (data loading, Python, '
       || 'syncs) is the bottleneck; overlap data loading with compute (DataLoader workers, '
       || 'prefetching) and remove host syncs.' AS advice
FROM steps s
JOIN (SELECT trace_id, pid, step_index, phase FROM step_phases) p USING (trace_id, pid, step_index)
WHERE gpu_idle_pct > 50 AND p.phase = 'steady'
  AND EXISTS (SELECT 1 FROM kernels k WHERE k.trace_id = s.trace_id);  -- not CPU-only traces

-- finding_straggler_rank: a rank that arrived last at most collectives of a step,
-- keeping the other ranks waiting. One row per run, step and straggling rank.
CREATE OR REPLACE VIEW finding_straggler_rank AS
SELECT r.trace_id, 'straggler_rank' AS rule, 'warning' AS severity, r.pid,
       (SELECT min(start_ns) FROM steps p WHERE p.trace_id = r.trace_id AND p.pid = r.pid
                                            AND p.step = s.step) AS start_ns,
       s.max_wait_ns AS duration_ns,
       printf('rank %d arrived last at %d of %d collectives in %s; the others waited up to %.3f ms',
              s.straggler_rank, s.times_last, s.collectives, s.step, s.max_wait_ns / 1e6) AS evidence,
       'Find what delays this rank before its collectives (data loading, extra work, '
       || 'a slower GPU or host) in its own trace; balance the work across ranks.' AS advice
FROM stragglers s
JOIN rank_runs r ON r.run_id = s.run_id AND r.rank = s.straggler_rank
WHERE s.times_last * 2 > s.collectives AND s.max_wait_ns > 1000000;
