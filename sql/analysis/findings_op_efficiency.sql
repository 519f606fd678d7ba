-- Operator-efficiency rules, each a view with the columns of findings (see findings.sql),
-- from the performance models (op_efficiency). One row per operator, input shapes and
-- precision that matters: at least 1 % of the GPU time of the trace's modelled calls, or
-- 1 ms. Start and duration are the first call's start and the calls' summed GPU time.
--
-- finding_memory_bound_matmul: GEMMs and convolutions below the ridge point of their
-- GPU (arithmetic intensity too low to keep the Tensor Cores busy): small or skinny
-- matrices, small batches, dimensions that are not multiples of 8 (16 for fp8/int8).
-- finding_matmul_below_roof: compute-bound GEMMs, convolutions and attention at less
-- than half of the GPU's peak for their precision.
-- finding_fp32_matmul: GEMMs and convolutions in full fp32 (not TF32) on a GPU with TF32
-- / bf16 Tensor Cores, with the time they would take at those roofs.
-- finding_unfused_attention: attention computed without a fused kernel: the math
-- fallback of scaled_dot_product_attention, or a softmax over [batch, heads, seq, seq]
-- scores (hand-written attention).
--
-- depends: op_efficiency, op_calls, op_launches, device_peaks
-- materialize: per trace
--
-- @column trace_id     Trace.
-- @column rule         Rule name.
-- @column severity     'warning' or 'info'.
-- @column pid          Process.
-- @column start_ns     Start of the first flagged call (ns).
-- @column duration_ns  GPU time of the flagged calls (ns).
-- @column evidence     What was seen.
-- @column advice       What to do.
CREATE OR REPLACE MACRO _op_groups() AS TABLE
SELECT trace_id, pid, name, category, precision, shapes, any_value(gpu) AS gpu, any_value(device_id) AS device_id,
       count(*) AS calls,
       min(start_ns) AS start_ns, CAST(sum(device_ns) AS BIGINT) AS device_ns,
       100.0 * sum(device_ns) / sum(sum(device_ns)) OVER (PARTITION BY trace_id) AS time_pct,
       any_value(flops) AS flops, any_value(bytes) AS bytes, any_value(arithmetic_intensity) AS ai,
       any_value(ridge_flop_per_byte) AS ridge, any_value(peak_tflops) AS peak_tflops, mode(bound ORDER BY bound) AS bound,
       100.0 * sum(roof_ns) / sum(device_ns) AS roof_pct, sum(flops) / sum(device_ns) / 1e3 AS tflops
FROM op_efficiency
GROUP BY trace_id, pid, name, category, precision, shapes;

CREATE OR REPLACE VIEW finding_memory_bound_matmul AS
SELECT trace_id, 'memory_bound_matmul' AS rule, 'info' AS severity, pid, start_ns, device_ns AS duration_ns,
       printf('%s %s %s: %d calls, %.3f ms (%.1f %% of modelled GPU time); %.0f FLOP/byte is below the %s '
              || 'ridge of %.0f FLOP/byte, so memory bandwidth limits it (%.0f %% of the roof)%s',
              name, precision, shapes, calls, device_ns / 1e6, time_pct, ai, gpu, ridge, roof_pct,
              CASE WHEN list_bool_or(list_transform(
                        json_transform(shapes, '[["BIGINT"]]'),
                        lambda s: len(s) >= 2 AND (s[len(s)] % CASE WHEN precision IN ('fp8', 'int8') THEN 16 ELSE 8 END <> 0
                                                   OR s[len(s) - 1] % CASE WHEN precision IN ('fp8', 'int8') THEN 16 ELSE 8 END <> 0)))
                   THEN '; a matrix dimension is not a multiple of ' || CASE WHEN precision IN ('fp8', 'int8') THEN '16' ELSE '8' END
                   ELSE '' END) AS evidence,
       'Give each GEMM more work: larger batch or sequence per call, fuse small GEMMs (one bmm or a '
       || 'grouped GEMM instead of many mm), and pad the dimensions to multiples of 8 (16 for fp8/int8; '
       || '64 or more helps tiling) so that Tensor Core tiles are full.' AS advice
FROM _op_groups()
WHERE category IN ('gemm', 'conv') AND bound = 'memory' AND (time_pct >= 1 OR device_ns >= 1e6);

CREATE OR REPLACE VIEW finding_matmul_below_roof AS
SELECT trace_id, 'matmul_below_roof' AS rule, 'info' AS severity, pid, start_ns, device_ns AS duration_ns,
       printf('%s %s %s: %d calls, %.3f ms (%.1f %% of modelled GPU time) at %.0f TFLOP/s, %.0f %% of the '
              || '%s %s peak of %.0f TFLOP/s', name, precision, shapes, calls, device_ns / 1e6, time_pct, tflops,
              roof_pct, gpu, precision, peak_tflops) AS evidence,
       'Compute-bound but far from peak: check that the kernel uses Tensor Cores (bf16/fp16/TF32, dimensions '
       || 'multiples of 8 or 16), that the grid fills the GPU (few large tiles on many SMs leave a partial '
       || 'last wave), and try torch.compile(mode="max-autotune") or cuBLASLt/cuDNN autotuning '
       || '(torch.backends.cudnn.benchmark = True).' AS advice
