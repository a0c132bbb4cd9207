// KernelClass: the kernel families of docs/formats.md. Each class has its own cost terms in the model.
#pragma once
#include <optional>
#include <string_view>

namespace kcast {

enum class KernelClass {
  gemm, conv, attention, elementwise, reduction, normalization, softmax, embedding,
  memcpy, memset, communication, optimizer, other
};

inline constexpr KernelClass kAllClasses[] = {
    KernelClass::gemm,          KernelClass::conv,      KernelClass::attention,
    KernelClass::elementwise,   KernelClass::reduction, KernelClass::normalization,
    KernelClass::softmax,       KernelClass::embedding, KernelClass::memcpy,
    KernelClass::memset,        KernelClass::communication, KernelClass::optimizer,
    KernelClass::other};
inline constexpr int kNumClasses = 13;

// The classes whose math runs on the matrix engines (tensor cores, or SIMT GEMM loops): GEMMs,
// convolutions, fused attention.
constexpr bool is_matrix_class(KernelClass c) {
  return c == KernelClass::gemm || c == KernelClass::conv || c == KernelClass::attention;
}

std::string_view to_string(KernelClass c);
std::optional<KernelClass> parse_kernel_class(std::string_view s);

}  // namespace kcast
