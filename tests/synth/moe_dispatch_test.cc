// Expert-parallel dispatchers (--moe-dispatcher), expert tensor parallelism (--etp), Megatron-Core's
// MoE kernels and its EP overlap (--moe-a2a-overlap): the bytes per token in closed form, the rows
// Megatron launches, and what the step waits for.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/error.h"
#include "predict/cli/synth_step_parts.h"
#include "predict/synth/synth.h"
#include "predict/synth/transformer/moe_dispatch.h"
#include "tests/input_error_of.h"
#include "tests/synth/synth_options.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth {
namespace {

using kcast::testing::input_error_of;
using testing::find;
using testing::megatron_ep8;
using testing::row;
using testing::total;
using testing::with_mode;
using transformer::dispatch_bytes;
using transformer::DispatchShape;
using transformer::expected_bins_hit;

// Mixtral 8x7B: hidden 4096, 32 layers, 8 experts, top-2.
constexpr double d = 4096, L = 32;

TEST(MoeDispatch, ExpectedGpusHitByTopK) {
  // 8 experts on 4 GPUs (2 each), 2 picks: a GPU is missed with probability 6/8 x 5/7.
  EXPECT_NEAR(expected_bins_hit(8, 2, 4), 4 * (1 - 6.0 / 8 * 5.0 / 7), 1e-12);
  // One pick hits one GPU; as many picks as experts hit all of them; one GPU is always hit.
  EXPECT_NEAR(expected_bins_hit(256, 1, 32), 1, 1e-12);
  EXPECT_NEAR(expected_bins_hit(8, 8, 4), 4, 1e-12);
  EXPECT_EQ(expected_bins_hit(8, 2, 1), 1);
}

TEST(MoeDispatch, BytesPerTokenInClosedForm) {
  DispatchShape s;
  s.tokens = 100;
  s.hidden = 10;
  s.elem_bytes = 2;
  s.experts = 8;
  s.k = 2;
  s.ep = 4;
  s.per_node = 2;  // two nodes of two GPUs
  const double row = 10 * 2;
  // NCCL all-to-all: k rows a token, 3/4 of them to other GPUs, 2/4 to the other node.
  auto a = dispatch_bytes(MoeDispatcher::alltoall, s);
  EXPECT_NEAR(a.link, 100 * 2 * row * 3 / 4, 1e-9);
  EXPECT_NEAR(a.net, 100 * 2 * row * 2 / 4, 1e-9);
  // DeepEP: once per other GPU holding one of the token's experts, once per other node holding one.
  auto e = dispatch_bytes(MoeDispatcher::deepep, s);
  EXPECT_NEAR(e.link, 100 * row * 4 * (1 - 6.0 / 8 * 5.0 / 7) * 3 / 4, 1e-9);
  EXPECT_NEAR(e.net, 100 * row * 2 * (1 - 4.0 / 8 * 3.0 / 7) / 2, 1e-9);
  EXPECT_LT(e.net, a.net);  // a token whose two experts share a node crosses the network once
  EXPECT_EQ(dispatch_bytes(MoeDispatcher::hybridep, s).net, e.net);
  // All-gather: every other GPU's tokens, k aside; a ring leaves each node through 2 NICs.
  auto g = dispatch_bytes(MoeDispatcher::allgather, s);
  EXPECT_NEAR(g.link, 100 * row * 3, 1e-9);
  EXPECT_NEAR(g.net, 100 * row * 3 / 2, 1e-9);
  // Within one node nothing crosses the network.
  s.per_node = 8;
  EXPECT_EQ(dispatch_bytes(MoeDispatcher::deepep, s).net, 0);
  EXPECT_EQ(dispatch_bytes(MoeDispatcher::alltoall, s).net, 0);
  // DeepSeek-V3's node-limited routing: 8 of 256 experts within 4 of 8 groups, a group a node.
  s.experts = 256;
  s.k = 8;
  s.ep = 64;
  s.per_node = 8;
  s.groups = 8;
  s.topk_groups = 4;
  const double limited = dispatch_bytes(MoeDispatcher::deepep, s).net;
  EXPECT_NEAR(limited, 100 * row * 4 * 7.0 / 8, 1e-9);  // exactly 4 groups: 4 nodes, 7/8 of them others
  s.groups = 0;
  EXPECT_LT(limited, dispatch_bytes(MoeDispatcher::deepep, s).net);
}

TEST(MoeDispatch, TheOptionNamesItsChoices) {
  EXPECT_EQ(transformer::moe_dispatcher_option("hybridep"), MoeDispatcher::hybridep);
  EXPECT_NE(input_error_of([] { transformer::moe_dispatcher_option("nccl"); })
                .find("option '--moe-dispatcher': 'nccl' is not one of alltoall, deepep, hybridep, allgather"),
            std::string::npos);
}


TEST(MoeDispatch, MegatronRunsTransformerEnginesPermutationsAndTheChosenDispatcher) {
  SynthOptions o = megatron_ep8();
  const auto a2a = synthesize("mixtral-8x7b", o);
  // Fused router and permutations, no Hugging Face loop.
  EXPECT_NE(find(a2a, "layer.moe.router te::fused_topk_with_score_function"), nullptr);
  EXPECT_NE(find(a2a, "layer.moe.permute te::moe_permute"), nullptr);
  EXPECT_NE(find(a2a, "layer.moe.unpermute te::moe_unpermute"), nullptr);
  EXPECT_EQ(find(a2a, "layer.moe.experts aten::index_add_"), nullptr);
  // One local expert: nothing to sort after the dispatch.
  EXPECT_EQ(find(a2a, "layer.moe.experts te::moe_sort_chunks_by_index"), nullptr);
  // 2048 tokens a GPU, 2 picks each: four exchanges a layer of 7/8 of the 4096 rows.
  EXPECT_NEAR(total(a2a, "nccl:all_to_all (expert parallel", &Kernel::bytes), 4 * L * 4096 * d * 2 * 7.0 / 8, 1);
  o.moe_dispatcher = MoeDispatcher::deepep;
  const auto dee = synthesize("mixtral-8x7b", o);
  EXPECT_EQ(total(dee, "all_to_all", &Kernel::bytes), 0);
  EXPECT_NEAR(total(dee, "deepep:", &Kernel::bytes), 4 * L * 2048 * d * 2 * expected_bins_hit(8, 2, 8) * 7.0 / 8, 1);
  EXPECT_NE(find(dee, "layer.moe.dispatch deepep:dispatch (expert parallel)"), nullptr);
  EXPECT_NE(find(dee, "layer.moe.combine deepep:combine (expert parallel, backward)"), nullptr);
  o.moe_dispatcher = MoeDispatcher::allgather;
  const auto ag = synthesize("mixtral-8x7b", o);
  EXPECT_NEAR(total(ag, "nccl:all_gather (expert parallel", &Kernel::bytes), 2 * L * 2048 * d * 2 * 7, 1);
  EXPECT_NEAR(total(ag, "nccl:reduce_scatter (expert parallel", &Kernel::bytes), 2 * L * 2048 * d * 2 * 7, 1);
  // The dispatcher moves bytes only: the experts' FLOPs are the same.
  EXPECT_DOUBLE_EQ(total(a2a, "moe.experts", &Kernel::flops), total(dee, "moe.experts", &Kernel::flops));
}

TEST(MoeDispatch, ExpertTensorParallelismOneFoldsWhereEpDividesDp) {
  SynthOptions o = megatron_ep8();
  o.tp = 2;
  o.sequence_parallel = true;
  o.batch = 32;
  // ep 8 divides dp 8: by default each expert is split over the two tensor-parallel GPUs.
  const auto split = synthesize("mixtral-8x7b", o);
  const Kernel* s = find(split, "layer.moe.experts.down_proj aten::mm");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->k, 14336 / 2);
  o.etp = 1;
  const auto whole = synthesize("mixtral-8x7b", o);
  const Kernel* w = find(whole, "layer.moe.experts.down_proj aten::mm");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->k, 14336);
  EXPECT_EQ(w->m, s->m / 2);  // this GPU's sequence-parallel half of the tokens
  // The same expert FLOPs per GPU either way (half the tokens on twice the width).
  EXPECT_NEAR(total(whole, "moe.experts", &Kernel::flops) / total(split, "moe.experts", &Kernel::flops), 1, 1e-9);
  o.etp = 4;
  EXPECT_NE(input_error_of([&] { synthesize("mixtral-8x7b", o); }).find("option '--etp': 4 is neither 1"),
            std::string::npos);
  o.etp = 1;
  o.framework = Framework::eager;
  o.moe_a2a_overlap = true;
  EXPECT_NE(input_error_of([&] { synthesize("mixtral-8x7b", o); }).find("option '--moe-a2a-overlap'"),
            std::string::npos);
}

