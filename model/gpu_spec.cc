#include "model/gpu_spec.h"

namespace kcast {

double GpuSpec::peak_tflops(DType d) const {
  switch (d) {
    case DType::fp64: return fp64_tflops;
    case DType::fp32: return fp32_tflops;
    case DType::tf32: return tf32_tflops;
    case DType::fp16: return fp16_tflops;
    case DType::bf16: return bf16_tflops;
    case DType::fp8: return fp8_tflops;
    case DType::int8: return int8_tops;
    case DType::fp4: return fp4_tflops;
  }
  return fp32_tflops;
}

std::optional<DType> GpuSpec::weight_only_unit(DType d) const {
  if ((d != DType::fp8 && d != DType::fp4) || has_tensor(d)) return std::nullopt;
  for (DType w : {DType::bf16, DType::fp16})
    if (has_tensor(w)) return w;
  return std::nullopt;
}

double GpuSpec::gemm_peak_tflops(DType d) const { return peak_tflops(gemm_peak_dtype(d)); }

DType GpuSpec::gemm_peak_dtype(DType d) const {
  if (known(peak_tflops(d))) return d;
  if (const std::optional<DType> w = weight_only_unit(d)) return *w;
  return DType::fp32;
}

bool GpuSpec::has_tensor(DType d) const {
  if (!tensor_cores || d == DType::fp32 || d == DType::fp64) return false;
  return known(peak_tflops(d));
}

}  // namespace kcast
