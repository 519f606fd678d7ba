-- op_models: FLOPs and bytes of each operator call that has a performance model, from
-- its recorded input shapes and dtypes, in the counting convention of PyTorch's
-- torch.utils.flop_counter.FlopCounterMode (docs/operators.md gives every formula and
-- where other tools count differently). One row per modelled call.
--
-- Which calls: the outermost call of a modelled operator on its thread. A modelled
-- operator inside another (aten::_convolution inside aten::convolution, the inner
-- kernels' ops of aten::layer_norm) is not counted again: its GPU time belongs to the
-- outer one, as FlopCounterMode sees only the outer call. Except under autocast: the
-- profiler records aten::addmm with the fp32 inputs, which casts them and calls
-- aten::addmm again with bf16 ones; the inner call (what FlopCounterMode sees) counts. Composite operators
-- (aten::linear, aten::matmul, aten::conv2d, aten::scaled_dot_product_attention) have no
-- model of their own: the operators they call carry the FLOPs, as in FlopCounterMode.
--
-- Families: GEMM (aten::mm, addmm, bmm, baddbmm, _scaled_mm), convolution forward and
-- backward (aten::convolution, _convolution, convolution_backward), attention forward
-- and backward (aten::_scaled_dot_product_{flash,efficient,cudnn}_attention[_backward])
-- count FLOPs; norms, softmax, elementwise operators and reductions count bytes only
-- (flops NULL; FlopCounterMode counts none for them).
--
-- NVTX ranges record no scalar arguments: a convolution's transposed flag, output shape
-- and output_mask come from the operator tree and the data flow instead (nvtx_conv_args).
-- Nor dtypes: a call's dtype is the one its kernels' names say (kernel_dtype; those it
-- launched itself or through the operators inside it), that of the most kernel time where
-- they name several, given to every input with a shape; none where a kernel casts (two
-- dtypes: autocast's mixed adds, copies between dtypes) or no kernel names one (cuDNN's
-- generated attention kernels).
--
-- depends: op_calls, op_category, nvtx_conv_args, op_launches, kernel_dtype
-- materialize: per trace
--
-- @column trace_id         Trace.
-- @column source           'cpu_ops' or 'nvtx' (op_calls.source).
-- @column op_id            op_calls.op_id of the call.
-- @column pid              Process.
-- @column tid              Thread.
-- @column start_ns         Start on the CPU (ns).
-- @column end_ns           End on the CPU (ns).
-- @column name             Operator name.
-- @column category         op_category(name).
-- @column model            Formula used: 'mm', 'addmm', 'bmm', 'baddbmm', 'scaled_mm', 'conv_fwd',
--                          'conv_bwd', 'sdpa_fwd', 'sdpa_bwd' or 'bytes' (the bytes-only families).
-- @column sequence_number  Autograd sequence number (links a backward call to its forward operator).
-- @column shapes           Input shapes as recorded (JSON text).
-- @column dtype            Data type of the first tensor input, as recorded ('c10::BFloat16', 'float',
--                          ...); for NVTX ranges, which carry none, the one the call's kernels name.
-- @column precision        Math precision of that dtype: 'fp64', 'fp32', 'fp16', 'bf16', 'fp8', 'int8'
--                          (fp32 becomes 'tf32' in op_efficiency when its kernels are TF32 kernels).
-- @column is_causal        Causal attention (scalar argument is_causal); NULL for other operators.
-- @column flops            Floating-point operations, FlopCounterMode's convention (a multiply-add
--                          is 2); NULL for the bytes-only families and when the shapes are missing.
-- @column bytes            Bytes read and written, each tensor once (NULL without dtypes; NVTX: every
--                          input with a shape at the call's dtype, a 0-dim tensor's [] counting none).
-- dtype_bytes(t): bytes per element of a recorded dtype ('c10::BFloat16' -> 2; NULL for
-- non-tensors: 'Scalar', 'ScalarList', '').
CREATE OR REPLACE MACRO dtype_bytes(t) AS
CASE WHEN t IN ('double', 'long int', 'long', 'c10::complex<float>') THEN 8
     WHEN t IN ('float', 'int', 'unsigned int') THEN 4
     WHEN t IN ('c10::Half', 'c10::BFloat16', 'short int', 'short') THEN 2
     WHEN t IN ('signed char', 'unsigned char', 'bool', 'c10::Float4_e2m1fn_x2')
          OR t LIKE 'c10::Float8%' THEN 1
     WHEN t = 'c10::complex<double>' THEN 16 END;

