// `kcast plan` through the binary: a request nothing can satisfy is one line naming the closest miss,
// exit 2; a good one prints the ranked table with the best candidate's command.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <set>

#include <nlohmann/json.hpp>

#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

using namespace kcast::testing;

TEST(PlanCli, NoLayoutFitsNamesTheClosest) {
  const RunResult r = run_kcast("plan train llama3-70b --gpu L4 --gpus 2 --batch 2 --seq 4096", true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("kcast: plan train: no layout of 2 GPUs fits L4; the closest (tp 2 pp 1"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("GB of"), std::string::npos) << r.out;
}

TEST(PlanCli, AnSloNoConfigurationMeetsNamesTheClosest) {
  const RunResult r = run_kcast(
      "plan serve llama3-8b --gpu H100-SXM --gpus 2 --input-tokens 1024 --output-tokens 64 --slo-ttft 1", true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("kcast: plan serve: no configuration meets the SLOs; the closest"), std::string::npos) << r.out;
}

// Speculative decoding: every candidate's command carries the drafts and their acceptance and
// reproduces it; more accepted drafts serve one client's tokens faster.
TEST(PlanCli, SpeculativeCandidatesCarryTheirDraftsIntoTheCommand) {
  const char* base = "plan serve llama3-8b --gpu H100-SXM --gpus 1 --input-tokens 512 --output-tokens 64 --slo-itl 8 "
                     "--format json";
  const RunResult r = run_kcast(std::string(base) + " --speculative-tokens 3 --acceptance 0.8");
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json best = nlohmann::json::parse(r.out).at(0);
  const std::string cmd = best["command"].get<std::string>();
  EXPECT_NE(cmd.find(" --speculative-tokens 3 --acceptance 0.8"), std::string::npos) << cmd;
  const RunResult again = run_kcast(cmd.substr(6));
  ASSERT_EQ(again.rc, 0) << again.out;
  EXPECT_NEAR(nlohmann::json::parse(again.out)["output_tokens_per_s"].get<double>(),
              best["output_tokens_per_s"].get<double>(), 1e-6 * best["output_tokens_per_s"].get<double>());
  // Without drafts a one-GPU BF16 Llama 3 8B decodes at ~6.7 ms a token: the 8 ms ITL objective holds
  // either way, and the drafted plan serves more tokens per GPU under it.
  const RunResult plain = run_kcast(base);
  ASSERT_EQ(plain.rc, 0) << plain.out;
  EXPECT_GT(best["output_tokens_per_s_per_gpu"].get<double>(),
            nlohmann::json::parse(plain.out).at(0)["output_tokens_per_s_per_gpu"].get<double>());
  const RunResult bad = run_kcast(std::string(base) + " --acceptance 0.8", true);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.out.find("'--acceptance'"), std::string::npos) << bad.out;
  // A list of draft counts: every configuration with each, the count in each candidate's JSON and
  // command (none where it is 0).
  const RunResult both = run_kcast(std::string(base) + " --speculative-tokens 0,3 --acceptance 0.8 --top 100");
  ASSERT_EQ(both.rc, 0) << both.out;
  std::set<int64_t> counts;
  for (const nlohmann::json& c : nlohmann::json::parse(both.out)) {
    const int64_t k = c["speculative_tokens"].get<int64_t>();
    counts.insert(k);
    EXPECT_EQ(c["command"].get<std::string>().find("--speculative-tokens") != std::string::npos, k > 0) << c["command"];
  }
  EXPECT_EQ(counts, (std::set<int64_t>{0, 3}));
  EXPECT_EQ(nlohmann::json::parse(both.out).at(0)["speculative_tokens"], 3);
}

