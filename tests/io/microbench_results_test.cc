#include "io/microbench_results.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "io/gpu_database_csv.h"
#include "microbench/csv_output.h"  // the CUDA tool's writer (header-only, CUDA-free)
#include "model/error.h"

namespace kcast {
namespace {

const char* const kHeader = "benchmark,dtype,size,value,unit,spread,device,notes\n";

std::string error_of(const std::string& text) {
  try {
    parse_microbench_csv(text, "mb.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

MicrobenchRow row(std::string benchmark, std::string dtype, std::string size, double value,
                  std::string unit, double spread = kUnknown, std::string notes = "") {
  MicrobenchRow r;
  r.benchmark = std::move(benchmark);
  r.dtype = std::move(dtype);
  r.size = std::move(size);
  r.value = value;
  r.unit = std::move(unit);
  r.spread = spread;
  r.notes = std::move(notes);
  return r;
}

TEST(MicrobenchResults, RoundTripsThroughWriter) {
  MicrobenchResults res;
  res.device = "NVIDIA A100-SXM4-40GB";
  res.rows = {row("device_info", "", "", 108, "sm_count", 0, "tool=kcast-microbench mode=full"),
              row("dram_bw_copy", "", "1073741824", 1380.2123456789, "GB/s", 0.004,
                  "blocks_per_sm=4 block=256"),
              row("gemm_cublaslt", "bf16", "4096x4096x4096", 260.3, "TFLOP/s", 0.0123,
                  "notes with \"quotes\", and a comma"),
              row("launch_interval", "", "", 2.4, "us"),
              row("tensor_mma", "int8", "", 1e-300, "TOP/s", 1.0 / 3.0)};
  std::ostringstream out;
  write_microbench_csv(res, out);
  const MicrobenchResults back = parse_microbench_csv(out.str(), "rt.csv");
  EXPECT_EQ(back.device, res.device);
  EXPECT_EQ(back.source_file, "rt.csv");
  ASSERT_EQ(back.rows.size(), res.rows.size());
  for (size_t i = 0; i < res.rows.size(); ++i) {
    const MicrobenchRow &a = res.rows[i], &b = back.rows[i];
    SCOPED_TRACE(a.benchmark);
    EXPECT_EQ(b.benchmark, a.benchmark);
    EXPECT_EQ(b.dtype, a.dtype);
    EXPECT_EQ(b.size, a.size);
    EXPECT_EQ(b.value, a.value);  // exact: the writer prints shortest round-trip text
    EXPECT_EQ(b.unit, a.unit);
    EXPECT_EQ(std::isnan(b.spread), std::isnan(a.spread));
    if (!std::isnan(a.spread)) {
      EXPECT_EQ(b.spread, a.spread);
    }
    EXPECT_EQ(b.device, res.device);
    EXPECT_EQ(b.notes, a.notes);
    EXPECT_EQ(b.line, unsigned(i + 2));
  }
}

// The contract between the two sides: what kcast-microbench writes, kcast reads back unchanged.
TEST(MicrobenchResults, ReadsWhatTheToolWrites) {
  using microbench::Row;
  const std::vector<Row> rows = {
      {"device_info", "", "", 132, "sm_count", 0, "tool=kcast-microbench mode=quick pci=0000:18:00.0"},
      {"dram_bw", "", "1677721600", 3021.4567, "GB/s", 0.0041, "kernel=triad blocks_per_sm=4 block=256"},
      {"l2_bw", "", "6291456", 9876.5, "GB/s", NAN, "median of 5 working sets in [L2/16, L2/2]"},
      {"gemm_peak", "fp8", "8192x8192x8192", 1234.5, "TFLOP/s", 0.01, "layout=TN out=bf16"},
      {"launch_interval", "", "", 2.43, "us", 0.02, "empty kernel grid=1 block=32, 1000 launches"}};
  std::ostringstream out;
  microbench::write_csv(out, rows, "NVIDIA H100 80GB HBM3");
  const MicrobenchResults res = parse_microbench_csv(out.str(), "tool.csv");
  EXPECT_EQ(res.device, "NVIDIA H100 80GB HBM3");
  ASSERT_EQ(res.rows.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE(rows[i].benchmark);
    EXPECT_EQ(res.rows[i].benchmark, rows[i].benchmark);
    EXPECT_EQ(res.rows[i].dtype, rows[i].dtype);
    EXPECT_EQ(res.rows[i].size, rows[i].size);
    EXPECT_EQ(res.rows[i].value, rows[i].value);
    EXPECT_EQ(res.rows[i].unit, rows[i].unit);
    EXPECT_EQ(std::isnan(res.rows[i].spread), std::isnan(rows[i].spread));
    EXPECT_EQ(res.rows[i].notes, rows[i].notes);
  }
  EXPECT_DOUBLE_EQ(res.get("dram_bw"), 3021.4567);
  EXPECT_DOUBLE_EQ(res.get("gemm_peak", "fp8"), 1234.5);
}

TEST(MicrobenchResults, ReadsCommentsExtraColumnsAndDtypeSpellings) {
  const auto res = parse_microbench_csv(
      "# published figures\n"
      "\n"
      "benchmark,dtype,size,value,unit,spread,device,notes,extra\n"
      "gemm_peak,bfloat16,1024x10240x5120,271.2,TFLOP/s,,A100-SXM4-40GB,published: x,ignored\n",
      "mb.csv");
  ASSERT_EQ(res.rows.size(), 1u);
  EXPECT_EQ(res.rows[0].dtype, "bf16");
  EXPECT_EQ(res.rows[0].line, 4u);
  EXPECT_TRUE(std::isnan(res.rows[0].spread));
  EXPECT_DOUBLE_EQ(res.get("gemm_peak", "bf16"), 271.2);
  EXPECT_EQ(res.device, "A100-SXM4-40GB");
}

TEST(MicrobenchResults, ErrorsNameFileLineAndColumn) {
  const std::string h = kHeader;
  EXPECT_NE(error_of(h + "dram_bw,,,1,GB/s,,D,\ndram_bw,,,fast,GB/s,,D,\n").find("mb.csv:3: column 'value'"),
            std::string::npos);
  EXPECT_NE(error_of("# comment\n" + h + "l2_bw,,,1,GB/s,,D,\nl2_bw,,,nan,GB/s,,D,\n")
                .find("mb.csv:4: column 'value'"),
            std::string::npos);
  EXPECT_NE(error_of(h + "l2_bw,,,,GB/s,,D,\n").find("mb.csv:2: column 'value': value is empty"),
            std::string::npos);
  EXPECT_NE(error_of(h + "l2_bw,,,5,GB/s,x,D,\n").find("mb.csv:2: column 'spread'"), std::string::npos);
  EXPECT_NE(error_of(h + "l2_bw,,,5,GB/s,-0.1,D,\n").find("mb.csv:2: column 'spread'"), std::string::npos);
  EXPECT_NE(error_of(h + "gemm_peak,fp7,,5,TFLOP/s,,D,\n").find("mb.csv:2: column 'dtype': unknown dtype"),
            std::string::npos);
  EXPECT_NE(error_of(h + "l2_bw,,,5,,,D,\n").find("mb.csv:2: column 'unit'"), std::string::npos);
  EXPECT_NE(error_of(h + ",,,5,GB/s,,D,\n").find("mb.csv:2: column 'benchmark'"), std::string::npos);
  EXPECT_NE(error_of(h + "l2_bw,,,5,GB/s,,A,\ndram_bw,,,5,GB/s,,B,\n").find("mb.csv:3: column 'device'"),
            std::string::npos);
  EXPECT_NE(error_of("benchmark,value\nl2_bw,5\n").find("mb.csv: missing required column 'unit'"),
            std::string::npos);
  EXPECT_NE(error_of("").find("mb.csv: empty file"), std::string::npos);
  EXPECT_THROW(read_microbench_csv("/nonexistent/mb.csv"), InputError);
}

MicrobenchResults a100_results() {
  MicrobenchResults res;
  res.device = "A100-SXM4-40GB";
  res.source_file = "a100.csv";
  res.rows = {row("dram_bw_copy", "", "1073741824", 1300, "GB/s"),
              row("dram_bw_copy", "", "1073741824", 1381, "GB/s"),
              row("dram_bw", "", "1073741824", 1381, "GB/s"),
              row("l2_bw", "", "", 5425, "GB/s"),
              row("launch_interval", "", "", 2.6, "us"),
              row("stream_latency", "", "", 0.683, "us"),
              row("fma_fp32", "", "", 19.19, "TFLOP/s"),
              row("gemm_peak", "bf16", "1024x10240x5120", 271.2, "TFLOP/s"),
              row("gemm_peak", "fp8", "", 500, "TFLOP/s")};
  for (auto& r : res.rows) r.line = unsigned(&r - res.rows.data()) + 2;
  return res;
}

GpuSpec a100_spec() {
  GpuSpec g;
  g.name = "A100-SXM4-40GB";
  g.fp32_tflops = 19.5;
  g.bf16_tflops = 312;
  g.fp16_tflops = 312;  // fp8 stays unknown: A100 has no FP8 units
  return g;
}

TEST(MicrobenchResults, GetReturnsFirstMatchAndBestTheMaximum) {
  const MicrobenchResults res = a100_results();
  EXPECT_DOUBLE_EQ(res.get("dram_bw_copy"), 1300);
  EXPECT_DOUBLE_EQ(res.best("dram_bw_copy"), 1381);
  EXPECT_DOUBLE_EQ(res.get("gemm_peak", "bf16"), 271.2);
  EXPECT_TRUE(std::isnan(res.get("gemm_peak")));
  EXPECT_TRUE(std::isnan(res.get("gemm_peak", "fp16")));
  EXPECT_TRUE(std::isnan(res.best("nothing")));
}

TEST(MicrobenchResults, ApplySetsMeasuredFields) {
  GpuSpec g = a100_spec();
  g.measured_gemm_eff[int(DType::fp16)] = 0.75;  // no fp16 figure: must survive
  apply_microbench(a100_results(), g);
  EXPECT_DOUBLE_EQ(g.measured_dram_bw_gbps, 1381);
  EXPECT_DOUBLE_EQ(g.measured_l2_bw_gbps, 5425);
  EXPECT_DOUBLE_EQ(g.measured_launch_us, 2.6);
  EXPECT_DOUBLE_EQ(g.measured_stream_latency_us, 0.683);
  EXPECT_DOUBLE_EQ(g.measured_fp32_tflops, 19.19);
  EXPECT_NEAR(g.measured_gemm_eff[int(DType::bf16)], 0.8692307692, 1e-9);  // 271.2 / 312
  EXPECT_DOUBLE_EQ(g.measured_gemm_eff[int(DType::fp16)], 0.75);
  EXPECT_TRUE(std::isnan(g.measured_gemm_eff[int(DType::fp8)]));  // no datasheet peak
  EXPECT_TRUE(std::isnan(g.measured_gemm_eff[int(DType::fp32)]));
  EXPECT_EQ(g.measured_source, "a100.csv");
}

// A Blackwell run's FP4 figure (kcast-microbench's block-scaled cuBLASLt sweep) becomes the board's
// FP4 efficiency against its datasheet FP4 peak.
TEST(MicrobenchResults, ApplyReadsAnFp4GemmPeak) {
  MicrobenchResults res;
  res.device = "B200";
  res.source_file = "b200.csv";
  res.rows = {row("gemm_peak", "fp4", "8192x8192x8192", 6300, "TFLOP/s")};
  res.rows[0].line = 2;
  GpuSpec g;
  g.name = "B200";
  g.fp32_tflops = 75;
  g.fp4_tflops = 9000;
  apply_microbench(res, g);
  EXPECT_DOUBLE_EQ(g.measured_gemm_eff[int(DType::fp4)], 0.7);
}

TEST(MicrobenchResults, ApplyRejectsWrongUnitsAndLeavesGpuUntouched) {
  MicrobenchResults res = a100_results();
  res.rows[3].unit = "TB/s";  // l2_bw, line 5
  GpuSpec g = a100_spec();
  try {
    apply_microbench(res, g);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a100.csv:5: column 'unit'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::isnan(g.measured_dram_bw_gbps));
  EXPECT_TRUE(g.measured_source.empty());

  res = a100_results();
  res.rows[4].value = 0;  // launch_interval, line 6
  EXPECT_THROW(apply_microbench(res, g), InputError);
}

TEST(MicrobenchResults, ApplyWithoutSummariesChangesNothing) {
  MicrobenchResults res;
  res.rows = {row("device_info", "", "", 108, "sm_count")};
  GpuSpec g = a100_spec();
  apply_microbench(res, g);
  EXPECT_TRUE(std::isnan(g.measured_dram_bw_gbps));
  EXPECT_TRUE(g.measured_source.empty());
}

TEST(MicrobenchResults, ShippedFilesParseAndApply) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(KCAST_SOURCE_DIR) / "data" / "microbench";
  const char* summaries[] = {"dram_bw", "l2_bw", "launch_interval", "launch_interval_graph",
                             "fma_fp32", "fma_fp64", "gemm_peak", "tensor_mma"};
  const GpuDatabase& db = default_gpu_database();
  int files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".csv") continue;
    ++files;
    SCOPED_TRACE(entry.path().string());
    const MicrobenchResults res = read_microbench_csv(entry.path().string());
    // File name = device = a canonical GPU name.
    EXPECT_EQ(res.device, entry.path().stem().string());
    const GpuSpec* gpu = db.find(res.device);
    ASSERT_NE(gpu, nullptr) << res.device << " is not in data/gpus.csv";
    EXPECT_EQ(gpu->name, res.device);
    bool has_device_row = false, has_summary = false;
    for (const MicrobenchRow& r : res.rows) {
      has_device_row |= r.benchmark == "device_info";
      for (const char* s : summaries) has_summary |= r.benchmark == s;
      // Published figures, never passed off as kcast runs.
      EXPECT_EQ(r.notes.rfind("published: ", 0), 0u) << "line " << r.line;
    }
    EXPECT_TRUE(has_device_row);
    EXPECT_TRUE(has_summary);
    GpuSpec g = *gpu;
    ASSERT_NO_THROW(apply_microbench(res, g));
    EXPECT_FALSE(g.measured_source.empty());
    // A sustained figure is a fraction of the datasheet peak (a little over 1 would be a boost clock).
    for (DType d : kAllDTypes) {
      const double e = g.measured_gemm_eff[int(d)];
      if (known(e)) {
        EXPECT_TRUE(e > 0.3 && e < 1.05) << to_string(d) << " efficiency " << e;
      }
    }
    if (known(g.measured_dram_bw_gbps)) {
      EXPECT_LT(g.measured_dram_bw_gbps, 1.01 * gpu->dram_bw_gbps);
    }
  }
  EXPECT_GE(files, 10);
}

}  // namespace
}  // namespace kcast