-- dtype_precision(t): math precision of a recorded dtype ('float' -> 'fp32', ...).
CREATE OR REPLACE MACRO dtype_precision(t) AS
CASE WHEN t = 'double' THEN 'fp64' WHEN t = 'float' THEN 'fp32' WHEN t = 'c10::Half' THEN 'fp16'
     WHEN t = 'c10::BFloat16' THEN 'bf16' WHEN t LIKE 'c10::Float8%' THEN 'fp8'
     WHEN t IN ('signed char', 'unsigned char') THEN 'int8' END;

-- numel(shape): number of elements of a shape (1 for a 0-dim tensor's []).
CREATE OR REPLACE MACRO numel(shape) AS list_reduce(shape, lambda a, b: a * b, CAST(1 AS BIGINT));

-- conv_out_size(size, kernel, stride, padding, dilation): output length of one spatial
-- dimension of a convolution (floor division, as PyTorch).
CREATE OR REPLACE MACRO conv_out_size(size, kernel, stride, padding, dilation) AS
(size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1;

CREATE OR REPLACE VIEW op_models AS
WITH names AS (
    -- the model of each operator name, evaluated once per name (unnest(list(DISTINCT)) keeps
    -- DuckDB from pushing the category test down to every call)
    SELECT name, category,
           CASE
               WHEN name = 'aten::mm' THEN 'mm'
               WHEN name = 'aten::addmm' THEN 'addmm'
               WHEN name = 'aten::bmm' THEN 'bmm'
               WHEN name = 'aten::baddbmm' THEN 'baddbmm'
               WHEN name = 'aten::_scaled_mm' THEN 'scaled_mm'
               WHEN name IN ('aten::convolution', 'aten::_convolution') THEN 'conv_fwd'
               WHEN name = 'aten::convolution_backward' THEN 'conv_bwd'
               WHEN name IN ('aten::_scaled_dot_product_flash_attention',
                             'aten::_scaled_dot_product_efficient_attention',
                             'aten::_scaled_dot_product_cudnn_attention') THEN 'sdpa_fwd'
               WHEN name IN ('aten::_scaled_dot_product_flash_attention_backward',
                             'aten::_scaled_dot_product_efficient_attention_backward',
                             'aten::_scaled_dot_product_cudnn_attention_backward') THEN 'sdpa_bwd'
               WHEN category IN ('norm', 'softmax', 'elementwise') THEN 'bytes'
               WHEN name IN ('aten::sum', 'aten::mean', 'aten::amax', 'aten::amin', 'aten::max', 'aten::min',
                             'aten::norm', 'aten::linalg_vector_norm', 'aten::prod', 'aten::var',
                             'aten::std', 'aten::var_mean', 'aten::std_mean', 'aten::logsumexp',
                             'aten::argmax', 'aten::argmin', 'aten::any', 'aten::all') THEN 'bytes'
           END AS model
    FROM (SELECT name, op_category(name) AS category
          FROM (SELECT unnest(list(DISTINCT name)) AS name FROM op_calls WHERE name LIKE 'aten::%'))
),
candidates AS (
    SELECT c.*, n.category, n.model
    FROM op_calls c
    JOIN names n USING (name)
    WHERE n.model IS NOT NULL
),
outermost AS (
    -- a modelled call inside another modelled call on the same thread is not counted again;
    -- but a call whose child is a call of the same operator (autocast records aten::addmm with
    -- the fp32 inputs, casts them, and calls aten::addmm again with bf16 ones) is a wrapper:
    -- the inner call is the one FlopCounterMode sees
    SELECT *
    FROM (
        SELECT *, max(end_ns) OVER (PARTITION BY trace_id, source, pid, tid
                                    ORDER BY start_ns, end_ns DESC, op_id
                                    ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS enclosing_end_ns
        FROM candidates c
        WHERE NOT EXISTS (SELECT 1 FROM candidates w
                          WHERE w.trace_id = c.trace_id AND w.parent_op_id = c.op_id AND w.name = c.name)
    )
    WHERE enclosing_end_ns IS NULL OR enclosing_end_ns < end_ns
),
nvtx_calls AS (
    SELECT trace_id, op_id, pid, tid, start_ns, end_ns FROM outermost WHERE source = 'nvtx'
),
kernel_names AS (
    -- each kernel name read once (nvtx_op_dtype)
    SELECT name, kernel_dtype(name) AS dtype, kernel_is_cast(name) AS is_cast
    FROM (SELECT unnest(list(DISTINCT name)) AS name FROM op_launches
          WHERE category = 'kernel' AND trace_id IN (SELECT DISTINCT trace_id FROM nvtx_calls))
),
nvtx_kernel_time AS (
    -- the kernels each NVTX call launched, itself or through the operators inside it
    SELECT c.trace_id, c.op_id, k.dtype, bool_or(k.is_cast) AS is_cast, sum(l.duration_ns) AS kernel_ns
    -- (the ASOF join first: joined to kernel_names before it, its left side looked a few rows
    -- long to DuckDB, which then ran it as a nested loop over every pair)
    FROM op_launches l
    ASOF JOIN nvtx_calls c ON c.trace_id = l.trace_id AND c.pid = l.pid AND c.tid = l.tid AND c.start_ns <= l.launch_ns
    JOIN kernel_names k ON k.name = l.name
    WHERE l.launch_ns <= c.end_ns AND l.category = 'kernel'
    GROUP BY ALL
),
nvtx_op_dtype AS (
    -- NVTX ranges carry no dtypes: the one the call's kernels name (kernel_dtype), of the most
    -- kernel time where they name several (batch norm: its statistics kernels run in fp32 on a bf16
    -- input; ties to the first name); none where a kernel casts (two dtypes) or none names one
    SELECT trace_id, op_id,
           CASE WHEN NOT bool_or(is_cast) THEN arg_min(dtype, (-kernel_ns, dtype)) FILTER (dtype IS NOT NULL) END AS dtype
    FROM nvtx_kernel_time
    GROUP BY ALL
),
parsed AS (
    SELECT o.*, i['Input Dims'] AS d, t, i['Concrete Inputs'] AS ci,
           list_transform(t, lambda x: dtype_bytes(x)) AS eb,
           a.transposed AS nvtx_transposed, a.output_shape AS nvtx_output_shape, a.output_mask AS nvtx_output_mask
    FROM (SELECT o.*, op_inputs(o.source, o.inputs_raw) AS i,
                 -- NVTX: the kernels' dtype for every input with a shape (a 0-dim tensor's [] is not told
                 -- apart from a non-tensor argument's and counts none)
                 CASE WHEN o.source = 'nvtx' AND k.dtype IS NOT NULL
                      THEN list_transform(i['Input Dims'], lambda x: CASE WHEN len(x) > 0 THEN k.dtype END)
                      ELSE i['Input type'] END AS t
          FROM outermost o
          LEFT JOIN nvtx_op_dtype k ON o.source = 'nvtx' AND k.trace_id = o.trace_id AND k.op_id = o.op_id) o
    LEFT JOIN nvtx_conv_args a ON o.source = 'nvtx' AND a.trace_id = o.trace_id AND a.op_id = o.op_id
),
tensors AS (
    -- the tensor inputs (a dtype, or any shape when the source records no dtypes)
    SELECT *,
           list_filter(range(1, len(d) + 1), lambda i: CASE WHEN t IS NULL THEN len(d[i]) > 0
                                                             ELSE eb[i] IS NOT NULL END) AS ti
    FROM parsed
),
shaped AS (
    SELECT *,
           t[ti[1]] AS dtype,
           eb[ti[1]] AS bpe,
           -- GEMM operands: [M, K] x [K, N], batched [B, M, K] x [B, K, N]
           CASE model WHEN 'mm' THEN d[1] WHEN 'scaled_mm' THEN d[1] WHEN 'bmm' THEN d[1]
                      WHEN 'addmm' THEN d[2] WHEN 'baddbmm' THEN d[2] END AS a,
           CASE model WHEN 'mm' THEN d[2] WHEN 'scaled_mm' THEN d[2] WHEN 'bmm' THEN d[2]
                      WHEN 'addmm' THEN d[3] WHEN 'baddbmm' THEN d[3] END AS b,
           -- convolution: input, weight, bias (forward) / grad_output, input, weight (backward)
           CASE model WHEN 'conv_fwd' THEN 4 WHEN 'conv_bwd' THEN 5 END AS conv_args,
           coalesce(TRY_CAST(ci[CASE model WHEN 'conv_fwd' THEN 7 ELSE 8 END] AS BOOLEAN),
                    nvtx_transposed) AS transposed
    FROM tensors
),
conv AS (
    SELECT *,
           CASE WHEN model = 'conv_fwd' THEN d[1] ELSE d[2] END AS x,
           CASE WHEN model = 'conv_fwd' THEN d[2] ELSE d[3] END AS w,
           TRY_CAST(ci[conv_args] AS BIGINT[]) AS stride,
           TRY_CAST(ci[conv_args + 1] AS BIGINT[]) AS padding,
           TRY_CAST(ci[conv_args + 2] AS BIGINT[]) AS dilation,
           TRY_CAST(ci[conv_args + 4] AS BIGINT[]) AS output_padding,
           TRY_CAST(ci[conv_args + 5] AS BIGINT) AS groups,
           coalesce(TRY_CAST(ci[11] AS BOOLEAN[]), nvtx_output_mask) AS output_mask
    FROM shaped
),
conv_out AS (
    SELECT *,
           -- output spatial sizes of the forward convolution (NVTX: as its consumers saw them)
           CASE WHEN model = 'conv_fwd' AND source = 'nvtx' THEN nvtx_output_shape[3:]
                WHEN model = 'conv_fwd' AND transposed IS NOT NULL THEN
               list_transform(range(1, len(x) - 1), lambda i: CASE WHEN transposed
                   THEN (x[i + 2] - 1) * stride[i] - 2 * padding[i] + dilation[i] * (w[i + 2] - 1)
                        + output_padding[i] + 1
                   ELSE conv_out_size(x[i + 2], w[i + 2], stride[i], padding[i], dilation[i]) END)
           END AS out_spatial
    FROM conv
),
counted AS (
    SELECT *,
           CASE model
               WHEN 'mm' THEN 2 * a[1] * b[2] * a[2]
               WHEN 'scaled_mm' THEN 2 * a[1] * b[2] * a[2]
               WHEN 'addmm' THEN 2 * a[1] * b[2] * a[2]
               WHEN 'bmm' THEN 2 * a[1] * a[2] * b[3] * a[3]
               WHEN 'baddbmm' THEN 2 * a[1] * a[2] * b[3] * a[3]
               -- 2 x batch x (output positions, or input positions when transposed) x weight size
               WHEN 'conv_fwd' THEN 2 * x[1] * numel(CASE WHEN transposed THEN x[3:] ELSE out_spatial END) * numel(w)
               -- grad_input: as the forward; grad_weight: 2 x N x C_in x C_out x kernel x positions
               -- (positions: grad_output's, or the input's when transposed)
               WHEN 'conv_bwd' THEN
                   (CASE WHEN output_mask[1] THEN 2 * d[1][1] * numel(CASE WHEN transposed THEN x[3:] ELSE d[1][3:] END)
                                                 * numel(w) ELSE 0 END)
                   + (CASE WHEN output_mask[2] THEN 2 * d[1][1] * x[2] * d[1][2] * numel(w[3:])
                                                   * numel(CASE WHEN transposed THEN x[3:] ELSE d[1][3:] END) ELSE 0 END)
               -- q [B, Hq, Sq, Dq], k [B, Hkv, Sk, Dq], v [B, Hkv, Sk, Dv]: QK^T and PV
               WHEN 'sdpa_fwd' THEN 2 * d[1][1] * d[1][2] * d[1][3] * d[2][3] * (d[1][4] + d[3][4])
               -- recompute QK^T, dP, dV, dQ, dK (3 with Dq, 2 with Dv)
               WHEN 'sdpa_bwd' THEN 2 * d[2][1] * d[2][2] * d[2][3] * d[3][3] * (3 * d[2][4] + 2 * d[4][4])
           END AS flops_raw,
           list_sum(list_transform(ti, lambda i: numel(d[i]) * eb[i])) AS input_bytes,
           list_max(list_transform(ti, lambda i: numel(d[i]) * eb[i])) AS largest_input_bytes
    FROM conv_out
)
SELECT trace_id, source, op_id, pid, tid, start_ns, end_ns, name, category, model, sequence_number,
       CAST(d AS VARCHAR) AS shapes, dtype,
       CASE WHEN model = 'scaled_mm' THEN 'fp8' ELSE dtype_precision(dtype) END AS precision,
       CASE WHEN model IN ('sdpa_fwd', 'sdpa_bwd') THEN TRY_CAST(ci[CASE name
                WHEN 'aten::_scaled_dot_product_flash_attention' THEN 5
                WHEN 'aten::_scaled_dot_product_efficient_attention' THEN 7
                WHEN 'aten::_scaled_dot_product_cudnn_attention' THEN 7
                WHEN 'aten::_scaled_dot_product_flash_attention_backward' THEN 12
                WHEN 'aten::_scaled_dot_product_efficient_attention_backward' THEN 12
                WHEN 'aten::_scaled_dot_product_cudnn_attention_backward' THEN 15 END] AS BOOLEAN) END AS is_causal,
       -- convolutions need the scalar arguments (stride, padding, ...), or for NVTX ranges
       -- what nvtx_conv_args recovers of them
       CAST(CASE WHEN model NOT IN ('conv_fwd', 'conv_bwd') OR transposed IS NOT NULL THEN flops_raw END
            AS BIGINT) AS flops,
       CAST(CASE model
           -- GEMM: A, B and the output [M, N] (+ the bias / added matrix)
           WHEN 'mm' THEN (numel(a) + numel(b) + a[1] * b[2]) * bpe
           WHEN 'scaled_mm' THEN numel(a) * eb[1] + numel(b) * eb[2] + a[1] * b[2] * 2
           WHEN 'addmm' THEN (numel(d[1]) + numel(a) + numel(b) + a[1] * b[2]) * bpe
           WHEN 'bmm' THEN (numel(a) + numel(b) + a[1] * a[2] * b[3]) * bpe
           WHEN 'baddbmm' THEN (numel(d[1]) + numel(a) + numel(b) + a[1] * a[2] * b[3]) * bpe
           -- convolution: input, weight, bias, output
           WHEN 'conv_fwd' THEN (numel(x) + numel(w) + CASE WHEN len(d[3]) > 0 THEN numel(d[3]) ELSE 0 END
                                 + x[1] * CASE WHEN transposed THEN w[2] * groups ELSE w[1] END
                                        * numel(out_spatial)) * bpe
           -- per gradient computed: read grad_output and the other operand, write the gradient
           WHEN 'conv_bwd' THEN ((CASE WHEN output_mask[1] THEN numel(d[1]) + numel(w) + numel(x) ELSE 0 END)
                                 + (CASE WHEN output_mask[2] THEN numel(d[1]) + numel(x) + numel(w) ELSE 0 END)) * bpe
           -- read q, k, v; write the output [B, Hq, Sq, Dv]
           WHEN 'sdpa_fwd' THEN (numel(d[1]) + numel(d[2]) + numel(d[3]) + d[1][1] * d[1][2] * d[1][3] * d[3][4]) * bpe
           -- read grad_output, q, k, v and the output; write dq, dk, dv
           WHEN 'sdpa_bwd' THEN (2 * numel(d[1]) + 2 * (numel(d[2]) + numel(d[3]) + numel(d[4]))) * bpe
           -- bytes-only families: every tensor input once, plus an output the size of the largest
           -- input (none for reductions, whose output is small)
           WHEN 'bytes' THEN input_bytes + CASE WHEN category = 'reduction' THEN 0 ELSE largest_input_bytes END
       END AS BIGINT) AS bytes
FROM counted;
