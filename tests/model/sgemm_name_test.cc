#include "model/sgemm_name.h"

#include <gtest/gtest.h>

#include "calibrate/model_file.h"
#include "model/cost_model.h"
#include "tests/model/compute_bound_gpu.h"

namespace kcast {
namespace {

// cuBLAS's A x B tiles kcast's n x m (measured_shapes_test checks it against the recorded grids).
TEST(SgemmName, TileAndFamilyFromCublasNames) {
  SgemmTile t = sgemm_tile_of("maxwell_sgemm_128x64_nn");
  EXPECT_EQ(t.family, SgemmFamily::maxwell);
  EXPECT_EQ(t.m, 64);
  EXPECT_EQ(t.n, 128);
  t = sgemm_tile_of("volta_sgemm_64x32_sliced1x4_tn");
  EXPECT_EQ(t.family, SgemmFamily::volta);
  EXPECT_EQ(t.m, 32);
  EXPECT_EQ(t.n, 64);
  t = sgemm_tile_of("void ampere_sgemm_32x128_tn(...)");  // PyTorch profiler spelling
  EXPECT_EQ(t.family, SgemmFamily::ampere);
  EXPECT_EQ(t.m, 128);
  EXPECT_EQ(t.n, 32);
  EXPECT_EQ(sgemm_tile_of("turing_sgemm_128x128_nt").family, SgemmFamily::turing);
}

TEST(SgemmName, NamesWithoutAKnownTileGiveNone) {
  for (const char* name : {"", "sgemm", "volta_sgemm_", "volta_sgemm_128x", "volta_sgemm_x64_nn", "volta_sgemm_0x64_nn",
                           "volta_sgemm_128x64x2_nn", "volta_sgemm_99999x64_nn", "kepler_sgemm_128x64_nn",
                           "sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x16", "gemv2T_kernel_val<int, int, float>",
                           "cutlass_80_simt_sgemm_128x128_8x4_nn_align1"}) {
    EXPECT_FALSE(sgemm_tile_of(name).known()) << name;
  }
}

GpuSpec round_gpu(const char* cc) { return testing::compute_bound_gpu(cc, 80); }

Kernel big_sgemm(const char* name) {
  Kernel k;
  k.name = name;
  k.cls = KernelClass::gemm;
  k.dtype = DType::fp32;
  k.m = 4096, k.n = 4096, k.k = 4096;
  k.tile = sgemm_tile_of(name);
  k.derive_from_shape();
  return k;
}

// A measured SGEMM ran the tile its name records: a small tile is slower than the menu's best one
// by its per-SM throughput, on an architecture that runs that kernel family only.
TEST(SgemmName, NamedTileReplacesTheMenusChoiceOnItsArchitectures) {
  ModelParams p;
  p[kFloorBlend] = 1.0;
  p[kSimtChoiceEff] = 1.0;
  CostModel m(p, default_arch_facts());
  const GpuCaps volta = m.caps(round_gpu("7.0"));
  const double best = m.predict(big_sgemm("no tile in this name"), volta).time_us;
  const double small = m.predict(big_sgemm("volta_sgemm_64x32_sliced1x4_tn"), volta).time_us;
  const double large = m.predict(big_sgemm("volta_sgemm_128x128_tn"), volta).time_us;
  // (2048/16384)^0.3 = 0.54 of the 128x128 tile's throughput per SM: 1.87x the time, less what the
  // smaller tile saves in waves.
  EXPECT_GT(small, 1.3 * best);
  EXPECT_LT(small, 1.95 * best);
  EXPECT_NEAR(large, best, 0.05 * best);
  // An Ampere kernel's tile says nothing about a Volta GPU, nor a Volta one about Pascal.
  EXPECT_EQ(m.predict(big_sgemm("ampere_sgemm_64x32_sliced1x4_tn"), volta).time_us, best);
  const GpuCaps pascal = m.caps(round_gpu("6.0"));
  EXPECT_EQ(m.predict(big_sgemm("volta_sgemm_64x32_sliced1x4_tn"), pascal).time_us,
            m.predict(big_sgemm("no tile"), pascal).time_us);
  // Turing runs the volta_sgemm kernels (NeuSight's T4 traces).
  const GpuCaps turing = m.caps(round_gpu("7.5"));
  const double turing_small = m.predict(big_sgemm("volta_sgemm_64x32_sliced1x4_tn"), turing).time_us;
  const double turing_best = m.predict(big_sgemm("no tile"), turing).time_us;
  EXPECT_GT(turing_small, 1.3 * turing_best);
  EXPECT_LT(turing_small, 1.95 * turing_best);
}

// A named SGEMM's grid z extent is its K split (NeuSight's V100 traces: volta_sgemm_64x32_sliced1x4_tn
// launched as 2 x 7 x 11 for a 223 x 86 output with K = 11949); a batched one's is the batch.
TEST(SgemmName, GridZOfANamedSgemmIsItsKSplit) {
  ModelParams p;
  p[kFloorBlend] = 1.0;
  p[kSplitKUs] = 0.0;
  CostModel m(p, default_arch_facts());
  GpuSpec g = round_gpu("7.0");
  const GpuCaps c = m.caps(g);
  Kernel k = big_sgemm("volta_sgemm_64x64_nn");
  k.m = k.n = 64, k.k = 1 << 20;
  k.flops = k.gemm_flops(), k.bytes = k.gemm_bytes();
  k.grid[0] = k.grid[1] = 1, k.grid[2] = 1;
  const double one = m.predict(k, c).time_us - 1.0;
  k.grid[2] = 8;
  const double eight = m.predict(k, c).time_us - 1.0;
  EXPECT_NEAR(eight, one / 8, one * 0.01);
}

// An SGEMM without a tile runs the menu's best tile at simt_choice_eff of its rate; one with a
// named tile, and a convolution (cuDNN's choice is in its fitted family rates), does not.
TEST(SgemmName, UnnamedSgemmsPayTheLibrarysChoice) {
  ModelParams p;
  p[kFloorBlend] = 1.0;
  p[kSimtChoiceEff] = 1.0;
  CostModel full(p, default_arch_facts());
  p[kSimtChoiceEff] = 0.8;
  CostModel choice(p, default_arch_facts());
  const GpuSpec g = round_gpu("7.0");
  const GpuCaps cf = full.caps(g), cc = choice.caps(g);
  const Kernel unnamed = big_sgemm("gemm");
  EXPECT_NEAR(choice.predict(unnamed, cc).time_us - 1.0, (full.predict(unnamed, cf).time_us - 1.0) / 0.8, 1e-6);
  const Kernel named = big_sgemm("volta_sgemm_128x64_tn");
  EXPECT_EQ(choice.predict(named, cc).time_us, full.predict(named, cf).time_us);
  Kernel conv = unnamed;
  conv.cls = KernelClass::conv;
  EXPECT_EQ(choice.predict(conv, cc).time_us, full.predict(conv, cf).time_us);
}

}  // namespace
}  // namespace kcast
