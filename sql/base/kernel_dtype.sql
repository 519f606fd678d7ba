-- kernel_dtype: the data type a GPU kernel works on, read from its name, in the spelling the
-- PyTorch profiler records dtypes ('c10::BFloat16', 'c10::Half', 'float', 'double',
-- 'c10::Float8_e4m3fn', ...), or NULL where the name does not say it soundly. Nsight's NVTX operator ranges
-- (emit_nvtx) carry shapes but no dtypes; the kernels an operator launched name its dtype
-- (op_models uses it for NVTX ranges).
--
-- depends: (none)
--
-- kernel_dtype(name): read in this order, the first that applies:
--   1. Casts, which have two dtypes (an input and an output one), say none: ATen's copy kernels
--      other than direct_copy_kernel_cuda (bfloat16_copy_kernel_cuda, ...) and any kernel that
--      loads or stores with a cast (LoadWithCast / StoreWithCast, also direct_copy's between
--      dtypes). kernel_is_cast(name) tells them apart from names that say nothing.
--   2. Library kernels named by their dtypes: cuBLAS/cuDNN xmma ('sm90_xmma_gemm_bf16bf16_bf16f32_f32_...':
--      the first of the A/B pair: bf16, f16, tf32 and f32 -> float, f64), CUTLASS
--      ('cutlass_80_tensorop_bf16_s16816gemm_bf16_...', 'cutlass_75_tensorop_s1688gemm_f16_...':
--      bf16, f16, tf32; none named with an s...gemm/fprop/dgrad/wgrad or sgemm instruction ->
--      float), cuBLAS's older 'ampere_/volta_/turing_..._gemm' names (bf16, fp16/h...gemm,
--      sgemm/s...gemm, dgemm), and nvjet names whose letters were checked against recorded dtypes:
--      'nvjet_[sm90_]tst' (bf16 A/B, fp32 compute, bf16 C), 'nvjet_[sm90_]hsh' (fp16) and
--      'nvjet_[sm90_]qq...' (fp8 A/B: 'c10::Float8_e4m3fn'; e5m2 is not told apart, same bytes).
--      cuDNN's runtime-compiled kernels ('cudnn_generated_fort_..._wgmma_f16_...') say f16 for bf16
--      too, complex GEMMs (cf32, FFT convolutions of real tensors) and cuBLAS's helper kernels
--      (cublasLt::splitKreduce, init_device_workspace) say none.
--   3. Demangled templates: the dtypes named among the template arguments and lambda parameters
--      (kernel_template_tokens), and of those the data's (kernel_template_dtype):
--      'vectorized_elementwise_kernel<(int)8, CUDAFunctor_add<c10::BFloat16>, ...>' -> c10::BFloat16,
--      'batch_norm_collect_statistics_channels_last_kernel<Var, c10::BFloat16, float, 4>' -> c10::BFloat16,
--      '...[lambda(float) (instance 1)]...' -> float; __nv_bfloat16 / bfloat16_t and __half / half_t
--      (cuDNN, CUTLASS) too.
-- kernel_is_cast(name): whether the kernel converts between two dtypes (step 1).
CREATE OR REPLACE MACRO kernel_is_cast(name) AS
contains(name, 'WithCast') OR (regexp_matches(name, '[a-z0-9]_copy_kernel_cuda') AND NOT contains(name, 'direct_copy_kernel_cuda'));

-- kernel_library_dtype(id): step 2 on a library kernel's identifier (lower case, no templates).
CREATE OR REPLACE MACRO kernel_library_dtype(id) AS
CASE
    WHEN id LIKE 'cudnn_generated%' OR id LIKE 'cublaslt%' THEN NULL
    WHEN regexp_matches(id, '^nvjet_(sm[0-9]+_)?tst') THEN 'c10::BFloat16'
    WHEN regexp_matches(id, '^nvjet_(sm[0-9]+_)?hsh') THEN 'c10::Half'
    WHEN regexp_matches(id, '^nvjet_(sm[0-9]+_)?qq') THEN 'c10::Float8_e4m3fn'
    WHEN id LIKE 'nvjet%' THEN NULL
    WHEN contains(id, 'xmma_') THEN
        CASE regexp_extract(id, '_(c?(bf16|f16|tf32|f32|f64|e4m3|e5m2))(c?(bf16|f16|tf32|f32|f64|e4m3|e5m2))_', 1)
            WHEN 'bf16' THEN 'c10::BFloat16' WHEN 'f16' THEN 'c10::Half' WHEN 'tf32' THEN 'float'
            WHEN 'f32' THEN 'float' WHEN 'f64' THEN 'double'
            WHEN 'e4m3' THEN 'c10::Float8_e4m3fn' WHEN 'e5m2' THEN 'c10::Float8_e5m2' END
    WHEN regexp_matches(id, '(^|_)(cutlass|ampere|volta|turing|hopper|sm[0-9]+)_') THEN
        CASE WHEN regexp_matches(id, '_bf16_|_bf16$') THEN 'c10::BFloat16'
             WHEN regexp_matches(id, '_f16_|_fp16_|_f16$|_h[0-9]*gemm|hgemm') THEN 'c10::Half'
             WHEN contains(id, '_tf32') THEN 'float'
             WHEN regexp_matches(id, '_s[0-9]*(gemm|fprop|dgrad|wgrad)|sgemm') THEN 'float'
             WHEN regexp_matches(id, '_d[0-9]*gemm|dgemm') THEN 'double' END
