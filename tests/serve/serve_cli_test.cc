// `kcast serve` through the binary: bad input is one line naming the option or file and line, exit 2,
// and leaves an existing output file alone; with several GPUs one the model does not fit is skipped
// with its reason.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

using namespace kcast::testing;

const char* kLoad = " --input-tokens 256 --output-tokens 16 --concurrency 2 --requests 8";

TEST(ServeCli, BadInputIsOneLineNamingItAndKeepsTheOutputFile) {
  const std::string out = temp_path("serve_keep.csv");
  std::ofstream(out) << "precious\n";
  RunResult r = run_kcast(std::string("serve llama3-8b --gpu H100-SXM --tp 3 --per-request '") + out + "'" + kLoad, true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("'--tp'"), std::string::npos) << r.out;
  std::ifstream in(out);
  std::stringstream kept;
  kept << in.rdbuf();
  EXPECT_EQ(kept.str(), "precious\n");

  const std::string ds = temp_path("serve_bad.csv");
  std::ofstream(ds) << "input_tokens,output_tokens\n10,2\n0,3\n";
  r = run_kcast("serve llama3-8b --gpu H100-SXM --concurrency 1 --dataset '" + ds + "'", true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("serve_bad.csv:3"), std::string::npos) << r.out;

  r = run_kcast(std::string("serve llama3-70b --gpu L4") + kLoad, true);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.out.find("does not fit on L4"), std::string::npos) << r.out;
}

// GPT-OSS-120B serves from one 80 GB GPU (OpenAI's model card: MXFP4 experts, "fits into a single
// 80GB GPU"): the fused MoE kernels' buffers hold each token's 4 routed rows, not one per expert
// (HF's eager inference runs all 128), and the logits are the sampled sequences' only.
TEST(ServeCli, GptOss120bFitsOneH100) {
  const RunResult r = run_kcast(std::string("serve gpt-oss-120b --gpu H100-SXM --dtype fp4 --format json") + kLoad);
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  // 36 layers x 8 KV heads x 64 x 2 (K and V) x 2 bytes = 73,728 bytes a token: over 4 GB of cache.
  EXPECT_GT(j["kv_cache_tokens"].get<double>() * 73728, 4e9);
}

// Speculative decoding: the JSON names it; half-given or out-of-range options are one line naming
// the option, exit 2.
TEST(ServeCli, SpeculativeDecodingIsNamedAndItsOptionsChecked) {
  const RunResult r = run_kcast(std::string("serve llama3-8b --gpu H100-SXM --format json --speculative-tokens 3 "
                                            "--acceptance 0.7") + kLoad);
  ASSERT_EQ(r.rc, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["speculative_tokens"], 3);
  EXPECT_DOUBLE_EQ(j["acceptance"].get<double>(), 0.7);
  for (const auto& [bad, option] : std::vector<std::pair<std::string, std::string>>{
           {"--acceptance 0.7", "'--acceptance'"},
           {"--speculative-tokens 3", "'--speculative-tokens'"},
           {"--speculative-tokens 3 --acceptance 1.5", "'--acceptance'"},
           {"--speculative-tokens -1 --acceptance 0.5", "'--speculative-tokens'"},
           {"--speculative-tokens 1,2 --acceptance 0.5", "'--speculative-tokens'"},
           {"--speculative-tokens 0 --acceptance 0.5", "'--acceptance'"},
           {"--speculative-tokens 2 --acceptance 0.5 --pp 2 --tp 1", "'--speculative-tokens'"}}) {
    const RunResult e = run_kcast("serve llama3-8b --gpu H100-SXM,L4 " + bad + kLoad, true);
    EXPECT_EQ(e.rc, 2) << bad << "\n" << e.out;
    EXPECT_NE(e.out.find(option), std::string::npos) << bad << "\n" << e.out;
  }
}

