// `kcast synth --gpu`'s predicted time and rates (predict/cli/synth_time_report.h): the step is what
// `kcast predict --mode absolute` predicts for the written list, and each rate follows from it and from
// the step's work in closed form.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "io/atomic_file.h"
#include "predict/cli/synth_time_report.h"
#include "predict/synth/generation.h"
#include "tests/predict/predict_fixture.h"

namespace kcast::synth {
namespace {

using kcast::testing::run_kcast;
using kcast::testing::temp_path;

struct SynthRun {
  nlohmann::json report;     // synth --memory-json
  nlohmann::json predicted;  // kcast predict --format json --by-prefix on the written list
};

// Synthesizes `args` with --gpu GPU and predicts the written list with `predict_flags`.
SynthRun synth_and_predict(const std::string& args, const std::string& gpu, const std::string& predict_flags = "") {
  // Named for the test (and numbered within it): ctest runs the tests in parallel processes.
  static int calls = 0;
  const std::string tag = std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
                          std::to_string(++calls);
  const std::string json = temp_path(tag + ".json"), list = temp_path(tag + ".csv");
  const auto s = run_kcast("synth " + args + " --gpu " + gpu + " --memory-json '" + json + "' -o '" + list + "'", true);
  EXPECT_EQ(s.rc, 0) << s.out;
  const auto p = run_kcast("predict --kernels '" + list + "' --gpu " + gpu +
                           " --mode absolute --by-prefix --format json " + predict_flags);
  EXPECT_EQ(p.rc, 0) << p.out;
  SynthRun r{nlohmann::json::parse(kcast::read_file(json)), nlohmann::json::parse(p.out)};
  std::remove(json.c_str());
  std::remove(list.c_str());
  return r;
}

const nlohmann::json& timing(const SynthRun& r) { return r.report["gpus"][0]["predicted"]; }
double num(const nlohmann::json& j) { return j.get<double>(); }

TEST(SynthTimeReport, TrainingStepIsPredictsAndItsRatesFollow) {
  // Llama 3 8B, 4 x 4096 tokens: the fused attention kernel's instruction set comes from its name,
  // which the list's reader derives, so an in-memory shortcut would differ from predict here.
  const SynthRun r = synth_and_predict("llama3-8b --mode train --batch 4 --seq 4096 --attention flash", "H100-SXM");
  const auto& t = timing(r);
  const auto& p = r.predicted["predictions"][0];
  EXPECT_DOUBLE_EQ(num(t["step_us"]), num(p["step_us"]));
  EXPECT_DOUBLE_EQ(num(t["tokens_per_s"]), 4.0 * 4096 / (num(t["step_us"]) * 1e-6));
  EXPECT_EQ(t["gpus"], 1);
  EXPECT_EQ(t["mfu_dtype"], "bf16");
  EXPECT_TRUE(t["mbu"].is_null());  // not decoding
  // MFU's FLOPs: PaLM's 6 N T over the matrix parameters (all but the embedding table) plus causal
  // attention's 6 L h s T (at most 2% more: the fused backward's recomputed scores are not model FLOPs).
  // The FLOPs come back through mfu x step x peak: equal to PaLM's up to rounding.
  const double model_flops = num(t["mfu"]) * num(t["step_us"]) * 1e-6 * num(p["peak_tflops"]) * 1e12;
  const double n = num(r.report["params"]) - 128256.0 * 4096;
  const double tokens = 4.0 * 4096;
  const double palm = 6 * n * tokens + 6 * 32 * 4096.0 * 4096 * tokens;
  EXPECT_GT(model_flops, (1 - 1e-9) * palm);
  EXPECT_LT(model_flops, 1.02 * palm);
}

// A framework's training step holds the GPU under load for seconds: every GEMM runs at the clock the
// power limit settles at (model/gpu_caps.h, sustained_caps), where predict times each kernel with the
// boost budget a lone one has. On one GPU under CUDA graphs (no communication, no host issue) the step
// is the kernels' sum: on a B200, whose power limit pulls BF16 math to 0.80 of boost, longer than
// predict's but by no more than 1 / 0.80; on an H100, whose BF16 math holds boost, predict's exactly.
TEST(SynthTimeReport, AFrameworksTrainingStepRunsItsGemmsAtTheSustainedClock) {
  const std::string step = "llama3-8b --mode train --batch 2 --seq 2048 --attention flash --framework megatron";
  const SynthRun h100 = synth_and_predict(step + " --cuda-graph", "H100-SXM", "--cuda-graph");
  EXPECT_DOUBLE_EQ(num(timing(h100)["step_us"]), num(h100.predicted["predictions"][0]["step_us"]));
  const SynthRun b200 = synth_and_predict(step + " --cuda-graph", "B200", "--cuda-graph");
  const double sustained = num(timing(b200)["step_us"]), lone = num(b200.predicted["predictions"][0]["step_us"]);
  EXPECT_GT(sustained, 1.01 * lone);
  EXPECT_LE(sustained, lone / 0.80);
  // Eager's step stays predict's sum of kernels timed one by one (NeuSight's per-op labels).
  const SynthRun eager = synth_and_predict("llama3-8b --mode train --batch 2 --seq 2048 --attention flash", "B200");
  EXPECT_DOUBLE_EQ(num(timing(eager)["step_us"]), num(eager.predicted["predictions"][0]["step_us"]));
}

TEST(SynthTimeReport, RecomputationLengthensTheStepButAddsNoModelFlops) {
  const std::string args = "llama3-8b --mode train --batch 2 --seq 2048 --attention flash";
  const SynthRun plain = synth_and_predict(args, "A100-SXM4-80GB");
  const SynthRun full = synth_and_predict(args + " --recompute full", "A100-SXM4-80GB");
  const auto &a = timing(plain), &b = timing(full);
  EXPECT_GT(num(b["step_us"]), 1.2 * num(a["step_us"]));
  EXPECT_NEAR(num(b["mfu"]) * num(b["step_us"]), num(a["mfu"]) * num(a["step_us"]), 1e-9 * num(a["step_us"]));
}

TEST(SynthTimeReport, GenerationSplitsIntoFirstTokenAndPerToken) {
  const SynthRun r = synth_and_predict(
      "llama3-8b --mode generate --batch 8 --seq 512 --new-tokens 64 --attention flash --cuda-graph", "H100-SXM",
      "--cuda-graph");
  const auto& t = timing(r);
  const auto& p = r.predicted["predictions"][0];
  EXPECT_DOUBLE_EQ(num(t["step_us"]), num(p["step_us"]));
  double decode_us = 0;
  for (const auto& [prefix, us] : p["by_prefix"].items())
    if (prefix.rfind("decode@", 0) == 0) decode_us += us.get<double>();
  EXPECT_NEAR(num(t["time_to_first_token_us"]), num(p["by_prefix"]["prefill"]), 1e-9 * num(t["step_us"]));
  EXPECT_NEAR(num(t["time_per_output_token_us"]), decode_us / 64, 1e-9 * decode_us);
  EXPECT_NEAR(num(t["time_to_first_token_us"]) + 64 * num(t["time_per_output_token_us"]), num(t["step_us"]),
              1e-9 * num(t["step_us"]));
  EXPECT_DOUBLE_EQ(num(t["tokens_per_s"]), 8.0 * 64 / (num(t["step_us"]) * 1e-6));
  EXPECT_GT(num(t["mfu"]), 0);
  EXPECT_GT(num(t["mbu"]), 0);
}

TEST(SynthTimeReport, DecodingReadsEveryWeightAndTheCacheOnceAStep) {
  // MBU's bytes: every weight but the embedding table (a lookup reads 32 of its rows) and the KV cache
  // read once, plus the step's small activations.
  const SynthRun r = synth_and_predict("llama3-8b --mode decode --batch 32 --seq 4096 --attention flash --cuda-graph",
                                  "H100-SXM", "--cuda-graph");
  const auto& t = timing(r);
  EXPECT_DOUBLE_EQ(num(t["step_us"]), num(r.predicted["predictions"][0]["step_us"]));
  EXPECT_DOUBLE_EQ(num(t["time_per_output_token_us"]), num(t["step_us"]));
  EXPECT_TRUE(t["mfu"].is_null());
  const double bytes = num(t["mbu"]) * num(t["step_us"]) * 1e-6 * 3350e9;  // the H100 SXM's datasheet 3.35 TB/s
  const double embedding_table = 128256.0 * 4096 * 2;
  const double read_once = num(r.report["weight_bytes"]) - embedding_table + num(r.report["kv_cache_bytes"]);
  EXPECT_GT(bytes, read_once);
  EXPECT_LT(bytes, 1.05 * read_once);
  EXPECT_DOUBLE_EQ(num(t["tokens_per_s"]), 32 / (num(t["step_us"]) * 1e-6));
}

TEST(SynthTimeReport, ParallelRunsCountEveryGpuAndResNetsCountImages) {
  const SynthRun tp = synth_and_predict("llama3-8b --mode train --batch 16 --seq 2048 --tp 2 --dp 4 --attention flash",
                                   "H100-SXM");
  const auto& t = timing(tp);
  EXPECT_EQ(t["gpus"], 8);
  EXPECT_DOUBLE_EQ(num(t["tokens_per_s"]), 16.0 * 2048 / (num(t["step_us"]) * 1e-6));
  EXPECT_DOUBLE_EQ(num(t["tokens_per_s_per_gpu"]) * 8, num(t["tokens_per_s"]));
  const SynthRun cnn = synth_and_predict("resnet50 --mode train --batch 64 --dp 2", "V100-SXM2-32GB");
  EXPECT_EQ(timing(cnn)["unit"], "images");
  EXPECT_DOUBLE_EQ(num(timing(cnn)["tokens_per_s"]), 64 / (num(timing(cnn)["step_us"]) * 1e-6));
}

TEST(SynthTimeReport, ASpeculativeStepYieldsItsExpectedAcceptedTokens) {
  // 3 drafts at acceptance 0.7: 1 + 0.7 + 0.49 + 0.343 = 2.533 tokens a sequence a step.
  const SynthRun r = synth_and_predict("llama3-8b --mode decode --batch 8 --seq 2048 --attention flash "
                                       "--decode-tokens 4 --acceptance 0.7",
                                       "H100-SXM");
  const auto& t = timing(r);
  EXPECT_NEAR(num(t["tokens_per_step"]), 1 + 0.7 + 0.49 + 0.343, 1e-12);
  EXPECT_NEAR(num(t["accepted_tokens_per_s"]), 8 * num(t["tokens_per_step"]) / (num(t["step_us"]) * 1e-6), 1e-6);
  EXPECT_DOUBLE_EQ(num(t["tokens_per_s"]), 8 * 4 / (num(t["step_us"]) * 1e-6));  // every draft verified
  EXPECT_DOUBLE_EQ(kcast::synth::expected_tokens_per_step(4, 1.0), 4);
  EXPECT_DOUBLE_EQ(kcast::synth::expected_tokens_per_step(4, 0.0), 1);
  for (const char* bad : {"--acceptance 0.7", "--mode decode --decode-tokens 4 --gpu T4 --acceptance 1.5",
                          "--mode decode --gpu T4 --acceptance 0.5"}) {
    const auto e = run_kcast(std::string("synth llama3-8b ") + bad + " -o /dev/null", true);
    EXPECT_EQ(e.rc, 2) << bad << "\n" << e.out;
    EXPECT_NE(e.out.find("'--acceptance'"), std::string::npos) << e.out;
  }
}

TEST(SynthTimeReport, StderrLineNamesTheRates) {
  const auto r = run_kcast("synth llama3-8b --mode generate --batch 4 --seq 256 --new-tokens 16 --attention flash "
                           "--gpu H100-SXM -o /dev/null",
                           true);
  ASSERT_EQ(r.rc, 0) << r.out;
  for (const char* s : {"H100-SXM: predicted generation", "time to first token", "per output token",
                        "tokens/s generated", "MFU", "MBU"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

// --context neusight: the step as NeuSight timed it, each op alone, its family's framework floor added:
// the written list's rows name their family's context, and predict --with-context of that list gives
// the same step; every row adds a floor, so the step is longer than the GPU time alone.
TEST(SynthTimeReport, AMeasurementContextAddsItsPerOpFloors) {
  const std::string args = "gpt2-large --mode infer --batch 4 --seq 1024 --dtype fp32";
  const std::string list = temp_path("context.csv");
  const auto with = run_kcast("synth " + args + " --gpu A100-PCIe-40GB --context neusight --format json -o '" + list + "'");
  ASSERT_EQ(with.rc, 0) << with.out;
  const auto without = run_kcast("synth " + args + " --gpu A100-PCIe-40GB --format json -o /dev/null");
  ASSERT_EQ(without.rc, 0) << without.out;
  const nlohmann::json w = nlohmann::json::parse(with.out)[0], wo = nlohmann::json::parse(without.out)[0];
  EXPECT_EQ(w["context"], "neusight");
  EXPECT_GT(num(w["step_us"]), num(wo["step_us"]) * 1.05);
  const std::string text = kcast::read_file(list);
  for (const char* c : {"neusight:linear", "neusight:bmm", "neusight:softmax", "neusight:ln", "neusight:add"})
    EXPECT_NE(text.find(c), std::string::npos) << c;
  const auto p = run_kcast("predict --kernels '" + list + "' --gpu A100-PCIe-40GB --mode absolute --with-context --format json");
  ASSERT_EQ(p.rc, 0) << p.out;
  EXPECT_NEAR(num(nlohmann::json::parse(p.out)["predictions"][0]["total_us"]), num(w["step_us"]), 1e-6 * num(w["step_us"]));
  std::remove(list.c_str());
  const auto bad = run_kcast("synth " + args + " --gpu A100-PCIe-40GB --context nobody -o /dev/null", true);
  EXPECT_EQ(bad.rc, 2) << bad.out;
  EXPECT_NE(bad.out.find("option '--context'"), std::string::npos) << bad.out;
}

TEST(SynthTimeReport, PredictionOptionsNeedAGpu) {
  for (const char* opt : {"--cuda-graph", "--cost-model data/models/default.json", "--context neusight"}) {
    const auto r = run_kcast(std::string("synth llama3-8b ") + opt + " -o /dev/null", true);
    EXPECT_EQ(r.rc, 2) << r.out;
    EXPECT_NE(r.out.find("only with --gpu"), std::string::npos) << r.out;
  }
  const auto bad = run_kcast("synth llama3-8b --gpu H100-SXM --cost-model /no/such/model.json -o /dev/null", true);
  EXPECT_EQ(bad.rc, 2) << bad.out;
  EXPECT_NE(bad.out.find("/no/such/model.json"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace kcast::synth
