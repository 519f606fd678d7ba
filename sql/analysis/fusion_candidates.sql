-- fusion_candidates: the chains of fusion_chains grouped: the same kernels and calls with
-- the same shapes (fusion_chains.signature) repeat per layer and per step; one row per trace
-- and distinct chain, so that it reads "this chain, 24 times per step, 0.31 ms each, 0.2 ms
-- to save each". Ordered by saved_ns_per_step (rank 1 = the largest saving).
--
-- depends: fusion_chains
-- materialize: per trace
--
-- @column trace_id           Trace.
-- @column rank               1 = the largest saving per step in the trace.
-- @column signature          fusion_chains.signature.
-- @column kernels            Kernels in one chain.
-- @column kernel_names       Their names in order.
-- @column calls              Operator calls in one chain.
-- @column operators          Their names in order, ' > ' between.
-- @column shapes             Their input shapes in order.
-- @column python_location    Python location of the chain (the most frequent among the repeats; the
--                            first in sort order among equally frequent ones).
-- @column python_locations   Distinct locations of the calls of the repeats, ' | ' between.
-- @column instances          Chains with this signature in the trace.
-- @column steps              Steps of the trace with any chain (0 when the trace has no steps).
-- @column per_step           instances / steps (NULL without steps).
-- @column device_ns          Kernel time of one chain now (ns, mean over the repeats).
-- @column bytes_now          Bytes one chain moves now.
-- @column bytes_fused        Bytes it would move fused.
-- @column fused_ns           Predicted time of one fused kernel (ns, mean).
-- @column saved_ns           Saving per chain (ns, mean).
-- @column saved_ns_per_step  Saving of all the repeats per step (ns; the trace's total when it has no steps).
-- @column launches_saved_per_step  Kernel launches the fused kernels would not make, per step.
-- @column advice             How to fuse it, in one line.
CREATE OR REPLACE VIEW fusion_candidates AS
WITH steps AS (
    SELECT trace_id, count(DISTINCT step) AS steps FROM fusion_chains GROUP BY ALL
),
grouped AS (
    SELECT c.trace_id, c.signature, any_value(c.kernels) AS kernels, any_value(c.kernel_names) AS kernel_names,
           any_value(c.calls) AS calls, any_value(c.operators) AS operators, any_value(c.shapes) AS shapes,
           mode(c.python_location ORDER BY c.python_location) AS python_location,
           string_agg(DISTINCT c.python_locations, ' | ' ORDER BY c.python_locations) AS python_locations,
           count(*) AS instances, any_value(s.steps) AS steps,
           avg(c.device_ns) AS device_ns, any_value(c.bytes_now) AS bytes_now, any_value(c.bytes_fused) AS bytes_fused,
           avg(c.fused_ns) AS fused_ns, avg(c.saved_ns) AS saved_ns, sum(c.saved_ns) AS saved_total_ns,
           sum(c.launches_saved) AS launches_saved_total
    FROM fusion_chains c
    JOIN steps s USING (trace_id)
    GROUP BY c.trace_id, c.signature
)
SELECT trace_id,
       row_number() OVER (PARTITION BY trace_id ORDER BY saved_total_ns DESC NULLS LAST, signature) AS rank,
       signature, kernels, kernel_names, calls, operators, shapes, python_location, python_locations,
       instances, steps, CASE WHEN steps > 0 THEN instances / steps END AS per_step,
       CAST(device_ns AS BIGINT) AS device_ns, bytes_now, bytes_fused, CAST(fused_ns AS BIGINT) AS fused_ns,
       CAST(saved_ns AS BIGINT) AS saved_ns,
       CAST(saved_total_ns / greatest(steps, 1) AS BIGINT) AS saved_ns_per_step,
       launches_saved_total / greatest(steps, 1) AS launches_saved_per_step,
       CASE
           WHEN regexp_matches(operators, 'batch_norm')
               THEN 'torch.compile fuses the batch-norm statistics, normalization and activation; '
                    || 'for inference, fold the batch norm into the convolution'
           WHEN regexp_matches(operators, 'layer_norm|rms_norm') AND regexp_matches(operators, '::add')
               THEN 'torch.compile, or a fused residual-add + norm kernel (one read of each input)'
           WHEN regexp_matches(operators, 'softmax')
               THEN 'torch.compile; if this is attention, F.scaled_dot_product_attention fuses the softmax'
           WHEN regexp_matches(operators, '::(sum|mean)\b') AND regexp_matches(operators, '_backward')
               THEN 'torch.compile fuses the gradient reductions with the elementwise backward ops'
           ELSE 'torch.compile (default mode) fuses it; by hand, one Triton kernel over the chain'
       END AS advice
FROM grouped;