// `--load request-rate`: each candidate's command runs kcast serve at the rate found and gives back the
// candidate's own figures; the closed loop's keys are null there, and a bad load is named.
TEST(PlanCli, ARequestRateCandidatesCommandReproducesIt) {
  const RunResult r = run_kcast(
      "plan serve llama3-8b --gpu H100-SXM --gpus 1 --input-tokens 512 --output-tokens 64 --slo-ttft 60 --slo-itl 12 "
      "--percentile 50 --load request-rate --requests 200 --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json best = nlohmann::json::parse(r.out).at(0);
  EXPECT_TRUE(best["concurrency_per_replica"].is_null());
  ASSERT_TRUE(best["request_rate_per_replica"].is_number());
  std::string cmd = best["command"].get<std::string>();
  ASSERT_EQ(cmd.rfind("kcast ", 0), 0u) << cmd;
  const RunResult again = run_kcast(cmd.substr(6));
  ASSERT_EQ(again.rc, 0) << again.out;
  const nlohmann::json served = nlohmann::json::parse(again.out);
  EXPECT_NEAR(served["ttft_ms"]["p50"].get<double>(), best["ttft_ms"]["p50"].get<double>(),
              1e-6 * best["ttft_ms"]["p50"].get<double>());
  EXPECT_NEAR(served["output_tokens_per_s"].get<double>(), best["output_tokens_per_s"].get<double>(),
              1e-6 * best["output_tokens_per_s"].get<double>());
  // A disaggregated candidate's command reproduces it too.
  const RunResult d = run_kcast(
      "plan serve llama3-8b --gpu H100-SXM --gpus 4 --input-tokens 2048 --output-tokens 64 --slo-ttft 400 "
      "--slo-itl 15 --load request-rate --requests 100 --top 100 --format json");
  ASSERT_EQ(d.rc, 0) << d.out;
  bool seen = false;
  for (const nlohmann::json& c : nlohmann::json::parse(d.out)) {
    if (!c["disaggregated"].get<bool>()) continue;
    seen = true;
    cmd = c["command"].get<std::string>();
    EXPECT_NE(cmd.find("--prefill-workers"), std::string::npos) << cmd;
    const RunResult s = run_kcast(cmd.substr(6));
    ASSERT_EQ(s.rc, 0) << s.out;
    const nlohmann::json j = nlohmann::json::parse(s.out);
    EXPECT_NEAR(j["ttft_ms"]["p50"].get<double>(), c["ttft_ms"]["p50"].get<double>(), 1e-6 * c["ttft_ms"]["p50"].get<double>());
    // Tokens/s of the whole deployment, which is one replica of the plan.
    EXPECT_NEAR(j["output_tokens_per_s"].get<double>(), c["output_tokens_per_s"].get<double>() / c["replicas"].get<double>(),
                1e-6 * j["output_tokens_per_s"].get<double>());
    EXPECT_EQ(j["disaggregated"]["gpus"], c["gpus_per_replica"]);
    break;
  }
  EXPECT_TRUE(seen);
  const RunResult bad = run_kcast(
      "plan serve llama3-8b --gpu H100-SXM --gpus 1 --input-tokens 512 --output-tokens 64 --load poisson", true);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.out.find("option '--load'"), std::string::npos) << bad.out;
}

// `--max-num-seqs S1,S2`: the limits tried, each candidate's in its JSON and its command, which gives
// back the candidate's own figures; a bad limit is named.
TEST(PlanCli, SequenceLimitsAreTriedAndReproduced) {
  const RunResult r = run_kcast(
      "plan serve llama3-8b --gpu H100-SXM --gpus 1 --input-tokens 512 --output-tokens 64 --slo-itl 40 "
      "--max-num-seqs 1024,4 --disaggregated off --top 100 --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  std::set<int64_t> limits;
  for (const nlohmann::json& c : nlohmann::json::parse(r.out)) {
    const int64_t n = c["max_num_seqs"].get<int64_t>();
    limits.insert(n);
    const std::string cmd = c["command"].get<std::string>();
    EXPECT_NE(cmd.find("--max-num-seqs " + std::to_string(n) + " "), std::string::npos) << cmd;
    if (n != 4) continue;
    const RunResult again = run_kcast(cmd.substr(6));
    ASSERT_EQ(again.rc, 0) << again.out;
    const nlohmann::json served = nlohmann::json::parse(again.out);
    EXPECT_NEAR(served["output_tokens_per_s"].get<double>(), c["output_tokens_per_s"].get<double>(),
                1e-6 * c["output_tokens_per_s"].get<double>());
    EXPECT_EQ(served["max_num_seqs"], 4);
  }
  EXPECT_EQ(limits, (std::set<int64_t>{4, 1024}));
  const RunResult bad = run_kcast(
      "plan serve llama3-8b --gpu H100-SXM --gpus 1 --input-tokens 512 --output-tokens 64 --max-num-seqs 0", true);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.out.find("option '--max-num-seqs'"), std::string::npos) << bad.out;
}

