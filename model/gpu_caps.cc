#include "model/gpu_caps.h"

#include <algorithm>
#include <cmath>

namespace kcast {

GpuCaps::Tile GpuCaps::make_tile(int m, int n, double tile_exp) const {
  Tile o;
  o.m = m;
  o.n = n;
  o.area = double(m) * n;
  o.eff = std::min(1.0, std::pow(o.area / 16384.0, tile_exp));
  o.ctas = std::clamp(std::floor(16384.0 / o.area), 1.0, 4.0) * arch.ctas_per_sm;
  o.slots = o.ctas * sm_count;
  return o;
}

GpuCaps::Tile GpuCaps::simt_tile(int m, int n, double tile_exp) const {
  for (int i = 0; i < simt_tiles.n; ++i)
    if (simt_tiles.t[i].m == m && simt_tiles.t[i].n == n) return simt_tiles.t[i];
  return make_tile(m, n, tile_exp);
}

GpuCaps derive_caps(const GpuSpec& g, const ModelParams& p, const std::vector<ArchFacts>& table) {
  GpuCaps c;
  c.name = g.name;
  c.arch = find_arch_facts(table, g.compute_capability);
  c.compute_capability = g.compute_capability;
  c.sm_count = g.sm_count > 0 ? g.sm_count : 1;
  c.l2_sharing_sms = c.sm_count;
  c.clock_mhz = known(g.boost_clock_mhz) ? g.boost_clock_mhz : 1000;
  c.dram_bw_gbps = known(g.measured_dram_bw_gbps) ? g.measured_dram_bw_gbps : g.dram_bw_gbps * p[kMemEff];
  c.l2_bw_gbps = known(g.measured_l2_bw_gbps)
                     ? g.measured_l2_bw_gbps
                     : p[kL2BytesPerClk] * c.sm_count * c.clock_mhz * 1e-3;  // GB/s
  // Every DRAM byte passes through L2, so L2 delivers at least what DRAM does: a per-SM-clock estimate
  // below that (an announced HBM4 part, 22 TB/s on 224 SMs) would make cached data slower than DRAM.
  c.l2_bw_gbps = std::max(c.l2_bw_gbps, c.dram_bw_gbps);
  c.l2_bytes = known(g.l2_mb) ? g.l2_mb * 1e6 : 0;
  c.launch_floor_us = known(g.measured_launch_us) ? g.measured_launch_us : p[kFloorUs];
  c.mem_latency_us = p[kMemLatencyCycles] / c.clock_mhz;  // a latency in cycles: a slower clock, a longer wait
  c.stream_latency_us =
      known(g.measured_stream_latency_us) ? g.measured_stream_latency_us : kStreamLatencyCycles / c.clock_mhz;
  c.context_scale = known(g.measured_context_scale) ? g.measured_context_scale : 1.0;
  c.link_gbps = known(g.link_gbps) ? g.link_gbps * kLinkEff : 0.0;
  c.net_gbps = known(g.net_gbps) ? g.net_gbps * kNetEff : 0.0;
  c.host_gbps = known(g.host_gbps) ? g.host_gbps * kHostLinkEff : 0.0;
  // Power limit: the clock a board can hold under dense math when its power budget per SM is
  // below what an SM draws at boost. Measured rates already include it.
  const double sm_watts = c.arch.watts_per_sm_ghz > 0 ? c.arch.watts_per_sm_ghz : p[kWattsPerSmGhz];
  // The clock fraction the board holds when each SM draws `watts` per GHz.
  auto held_clock = [&](double watts) {
    return known(g.tdp_w) && known(g.boost_clock_mhz)
               ? std::min(1.0, g.tdp_w / (c.sm_count * g.boost_clock_mhz * 1e-3 * watts))
               : 1.0;
  };
  const double power = held_clock(sm_watts);
  // Narrow math draws more power per SM and clock: the clock a board holds under it, whether or not
  // its rate was measured (a best-shape microbenchmark runs each shape for milliseconds, at boost; a
  // training step runs its GEMMs back to back for seconds).
  const double narrow_factor = c.arch.narrow_power_factor > 0 ? c.arch.narrow_power_factor : p[kNarrowPowerFactor];
  const double narrow_power = held_clock(sm_watts * narrow_factor);
  // SIMT FP32: a measured FMA rate already reflects dual issue and clocks under load.
  const double fp32 = known(g.fp32_tflops) ? g.fp32_tflops : 0;  // at boost clock
  c.vector_tflops = known(g.measured_fp32_tflops) ? g.measured_fp32_tflops : fp32 * power * c.arch.fp32_gemm_factor;
  // A board's SIMT GEMM and convolution efficiencies relative to eff_simt (GpuSpec).
  const double sgemm = known(g.measured_sgemm_scale) ? g.measured_sgemm_scale : 1.0;
  c.simt_conv_scale = known(g.measured_conv_scale) ? g.measured_conv_scale / sgemm : 1.0;
  for (DType d : kAllDTypes) {
    const int i = int(d);
    double peak = 0, eff = 0;
    if (d == DType::fp32 || !g.has_tensor(d)) {
      // SIMT path: FP32 GEMMs without TF32, FP64 without tensor FP64, FP16 on Pascal.
      double simt = known(g.peak_tflops(d)) ? g.peak_tflops(d) : 0;
      if (d == DType::tf32) simt = fp32;  // TF32 requested where no tensor unit: runs as FP32
      if (d == DType::fp32 || d == DType::tf32) simt *= c.arch.fp32_gemm_factor;
      peak = simt;
      eff = p[kEffSimt] * sgemm;
      c.simt_gemm[i] = true;
      c.gemm_derate[i] = power;
    } else {
      peak = g.peak_tflops(d);
      const bool measured = known(g.measured_gemm_eff[i]);
      eff = measured ? g.measured_gemm_eff[i] * p[kEffOfBest] : p[kEffTensor];
      // A measured 16-bit rate is a best-shape microbenchmark's too, taken at boost: where the
      // architecture's SM power is itself measured (archs.csv), the power limit applies to it as to a
      // datasheet rate. Elsewhere the fitted catch-all figure is not trusted to derate a measurement.
      const bool held_at_boost = measured && !(c.arch.watts_per_sm_ghz > 0);
      c.gemm_derate[i] = d == DType::fp8 || d == DType::fp4 ? narrow_power : held_at_boost ? 1.0 : power;
    }
    c.tensor_tflops[i] = peak * eff;
    c.gemm_boost_flops[i] = p[kPowerTauUs] * c.tensor_tflops[i] * 1e6;
  }
  // FP8 or FP4 on a GPU without such units (FP8: A100, V100 with FP16 tensor cores; FP4: everything
  // before Blackwell): serving stacks run such checkpoints with weight-only kernels (FP8 Marlin,
  // FP4 Marlin, Triton's MXFP4 matmul) that upcast in registers and multiply on the 16-bit tensor
  // cores, not on CUDA cores. The operands still stream at their narrow width (Kernel::gemm_bytes).
  for (DType narrow : {DType::fp8, DType::fp4}) {
    const std::optional<DType> unit = g.weight_only_unit(narrow);
    if (!unit) continue;
    const int q = int(narrow), w = int(*unit);
    c.tensor_tflops[q] = c.tensor_tflops[w];
    c.simt_gemm[q] = false;
    c.gemm_derate[q] = c.gemm_derate[w];
    c.gemm_boost_flops[q] = c.gemm_boost_flops[w];
  }
  auto fill = [&](const std::vector<GemmTile>& from, double exp, GpuCaps::TileMenu& menu) {
    for (const GemmTile& t : from) {
      if (menu.n == 12) break;
      menu.t[menu.n++] = c.make_tile(t.m, t.n, exp);
    }
  };
  fill(c.arch.tiles, p[kTileExp], c.tiles);
  fill(c.arch.simt_tiles.empty() ? c.arch.tiles : c.arch.simt_tiles, p[kTileExpSimt], c.simt_tiles);
  if (c.arch.simt_batched.m > 0) fill({c.arch.simt_batched}, p[kTileExpSimt], c.simt_batched);
  c.set_tile_slots();
  return c;
}

GpuCaps sustained_caps(GpuCaps caps) {
  for (double& budget : caps.gemm_boost_flops) budget = 0;
  return caps;
}

}  // namespace kcast
