// Tests of `--from auto` detection (predict/import/detect_format.cc) and the kcast-csv pass-through.
#include <gtest/gtest.h>

#include "tests/import/import_test_util.h"

namespace kcast {
namespace {

using namespace testing_import;

TEST(ImportDetect, ByContent) {
  EXPECT_EQ(detect_format_bytes(std::string("SQLite format 3\0\x10\x00", 18), "a.bin"), TraceFormat::nsys_sqlite);
  EXPECT_EQ(detect_format_bytes("\x1f\x8b\x08\x00", "trace"), TraceFormat::kineto_json);
  EXPECT_EQ(detect_format_bytes("  {\"schemaVersion\": 1, \"traceEvents\": []}", "t.txt"), TraceFormat::kineto_json);
  EXPECT_EQ(detect_format_bytes("[{\"ph\":\"X\",\"name\":\"k\"}]", "t"), TraceFormat::kineto_json);
  EXPECT_EQ(detect_format_bytes("==PROF== Connected\n\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Value\"\n", "x"),
            TraceFormat::ncu_csv);
  EXPECT_EQ(detect_format_bytes("\"ID\",\"Process ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n", "x"),
            TraceFormat::ncu_csv);
  EXPECT_EQ(detect_format_bytes("Generating SQLite file r.sqlite\n\nStart (ns),Duration (ns),Name\n", "x"),
            TraceFormat::nsys_csv);
  EXPECT_EQ(detect_format_bytes("name,class,duration_us,gpu\nk,gemm,1,T4\n", "x"), TraceFormat::kcast_csv);
  EXPECT_EQ(detect_format(fixture("ncu_details.csv")), TraceFormat::ncu_csv);
  EXPECT_EQ(detect_format(fixture("kineto_trace.json")), TraceFormat::kineto_json);
}

TEST(ImportDetect, ExtensionOnlyWhenContentIsInconclusive) {
  EXPECT_EQ(detect_format_bytes("{\"oops\": 1}", "trace.json"), TraceFormat::kineto_json);
  EXPECT_EQ(detect_format_bytes("garbage", "profile.sqlite"), TraceFormat::nsys_sqlite);
  expect_input_error([] { detect_format_bytes("a,b,c\n1,2,3\n", "data.csv"); },
                     {"data.csv", "unrecognized trace format"});
  expect_input_error([] { detect_format_bytes("  \n", "blank.csv"); }, {"blank.csv", "empty"});
  expect_input_error([] { detect_format("/nonexistent/kcast/trace.json"); },
                     {"/nonexistent/kcast/trace.json", "cannot open"});
}

TEST(ImportDetect, FormatNames) {
  for (auto f : {TraceFormat::automatic, TraceFormat::nsys_sqlite, TraceFormat::nsys_csv, TraceFormat::ncu_csv,
                 TraceFormat::kineto_json, TraceFormat::kcast_csv})
    EXPECT_EQ(parse_trace_format(to_string(f)), f);
  EXPECT_FALSE(parse_trace_format("nsys"));
}

TEST(KcastCsvImport, PassesThroughValidatedWithGpuOverride) {
  Captured c;
  const std::string list = fixture("kcast_list.csv");
  EXPECT_EQ(detect_format(list), TraceFormat::kcast_csv);
  auto ks = import_trace(list, TraceFormat::automatic, c.opt, false);
  ASSERT_EQ(ks.size(), 3u);
  EXPECT_EQ(ks[0].gpu, "A100-PCIe-40GB");
  EXPECT_EQ(ks[0].m, 4096);
  EXPECT_NEAR(total_us(ks), 98.1 + 12.3 * 4 + 12.3, 1e-9);
  auto agg = import_trace(list, TraceFormat::automatic, c.opt, true);
  ASSERT_EQ(agg.size(), 2u);
  EXPECT_DOUBLE_EQ(agg[1].count, 5);
  EXPECT_NEAR(total_us(agg), 98.1 + 12.3 * 5, 1e-9);
  c.opt.gpu = "T4";
  for (const Kernel& k : import_trace(list, TraceFormat::kcast_csv, c.opt, false)) EXPECT_EQ(k.gpu, "T4");
  c.opt.step.profiler_step = 1;
  expect_input_error([&] { import_trace(list, TraceFormat::kcast_csv, c.opt, false); }, {"kcast_list.csv"});
}

}  // namespace
}  // namespace kcast
