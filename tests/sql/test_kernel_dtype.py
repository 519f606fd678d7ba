"""sql/base/kernel_dtype.sql: the dtype a kernel's name says, on names as Nsight Systems and the
PyTorch profiler (Kineto) demangle them, taken from the recordings under tests/recorded."""

from __future__ import annotations

import pytest

from .conftest import load_sql, rows

BF, HALF, F32 = "c10::BFloat16", "c10::Half", "float"

NAMES = [
    # ATen templates (Nsight's demangling: '(int)8', '<unnamed>', '[lambda(float) (instance 1)]')
    ("void at::native::vectorized_elementwise_kernel<(int)8, at::native::CUDAFunctor_add<c10::BFloat16>, "
     "std::array<char *, (unsigned long)3>>(int, T2, T3)", BF),
    ("void at::native::vectorized_elementwise_kernel<(int)4, at::native::BinaryFunctor<float, float, float, "
     "at::native::binary_internal::MulFunctor<float>>, std::array<char *, (unsigned long)3>>(int, T2, T3)", F32),
    # the data beside its accumulation type, a mask, indices
    ("void at::native::batch_norm_collect_statistics_channels_last_kernel<at::native::Var, c10::BFloat16, float, "
     "(int)4>(const T2 *, T3 *, T3 *, volatile T3 *, int *, int, int, T3)", BF),
    ("void at::native::vectorized_elementwise_kernel<(int)8, void at::native::<unnamed>::masked_scale_kernel<bool, "
     "c10::BFloat16, float>(at::Tensor &, const at::Tensor &, const at::Tensor &, T3)::[lambda(c10::BFloat16, bool) "
     "(instance 1)], std::array<char *, (unsigned long)3>>(int, T2, T3)", BF),
    ("void at::native::<unnamed>::embedding_backward_feature_kernel<float, float, long>(const T3 *, const T1 *, "
     "T1 *, int, long, int)", F32),
    # an enclosing function's parameters are not the kernel's dtypes
    ("void at::native::<unnamed>::unrolled_elementwise_kernel_for_multi_outputs<(int)3, at::native::<unnamed>::"
     "batch_norm_update_stats_and_invert(const at::Tensor &, const at::Tensor &, const at::Tensor &, const "
     "at::Tensor &, double, double, long)::[lambda() (instance 1)]::operator ()() const::[lambda() (instance 2)]::"
     "operator ()() const::[lambda(float, float, float, float) (instance 1)]>(int, T2, T3)", F32),
    # Kineto's demangling: '<8, ...>', '(anonymous namespace)', '{lambda(float)#1}'
    ("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous "
     "namespace)::LogSoftMaxForwardEpilogue>(float*, float const*, int)", F32),
    # cuDNN's own templates
    ("void nhwcAddPaddingKernel<__nv_bfloat16, __nv_bfloat16, float, true, (cudnnKernelDataType_t)0>(int, int)", BF),
    # libraries named by dtype
    ("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64_warpgroupsize1x1x1_g1_"
     "execute_segment_k_off_kernel__5x_cudnn", BF),
    ("sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x64x32_warpgroupsize1x1x1_g1_"
     "execute_split_k_kernel__5x_cudnn", F32),
    ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_warpsize4x2x1_ffma_aligna4_alignc4_execute_"
     "kernel__5x_cublas", F32),
    ("void cutlass::Kernel2<cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_tn_align1>(T1::Params)", BF),
    ("void cutlass::Kernel2<cutlass_75_tensorop_s1688gemm_f16_128x128_nn_align1>(cutlass_75_tensorop_s1688gemm_f16_"
     "128x128_nn_align1::Params)", HALF),
    ("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x64_32x3_tn_align1>(T1::Params)", F32),  # TF32
    ("void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8>"
     "(T1::Params)", BF),
    ("void cutlass__5x_cudnn::Kernel<cutlass_tensorop_s1688dgrad_optimized_tf32_256x64_16x4_nhwc_unity_stride_align4>"
     "(T1::Params)", F32),
    ("ampere_sgemm_128x64_nn", F32),
    ("nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT", BF),
    ("nvjet_sm90_hsh_64x128_64x8_2x1_v_bz_TNN", HALF),
    ("nvjet_sm90_qqtst_128x128_128x4_1x2_h_bz_coopA_TNT", "c10::Float8_e4m3fn"),
]

CASTS = [
    # two dtypes (also direct_copy between dtypes: it loads and stores with a cast)
    "void at::native::vectorized_elementwise_kernel<(int)8, at::native::bfloat16_copy_kernel_cuda(at::"
    "TensorIteratorBase &)::[lambda(float) (instance 1)], std::array<char *, (unsigned long)2>>(int, T2, T3)",
    "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase &)::"
    "[lambda() (instance 3)]::operator ()() const::[lambda() (instance 7)]::operator ()() const::[lambda(float) "
    "(instance 1)], std::array<char *, (unsigned long)2>, (int)4, TrivialOffsetCalculator<(int)1, unsigned int>, "
    "TrivialOffsetCalculator<(int)1, unsigned int>, at::native::memory::LoadWithCast<(int)1>, "
    "at::native::memory::StoreWithCast<(int)1>>(int, T1, T2, T4, T5, T6, T7)",
]

NONE = [
    # cuDNN's generated attention says f16 for bf16 inputs
    "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0",
    # complex GEMM of an FFT convolution on float tensors; cuBLAS's split-K reduction
    "sm80_xmma_gemm_cf32cf32_f32f32_cf32_nt_n_tilesize32x32x8_stage3_warpsize2x2x1_ffma_aligna8_alignc8_execute_"
    "kernel__5x_cublas",
    "void cublasLt::splitKreduce_kernel<(int)32, (int)16, int, float, __nv_bfloat16, float, __nv_bfloat16, (bool)0>"
    "(cublasLt::cublasSplitKParams<T6>, const T4 *)",
    # indices only, copies by element size, an nvjet spelling not checked against a recording
    "void at::native::vectorized_gather_kernel<16, long>(char*, char*, long*, int, long, long, long, long, bool)",
    "void at::native::vectorized_elementwise_kernel<(int)2, at::native::CUDAFunctorOnSelf_add<long>, "
    "std::array<char *, (unsigned long)2>>(int, T2, T3)",
    "void at::native::<unnamed>::CatArrayBatchedCopy<at::native::<unnamed>::OpaqueType<(unsigned int)2>, unsigned "
    "int, (int)4, (int)64, (int)64>(T1 *, int)",
    "nvjet_sm90_sss_128x64_64x8_2x1_v_bz_NNN",
]


@pytest.mark.parametrize("name,dtype", NAMES, ids=[n[:60] for n, _ in NAMES])
def test_kernel_names_say_their_dtype(con, name, dtype):
    load_sql(con, "base/kernel_dtype.sql")
    assert rows(con, "SELECT kernel_dtype(?), kernel_is_cast(?)", [name, name]) == [(dtype, False)]


@pytest.mark.parametrize("name,is_cast", [(n, True) for n in CASTS] + [(n, False) for n in NONE],
                         ids=[n[:60] for n in CASTS + NONE])
def test_casts_and_ambiguous_names_say_none(con, name, is_cast):
    load_sql(con, "base/kernel_dtype.sql")
    assert rows(con, "SELECT kernel_dtype(?), kernel_is_cast(?)", [name, name]) == [(None, is_cast)]
