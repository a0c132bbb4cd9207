// Multi-token prediction (--mtp-layers) and Megatron's pipeline layout strings (--pp-layout
// "Et|(tt|)*30mL"): the depth's rows and FLOPs, and where the layout puts them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/error.h"
#include "predict/synth/pipeline_layout.h"
#include "predict/synth/synth.h"
#include "tests/input_error_of.h"
#include "tests/synth/synth_options.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth {
namespace {

using kcast::testing::input_error_of;
using testing::find;
using testing::with_mode;

TEST(MegatronLayout, ExpandsTheRecipesStrings) {
  // DeepSeek-V3 on H100 (pp 8 x vp 4): the embedding and one layer, 30 chunks of two, MTP and the loss.
  MegatronLayout h = parse_megatron_layout("Et|(tt|)*30mL", "pp-layout");
  ASSERT_EQ(h.layers.size(), 32u);
  EXPECT_EQ(h.layers.front(), 1);
  EXPECT_EQ(h.layers.back(), 0);
  for (size_t c = 1; c + 1 < h.layers.size(); ++c) EXPECT_EQ(h.layers[c], 2);
  EXPECT_EQ(h.mtp, 1);
  EXPECT_EQ(h.mtp_chunk, 31);
  // On B200 (pp 8 x vp 2): four a chunk, the last one layer with MTP and the loss.
  MegatronLayout b = parse_megatron_layout("Et*4|(t*4|)*14tmL", "pp-layout");
  ASSERT_EQ(b.layers.size(), 16u);
  EXPECT_EQ(b.layers.front(), 4);
  EXPECT_EQ(b.layers.back(), 1);
  EXPECT_EQ(b.mtp_chunk, 15);
  EXPECT_TRUE(is_megatron_layout("Et|tL"));
  EXPECT_FALSE(is_megatron_layout("4,4,4"));
}

TEST(MegatronLayout, BadStringsNameTheOptionAndTheCharacter) {
  EXPECT_NE(input_error_of([] { parse_megatron_layout("Et|x", "pp-layout"); })
                .find("option '--pp-layout': 'x' is not a layout letter at character 4"),
            std::string::npos);
  EXPECT_NE(input_error_of([] { parse_megatron_layout("(tt|", "pp-layout"); }).find("a '(' without its ')'"),
            std::string::npos);
  EXPECT_NE(input_error_of([] { parse_megatron_layout("tt)", "pp-layout"); }).find("an unmatched ')'"),
            std::string::npos);
  EXPECT_NE(input_error_of([] { parse_megatron_layout("t*|t", "pp-layout"); }).find("without a repeat count"),
            std::string::npos);
  EXPECT_NE(input_error_of([] { parse_megatron_layout("tm|tm", "pp-layout"); }).find("in two chunks"),
            std::string::npos);
}

double flops_of(const std::vector<Kernel>& ks, const std::string& prefix) {
  double f = 0;
  for (const auto& k : ks)
    if (k.name.starts_with(prefix) && k.cls == KernelClass::gemm) f += k.flops * k.count;
  return f;
}

SynthOptions small_mixtral() {
  SynthOptions o = with_mode(Mode::train, 4, 256);
  o.attention = AttentionImpl::flash;
  o.framework = Framework::megatron;
  o.layers = 8;
  o.microbatches = 2;
  return o;
}

TEST(MultiTokenPrediction, OneDepthIsAProjectionALayerAndTheHeadAgain) {
  SynthOptions o = small_mixtral();
  Footprint plain_fp, mtp_fp;
  const auto plain = synthesize("mixtral-8x7b", o, &plain_fp);
  o.mtp_layers = 1;
  const auto mtp = synthesize("mixtral-8x7b", o, &mtp_fp);
  const double T = 4 * 256 / 2, d = 4096, V = 32000;  // tokens a micro-batch
  // eh_proj: [T, 2d] x [2d, d] forward, dgrad and wgrad, each micro-batch.
  const Kernel* eh = find(mtp, "mtp.eh_proj aten::mm");
  ASSERT_NE(eh, nullptr);
  EXPECT_DOUBLE_EQ(eh->flops, 2 * T * 2 * d * d);
  EXPECT_DOUBLE_EQ(eh->count, 2);
  // The depth's layer runs the same GEMMs as one of the eight main layers.
  EXPECT_NEAR(flops_of(mtp, "mtp.") - 3 * 2 * (2 * T * 2 * d * d), flops_of(plain, "layer.") / 8, 1);
  // The shared head and its loss once more: no new head weights, one more layer's and eh_proj's.
  EXPECT_DOUBLE_EQ(flops_of(mtp, "mtp_head."), flops_of(plain, "head."));
  EXPECT_DOUBLE_EQ(find(mtp, "mtp_head.lm_head aten::mm")->flops, 2 * T * d * V);
  EXPECT_NE(find(mtp, "mtp_head.lm te::fused_cross_entropy (forward)"), nullptr);
  EXPECT_GT(mtp_fp.weight_bytes, plain_fp.weight_bytes);
  o.mode = Mode::infer;
  o.framework = Framework::eager;
  o.microbatches = 1;
  EXPECT_NE(input_error_of([&] { synthesize("mixtral-8x7b", o); }).find("option '--mtp-layers'"), std::string::npos);
}

TEST(MultiTokenPrediction, ALayoutThatGivesItsStageFewerLayersTakesItOffTheCriticalPath) {
  SynthOptions o = small_mixtral();
  o.pp = 2;
  o.mtp_layers = 1;
  // An even split (4 and 4): the last stage with the depth is the slowest.
  Footprint even_fp;
  const auto even = synthesize("mixtral-8x7b", o, &even_fp);
  EXPECT_NE(find(even, "mtp.eh_proj aten::mm"), nullptr);
  // 5 and 3: the depth's stage holds 3 + 1, under the first's 5.
  o.pp_layout = {5, 3};
  o.pp_layout_mtp_chunk = 1;
  Footprint off_fp;
  const auto off = synthesize("mixtral-8x7b", o, &off_fp);
  EXPECT_EQ(find(off, "mtp.eh_proj aten::mm"), nullptr);
  EXPECT_EQ(find(off, "mtp_head.lm_head aten::mm"), nullptr);
  EXPECT_DOUBLE_EQ(find(off, "layer.moe.gate aten::mm")->count, 5 * (2 + 1));
  bool noted = false;
  for (const auto& n : off_fp.notes) noted |= n.find("off the step's critical path") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace kcast::synth
