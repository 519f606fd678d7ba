-- fusion_chains: every chain of kernels one fused kernel could replace, and what that would
-- save. A chain is a maximal run of consecutive fusable kernels (fusion_kernels.kind 'memory':
-- norms, softmax, elementwise operators, reductions) on one stream within one training step,
-- between barriers (GEMMs, convolutions, attention, ...), across operator boundaries, of at
-- least two operator calls. One row per chain.
--
-- Bytes now: the sum of op_models.bytes of the chain's calls (each tensor input once, plus an
-- output the size of its largest input; none for reductions).
-- Bytes fused: the chain's external inputs read once and its final outputs written once.
-- Intermediates are recognized by shape and dtype (Kineto records no producers): an input of a
-- call is an intermediate when an earlier call of the chain produced an output of the same
-- shape and dtype (at most as many inputs of that shape per call as earlier outputs of it); an
-- output is written unless a later call of the chain reads a tensor of its shape and dtype. A
-- chain with a batch norm that computes batch statistics (training forward, or backward) must
-- finish a reduction over the whole batch before it can normalize, so a fused kernel reads the
-- external inputs of the calls up to that norm twice (statistics pass, then normalize pass).
-- NVTX ranges record no dtypes: their chains have NULL bytes and no prediction.
-- fused_ns: bytes fused at the bandwidth of the trace's own streaming kernels (fusion_rates),
-- plus one launch.
-- saved_ns: device_ns - fused_ns, not below 0 (NULL without a prediction: no shapes or dtypes
-- recorded, or no streaming kernels to measure the bandwidth on).
--
-- Python location: the innermost Python frame outside torch/ (and outside generated code)
-- around the call (with_stack traces); for a call inside the backward pass, that of the
-- forward call with the same autograd sequence number.
--
-- depends: fusion_kernels, fusion_rates, op_models, op_calls, python_frames
-- materialize: per trace
--
-- @column trace_id         Trace.
-- @column pid              Process.
-- @column device_id        GPU.
-- @column stream_id        Stream.
-- @column step             Training step (NULL outside steps).
-- @column chain_no         fusion_kernels.chain_no of the chain.
-- @column start_ns         Start of its first kernel on the GPU (ns).
-- @column end_ns           End of its last kernel (ns).
-- @column kernels          Kernels in the chain.
-- @column kernel_names     Their names in order, ' > ' between.
-- @column calls            Operator calls in the chain.
-- @column operators        Their names in order, ' > ' between.
-- @column shapes           Their input shapes in order, ' > ' between.
-- @column signature        md5 of the kernel and call sequence with shapes: equal chains share it
--                          (shapes count as '' when no call recorded any).
-- @column python_location  Python location of the first call that has one ('file.py(12): fn').
-- @column python_locations The distinct locations of the calls in order, ' | ' between.
-- @column device_ns        Kernel time of the chain now (ns, summed).
-- @column bytes_now        Bytes the calls move now (ns).
-- @column bytes_fused      Bytes a fused kernel would move.
-- @column fused_ns         Predicted time of the fused kernel (ns).
-- @column saved_ns         device_ns - fused_ns, at least 0 (ns; NULL without a prediction).
-- @column launches_saved   kernels - 1: launch calls the fused kernel would not make.
CREATE OR REPLACE VIEW fusion_chains AS
WITH memory AS (
    SELECT *, concat_ws('/', pid, device_id, stream_id, coalesce(step, '-'), chain_no) AS chain_id
    FROM fusion_kernels
    WHERE kind = 'memory'
),
chain_calls AS (
    SELECT trace_id, chain_id, op_id, min(start_ns) AS first_ns, sum(duration_ns) AS device_ns
    FROM memory
    GROUP BY ALL
),
chains AS (
    SELECT trace_id, chain_id FROM chain_calls GROUP BY ALL HAVING count(*) >= 2
),
calls AS (
    SELECT c.trace_id, c.chain_id, c.op_id, c.device_ns, m.source, m.pid, m.tid, m.start_ns AS op_start_ns,
           m.name, m.category, m.bytes, m.shapes,
           row_number() OVER (PARTITION BY c.trace_id, c.chain_id ORDER BY c.first_ns, c.op_id) AS idx
    FROM chain_calls c
    SEMI JOIN chains USING (trace_id, chain_id)
    JOIN op_models m USING (trace_id, op_id)
),
parsed AS (
    SELECT c.*, i['Input Dims'] AS d, i['Input type'] AS t, i['Concrete Inputs'] AS ci
    FROM (SELECT c.*, op_inputs(c.source, o.inputs_raw) AS i
          FROM calls c
          JOIN op_calls o ON o.trace_id = c.trace_id AND o.source = c.source AND o.op_id = c.op_id) c
),
flagged AS (
    -- batch statistics: backward, or forward with training = True (the 6th argument)
    SELECT *,
           regexp_matches(name, 'batch_norm') AND (regexp_matches(name, 'backward')
               OR (regexp_matches(name, '::(batch_norm|native_batch_norm|cudnn_batch_norm|miopen_batch_norm|_batch_norm_impl_index)$')
                   AND ci[6] = 'True')) AS batch_stats
    FROM parsed
),
tensors AS (
    -- tensor inputs (a dtype with a size): key = shape and dtype
    SELECT trace_id, chain_id, idx, x.key, x.bytes
    FROM (SELECT trace_id, chain_id, idx,
                 unnest(list_filter(list_transform(range(1, len(d) + 1),
                        lambda k: {'key': CAST(d[k] AS VARCHAR) || t[k], 'bytes': numel(d[k]) * dtype_bytes(t[k])}),
                        lambda x: x.bytes IS NOT NULL)) AS x
          FROM flagged)
),
outputs AS (
    -- the output op_models counts: the size of the largest input (none for reductions)
    SELECT t.trace_id, t.chain_id, t.idx, first(t.key ORDER BY t.bytes DESC, t.key) AS key, max(t.bytes) AS bytes
    FROM tensors t
    JOIN flagged f USING (trace_id, chain_id, idx)
    WHERE f.category <> 'reduction'
    GROUP BY ALL
),
inputs AS (
    SELECT t.trace_id, t.chain_id, t.idx, t.key, any_value(t.bytes) AS bytes, count(*) AS n,
           (SELECT count(*) FROM outputs o
            WHERE o.trace_id = t.trace_id AND o.chain_id = t.chain_id AND o.key = t.key AND o.idx < t.idx) AS produced
    FROM tensors t
    GROUP BY ALL
),
stats AS (
    SELECT trace_id, chain_id, max(idx) FILTER (WHERE batch_stats) AS stats_idx FROM flagged GROUP BY ALL
),
reads AS (
    SELECT i.trace_id, i.chain_id,
           sum((i.n - least(i.n, i.produced)) * i.bytes * CASE WHEN i.idx <= s.stats_idx THEN 2 ELSE 1 END) AS bytes
    FROM inputs i
    JOIN stats s USING (trace_id, chain_id)
    GROUP BY ALL
),
writes AS (
    SELECT o.trace_id, o.chain_id, sum(o.bytes) AS bytes
    FROM outputs o
    WHERE NOT EXISTS (SELECT 1 FROM inputs i WHERE i.trace_id = o.trace_id AND i.chain_id = o.chain_id
                                              AND i.key = o.key AND i.idx > o.idx)
    GROUP BY ALL
),
roots AS (
    -- the top-level call on the thread around each call: an autograd node in the backward pass
    SELECT f.trace_id, f.chain_id, f.idx, f.pid, f.tid, f.op_start_ns, r.name AS root_name,
           r.sequence_number AS root_seq
    FROM flagged f
    ASOF LEFT JOIN (SELECT trace_id, source, pid, tid, start_ns, name, sequence_number
                    FROM op_calls WHERE depth = 0) r
      ON r.trace_id = f.trace_id AND r.source = f.source AND r.pid = f.pid AND r.tid = f.tid
     AND r.start_ns <= f.op_start_ns
),
forward AS (
    -- where to look for the Python frame: the call itself, or its forward call
    SELECT r.trace_id, r.chain_id, r.idx,
           coalesce(fw.pid, r.pid) AS pid, coalesce(fw.tid, r.tid) AS tid, coalesce(fw.start_ns, r.op_start_ns) AS at_ns
    FROM roots r
    LEFT JOIN (SELECT trace_id, sequence_number, arg_min(pid, (start_ns, pid, tid)) AS pid,
                      arg_min(tid, (start_ns, pid, tid)) AS tid,
                      min(start_ns) AS start_ns
               FROM op_calls
               WHERE sequence_number IS NOT NULL AND name NOT LIKE 'autograd::%' AND name NOT LIKE '%Backward%'
               GROUP BY ALL) fw
      ON r.root_name LIKE 'autograd::engine::evaluate_function:%'
     AND fw.trace_id = r.trace_id AND fw.sequence_number = r.root_seq
),
located AS (
    SELECT w.trace_id, w.chain_id, w.idx,
           first(p.name ORDER BY p.start_ns DESC, p.end_ns, p.name) AS location  -- the innermost frame
    FROM forward w
    JOIN python_frames p ON p.trace_id = w.trace_id AND p.pid = w.pid AND p.tid = w.tid
                        AND p.start_ns <= w.at_ns AND p.end_ns >= w.at_ns
    WHERE p.frame_kind = 'python' AND p.file IS NOT NULL
      AND NOT regexp_matches(p.file, '(^|/)(torch|triton|contextlib|threading|functools)[./]|torchinductor|<eval_with_key>')
    GROUP BY ALL
),
chain_kernels AS (
    SELECT trace_id, chain_id, any_value(pid) AS pid, any_value(device_id) AS device_id,
           any_value(stream_id) AS stream_id, any_value(step) AS step, any_value(chain_no) AS chain_no,
           min(start_ns) AS start_ns, max(start_ns + duration_ns) AS end_ns, count(*) AS kernels,
           string_agg(name, ' > ' ORDER BY start_ns) AS kernel_names, sum(duration_ns) AS device_ns
    FROM memory
    SEMI JOIN chains USING (trace_id, chain_id)
    GROUP BY ALL
),
chain_totals AS (
    SELECT f.trace_id, f.chain_id, count(*) AS calls,
           string_agg(f.name, ' > ' ORDER BY f.idx) AS operators,
           string_agg(f.shapes, ' > ' ORDER BY f.idx) AS shapes,
           -- NULL when any call has no bytes
           CASE WHEN count(f.bytes) = count(*) THEN sum(f.bytes) END AS bytes_now,
           bool_and(f.bytes IS NOT NULL) AS modelled,
           string_agg(DISTINCT l.location, ' | ' ORDER BY l.location) AS python_locations,
           arg_min(l.location, f.idx) AS python_location
    FROM flagged f
    JOIN chain_kernels k USING (trace_id, chain_id)
    LEFT JOIN located l USING (trace_id, chain_id, idx)
    GROUP BY ALL
),
predicted AS (
    SELECT k.*, t.calls, t.operators, t.shapes, t.python_location, t.python_locations, t.bytes_now,
           CASE WHEN t.modelled THEN CAST(coalesce(rd.bytes, 0) + coalesce(wr.bytes, 0) AS BIGINT) END AS bytes_fused,
           r.stream_tbps, r.launch_ns
    FROM chain_kernels k
    JOIN chain_totals t USING (trace_id, chain_id)
    LEFT JOIN reads rd USING (trace_id, chain_id)
    LEFT JOIN writes wr USING (trace_id, chain_id)
    LEFT JOIN fusion_rates r ON r.trace_id = k.trace_id AND r.device_id = k.device_id
),
costed AS (
    SELECT *, bytes_fused / (stream_tbps * 1e3) + launch_ns AS fused_ns_raw FROM predicted
)
SELECT trace_id, pid, device_id, stream_id, step, chain_no, start_ns, end_ns, kernels, kernel_names, calls,
       operators, shapes, md5(kernel_names || '|' || operators || '|' || coalesce(shapes, '')) AS signature,
       python_location, python_locations, CAST(device_ns AS BIGINT) AS device_ns, bytes_now, bytes_fused,
       CAST(fused_ns_raw AS BIGINT) AS fused_ns,
       CAST(CASE WHEN fused_ns_raw IS NOT NULL THEN greatest(device_ns - fused_ns_raw, 0) END AS BIGINT) AS saved_ns,
       kernels - 1 AS launches_saved
FROM costed;
