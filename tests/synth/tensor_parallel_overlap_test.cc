// Megatron's tensor-parallel overlap (predict/cli/synth_step_parts.cc): Transformer Engine's userbuffers
// run each sequence-parallel collective behind one GEMM, so what a collective outlasts its own GEMM is
// waited for however long the other GEMMs run; and under a training recipe its all-gathers carry the
// quantized tensors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "predict/cli/synth_step_parts.h"
#include "predict/synth/synth.h"
#include "predict/synth/transformer/recipe.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth {
namespace {

using testing::row;

constexpr KernelClass kComm = KernelClass::communication, kGemm = KernelClass::gemm;

// One attention block's rows in synth's order, forward then backward, with a vocabulary-parallel
// exchange and the head's GEMM after them. Each collective's partner, and what of it is exposed:
//   qkv input all-gather 5 behind the qkv GEMM 3 (ring exchange)                        2
//   out_proj reduce-scatter 4 behind the out_proj GEMM 10 (pipeline)                   0
//   out_proj gradient all-gather 6 behind the out_proj data-gradient GEMM 2             4
//   input-gradient reduce-scatter 3 behind the qkv weight-gradient GEMM 1 (bulk)          2
//   the input's second all-gather 5 behind the qkv data-gradient GEMM 8 (bulk)            0
//   the head's all-reduce 7, paired with nothing, behind the head's GEMM 20               0
TEST(TensorParallelOverlap, EachCollectiveHidesBehindItsOwnGemm) {
  const std::vector<Kernel> rows = {
      row("layer.attn.input nccl:all_gather (sequence parallel)", kComm),
      row("layer.attn.qkv_proj te::gemm (fprop)", kGemm),
      row("layer.attn.out_proj te::gemm (fprop)", kGemm),
      row("layer.attn.out_proj nccl:reduce_scatter (sequence parallel)", kComm),
      row("layer.attn.out_proj nccl:all_gather (sequence parallel)", kComm),
      row("layer.attn.out_proj te::gemm (dgrad)", kGemm),
      row("layer.attn.qkv_proj te::gemm (dgrad)", kGemm),
      row("layer.attn.qkv_proj te::gemm (wgrad)", kGemm),
      row("layer.attn.input nccl:reduce_scatter (sequence parallel)", kComm),
      row("layer.attn.input nccl:all_gather (input again) (sequence parallel)", kComm),
      row("head.vocab nccl:all_reduce (tensor parallel)", kComm),
      row("head.lm_head aten::mm", kGemm)};
  const std::vector<double> us = {5, 3, 10, 4, 6, 2, 8, 1, 3, 5, 7, 20};
  SynthOptions o;
  o.mode = Mode::train;
  o.framework = Framework::megatron;
  o.tp = 2;
  o.sequence_parallel = true;
  Footprint fp;
  fp.forward_rows = 4;
  const cli::StepParts p = cli::step_parts(rows, us, o, fp);
  EXPECT_DOUBLE_EQ(p.comm_us, 5 + 4 + 6 + 3 + 5 + 7);
  EXPECT_DOUBLE_EQ(p.exposed_comm_us, 2 + 4 + 2);  // all of it hid behind the 44 µs of GEMMs before
  EXPECT_DOUBLE_EQ(p.step_us, p.compute_us + 8);
  EXPECT_GE(p.step_us, std::max(p.compute_us, p.comm_us));
  EXPECT_LE(p.step_us, p.compute_us + p.comm_us);
  // Eager PyTorch overlaps nothing.
  o.framework = Framework::eager;
  EXPECT_DOUBLE_EQ(cli::step_parts(rows, us, o, fp).exposed_comm_us, p.comm_us);
}

double bytes_of(const std::vector<Kernel>& ks, const std::string& name) {
  for (const Kernel& k : ks)
    if (k.name == name) return k.bytes;
  ADD_FAILURE() << "no row " << name;
  return 0;
}

// Under a recipe a block projection's all-gathers carry one quantized copy and its scales (FP8 1 byte
// an element, MXFP8 1 + 1/32, NVFP4 1/2 + 1/16); its reduce-scatters, and the head's all-gather, stay
// BF16. Without a recipe every exchange is BF16.
TEST(TensorParallelOverlap, RecipesGatherTheQuantizedTensors) {
  SynthOptions o;
  o.mode = Mode::train;
  o.framework = Framework::megatron;
  o.attention = AttentionImpl::flash;
  o.batch = 4;
  o.seq = 128;
  o.layers = 2, o.hidden = 256, o.heads = 4, o.kv_heads = 2, o.ffn = 512, o.vocab = 1000;
  o.tp = 2;
  o.sequence_parallel = true;
  o.master_weights = true;
  o.dtype = DType::bf16;
  const auto plain = synthesize("llama3-8b", o);
  const std::string gather = "layer.attn.input nccl:all_gather (sequence parallel)",
                    scatter = "layer.attn.input nccl:reduce_scatter (sequence parallel)",
                    grad_gather = "layer.mlp.down_proj nccl:all_gather (sequence parallel)",
                    head = "head.lm_head.input nccl:all_gather (sequence parallel)";
  const double bf16 = bytes_of(plain, gather);
  ASSERT_GT(bf16, 0);
  EXPECT_DOUBLE_EQ(bytes_of(plain, scatter), bf16);
  for (const auto& [recipe, per_elem] : {std::pair{Recipe::delayed, 1.0}, {Recipe::mxfp8, 1 + 1.0 / 32},
                                         {Recipe::nvfp4, 0.5 + 1.0 / 16}}) {
    o.recipe = recipe;
    o.dtype = recipe == Recipe::nvfp4 ? DType::fp4 : DType::fp8;
    const auto narrow = synthesize("llama3-8b", o);
    EXPECT_NEAR(bytes_of(narrow, gather), bf16 * per_elem / 2, 1e-6 * bf16) << int(recipe);
    EXPECT_NEAR(bytes_of(narrow, grad_gather), bf16 * per_elem / 2, 1e-6 * bf16) << int(recipe);
    EXPECT_DOUBLE_EQ(bytes_of(narrow, scatter), bf16) << int(recipe);
    EXPECT_DOUBLE_EQ(bytes_of(narrow, head), bf16) << int(recipe);
  }
}

}  // namespace
}  // namespace kcast::synth
