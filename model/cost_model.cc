#include "model/cost_model.h"

#include <algorithm>
#include <cmath>

namespace kcast {

std::string_view to_string(Bound b) {
  switch (b) {
    case Bound::compute: return "compute";
    case Bound::memory: return "memory";
    case Bound::launch: return "launch";
    case Bound::link: return "link";
    case Bound::latency: return "latency";
  }
  return "launch";
}

CostModel::CostModel(ModelParams params, std::vector<ArchFacts> archs)
    : params_(std::move(params)), archs_(std::move(archs)) {}

namespace {

// Longest row PyTorch's register-resident warp softmax handles (aten/src/ATen/native/cuda/
// PersistentSoftmax.cuh: dim <= 1024); a framework fact, not a GPU one.
constexpr int64_t kWarpSoftmaxMaxRow = 1024;

// Where the long-K slowdown of ArchFacts::simt_long_k begins: the knee both Pascal boards show
// (K per CTA, elements).
constexpr double kLongKElements = 4096;

// The dtype whose GEMM rate `d` gets: its own, or the SIMT FP32 one when the GPU has no unit for it
// (e.g. FP16 on a P4).
int gemm_dtype(const GpuCaps& g, DType d) { return g.tensor_tflops[int(d)] > 0 ? int(d) : int(DType::fp32); }

// GEMM rate for `d` in FLOP/µs at boost clock.
double gemm_rate(const GpuCaps& g, DType d) { return std::max(g.tensor_tflops[gemm_dtype(g, d)], 1e-6) * 1e6; }

// Sustained bandwidth (GB/s) of traffic that finds `l2_share` of its bytes in L2 and the rest in DRAM.
double blended_bw(double l2_share, const GpuCaps& g, const ModelParams& p) {
  const double dram = g.dram_bw_gbps * p[kStreamMemEff];
  return 1.0 / ((1 - l2_share) / dram + l2_share / std::max(g.l2_bw_gbps, dram));
}

// Time (µs) to move `bytes` through DRAM, or through L2 for the share of the working set the L2
// holds, plus one memory latency: small transfers cannot keep enough bytes in flight to hide it.
// The L2 share saturates, x / (1 + x) with x = L2 / bytes: half at a working set the L2's size, the
// missed share never less than half as large with twice the L2, so no cache-capacity cliff makes
// twice the L2 more than twice as fast (a hard min(1, L2 / 2 bytes) jumped to all hits).
double memory_time(double bytes, const GpuCaps& g, const ModelParams& p, bool l2_cold) {
  if (bytes <= 0) return 0;
  const double l2_share = g.l2_bytes > 0 && !l2_cold ? g.l2_bytes / (g.l2_bytes + bytes) : 0.0;
  return bytes / (blended_bw(l2_share, g, p) * 1e3) + g.mem_latency_us;  // GB/s = 1e3 bytes/µs
}

// A memory-bound kernel's bound: latency when the fixed latency `t_lat` within its memory time `t_m`
// is at least the time its bytes take at bandwidth, memory otherwise.
Bound memory_or_latency(double t_m, double t_lat) {
  return t_lat > 0 && 2 * t_lat >= t_m ? Bound::latency : Bound::memory;
}

double at_least_1(int64_t v) { return double(std::max<int64_t>(v, 1)); }

// Threads per CTA of the launch the kernel list recorded (0: none recorded).
double recorded_cta_threads(const Kernel& k) {
  return k.block[0] > 0 ? double(k.block[0]) * at_least_1(k.block[1]) * at_least_1(k.block[2]) : 0.0;
}

// CTAs of `cta_threads` threads an SM holds at once (at least one).
double resident_ctas_per_sm(double cta_threads, const GpuCaps& g) {
  return std::max(1.0, std::floor(g.arch.threads_per_sm / cta_threads));
}

// Threads per CTA of a row kernel whose launch is not recorded (a synthesized list, a trace without
// block dimensions), as PyTorch launches them: its layer norm (vectorized_layer_norm_kernel) runs
// 32 x 4 threads; its long-row softmax (cunn_SoftMaxForward) the power of two at or above half of
// row / ILP (ILP = 16 bytes of elements per load, at most 1024 / 2), at least a warp
// (aten/src/ATen/native/cuda/SoftMax.cu, SoftMax_getBlockSize).
double default_row_threads(const Kernel& k) {
  if (k.cls != KernelClass::softmax || k.n <= 0) return 128;
  const double ilp = std::max(1.0, 16.0 / dtype_bytes(k.dtype));
  const double max_block = std::min(double(k.n) / ilp, 1024.0) / (ilp > 1 ? 2 : 1);
  double block = 1;
  while (block < max_block) block *= 2;
  return std::max(block, 32.0);
}

// The input bytes a row kernel's resident CTAs hold between two passes over their rows. PyTorch's
// row kernels (cunn_SoftMaxForward, vectorized_layer_norm_kernel) run one CTA per row and read it
// again for each pass, so a pass finds its row in L2 unless the rows of all resident CTAs
// (threads_per_sm / threads per CTA on each SM) overflow it. The rows come from the shape (m rows
// of n) or else from the launch grid (one CTA each); with neither, the whole input stands.
double resident_row_bytes(const Kernel& k, const GpuCaps& g) {
  const double in = k.bytes / 2;  // a row kernel reads its rows and writes as many
  const double rows = k.m > 0 && k.n > 0 ? at_least_1(k.batch) * double(k.m)
                                         : double(k.grid[0]) * at_least_1(k.grid[1]) * at_least_1(k.grid[2]);
  if (!(rows > 0)) return in;
  const double recorded = recorded_cta_threads(k);
  const double threads = recorded > 0 ? recorded : default_row_threads(k);
  const double resident = g.l2_sharing_sms * resident_ctas_per_sm(threads, g);
  return in * std::min(1.0, resident / rows);
}

// Time (µs) of a row kernel's re-reads, `bytes` in all: each pass re-reads what the resident CTAs read
// one pass before (`working_set` bytes), from L2 for the share 1 / (1 + x^2), x = working set / L2,
// from DRAM otherwise. A cyclic re-read keeps all of a set well inside the cache and loses most of
// one beyond it, so its share falls faster around the capacity than a streaming kernel's x / (1 + x)
// (half at the L2's size, 80% at half of it, 20% at twice): NeuSight's softmaxes on a T4 re-read
// from L2 while the resident rows take under half of its 4 MB L2 and mostly from DRAM once they take
// more (test split: 1.2x, then 2.1x the time of an element-wise op of the same bytes). No latency
// of its own: the passes follow the first read.
double reread_time(double bytes, double working_set, const GpuCaps& g, const ModelParams& p) {
  if (!(bytes > 0)) return 0;
  double l2_share = 0.0;
  if (g.l2_bytes > 0) {
    const double x = working_set / g.l2_bytes;
    l2_share = 1.0 / (1.0 + x * x);
  }
  return bytes / (blended_bw(l2_share, g, p) * 1e3);
}

// Time (µs) a kernel whose threads keep about one element in flight each (model/thread_access.h)
// takes to move its bytes at the bandwidth Little's law allows: the SMs' resident threads times the
// elements each keeps in flight, per DRAM round trip (GpuCaps::stream_latency_us); the round trips are
// its latency, so none is added. 0 for every other kernel. Resident threads: whole CTAs of the
// recorded launch, or of the family's rule from the row width (Kernel::n), up to the SM's threads.
double thread_bound_time(const Kernel& k, const GpuCaps& g) {
  if (k.access == ThreadAccess::none || !known(k.bytes) || !(k.bytes > 0)) return 0;
  const ThreadAccessFacts& f = facts(k.access);
  double cta = recorded_cta_threads(k);
  if (!(cta > 0)) {
    const double width = k.n > 0 ? double(k.n) / f.width_per_thread : double(f.max_threads);
    cta = f.fixed_threads > 0 ? double(f.fixed_threads)
                              : std::clamp(std::ceil(width / 32) * 32, 32.0, double(f.max_threads));  // whole warps
  }
  double per_sm = std::min(double(g.arch.threads_per_sm), resident_ctas_per_sm(cta, g) * cta);
  if (f.ctas_per_sm > 0) per_sm = std::min(per_sm, f.ctas_per_sm * cta);
  const double in_flight = g.sm_count * per_sm * f.elements * dtype_bytes(k.dtype);  // bytes
  return k.bytes * g.stream_latency_us / in_flight;
}

// How much a power-limited clock stretches a kernel's math: one with little work next to the
// board's boost budget runs mostly at boost, a long one at the sustained clock (fraction `derate`).
// It depends on the work only, so hardware knobs scale time through the rate alone.
double power_stretch(double flops, double derate, double boost_flops) {
  if (derate >= 1 || !(flops > 0)) return 1.0;
  return 1.0 / (1.0 - (1.0 - derate) * flops / (flops + boost_flops));
}

// A kernel whose math takes `t_c` and whose traffic takes `t_m` (µs, overlapped), behind the floor;
// bound by the larger, or by the launch floor when that exceeds both.
// `t_lat`: the fixed latency within `t_m` (0 where a link, not DRAM, holds the bytes).
inline KernelPrediction floored(const GpuCaps& g, double t_c, double t_m, double q, double t_lat,
                                KernelTerms* terms) {
  const double work = std::max(t_m, t_c);
  if (terms) *terms = KernelTerms{t_c, t_m, t_lat, g.launch_floor_us};
  KernelPrediction r;
  r.time_us = with_floor(g.launch_floor_us, work, q);
  r.bound = g.launch_floor_us > work ? Bound::launch : t_c > t_m ? Bound::compute : memory_or_latency(t_m, t_lat);
  return r;
}

}  // namespace

// Blends this close to 1 are the plain sum (pow() near q = 1 only adds rounding).
constexpr double kSumBlendMaxQ = 1.0001;

// A kernel cannot beat the launch floor, and short kernels pay part of it on top of their work:
// a smooth maximum (floor^q + work^q)^(1/q) between the sum (q = 1) and the plain max.

double with_floor(double floor, double work, double q) {
  if (work <= 0) return floor;
  if (q <= kSumBlendMaxQ) return floor + work;
  const double hi = std::max(floor, work), lo = std::min(floor, work);
  const double r = lo / hi;
  // The fitted blend sits at a power of two (8), where squarings and square roots give the same
  // value as pow() to a few ulps at a fraction of its cost; pow() was half of a prediction's time.
  const int halvings = q == 2.0 ? 1 : q == 4.0 ? 2 : q == 8.0 ? 3 : 0;
  if (halvings > 0) {
    double x = r;
    for (int i = 0; i < halvings; ++i) x *= x;
    double y = 1.0 + x;
    for (int i = 0; i < halvings; ++i) y = std::sqrt(y);
    return hi * y;
  }
  return hi * std::pow(1.0 + std::pow(r, q), 1.0 / q);
}

double work_behind_floor(double t, double floor, double q) {
  if (q <= kSumBlendMaxQ) return t - floor;
  return t * std::pow(1.0 - std::pow(floor / t, q), 1.0 / q);
}

double conv_gain(const ModelParams& p, ConvAlgo a, bool simt) {
  switch (a) {
    case ConvAlgo::unknown: return simt ? p[kConvChoiceGain] : 1.0;
    case ConvAlgo::gemm: return p[kConvGemmGain];
    case ConvAlgo::winograd: return p[kConvWinogradGain];
    case ConvAlgo::fft: return p[kConvFftGain];
    case ConvAlgo::legacy: return p[kConvLegacyGain];
    default: return 1.0;
  }
}

// One function by design (~120 lines): the tile x split-K search below is the predictor's hot loop
// (bench/predict_bench.cc, millions of predictions a second), and its terms share a dozen locals that
// separate functions would pass around or recompute.
KernelPrediction CostModel::gemm(const Kernel& k, const GpuCaps& g, double rate_scale, KernelTerms* terms) const {
  const ModelParams& p = params_;
  const int gd = gemm_dtype(g, k.dtype);
  const double sm_rate_named = gemm_rate(g, k.dtype) * rate_scale / g.sm_count /  // FLOP/µs per SM
                               power_stretch(k.gemm_flops(), g.gemm_derate[gd], g.gemm_boost_flops[gd]);
  const double bytes = known(k.bytes) ? k.bytes : k.gemm_bytes();
  const bool simt = g.simt_gemm[int(k.dtype)];
  // cuDNN's CUDA-core Winograd kernels: each CTA is one 128x128 tile over K = input channels for 128
  // outputs of 32 channels (model/conv_algo.h). They tile the output per image, not over m = batch x
  // H x W, so small images leave most of a CTA idle: a recorded launch grid counts the CTAs that ran;
  // without one, the outputs fill whole CTAs (the count for large images).
  const bool fused_winograd = simt && k.cls == KernelClass::conv && k.conv_algo == ConvAlgo::winograd;
  // cuDNN's Winograd-nonfused convolutions run their transformed products as one batched cuBLAS SGEMM
  // (grid z = kWinogradNonfusedProducts), each CTA the name's tile over K = input channels, for the
  // grid's CTAs (the per-image tiling included). Unlike a GEMM's, that tile and grid stand on other
  // architectures too: the product shapes are the convolution's, and transferred from one GPU to
  // another they predict the target better than its menu's best (NeuSight conv pairs A100-80GB -> T4:
  // 27.0% median with the menu, 12.1% with the source's tile).
  const bool nonfused_winograd = simt && k.cls == KernelClass::conv && k.conv_algo == ConvAlgo::gemm &&
                                 k.tile.known() && k.grid[0] > 0 && k.grid[2] == kWinogradNonfusedProducts;
  const bool named = simt && k.tile.known() && (g.arch.runs(k.tile.family) || nonfused_winograd);
  const bool winograd = fused_winograd || nonfused_winograd;
  const double grid_ctas =
      double(k.grid[0]) * double(std::max<int64_t>(k.grid[1], 1)) * double(std::max<int64_t>(k.grid[2], 1));
  auto tiles_of = [&](const GpuCaps::Tile& t) {
    if (winograd && k.grid[0] > 0) return grid_ctas;
    if (fused_winograd)
      return double(k.batch) * std::ceil(double(k.m) / kWinogradCtaPixels) *
             std::ceil(double(k.n) / kWinogradCtaChannels);
    return double(k.batch) * std::ceil(double(k.m) / t.m) * std::ceil(double(k.n) / t.n);
  };
  const double kk = double(k.k) / (winograd ? kWinogradTaps : 1);  // each CTA's K loop
  const double mn4 = 8.0 * double(k.batch) * double(k.m) * double(k.n);
  const double k_fill = simt ? p[kKFillSimt] : p[kKFill];
  // GEMM operands stream from DRAM: benchmark loops and real models rarely find them in L2.
  // Operand traffic without split-K is the same for every tile; split-K adds fp32 partial sums
  // written and read back by the reduction.
  const double inv_bw = 1.0 / (g.dram_bw_gbps * p[kGemmMemEff] * 1e3);
  const double latency = g.mem_latency_us;
  const double t_m1 = bytes * inv_bw + latency;
  // A measured SGEMM whose name records its tile, on an architecture that runs that kernel family,
  // ran that tile: the library's choice, not the menu's best. Its launch grid's z extent, where the
  // trace records one, is its K split (a batched GEMM's is the batch); without a grid the split is
  // chosen as for any GEMM.
  const int named_split = winograd ? 1
                          : !named || k.grid[2] <= 0 ? 0
                          : k.batch > 1              ? 1
                                                     : int(std::min<int64_t>(k.grid[2], 4096));
  // Without it, a GEMM takes the menu's best tile at the measured rate of the library's own choice
  // (convolutions: cuDNN's choice is in their fitted family rates).
  const bool unnamed_sgemm = simt && !named && k.cls == KernelClass::gemm;
  const double sm_rate = unnamed_sgemm ? sm_rate_named * p[kSimtChoiceEff] : sm_rate_named;
  // Architectures whose cuBLAS SGEMMs slow down over long per-CTA K ranges (ArchFacts::simt_long_k);
  // cuDNN's convolution kernels on them show no such trend (fitting them in made both boards' convs worse).
  const double long_k_exp = simt && g.arch.simt_long_k && k.cls == KernelClass::gemm ? p[kSimtLongKExp] : 0.0;
  auto long_k = [long_k_exp](double k_range) {
    return long_k_exp > 0 && k_range > kLongKElements ? std::pow(k_range / kLongKElements, long_k_exp) : 1.0;
  };
  const int first_split = named_split > 0 ? named_split : 1;
  const int max_split = named_split > 0 ? named_split : g.arch.split_k ? g.arch.max_split_k : 1;
  double best = 1e300, best_c = 0, best_m = 0, best_waves = 0;
  int best_tile = 0, best_split = 1;
  // SIMT GEMMs choose from their own menu, except batched ones on architectures where cuBLAS runs
  // every batched SGEMM with one tile (ArchFacts::simt_batched), thin or not.
  GpuCaps::TileMenu one;
  if (fused_winograd) {
    one.t[0] = g.simt_tile(kWinogradCtaTile, kWinogradCtaTile, p[kTileExpSimt]);
    one.n = 1;
  } else if (named) {
    one.t[0] = g.simt_tile(k.tile.m, k.tile.n, p[kTileExpSimt]);
    one.n = 1;
  }
  const GpuCaps::TileMenu& menu = fused_winograd || named ? one
                                  : !simt             ? g.tiles
                                  : (k.batch > 1 && g.simt_batched.n > 0 ? g.simt_batched : g.simt_tiles);
  for (int ti = 0; ti < menu.n; ++ti) {
    const GpuCaps::Tile& t = menu.t[ti];
    const double tiles = tiles_of(t);
    const double work_per_k = 2.0 * t.area * t.ctas / (sm_rate * t.eff);  // µs per k-element per wave
    for (int s = first_split; s <= max_split; s *= 2) {
      // Split K only while it fills idle SMs (or, where long per-CTA K ranges are slow, shortens one
      // beyond the knee) and leaves each split a useful K range.
      if (s > 1 && named_split == 0) {
        const bool fills = tiles * s <= 2 * t.slots || long_k(kk / (s / 2)) > 1.0;
        if (!fills || kk / s < 128) break;
      }
      // A partial last wave costs a full one, unless the library balances it across SMs
      // (stream-K), where only a fraction of a tile of imbalance remains. A SIMT SGEMM's last wave
      // costs what its busiest SM holds: with fewer of its small CTAs resident than fit, each gets a
      // larger share of the SM (A100: a sliced 128x32 SGEMM of 100 CTAs, one per SM, runs at 61% of
      // the SIMT peak). Tensor-core GEMMs keep the full-wave rule, which their corpora fit better
      // (held-out H100 BF16 median 9.0% against 14.8% with the shared rule).
      // (Full waves plus the last one's busiest SM come to ceil(CTAs / SMs) / CTAs-per-SM waves.)
      const double exact = tiles * s / t.slots;
      const double waves = g.arch.stream_k ? std::max(1.0, exact)
                           : simt          ? std::ceil(tiles * s / g.sm_count) / t.ctas
                                           : std::ceil(exact);
      const double t_c = waves * (kk / s + k_fill) * work_per_k * long_k(kk / s);
      const double t_m = s == 1 ? t_m1 : (bytes + mn4 * s) * inv_bw + latency;
      const double total = std::max(t_c, t_m) + (s > 1 ? p[kSplitKUs] : 0.0);
      if (total < best) best = total, best_c = t_c, best_m = t_m, best_waves = waves, best_tile = ti, best_split = s;
    }
  }
  if (nonfused_winograd) {
    // Its transform kernels stream the activations and the filters into the Winograd domain and the
    // products out of it (model/conv_algo.h).
    const double cin = double(k.k) / kWinogradTaps, cout = double(k.n);
    best += memory_time(kWinogradNonfusedBytes * double(k.batch) * double(k.m) * (cin + cout) +
                            kWinogradNonfusedFilterBytes * cin * cout,
                        g, p, k.l2_cold);
  }
  if (terms) {
    // The split-K reduction and the Winograd transforms come on top of the chosen configuration.
    *terms = KernelTerms{best_c, best_m, latency, g.launch_floor_us, best - std::max(best_c, best_m)};
    terms->tile_m = int(menu.t[best_tile].m), terms->tile_n = int(menu.t[best_tile].n);
    terms->split_k = best_split, terms->waves = best_waves;
  }
  KernelPrediction r;
  r.time_us = with_floor(g.launch_floor_us, best, p[kFloorBlend]);
  r.bound = g.launch_floor_us > best   ? Bound::launch
            : best_c >= best_m          ? Bound::compute
                                        : memory_or_latency(best_m, latency);
  return r;
}

KernelPrediction CostModel::streaming(const Kernel& k, const GpuCaps& g, double flops, KernelTerms* terms,
                                      double flop_per_us, double derate, double boost_flops) const {
  const double bytes = known(k.bytes) ? k.bytes : 0.0;
  const double t_m = std::max(memory_time(bytes, g, params_, k.l2_cold), thread_bound_time(k, g));
  const double rate = flop_per_us > 0 ? flop_per_us : std::max(g.vector_tflops, 1e-6) * 1e6;
  const double t_c = flops > 0 ? flops / rate * power_stretch(flops, derate, boost_flops) : 0.0;
  return floored(g, t_c, t_m, params_[kFloorBlend], bytes > 0 ? g.mem_latency_us : 0.0, terms);
}

KernelPrediction CostModel::row_kernel(const Kernel& k, const GpuCaps& g, double extra_passes,
                                       KernelTerms* terms) const {
  if (!known(k.bytes)) return streaming(k, g, 0, terms);
  // One read and one write stream as any kernel's; each extra pass re-reads the input (half the bytes).
  double t_m = memory_time(k.bytes, g, params_, k.l2_cold);
  if (extra_passes > 0) t_m += reread_time(extra_passes * 0.5 * k.bytes, resident_row_bytes(k, g), g, params_);
  t_m = std::max(t_m, thread_bound_time(k, g));
  return floored(g, 0.0, t_m, params_[kFloorBlend], k.bytes > 0 ? g.mem_latency_us : 0.0, terms);
}

KernelPrediction CostModel::over_link(const Kernel& k, const GpuCaps& g, double link_gbps, KernelTerms* terms,
                                      double net_bytes, double net_gbps) const {
  if (!(link_gbps > 0) || !known(k.bytes)) return streaming(k, g, 0, terms);
  double t_link = k.bytes / (link_gbps * 1e3);
  if (net_bytes > 0 && net_gbps > 0) t_link = std::max(t_link, net_bytes / (net_gbps * 1e3));
  const double t_m = t_link + g.mem_latency_us;
  // The link holds these bytes however few: no latency bound of their own.
  KernelPrediction r = floored(g, 0.0, t_m, params_[kFloorBlend], 0.0, terms);
  if (r.bound == Bound::memory) r.bound = Bound::link;  // the bytes cross the link, not DRAM
  return r;
}

KernelPrediction CostModel::at_gemm_rate(const Kernel& k, const GpuCaps& g, double rate_scale,
                                         KernelTerms* terms) const {
  const int gd = gemm_dtype(g, k.dtype);
  return streaming(k, g, known(k.flops) ? k.flops : 0.0, terms, gemm_rate(g, k.dtype) * rate_scale, g.gemm_derate[gd],
                   g.gemm_boost_flops[gd]);
}

double CostModel::context_pass_bytes(const Kernel& k) const {
  if (params_.context_a_pass_bytes.empty() || k.context.empty() || !k.has_shape()) return 0.0;
  return params_.context_a_pass(k.context) * double(k.batch) * double(k.m) * double(k.k);
}

double CostModel::operand_pass_us(double bytes, const GpuCaps& g) const {
  if (!(bytes > 0)) return 0.0;
  Kernel pass;
  pass.cls = KernelClass::elementwise;
  pass.bytes = bytes;
  return streaming(pass, g, 0, nullptr).time_us;
}

KernelPrediction CostModel::predict(const Kernel& k, const GpuCaps& g, KernelTerms* terms) const {
  const ModelParams& p = params_;
  switch (k.cls) {
    case KernelClass::gemm:
    case KernelClass::conv: {
      const bool simt = g.simt_gemm[int(k.dtype)];
      const double scale = k.cls == KernelClass::conv
                               ? p[kConvEff] * conv_gain(p, k.conv_algo, simt) * (simt ? g.simt_conv_scale : 1.0)
                               : 1.0;
      if (k.has_shape()) return gemm(k, g, scale, terms);
      return at_gemm_rate(k, g, scale, terms);  // no shape: FLOPs against the sustained rate
    }
    case KernelClass::attention:
      return at_gemm_rate(k, g, p[kAttnEff] * (k.mma_sync ? g.arch.mma_sync_fraction : 1.0), terms);
    case KernelClass::softmax: {
      // A row short enough for one warp's registers (PyTorch softmax_warp_forward, up to 1024
      // elements) is read once; longer rows (cunn_SoftMaxForward) are re-read for the max and the
      // sum. Without a row length, assume the long-row kernel. A Triton softmax that holds its rows
      // in registers (Kernel::row_read_once) reads them once at any length.
      const bool one_pass = k.row_read_once || (k.n > 0 && k.n <= kWarpSoftmaxMaxRow);
      return row_kernel(k, g, one_pass ? 0.0 : p[kSoftmaxPasses], terms);
    }
    case KernelClass::normalization:
      return row_kernel(k, g, k.row_read_once ? 0.0 : p[kNormPasses], terms);
    case KernelClass::communication:
      // A collective moves its `bytes` (what each GPU sends, the bus bytes of NCCL's accounting)
      // over the GPU-to-GPU link, not through DRAM, and its `net_bytes` over the network between
      // nodes; without a link figure, as any streaming kernel (without a network figure, the link's).
      return over_link(k, g, g.link_gbps, terms, k.net_bytes, g.net_gbps);
    case KernelClass::memcpy:
      // A copy to or from the host crosses the host link, a peer copy the GPU-to-GPU link
      // (model/copy_kind.h); a device-to-device copy streams through DRAM.
      return over_link(k, g, k.copy == CopyKind::host ? g.host_gbps : k.copy == CopyKind::peer ? g.link_gbps : 0.0,
                       terms);
    case KernelClass::elementwise: {
      const double flops = known(k.flops) ? k.flops : (known(k.bytes) ? k.bytes * p[kElementwiseFlopsPerByte] : 0);
      return streaming(k, g, flops, terms);
    }
    default:
      return streaming(k, g, known(k.flops) ? k.flops : 0.0, terms);
  }
}

}  // namespace kcast