// --html: the candidates shown, each with its command, and their throughput by rank, as a page; a run
// that fails leaves an existing page as it was.
TEST(PlanCli, TheHtmlPageHoldsTheCandidatesShown) {
  const std::string page = temp_path("plan_train.html");
  const RunResult r = run_kcast("plan train llama3-8b --gpu H100-SXM --gpus 8 --batch 16 --seq 2048 --top 3 --format "
                                "json --html '" + page + "'");
  ASSERT_EQ(r.rc, 0) << r.out;
  std::ifstream in(page);
  const std::string html((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(html.find("<svg"), std::string::npos);
  const nlohmann::json list = nlohmann::json::parse(r.out);
  ASSERT_EQ(list.size(), 3u);
  for (const nlohmann::json& c : list) EXPECT_NE(html.find(c["command"].get<std::string>()), std::string::npos);

  const std::string kept = temp_path("plan_serve_kept.html");
  std::ofstream(kept) << "precious\n";
  const RunResult bad = run_kcast("plan serve llama3-8b --gpu H100-SXM --gpus 2 --input-tokens 1024 --output-tokens 64 "
                                  "--slo-ttft 1 --html '" + kept + "'", true);
  EXPECT_EQ(bad.rc, 2);
  std::ifstream k(kept);
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(k)), std::istreambuf_iterator<char>()), "precious\n");
}

TEST(PlanCli, TheTableEndsWithTheBestCommand) {
  const RunResult r = run_kcast("plan train llama3-8b --gpu H100-SXM --gpus 8 --batch 16 --seq 2048 --top 3");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("best: kcast synth llama3-8b --mode train --batch 16 --seq 2048"), std::string::npos) << r.out;
}

// A mixture's recipe settings apply to every layout and reappear in the command that reproduces one.
TEST(PlanCli, MixtureSettingsReachEveryCandidatesCommand) {
  const RunResult r = run_kcast(
      "plan train qwen3-30b-a3b --gpu H100-SXM --gpus 8 --batch 16 --seq 1024 --fix ep=8,tp=1,pp=1,cp=1 --etp 1 "
      "--moe-dispatcher deepep --moe-a2a-overlap --top 1");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("--ep 8 --etp 1 --moe-dispatcher deepep --moe-a2a-overlap"), std::string::npos) << r.out;
  const RunResult bad = run_kcast("plan train qwen3-30b-a3b --gpu H100-SXM --gpus 8 --batch 16 --seq 1024 --etp 2", true);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.out.find("option '--etp'"), std::string::npos) << bad.out;
}

// Token dropping and routing imbalance reach every layout and the command that reproduces one; a
// capacity factor that is not a positive number is refused naming the option.
TEST(PlanCli, TokenDropAndImbalanceReachEveryCandidatesCommand) {
  const std::string req = "plan train qwen3-30b-a3b --gpu H100-SXM --gpus 8 --batch 16 --seq 1024 --fix ep=8,tp=1,pp=1,cp=1 "
                          "--etp 1 --top 1";
  const RunResult r = run_kcast(req + " --moe-expert-capacity-factor 1.5 --moe-pad-expert-input-to-capacity");
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("--moe-expert-capacity-factor 1.5 --moe-pad-expert-input-to-capacity"), std::string::npos)
      << r.out;
  const RunResult skewed = run_kcast(req + " --moe-load-imbalance 1.25");
  ASSERT_EQ(skewed.rc, 0) << skewed.out;
  EXPECT_NE(skewed.out.find("--ep 8 --etp 1 --moe-load-imbalance 1.25"), std::string::npos) << skewed.out;
  // Over every expert-parallel size: none without a group, at most the group's size, no layout refused.
  const RunResult any_ep = run_kcast("plan train qwen3-30b-a3b --gpu H100-SXM --gpus 8 --batch 16 --seq 1024 "
                                     "--fix tp=1,pp=1,cp=1 --etp 1 --moe-load-imbalance 3 --top 40 --format json");
  ASSERT_EQ(any_ep.rc, 0) << any_ep.out;
  int layouts_by_ep[9] = {};
  for (const nlohmann::json& c : nlohmann::json::parse(any_ep.out)) {
    const int ep = c["ep"].get<int>();
    const std::string cmd = c["command"].get<std::string>();
    const std::string want = ep == 1 ? "" : ep == 2 ? "--moe-load-imbalance 2 " : "--moe-load-imbalance 3 ";
    if (want.empty()) {
      EXPECT_EQ(cmd.find("--moe-load-imbalance"), std::string::npos) << cmd;
    } else {
      EXPECT_NE(cmd.find(want), std::string::npos) << cmd;
    }
    ++layouts_by_ep[ep];
  }
  EXPECT_GT(layouts_by_ep[1], 0);
  EXPECT_GT(layouts_by_ep[2], 0);
  EXPECT_GT(layouts_by_ep[8], 0);
  const RunResult bad = run_kcast(req + " --moe-expert-capacity-factor 0", true);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.out.find("option '--moe-expert-capacity-factor': a capacity factor above 0"), std::string::npos)
      << bad.out;
}