FROM _op_groups()
WHERE category IN ('gemm', 'conv', 'attention') AND bound = 'compute' AND roof_pct < 50
  AND (time_pct >= 1 OR device_ns >= 1e6);

CREATE OR REPLACE VIEW finding_fp32_matmul AS
SELECT g.trace_id, 'fp32_matmul' AS rule, 'warning' AS severity, g.pid, g.start_ns, g.device_ns AS duration_ns,
       printf('%s %s: %d calls, %.3f ms (%.1f %% of modelled GPU time) in full fp32, without Tensor Cores: '
              || 'the %s peaks at %.0f TFLOP/s in fp32, %.0f in TF32 and %.0f in bf16',
              g.name, g.shapes, g.calls, g.device_ns / 1e6, g.time_pct, g.gpu, p.fp32_tflops, p.tf32_tflops,
              p.bf16_tflops) AS evidence,
       'Allow TF32 (torch.set_float32_matmul_precision(''high''), torch.backends.cudnn.allow_tf32 = True) or '
       || 'run the model under bf16 autocast (torch.autocast(''cuda'', dtype=torch.bfloat16)).' AS advice
FROM _op_groups() g
JOIN device_peaks p ON p.trace_id = g.trace_id AND p.device_id = g.device_id
WHERE g.category IN ('gemm', 'conv') AND g.precision = 'fp32' AND p.tf32_tflops IS NOT NULL
  AND (g.time_pct >= 1 OR g.device_ns >= 1e6);

CREATE OR REPLACE VIEW finding_unfused_attention AS
WITH unfused AS (
    SELECT c.trace_id, c.pid, c.op_id, c.start_ns, c.name,
           CASE WHEN c.name = 'aten::_scaled_dot_product_attention_math' THEN 'math'
                ELSE 'softmax' END AS how,
           CAST(op_input_dims(c.source, c.inputs_raw) AS VARCHAR) AS shapes
    FROM op_calls c
    WHERE c.name = 'aten::_scaled_dot_product_attention_math'
       OR (c.name IN ('aten::softmax', 'aten::_softmax', 'aten::_safe_softmax')
           AND len(json_transform(op_input_dims(c.source, c.inputs_raw), '[["BIGINT"]]')[1]) = 4
           AND json_transform(op_input_dims(c.source, c.inputs_raw), '[["BIGINT"]]')[1][3]
               = json_transform(op_input_dims(c.source, c.inputs_raw), '[["BIGINT"]]')[1][4]
           AND json_transform(op_input_dims(c.source, c.inputs_raw), '[["BIGINT"]]')[1][3] >= 64)
),
timed AS (
    -- GPU time launched inside each call
    SELECT u.trace_id, u.pid, u.how, u.name, u.shapes, u.start_ns, u.op_id,
           coalesce(sum(l.duration_ns), 0) AS device_ns
    FROM unfused u
    JOIN op_calls c ON c.trace_id = u.trace_id AND c.op_id = u.op_id
    LEFT JOIN op_launches l ON l.trace_id = c.trace_id AND l.pid = c.pid AND l.tid = c.tid
                           AND l.launch_ns BETWEEN c.start_ns AND c.end_ns
    GROUP BY ALL
)
SELECT trace_id, 'unfused_attention' AS rule, 'warning' AS severity, pid, min(start_ns) AS start_ns,
       CAST(sum(device_ns) AS BIGINT) AS duration_ns,
       CASE WHEN name = 'aten::_scaled_dot_product_attention_math'
            THEN printf('%d calls of aten::_scaled_dot_product_attention_math (the unfused math fallback of '
                        || 'scaled_dot_product_attention), %.3f ms on the GPU', count(*), sum(device_ns) / 1e6)
            ELSE printf('%d calls of %s over [batch, heads, seq, seq] scores such as %s (hand-written attention), '
                        || '%.3f ms on the GPU', count(*), name, min(shapes), sum(device_ns) / 1e6)
       END AS evidence,
       'Use torch.nn.functional.scaled_dot_product_attention with inputs a fused kernel takes (fp16/bf16, head '
       || 'dimension a multiple of 8 up to 256, is_causal=True rather than an explicit causal mask) so that the '
       || 'flash, memory-efficient or cuDNN kernel runs; torch.nn.attention.sdpa_kernel shows which backends are '
       || 'allowed.' AS advice
FROM timed
GROUP BY trace_id, pid, name;
