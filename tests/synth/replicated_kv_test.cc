// More tensor-parallel GPUs than key/value heads at inference: each GPU holds a replica of one head,
// as vLLM and SGLang serve such models (Qwen3-235B-A22B, 4 KV heads, on 8 GPUs). Training, which splits
// the heads (Megatron-LM), still needs --tp to divide them.
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

TEST(ReplicatedKvHeads, EachGpuHoldsOneHeadsCacheAndProjection) {
  SynthOptions o = with_mode(Mode::decode, 64, 4096);
  o.attention = AttentionImpl::flash;
  o.tp = 8;
  Footprint f;
  const auto ks = synthesize("qwen3-235b-a22b", o, &f);
  // 94 layers x K, V x 64 sequences x 4096 keys x one head of 128 x 2 bytes.
  EXPECT_DOUBLE_EQ(f.kv_cache_bytes, 94 * 2 * 64 * 4096.0 * 128 * 2);
  const Kernel* kv = testing::find(ks, "layer.attn.k_proj|v_proj aten::mm");
  ASSERT_NE(kv, nullptr);
  EXPECT_EQ(kv->n, 128);  // one head's width, on every GPU
  SynthOptions train = with_mode(Mode::train, 8, 512);
  train.tp = 8;
  EXPECT_NE(input_error_of([&] { synthesize("qwen3-235b-a22b", train); }).find("training splits them"),
            std::string::npos);
  o.tp = 3;  // neither divides nor replicates
  EXPECT_THROW(synthesize("qwen3-235b-a22b", o), InputError);
}

}  // namespace
}  // namespace kcast::synth
