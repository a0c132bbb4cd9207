// The shipped FP32 corpus (data/measured/neusight_ops.csv) must describe each GEMM as the GPU ran
// it: cuBLAS names its tile (e.g. ampere_sgemm_128x64_tn) and the trace records the launch grid, which
// covers the output n x m in tiles (grid_x = ceil(n / tile_m), grid_y = ceil(m / tile_n)). A swap
// of n and k (NeuSight names the reduction N) would break it for most rows.
#include <gtest/gtest.h>

#include <regex>

#include "calibrate/classifier_rules.h"
#include "calibrate/gpu_database_csv.h"
#include "calibrate/kernel_list_csv.h"

namespace kcast {
namespace {

TEST(MeasuredShapes, GemmGridsCoverTheOutputInTheNamedTiles) {
  const std::vector<Kernel> rows =
      read_kernel_list(KCAST_SOURCE_DIR "/data/measured/neusight_ops.csv",
                       KernelListOptions{&default_gpu_database(), &default_classifier()});
  const std::regex tile(R"(sgemm_(\d+)x(\d+)_(nn|tn|nt|tt)$)");
  size_t checked = 0, matched = 0;
  for (const Kernel& k : rows) {
    std::smatch mt;
    if (k.cls != KernelClass::gemm || !std::regex_search(k.name, mt, tile)) continue;
    const int64_t tm = std::stoll(mt[1]), tn = std::stoll(mt[2]);
    auto tiles = [](int64_t extent, int64_t t) { return (extent + t - 1) / t; };
    ++checked;
    matched += k.grid[0] == tiles(k.n, tm) && k.grid[1] == tiles(k.m, tn);
  }
  ASSERT_GT(checked, 10000u);
  // A few launches split K or batch into the grid; all but those must match.
  EXPECT_GT(double(matched) / double(checked), 0.95) << matched << " of " << checked;
}

// The convolutions' Winograd tilings (model/conv_algo.h): cuDNN's fused Winograd kernels' CTAs hold
// 128 outputs of 32 channels each, so their grids cover at least the output; its SGEMM
// (Winograd-nonfused) convolutions launch 36 transformed products in grid z.
TEST(MeasuredShapes, ConvolutionGridsMatchTheirWinogradTiling) {
  const std::vector<Kernel> rows =
      read_kernel_list(KCAST_SOURCE_DIR "/data/measured/neusight_ops.csv",
                       KernelListOptions{&default_gpu_database(), &default_classifier()});
  size_t winograd = 0, winograd_ok = 0, nonfused = 0, nonfused_ok = 0;
  for (const Kernel& k : rows) {
    if (k.cls != KernelClass::conv) continue;
    if (k.conv_algo == ConvAlgo::winograd) {
      ++winograd;
      winograd_ok += k.grid[0] * k.grid[1] * k.grid[2] * kWinogradCtaPixels * kWinogradCtaChannels >= k.m * k.n;
    } else if (k.conv_algo == ConvAlgo::gemm && k.tile.known()) {
      ++nonfused;
      nonfused_ok += k.grid[2] == kWinogradNonfusedProducts;
    }
  }
  ASSERT_GT(winograd, 4000u);
  ASSERT_GT(nonfused, 4500u);
  EXPECT_GT(double(winograd_ok) / double(winograd), 0.99) << winograd_ok << " of " << winograd;
  EXPECT_EQ(nonfused_ok, nonfused);
}

}  // namespace
}  // namespace kcast
