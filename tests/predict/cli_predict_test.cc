// `kcast predict` and `kcast whatif` through the binary (KCAST_BINARY): docs/cli-contract.md's JSON shapes, the
// per-kernel CSV's row order, the HTML page, and errors for bad options.
#include <csv.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

using namespace kcast::testing;
using nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(PredictCli, JsonHasCliMdShapeForEveryGpuInOrder) {
  const RunResult r =
      run_kcast("predict --kernels '" + fixture_path() + "' --gpu 'NVIDIA A100-SXM4-80GB,H100-SXM,tesla t4' --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const json j = json::parse(r.out);
  ASSERT_TRUE(j.contains("predictions"));
  const json& p = j["predictions"];
  ASSERT_EQ(p.size(), 3u);
  const std::vector<std::string> names = {"A100-SXM4-80GB", "H100-SXM", "T4"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(p[i]["gpu"], names[i]);
    EXPECT_EQ(p[i]["mode"], "auto");
    EXPECT_EQ(p[i]["kernels"], fixture().size());
    ASSERT_TRUE(p[i]["total_us"].is_number());
    EXPECT_GT(p[i]["total_us"].get<double>(), 0);
    ASSERT_TRUE(p[i]["by_class"].is_object());
    double sum = 0;
    for (auto& [cls, v] : p[i]["by_class"].items()) {
      ASSERT_TRUE(v.is_number()) << cls;
      sum += v.get<double>();
    }
    EXPECT_NEAR(sum, p[i]["kernel_us"].get<double>(), 1e-6 * sum);
    EXPECT_TRUE(p[i]["by_class"].contains("gemm"));
    EXPECT_TRUE(p[i]["by_class"].contains("conv"));
    EXPECT_EQ(p[i]["total_us"], p[i]["step_us"]);
    for (const char* b : {"compute", "memory", "launch", "link", "latency"}) EXPECT_TRUE(p[i]["by_bound"][b].is_number()) << b;
  }
}

// --by-prefix splits the time by name prefix, here a synthesized generation's prefill and decode
// groups: the prefixes partition the kernel time (table, CSV columns and JSON alike).
TEST(PredictCli, ByPrefixPartitionsTheTime) {
  const std::string list = temp_path("generate.csv");
  const std::string synth = "synth llama3-8b --mode generate --seq 512 --new-tokens 16 --attention flash";
  ASSERT_EQ(run_kcast(synth + " -o '" + list + "'").rc, 0);
  const RunResult r =
      run_kcast("predict --kernels '" + list + "' --gpu H100-SXM,A100-SXM4-80GB --by-prefix --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const json j = json::parse(r.out);  // named: a range-for over a temporary's member would dangle
  for (const json& p : j["predictions"]) {
    ASSERT_TRUE(p["by_prefix"].is_object()) << p.dump();
    double sum = 0;
    for (auto& [name, v] : p["by_prefix"].items()) sum += v.get<double>();
    EXPECT_NEAR(sum, p["kernel_us"].get<double>(), 1e-9 * sum);
    EXPECT_GT(p["by_prefix"]["prefill"].get<double>(), 0);
    EXPECT_EQ(p["by_prefix"].size(), 1u + 8u);  // prefill and 8 groups of 2 decode steps
  }
  const RunResult csv = run_kcast("predict --kernels '" + list + "' --gpu H100-SXM --by-prefix --format csv");
  ASSERT_EQ(csv.rc, 0);
  EXPECT_NE(csv.out.find(",link_us,latency_us,prefix_prefill_us,prefix_decode@513_us,"), std::string::npos) << csv.out;
  const RunResult table = run_kcast("predict --kernels '" + list + "' --gpu H100-SXM --by-prefix");
  EXPECT_NE(table.out.find("per name prefix (us, count x time):"), std::string::npos) << table.out;
  const RunResult plain = run_kcast("predict --kernels '" + list + "' --gpu H100-SXM --format json");
  EXPECT_FALSE(json::parse(plain.out)["predictions"][0].contains("by_prefix"));
}

TEST(PredictCli, PerKernelCsvHasOneRowPerInputRowAndGpuInInputOrder) {
  const std::string out = temp_path("per_kernel.csv");
  std::remove(out.c_str());
  const RunResult r = run_kcast("predict --kernels '" + fixture_path() + "' --gpu L4,B200 --format csv --per-kernel '" +
                                out + "'");
  ASSERT_EQ(r.rc, 0) << r.out;
  const std::vector<Kernel> rows = fixture();
  std::ifstream in(out);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line.rfind("row,target_gpu,name,class,predicted_us,bound", 0), 0u) << line;
  size_t n = 0;
  while (std::getline(in, line)) {
    const size_t row = n / 2;
    std::stringstream ss(line);
    std::string idx, gpu;
    std::getline(ss, idx, ',');
    std::getline(ss, gpu, ',');
    ASSERT_EQ(idx, std::to_string(row)) << "line " << n + 2;
    ASSERT_EQ(gpu, n % 2 == 0 ? "L4" : "B200") << "line " << n + 2;
    // The kernel's class follows the (possibly quoted) name.
    EXPECT_NE(line.find("," + std::string(to_string(rows[row].cls)) + ","), std::string::npos) << line;
    ++n;
  }
  EXPECT_EQ(n, 2 * rows.size());
}

// The per-kernel CSV says why: in absolute mode each prediction is the smooth maximum of the launch
// floor and the larger of its compute and memory terms plus the extra (split-K, transforms) term,
// within the blend's 2^(1/8) of the plain maximum; its bound names the term that won; the latency
// is part of the memory term; a GEMM with a shape names its tile, K split and waves.
TEST(PredictCli, PerKernelCsvExplainsEachPrediction) {
  const std::string out = temp_path("per_kernel_terms.csv");
  const RunResult r = run_kcast("predict --kernels '" + fixture_path() +
                                "' --gpu H100-SXM,T4 --mode absolute --format csv --per-kernel '" + out + "'");
  ASSERT_EQ(r.rc, 0) << r.out;
  io::CSVReader<11, io::trim_chars<' '>, io::double_quote_escape<',', '"'>> in(out);
  in.read_header(io::ignore_extra_column, "class", "predicted_us", "bound", "model_compute_us", "model_memory_us",
                 "model_latency_us", "floor_us", "extra_us", "tile", "split_k", "waves");
  std::string cls, bound, tile, split, waves;
  double pred = 0, c = 0, m = 0, lat = 0, floor = 0, extra = 0;
  size_t rows = 0, tiled = 0;
  while (in.read_row(cls, pred, bound, c, m, lat, floor, extra, tile, split, waves)) {
    ++rows;
    const double work = std::max(c, m) + extra, hi = std::max(floor, work);
    EXPECT_GE(pred, hi * (1 - 1e-6)) << rows;
    EXPECT_LE(pred, hi * std::pow(2.0, 1.0 / 8) * (1 + 1e-6)) << rows;
    EXPECT_LE(lat, m + 1e-9) << rows;
    if (bound == "launch") {
      EXPECT_GT(floor, work) << rows;
    }
    if (bound == "compute") {
      EXPECT_GE(c, m) << rows;
    }
    if (bound == "memory" || bound == "latency") {
      EXPECT_GT(m, c) << rows;
    }
    if (bound == "latency") {
      EXPECT_GE(2 * lat, m) << rows;
    }
    if (!tile.empty()) {
      ++tiled;
      EXPECT_NE(tile.find('x'), std::string::npos) << tile;
      EXPECT_GE(std::stoi(split), 1) << rows;
      EXPECT_GT(std::stod(waves), 0) << rows;
    }
  }
  EXPECT_EQ(rows, 2 * fixture().size());
  EXPECT_GT(tiled, 0u);
}

TEST(PredictCli, HtmlIsSelfContainedWithCharts) {
  const std::string out = temp_path("report.html");
  const RunResult r =
      run_kcast("predict --kernels '" + fixture_path() + "' --gpu V100-PCIe-32GB,A100-SXM4-80GB,H100-SXM --html '" + out + "'");
  ASSERT_EQ(r.rc, 0) << r.out;
  const std::string html = slurp(out);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  EXPECT_GE(std::count(html.begin(), html.end(), '<') , 50);
  size_t svgs = 0;
  for (size_t pos = 0; (pos = html.find("<svg", pos)) != std::string::npos; ++pos) ++svgs;
  EXPECT_EQ(svgs, 2u);  // per-class bars, speedup vs peak ratio
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  // Every opened svg/section/table is closed.
  for (const char* tag : {"svg", "section", "table"}) {
    size_t open = 0, close = 0;
    for (size_t pos = 0; (pos = html.find(std::string("<") + tag, pos)) != std::string::npos; ++pos) ++open;
    for (size_t pos = 0; (pos = html.find(std::string("</") + tag + ">", pos)) != std::string::npos; ++pos) ++close;
    EXPECT_EQ(open, close) << tag;
  }
}

TEST(PredictCli, TransferToSourceGpuReproducesMeasuredTotal) {
  // All fixture rows measured on the T4 are written to a new list and predicted back on the T4.
  const std::string list = temp_path("t4.csv");
  std::vector<Kernel> t4;
  double measured = 0;
  for (Kernel k : fixture())
    if (k.gpu == "T4") k.context.clear(), measured += k.count * k.duration_us, t4.push_back(k);
  write_kernel_list_file(t4, list);
  const RunResult r = run_kcast("predict --kernels '" + list + "' --gpu 'Tesla T4' --mode transfer --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_DOUBLE_EQ(json::parse(r.out)["predictions"][0]["total_us"].get<double>(), measured);
}

TEST(PredictCli, NsysTraceMovesItsGemmsByTheGemmRate) {
  // An Nsight Systems capture (no shapes): imported, then predicted on its own GPU and on an H100.
  // Its FP16 GEMMs must move by about the ratio of the two GPUs' tensor rates and still reproduce
  // their measurements on their own GPU; before their work was inferred they stayed at 98 us.
  const std::string list = temp_path("nsys_import.csv"), per = temp_path("nsys_per_kernel.csv");
  const RunResult imp =
      run_kcast("import '" + std::string(KCAST_TEST_DATA) + "/import/nsys_cuda_gpu_trace.csv' -o '" + list + "'", true);
  ASSERT_EQ(imp.rc, 0) << imp.out;
  const RunResult r = run_kcast("predict --kernels '" + list + "' --gpu A100-SXM4-40GB,H100-SXM --per-kernel '" + per + "'", true);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("work inferred:"), std::string::npos) << r.out;
  std::istringstream in(slurp(per));
  std::string line;
  std::getline(in, line);  // header
  int gemms = 0;
  const double tensor = target("H100-SXM").caps.tensor_tflops[int(DType::fp16)] /
                        target("A100-SXM4-40GB").caps.tensor_tflops[int(DType::fp16)];
  while (std::getline(in, line)) {
    if (line.find(",gemm,") == std::string::npos) continue;
    // row,target_gpu,name,class,predicted_us,bound,measured_us,mode,source_gpu, then the model's terms
    // (the name has no commas)
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string cell; std::getline(ls, cell, ',');) f.push_back(cell);
    ASSERT_GE(f.size(), 9u) << line;
    const double predicted = std::stod(f[4]), measured = std::stod(f[6]);
    if (f[1] == "A100-SXM4-40GB") {
      EXPECT_EQ(predicted, measured) << line;
    } else {
      ++gemms;
      EXPECT_NEAR(measured / predicted, tensor, 0.15 * tensor) << line;
      EXPECT_EQ(f[5], "compute") << line;
    }
  }
  EXPECT_EQ(gemms, 2);
}

