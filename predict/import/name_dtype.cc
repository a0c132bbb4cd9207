// dtype_from_kernel_name(): the math type a kernel's name announces, for traces that record no
// operand types (nsys, ncu, kernels without a CPU op in Kineto). Library kernel names carry it:
// cuBLAS/CUTLASS/xmma spell the operand types (ampere_fp16_s16816gemm_fp16, xmma_gemm_bf16bf16,
// tf32f32, cutlass::half_t, e4m3), PyTorch templates name the scalar type (c10::Half, double).
// Without such a hint the importer keeps the kernel-list default (fp32), which is what SIMT
// kernels such as volta_sgemm or FillFunctor<float> are.

#include "model/ascii_lower.h"
#include "predict/import/import_util.h"

namespace kcast::import_detail {

namespace {

struct Hint {
  std::string_view token;
  DType dtype;
};

// Ordered: the first token found wins. Narrow types first (an fp8 GEMM also names its f16 output,
// a bf16 kernel names "16"), fp64 last.
constexpr Hint kHints[] = {
    // Block-scaled FP4 GEMMs name their E2M1 values beside UE4M3 / UE8M0 scales (CUTLASS
    // ..._ue4m3xe2m1_...), so FP4 is looked for before FP8.
    {"e2m1", DType::fp4},       {"nvfp4", DType::fp4},     {"mxfp4", DType::fp4},
    {"fp4", DType::fp4},  // not "float4": PyTorch's vectorized kernels name the float4 vector type
    {"e4m3", DType::fp8},       {"e5m2", DType::fp8},      {"fp8", DType::fp8},
    {"float8", DType::fp8},     {"_f8_", DType::fp8},      {"f8f8", DType::fp8},
    {"bf16", DType::bf16},      {"bfloat16", DType::bf16},
    {"tf32", DType::tf32},
    {"fp16", DType::fp16},      {"f16", DType::fp16},      {"c10::half", DType::fp16},
    {"half_t", DType::fp16},    {"__half", DType::fp16},   {"h884", DType::fp16},
    {"h1688", DType::fp16},     {"h16816", DType::fp16},   {"hgemm", DType::fp16},
    {"int8", DType::int8},      {"i8816", DType::int8},    {"_imma", DType::int8},
    {"s8s8", DType::int8},
    {"dgemm", DType::fp64},     {"d884", DType::fp64},     {"dmma", DType::fp64},
    {"fp64", DType::fp64},
    // PyTorch template arguments; bare "double" would catch "double_buffer" in kernel names.
    {"<double", DType::fp64},   {"double>", DType::fp64},  {", double", DType::fp64},
};

}  // namespace

std::optional<DType> dtype_from_kernel_name(std::string_view name) {
  const std::string lower = ascii_lower(name.substr(0, 4096));
  for (const Hint& h : kHints)
    if (lower.find(h.token) != std::string::npos) return h.dtype;
  return std::nullopt;
}

}  // namespace kcast::import_detail