// Megatron-Core's conditions for its EP overlap (TransformerConfig): expert parallelism, a dispatcher
// that exchanges by all-to-all, an interleaved schedule under pipeline stages, no full recomputation.
// Each broken one is refused naming the option and what to change; the layouts that keep them run.
TEST(MoeDispatch, TheEpOverlapKeepsMegatronCoresConditions) {
  SynthOptions o = megatron_ep8();
  o.moe_a2a_overlap = true;
  EXPECT_NO_THROW(synthesize("mixtral-8x7b", o));
  auto refused = [&](SynthOptions bad, const std::string& says) {
    const std::string e = input_error_of([&] { synthesize("mixtral-8x7b", bad); });
    EXPECT_NE(e.find("option '--moe-a2a-overlap'"), std::string::npos) << e;
    EXPECT_NE(e.find(says), std::string::npos) << e;
  };
  SynthOptions no_ep = o;
  no_ep.ep = 1;
  refused(no_ep, "--ep 2 or more");
  SynthOptions gather = o;
  gather.moe_dispatcher = MoeDispatcher::allgather;
  refused(gather, "--moe-dispatcher alltoall, deepep or hybridep");
  SynthOptions stages = o;  // 2 stages of 4 data-parallel GPUs, 2 micro-batches each
  stages.pp = 2;
  stages.dp = 4;
  stages.ep = 4;
  stages.microbatches = 2;
  refused(stages, "--virtual-stages 2 or more");
  stages.virtual_stages = 2;
  EXPECT_NO_THROW(synthesize("mixtral-8x7b", stages));
  SynthOptions full = o;
  full.recompute = true;
  refused(full, "drop --recompute full");
  full.recompute = false;
  full.selective_recompute = true;  // selective recomputation stays legal
  EXPECT_NO_THROW(synthesize("mixtral-8x7b", full));
}

