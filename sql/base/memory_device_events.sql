-- memory_device_events: the allocator events the memory views count, and where their
-- numbers come from (memory_context, joined on trace_id and event_id, says where each
-- happened). PyTorch: every [memory] event (CUDA and CPU allocators). Nsight: the CUDA memory usage events of device memory
-- allocated through the CUDA API (memory kinds device, managed, array); host allocations
-- (pinned, pageable) and static module memory (device_static, managed_static) are left out.
-- memory_device_blocks: the blocks (memory_blocks: allocations paired with their frees at
-- ingest) of those events, with their source.
--
-- depends: memory_events, memory_blocks
--
-- @column trace_id               Trace.
-- @column source                 'pytorch_allocator' (the caching allocator's own totals) or
--                                'cuda_memory_usage_events' (nsys --cuda-memory-usage=true).
-- @column pid                    Process.
-- @column tid                    Thread (NULL for nsys).
-- @column device_type            'cuda' or 'cpu'.
-- @column device_id              Device (-1 for the CPU).
-- @column event_id               memory_events.event_id (time order).
-- @column ts_ns                  When (ns).
-- @column address                Block address.
-- @column bytes                  Signed size: > 0 allocation, < 0 free (bytes).
-- @column total_allocated_bytes  PyTorch: allocated on the device after the event (bytes).
-- @column total_reserved_bytes   PyTorch: reserved by the caching allocator after the event (bytes).
-- @column correlation_id         nsys: the allocating or freeing API call.
CREATE OR REPLACE VIEW memory_device_events AS
SELECT m.trace_id,
       -- only nsys fills mem_kind (this saves reading traces in every memory view)
       CASE WHEN m.mem_kind IS NULL THEN 'pytorch_allocator' ELSE 'cuda_memory_usage_events' END AS source,
       m.pid, m.tid, m.device_type, m.device_id, m.event_id, m.ts_ns, m.address, m.bytes,
       m.total_allocated_bytes, m.total_reserved_bytes, m.correlation_id
FROM memory_events m
WHERE m.mem_kind IS NULL OR m.mem_kind IN ('device', 'managed', 'array');

-- memory_device_blocks: (the columns of memory_blocks, and source)
--
-- @column mem_kind          nsys memory kind (NULL for PyTorch).
-- @column status            'freed', 'never_freed', 'free_missing' or 'alive_before_trace'.
-- @column alloc_event_id    Allocation event (NULL: allocated before the trace).
-- @column free_event_id     Free event (NULL: not freed in the trace).
-- @column alloc_ns          When it was allocated (ns).
-- @column free_ns           When it was freed (ns).
-- @column alloc_context_id  memory_call_contexts.context_id of the allocation.
-- @column free_context_id   memory_call_contexts.context_id of the free.
CREATE OR REPLACE VIEW memory_device_blocks AS
SELECT CASE WHEN mem_kind IS NULL THEN 'pytorch_allocator' ELSE 'cuda_memory_usage_events' END AS source, *
FROM memory_blocks
WHERE mem_kind IS NULL OR mem_kind IN ('device', 'managed', 'array');
