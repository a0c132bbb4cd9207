// How routed rows reach the experts beyond balanced routing. Token dropping (--moe-expert-capacity-factor,
// --moe-pad-expert-input-to-capacity): the rows each expert runs and each GPU sends under a capacity, the
// host read that padding removes, and the conditions Megatron-Core puts on both. Routing imbalance
// (--moe-load-imbalance): the busiest GPU's rows, which every MoE layer waits for.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "predict/synth/synth.h"
#include "tests/input_error_of.h"
#include "tests/synth/synth_options.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth {
namespace {

using kcast::testing::input_error_of;
using testing::find;
using testing::megatron_ep8;
using testing::total;

// Mixtral 8x7B on 8 GPUs: 2048 tokens a GPU, top-2 of 8 experts: 512 rows for each expert from each GPU
// under balanced routing, 4096 rows for this GPU's one expert.
constexpr double kRowsPerExpert = 4096;
const char* const kExpertGemm = "layer.moe.experts.down_proj aten::mm";
const char* const kToHost = "layer.moe.tokens_per_expert [CUDA memcpy Device-to-Host] (to host)";
const char* const kExchange = "nccl:all_to_all (expert parallel";

std::vector<Kernel> step(double factor, bool pad, double imbalance = 1,
                         MoeDispatcher dispatcher = MoeDispatcher::alltoall) {
  SynthOptions o = megatron_ep8();
  o.moe_capacity_factor = factor;
  o.moe_pad_to_capacity = pad;
  o.moe_load_imbalance = imbalance;
  o.moe_dispatcher = dispatcher;
  return synthesize("mixtral-8x7b", o);
}

int64_t expert_rows(const std::vector<Kernel>& ks) {
  const Kernel* g = find(ks, kExpertGemm);
  EXPECT_NE(g, nullptr);
  return g ? g->m : 0;
}

TEST(MoeTokenDrop, ACapacityAtOrAboveTheBalancedShareDropsNothing) {
  const auto dropless = step(0, false);
  EXPECT_EQ(expert_rows(dropless), kRowsPerExpert);
  const auto roomy = step(1.3, false);  // capacity ceil(512 x 1.3) = 666 > 512
  EXPECT_EQ(expert_rows(roomy), kRowsPerExpert);
  EXPECT_DOUBLE_EQ(total(roomy, kExchange, &Kernel::bytes), total(dropless, kExchange, &Kernel::bytes));
  // Without padding the counts still reach the host (Megatron-Core syncs before the first permutation).
  EXPECT_NE(find(dropless, kToHost), nullptr);
  EXPECT_NE(find(roomy, kToHost), nullptr);
}

TEST(MoeTokenDrop, ACapacityBelowTheShareDropsTheRest) {
  const auto dropless = step(0, false), half = step(0.5, false);  // capacity 256 of 512
  EXPECT_EQ(expert_rows(half), kRowsPerExpert / 2);
  EXPECT_NEAR(total(half, kExchange, &Kernel::bytes) / total(dropless, kExchange, &Kernel::bytes), 0.5, 1e-12);
  EXPECT_NEAR(total(half, "moe.experts", &Kernel::flops) / total(dropless, "moe.experts", &Kernel::flops), 0.5, 1e-9);
}

TEST(MoeTokenDrop, PaddingRunsEveryExpertOnItsCapacityWithoutAHostRead) {
  const auto dropless = step(0, false);
  const auto even = step(1, true);  // capacity 512: what balanced routing gives anyway
  EXPECT_EQ(expert_rows(even), kRowsPerExpert);
  EXPECT_EQ(find(even, kToHost), nullptr);
  const auto twice = step(2, true);  // 1024 rows for each expert from each GPU, half of them padding
  EXPECT_EQ(expert_rows(twice), 2 * kRowsPerExpert);
  EXPECT_NEAR(total(twice, kExchange, &Kernel::bytes) / total(dropless, kExchange, &Kernel::bytes), 2, 1e-12);
  EXPECT_EQ(find(twice, kToHost), nullptr);
}

TEST(MoeTokenDrop, RefusedWhereMegatronCoreRefusesIt) {
  auto refused = [](SynthOptions o, const std::string& option, const std::string& says) {
    const std::string e = input_error_of([&] { synthesize("mixtral-8x7b", o); });
    EXPECT_NE(e.find("option '" + option + "'"), std::string::npos) << e;
    EXPECT_NE(e.find(says), std::string::npos) << e;
  };
  SynthOptions pad_only = megatron_ep8();
  pad_only.moe_pad_to_capacity = true;
  refused(pad_only, "--moe-pad-expert-input-to-capacity", "give --moe-expert-capacity-factor too");
  SynthOptions flex = megatron_ep8();
  flex.moe_capacity_factor = 1;
  flex.moe_dispatcher = MoeDispatcher::hybridep;
  refused(flex, "--moe-expert-capacity-factor", "alltoall or allgather");
  flex.moe_dispatcher = MoeDispatcher::allgather;
  EXPECT_NO_THROW(synthesize("mixtral-8x7b", flex));
  SynthOptions eager = megatron_ep8();
  eager.moe_capacity_factor = 1;
  eager.framework = Framework::eager;
  refused(eager, "--moe-expert-capacity-factor", "--framework megatron");
  SynthOptions negative = megatron_ep8();
  negative.moe_capacity_factor = -1;
  refused(negative, "--moe-expert-capacity-factor", "above 0");
  SynthOptions dense = megatron_ep8();  // a dense model has no experts to drop tokens for
  dense.ep = 1;
  dense.moe_capacity_factor = 1;
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", dense); })
                .find("option '--moe-expert-capacity-factor': llama3-8b has no experts"),
            std::string::npos);
  SynthOptions huge = megatron_ep8();  // beyond every routed row on one expert
  huge.moe_capacity_factor = 9;
  refused(huge, "--moe-expert-capacity-factor", "at most the 8 experts");
}

