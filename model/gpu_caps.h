// GpuCaps: the effective capabilities the cost model evaluates against, derived once per GPU from
// its datasheet row, its measured figures (microbenchmarks) and the architecture facts. What-if
// studies edit this struct directly (knobs map one-to-one onto its fields).
#pragma once
#include <string>

#include "model/arch_facts.h"
#include "model/gpu_spec.h"
#include "model/model_params.h"

namespace kcast {

// The share of a GPU's link bandwidth (GpuSpec::link_gbps, one direction) that NCCL collectives
// sustain: 8x A100-SXM4-80GB over NVLink reach an all-reduce bus bandwidth of ~200 GB/s of 300
// (NVIDIA/nccl-tests#149), a GB200's GPU-to-GPU copies 770 GB/s of 900 (Azure/AI-benchmarking-guide#7).
// A documented default until a microbenchmark measures the board's own.
inline constexpr double kLinkEff = 0.7;
// The share of the host link a copy sustains: a 1 GB cudaMemcpy host-to-device on a V100 PCIe moves
// 12.35 GB/s over PCIe Gen3 x16's 15.75 (te42kyfo/gpu-benches cuda-memcpy, in
// ../shared/data/microbench-reference.csv).
inline constexpr double kHostLinkEff = 0.78;
// The share of a NIC's line rate NCCL sustains between nodes: two DGX A100 (eight 200 Gb/s HDR
// adapters each, 25 GB/s per GPU) reach an all-reduce bus bandwidth of ~186 GB/s of the 200 their NICs
// carry together. A documented default, not a measurement of any board here.
inline constexpr double kNetEff = 0.9;

// A DRAM round trip under a streaming load, in cycles at boost, where a GPU has no figure of its own:
// the median of gpu-stream's read kernel at 64 threads per SM (te42kyfo/gpu-benches; one 8-byte load
// each: latency = threads x 8 B / bandwidth) on the five NVIDIA GPUs it was published for: V100 785,
// A40 912, A100-SXM4-40GB 963, H200 1088, L40 1111 (data/microbench, stream_latency).
inline constexpr double kStreamLatencyCycles = 963;

struct GpuCaps {
  std::string name;
  std::string compute_capability;  // the spec's; transfer compares them (model/transfer.h)
  int sm_count = 1;
  double clock_mhz = 1000;
  double dram_bw_gbps = 1;      // sustained
  double l2_bw_gbps = 1;        // sustained
  double l2_bytes = 0;
  // The SMs whose resident CTAs share the L2 between a row kernel's passes (CostModel, reread_time):
  // the GPU's own count. The sm_count what-if knob leaves it: more SMs on the same L2 would thrash it
  // and slow a re-reading kernel, and a what-if of more SMs is one of more compute, never slower.
  int l2_sharing_sms = 1;
  PerDType<double> tensor_tflops{};  // GEMM rate per dtype at boost clock (SIMT rate for fp32/fp64, or
                                     // where no tensor unit exists); 0 = unsupported
  PerDType<bool> simt_gemm{};        // GEMMs of this dtype run on CUDA cores
  double vector_tflops = 1;      // SIMT FP32 (elementwise math)
  double launch_floor_us = 2.5;  // minimum kernel duration
  // The latency a memory-bound kernel pays once before its data streams (µs): the fitted
  // mem_latency_cycles at clock_mhz, a DRAM round trip plus the kernel's ramp-up.
  double mem_latency_us = 0;
  // A DRAM round trip as a streaming kernel sees it (µs): a read kernel's bytes in flight over the
  // bandwidth they reach at low occupancy (Little's law), measured, or kStreamLatencyCycles at the
  // clock. Bounds the kernels whose threads keep one element in flight (model/thread_access.h).
  double stream_latency_us = 0;
  double link_gbps = 0;          // sustained GPU-to-GPU bandwidth per direction for collectives; 0 = unknown
  double net_gbps = 0;           // the same over the scale-out network, for collectives spanning nodes; 0 = unknown
  double host_gbps = 0;          // sustained host-link bandwidth per direction for copies; 0 = unknown
  double context_scale = 1;      // the measurement rig's context floors vs the typical rig's
  double simt_conv_scale = 1;    // CUDA-core convolutions' rate relative to the SIMT GEMM rate
  // The clock fraction a long GEMM of each dtype settles at under the board's power limit, or 1 where
  // a measured rate already includes it. The cost model applies it by the kernel's work (a short
  // kernel finishes before the power controller pulls the clock down).
  PerDType<double> gemm_derate = per_dtype(1.0);
  // The GEMM work (FLOPs) a board does at boost before the limit bites: an energy budget, i.e. a
  // fixed amount of work (power_tau_us at the GPU's own GEMM rate). Being work, not time, it stays
  // put under what-if knobs: faster hardware never turns a kernel slower or more than 2x faster.
  PerDType<double> gemm_boost_flops{};
  ArchFacts arch;
  // The GEMM tile menus with what the model needs per tile, derived once here because the GEMM
  // term is evaluated millions of times per second: one for tensor-core GEMMs, one for SIMT
  // (CUDA-core) SGEMMs, whose library kernels come in other shapes.
  struct Tile {
    double m, n, area;
    double eff;    // per-SM throughput relative to a 128x128 tile
    double ctas;   // CTAs of this tile resident per SM
    double slots;  // ctas * sm_count
  };
  struct TileMenu {
    Tile t[12];
    int n = 0;
  };
  TileMenu tiles, simt_tiles;
  TileMenu simt_batched;  // ArchFacts::simt_batched as a one-tile menu; empty where shapes choose
  // One tile of m x n at per-SM throughput (area/16384)^tile_exp (capped at 1), with its CTAs per
  // SM and slots on this GPU.
  Tile make_tile(int m, int n, double tile_exp) const;
  // The SIMT tile m x n: the menu's entry if it has one (already derived), else made here.
  Tile simt_tile(int m, int n, double tile_exp) const;
  // Set each tile's resident slots from its CTAs per SM and the SM count (what-if SM scaling).
  void set_tile_slots() {
    for (TileMenu* menu : {&tiles, &simt_tiles, &simt_batched})
      for (int i = 0; i < menu->n; ++i) menu->t[i].slots = menu->t[i].ctas * sm_count;
  }
};

// `table` is the architecture-facts table (data/archs.csv).
GpuCaps derive_caps(const GpuSpec& gpu, const ModelParams& params, const std::vector<ArchFacts>& table);

// The same GPU under sustained load: every GEMM at the clock a long one settles at (gemm_derate), none
// with a boost budget left. The budget (power_tau_us) is what a microbenchmark sees, timing one shape
// for milliseconds from a cool start; a framework's training step runs its forward and backward math
// back to back for seconds, so the controller has pulled the clock down before any one GEMM starts
// (flashinfer-ai/flashinfer#2899: a B200 settles 19% below boost within 100 back-to-back kernels).
GpuCaps sustained_caps(GpuCaps caps);

}  // namespace kcast
