// `kcast plan train`: the layouts it enumerates obey the parallel rules, every ranked candidate's
// figures are exactly what `kcast synth --mode train --gpu` reports for its options, the ranking is by
// tokens/s per GPU, and layouts that do not fit are set aside with the reason.
#include <gtest/gtest.h>

#include "calibrate/model_file.h"
#include "io/gpu_database_csv.h"
#include "predict/plan/plan_train.h"
#include "predict/synth/recompute_modules.h"
#include "tests/input_error_of.h"

namespace kcast::plan {
namespace {

using kcast::testing::input_error_of;

LayoutSpace llama8b_space(int64_t gpus, int64_t batch) {
  LayoutSpace s;
  s.gpus = gpus;
  s.batch = batch;
  s.seq = 4096;
  s.layers = 32;
  s.heads = 32;
  s.kv_heads = 8;
  return s;
}

TEST(PlanTrainLayouts, EveryLayoutUsesTheGpusAndDividesTheBatch) {
  const LayoutSpace s = llama8b_space(64, 256);
  const auto layouts = enumerate_train_layouts(s);
  ASSERT_GT(layouts.size(), 100u);
  for (const TrainLayout& l : layouts) {
    EXPECT_EQ(l.tp * l.pp * l.cp * l.dp, 64);
    EXPECT_EQ(l.dp * l.mbs * l.microbatches, 256);
    EXPECT_LE(l.tp, 8) << "tensor parallelism stays in a node";
    EXPECT_EQ(32 % l.tp, 0);
    if (l.pp > 1) {
      EXPECT_GE(l.microbatches, l.pp);
    }
    if (l.vp > 1) {
      EXPECT_TRUE(32 % (l.pp * l.vp) == 0 || 34 % (l.pp * l.vp) == 0) << l.pp << " x " << l.vp;
    }
    EXPECT_EQ(l.ep, 1) << "a dense model has no experts";
  }
}

// Mixtures: expert parallelism divides the experts and either the data x context-parallel ranks or,
// folded, the tensor x context x data-parallel ones (Qwen3-235B's published TP 2 x DP 16 with EP 32); a model whose layers the
// stages divide neither way (DeepSeek-V3's 61) takes any interleaving up to a layer a chunk.
TEST(PlanTrainLayouts, MixturesFoldExpertParallelismAndUnevenStagesInterleave) {
  LayoutSpace s = llama8b_space(256, 1024);
  s.layers = 94, s.heads = 64, s.kv_heads = 4, s.experts = 128;  // Qwen3-235B-A22B
  bool published = false;
  for (const TrainLayout& l : enumerate_train_layouts(s)) {
    EXPECT_EQ(128 % l.ep, 0);
    EXPECT_TRUE((l.dp * l.cp) % l.ep == 0 || (l.tp * l.cp * l.dp) % l.ep == 0) << l.tp << " " << l.dp << " " << l.ep;
    published |= l.tp == 2 && l.pp == 8 && l.ep == 32 && l.vp == 4 && l.dp == 16;
  }
  EXPECT_TRUE(published);
  s.layers = 61, s.heads = 128, s.kv_heads = 128, s.experts = 256;  // DeepSeek-V3
  s.fixed = parse_fix("pp=8,tp=1,ep=32");
  bool vp2 = false;
  for (const TrainLayout& l : enumerate_train_layouts(s)) {
    EXPECT_LE(l.pp * l.vp, 61);
    vp2 |= l.vp == 2;
  }
  EXPECT_TRUE(vp2);  // Megatron-Bridge's B200 layout: PP 8 x VP 2 over 61 layers
}

// Megatron's plans add Megatron FSDP (--zero 3) beside its distributed optimizer where nothing is
// pipelined (Megatron-Bridge's Llama 3 8B runs on 8 H100s); --fix zero=3 keeps only those.
TEST(PlanTrainLayouts, MegatronAddsFsdpWithoutPipelines) {
  LayoutSpace s = llama8b_space(8, 128);
  const size_t plain = enumerate_train_layouts(s).size();
  s.megatron_fsdp = true;
  size_t fsdp = 0;
  for (const TrainLayout& l : enumerate_train_layouts(s)) {
    if (l.zero != 3) continue;
    ++fsdp;
    EXPECT_EQ(l.pp, 1);
    EXPECT_GT(l.dp, 1);
  }
  EXPECT_GT(fsdp, 0u);
  EXPECT_EQ(enumerate_train_layouts(s).size(), plain + fsdp);
  s.fixed = parse_fix("zero=3");
  for (const TrainLayout& l : enumerate_train_layouts(s)) EXPECT_EQ(l.zero, 3);
  EXPECT_EQ(with_layout(synth::SynthOptions{}, enumerate_train_layouts(s).front(), 128).zero, 3);
}

TEST(PlanTrainLayouts, FixedKeysHold) {
  LayoutSpace s = llama8b_space(64, 256);
  s.fixed = parse_fix("tp=4,recompute=none");
  for (const TrainLayout& l : enumerate_train_layouts(s)) {
    EXPECT_EQ(l.tp, 4);
    EXPECT_EQ(l.recompute, Recompute::none);
  }
  EXPECT_NE(input_error_of([] { parse_fix("tp=0"); }).find("'--fix'"), std::string::npos);
  EXPECT_NE(input_error_of([] { parse_fix("zz=2"); }).find("zz=2"), std::string::npos);
  EXPECT_NE(input_error_of([] { parse_fix("recompute=most"); }).find("recompute"), std::string::npos);
}

// --fix recompute=MODULE+MODULE: Megatron's modules on every layout, carried into synth's options.
TEST(PlanTrainLayouts, FixedRecomputeModulesHold) {
  LayoutSpace s = llama8b_space(64, 256);
  s.fixed = parse_fix("tp=4,pp=2,recompute=mla_up_proj+moe_act");
  const auto layouts = enumerate_train_layouts(s);
  ASSERT_FALSE(layouts.empty());
  for (const TrainLayout& l : layouts) {
    EXPECT_EQ(l.recompute, Recompute::selective);
    EXPECT_EQ(l.modules, synth::kRecomputeMlaUpProj | synth::kRecomputeMoeAct);
    EXPECT_EQ(recompute_label(l), "mla_up_proj+moe_act");
    const synth::SynthOptions o = with_layout({}, l, 256);
    EXPECT_EQ(o.recompute_modules, l.modules);
    EXPECT_FALSE(o.selective_recompute) << "core_attn is not among them";
    EXPECT_FALSE(o.recompute);
  }
  EXPECT_NE(input_error_of([] { parse_fix("recompute=mla_up_proj+moe"); }).find("'moe'"), std::string::npos);
}

const StepSynthesizer zoo = [](const synth::SynthOptions& o, synth::Footprint* f) {
  return synth::synthesize("llama3-70b", o, f);
};

synth::SynthOptions megatron_bf16() {
  synth::SynthOptions o;
  o.seq = 4096;
  o.dtype = DType::bf16;
  o.attention = synth::AttentionImpl::flash;
  o.master_weights = true;
  o.framework = synth::Framework::megatron;
  o.zero = 1;
  return o;
}

TEST(PlanTrain, RankedByTokensPerGpuWithSynthsOwnFigures) {
  LayoutSpace s = llama8b_space(32, 64);
  s.layers = 80, s.heads = 64, s.kv_heads = 8;  // Llama 3 70B
  s.fixed = parse_fix("recompute=none,vp=1,cp=1");
  const GpuDatabase& db = default_gpu_database();
  const GpuSpec& h100 = db.resolve("H100-SXM");
  const auto all = plan_train(zoo, megatron_bf16(), enumerate_train_layouts(s), 64, h100, default_model(), db, 2, 0.9);
  size_t ranked = 0, no_fit = 0;
  double last = 1e300;
  for (const TrainCandidate& c : all) {
    if (c.status == TrainCandidate::Status::ranked) {
      ++ranked;
      EXPECT_LE(c.timing.tokens_per_s_per_gpu(), last);
      last = c.timing.tokens_per_s_per_gpu();
      EXPECT_LE(c.fit.need_bytes, 0.9 * c.fit.capacity_bytes);
    } else if (c.status == TrainCandidate::Status::no_fit) {
      ++no_fit;
      EXPECT_NE(c.why.find("GB of"), std::string::npos) << c.why;
    }
  }
  EXPECT_GT(ranked, 0u);
  EXPECT_GT(no_fit, 0u) << "70B with its Adam state on 32 GPUs without model parallelism does not fit";
  // The best candidate's figures are synth's for its options, to the last bit.
  const TrainCandidate& best = all.front();
  ASSERT_EQ(best.status, TrainCandidate::Status::ranked);
  synth::Footprint fp;
  const auto kernels = zoo(best.options, &fp);
  const auto t = cli::time_synth_step(kernels, fp, best.options, {&h100}, default_model(), db, false).front();
  EXPECT_EQ(t.step_us, best.timing.step_us);
  EXPECT_EQ(t.tokens_per_s_per_gpu(), best.timing.tokens_per_s_per_gpu());
}

}  // namespace
}  // namespace kcast::plan
