// ArchFacts: what a GPU architecture does that its datasheet row does not say, kept as data
// (data/archs.csv, keyed by compute capability): how much of the quoted FP32 rate SGEMM can use
// (Ampere GA10x and Ada count dual-issued FP32 lanes), the GEMM library's tile menu and whether it
// splits K for small output tiles, and how many GEMM CTAs share an SM.
#pragma once
#include <string>
#include <vector>

#include "model/sgemm_name.h"

namespace kcast {

struct GemmTile {
  int m, n;
};

struct ArchFacts {
  std::string compute_capability;  // "8.0"; "*" = fallback row
  double fp32_gemm_factor = 1.0;   // usable fraction of datasheet FP32 for SGEMM
  // Watts an SM of this architecture draws per GHz under dense math, where measured boards pin it
  // down (data/archs.csv gives the boards); 0 = the fitted params.watts_per_sm_ghz. An SM's draw
  // follows its work per clock and its process, so it is an architecture's, not one constant.
  double watts_per_sm_ghz = 0;
  // The power an SM of this architecture draws under dense FP8 / FP4 tensor math relative to BF16,
  // where measured boards pin it down; 0 = the fitted params.narrow_power_factor.
  double narrow_power_factor = 0;
  // The share of this architecture's tensor rate that attention kernels written with Ampere's
  // mma.sync reach relative to their share on the architecture they were written for
  // (model/attention_kernel.h); 1 where mma.sync is the native instruction.
  double mma_sync_fraction = 1.0;
  // Most threads an SM holds resident (CUDA Programming Guide, technical specifications per compute
  // capability; AMD: wavefront slots x 64): how many rows a row kernel's CTAs (one per row) work on at
  // once, the working set its re-reads find in L2 (model/cost_model.cc, reread_time).
  int threads_per_sm = 2048;
  int ctas_per_sm = 1;             // concurrent GEMM CTAs per SM for the large tiles
  bool split_k = true;             // library splits K when output tiles under-fill the GPU
  int max_split_k = 16;
  bool stream_k = false;           // library balances the last partial wave across SMs (stream-K)
  std::vector<GemmTile> tiles{{256, 128}, {128, 128}, {128, 64}, {64, 64}};
  std::vector<GemmTile> simt_tiles;  // SGEMM (CUDA-core) tile menu; empty = the same as `tiles`
  // The one tile cuBLAS runs every batched SGEMM with on this architecture, whatever its shape (m x n
  // in kcast's orientation; cuBLAS names it the other way round: maxwell_sgemm_128x64_nn is 64x128);
  // {0, 0} = the library chooses per shape, like single GEMMs.
  GemmTile simt_batched{0, 0};
  // The cuBLAS SGEMM kernel families this architecture runs (bit i = SgemmFamily i): a measured
  // kernel of one of them ran the tile its name records, so that tile replaces the menu's choice.
  uint32_t sgemm_families = 0;
  // Its SGEMMs slow down when each CTA runs a long K range (params simt_long_k_exp): measured on both
  // Pascal boards (P100, P4: 2-3x from 4096 to 65536 elements of K per CTA at equal work per CTA, the
  // same whether the range is long from K itself or from less split-K), not on Volta or Ampere.
  bool simt_long_k = false;
  bool runs(SgemmFamily f) const { return f != SgemmFamily::none && (sgemm_families >> unsigned(f) & 1u); }
};

// Facts for `cc`: exact row, else the same major version, else the fallback ("*") row.
const ArchFacts& find_arch_facts(const std::vector<ArchFacts>& table, const std::string& cc);

}  // namespace kcast
