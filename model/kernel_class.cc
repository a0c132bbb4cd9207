#include "model/kernel_class.h"

namespace kcast {

std::string_view to_string(KernelClass c) {
  static constexpr std::string_view kNames[kNumClasses] = {
      "gemm",    "conv",      "attention", "elementwise", "reduction",
      "normalization", "softmax", "embedding", "memcpy", "memset",
      "communication", "optimizer", "other"};
  return kNames[static_cast<int>(c)];
}

std::optional<KernelClass> parse_kernel_class(std::string_view s) {
  for (KernelClass c : kAllClasses)
    if (to_string(c) == s) return c;
  return std::nullopt;
}

}  // namespace kcast
