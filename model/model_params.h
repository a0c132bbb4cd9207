// ModelParams: the cost model's fitted parameters. They are few, physical and mostly dimensionless
// (efficiencies, exponents, sizes in elements) so they transfer across GPUs; everything GPU-specific
// comes from the GPU database and microbenchmarks (GpuCaps). Ceres fits them as one flat array.
#pragma once
#include <array>
#include <map>
#include <string>

namespace kcast {

enum Param : int {
  kFloorUs,          // kernel floor (µs) for GPUs without a measured launch interval
  kEffTensor,        // sustained fraction of tensor peak in large GEMMs, when not measured
  kEffOfBest,        // typical large GEMMs reach this fraction of the best-shape rate a microbenchmark
                     // reports (measured_gemm_eff is a maximum over shapes)
  kEffSimt,          // sustained fraction of the SIMT FP32 peak in large SGEMMs
  kKFill,            // GEMM pipeline fill/epilogue, in k-elements added to each tile's k loop
  kKFillSimt,        // the same for SIMT (CUDA-core) GEMMs, whose pipelines are shallower
  kTileExp,          // per-SM throughput of a tile relative to 128x128: (area/16384)^exp, capped at 1
  kMemEff,           // sustained fraction of datasheet DRAM bandwidth, when not measured
  kMemLatencyCycles, // DRAM round trip a memory-bound kernel pays once before data streams, in SM
                     // clock cycles (latency in cycles is roughly constant across generations); why
                     // small transfers see less than peak bandwidth
  kL2BytesPerClk,    // L2 bytes/clock/SM, when L2 bandwidth is not measured
  kConvEff,          // implicit-GEMM conv throughput relative to a GEMM of the same shape
  kAttnEff,          // fused attention throughput relative to the tensor GEMM peak
  kSoftmaxPasses,    // reads of the input in long-row softmax beyond one read + one write
  kNormPasses,       // same for layer/batch/RMS norm
  kElementwiseFlopsPerByte,  // SIMT work of transcendental-heavy elementwise ops (flops per byte)
  kSplitKUs,         // cost of a split-K reduction (µs, on top of its bytes)
  kWattsPerSmGhz,    // board power one SM draws per GHz under dense math; boards with less power
                     // per SM (T4, L4, L40S) cannot hold boost clock and are derated
  kGemmMemEff,       // fraction of sustained DRAM bandwidth a GEMM's operand traffic reaches
  kFloorBlend,       // how the floor combines with work: (floor^q + work^q)^(1/q); q=1 adds them
  kStreamMemEff,     // fraction of sustained DRAM bandwidth a framework's streaming kernels
                     // (elementwise, softmax, norms) reach: a property of the kernels, kept apart from
                     // mem_eff (a property of the memory system, set by microbenchmarks)
  kTileExpSimt,      // tile_exp for SIMT SGEMM tiles
  kPowerTauUs,       // the power limit's boost budget, in µs of dense math at the GPU's own rate: a
                     // GEMM of W FLOPs runs the fraction W/(W + budget) at the sustained clock (a
                     // short kernel finishes before the power controller pulls the clock down)
  kConvGemmGain,     // conv throughput of each cuDNN algorithm family relative to implicit GEMM
  kConvWinogradGain, // (model/conv_algo.h): Winograd and FFT do fewer multiplications, 1x1/im2col
  kConvFftGain,      // convolutions are cuBLAS SGEMMs, the pre-Volta convolve_sgemm kernels are slow
  kConvLegacyGain,
  kSimtChoiceEff,    // an SGEMM whose tile is not known (no cuBLAS name, or another architecture's)
                     // runs at this fraction of the menu's best tile: the library's heuristic does not
                     // always pick it. Not fitted: kcast calibrate measures it as the median best-tile /
                     // named-tile compute ratio over the measured SGEMMs whose names record their tile
  kConvChoiceGain,   // a CUDA-core convolution whose cuDNN algorithm is not known runs at this gain (relative
                     // to implicit GEMM): measured by kcast calibrate as the median gain of the measured
                     // FP32 convolutions' families, not fitted
  kSimtLongKExp,     // on architectures that show it (ArchFacts::simt_long_k: Pascal), an SGEMM whose CTAs
                     // each run a K range beyond kLongKElements slows as (K range / kLongKElements)^this
  kGemmBiasPersistence,  // the share of a measured GEMM's deviation from the model that carries over to a
                         // GPU of another compute capability (model/transfer.h): 1 = all (the plain
                         // ratio). Not fitted: kcast calibrate measures it as the regression slope of one
                         // GPU's log residual on another's over the GEMMs both measured
  kConvBiasPersistence,  // the same for convolutions (their cuDNN algorithm, read from the source's kernel
                         // name, carries over; the rest of their deviation mostly does too)
  kNarrowPowerFactor,    // the power an SM draws per GHz under dense FP8 / FP4 tensor math, relative to
                         // watts_per_sm_ghz (BF16 / FP32 math): twice the operations per clock draw more,
                         // so a board that holds its boost clock in BF16 may not in FP8 (gpu_caps.cc)
  kNumParams
};

struct ParamInfo {
  const char* name;
  double initial, lower, upper;
  const char* meaning;
};
extern const std::array<ParamInfo, kNumParams> kParamInfo;

struct ModelParams {
  std::array<double, kNumParams> p{};
  // Framework/host floor per measurement context (docs/formats.md extension column `context`): added to
  // every kernel measured in that context, never part of a GPU's own prediction.
  std::map<std::string, double> context_overhead_us;
  // Bytes per element of the GEMM's A operand (batch x m x k) that one more kernel streams in every op
  // measured in that context: a measurement setup whose op is more than the GEMM, e.g. aiconfigurator's
  // FP8 GEMM, which quantizes its BF16 activation per token first (two reads and an FP8 write: 5). Data about
  // the setup, never fitted; like the floor, never part of a GPU's own prediction.
  std::map<std::string, double> context_a_pass_bytes;

  ModelParams();  // initial values
  double operator[](Param i) const { return p[i]; }
  double& operator[](Param i) { return p[i]; }
  double context_overhead(const std::string& ctx) const {
    auto it = context_overhead_us.find(ctx);
    return it == context_overhead_us.end() ? 0.0 : it->second;
  }
  double context_a_pass(const std::string& ctx) const {
    auto it = context_a_pass_bytes.find(ctx);
    return it == context_a_pass_bytes.end() ? 0.0 : it->second;
  }
};

}  // namespace kcast
