-- chrome_trace_events(trace): one trace as Chrome trace-event JSON objects (the Trace Event
-- Format that chrome://tracing, Perfetto's UI and PyTorch's profiler use): `tracelake export`
-- writes them, one per line, into {"traceEvents": [...]}.
-- The original events, in the PyTorch profiler's (Kineto's) categories so that tracelake and
-- the viewers read them as such: kernels ('kernel'), copies ('gpu_memcpy'), memsets
-- ('gpu_memset') on pid = GPU, tid = stream; CUDA API calls ('cuda_runtime' / 'cuda_driver'),
-- operators ('cpu_op'), ranges ('user_annotation', 'gpu_user_annotation') and Python frames
-- ('python_function') on their process and thread; the launch of each GPU operation as a flow
-- ('ac2g', from the API call to the operation, id = correlation id). An event keeps the args the
-- trace recorded (args_json), else gets device, stream, correlation and bytes.
-- tracelake's analysis, category 'tracelake', on a process of its own (pid 2147483647,
-- 'tracelake analysis'): tid 1 the steps (steps, with their phase), tid 2 the critical path
-- (critical_path edges with time on the path), tid 100 + d GPU d's idle gaps over 10 us
-- (largest_gpu_gaps: cause, what ended the gap, what the host was in), and the findings as
-- global instant events (ph 'i') with their evidence and advice; on the findings thread, a
-- zero-length slice 'trace start' at the trace's start (traces.start_ns, the earliest event), so
-- that the file's first timestamp is the trace's start: Perfetto's UI counts time from there,
-- as the report pages' 'at' times do.
-- Times: ts and dur in microseconds with three decimals, exact to the nanosecond, on the
-- trace's clock.
--
-- depends: kernels, memcpy, memset, api_calls, cpu_ops, annotations, python_frames, steps, step_phases,
--          critical_path, largest_gpu_gaps, findings, traces
--
-- @column ts_ns  Event time (ns): the order of the lines (tracelake export orders events of one
--                time by their text).
-- @column event  The event as a JSON object.
CREATE OR REPLACE MACRO _chrome_trace_us(ns) AS CAST(ns AS DECIMAL(38, 3)) / 1000;

CREATE OR REPLACE MACRO chrome_trace_events(trace) AS TABLE
WITH gpu AS (
    SELECT 'kernel' AS cat, start_ns, duration_ns, device_id, stream_id, pid, correlation_id, name,
           CAST(NULL AS BIGINT) AS bytes, args_json
    FROM kernels WHERE trace_id = trace
    UNION ALL
    SELECT 'gpu_memcpy', start_ns, duration_ns, device_id, stream_id, pid, correlation_id, name, bytes, args_json
    FROM memcpy WHERE trace_id = trace
    UNION ALL
    SELECT 'gpu_memset', start_ns, duration_ns, device_id, stream_id, pid, correlation_id, name, bytes, args_json
    FROM memset WHERE trace_id = trace
),
calls AS (
    SELECT * FROM api_calls WHERE trace_id = trace AND api IS DISTINCT FROM 'backtrace'
),
launch AS (
    SELECT correlation_id, pid, any_value(tid) AS tid, min(start_ns) AS start_ns
    FROM calls WHERE correlation_id IS NOT NULL GROUP BY ALL
),
analysis AS (
    SELECT 1 AS tid, s.start_ns, s.end_ns - s.start_ns AS duration_ns, s.step AS name,
           to_json({'phase': p.phase, 'step_index': s.step_index, 'pid': s.pid}) AS args
    FROM steps s JOIN step_phases p USING (trace_id, pid, step_index) WHERE s.trace_id = trace
    UNION ALL
    SELECT 2, start_ns, end_ns - start_ns, coalesce(name, edge_type),
           to_json({'class': class, 'edge_type': edge_type, 'step': step, 'path_order': path_order,
                    'weight_ns': weight_ns, 'pid': pid})
    FROM critical_path WHERE trace_id = trace AND weight_ns > 0
    UNION ALL
    SELECT 100 + device_id, start_ns, duration_ns, 'GPU idle: ' || cause,
           to_json({'cause': cause, 'ended_by': next_op, 'launch_api': launch_api,
                    'launched_after_ns': launch_delay_ns, 'host_was_in': host_activity, 'pid': pid})
    FROM largest_gpu_gaps WHERE trace_id = trace
)
SELECT start_ns AS ts_ns,
       to_json({'ph': 'X', 'cat': cat, 'name': name, 'pid': device_id, 'tid': stream_id,
                'ts': _chrome_trace_us(start_ns), 'dur': _chrome_trace_us(duration_ns),
                'args': coalesce(json(args_json), to_json({'device': device_id, 'stream': stream_id,
                                                           'correlation': correlation_id, 'bytes': bytes}))})
           AS event