TEST(PredictCli, BadOptionsExitTwoWithAMessage) {
  const std::string f = "--kernels '" + fixture_path() + "'";
  struct Case {
    std::string args, expect;
  };
  for (const Case& c : std::vector<Case>{{"predict " + f + " --gpu H101", "did you mean"},
                                         {"predict " + f + " --gpu A100-SXM4-80GB --mode guess", "--mode"},
                                         {"predict " + f + " --gpu A100-SXM4-80GB --format xml", "--format"},
                                         {"predict --gpu A100-SXM4-80GB", "kernels"},
                                         {"predict " + f + " --gpu T4,", "--gpu"},
                                         {"predict --kernels /nonexistent.csv --gpu T4", "/nonexistent.csv"},
                                         {"whatif " + f + " --gpu T4 --set warp=2", "dram_bw"},
                                         {"whatif " + f + " --gpu T4 --scale dram_bw=-2", "--scale"},
                                         {"whatif " + f + " --gpu T4 --sweep clock=1:2", "START:STOP:STEPS"},
                                         {"whatif " + f + " --gpu P100-PCIe-16GB --set tensor_flops=50", "tensor"}}) {
    const RunResult r = run_kcast(c.args, true);
    EXPECT_EQ(r.rc, 2) << c.args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("kcast: ", 0), 0u) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.args << "\n" << r.out;
  }
}

