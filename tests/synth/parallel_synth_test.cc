// Tests of `kcast synth --tp/--pp/--dp/--microbatches`: one GPU's share of the work against the
// single-GPU list and the closed-form collective volumes (Megatron-LM's tensor parallelism, DDP's
// gradient all-reduce, a pipeline schedule's critical path), and errors that name the option.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "model/error.h"
#include "predict/synth/synth.h"
#include "predict/synth/transformer_config.h"
#include "tests/input_error_of.h"
#include "tests/synth/synth_options.h"

namespace kcast::synth {
namespace {

using kcast::testing::input_error_of;

// The repeated block's rows but a mixture of experts' router, which every tensor-parallel GPU runs whole.
bool in_layer(const Kernel& k) { return k.name.rfind("layer.", 0) == 0 && k.name.rfind("layer.moe.gate ", 0) != 0; }

// Sum of count x field over the rows of `cls` that `keep` selects.
template <class Keep>
double total(const std::vector<Kernel>& ks, KernelClass cls, double Kernel::*field, Keep keep) {
  double t = 0;
  for (const auto& k : ks)
    if (k.cls == cls && keep(k)) t += k.*field * k.count;
  return t;
}

double layer_total(const std::vector<Kernel>& ks, KernelClass cls, double Kernel::*field) {
  return total(ks, cls, field, in_layer);
}

SynthOptions gpt2_train(int64_t batch) { return testing::with_mode(Mode::train, batch, 1024); }

constexpr double L = 36, d = 1280, S = 1024;  // GPT-2 Large
const double layer_params = 12 * d * d + 13 * d;

TEST(SynthParallel, TensorParallelSplitsLayerGemmsAndAllReducesActivations) {
  SynthOptions o = gpt2_train(4);
  const auto one = synthesize("gpt2-large", o);
  o.tp = 4;
  const auto tp = synthesize("gpt2-large", o);
  // Heads (20 -> 5), MLP width and q/k/v/out widths split four ways: a quarter of every layer GEMM.
  const double one_gemm = layer_total(one, KernelClass::gemm, &Kernel::flops);
  EXPECT_NEAR(layer_total(tp, KernelClass::gemm, &Kernel::flops) * 4 / one_gemm, 1.0, 1e-12);
  // The layer norms run whole on every GPU.
  EXPECT_DOUBLE_EQ(layer_total(tp, KernelClass::normalization, &Kernel::bytes),
                   layer_total(one, KernelClass::normalization, &Kernel::bytes));
  // Four ring all-reduces of the [tokens, hidden] FP32 activation per layer (two forward, two
  // backward), each GPU sending 2 (4 - 1) / 4 of it; none on one GPU.
  const double T = 4 * S;
  EXPECT_DOUBLE_EQ(layer_total(tp, KernelClass::communication, &Kernel::bytes), L * 4 * 1.5 * T * d * 4);
  EXPECT_EQ(layer_total(one, KernelClass::communication, &Kernel::bytes), 0);
  // Inference: the two forward ones.
  o.mode = Mode::infer;
  EXPECT_DOUBLE_EQ(layer_total(synthesize("gpt2-large", o), KernelClass::communication, &Kernel::bytes),
                   L * 2 * 1.5 * T * d * 4);
}

TEST(SynthParallel, DataParallelRunsItsShareAndAllReducesEveryGradient) {
  SynthOptions o = gpt2_train(16);
  o.dp = 4;
  const auto dp = synthesize("gpt2-large", o);
  const auto share = synthesize("gpt2-large", gpt2_train(4));
  // Each replica computes what one GPU does with batch 16 / 4.
  auto all = [](const Kernel&) { return true; };
  EXPECT_DOUBLE_EQ(total(dp, KernelClass::gemm, &Kernel::flops, all),
                   total(share, KernelClass::gemm, &Kernel::flops, all));
  // Then all-reduces every FP32 gradient once: 2 (4 - 1) / 4 of 4 bytes per parameter, in DDP buckets.
  const double params = L * layer_params + (50257 + 1024) * d + 2 * d;
  EXPECT_NEAR(total(dp, KernelClass::communication, &Kernel::bytes, all) / (1.5 * 4 * params), 1.0, 1e-12);
  for (const auto& k : dp)
    if (k.cls == KernelClass::communication) {
      EXPECT_GT(k.count, 1) << k.name;  // 25 MiB buckets
    }
  // The optimizer step still covers every parameter.
  EXPECT_DOUBLE_EQ(total(dp, KernelClass::optimizer, &Kernel::bytes, all),
                   total(share, KernelClass::optimizer, &Kernel::bytes, all));
}

TEST(SynthParallel, PipelineFollowsTheScheduleCriticalPath) {
  SynthOptions o = gpt2_train(4);
  o.pp = 4;
  const auto one_micro = synthesize("gpt2-large", o);
  // One micro-batch crosses the four stages in turn: every layer once, as on one GPU.
  EXPECT_DOUBLE_EQ(layer_total(one_micro, KernelClass::gemm, &Kernel::flops),
                   layer_total(synthesize("gpt2-large", gpt2_train(4)), KernelClass::gemm, &Kernel::flops));
  // Three stage boundaries, activations forward and gradients back, T x d FP32 each.
  const double T = 4 * S;
  auto all = [](const Kernel&) { return true; };
  EXPECT_DOUBLE_EQ(total(one_micro, KernelClass::communication, &Kernel::bytes, all), 2 * 3 * T * d * 4);
  // The optimizer step is the last stage's: its 9 layers and the final norm (the head is tied to
  // the first stage's embedding); Adam moves 72 bytes per FP32 parameter.
  EXPECT_NEAR(total(one_micro, KernelClass::optimizer, &Kernel::bytes, all) / (72 * (9 * layer_params + 2 * d)), 1.0,
              1e-12);
  // Four micro-batches of one sequence: (4 + 4 - 1) micro-batch times of the stage's 9 layers.
  o.batch = 4;
  o.microbatches = 4;
  const auto four = synthesize("gpt2-large", o);
  SynthOptions single = gpt2_train(1);
  const double layer_flops_b1 = layer_total(synthesize("gpt2-large", single), KernelClass::gemm, &Kernel::flops);
  EXPECT_NEAR(layer_total(four, KernelClass::gemm, &Kernel::flops) / (layer_flops_b1 / L * 9 * 7), 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(total(four, KernelClass::communication, &Kernel::bytes, all), 2 * (4 + 4 - 2) * S * d * 4);
}

// Every transformer of the built-in table, in both modes and with both attention paths: two
// tensor-parallel GPUs each run half of every layer GEMM (heads, MLP and projections split evenly),
// and a two-stage pipeline with one micro-batch runs every layer once on its critical path. (The
// zoo's latent-attention and mixed-layout models do not split so: their q_a / kv_a run whole on
// every GPU, and --pp is refused for them.)
TEST(SynthParallel, EveryBuiltinTransformerSplitsEvenly) {
  for (const auto& [cfg, desc] : builtin_transformers()) {
    const BuiltinModel m{cfg.name, desc, true};
    for (Mode mode : {Mode::infer, Mode::train})
      for (AttentionImpl att : {AttentionImpl::eager, AttentionImpl::flash}) {
        SynthOptions o;
        o.mode = mode;
        o.attention = att;
        o.batch = 2;
        o.seq = 256;
        const double one = layer_total(synthesize(m.name, o), KernelClass::gemm, &Kernel::flops);
        o.tp = 2;
        const auto tp = synthesize(m.name, o);
        EXPECT_NEAR(2 * layer_total(tp, KernelClass::gemm, &Kernel::flops) / one, 1.0, 1e-9) << m.name;
        EXPECT_GT(layer_total(tp, KernelClass::communication, &Kernel::bytes), 0) << m.name;
        o.tp = 1;
        o.pp = 2;
        EXPECT_NEAR(layer_total(synthesize(m.name, o), KernelClass::gemm, &Kernel::flops) / one, 1.0, 1e-9) << m.name;
      }
  }
}

TEST(SynthParallel, ErrorsNameTheOption) {
  SynthOptions o = gpt2_train(4);
  o.tp = 3;  // GPT-2 Large has 20 heads
  EXPECT_NE(input_error_of([&] { synthesize("gpt2-large", o); }).find("'--tp': 3 does not divide the attention heads"),
            std::string::npos);
  o.tp = 1;
  o.pp = 40;  // more stages than the 36 layers (5 would split them 8, 7, 7, 7, 7)
  EXPECT_NE(input_error_of([&] { synthesize("gpt2-large", o); }).find("'--pp'"), std::string::npos);
  o.pp = 1;
  o.dp = 3;  // batch 4
  EXPECT_NE(input_error_of([&] { synthesize("gpt2-large", o); }).find("'--batch': the global batch 4"),
            std::string::npos);
  o.dp = 0;
  EXPECT_NE(input_error_of([&] { synthesize("gpt2-large", o); }).find("'--dp': must be at least 1"), std::string::npos);
  SynthOptions r;
  r.tp = 2;
  EXPECT_NE(input_error_of([&] { synthesize("resnet50", r); }).find("resnet50 takes --dp"), std::string::npos);
  r.tp = 1;
  r.dp = 2;
  r.batch = 64;
  r.mode = Mode::train;
  double comm = 0;
  for (const auto& k : synthesize("resnet50", r)) comm += k.cls == KernelClass::communication ? k.bytes * k.count : 0;
  EXPECT_GT(comm, 0);
}

TEST(SynthParallel, CliTakesTheDegreesAndRejectsBadOnes) {
  const std::string k = std::string(KCAST_BINARY) + " synth gpt2-large --mode train --batch 8 --seq 128 ";
  FILE* p = popen((k + "--tp 2 --pp 2 --dp 2 --microbatches 2").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  EXPECT_EQ(pclose(p), 0);
  for (const char* row : {"nccl:all_reduce (tensor parallel)", "nccl:send (pipeline activations)",
                          "nccl:all_reduce (DistributedDataParallel bucket)"})
    EXPECT_NE(out.find(row), std::string::npos) << row;
  for (const char* bad : {"--tp 0", "--pp 40", "--dp 3", "--microbatches -1"}) {
    const int rc = std::system((k + bad + " >/dev/null 2>&1").c_str());
    EXPECT_EQ(WEXITSTATUS(rc), 2) << bad;
  }
}

}  // namespace
}  // namespace kcast::synth
