// The shipped FP32 corpus (data/measured/neusight_ops.csv) must describe each GEMM as the GPU ran
// it: cuBLAS names its tile (e.g. ampere_sgemm_128x64_tn) and the trace records the launch grid, which
// covers the output n x m in tiles (grid_x = ceil(n / tile_m), grid_y = ceil(m / tile_n)). A swap
// of n and k (NeuSight names the reduction N) would break it for most rows.
#include <gtest/gtest.h>

#include <csv.h>

#include <cmath>
#include <regex>
#include <string>

#include "io/classifier_rules.h"
#include "io/gpu_database_csv.h"
#include "io/kernel_list_csv.h"

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

// The torch.mm corpus (data/measured/torch_mm_square.csv) is transcribed by hand from TFLOPS
// reports: every row's duration must be the square GEMM's 2 n^3 FLOPs at the reported rate, on a GPU
// of the database, at no more than 1.2x the GPU's dense peak for that dtype (a TF32 figure filed
// under FP32, as one report did, would be 8x its SIMT peak).
TEST(MeasuredShapes, TorchMmRowsAreTheirReportedRatesWithinTheGpusPeaks) {
  io::CSVReader<6, io::trim_chars<' '>, io::double_quote_escape<',', '"'>> in(KCAST_SOURCE_DIR
                                                                               "/data/measured/torch_mm_square.csv");
  in.read_header(io::ignore_extra_column, "dtype", "m", "k", "duration_us", "gpu", "tflops_reported");
  std::string dtype, gpu;
  double m = 0, k = 0, us = 0, tflops = 0;
  size_t rows = 0;
  while (in.read_row(dtype, m, k, us, gpu, tflops)) {
    ++rows;
    const GpuSpec& g = default_gpu_database().resolve(gpu);
    EXPECT_EQ(m, k) << gpu << " " << dtype;
    EXPECT_NEAR(us, 2 * m * m * m / (tflops * 1e6), us * 1e-4) << gpu << " " << dtype << " " << m;
    EXPECT_LE(tflops, 1.2 * g.peak_tflops(parse_dtype(dtype).value())) << gpu << " " << dtype << " " << m;
  }
  EXPECT_GT(rows, 100u);
}

// Liger-Kernel's benchmark rows (data/measured/liger_memory_ops.csv) start with a cleared L2, so
// every byte a row counts comes from DRAM: no row may move its bytes faster than its GPU's
// datasheet DRAM bandwidth (a wrong shape or a misread unit would), and each GPU the file names is
// in the database.
TEST(MeasuredShapes, LigerRowsMoveTheirBytesWithinTheGpusDramBandwidth) {
  io::CSVReader<4, io::trim_chars<' '>, io::double_quote_escape<',', '"'>> in(KCAST_SOURCE_DIR
                                                                               "/data/measured/liger_memory_ops.csv");
  in.read_header(io::ignore_extra_column, "bytes", "duration_us", "gpu", "l2");
  std::string gpu, l2;
  double bytes = 0, us = 0;
  size_t rows = 0;
  while (in.read_row(bytes, us, gpu, l2)) {
    ++rows;
    const GpuSpec& g = default_gpu_database().resolve(gpu);
    EXPECT_EQ(l2, "cold") << gpu;
    EXPECT_GT(bytes, 0) << gpu;
    EXPECT_LE(bytes / us / 1e3, g.dram_bw_gbps) << gpu << " " << bytes << " B in " << us << " us";
  }
  EXPECT_GT(rows, 150u);
}

}  // namespace
}  // namespace kcast
