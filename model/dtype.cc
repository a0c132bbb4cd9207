#include "model/dtype.h"

#include <array>
#include <utility>

#include "model/ascii_lower.h"

namespace kcast {

std::string_view to_string(DType d) {
  switch (d) {
    case DType::fp64: return "fp64";
    case DType::fp32: return "fp32";
    case DType::tf32: return "tf32";
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
    case DType::fp8: return "fp8";
    case DType::int8: return "int8";
    case DType::fp4: return "fp4";
  }
  return "fp32";
}

std::optional<DType> parse_dtype(std::string_view s) {
  const std::string t = ascii_lower(s);
  static const std::array<std::pair<std::string_view, DType>, 28> kNames{{
      {"fp64", DType::fp64}, {"float64", DType::fp64}, {"double", DType::fp64},
      {"fp32", DType::fp32}, {"float32", DType::fp32}, {"float", DType::fp32},
      {"tf32", DType::tf32}, {"fp16", DType::fp16}, {"float16", DType::fp16},
      {"half", DType::fp16}, {"bf16", DType::bf16}, {"bfloat16", DType::bf16},
      {"fp8", DType::fp8}, {"float8", DType::fp8}, {"e4m3", DType::fp8},
      {"e5m2", DType::fp8}, {"float8_e4m3fn", DType::fp8}, {"float8_e5m2", DType::fp8},
      {"fp8_e4m3", DType::fp8}, {"fp8_e5m2", DType::fp8}, {"int8", DType::int8},
      {"i8", DType::int8}, {"fp4", DType::fp4}, {"nvfp4", DType::fp4}, {"mxfp4", DType::fp4},
      {"e2m1", DType::fp4}, {"float4_e2m1fn_x2", DType::fp4}, {"fp4_e2m1", DType::fp4},
  }};
  for (const auto& [name, d] : kNames)
    if (t == name) return d;
  return std::nullopt;
}

double dtype_bytes(DType d) {
  switch (d) {
    case DType::fp64: return 8;
    case DType::fp32:
    case DType::tf32: return 4;
    case DType::fp16:
    case DType::bf16: return 2;
    case DType::fp8:
    case DType::int8: return 1;
    case DType::fp4: return 0.5 + 1.0 / 16;
  }
  return 4;
}

}  // namespace kcast