// FP8 parameters hold the narrow copies only: a layout that does not fit with a BF16 copy beside them
// can fit without it, and the winner's command carries the option.
TEST(PlanCli, Fp8ParametersLetMoreLayoutsFitAndReachTheCommand) {
  const std::string req = "plan train llama3-8b --gpu H100-SXM --gpus 8 --batch 128 --seq 8192 --dtype fp8 --recipe "
                          "current --fix tp=1,pp=1,cp=1,mbs=1,recompute=none,zero=1,offload=0 --memory-fraction 0.95 --format json";
  const RunResult with = run_kcast(req + " --fp8-param-gather"), without = run_kcast(req, true);
  ASSERT_EQ(with.rc, 0) << with.out;
  EXPECT_NE(with.out.find("--fp8-param-gather"), std::string::npos) << with.out;
  // Without them the same layout needs the BF16 copies too.
  EXPECT_EQ(without.rc, 2) << without.out;
  EXPECT_NE(without.out.find("no layout of 8 GPUs fits H100-SXM"), std::string::npos) << without.out;
}

// A layout that does not fit without recomputation is ranked with the first of Megatron's module sets
// that fits (DeepSeek-V3's published B200 layout: latent attention's up projections), ahead of full
// recomputation; its command names the modules and reproduces its step.
TEST(PlanCli, ModuleRecomputationFitsBeforeFullAndReachesTheCommand) {
  const std::string req = "plan train deepseek-v3 --gpu B200 --gpus 256 --batch 4096 --seq 4096 --dtype fp8 --recipe "
                          "mxfp8 --etp 1 --moe-dispatcher hybridep --mtp-layers 1 --fix tp=1,pp=16,cp=1,ep=8,vp=1,mbs=1 "
                          "--format json";
  const RunResult r = run_kcast(req);
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json all = nlohmann::json::parse(r.out);
  ASSERT_EQ(all.size(), 2u) << r.out;  // the module set, then full recomputation
  const nlohmann::json& best = all.at(0);
  EXPECT_EQ(best["recompute"], "selective");
  EXPECT_EQ(best["recompute_modules"], nlohmann::json({"mla_up_proj"}));
  EXPECT_EQ(all.at(1)["recompute"], "full");
  EXPECT_TRUE(all.at(1)["recompute_modules"].empty());
  EXPECT_GT(best["tokens_per_s_per_gpu"].get<double>(), all.at(1)["tokens_per_s_per_gpu"].get<double>());
  const std::string cmd = best["command"].get<std::string>();
  EXPECT_NE(cmd.find(" --recompute-modules mla_up_proj "), std::string::npos) << cmd;
  const RunResult again = run_kcast(cmd.substr(6));
  ASSERT_EQ(again.rc, 0) << again.out;
  const nlohmann::json step = nlohmann::json::parse(again.out);
  EXPECT_NEAR(step.at(0)["step_s"].get<double>(), best["step_s"].get<double>(), 1e-9 * best["step_s"].get<double>())
      << again.out.substr(0, 400);
  // Told not to recompute, the planner tries no modules.
  const RunResult none = run_kcast(req + " --fix tp=1,pp=16,cp=1,ep=8,vp=1,mbs=1,recompute=none", true);
  EXPECT_EQ(none.rc, 2) << none.out;
}

// A candidate's command (`option N` in it) gives back its step and fits; with N - 1 it needs more than
// the planner's 90% of `capacity_gb`: N is the fewest that fit.
void expect_fewest_that_fit(const nlohmann::json& best, const std::string& option, int64_t n, double capacity_gb) {
  const std::string cmd = best["command"].get<std::string>(), flag = option + " " + std::to_string(n);
  ASSERT_NE(cmd.find(" " + flag + " "), std::string::npos) << cmd;
  const RunResult again = run_kcast(cmd.substr(6));
  ASSERT_EQ(again.rc, 0) << again.out;
  const nlohmann::json step = nlohmann::json::parse(again.out).at(0);
  EXPECT_NEAR(step["step_s"].get<double>(), best["step_s"].get<double>(), 1e-9 * best["step_s"].get<double>());
  EXPECT_TRUE(step["fits"].get<bool>());
  std::string fewer = cmd.substr(6);
  fewer.replace(fewer.find(flag), flag.size(), option + " " + std::to_string(n - 1));
  const RunResult less = run_kcast(fewer);
  ASSERT_EQ(less.rc, 0) << less.out;
  EXPECT_GT(nlohmann::json::parse(less.out).at(0)["memory_gb"].get<double>(), 0.9 * capacity_gb)
      << "one layer fewer fits too";
}

