// DType: the math type of a kernel (FORMATS.md `dtype`). The cost model picks the GPU's peak
// throughput by dtype, so this enum is the key into GpuSpec's per-dtype peaks.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace kcast {

enum class DType { fp64, fp32, tf32, fp16, bf16, fp8, int8 };

inline constexpr DType kAllDTypes[] = {DType::fp64, DType::fp32, DType::tf32, DType::fp16,
                                       DType::bf16, DType::fp8,  DType::int8};

std::string_view to_string(DType d);
// Accepts the canonical names plus common spellings (float32, bfloat16, half, e4m3, ...).
std::optional<DType> parse_dtype(std::string_view s);
// Bytes per element of operands of this dtype (tf32 operands are stored as fp32).
double dtype_bytes(DType d);

}  // namespace kcast