TEST(PredictCli, AListWithoutRowsIsAnErrorNotAZero) {
  // A header and nothing else predicts nothing: saying
  // "0 us" would be a silently wrong number; neither is an unmeasured list something to validate.
  const std::string empty = temp_path("header_only.csv");
  std::ofstream(empty) << "name,class,duration_us,gpu\n";
  for (const std::string& args : {"predict --kernels '" + empty + "' --gpu H100-SXM",
                                  "whatif --kernels '" + empty + "' --gpu H100-SXM --walls",
                                  "validate --measurements '" + empty + "'"}) {
    const RunResult r = run_kcast(args, true);
    EXPECT_EQ(r.rc, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(args.rfind("validate", 0) == 0 ? "no measured rows" : "header_only.csv: no kernel rows"),
              std::string::npos)
        << r.out;
  }
  std::remove(empty.c_str());
}

TEST(PredictCli, AllMeansEveryDatabaseGpuInItsOrder) {
  const RunResult p = run_kcast("predict --kernels '" + fixture_path() + "' --gpu all --format json");
  ASSERT_EQ(p.rc, 0) << p.out;
  const RunResult g = run_kcast("gpus --format json");
  ASSERT_EQ(g.rc, 0) << g.out;
  const auto preds = nlohmann::json::parse(p.out)["predictions"], gpus = nlohmann::json::parse(g.out)["gpus"];
  ASSERT_GT(gpus.size(), 30u);
  ASSERT_EQ(preds.size(), gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i) EXPECT_EQ(preds[i]["gpu"], gpus[i]["name"]) << i;
}

