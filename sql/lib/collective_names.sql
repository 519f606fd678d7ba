-- Collective vocabulary shared by the collective views: one spelling for the operations
-- and element types that PyTorch (record_param_comms 'Collective name', nccl:* and
-- c10d:: op names, 'dtype', 'Input type'), NCCL/RCCL kernel names and NCCL's NVTX ranges
-- write in many ways, and nccl-tests' bus-bandwidth factors.
--
-- collective_operation(label): 'all_reduce', 'all_gather', 'reduce_scatter',
--   'all_to_all', 'broadcast', 'reduce', 'send', 'recv', 'send_recv', 'gather',
--   'scatter' or 'barrier' for a label such as 'allreduce', 'nccl:all_reduce',
--   'c10d::_allgather_base_', '_reduce_scatter_base', 'all_to_all_single', 'ncclAllReduce'
--   or a kernel name ('ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)'); NULL otherwise
--   (RCCL's 'ncclDevKernel_Generic', 'ncclGroupEnd').
-- collective_dtype(label): canonical element type ('float32', 'bfloat16', 'float16',
--   'float64', 'int8', 'uint8', 'int16', 'int32', 'uint32', 'int64', 'uint64', 'bool',
--   'float8_e4m3fn', 'float8_e5m2') for 'Float', 'c10::BFloat16', 'long int', 'f32',
--   '__nv_bfloat16', ...; NULL when unknown.
-- collective_kernel_dtype(kernel_name): the element type in a reducing NCCL kernel's
--   name (AllReduce_Sum_f32, AllReduce_RING_LL_Sum_float); NULL for kernels that move
--   bytes (SendRecv, AllGather, Broadcast: their int8 is not the tensor's type).
-- dtype_size_bytes(dtype): bytes per element of a canonical dtype.
-- collective_bytes(operation, in_bytes, out_bytes, group_size): the per-rank buffer size
--   nccl-tests prints as 'size': the larger of input and output (all-gather: the
--   gathered output; reduce-scatter: the full input).
-- nccl_bus_factor(operation, n): nccl-tests' busbw / algbw: all-reduce 2(n-1)/n;
--   all-gather, reduce-scatter, all-to-all, gather, scatter (n-1)/n; broadcast, reduce,
--   send/recv 1.
--
-- depends: (none)
CREATE OR REPLACE MACRO collective_operation(label) AS
CASE regexp_replace(
         regexp_replace(
             lower(coalesce(nullif(regexp_extract(label, '^(?:nccl|rccl)(?:Dev)?Kernel_([A-Za-z]+)', 1, 'i'), ''),
                            regexp_replace(label, '^(nccl:|c10d::|nccl|rccl)', '', 'i'))),
             '(_base|_coalesced|_into_tensor|_tensor|_single)', '', 'g'),
         '[_ ]', '', 'g')
    WHEN 'allreduce' THEN 'all_reduce'
    WHEN 'allgather' THEN 'all_gather'
    WHEN 'reducescatter' THEN 'reduce_scatter'
    WHEN 'alltoall' THEN 'all_to_all'
    WHEN 'alltoallv' THEN 'all_to_all'
    WHEN 'broadcast' THEN 'broadcast'
    WHEN 'reduce' THEN 'reduce'
    WHEN 'send' THEN 'send'
    WHEN 'recv' THEN 'recv'
    WHEN 'sendrecv' THEN 'send_recv'
    WHEN 'gather' THEN 'gather'
    WHEN 'scatter' THEN 'scatter'
    WHEN 'barrier' THEN 'barrier'
    WHEN 'allreducebarrier' THEN 'barrier'
END;

CREATE OR REPLACE MACRO collective_dtype(label) AS
CASE regexp_replace(lower(trim(label)), '^(c10::|torch\.|at::)', '')
    WHEN 'float' THEN 'float32' WHEN 'float32' THEN 'float32' WHEN 'f32' THEN 'float32'
    WHEN 'bfloat16' THEN 'bfloat16' WHEN 'bf16' THEN 'bfloat16' WHEN '__nv_bfloat16' THEN 'bfloat16'
    WHEN 'half' THEN 'float16' WHEN 'float16' THEN 'float16' WHEN 'f16' THEN 'float16' WHEN '__half' THEN 'float16'
    WHEN 'double' THEN 'float64' WHEN 'float64' THEN 'float64' WHEN 'f64' THEN 'float64'
    WHEN 'long' THEN 'int64' WHEN 'long int' THEN 'int64' WHEN 'int64' THEN 'int64' WHEN 'i64' THEN 'int64'
    WHEN 'int64_t' THEN 'int64' WHEN 'long long' THEN 'int64'
    WHEN 'uint64' THEN 'uint64' WHEN 'u64' THEN 'uint64' WHEN 'uint64_t' THEN 'uint64'
    WHEN 'int' THEN 'int32' WHEN 'int32' THEN 'int32' WHEN 'i32' THEN 'int32' WHEN 'int32_t' THEN 'int32'
    WHEN 'uint32' THEN 'uint32' WHEN 'u32' THEN 'uint32' WHEN 'uint32_t' THEN 'uint32'
    WHEN 'short' THEN 'int16' WHEN 'short int' THEN 'int16' WHEN 'int16' THEN 'int16'
    WHEN 'byte' THEN 'uint8' WHEN 'unsigned char' THEN 'uint8' WHEN 'uint8' THEN 'uint8' WHEN 'u8' THEN 'uint8'
    WHEN 'uint8_t' THEN 'uint8'
    WHEN 'char' THEN 'int8' WHEN 'signed char' THEN 'int8' WHEN 'int8' THEN 'int8' WHEN 'i8' THEN 'int8'
    WHEN 'int8_t' THEN 'int8'
    WHEN 'bool' THEN 'bool'
    WHEN 'float8_e4m3fn' THEN 'float8_e4m3fn' WHEN 'f8e4m3' THEN 'float8_e4m3fn' WHEN '__nv_fp8_e4m3' THEN 'float8_e4m3fn'
    WHEN 'float8_e5m2' THEN 'float8_e5m2' WHEN 'f8e5m2' THEN 'float8_e5m2' WHEN '__nv_fp8_e5m2' THEN 'float8_e5m2'
END;

CREATE OR REPLACE MACRO collective_kernel_dtype(kernel_name) AS
CASE WHEN collective_operation(kernel_name) IN ('all_reduce', 'reduce_scatter', 'reduce')
     THEN collective_dtype(nullif(regexp_extract(
              kernel_name, '_(?:Sum|Prod|Max|Min|Avg|PreMulSum|SumPostDiv)_(__nv_[a-z0-9_]+?|[a-z0-9]+_t|[a-z0-9]+)(?:[_(]|$)',
              1, 'i'), ''))
END;

CREATE OR REPLACE MACRO dtype_size_bytes(dtype) AS
CASE dtype
    WHEN 'float64' THEN 8 WHEN 'int64' THEN 8 WHEN 'uint64' THEN 8
    WHEN 'float32' THEN 4 WHEN 'int32' THEN 4 WHEN 'uint32' THEN 4
    WHEN 'bfloat16' THEN 2 WHEN 'float16' THEN 2 WHEN 'int16' THEN 2
    WHEN 'int8' THEN 1 WHEN 'uint8' THEN 1 WHEN 'bool' THEN 1
    WHEN 'float8_e4m3fn' THEN 1 WHEN 'float8_e5m2' THEN 1
END;

CREATE OR REPLACE MACRO collective_bytes(operation, in_bytes, out_bytes, group_size) AS
CASE operation
    WHEN 'all_gather' THEN coalesce(out_bytes, in_bytes * group_size)
    WHEN 'reduce_scatter' THEN coalesce(in_bytes, out_bytes * group_size)
    ELSE coalesce(greatest(in_bytes, out_bytes), in_bytes, out_bytes)
END;

CREATE OR REPLACE MACRO nccl_bus_factor(operation, n) AS
CASE WHEN n IS NULL OR n < 1 THEN NULL
     WHEN operation IN ('all_reduce', 'barrier') THEN 2.0 * (n - 1) / n
     WHEN operation IN ('all_gather', 'reduce_scatter', 'all_to_all', 'gather', 'scatter') THEN 1.0 * (n - 1) / n
     WHEN operation IN ('broadcast', 'reduce', 'send', 'recv', 'send_recv') THEN 1.0
END;
