-- api_all: CUDA/HIP API calls with the name NVIDIA's reports print: the runtime's
-- version suffix ('cudaLaunchKernel_v7000') removed. Includes the twin rows that nsys
-- --cudabacktrace adds per traced call (api = 'backtrace'), which some of NVIDIA's
-- reports count.
-- api: the same, one row per real call (twins left out). Use this one.
--
-- depends: api_calls
--
-- @column trace_id        Trace.
-- @column start_ns        Call start (ns).
-- @column end_ns          Call end (ns).
-- @column duration_ns     end_ns - start_ns.
-- @column pid             Process.
-- @column tid             Thread.
-- @column correlation_id  Id shared with the GPU work it launched.
-- @column api             'runtime', 'driver', 'backtrace' (api_all only) or another library.
-- @column name            API name without a '_vNNNN' suffix.
-- @column raw_name        API name as recorded.
CREATE OR REPLACE VIEW api_all AS
SELECT trace_id, start_ns, end_ns, duration_ns, pid, tid, correlation_id, api,
       regexp_replace(name, '_v[0-9]{4}$', '') AS name,
       name AS raw_name
FROM api_calls;

CREATE OR REPLACE VIEW api AS
SELECT * FROM api_all
WHERE api IS DISTINCT FROM 'backtrace';
