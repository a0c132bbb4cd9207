// CostModel: a kernel's time on a GPU from its work (FLOPs by dtype, DRAM bytes, GEMM shape) and
// the GPU's capabilities (GpuCaps), per kernel class. Pure and I/O-free; thread-safe (const).
//
//   time = floor + max(compute, memory) [+ split-K reduction]
// GEMMs and convolutions model the library's tile choice, wave quantization over the SMs (the partial
// last wave costs a full one), split-K for small outputs with long K, and pipeline fill for small K.
// Streaming kernels (elementwise, norms, softmax, reductions, copies) model DRAM or L2 bandwidth and
// the ramp of small transfers that cannot keep enough bytes in flight to reach peak.
#pragma once
#include <string_view>
#include <vector>

#include "model/arch_facts.h"
#include "model/gpu_caps.h"
#include "model/kernel.h"
#include "model/model_params.h"

namespace kcast {

// What holds a kernel's time: its math, its DRAM/L2 traffic, the launch floor, a link between
// devices (collectives; copies to the host or a peer), or the memory latency of a kernel with too
// few bytes to stream: its fixed DRAM round trip is at least as long as its bytes take at bandwidth,
// so more bandwidth barely helps it, and fusing it into a neighbour would.
enum class Bound { compute, memory, launch, link, latency };
constexpr int kNumBounds = 5;
constexpr Bound kAllBounds[kNumBounds] = {Bound::compute, Bound::memory, Bound::launch, Bound::link, Bound::latency};
std::string_view to_string(Bound b);

struct KernelPrediction {
  double time_us = 0;  // one invocation, on the GPU alone (no measurement-context floor)
  Bound bound = Bound::launch;
};

// The terms behind a prediction, for a person asking why (`predict --per-kernel`): time_us is the
// smooth maximum of floor_us and max(compute_us, memory_us) + extra_us (CostModel, with_floor). For
// a GEMM or convolution, the tile, K split and waves of the configuration the library is taken to run.
struct KernelTerms {
  double compute_us = 0;  // math at the rate the kernel gets
  double memory_us = 0;   // its bytes at bandwidth, latency included
  double latency_us = 0;  // the fixed latency within memory_us
  double floor_us = 0;    // the GPU's launch floor
  double extra_us = 0;    // a GEMM's split-K reduction, a Winograd convolution's transforms
  int tile_m = 0, tile_n = 0, split_k = 0;  // 0: not a tiled GEMM
  double waves = 0;
};

// A convolution family's throughput relative to implicit GEMM (model/conv_algo.h); `simt`: the conv
// runs on CUDA cores (an unknown family's gain differs there).
double conv_gain(const ModelParams& p, ConvAlgo a, bool simt);

// A kernel cannot beat the launch floor, and short kernels pay part of it on top of their work:
// a smooth maximum (floor^q + work^q)^(1/q) between the sum (q = 1) and the plain max.
double with_floor(double floor, double work, double q);
// with_floor inverted: the work behind a time t > floor (t^q = floor^q + work^q; q <= 1: the sum).
double work_behind_floor(double t, double floor, double q);

class CostModel {
 public:
  CostModel(ModelParams params, std::vector<ArchFacts> archs);

  KernelPrediction predict(const Kernel& k, const GpuCaps& gpu) const { return predict(k, gpu, nullptr); }
  // The same, and the terms behind it in `terms` (when not null).
  KernelPrediction predict(const Kernel& k, const GpuCaps& gpu, KernelTerms* terms) const;
  GpuCaps caps(const GpuSpec& gpu) const { return derive_caps(gpu, params_, archs_); }
  // The extra kernel a GEMM's measurement context runs in each op (ModelParams::context_a_pass_bytes):
  // a streaming pass over its A operand, launch floor included; 0 where the context has none.
  double context_pass_us(const Kernel& k, const GpuCaps& gpu) const {
    return operand_pass_us(context_pass_bytes(k), gpu);
  }
  // Its two halves, for callers that look the bytes up once per row and time them on many GPUs:
  // the bytes that pass streams (0: none), and a streaming kernel of `bytes` (0 for none).
  double context_pass_bytes(const Kernel& k) const;
  double operand_pass_us(double bytes, const GpuCaps& gpu) const;

  const ModelParams& params() const { return params_; }
  ModelParams& mutable_params() { return params_; }
  const std::vector<ArchFacts>& archs() const { return archs_; }

 private:
  // Each fills `terms` when it is not null.
  KernelPrediction gemm(const Kernel& k, const GpuCaps& g, double rate_scale, KernelTerms* terms) const;
  // A kernel given by FLOPs and bytes only, its math at the dtype's GEMM rate times `rate_scale`.
  KernelPrediction at_gemm_rate(const Kernel& k, const GpuCaps& g, double rate_scale, KernelTerms* terms) const;
  // `bytes` over a link of `link_gbps` (sustained, GB/s) plus the floor; 0 = no link figure: streaming.
  // `net_bytes` of them also cross the scale-out network at `net_gbps` (a collective spanning nodes):
  // the slower of the two paths bounds it.
  KernelPrediction over_link(const Kernel& k, const GpuCaps& g, double link_gbps, KernelTerms* terms,
                             double net_bytes = 0, double net_gbps = 0) const;
  // A row kernel (norm, softmax) of `extra_passes` reads of its input beyond the first read and one
  // write; the extra reads find its resident rows in L2 (cost_model.cc, reread_time).
  KernelPrediction row_kernel(const Kernel& k, const GpuCaps& g, double extra_passes, KernelTerms* terms) const;
  // Bytes against memory, `flops` against `flop_per_us` (the SIMT rate if 0) at a boost-clock rate
  // the power limit brings down to `derate` for long kernels.
  KernelPrediction streaming(const Kernel& k, const GpuCaps& g, double flops, KernelTerms* terms,
                             double flop_per_us = 0, double derate = 1, double boost_flops = 0) const;

  ModelParams params_;
  std::vector<ArchFacts> archs_;
};

}  // namespace kcast
