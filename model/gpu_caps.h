// GpuCaps: the effective capabilities the cost model evaluates against, derived once per GPU from
// its datasheet row, its measured figures (microbenchmarks) and the architecture facts. What-if
// studies edit this struct directly (knobs map one-to-one onto its fields).
#pragma once
#include <string>

#include "model/arch_facts.h"
#include "model/gpu_spec.h"
#include "model/model_params.h"

namespace kcast {

struct GpuCaps {
  std::string name;
  int sm_count = 1;
  double clock_mhz = 1000;
  double dram_bw_gbps = 1;      // sustained
  double l2_bw_gbps = 1;        // sustained
  double l2_bytes = 0;
  double tensor_tflops[7] = {};  // sustained GEMM rate per dtype (SIMT rate for fp32/fp64, or
                                 // where no tensor unit exists); 0 = unsupported
  bool simt_gemm[7] = {};        // GEMMs of this dtype run on CUDA cores
  double vector_tflops = 1;      // SIMT FP32 (elementwise math)
  double launch_floor_us = 2.5;  // minimum kernel duration
  double power_derate = 1;       // sustained/boost clock under dense math (power limit)
  ArchFacts arch;
  // The GEMM tile menu with what the model needs per tile, derived once here because the GEMM
  // term is evaluated millions of times per second.
  struct Tile {
    double m, n, area;
    double eff;    // per-SM throughput relative to a 128x128 tile
    double ctas;   // CTAs of this tile resident per SM
    double slots;  // ctas * sm_count
  };
  Tile tiles[8];
  int num_tiles = 0;
};

// `table` is the architecture-facts table (data/archs.csv).
GpuCaps derive_caps(const GpuSpec& gpu, const ModelParams& params, const std::vector<ArchFacts>& table);

}  // namespace kcast