// A dense layout that does not fit without recomputation is ranked with the fewest layers the block
// method must recompute (Llama 3 70B on 32 H100s, TP 4 without a pipeline: 9 of 80), which is faster than
// recomputing them all; the command reproduces it, and one layer fewer does not fit.
TEST(PlanCli, TheBlockMethodRecomputesTheFewestLayersThatFit) {
  const std::string req = "plan train llama3-70b --gpu H100-SXM --gpus 32 --batch 64 --seq 8192 --fix tp=4,cp=1,pp=1,mbs=1";
  const RunResult r = run_kcast(req + " --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json all = nlohmann::json::parse(r.out);
  const nlohmann::json& best = all.at(0);
  EXPECT_EQ(best["recompute"], "full");
  const int64_t n = best["recompute_layers"].get<int64_t>();
  EXPECT_GT(n, 0);
  EXPECT_LT(n, 80);
  bool whole = false;  // full recomputation of every layer, slower, is ranked too
  for (const nlohmann::json& c : all)
    if (c["recompute"] == "full" && c["recompute_layers"] == 0 && c["zero"] == best["zero"]) {
      whole = true;
      EXPECT_LT(c["tokens_per_s_per_gpu"].get<double>(), best["tokens_per_s_per_gpu"].get<double>());
    }
  EXPECT_TRUE(whole);
  EXPECT_NE(best["command"].get<std::string>().find(" --recompute full --recompute-layers "), std::string::npos);
  expect_fewest_that_fit(best, "--recompute-layers", n, 85.9);
}

// One pipeline stage: Megatron's CPU activation offloading is tried too, the fewest layers that fit,
// and is the candidate where it is faster than recomputation (a GB200's NVLink-C2C hides the copies; on
// an H100's PCIe link recomputation wins, the test above). Its command reproduces it; one layer fewer
// does not fit.
TEST(PlanCli, OffloadingTheFewestLayersThatFitWhereItBeatsRecomputation) {
  const RunResult r = run_kcast("plan train llama3-70b --gpu GB200 --gpus 64 --batch 128 --seq 8192 --dtype fp8 --recipe "
                                "current --fix tp=1,cp=1,pp=1,mbs=2,zero=3 --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json all = nlohmann::json::parse(r.out);
  const nlohmann::json& best = all.at(0);
  EXPECT_EQ(best["recompute"], "none");
  const int64_t n = best["cpu_offload_layers"].get<int64_t>();
  EXPECT_GT(n, 0);
  EXPECT_LT(n, 80);
  bool recomputed = false;
  for (const nlohmann::json& c : all)
    if (c["recompute"] == "full") {
      recomputed = true;
      EXPECT_EQ(c["cpu_offload_layers"], 0);
      EXPECT_LT(c["tokens_per_s_per_gpu"].get<double>(), best["tokens_per_s_per_gpu"].get<double>());
    }
  EXPECT_TRUE(recomputed);
  expect_fewest_that_fit(best, "--cpu-offload-layers", n, 199.72);
}

// --fix offload=N holds N offloaded layers on every layout (one stage, no recomputation: the others are
// not Megatron's to run); offload=0 turns the planner's offloading off; a bad value is named.
TEST(PlanCli, FixOffloadHoldsTheOffloadedLayers) {
  const std::string req = "plan train llama3-70b --gpu GB200 --gpus 64 --batch 128 --seq 8192 --dtype fp8 --recipe current "
                          "--format json --top 1000 --fix mbs=2,";
  const RunResult held = run_kcast(req + "offload=40");
  ASSERT_EQ(held.rc, 0) << held.out;
  const nlohmann::json all = nlohmann::json::parse(held.out);
  ASSERT_FALSE(all.empty());
  for (const nlohmann::json& c : all) {
    EXPECT_EQ(c["cpu_offload_layers"], 40);
    EXPECT_EQ(c["pp"], 1);
    EXPECT_EQ(c["recompute"], "none");
    EXPECT_NE(c["command"].get<std::string>().find(" --cpu-offload-layers 40 "), std::string::npos);
  }
  const RunResult off = run_kcast(req + "offload=0");
  ASSERT_EQ(off.rc, 0) << off.out;
  for (const nlohmann::json& c : nlohmann::json::parse(off.out)) EXPECT_EQ(c["cpu_offload_layers"], 0);
  const RunResult bad = run_kcast(req + "offload=-1", true);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.out.find("option '--fix': offload='-1'"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace kcast
