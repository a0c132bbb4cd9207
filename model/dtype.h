// DType: the math type of a kernel (docs/formats.md `dtype`). The cost model picks the GPU's peak
// throughput by dtype, so this enum is the key into GpuSpec's per-dtype peaks.
#pragma once
#include <array>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace kcast {

// fp4 is last so the per-dtype arrays of older model files and tables keep their indices.
enum class DType { fp64, fp32, tf32, fp16, bf16, fp8, int8, fp4 };

inline constexpr DType kAllDTypes[] = {DType::fp64, DType::fp32, DType::tf32, DType::fp16,
                                       DType::bf16, DType::fp8,  DType::int8, DType::fp4};
inline constexpr int kNumDTypes = int(std::size(kAllDTypes));

// One value per dtype, indexed by int(DType).
template <class T>
using PerDType = std::array<T, kNumDTypes>;
template <class T>
constexpr PerDType<T> per_dtype(T v) {
  PerDType<T> a{};
  a.fill(v);
  return a;
}

std::string_view to_string(DType d);
// Accepts the canonical names plus common spellings (float32, bfloat16, half, e4m3, ...).
std::optional<DType> parse_dtype(std::string_view s);
// Bytes per element of operands of this dtype (tf32 operands are stored as fp32). fp4 is NVFP4:
// 4-bit E2M1 values plus one 8-bit E4M3 scale per 16 (0.5625 bytes; MXFP4's one E8M0 scale per 32
// would be 0.53125, within 6%).
double dtype_bytes(DType d);

}  // namespace kcast
