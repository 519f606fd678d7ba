-- graph_launches: the API calls that replay a CUDA/HIP graph (cudaGraphLaunch,
-- cuGraphLaunch, hipGraphLaunch), one row per replay. Every GPU operation a replay
-- runs carries the correlation id of its launch call (CUPTI, roctracer: Kineto's
-- 'correlation' arg, nsys correlationId), so a replay is one launch of many operations.
--
-- depends: api
--
-- @column trace_id        Trace.
-- @column pid             Process.
-- @column tid             Thread that launched the graph.
-- @column correlation_id  Id shared by the launch call and every operation of the replay.
-- @column api_name        Launch call name (cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch).
-- @column start_ns        Start of the launch call (ns).
-- @column end_ns          End of the launch call (ns).
-- @column launch_ns       Duration of the launch call on the CPU: the host cost of one replay (ns).
CREATE OR REPLACE VIEW graph_launches AS
SELECT trace_id, pid, tid, correlation_id, name AS api_name, start_ns, end_ns, duration_ns AS launch_ns
FROM api
WHERE correlation_id IS NOT NULL
  -- ^(cuda|cu|hip)GraphLaunch, as prefix tests (a regular expression costs 4x more per call)
  AND (starts_with(name, 'cudaGraphLaunch') OR starts_with(name, 'cuGraphLaunch')
       OR starts_with(name, 'hipGraphLaunch'));