// Context parallelism with expert parallelism: each GPU routes its seq / cp tokens, the expert-parallel
// group drawn from the data x context-parallel GPUs. 8 GPUs as dp 4 x cp 2 over sequences of 2048 hold
// the same 2048 tokens a GPU as dp 8 over sequences of 1024: the same expert GEMMs and exchanges.
TEST(MoeDispatch, ContextParallelRanksJoinTheExpertParallelGroup) {
  SynthOptions flat = megatron_ep8();
  SynthOptions ctx = flat;
  ctx.dp = 4;
  ctx.cp = 2;
  ctx.batch = 8;
  ctx.seq = 2048;
  const auto a = synthesize("mixtral-8x7b", flat);
  const auto b = synthesize("mixtral-8x7b", ctx);
  EXPECT_DOUBLE_EQ(total(a, "moe.experts", &Kernel::flops), total(b, "moe.experts", &Kernel::flops));
  EXPECT_DOUBLE_EQ(total(a, "(expert parallel", &Kernel::bytes), total(b, "(expert parallel", &Kernel::bytes));
  EXPECT_NE(find(b, "layer.attn.cp nccl:send_recv (context-parallel K|V ring)"), nullptr);
  // Eight experts over dp 2 x cp 2 = 4 GPUs, or tp x dp x cp: refused, naming the option.
  ctx.dp = 2;
  ctx.batch = 4;
  EXPECT_NE(input_error_of([&] { synthesize("mixtral-8x7b", ctx); }).find("option '--ep': 8 expert-parallel GPUs divide neither the 4 data x context-parallel GPUs"),
            std::string::npos);
}

// An attention GEMM, an expert GEMM and the exchange between them (4, 2 and 10 µs below).
std::vector<Kernel> exchange_rows() {
  return {row("layer.attn.qkv te::gemm (fprop)", KernelClass::gemm),
          row("layer.moe.experts.up te::gemm (fprop)", KernelClass::gemm),
          row("layer.moe.dispatch nccl:all_to_all (expert parallel)", KernelClass::communication)};
}

TEST(MoeDispatch, OverlapHidesTheExchangeBehindTheLayersCompute) {
  const std::vector<Kernel> rows = exchange_rows();
  const std::vector<double> us = {4, 2, 10};
  SynthOptions o = megatron_ep8();
  Footprint fp;
  const auto plain = cli::step_parts(rows, us, o, fp);
  EXPECT_DOUBLE_EQ(plain.exposed_expert_comm_us, 10);
  EXPECT_DOUBLE_EQ(plain.expert_compute_us, 2);
  EXPECT_DOUBLE_EQ(plain.step_us, 16);
  o.moe_a2a_overlap = true;
  const auto hidden = cli::step_parts(rows, us, o, fp);
  EXPECT_DOUBLE_EQ(hidden.exposed_expert_comm_us, 10 - 6);
  EXPECT_DOUBLE_EQ(hidden.step_us, 10);
}

