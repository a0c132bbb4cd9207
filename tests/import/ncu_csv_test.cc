// Tests of the Nsight Compute CSV reader (predict/import/ncu_csv.cc), long and wide forms.
#include <gtest/gtest.h>

#include "io/atomic_file.h"
#include "tests/import/import_test_util.h"

namespace kcast {
namespace {

using namespace testing_import;

std::vector<Kernel> read(const std::string& file, const ImportOptions& opt, bool aggregate = false) {
  return import_trace(fixture(file), TraceFormat::automatic, opt, aggregate);
}

TEST(NcuCsv, DetailsPageGroupsMetricRowsByKernelId) {
  EXPECT_EQ(detect_format(fixture("ncu_details.csv")), TraceFormat::ncu_csv);
  Captured c;
  auto ks = read("ncu_details.csv", c.opt);
  ASSERT_EQ(ks.size(), 4u);
  EXPECT_NEAR(total_us(ks), 488.336, 1e-9);
  const Kernel& sgemm = ks[0];
  EXPECT_EQ(sgemm.name, "ampere_sgemm_128x64_nn");
  EXPECT_EQ(sgemm.cls, KernelClass::gemm);
  EXPECT_DOUBLE_EQ(sgemm.duration_us, 117.34);
  EXPECT_NEAR(sgemm.bytes, 27.60e6 + 4194.30e3, 1e-3);  // Mbyte + Kbyte, decimal
  EXPECT_DOUBLE_EQ(sgemm.flops, 2.0 * 1073741824);      // FMA = 2 FLOPs
  EXPECT_EQ(sgemm.dtype, DType::fp32);
  EXPECT_EQ(sgemm.registers, 122);
  EXPECT_EQ(sgemm.shared_bytes, 16380);
  EXPECT_EQ(sgemm.grid[0], 8);
  EXPECT_EQ(sgemm.grid[1], 32);
  EXPECT_EQ(sgemm.block[0], 128);
  EXPECT_EQ(sgemm.stream, 7);
  EXPECT_DOUBLE_EQ(ks[1].duration_us, 2.336);
  EXPECT_DOUBLE_EQ(ks[1].bytes, 2.1e6);
  EXPECT_EQ(ks[1].cls, KernelClass::elementwise);
  EXPECT_DOUBLE_EQ(ks[2].duration_us, 250);
  EXPECT_NEAR(ks[2].bytes, 50e6 + 8.39e6, 1e-3);
  EXPECT_EQ(ks[2].cls, KernelClass::gemm);
  EXPECT_EQ(ks[2].dtype, DType::fp16);  // tensor pipe active: the name's f16 decides
  // Bytes from the DRAM counters already leave out what hit in L2: no L2 share comes off them.
  for (const Kernel& k : ks) EXPECT_EQ(k.l2_cold, known(k.bytes)) << k.name;
  EXPECT_TRUE(sgemm.l2_cold);
  // ncu's Device column is an index: no GPU name, one warning.
  for (const Kernel& k : ks) EXPECT_EQ(k.gpu, "");
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("--gpu"), std::string::npos);
}

TEST(NcuCsv, GpuOptionAndAggregation) {
  Captured c;
  c.opt.gpu = "NVIDIA A100-SXM4-40GB";
  auto ks = read("ncu_details.csv", c.opt, true);
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_NEAR(total_us(ks), 488.336, 1e-9);
  EXPECT_EQ(ks[0].name, "ampere_sgemm_128x64_nn");
  EXPECT_DOUBLE_EQ(ks[0].count, 2);
  EXPECT_DOUBLE_EQ(ks[0].duration_us, 118.0);
  for (const Kernel& k : ks) EXPECT_EQ(k.gpu, "A100-SXM4-40GB");
  EXPECT_TRUE(c.warnings.empty());
}

TEST(NcuCsv, RawPageWithUnitsRow) {
  EXPECT_EQ(detect_format(fixture("ncu_raw.csv")), TraceFormat::ncu_csv);
  Captured c;
  auto ks = read("ncu_raw.csv", c.opt);
  ASSERT_EQ(ks.size(), 4u);
  EXPECT_NEAR(total_us(ks), 120.0, 1e-9);
  EXPECT_EQ(ks[0].name, "w13_kernel");
  EXPECT_DOUBLE_EQ(ks[0].duration_us, 40.0);
  EXPECT_DOUBLE_EQ(ks[0].bytes, 10242048);
  EXPECT_DOUBLE_EQ(ks[0].flops, 2e6);
  EXPECT_EQ(ks[0].dtype, DType::fp64);
  EXPECT_EQ(ks[0].registers, 64);
  EXPECT_EQ(ks[0].grid[1], 20);
  EXPECT_FALSE(known(ks[1].flops));  // n/a
  auto agg = read("ncu_raw.csv", c.opt, true);
  ASSERT_EQ(agg.size(), 2u);
  EXPECT_DOUBLE_EQ(agg[1].count, 2);
  EXPECT_DOUBLE_EQ(agg[1].bytes, (5121024.0 + 5377024.0) / 2);
}

TEST(NcuCsv, ErrorsNameFileLineAndColumn) {
  Captured c;
  KernelCollector out;
  const std::string head =
      "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\","
      "\"Metric Unit\",\"Metric Value\"\n";
  expect_input_error(
      [&] {
        parse_ncu_csv(head + "\"0\",\"k\",\"(1, 1, 1)\",\"(1, 1, 1)\",\"0\",\"8.0\",\"s\",\"gpu__time_duration.sum\","
                             "\"usecond\",\"1.2.3\"\n",
                      "v.csv", c.opt, out);
      },
      {"v.csv:2: column 'Metric Value'", "'1.2.3'"});
  expect_input_error(
      [&] {
        parse_ncu_csv(head + "\"0\",\"k\",\"(1, 1, 1)\",\"(1, 1, 1)\",\"0\",\"8.0\",\"s\",\"gpu__time_duration.sum\","
                             "\"fortnight\",\"1\"\n",
                      "u.csv", c.opt, out);
      },
      {"u.csv:2", "unknown time unit 'fortnight'"});
  expect_input_error(
      [&] {
        parse_ncu_csv(head + "\"0\",\"k\",\"(1, x, 1)\",\"(1, 1, 1)\",\"0\",\"8.0\",\"s\",\"gpu__time_duration.sum\","
                             "\"usecond\",\"1\"\n",
                      "b.csv", c.opt, out);
      },
      {"b.csv:2: column 'Block Size'"});
  expect_input_error([&] { parse_ncu_csv("==PROF== nothing profiled\n", "n.csv", c.opt, out); },
                     {"n.csv", "no ncu CSV header"});
}

}  // namespace
}  // namespace kcast