END;

-- kernel_template_tokens(name): the dtypes named in a demangled name's template arguments and
-- lambda parameters, in the recorded spelling ('index' for unsigned index types, 'opaque' for
-- OpaqueType<N>): cast literals ('(int)8'), enclosing functions' parameter lists ('f(at::Tensor &,
-- double)::') and the kernel's own parameter list removed.
CREATE OR REPLACE MACRO kernel_template_tokens(name) AS
list_transform(regexp_extract_all(
        regexp_replace(regexp_replace(regexp_replace(name, '\((unsigned |signed )?[A-Za-z_:]+( [a-z]+)?\)-?[0-9]+', '', 'g'),
                                      '\([^()]*\)( const)?::', '::', 'g'),
                       '\([^()]*\)$', ''),
        '(^|[^A-Za-z0-9_:])(c10::BFloat16|c10::Half|__nv_bfloat16|[A-Za-z0-9_]*::bfloat16_t|__half|'
        '[A-Za-z0-9_]*::half_t|[A-Za-z0-9_]*::tfloat32_t|c10::Float8_e4m3fn|c10::Float8_e5m2|'
        'c10::complex<float>|c10::complex<double>|unsigned int|unsigned long|unsigned char|unsigned short|'
        'signed char|long long|double|float|long|int|short|bool|OpaqueType)([^A-Za-z0-9_]|$)', 2),
    lambda x: CASE WHEN x IN ('c10::BFloat16', '__nv_bfloat16') OR x LIKE '%::bfloat16_t' THEN 'c10::BFloat16'
                   WHEN x IN ('c10::Half', '__half') OR x LIKE '%::half_t' THEN 'c10::Half'
                   WHEN x LIKE '%::tfloat32_t' THEN 'float'
                   WHEN x IN ('long', 'long long') THEN 'long int' WHEN x = 'short' THEN 'short int'
                   WHEN x IN ('unsigned int', 'unsigned long', 'unsigned short') THEN 'index'
                   WHEN x = 'OpaqueType' THEN 'opaque'
                   ELSE x END);

-- kernel_template_dtype(tokens): step 3: the data's dtype among a kernel's named dtypes. A 16-bit or
-- 8-bit float beside float is the data beside its accumulation type (opmath: batch norm's
-- <c10::BFloat16, float>, a bf16 sum's sum_functor<c10::BFloat16, float, c10::BFloat16>); a float
-- type beside integers or bool is the data beside indices or a mask (masked_scale_kernel<bool,
-- c10::BFloat16, float>, embedding_backward_feature_kernel<float, float, long>). Integers or bool
-- alone say none: they may be the data (CUDAFunctorOnSelf_add<long>) or only the indices of data
-- the name does not type (vectorized_gather_kernel<16, long>, cub's sorts of embedding indices).
-- Two narrow floats, complex types and OpaqueType<N> (copies by element size) say none too.
CREATE OR REPLACE MACRO kernel_template_dtype(tokens) AS
CASE
    WHEN list_contains(tokens, 'opaque') OR list_contains(tokens, 'c10::complex<float>')
         OR list_contains(tokens, 'c10::complex<double>') THEN NULL
    WHEN len(list_distinct(list_filter(tokens, lambda x: x IN ('c10::BFloat16', 'c10::Half', 'c10::Float8_e4m3fn',
                                                               'c10::Float8_e5m2')))) > 0
        THEN CASE WHEN len(list_distinct(list_filter(tokens, lambda x: x IN ('c10::BFloat16', 'c10::Half',
                                                   'c10::Float8_e4m3fn', 'c10::Float8_e5m2')))) = 1
                  THEN list_filter(tokens, lambda x: x IN ('c10::BFloat16', 'c10::Half', 'c10::Float8_e4m3fn',
                                                           'c10::Float8_e5m2'))[1] END
    WHEN list_contains(tokens, 'float') THEN 'float'
    WHEN list_contains(tokens, 'double') THEN 'double'
END;

-- kernel_dtype(name): steps 1-3.
CREATE OR REPLACE MACRO kernel_dtype(name) AS
CASE
    WHEN name IS NULL OR kernel_is_cast(name) THEN NULL
    -- a library kernel: its identifier (the CUTLASS instance inside Kernel<...>, or the name itself)
    WHEN regexp_matches(name, '^(nvjet_|sm[0-9]+_xmma|cudnn_generated|ampere_|volta_|turing_|hopper_|cutlass_)')
         OR regexp_matches(name, '^void cutlass[A-Za-z0-9_]*::Kernel[0-9]*<cutlass_')
        THEN kernel_library_dtype(lower(coalesce(nullif(regexp_extract(name, '<(cutlass_[A-Za-z0-9_]+)', 1), ''), name)))
    WHEN starts_with(name, 'void cublasLt::') OR contains(name, 'init_device_workspace_kernel') THEN NULL
    ELSE coalesce(kernel_template_dtype(kernel_template_tokens(name)),
                  -- a mangled CUTLASS name ('_ZN17cutlass__5x_cudnn6KernelI...10bfloat16_t...')
                  CASE WHEN starts_with(name, '_Z') AND contains(name, 'bfloat16_t') THEN 'c10::BFloat16'
                       WHEN starts_with(name, '_Z') AND contains(name, 'half_t') THEN 'c10::Half' END)
END;
