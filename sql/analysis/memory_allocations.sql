-- memory_allocations: every block, its allocation paired with its free (the next event at
-- the same address on the same process and device, in time order; paired at ingest into
-- memory_blocks, analysis/memory_context.py). One row per block:
-- - 'freed': allocated and freed within the trace;
-- - 'never_freed': allocated in the trace and still alive at its end (a leak, or long-lived
--   state such as optimizer state or a cache);
-- - 'alive_before_trace': freed in the trace at an address it never saw allocated, so
--   allocated before the trace started (parameters, state from earlier steps);
-- - 'free_missing': allocated again at its address before any free was recorded.
-- With where each end happened: operator, calling context (Python stack > operators, or
-- the native backtrace), NVTX ranges, and the allocation site's category. Events without
-- an address (2021 traces) cannot be paired and are left out.
--
-- depends: memory_device_blocks, memory_call_contexts
--
-- @column trace_id          Trace.
-- @column source            'pytorch_allocator' or 'cuda_memory_usage_events'.
-- @column pid               Process.
-- @column device_type       'cuda' or 'cpu'.
-- @column device_id         Device (-1 for the CPU).
-- @column address           Block address.
-- @column bytes             Block size (bytes).
-- @column status            'freed', 'never_freed', 'alive_before_trace' or 'free_missing'.
-- @column alloc_event_id    Allocation event (NULL for 'alive_before_trace').
-- @column free_event_id     Free event (NULL when not freed in the trace).
-- @column alloc_ns          When it was allocated (ns; NULL for 'alive_before_trace').
-- @column free_ns           When it was freed (ns; NULL when not freed in the trace).
-- @column lifetime_ns       free_ns - alloc_ns (ns; NULL unless 'freed').
-- @column alloc_operator    Innermost operator around the allocation.
-- @column alloc_call_stack  Calling context of the allocation, outermost first.
-- @column alloc_nvtx_path   NVTX ranges / annotations around the allocation.
-- @column category          Allocation site: 'optimizer', 'backward', 'forward', 'other';
--                           'before trace' for 'alive_before_trace'.
-- @column free_operator     Innermost operator around the free.
-- @column free_call_stack   Calling context of the free.
-- @column free_nvtx_path    NVTX ranges / annotations around the free.
CREATE OR REPLACE VIEW memory_allocations AS
SELECT b.trace_id, b.source, b.pid, b.device_type, b.device_id, b.address, b.bytes, b.status,
       b.alloc_event_id, b.free_event_id, b.alloc_ns, b.free_ns, b.free_ns - b.alloc_ns AS lifetime_ns,
       a.operator AS alloc_operator, a.call_stack AS alloc_call_stack, a.nvtx_path AS alloc_nvtx_path,
       CASE WHEN b.alloc_event_id IS NULL THEN 'before trace' ELSE a.category END AS category,
       f.operator AS free_operator, f.call_stack AS free_call_stack, f.nvtx_path AS free_nvtx_path
FROM memory_device_blocks b
LEFT JOIN memory_call_contexts a ON a.trace_id = b.trace_id AND a.context_id = b.alloc_context_id
LEFT JOIN memory_call_contexts f ON f.trace_id = b.trace_id AND f.context_id = b.free_context_id;
