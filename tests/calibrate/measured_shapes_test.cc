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

}  // namespace
}  // namespace kcast
