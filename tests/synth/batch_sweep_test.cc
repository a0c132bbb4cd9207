// `kcast synth --batch-sweep` (predict/cli/synth_batch_sweep.h): each row is the step `synth --batch B
// --gpu G` reports for that batch, GPU-major, and the rates behave as a batch sweep must.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "io/atomic_file.h"
#include "tests/predict/predict_fixture.h"

namespace kcast::synth {
namespace {

using kcast::testing::run_kcast;
using kcast::testing::temp_path;

const std::string kDecode = "synth llama3-8b --mode decode --seq 2048 --attention flash --cuda-graph";

TEST(SynthBatchSweep, EachRowIsThatBatchsStepGpuMajor) {
  const auto r = run_kcast(kDecode + " --gpu H100-SXM,T4 --batch-sweep 4,32 --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto rows = nlohmann::json::parse(r.out)["sweep"];
  ASSERT_EQ(rows.size(), 4u);
  const char* gpus[] = {"H100-SXM", "H100-SXM", "T4", "T4"};
  const int batches[] = {4, 32, 4, 32};
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i]["gpu"], gpus[i]);
    EXPECT_EQ(rows[i]["batch"], batches[i]);
    // The single-batch run's report for the same GPU and batch.
    const std::string json = temp_path("sweep_" + std::to_string(i) + ".json");
    const auto one = run_kcast(kDecode + " --gpu " + gpus[i] + " --batch " + std::to_string(batches[i]) +
                               " --memory-json '" + json + "' -o /dev/null");
    ASSERT_EQ(one.rc, 0) << one.out;
    const auto g = nlohmann::json::parse(kcast::read_file(json))["gpus"][0];
    std::remove(json.c_str());
    // Every field of --memory-json's entry for that GPU (the verdict, largest batch, prediction), and batch.
    auto row = rows[i];
    row.erase("batch");
    EXPECT_EQ(row, g) << i << "\n" << row.dump() << "\n" << g.dump();
  }
  EXPECT_FALSE(rows[3]["fits"].get<bool>());  // a T4 holds the 16 GB of weights, not 8.6 GB of cache besides
}

TEST(SynthBatchSweep, DecodingThroughputGrowsWithTheBatchAndSoDoesTheStep) {
  // Memory-bound decoding: one read of the weights serves every sequence, so a larger batch takes
  // longer per step but yields more tokens per second.
  const auto r = run_kcast(kDecode + " --gpu H100-SXM --batch-sweep 1,4,16,64 --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto rows = nlohmann::json::parse(r.out)["sweep"];
  ASSERT_EQ(rows.size(), 4u);
  for (size_t i = 1; i < rows.size(); ++i) {
    const auto &a = rows[i - 1]["predicted"], &b = rows[i]["predicted"];
    EXPECT_GE(b["step_us"].get<double>(), a["step_us"].get<double>()) << i;
    EXPECT_GT(b["tokens_per_s"].get<double>(), 1.5 * a["tokens_per_s"].get<double>()) << i;
  }
}

TEST(SynthBatchSweep, TableAndCsvCarryTheSameRows) {
  const auto table = run_kcast(kDecode + " --gpu H100-SXM --batch-sweep 1,8");
  const auto csv = run_kcast(kDecode + " --gpu H100-SXM --batch-sweep 1,8 --format csv");
  ASSERT_EQ(table.rc, 0) << table.out;
  ASSERT_EQ(csv.rc, 0) << csv.out;
  EXPECT_NE(table.out.find("tokens/s"), std::string::npos) << table.out;
  EXPECT_EQ(csv.out.rfind("gpu,batch,fits,", 0), 0u) << csv.out;
  size_t lines = 0;
  for (char c : csv.out) lines += c == '\n';
  EXPECT_EQ(lines, 3u);  // header and two batches
}

TEST(SynthBatchSweep, ASpeculativeSweepCarriesTheAcceptedRate) {
  const auto r =
      run_kcast(kDecode + " --decode-tokens 4 --acceptance 0.8 --gpu H100-SXM --batch-sweep 1,16 --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);  // kept: the loop reads into it
  for (const auto& row : j["sweep"]) {
    const auto& p = row["predicted"];
    EXPECT_NEAR(p["tokens_per_step"].get<double>(), 1 + 0.8 + 0.64 + 0.512, 1e-12);
    EXPECT_NEAR(p["accepted_tokens_per_s"].get<double>(),
                row["batch"].get<double>() * 2.952 / (p["step_us"].get<double>() * 1e-6), 1e-6);
  }
}

TEST(SynthBatchSweep, HtmlIsOneSelfContainedPageWithACurvePerGpu) {
  const std::string page = temp_path("sweep.html");
  const auto r = run_kcast(kDecode + " --gpu H100-SXM,A100-SXM4-80GB --batch-sweep 1,8,64 --html '" + page + "'");
  ASSERT_EQ(r.rc, 0) << r.out;
  const std::string html = kcast::read_file(page);
  std::remove(page.c_str());
  size_t svgs = 0, rows = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) ++svgs;
  for (size_t at = html.find("<tr><td"); at != std::string::npos; at = html.find("<tr><td", at + 1)) ++rows;
  EXPECT_EQ(svgs, 2u);  // one throughput-latency curve per GPU
  EXPECT_EQ(rows, 6u);  // a table row per GPU and batch
  EXPECT_NE(html.find("time per output token (ms)"), std::string::npos);
  EXPECT_NE(html.find("b=64"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);  // no network reference
  EXPECT_EQ(html.find("<script"), std::string::npos);
  // Without a sweep there is no page to write.
  EXPECT_EQ(run_kcast("synth llama3-8b --html x.html -o /dev/null", true).rc, 2);
}

TEST(SynthBatchSweep, BadUseNamesTheOption) {
  struct Case {
    std::string args, expect;
  };
  for (const Case& c : std::vector<Case>{{"--gpu H100-SXM --batch-sweep 1,x", "'x' is not a positive integer"},
                                         {"--gpu H100-SXM --batch-sweep 1,,2", "'' is not a positive integer"},
                                         {"--batch-sweep 1,2", "--gpu"},
                                         {"--gpu H100-SXM --batch-sweep 1,2 --batch 4", "either --batch"},
                                         {"--gpu H100-SXM --batch-sweep 1,2 -o x.csv", "drop -o"},
                                         {"--gpu H100-SXM --format csv", "without --batch-sweep only json"},
                                         {"--gpu H100-SXM --batch-sweep 4,6 --dp 4", "batch 6"}}) {
    const auto r = run_kcast("synth llama3-8b " + c.args, true);
    EXPECT_EQ(r.rc, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find("--batch-sweep"), std::string::npos) << c.args << "\n" << r.out;
  }
}

}  // namespace
}  // namespace kcast::synth
