-- NVIDIA's four nsys analyze rules. The three that look at GPU copies and memsets
-- find the API call that issued the operation by correlation id. Correlation ids are
-- unique per process only; NVIDIA's rules join on the id alone, so in a multi-process
-- export an operation can also match another process's call and be listed twice.
-- Each of these rules is therefore a macro with a flag: per_process = true joins on
-- (pid, correlation id), the correct rule, used by the finding_* views (each a rule of findings);
-- per_process = false reproduces NVIDIA's output (the nsys_analyze_* views, for parity: tracelake stats), which
-- also matches the --cudabacktrace twin of each call (api_all) and so lists those
-- copies twice.
--
-- cuda_memcpy_async_rule(per_process), finding_cuda_memcpy_async: asynchronous copies that touch pageable host memory
-- and so run synchronously (NVIDIA's nsys analyze rule cuda_memcpy_async). One row
-- per copy; start and duration are the GPU copy's.
--
-- depends: memcpy, memset, api, api_all
-- materialize: per trace
--
-- @column trace_id     Trace.
-- @column rule         Rule name (NVIDIA's where it is one of theirs).
-- @column severity     'warning' or 'info'.
-- @column pid          Process.
-- @column tid          Thread that made the API call.
-- @column device_id    GPU (NULL for host-side findings).
-- @column stream_id    Stream (NULL for host-side findings).
-- @column start_ns     Start of the flagged operation or API call (ns).
-- @column duration_ns  Its duration (ns).
-- @column api_name     The API call involved, as recorded.
-- @column evidence     What was seen, in words.
-- @column advice       What to do about it.
CREATE OR REPLACE MACRO cuda_memcpy_async_rule(per_process) AS TABLE
SELECT m.trace_id, 'cuda_memcpy_async' AS rule, 'warning' AS severity, m.pid, a.tid,
       m.device_id, m.stream_id, m.start_ns, m.duration_ns, a.raw_name AS api_name,
       printf('%s copied %.3f MB %s -> %s: pageable host memory makes the copy synchronous',
              a.raw_name, m.bytes / 1e6, m.src_kind, m.dst_kind) AS evidence,
       'Copy from pinned host memory (torch: pin_memory=True in the DataLoader, '
       || 'tensor.pin_memory(), then .to(device, non_blocking=True)).' AS advice
FROM memcpy m
JOIN api_all a ON a.trace_id = m.trace_id AND a.correlation_id = m.correlation_id
              AND ((a.pid = m.pid AND a.api IS DISTINCT FROM 'backtrace') OR NOT per_process)
WHERE a.name LIKE 'cudaMemcpy%Async%'
  AND (m.src_kind = 'pageable' OR m.dst_kind = 'pageable');

-- cuda_memcpy_sync_rule(per_process), finding_cuda_memcpy_sync: synchronous memcpy API calls that block the host (NVIDIA's
-- cuda_memcpy_sync). Host-to-device copies of at most 64,000 bytes (which the driver
-- stages and returns from early) and copies within one device are exempt, as in
-- NVIDIA's rule. Start and duration are the GPU copy's. (columns as above)
CREATE OR REPLACE MACRO cuda_memcpy_sync_rule(per_process) AS TABLE
SELECT m.trace_id, 'cuda_memcpy_sync' AS rule, 'warning' AS severity, m.pid, a.tid,
       m.device_id, m.stream_id, m.start_ns, m.duration_ns, a.raw_name AS api_name,
       printf('%s copied %.3f MB %s -> %s and blocked the calling thread',
              a.raw_name, m.bytes / 1e6, m.src_kind, m.dst_kind) AS evidence,
       'Use cudaMemcpyAsync on a stream with pinned host memory and synchronize only when '
       || 'the data is needed (torch: non_blocking=True; avoid .item()/.cpu() in the loop).' AS advice
FROM memcpy m
JOIN api_all a ON a.trace_id = m.trace_id AND a.correlation_id = m.correlation_id
              AND ((a.pid = m.pid AND a.api IS DISTINCT FROM 'backtrace') OR NOT per_process)
WHERE a.name LIKE 'cudaMemcpy%' AND a.name NOT LIKE '%Async%'
  AND NOT (m.bytes <= 64000 AND m.copy_kind = 'HtoD')
  AND NOT coalesce(m.src_device_id = m.dst_device_id, false);

-- cuda_memset_sync_rule(per_process), finding_cuda_memset_sync: synchronous memsets of pinned or managed memory, which
-- block the host (NVIDIA's cuda_memset_sync). Start and duration are the GPU memset's.
-- (columns as above)
CREATE OR REPLACE MACRO cuda_memset_sync_rule(per_process) AS TABLE
SELECT m.trace_id, 'cuda_memset_sync' AS rule, 'warning' AS severity, m.pid, a.tid,
       m.device_id, m.stream_id, m.start_ns, m.duration_ns, a.raw_name AS api_name,
       printf('%s set %.3f MB of %s memory synchronously', a.raw_name, m.bytes / 1e6,
              m.mem_kind) AS evidence,
       'Use cudaMemsetAsync on a stream.' AS advice
FROM memset m
JOIN api_all a ON a.trace_id = m.trace_id AND a.correlation_id = m.correlation_id
              AND ((a.pid = m.pid AND a.api IS DISTINCT FROM 'backtrace') OR NOT per_process)
WHERE a.name LIKE 'cudaMemset%' AND lower(a.name) NOT LIKE '%async%'
  AND m.mem_kind IN ('pinned', 'managed');

-- cuda_api_sync_rule(with_twins), finding_cuda_api_sync: host-blocking
-- synchronization calls (NVIDIA's cuda_api_sync): cudaDeviceSynchronize and
-- cudaStreamSynchronize. Start and duration are the API call's. NVIDIA's output
-- (with_twins = true, nsys_analyze_cuda_api_sync) also lists each call's
-- --cudabacktrace twin. (columns as above)
CREATE OR REPLACE MACRO cuda_api_sync_rule(with_twins) AS TABLE
SELECT trace_id, 'cuda_api_sync' AS rule, 'info' AS severity, pid, tid,
       CAST(NULL AS INTEGER) AS device_id, CAST(NULL AS BIGINT) AS stream_id,
       start_ns, duration_ns, raw_name AS api_name,
       printf('%s blocked the calling thread for %.3f ms', raw_name, duration_ns / 1e6) AS evidence,
       'Synchronize only where the host needs the result; wait on events '
       || '(cudaStreamWaitEvent, cudaEventSynchronize) instead of whole streams or the device.' AS advice
FROM api_all
WHERE (name LIKE 'cudaDeviceSynchronize%' OR name LIKE 'cudaStreamSynchronize%')
  AND (api IS DISTINCT FROM 'backtrace' OR with_twins);

-- finding_cuda_memcpy_async, finding_cuda_memcpy_sync: the rules above, done right.
-- finding_cuda_memset_sync, finding_cuda_api_sync: the rules above, done right.
-- nsys_analyze_cuda_memcpy_async, nsys_analyze_cuda_memcpy_sync: NVIDIA's output.
-- nsys_analyze_cuda_memset_sync, nsys_analyze_cuda_api_sync: NVIDIA's output.
CREATE OR REPLACE VIEW finding_cuda_memcpy_async AS SELECT * FROM cuda_memcpy_async_rule(true);
CREATE OR REPLACE VIEW finding_cuda_memcpy_sync AS SELECT * FROM cuda_memcpy_sync_rule(true);
CREATE OR REPLACE VIEW finding_cuda_memset_sync AS SELECT * FROM cuda_memset_sync_rule(true);
CREATE OR REPLACE VIEW nsys_analyze_cuda_memcpy_async AS SELECT * FROM cuda_memcpy_async_rule(false);
CREATE OR REPLACE VIEW nsys_analyze_cuda_memcpy_sync AS SELECT * FROM cuda_memcpy_sync_rule(false);
CREATE OR REPLACE VIEW nsys_analyze_cuda_memset_sync AS SELECT * FROM cuda_memset_sync_rule(false);
CREATE OR REPLACE VIEW finding_cuda_api_sync AS SELECT * FROM cuda_api_sync_rule(false);
CREATE OR REPLACE VIEW nsys_analyze_cuda_api_sync AS SELECT * FROM cuda_api_sync_rule(true);
