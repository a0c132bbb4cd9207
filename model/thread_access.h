// Kernels whose threads each keep about one element in flight: Little's law bounds their bandwidth.
//
// vLLM's original CUDA layer kernels (csrc/layernorm_kernels.cu rms_norm_kernel, csrc/activation_kernels.cu
// act_and_mul_kernel and activation_kernel, csrc/pos_encoding_kernels.cu rotary_embedding_kernel; Sarathi-
// Serve and Vidur run the same ones) and PyTorch's index_select (the embedding gather) load one 16-bit
// element per thread per loop step: one CTA per token row (rms_norm, act_and_mul: min(width, 1024) threads;
// rotary: min(rotated pairs, 512)), or a grid-stride loop of 128-thread CTAs, 8 per SM (index_select).
// Such a kernel moves, per memory round trip, the bytes its resident threads keep in flight:
//   bandwidth <= SMs x resident threads per SM x elements in flight per thread x element bytes / latency,
// far below what the GPU streams when few threads fit (an A40 holds one 1024-thread CTA per SM, an
// A100 two). The latency is the GPU's (GpuCaps::stream_latency_us); the elements each family keeps in
// flight per thread are fitted once, on the A100 profiles of Vidur (scripts/validate_vidur_ops.py scores
// them on every profile GPU). Elementwise kernels that vectorize (PyTorch's, vLLM's fused_add_rms_norm
// with 8-wide loads, Triton's, Transformer Engine's) stream at bandwidth and match none of these.
#pragma once
#include <cstdint>
#include <string_view>

#include "model/kernel_class.h"

namespace kcast {

enum class ThreadAccess : uint8_t { none, row_norm, gated_activation, activation, rotary, index_select };

struct ThreadAccessFacts {
  double elements = 0;     // elements (read + written) each thread keeps in flight per round trip
  int max_threads = 1024;  // threads per CTA: min(row width / width_per_thread, max_threads) ...
  int width_per_thread = 1;
  int fixed_threads = 0;   // ... or this many, whatever the row (grid-stride kernels)
  int ctas_per_sm = 0;     // grid-stride kernels: the CTAs launched per SM (0: as many as fit)
};

// The family a kernel of class `cls` belongs to by its name (none for every other kernel, and for the
// classes whose time is not a stream of bytes: GEMMs, attention, collectives, ...). The kernel-list
// reader and synth's emitter both ask it.
ThreadAccess thread_access_of(KernelClass cls, std::string_view kernel_name);
const ThreadAccessFacts& facts(ThreadAccess a);

}  // namespace kcast
