-- op_efficiency_summary: op_efficiency per operator, input shapes and dtype: how many
-- calls, how long they ran on the GPU, and how close to the roofline. One row per
-- trace, rank, operator, shapes and precision.
--
-- depends: op_efficiency
--
-- @column trace_id              Trace.
-- @column rank                  Distributed rank (NULL when unknown).
-- @column name                  Operator name.
-- @column category              op_category(name).
-- @column dtype                 First tensor input's dtype.
-- @column precision             Precision of the roof (fp32 / tf32 / bf16 / ...).
-- @column shapes                Input shapes (JSON text).
-- @column calls                 Number of calls.
-- @column flops                 FLOPs of one call (the largest, where calls differ in scalar arguments).
-- @column bytes                 Bytes of one call (the largest, likewise).
-- @column device_ns             GPU time of all calls (ns).
-- @column avg_device_ns         Mean GPU time per call (ns).
-- @column time_pct              device_ns as a percentage of the device time of every modelled call of
--                               the trace.
-- @column achieved_tflops       Sum of FLOPs / sum of GPU time (TFLOP/s).
-- @column achieved_tbps         Sum of bytes / sum of GPU time (TB/s).
-- @column arithmetic_intensity  Sum of FLOPs / sum of bytes (FLOP/byte).
-- @column peak_tflops           The GPU's peak for the precision (TFLOP/s).
-- @column peak_tbps             The GPU's memory bandwidth (TB/s).
-- @column bound                 'compute' or 'memory': op_efficiency's bound of most of the GPU time (ties:
--                               'compute'); NULL without roofs.
-- @column roof_pct              Sum of roof time / sum of GPU time x 100.
-- @column gpu                   gpu_peaks.gpu (NULL when the GPU is not in the table).
CREATE OR REPLACE VIEW op_efficiency_summary AS
SELECT trace_id, rank, name, category, dtype, precision, shapes,
       count(*) AS calls,
       max(flops) AS flops,
       max(bytes) AS bytes,
       CAST(sum(device_ns) AS BIGINT) AS device_ns,
       avg(device_ns) AS avg_device_ns,
       100.0 * sum(device_ns) / sum(sum(device_ns)) OVER (PARTITION BY trace_id) AS time_pct,
       sum(flops) / sum(device_ns) / 1e3 AS achieved_tflops,
       sum(bytes) / sum(device_ns) / 1e3 AS achieved_tbps,
       sum(flops) / nullif(sum(bytes), 0) AS arithmetic_intensity,
       max(peak_tflops) AS peak_tflops,
       max(peak_tbps) AS peak_tbps,
       CASE WHEN count(bound) > 0 THEN
           CASE WHEN coalesce(sum(device_ns) FILTER (WHERE bound = 'compute'), 0)
                     >= coalesce(sum(device_ns) FILTER (WHERE bound = 'memory'), 0) THEN 'compute' ELSE 'memory' END
       END AS bound,
       100.0 * sum(roof_ns) / sum(device_ns) AS roof_pct,
       max(gpu) AS gpu
FROM op_efficiency
GROUP BY trace_id, rank, name, category, dtype, precision, shapes;