FROM gpu
UNION ALL
SELECT l.start_ns,
       to_json({'ph': 's', 'cat': 'ac2g', 'name': 'ac2g', 'id': g.correlation_id, 'pid': l.pid, 'tid': l.tid,
                'ts': _chrome_trace_us(l.start_ns)})
FROM gpu g JOIN launch l ON l.pid = g.pid AND l.correlation_id = g.correlation_id
UNION ALL
SELECT g.start_ns,
       to_json({'ph': 'f', 'bp': 'e', 'cat': 'ac2g', 'name': 'ac2g', 'id': g.correlation_id, 'pid': g.device_id,
                'tid': g.stream_id, 'ts': _chrome_trace_us(g.start_ns)})
FROM gpu g JOIN launch l ON l.pid = g.pid AND l.correlation_id = g.correlation_id
UNION ALL
SELECT start_ns,
       to_json({'ph': 'X', 'cat': CASE WHEN api = 'driver' THEN 'cuda_driver' ELSE 'cuda_runtime' END,
                'name': name, 'pid': pid, 'tid': tid, 'ts': _chrome_trace_us(start_ns),
                'dur': _chrome_trace_us(duration_ns),
                'args': coalesce(json(args_json), to_json({'correlation': correlation_id}))})
FROM calls
UNION ALL
SELECT start_ns,
       to_json({'ph': 'X', 'cat': 'cpu_op', 'name': name, 'pid': pid, 'tid': tid, 'ts': _chrome_trace_us(start_ns),
                'dur': _chrome_trace_us(duration_ns), 'args': coalesce(json(args_json), json('{}'))})
FROM cpu_ops WHERE trace_id = trace
UNION ALL
SELECT start_ns,
       to_json({'ph': 'X', 'cat': CASE WHEN is_gpu THEN 'gpu_user_annotation' ELSE 'user_annotation' END,
                'name': name, 'pid': pid, 'tid': tid, 'ts': _chrome_trace_us(start_ns),
                'dur': _chrome_trace_us(duration_ns), 'args': coalesce(json(args_json), json('{}'))})
FROM annotations WHERE trace_id = trace
UNION ALL
SELECT start_ns,
       to_json({'ph': 'X', 'cat': 'python_function', 'name': name, 'pid': pid, 'tid': tid,
                'ts': _chrome_trace_us(start_ns), 'dur': _chrome_trace_us(duration_ns),
                'args': {'Python id': frame_id, 'Python parent id': parent_frame_id}})
FROM python_frames WHERE trace_id = trace
UNION ALL
SELECT start_ns,
       to_json({'ph': 'X', 'cat': 'tracelake', 'name': name, 'pid': 2147483647, 'tid': tid,
                'ts': _chrome_trace_us(start_ns), 'dur': _chrome_trace_us(duration_ns), 'args': args})
FROM analysis
UNION ALL
SELECT coalesce(f.start_ns, t.start_ns),
       to_json({'ph': 'i', 's': 'g', 'cat': 'tracelake', 'name': 'finding: ' || f.rule, 'pid': 2147483647, 'tid': 3,
                'ts': _chrome_trace_us(coalesce(f.start_ns, t.start_ns)),
                'args': {'severity': f.severity, 'evidence': f.evidence, 'advice': f.advice,
                         'duration_ns': f.duration_ns}})
FROM findings f JOIN traces t USING (trace_id) WHERE f.trace_id = trace
UNION ALL
SELECT start_ns, to_json({'ph': 'X', 'cat': 'tracelake', 'name': 'trace start', 'pid': 2147483647, 'tid': 3,
                          'ts': _chrome_trace_us(start_ns), 'dur': 0,
                          'args': {'note': 'times on tracelake pages count from here'}})
FROM traces WHERE trace_id = trace
UNION ALL
SELECT t.start_ns, to_json({'ph': 'M', 'name': m.name, 'pid': 2147483647, 'tid': m.tid, 'args': {'name': m.label}})
FROM traces t, (VALUES ('process_name', 0, 'tracelake analysis'), ('thread_name', 1, 'steps'),
                       ('thread_name', 2, 'critical path'), ('thread_name', 3, 'findings')) m(name, tid, label)
WHERE t.trace_id = trace
UNION ALL
SELECT min(start_ns), to_json({'ph': 'M', 'name': 'thread_name', 'pid': 2147483647, 'tid': 100 + device_id,
                               'args': {'name': 'GPU ' || device_id || ' idle'}})
FROM largest_gpu_gaps WHERE trace_id = trace GROUP BY device_id;
