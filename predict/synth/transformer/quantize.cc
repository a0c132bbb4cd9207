// The FP8 and NVFP4 serving kernels (quantize.h) as vLLM and SGLang launch them.
#include "predict/synth/transformer/quantize.h"

#include "predict/synth/emitter.h"

namespace kcast::synth::transformer {

// FP8: sgl_per_token_quant_fp8 / vLLM's per-token dynamic quant, fp8_scaled_mm, Triton fused_moe.
const QuantKernels kFp8Kernels{DType::fp8, "per_token_quant_fp8", "fp8_scaled_mm", "fused_moe_kernel", 2 + 2 + 1, 4};
// NVFP4 (vLLM's ModelOpt FP4 path on Blackwell): scaled_fp4_quant, cutlass_scaled_fp4_mm and the
// CUTLASS FP4 grouped GEMM of its fused MoE.
const QuantKernels kFp4Kernels{DType::fp4,          "scaled_fp4_quant", "cutlass_scaled_fp4_mm",
                               "cutlass_fp4_group_mm", 2 + 0.5 + 1.0 / 16, 0};

Kernel quantize_input(const QuantKernels& q, const std::string& name, double rows, double width,
                      const std::string& what) {
  return work(name + " " + q.quantize + what, KernelClass::elementwise, DType::bf16, 3 * rows * width,
              rows * width * q.bytes_per_elem + q.bytes_per_row * rows);
}

}  // namespace kcast::synth::transformer
