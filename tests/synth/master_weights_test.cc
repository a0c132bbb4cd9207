// `--master-weights` (SynthOptions::master_weights): mixed-precision training with fp32 master weights
// beside the 16-bit ones. Memory against the closed forms of Rajbhandari et al. 2020 ("ZeRO: Memory
// Optimizations Toward Training Trillion Parameter Models", section 3.1 and figure 1): mixed-precision
// Adam holds 2 + 2 + K bytes per parameter with K = 12 (fp32 weights, momentum, variance); over N_d
// replicas, stage 1 leaves 4 + K / N_d, stage 2 2 + (2 + K) / N_d, stage 3 (4 + K) / N_d.
#include <gtest/gtest.h>

#include <string>

#include "model/error.h"
#include "predict/synth/synth.h"
#include "tests/input_error_of.h"
#include "tests/synth/synth_options.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth {
namespace {

using kcast::testing::input_error_of;
using testing::with_mode;

SynthOptions mixed(int zero = 0, int64_t dp = 1) {
  SynthOptions o = with_mode(Mode::train, 64, 512);
  o.master_weights = true;
  o.dp = dp;
  o.zero = zero;
  return o;
}

TEST(MasterWeights, ZeroPapersBytesPerParameter) {
  Footprint f[4];
  synthesize("llama3-8b", mixed(), &f[0]);
  const double P = f[0].params, Nd = 64, K = 12;
  EXPECT_DOUBLE_EQ(f[0].weight_bytes + f[0].gradient_bytes + f[0].optimizer_bytes, (2 + 2 + K) * P);
  for (int z = 1; z < 4; ++z) synthesize("llama3-8b", mixed(z, 64), &f[z]);
  EXPECT_DOUBLE_EQ(f[1].weight_bytes + f[1].gradient_bytes + f[1].optimizer_bytes, (2 + 2 + K / Nd) * P);
  EXPECT_DOUBLE_EQ(f[2].weight_bytes + f[2].gradient_bytes + f[2].optimizer_bytes, (2 + (2 + K) / Nd) * P);
  // Stage 3 shards the weights too, plus the two whole sections FSDP holds gathered at a time (the
  // largest: the LM head's 128256 x 4096 and the final norm's 4096, in bf16).
  EXPECT_DOUBLE_EQ(f[3].gradient_bytes + f[3].optimizer_bytes, (2 + K) / Nd * P);
  EXPECT_DOUBLE_EQ(f[3].weight_bytes, 2 / Nd * P + 2 * (128256.0 * 4096 + 4096) * 2);
  // SGD without momentum keeps the fp32 master copy alone.
  SynthOptions sgd = mixed();
  sgd.optimizer = Optimizer::sgd;
  Footprint s;
  synthesize("llama3-8b", sgd, &s);
  EXPECT_DOUBLE_EQ(s.optimizer_bytes, 4 * P);
}

// The step's optimizer rows: the 16-bit gradients cast to fp32 (2 + 4 bytes per parameter), Adam's
// 18 fp32 tensor passes (72 bytes), the updated master weights cast back (4 + 2), every other row as
// without master weights.
TEST(MasterWeights, TheOptimizerStepsTheFp32Copy) {
  Footprint f;
  const auto plain = synthesize("llama3-8b", with_mode(Mode::train, 64, 512));
  const auto mixed_step = synthesize("llama3-8b", mixed(), &f);
  auto optimizer_bytes = [](const std::vector<Kernel>& ks, const std::string& part) {
    double b = 0;
    for (const Kernel& k : ks)
      if (k.cls == KernelClass::optimizer && k.name.find(part) != std::string::npos) b += k.count * k.bytes;
    return b;
  };
  const double P = f.params;
  EXPECT_DOUBLE_EQ(optimizer_bytes(mixed_step, "(gradients to fp32)"), 6 * P);
  EXPECT_DOUBLE_EQ(optimizer_bytes(mixed_step, "(fp32 master to weights)"), 6 * P);
  EXPECT_DOUBLE_EQ(optimizer_bytes(mixed_step, ""), (6 + 72 + 6) * P);
  EXPECT_DOUBLE_EQ(optimizer_bytes(plain, ""), 36 * P);  // the same passes in bf16
  size_t other_rows = 0;
  for (const Kernel& k : mixed_step) other_rows += k.cls != KernelClass::optimizer;
  size_t plain_other = 0;
  for (const Kernel& k : plain) plain_other += k.cls != KernelClass::optimizer;
  EXPECT_EQ(other_rows, plain_other);
}

// torch.optim.AdamW: Adam's passes after a decoupled weight decay (p.mul_: one read, one write per
// parameter), the same state as Adam.
TEST(MasterWeights, AdamWDecaysTheWeightsFirst) {
  auto optimizer_bytes = [](const std::vector<Kernel>& ks) {
    double b = 0;
    for (const Kernel& k : ks) b += k.cls == KernelClass::optimizer ? k.count * k.bytes : 0;
    return b;
  };
  SynthOptions o = with_mode(Mode::train, 64, 512);
  Footprint adam, adamw;
  const double a = optimizer_bytes(synthesize("llama3-8b", o, &adam));
  o.optimizer = Optimizer::adamw;
  const auto ks = synthesize("llama3-8b", o, &adamw);
  EXPECT_DOUBLE_EQ(optimizer_bytes(ks) - a, 2 * 2 * adam.params);  // bf16
  EXPECT_DOUBLE_EQ(adamw.optimizer_bytes, adam.optimizer_bytes);
  EXPECT_NE(testing::find(ks, "optimizer.adamw aten::_foreach_mul_ (decoupled weight decay)"), nullptr);
}

TEST(MasterWeights, OnlySixteenBitTraining) {
  SynthOptions o = mixed();
  o.dtype = DType::fp32;
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", o); }).find("'--master-weights'"), std::string::npos);
  o = mixed();
  o.mode = Mode::infer;
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", o); }).find("'--master-weights'"), std::string::npos);
  o = mixed();
  o.seq = 0;
  o.batch = 8;
  o.dtype = DType::fp16;
  EXPECT_FALSE(synthesize("resnet50", o).empty());  // a CNN in fp16 with fp32 masters
}

}  // namespace
}  // namespace kcast::synth
