// `kcast plan` through the binary: a request nothing can satisfy is one line naming the closest miss,
// exit 2; a good one prints the ranked table with the best candidate's command.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace kcast
