-- fusion_kernels: every kernel in the order its stream ran it, with what the fusion views
-- need to cut the stream into chains: the training step it was launched in, the modelled
-- operator call it belongs to (op_models: the outermost modelled call around its launch
-- call, as op_efficiency assigns GPU time), and whether it is fusable. One row per kernel.
--
-- Fusable ('memory'): a kernel of a call of the bytes-only families of op_models (norms,
-- softmax, elementwise operators, reductions): memory-bound by op_efficiency's definition,
-- and the operations a compiler fuses. Except random-number operators (dropout, bernoulli,
-- rand, ...): generating the numbers is work, not bytes, and a fused kernel does it too
-- (Inductor's fused GELU + dropout ran as long as eager's two kernels on the recorded MLP),
-- so no saving is promised for them. Every other kernel ('barrier': GEMMs, convolutions,
-- attention, random-number, optimizer and copy kernels, kernels of unmodelled operators such
-- as the Triton kernels of a compiled program, kernels of CUDA graph replays, kernels launched
-- outside any operator) ends a chain. Memory copies and memsets are not kernels: they do not
-- end a chain.
--
-- depends: kernels, api, op_models, step_ranges
-- materialize: per trace
--
-- @column trace_id     Trace.
-- @column pid          Process.
-- @column device_id    GPU.
-- @column stream_id    Stream.
-- @column step         Training step the launch call is in (step_ranges; by the kernel's GPU start
--                      when no launch call is recorded); NULL outside steps.
-- @column seq          Position of the kernel on its stream within the step (1 = first).
-- @column start_ns     Kernel start on the GPU (ns).
-- @column duration_ns  Kernel duration (ns).
-- @column name         Kernel name.
-- @column launch_ns    Start of the launch call on the CPU (ns; NULL when not recorded).
-- @column op_id        op_models.op_id of the modelled call it belongs to (NULL: none).
-- @column op_name      That call's operator name.
-- @column category     That call's op_category.
-- @column kind         'memory' (fusable) or 'barrier' (ends a chain).
-- @column chain_no     Number of barriers before it on its stream in the step: consecutive fusable
--                      kernels share it.
CREATE OR REPLACE VIEW fusion_kernels AS
WITH m AS MATERIALIZED (
    SELECT trace_id, op_id, pid, tid, start_ns, end_ns, name, category, model FROM op_models
),
launched AS (
    SELECT k.trace_id, k.pid, k.device_id, k.stream_id, k.start_ns, k.duration_ns, k.name, k.graph_id,
           a.tid, a.start_ns AS launch_ns
    FROM kernels k
    LEFT JOIN api a ON a.trace_id = k.trace_id AND a.pid = k.pid AND a.correlation_id = k.correlation_id
                   AND a.api <> 'backtrace'
),
owned AS (
    -- the modelled calls do not nest: the latest one that started before the launch is the only candidate
    SELECT l.*, CASE WHEN l.launch_ns <= m.end_ns THEN m.op_id END AS op_id,
           CASE WHEN l.launch_ns <= m.end_ns THEN m.name END AS op_name,
           CASE WHEN l.launch_ns <= m.end_ns THEN m.category END AS category,
           CASE WHEN l.launch_ns <= m.end_ns THEN m.model END AS model
    FROM launched l
    ASOF LEFT JOIN m ON m.trace_id = l.trace_id AND m.pid = l.pid AND m.tid = l.tid AND m.start_ns <= l.launch_ns
),
stepped AS (
    SELECT o.*, CASE WHEN coalesce(o.launch_ns, o.start_ns) < s.end_ns THEN s.step END AS step,
           CASE WHEN o.model = 'bytes' AND o.graph_id IS NULL AND NOT regexp_matches(o.op_name,
                         '::(native_dropout|dropout|feature_dropout|alpha_dropout|bernoulli_?|rand|randn|rand_like|randn_like|uniform_|normal_|exponential_)$')
                THEN 'memory' ELSE 'barrier' END AS kind
    FROM owned o
    ASOF LEFT JOIN step_ranges s ON s.trace_id = o.trace_id AND s.pid = o.pid
                                AND s.start_ns <= coalesce(o.launch_ns, o.start_ns)
)
SELECT trace_id, pid, device_id, stream_id, step,
       row_number() OVER w AS seq,
       start_ns, duration_ns, name, launch_ns, op_id, op_name, category, kind,
       sum(CASE WHEN kind = 'barrier' THEN 1 ELSE 0 END) OVER w AS chain_no
FROM stepped
WINDOW w AS (PARTITION BY trace_id, pid, device_id, stream_id, step ORDER BY start_ns, name
             ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);