// What runs hidden holds SMs: the exchange's 6 hidden µs cost the compute beside it the dispatcher's
// SMs over the GPU's (NCCL 16, DeepEP 20, HybridEP 16 of 132); exposed time costs nothing more, a
// collective nothing hides costs nothing more, and the step stays between max(compute, comm) and
// compute + comm. Without an SM count nothing is charged (the overlap as before).
TEST(MoeDispatch, HiddenExchangesHoldTheirDispatchersSms) {
  const std::vector<Kernel> rows = exchange_rows();
  const std::vector<double> us = {4, 2, 10};
  SynthOptions o = megatron_ep8();
  Footprint fp;
  EXPECT_DOUBLE_EQ(cli::step_parts(rows, us, o, fp, {}, 132).overlap_slowdown_us, 0);  // nothing hidden
  o.moe_a2a_overlap = true;
  EXPECT_DOUBLE_EQ(cli::step_parts(rows, us, o, fp).overlap_slowdown_us, 0);
  for (const auto& [d, sms] : {std::pair{MoeDispatcher::alltoall, 16.0}, {MoeDispatcher::deepep, 20.0},
                               {MoeDispatcher::hybridep, 16.0}}) {
    o.moe_dispatcher = d;
    const auto p = cli::step_parts(rows, us, o, fp, {}, 132);
    EXPECT_DOUBLE_EQ(p.overlap_slowdown_us, 6 * sms / 132) << to_string(d);
    EXPECT_DOUBLE_EQ(p.step_us, 10 + 6 * sms / 132) << to_string(d);
    EXPECT_GE(p.step_us, std::max(p.compute_us, p.comm_us));
    EXPECT_LE(p.step_us, p.compute_us + p.comm_us);
  }
}

// DeepEP's buffers, as csrc/config.hpp sizes them for deep_ep/buffer.py's configs (20 SMs: 10 channels;
// a receive slot holds the row, an 8-byte source record and 128 top-k indices, weights and scales):
// inside a node (8 GPUs) the NVLink buffer alone; over 4 nodes (32) an RDMA one besides, at the larger
// of the dispatch and combine configs (combine's 20-token sends round its 128 receive slots up to 140).
TEST(MoeDispatch, DeepEpBuffersFollowItsSizeHints) {
  using transformer::dispatch_buffer_bytes;
  const double row = 7168 * 2, slot = row + 8 + 128 * (8 + 4 + 4);
  EXPECT_DOUBLE_EQ(dispatch_buffer_bytes(MoeDispatcher::deepep, 8, row), 10 * 8 * 5 * 4 + 10 * 8 * 256 * slot);
  const double nvl = 10 * 8 * 11 * 4 + 10 * 8 * 288 * slot;
  const double rdma = 10 * 4 * 18 * 2 * 4 + 10 * 4 * 140 * 2 * (slot + 16) + 1048576;
  EXPECT_DOUBLE_EQ(dispatch_buffer_bytes(MoeDispatcher::deepep, 32, row), nvl + rdma);
  EXPECT_EQ(dispatch_buffer_bytes(MoeDispatcher::alltoall, 32, row), 0);
  EXPECT_EQ(dispatch_buffer_bytes(MoeDispatcher::deepep, 1, row), 0);
  // The step's memory counts them with DeepEP, not with NCCL's all-to-all.
  SynthOptions o = with_mode(Mode::train, 16, 1024);
  o.dp = 8, o.ep = 8, o.microbatches = 2, o.dtype = DType::bf16, o.attention = AttentionImpl::flash;
  o.framework = Framework::megatron;
  Footprint nccl, deepep;
  synthesize("mixtral-8x7b", o, &nccl);
  o.moe_dispatcher = MoeDispatcher::deepep;
  synthesize("mixtral-8x7b", o, &deepep);
  EXPECT_DOUBLE_EQ(nccl.dispatch_buffer_bytes, 0);
  EXPECT_DOUBLE_EQ(deepep.dispatch_buffer_bytes, dispatch_buffer_bytes(MoeDispatcher::deepep, 8, d * 2));
  EXPECT_DOUBLE_EQ(deepep.total_bytes() - nccl.total_bytes(), deepep.dispatch_buffer_bytes);
}

}  // namespace
}  // namespace kcast::synth
