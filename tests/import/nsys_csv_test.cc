// Tests of the nsys cuda_gpu_trace CSV reader (predict/import/nsys_csv.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "io/atomic_file.h"
#include "tests/import/import_test_util.h"

namespace kcast {
namespace {

using namespace testing_import;

std::vector<Kernel> read(const std::string& file, const ImportOptions& opt, bool aggregate = false) {
  return import_trace(fixture(file), TraceFormat::nsys_csv, opt, aggregate);
}

TEST(NsysCsv, ReadsCaptureWithPreambleKernelsCopiesAndSets) {
  Captured c;
  auto ks = read("nsys_cuda_gpu_trace.csv", c.opt);
  ASSERT_EQ(ks.size(), 7u);
  EXPECT_NEAR(total_us(ks), 219.812, 1e-9);
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_EQ(ks[0].name, "[CUDA memcpy Host-to-Device]");
  EXPECT_EQ(ks[0].cls, KernelClass::memcpy);
  EXPECT_DOUBLE_EQ(ks[0].bytes, 4000);  // 0.004 MB, MB = 10^6 B
  EXPECT_DOUBLE_EQ(ks[0].start_us, 506384.935);
  EXPECT_EQ(ks[0].gpu, "A100-SXM4-40GB");
  const Kernel& gemm = ks[2];
  EXPECT_EQ(gemm.name, "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn");
  EXPECT_EQ(gemm.cls, KernelClass::gemm);
  EXPECT_EQ(gemm.dtype, DType::fp16);  // from the name: ampere_fp16_s16816gemm_fp16
  EXPECT_DOUBLE_EQ(gemm.duration_us, 98.1);
  EXPECT_EQ(gemm.grid[0], 16);
  EXPECT_EQ(gemm.grid[1], 32);
  EXPECT_EQ(gemm.block[0], 128);
  EXPECT_EQ(gemm.registers, 238);
  EXPECT_EQ(gemm.shared_bytes, 49000);
  EXPECT_EQ(gemm.stream, 7);
  EXPECT_FALSE(known(gemm.bytes));
  EXPECT_EQ(ks[1].name,
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
            "at::detail::Array<char *, 1>>(int, T2, T3)");
  EXPECT_EQ(ks[1].cls, KernelClass::elementwise);
  EXPECT_EQ(ks[1].dtype, DType::fp32);  // FillFunctor<float>
  EXPECT_EQ(ks[4].cls, KernelClass::memset);
  EXPECT_DOUBLE_EQ(ks[4].bytes, 1049000);
  EXPECT_EQ(ks[6].name, "[CUDA memcpy Device-to-Host]");
}

TEST(NsysCsv, AggregatesIdenticalKernels) {
  Captured c;
  auto ks = read("nsys_cuda_gpu_trace.csv", c.opt, true);
  ASSERT_EQ(ks.size(), 5u);
  EXPECT_NEAR(total_us(ks), 219.812, 1e-9);
  // Order of first appearance: HtoD, fill, gemm, memset, DtoH.
  EXPECT_EQ(ks[1].cls, KernelClass::elementwise);
  EXPECT_DOUBLE_EQ(ks[1].count, 2);
  EXPECT_NEAR(ks[1].duration_us, (2.336 + 12.3) / 2, 1e-12);
  EXPECT_DOUBLE_EQ(ks[1].start_us, 507000.0);
  EXPECT_EQ(ks[2].cls, KernelClass::gemm);
  EXPECT_DOUBLE_EQ(ks[2].count, 2);
  EXPECT_NEAR(ks[2].duration_us, 98.2, 1e-12);
  EXPECT_DOUBLE_EQ(ks[3].count, 1);
}

TEST(NsysCsv, OldGputraceSpellingQuotedAndUnsorted) {
  Captured c;
  auto ks = read("nsys_gputrace_old.csv", c.opt);
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_EQ(ks[0].name, "[CUDA memcpy Host-to-Device]");  // old HtoD spelling, sorted by start
  EXPECT_EQ(ks[1].name, "volta_sgemm_128x64_nn");
  EXPECT_EQ(ks[1].shared_bytes, 24000);
  EXPECT_EQ(ks[2].name, "[CUDA memcpy Device-to-Host]");
  EXPECT_DOUBLE_EQ(ks[2].bytes, 2e6);
  EXPECT_EQ(ks[1].gpu, "V100-SXM2-16GB");
  EXPECT_NEAR(total_us(ks), 24.48, 1e-9);
}

TEST(NsysCsv, GpuOptionOverridesTheTrace) {
  Captured c;
  c.opt.gpu = "NVIDIA H100 80GB HBM3";
  auto ks = read("nsys_cuda_gpu_trace.csv", c.opt);
  for (const Kernel& k : ks) EXPECT_EQ(k.gpu, "H100-SXM");
  c.opt.gpu = "H1000";
  expect_input_error([&] { read("nsys_cuda_gpu_trace.csv", c.opt); }, {"--gpu", "unknown GPU 'H1000'"});
}

TEST(NsysCsv, UnknownDeviceWarnsAndLeavesGpuEmpty) {
  Captured c;
  std::string text =
      "Start (ns),Duration (ns),Device,Strm,Name\n"
      "10,1000,Mystery Accelerator 9000 (0),7,k1\n"
      "20,2000,Mystery Accelerator 9000 (0),7,k1\n";
  KernelCollector out;
  parse_nsys_csv(text, "mem.csv", c.opt, out);
  auto ks = out.take();
  ASSERT_EQ(ks.size(), 2u);
  EXPECT_EQ(ks[0].gpu, "");
  ASSERT_EQ(c.warnings.size(), 1u);  // once per device, not per row
  EXPECT_NE(c.warnings[0].find("Mystery Accelerator 9000"), std::string::npos);
}

TEST(NsysCsv, ErrorsNameFileLineAndColumn) {
  Captured c;
  const std::string bad = fixture("nsys_bad_number.csv");
  expect_input_error([&] { read("nsys_bad_number.csv", c.opt); },
                     {bad + ":3: column 'Duration (ns)'", "'12x4'"});
  KernelCollector out;
  expect_input_error([&] { parse_nsys_csv("", "empty.csv", c.opt, out); }, {"empty.csv", "empty"});
  expect_input_error([&] { parse_nsys_csv("hello\nworld\n", "x.csv", c.opt, out); },
                     {"x.csv", "no nsys cuda_gpu_trace header"});
  expect_input_error(
      [&] { parse_nsys_csv("Start (ns),Duration (ns),Name\n1,2,\"unterminated\n", "q.csv", c.opt, out); },
      {"q.csv", "2"});
  expect_input_error([&] { parse_nsys_csv("Start (ns),Duration (ns),Name\n1,2,k,4,5\n", "w.csv", c.opt, out); },
                     {"w.csv", "2"});
}

TEST(NsysCsv, ParallelChunksGiveTheSameListAndLineNumbers) {
  Captured c;
  auto seq = read("nsys_cuda_gpu_trace.csv", c.opt);
  for (unsigned threads : {2u, 3u, 7u}) {
    c.opt.threads = threads;
    auto par = read("nsys_cuda_gpu_trace.csv", c.opt);
    ASSERT_EQ(par.size(), seq.size()) << threads;
    for (size_t i = 0; i < seq.size(); ++i) {
      EXPECT_EQ(par[i].name, seq[i].name);
      EXPECT_EQ(par[i].start_us, seq[i].start_us);
      EXPECT_EQ(par[i].duration_us, seq[i].duration_us);
      EXPECT_EQ(par[i].gpu, seq[i].gpu);
    }
    auto agg = read("nsys_cuda_gpu_trace.csv", c.opt, true);
    ASSERT_EQ(agg.size(), 5u);
    EXPECT_DOUBLE_EQ(agg[2].count, 2);
    EXPECT_NEAR(total_us(agg), 219.812, 1e-9);
    // The bad cell is on line 3 of the file whichever chunk reads it.
    expect_input_error([&] { read("nsys_bad_number.csv", c.opt); },
                       {fixture("nsys_bad_number.csv") + ":3: column 'Duration (ns)'"});
  }
}

// Parts go into the sink as soon as the parts before them are in: a bad row in a later chunk, after
// earlier parts were merged (and a streaming sink wrote them), is still reported with its true line,
// and the rows merged before it are not added again.
TEST(NsysCsv, AnErrorAfterMergedChunksNamesItsLine) {
  const std::string text = read_file(fixture("nsys_cuda_gpu_trace.csv"));
  const size_t header_end = text.find('\n', text.find("Start (ns)")) + 1;
  std::string big = text.substr(0, header_end);
  const unsigned header_line = unsigned(std::count(big.begin(), big.end(), '\n'));
  for (int i = 0; i < 300; ++i)
    big += std::to_string(600000000 + i * 1000) + (i == 280 ? ",12x4" : ",2336") +
           ",125,80,1,1,128,1,1,16,0.000,0.000,,,,,NVIDIA A100-SXM4-40GB (0),1,,7,kernel_" + std::to_string(i) + "\n";
  const std::string path = ::testing::TempDir() + "kcast_nsys_late_error.csv";
  std::ofstream(path, std::ios::binary) << big;
  Captured c;
  c.opt.threads = 3;
  KernelListText sink;
  expect_input_error([&] { read_trace(path, TraceFormat::nsys_csv, c.opt, sink); },
                     {path + ":" + std::to_string(header_line + 281) + ": column 'Duration (ns)'"});
  // The chunks before the failed one were merged (so the error came from the read that keeps nothing),
  // each once.
  EXPECT_GT(sink.rows(), 0u);
  EXPECT_LE(sink.rows(), 280u);
  std::remove(path.c_str());
}

TEST(NsysCsv, NvtxSelectionIsAnErrorForCsv) {
  Captured c;
  c.opt.step.nvtx = "step";
  expect_input_error([&] { read("nsys_cuda_gpu_trace.csv", c.opt); }, {"--nvtx", "SQLite"});
}

TEST(ImportDetect, RecognizesNsysCsvAfterPreamble) {
  EXPECT_EQ(detect_format(fixture("nsys_cuda_gpu_trace.csv")), TraceFormat::nsys_csv);
  EXPECT_EQ(detect_format(fixture("nsys_gputrace_old.csv")), TraceFormat::nsys_csv);
}

}  // namespace
}  // namespace kcast
