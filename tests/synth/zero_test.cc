// ZeRO / FSDP sharding of a training step over its data-parallel replicas (SynthOptions::zero): what
// each stage shards in memory, and the collectives that replace DDP's gradient all-reduce.
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
using testing::bus_bytes;
using testing::with_mode;

SynthOptions data_parallel(int zero, int64_t dp = 8) {
  SynthOptions o = with_mode(Mode::train, 8, 512);
  o.dp = dp;
  o.zero = zero;
  return o;
}

TEST(Zero, EachStageShardsOneMoreKindOfState) {
  Footprint f[4];
  for (int z = 0; z < 4; ++z) synthesize("llama3-8b", data_parallel(z), &f[z]);
  const double P = f[0].params, e = 2;  // bf16
  EXPECT_DOUBLE_EQ(f[0].optimizer_bytes, 2 * P * e);
  EXPECT_DOUBLE_EQ(f[1].optimizer_bytes, 2 * P * e / 8);
  EXPECT_DOUBLE_EQ(f[1].gradient_bytes, P * e);
  EXPECT_DOUBLE_EQ(f[2].gradient_bytes, P * e / 8);
  EXPECT_DOUBLE_EQ(f[2].weight_bytes, P * e);
  // ZeRO-3 holds an eighth of the weights, plus two whole sections gathered at a time (the largest:
  // the head's 128256 x 4096 LM head and its final norm's 4096).
  EXPECT_DOUBLE_EQ(f[3].weight_bytes, P * e / 8 + 2 * (128256.0 * 4096 + 4096) * e);
  for (int z = 0; z < 4; ++z) EXPECT_DOUBLE_EQ(f[z].activation_bytes, f[0].activation_bytes) << z;
}

// ZeRO-1/2: a reduce-scatter of the gradients and an all-gather of the updated parameters move what
// DDP's all-reduce moves, and the optimizer touches one replica's shard.
TEST(Zero, ShardedOptimizerSplitsTheAllReduce) {
  const auto ddp = synthesize("llama3-8b", data_parallel(0));
  const auto z1 = synthesize("llama3-8b", data_parallel(1));
  const double all_reduce = bus_bytes(ddp, "nccl:all_reduce (DistributedDataParallel");
  ASSERT_GT(all_reduce, 0);
  EXPECT_EQ(bus_bytes(z1, "nccl:all_reduce (DistributedDataParallel"), 0);
  const double rs = bus_bytes(z1, "dp.zero nccl:reduce_scatter"), ag = bus_bytes(z1, "dp.zero nccl:all_gather");
  EXPECT_NEAR(rs / all_reduce, 0.5, 1e-12);
  EXPECT_NEAR(ag / all_reduce, 0.5, 1e-12);
  EXPECT_NEAR(bus_bytes(z1, "optimizer.adam") / bus_bytes(ddp, "optimizer.adam"), 1.0 / 8, 1e-3);
  // ZeRO-2 keeps no whole gradients: with four micro-batches it reduce-scatters four times.
  SynthOptions o = data_parallel(2);
  o.microbatches = 4;
  o.batch = 32;
  const auto z2 = synthesize("llama3-8b", o);
  EXPECT_NEAR(bus_bytes(z2, "dp.zero nccl:reduce_scatter") / rs, 4, 1e-12);
  EXPECT_NEAR(bus_bytes(z2, "dp.zero nccl:all_gather") / ag, 1, 1e-12);
}

// ZeRO-3 / FSDP: every section all-gathers its parameters before its forward and before its
// backward and reduce-scatters its gradients: 2 (n - 1) / n and (n - 1) / n of the parameter bytes
// in a one-micro-batch step; no step-end collectives.
TEST(Zero, FullShardingGathersEverySectionTwice) {
  const auto z3 = synthesize("llama3-8b", data_parallel(3));
  Footprint f;
  synthesize("llama3-8b", data_parallel(0), &f);
  const double bytes = f.params * 2, share = 7.0 / 8;
  EXPECT_NEAR(bus_bytes(z3, "fsdp nccl:all_gather") / (2 * share * bytes), 1.0, 1e-12);
  EXPECT_NEAR(bus_bytes(z3, "fsdp nccl:reduce_scatter") / (share * bytes), 1.0, 1e-12);
  EXPECT_EQ(bus_bytes(z3, "dp."), 0);
  EXPECT_GT(bus_bytes(z3, "layer.fsdp nccl:all_gather"), 0);
  // With pipeline stages the last one holds no embedding: it gathers none.
  SynthOptions o = data_parallel(3);
  o.pp = 2;
  const auto last = synthesize("llama3-8b", o);
  EXPECT_EQ(bus_bytes(last, "embed.fsdp"), 0);
  EXPECT_GT(bus_bytes(last, "head.fsdp"), 0);
}

TEST(Zero, BadUsesNameTheOption) {
  SynthOptions o = data_parallel(1, 1);
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", o); }).find("'--zero'"), std::string::npos);
  o = data_parallel(4);
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", o); }).find("'--zero'"), std::string::npos);
  o = data_parallel(2);
  o.mode = Mode::infer;
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", o); }).find("'--zero'"), std::string::npos);
  // A CNN shards like any other model.
  SynthOptions cnn = data_parallel(3);
  cnn.seq = 0;
  Footprint r;
  synthesize("resnet50", cnn, &r);
  EXPECT_LT(r.optimizer_bytes, 2 * r.params * 4 / 7);
}

}  // namespace
}  // namespace kcast::synth
