-- collective_dtype(label): the canonical element type ('float32', 'bfloat16', 'float16',
-- 'float64', 'int8', 'uint8', 'int16', 'int32', 'uint32', 'int64', 'uint64', 'bool',
-- 'float8_e4m3fn', 'float8_e5m2') for the spellings of record_param_comms 'dtype'
-- ('Float', 'BFloat16'), 'Input type' ('c10::BFloat16', 'long int') and NCCL kernel names
-- ('f32', '__nv_bfloat16', 'int8_t'); NULL when unknown.
-- collective_kernel_dtype(kernel_name): the element type in a reducing NCCL kernel's
-- name (AllReduce_Sum_f32, AllReduce_RING_LL_Sum_float); NULL for kernels that move
-- bytes (SendRecv, AllGather, Broadcast: their int8 is not the tensor's type).
-- dtype_size_bytes(dtype): bytes per element of a canonical dtype.
--
-- depends: (none)

CREATE OR REPLACE MACRO collective_dtype(label) AS
MAP {'float': 'float32', 'float32': 'float32', 'f32': 'float32',
     'bfloat16': 'bfloat16', 'bf16': 'bfloat16', '__nv_bfloat16': 'bfloat16',
     'half': 'float16', 'float16': 'float16', 'f16': 'float16', '__half': 'float16',
     'double': 'float64', 'float64': 'float64', 'f64': 'float64',
     'long': 'int64', 'long int': 'int64', 'int64': 'int64', 'i64': 'int64', 'int64_t': 'int64', 'long long': 'int64',
     'uint64': 'uint64', 'u64': 'uint64', 'uint64_t': 'uint64',
     'int': 'int32', 'int32': 'int32', 'i32': 'int32', 'int32_t': 'int32',
     'uint32': 'uint32', 'u32': 'uint32', 'uint32_t': 'uint32',
     'short': 'int16', 'short int': 'int16', 'int16': 'int16',
     'byte': 'uint8', 'unsigned char': 'uint8', 'uint8': 'uint8', 'u8': 'uint8', 'uint8_t': 'uint8',
     'char': 'int8', 'signed char': 'int8', 'int8': 'int8', 'i8': 'int8', 'int8_t': 'int8',
     'bool': 'bool',
     'float8_e4m3fn': 'float8_e4m3fn', 'f8e4m3': 'float8_e4m3fn', '__nv_fp8_e4m3': 'float8_e4m3fn',
     'float8_e5m2': 'float8_e5m2', 'f8e5m2': 'float8_e5m2', '__nv_fp8_e5m2': 'float8_e5m2'}[
    regexp_replace(lower(trim(label)), '^(c10::|torch\.|at::)', '')];

CREATE OR REPLACE MACRO collective_kernel_dtype(kernel_name) AS
CASE WHEN regexp_matches(kernel_name, '^(nccl|rccl)(Dev)?Kernel_(AllReduce|ReduceScatter|Reduce)_', 'i')
     THEN collective_dtype(nullif(regexp_extract(
              kernel_name, '_(?:Sum|Prod|Max|Min|Avg|PreMulSum|SumPostDiv)_(__nv_[a-z0-9_]+?|[a-z0-9]+_t|[a-z0-9]+)(?:[_(]|$)',
              1, 'i'), ''))
END;

CREATE OR REPLACE MACRO dtype_size_bytes(dtype) AS
MAP {'float64': 8, 'int64': 8, 'uint64': 8, 'float32': 4, 'int32': 4, 'uint32': 4, 'bfloat16': 2, 'float16': 2,
     'int16': 2, 'int8': 1, 'uint8': 1, 'bool': 1, 'float8_e4m3fn': 1, 'float8_e5m2': 1}[dtype];
