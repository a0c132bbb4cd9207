#include "model/thread_access.h"

#include <array>

namespace kcast {

namespace {

// Elements per thread in flight: the median over Vidur's A100-SXM4-80GB profiles of Llama-2 7B / 70B
// and Llama-3 8B at 4,096 tokens and more (every tensor-parallel shard), at the A100's stream latency
// (0.683 µs): rms_norm 1.03-1.10, act_and_mul 1.46-1.61, rotary 1.29-1.42, index_select 0.84-0.94,
// phi-2's activation_kernel (gelu_new) 2.08. The A40's profiles, not fitted, give 1.18-1.31, 1.60-1.67,
// 1.10 (bandwidth-bound there), 1.01-1.03 and 1.73.
constexpr std::array<ThreadAccessFacts, 6> kFacts = {{
    {},                       // none
    {1.05, 1024, 1, 0, 0},    // row_norm: rms_norm_kernel, a CTA of min(hidden, 1024) per token
    {1.5, 1024, 1, 0, 0},     // gated_activation: act_and_mul_kernel, min(d, 1024) per token
    {2.1, 1024, 1, 0, 0},     // activation: activation_kernel, min(d, 1024) per token
    {1.35, 512, 2, 0, 0},     // rotary: one thread per rotated pair, at most 512 per token
    {0.9, 1024, 1, 128, 8},   // index_select: grid-stride, 128-thread CTAs, 8 per SM
}};

bool has(std::string_view name, std::string_view word) { return name.find(word) != std::string_view::npos; }

}  // namespace

const ThreadAccessFacts& facts(ThreadAccess a) { return kFacts[size_t(a)]; }

ThreadAccess thread_access_of(KernelClass cls, std::string_view name) {
  if (cls != KernelClass::normalization && cls != KernelClass::elementwise && cls != KernelClass::embedding &&
      cls != KernelClass::other)
    return ThreadAccess::none;
  // PyTorch's embedding forward is index_select (aten::embedding in a trace's op names, the
  // indexSelect kernels in its kernel names); its backward is another kernel.
  if (has(name, "indexSelectLargeIndex") || has(name, "indexSelectSmallIndex") ||
      (has(name, "aten::embedding") && !has(name, "backward")))
    return ThreadAccess::index_select;
  if (!has(name, "vllm::")) return ThreadAccess::none;
  // vllm::fused_add_rms_norm_kernel loads 8-wide vectors where the hidden size allows (every LLM's):
  // it streams.
  if (has(name, "fused_add_rms_norm")) return ThreadAccess::none;
  if (has(name, "rms_norm")) return ThreadAccess::row_norm;
  if (has(name, "and_mul")) return ThreadAccess::gated_activation;  // silu/gelu/gelu_tanh/swigluoai_and_mul
  if (has(name, "rotary_embedding")) return ThreadAccess::rotary;
  if (has(name, "activation_kernel") || has(name, "gelu_new") || has(name, "gelu_fast") || has(name, "gelu_quick"))
    return ThreadAccess::activation;
  return ThreadAccess::none;
}

}  // namespace kcast
