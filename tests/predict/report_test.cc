// Report renderers (predict/report): table, CSV, JSON and HTML all read one values struct; these
// tests fill the struct by hand and check each format carries the same numbers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "predict/report/predict_values.h"
#include "predict/report/whatif_values.h"

namespace kcast {
namespace {

PredictValues two_gpus() {
  PredictValues v;
  v.kernels_file = "w.csv";
  v.model = "<test>";
  v.dominant_dtype = "bf16";
  for (int i = 0; i < 2; ++i) {
    PredictGpuValues g;
    g.gpu = i ? "B<200>" : "A100";
    g.mode = "auto";
    g.kernels = 3;
    g.kernel_us = 100.0 / (i + 1);
    g.step_us = 125.0 / (i + 1);
    g.class_us[int(KernelClass::gemm)] = 80.0 / (i + 1);
    g.class_rows[int(KernelClass::gemm)] = 2;
    g.class_us[int(KernelClass::softmax)] = 20.0 / (i + 1);
    g.class_rows[int(KernelClass::softmax)] = 1;
    g.bound_us = {80.0 / (i + 1), 10.0 / (i + 1), 5.0 / (i + 1), 0.0, 5.0 / (i + 1)};  // indexed by Bound
    g.peak_tflops = 300.0 * (i + 1);
    g.speedup_vs_first = i + 1.0;
    g.peak_ratio_vs_first = i + 1.0;
    v.gpus.push_back(g);
  }
  return v;
}

TEST(PredictReport, JsonCarriesTheValues) {
  const nlohmann::json j = predict_json(two_gpus());
  ASSERT_EQ(j["predictions"].size(), 2u);
  const auto& b = j["predictions"][1];
  EXPECT_EQ(b["gpu"], "B<200>");
  EXPECT_EQ(b["total_us"], 62.5);
  EXPECT_EQ(b["kernel_us"], 50.0);
  EXPECT_EQ(b["by_class"].size(), 2u);  // only classes with rows
  EXPECT_EQ(b["by_class"]["gemm"], 40.0);
  EXPECT_EQ(b["by_class"]["softmax"], 10.0);
  EXPECT_EQ(b["by_bound"]["launch"], 2.5);
  EXPECT_EQ(b["by_bound"]["latency"], 2.5);
}

TEST(PredictReport, CsvHasOneRowPerGpuWithTheSameNumbers) {
  std::ostringstream o;
  render_predict_csv(two_gpus(), o);
  std::istringstream in(o.str());
  std::string header, a, b, extra;
  std::getline(in, header);
  std::getline(in, a);
  std::getline(in, b);
  EXPECT_FALSE(std::getline(in, extra));
  EXPECT_EQ(header.rfind("gpu,mode,kernels,transferred_rows,invocations,kernel_us,step_us", 0), 0u);
  EXPECT_NE(header.find("class_gemm_us"), std::string::npos);
  EXPECT_EQ(a.rfind("A100,auto,3,0,0,100,125,", 0), 0u) << a;
  EXPECT_EQ(b.rfind("B<200>,auto,3,0,0,50,62.5,", 0), 0u) << b;
  // Columns added later go last, so every earlier one keeps its position: link, then latency.
  auto ends_with = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  EXPECT_TRUE(ends_with(header, ",link_us,latency_us")) << header;
  EXPECT_TRUE(ends_with(b, ",0,2.5")) << b;
}

TEST(PredictReport, TableNamesEveryGpuAndClass) {
  std::ostringstream o;
  render_predict_table(two_gpus(), o);
  for (const char* s : {"A100", "B<200>", "gemm", "softmax", "2.00x"}) EXPECT_NE(o.str().find(s), std::string::npos) << s;
}

TEST(PredictReport, HtmlEscapesNames) {
  const std::string html = predict_html(two_gpus());
  EXPECT_EQ(html.find("B<200>"), std::string::npos);
  EXPECT_NE(html.find("B&lt;200&gt;"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);
}

WhatifValues whatif_values(bool sweep) {
  WhatifValues v;
  v.gpu = "H100-SXM";
  v.mode = "auto";
  v.baseline_us = 200;
  v.modified_us = 100;
  v.speedup = 2;
  v.class_rows[int(KernelClass::gemm)] = 4;
  v.class_baseline[int(KernelClass::gemm)] = 150;
  v.class_modified[int(KernelClass::gemm)] = 75;
  v.changes.push_back({"dram_bw", "GB/s", 3000, 6000});
  if (sweep) {
    v.has_sweep = true;
    v.sweep_knob = "dram_bw";
    v.sweep_unit = "GB/s";
    v.sweep = {{1000, 400, 0.5}, {2000, 250, 0.8}, {3000, 200, 1.0}};
  }
  return v;
}

TEST(WhatifReport, JsonShapesFollowCliMd) {
  const nlohmann::json j = whatif_json(whatif_values(false));
  EXPECT_EQ(j["gpu"], "H100-SXM");
  EXPECT_EQ(j["baseline_us"], 200.0);
  EXPECT_EQ(j["modified_us"], 100.0);
  EXPECT_EQ(j["speedup"], 2.0);
  EXPECT_EQ(j["by_class"]["gemm"]["baseline_us"], 150.0);
  EXPECT_EQ(j["by_class"]["gemm"]["modified_us"], 75.0);
  EXPECT_FALSE(j.contains("sweep"));
  const nlohmann::json s = whatif_json(whatif_values(true));
  EXPECT_EQ(s["knob"], "dram_bw");
  EXPECT_EQ(s["baseline_us"], 200.0);
  ASSERT_EQ(s["sweep"].size(), 3u);
  EXPECT_EQ(s["sweep"][1]["value"], 2000.0);
  EXPECT_EQ(s["sweep"][1]["total_us"], 250.0);
  EXPECT_EQ(s["sweep"][1]["speedup"], 0.8);
}

TEST(WhatifReport, CsvAndHtmlCarryTheSweep) {
  std::ostringstream o;
  render_whatif_csv(whatif_values(true), o);
  EXPECT_NE(o.str().find("sweep,dram_bw=2000,200,250,0.8"), std::string::npos) << o.str();
  const std::string html = whatif_html(whatif_values(true));
  EXPECT_NE(html.find("<polyline"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);
}

}  // namespace
}  // namespace kcast