// The busiest GPU receives imbalance x its share: its expert GEMMs and the exchange, which ends when it
// has its rows, carry that many; a capacity caps them; padding fixes them whatever the routing.
TEST(MoeLoadImbalance, TheBusiestGpuSetsTheExpertRowsAndTheExchange) {
  const auto balanced = step(0, false), skewed = step(0, false, 1.5);
  EXPECT_EQ(expert_rows(skewed), 1.5 * kRowsPerExpert);
  EXPECT_NEAR(total(skewed, kExchange, &Kernel::bytes) / total(balanced, kExchange, &Kernel::bytes), 1.5, 1e-12);
  // DeepEP's exchange too, by the same share.
  const auto deep = step(0, false, 1, MoeDispatcher::deepep), deep_skewed = step(0, false, 1.5, MoeDispatcher::deepep);
  EXPECT_NEAR(total(deep_skewed, "deepep:", &Kernel::bytes) / total(deep, "deepep:", &Kernel::bytes), 1.5, 1e-12);
  // A capacity of ceil(512 x 1.25) = 640 rows from each GPU caps the busiest expert at 8 x 640.
  EXPECT_EQ(expert_rows(step(1.25, false, 1.5)), 8 * 640);
  // Padded to a capacity of 512, every expert runs 8 x 512 rows, the busiest too.
  EXPECT_EQ(expert_rows(step(1, true, 1.5)), kRowsPerExpert);
}

TEST(MoeLoadImbalance, RefusedOutsideOneToTheGroupSize) {
  auto refused = [](SynthOptions o, const std::string& says) {
    const std::string e = input_error_of([&] { synthesize("mixtral-8x7b", o); });
    EXPECT_NE(e.find("option '--moe-load-imbalance'"), std::string::npos) << e;
    EXPECT_NE(e.find(says), std::string::npos) << e;
  };
  SynthOptions o = megatron_ep8();
  o.moe_load_imbalance = 0.5;
  refused(o, "from 1 (balanced) to --ep 8");
  o.moe_load_imbalance = 9;
  refused(o, "from 1 (balanced) to --ep 8");
  o.moe_load_imbalance = 8;  // every routed row on one GPU
  EXPECT_NO_THROW(synthesize("mixtral-8x7b", o));
  o.ep = 1;
  o.moe_load_imbalance = 1.2;
  refused(o, "give --ep 2 or more");
}

}  // namespace
}  // namespace kcast::synth