// Disaggregated prefill / decode: the deployment's workers and GPUs in the JSON; the worker options
// without --prefill-workers are one line naming the option; a closed loop runs too.
TEST(ServeCli, ADisaggregatedDeploymentNamesItsWorkers) {
  const RunResult r = run_kcast("serve llama3-8b --gpu H100-SXM --tp 2 --prefill-workers 3 --prefill-tp 1 "
                                "--input-tokens 1024 --output-tokens 32 --request-rate 4 --requests 40 --format json");
  ASSERT_EQ(r.rc, 0) << r.out;
  const nlohmann::json d = nlohmann::json::parse(r.out).at("disaggregated");
  EXPECT_EQ(d.at("prefill_workers"), 3);
  EXPECT_EQ(d.at("prefill_tp"), 1);
  EXPECT_EQ(d.at("decode_workers"), 1);
  EXPECT_EQ(d.at("decode_tp"), 2);
  EXPECT_EQ(d.at("gpus"), 5);
  RunResult bad = run_kcast(std::string("serve llama3-8b --gpu H100-SXM --decode-workers 2 --input-tokens 256 "
                                        "--output-tokens 16 --request-rate 2"), true);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.out.find("option '--decode-workers': only with --prefill-workers"), std::string::npos) << bad.out;
  bad = run_kcast("serve llama3-8b --gpu H100-SXM --tp 2 --prefill-workers 2 --prefill-tp 3 --input-tokens 256 "
                  "--output-tokens 16 --request-rate 2", true);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.out.find("option '--prefill-tp': a prefill worker of 3 GPU(s)"), std::string::npos) << bad.out;
  const RunResult closed = run_kcast(std::string("serve llama3-8b --gpu H100-SXM --prefill-workers 1 --format json") + kLoad);
  ASSERT_EQ(closed.rc, 0) << closed.out;
  EXPECT_EQ(nlohmann::json::parse(closed.out).at("concurrency"), 2);
}

TEST(ServeCli, AGpuTheModelDoesNotFitIsSkippedAmongSeveral) {
  const RunResult r = run_kcast(std::string("serve llama3-8b --gpu K80,H100-SXM --format csv") + kLoad, true);
  ASSERT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("K80 skipped: serve: llama3-8b does not fit on K80"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nH100-SXM,concurrency,2,"), std::string::npos) << r.out;
}

// Expert-parallel serving waits for its busiest GPU: with the busiest at 1.5x the mean every decode step
// takes longer, the inputs echo the knob, and without attention data parallelism it is refused.
TEST(ServeCli, RoutingImbalanceSlowsExpertParallelServing) {
  const std::string req = std::string("serve qwen3-30b-a3b --gpu H100-SXM --tp 4 --ep 4 --attention-dp --format json") +
                          kLoad;
  const RunResult even = run_kcast(req), skewed = run_kcast(req + " --moe-load-imbalance 1.5");
  ASSERT_EQ(even.rc, 0) << even.out;
  ASSERT_EQ(skewed.rc, 0) << skewed.out;
  const auto e = nlohmann::json::parse(even.out), k = nlohmann::json::parse(skewed.out);
  EXPECT_EQ(e["moe_load_imbalance"], 1.0);
  EXPECT_EQ(k["moe_load_imbalance"], 1.5);
  EXPECT_GT(k["itl_ms"]["mean"].get<double>(), e["itl_ms"]["mean"].get<double>());
  // Tensor-parallel prefill workers have no expert-parallel group: the knob is the decode workers'.
  EXPECT_EQ(run_kcast(req + " --moe-load-imbalance 1.5 --prefill-workers 1 --prefill-tp 2").rc, 0);
  const RunResult bad = run_kcast(std::string("serve qwen3-30b-a3b --gpu H100-SXM --tp 4 --moe-load-imbalance 1.5") + kLoad,
                                  true);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.out.find("option '--moe-load-imbalance': serving splits experts over GPUs only with --attention-dp"),
            std::string::npos)
      << bad.out;
}

}  // namespace
}  // namespace kcast