TEST(WhatifCli, OneGpuAtATime) {
  const RunResult r = run_kcast("whatif --kernels '" + fixture_path() + "' --gpu H100-SXM,B200 --walls", true);
  EXPECT_EQ(r.rc, 2) << r.out;
  EXPECT_NE(r.out.find("one GPU at a time"), std::string::npos) << r.out;
}

TEST(WhatifCli, JsonHasCliMdShape) {
  const RunResult r = run_kcast("whatif --kernels '" + fixture_path() +
                                "' --gpu A100-SXM4-80GB --scale dram_bw=2 --set launch_overhead=1 --walls --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["gpu"], "A100-SXM4-80GB");
  const double base = j["baseline_us"], mod = j["modified_us"];
  EXPECT_LT(mod, base);
  EXPECT_DOUBLE_EQ(j["speedup"].get<double>(), base / mod);
  ASSERT_TRUE(j["by_class"]["gemm"].is_object());
  EXPECT_TRUE(j["by_class"]["gemm"]["baseline_us"].is_number());
  EXPECT_TRUE(j["by_class"]["gemm"]["modified_us"].is_number());
  ASSERT_EQ(j["walls"].size(), 5u);
  for (const auto& w : j["walls"]) EXPECT_GE(w["speedup"].get<double>(), 1.0);
}

TEST(WhatifCli, SweepJsonHasCliMdShapeAndHtmlHasTheCurve) {
  const std::string out = temp_path("whatif.html");
  const RunResult r = run_kcast("whatif --kernels '" + fixture_path() +
                                "' --gpu H100-SXM --sweep clock=800:2000:7 --format json --html '" + out + "'");
  ASSERT_EQ(r.rc, 0) << r.out;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["gpu"], "H100-SXM");
  EXPECT_EQ(j["knob"], "clock");
  EXPECT_TRUE(j["baseline_us"].is_number());
  ASSERT_EQ(j["sweep"].size(), 7u);
  EXPECT_EQ(j["sweep"][0]["value"], 800.0);
  EXPECT_EQ(j["sweep"][6]["value"], 2000.0);
  for (const auto& p : j["sweep"]) {
    EXPECT_TRUE(p["total_us"].is_number());
    EXPECT_DOUBLE_EQ(p["speedup"].get<double>(), j["baseline_us"].get<double>() / p["total_us"].get<double>());
  }
  const std::string html = slurp(out);
  EXPECT_NE(html.find("<polyline"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
}

}  // namespace
}  // namespace kcast
