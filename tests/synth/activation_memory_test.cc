// The training step's activation estimate (Footprint::activation_bytes, transformer_synth.cc) against
// the closed forms of Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
// Models": a GPT layer with 16-bit activations keeps s b h (34 + 5 a s / h) bytes, and under t-way
// tensor parallelism s b h (10 + 24 / t + 5 a s / (h t)). One layer is the difference between a
// two-layer and a one-layer step, so the embeddings, head and loss drop out.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "model/error.h"
#include "predict/synth/synth.h"
#include "predict/synth/transformer_config.h"
#include "tests/synth/activation_layers.h"
#include "tests/synth/synth_options.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth {
namespace {

using testing::gpt_training;
using testing::gpt_with_fused_gelu;
using testing::one_layer;
using testing::with_mode;

TEST(ActivationMemory, GptLayerIsKorthikantisCount) {
  const TransformerConfig gpt = gpt_with_fused_gelu();
  const double s = 2048, b = 4, h = 2048, a = 16;
  SynthOptions o = gpt_training();
  // Plus the two LayerNorms' fp32 mean and rstd per token, which the paper leaves out.
  const double stats = 2 * 8 * s * b;
  EXPECT_DOUBLE_EQ(one_layer(gpt, o), s * b * h * (34 + 5 * a * s / h) + stats);
  for (int64_t t : {2, 4}) {
    o.tp = t;
    EXPECT_DOUBLE_EQ(one_layer(gpt, o), s * b * h * (10 + 24.0 / t + 5 * a * s / (h * t)) + stats) << "tp " << t;
  }
  // Sequence parallelism splits the rest too: s b h (34 / t + 5 a s / (h t)), the statistics as well.
  o.sequence_parallel = true;
  for (int64_t t : {2, 4}) {
    o.tp = t;
    EXPECT_DOUBLE_EQ(one_layer(gpt, o), s * b * h * (34.0 / t + 5 * a * s / (h * t)) + stats / t) << "sp " << t;
  }
  o.sequence_parallel = false;
  // FP32 activations double every tensor but the dropout masks (one byte per element: 2 s b h and
  // a s^2 b of the 34 s b h + 5 a s^2 b).
  o.tp = 1;
  o.dtype = DType::fp32;
  EXPECT_DOUBLE_EQ(one_layer(gpt, o), 2 * s * b * h * (34 + 5 * a * s / h) - s * b * (2 * h + a * s) + stats);
}

// FlashAttention keeps no scores: the 5 a s^2 b of the softmax output, its dropout mask and the
// dropped-out probabilities go, the kernel's fp32 log-sum-exp (a s b) comes.
TEST(ActivationMemory, FlashAttentionDropsTheScores) {
  const TransformerConfig gpt = gpt_with_fused_gelu();
  const double s = 2048, b = 4, a = 16;
  SynthOptions o = gpt_training();
  const double eager = one_layer(gpt, o);
  o.attention = AttentionImpl::flash;
  EXPECT_DOUBLE_EQ(eager - one_layer(gpt, o), 5 * a * s * s * b - 4 * a * s * b);
}

// HF's GPT-2 gelu_new runs op by op, and autograd keeps four of its tensors (x, tanh's output, 0.5 x,
// 1 + tanh) where the fused GELU keeps one: 3 s b F more per layer.
TEST(ActivationMemory, OpByOpGeluKeepsMoreTensors) {
  SynthOptions o = gpt_training();
  o.layers = 2;
  Footprint fused2, fused1, eager2, eager1;
  synthesize_transformer(with_overrides(gpt_with_fused_gelu(), o), o, &fused2);
  synthesize("gpt3-xl", o, &eager2);
  o.layers = 1;
  synthesize_transformer(with_overrides(gpt_with_fused_gelu(), o), o, &fused1);
  synthesize("gpt3-xl", o, &eager1);
  const double s = 2048, b = 4, F = 4 * 2048;
  EXPECT_DOUBLE_EQ((eager2.activation_bytes - eager1.activation_bytes) - (fused2.activation_bytes - fused1.activation_bytes),
                   3 * s * b * F * 2);
}

// A Llama layer in bf16 (HF eager): two RMSNorms (x in fp32, rstd, the normalized x), the
// projections' input, rotary's two products for q and k, q/k/v, the fp32 softmax and its bf16 cast,
// o_proj's input; the MLP's input and four tensors of the SwiGLU. No dropout.
TEST(ActivationMemory, LlamaLayerClosedForm) {
  SynthOptions o = with_mode(Mode::train, 2, 1024);
  const double T = 2 * 1024, d = 4096, F = 11008, e = 2, P = 2 * 32 * 1024.0 * 1024;
  const double rms = T * d * (4 + e) + 4 * T;
  const double attention = rms + T * d * e + 2 * T * (d + d) * e + 3 * T * d * e + P * 4 + P * e + T * d * e;
  const double mlp = rms + T * d * e + 4 * T * F * e;
  Footprint two, one;
  o.layers = 2;
  synthesize("llama2-7b", o, &two);
  o.layers = 1;
  synthesize("llama2-7b", o, &one);
  EXPECT_DOUBLE_EQ(two.activation_bytes - one.activation_bytes, attention + mlp);
  // The head: the final norm, the LM head's input, the loss's fp32 log-probabilities over the vocabulary.
  EXPECT_DOUBLE_EQ(one.activation_bytes - (attention + mlp), rms + T * d * e + T * 32000 * 4);
  o.loss = false;
  Footprint no_loss;
  synthesize("llama2-7b", o, &no_loss);
  EXPECT_DOUBLE_EQ(one.activation_bytes - no_loss.activation_bytes, T * 32000 * 4);
}

// The same layer as Megatron-LM with Transformer Engine runs it (--framework megatron, fused attention):
// a fused RMSNorm keeps its input and rstd, fused RoPE nothing, the fused SwiGLU the gate's and up's
// outputs; each projection keeps its input, under an FP8 recipe as the 1-byte column-wise copy (and
// out_proj's beside the attention output the fused attention keeps). Llama 3 8B at 8192 tokens:
// about 0.99 GB a layer with FP8, 1.81 GB as eager PyTorch keeps it. The fused cross-entropy writes
// the loss's gradient over the 16-bit logits in its forward: they are all it keeps, and its backward
// allocates nothing more.
TEST(ActivationMemory, MegatronLayerKeepsWhatTransformerEnginesKernelsKeep) {
  SynthOptions o = with_mode(Mode::train, 1, 8192);
  o.framework = Framework::megatron;
  o.attention = AttentionImpl::flash;
  const double T = 8192, d = 4096, kv = 1024, F = 14336, e = 2, H = 32, V = 128256;
  auto layer = [&](double g) {
    const double rms = T * d * e + 4 * T;
    const double attention = rms + T * d * g + T * (d + 2 * kv) * e + T * d * e + H * T * 4 + (g != e ? T * d * g : 0);
    const double mlp = rms + T * d * g + T * F * (2 * e + g);
    return attention + mlp;
  };
  auto activations = [&](int64_t layers, Footprint* f) {
    o.layers = layers;
    synthesize("llama3-8b", o, f);
    return f->activation_bytes;
  };
  Footprint two, one;
  EXPECT_DOUBLE_EQ(activations(2, &two) - activations(1, &one), layer(e));
  EXPECT_DOUBLE_EQ(one.loss_transient_bytes, 0);
  EXPECT_DOUBLE_EQ(one.activation_bytes - layer(e), (T * d * e + 4 * T) + T * d * e + T * V * e);
  o.dtype = DType::fp8;
  o.recipe = Recipe::delayed;
  EXPECT_DOUBLE_EQ(activations(2, &two) - activations(1, &one), layer(1));
  EXPECT_NEAR(layer(1), 0.99e9, 0.01e9);
  o.recipe = Recipe::mxfp8;
  EXPECT_DOUBLE_EQ(activations(2, &two) - activations(1, &one), layer(1 + 1.0 / 32));
  // Eager PyTorch on the same layer keeps 1.8x that.
  o.framework = Framework::eager;
  o.dtype = DType::bf16;
  o.recipe = Recipe::none;
  EXPECT_GT(activations(2, &two) - activations(1, &one), 1.8 * layer(1));
}

// torchtitan's per-op selective checkpointing (--framework torchtitan --recompute selective): a layer
// keeps its input, the outputs of the fused attention (and log-sum-exp) and of every other matmul
// (q, v, gate, down of q, k, v, out, gate, up, down); in backward the norms, rotary, SiLU, product,
// residual adds and the other matmuls (k, out, up) run again, the saved ones and attention do not.
TEST(ActivationMemory, TorchtitanOpSelectiveCheckpointing) {
  SynthOptions o = with_mode(Mode::train, 2, 8192);
  o.framework = Framework::torchtitan;
  o.attention = AttentionImpl::flash;
  o.selective_recompute = true;
  const double T = 2 * 8192, d = 4096, kv = 1024, F = 14336, e = 2, H = 32;
  const double saved = (T * d + T * d + T * kv + T * F + T * d + T * d) * e + H * T * 4;
  Footprint two, one;
  o.layers = 2;
  const std::vector<Kernel> ks = synthesize("llama3-8b", o, &two);
  o.layers = 1;
  synthesize("llama3-8b", o, &one);
  EXPECT_DOUBLE_EQ(two.activation_bytes - one.activation_bytes, saved);
  EXPECT_NEAR(saved, 1.04e9, 0.01e9);
  // What runs again, per layer (the layer section's count is its 2 layers).
  auto again = [&](const std::string& fwd) {
    const Kernel* k = testing::find(ks, "layer." + fwd + " (recompute)");
    return k ? k->count / 2 : 0.0;
  };
  EXPECT_EQ(again("attn.k_proj|v_proj aten::mm"), 1);  // k, not v
  EXPECT_EQ(again("attn.out_proj aten::mm"), 1);
  EXPECT_EQ(again("mlp.gate_proj|up_proj aten::mm"), 1);  // up, not gate
  EXPECT_EQ(again("attn.q_proj aten::mm"), 0);
  EXPECT_EQ(again("mlp.down_proj aten::mm"), 0);
  EXPECT_EQ(again("attn.flash aten::_scaled_dot_product_flash_attention"), 0);
  EXPECT_EQ(again("mlp.act aten::silu"), 1);
  EXPECT_EQ(again("input_norm aten::pow"), 1);
  // A mixture is refused (its experts' grouped matmuls are not aten::mm).
  EXPECT_THROW(synthesize("qwen3-30b-a3b", o, &one), InputError);
}

// Only training keeps activations (inference reports one layer's transient peak instead, far less:
// tests/synth/inference_memory_test.cc); pipeline stages hold their share of the layers (the last
// stage's figure: one micro-batch in flight), data parallelism and micro-batches shrink the batch each
// holds.
TEST(ActivationMemory, ScopeFollowsModeAndParallelism) {
  Footprint f, train;
  synthesize("llama3-8b", with_mode(Mode::train, 8, 1024), &train);
  EXPECT_FALSE(train.activations_transient);
  synthesize("llama3-8b", with_mode(Mode::infer, 8, 1024), &f);
  EXPECT_TRUE(f.activations_transient);
  EXPECT_LT(f.activation_bytes, train.activation_bytes / 10);
  SynthOptions o = with_mode(Mode::train, 8, 1024);
  Footprint whole, dp, mb, pp;
  synthesize("llama3-8b", o, &whole);
  o.dp = 2;
  synthesize("llama3-8b", o, &dp);
  o.dp = 1;
  o.microbatches = 2;
  synthesize("llama3-8b", o, &mb);
  EXPECT_DOUBLE_EQ(dp.activation_bytes, whole.activation_bytes / 2);
  EXPECT_DOUBLE_EQ(mb.activation_bytes, whole.activation_bytes / 2);
  o.microbatches = 1;
  o.pp = 2;
  synthesize("llama3-8b", o, &pp);
  EXPECT_LT(pp.activation_bytes, 0.6 * whole.activation_bytes);
  EXPECT_GT(pp.activation_bytes, 0.5 * whole.activation_bytes);  // half the layers, all of the head
  EXPECT_EQ(whole.first_stage_activation_bytes, 0);
  // The first of the two stages: its layers for min(micro-batches, stages) micro-batches, no head
  // (Llama's embeddings keep nothing); the last: its layers and the head (final norm, LM head input,
  // fp32 log-probabilities over 128256 tokens).
  const double T = 8 * 1024, d = 4096, head = T * d * (4 + 2) + 4 * T + T * d * 2 + T * 128256 * 4;
  EXPECT_DOUBLE_EQ(pp.first_stage_activation_bytes + head, pp.activation_bytes);
  o.microbatches = 4;
  o.batch = 32;  // the same micro-batch of 8
  Footprint pp4;
  synthesize("llama3-8b", o, &pp4);
  EXPECT_DOUBLE_EQ(pp4.first_stage_activation_bytes, 2 * pp.first_stage_activation_bytes);
  EXPECT_DOUBLE_EQ(pp4.activation_bytes, pp.activation_bytes);
  EXPECT_DOUBLE_EQ(whole.total_bytes(), whole.weight_bytes + whole.gradient_bytes + whole.optimizer_bytes +
                                            whole.activation_bytes + whole.loss_transient_bytes);
}

// The loss's backward over the vocabulary allocates the fp32 gradients of the log-probabilities and
// of the logits together: 8 bytes per logit, beside the kept activations (Llama 3 8B, 1 x 1024 tokens,
// 128256 logits each; an eighth of the vocabulary per GPU under --tp 8; nothing without a loss).
TEST(ActivationMemory, TheLossBackwardsTransientGradients) {
  Footprint f;
  SynthOptions o = with_mode(Mode::train, 1, 1024);
  synthesize("llama3-8b", o, &f);
  EXPECT_DOUBLE_EQ(f.loss_transient_bytes, 8 * 1024.0 * 128256);
  o.tp = 8;
  synthesize("llama3-8b", o, &f);
  EXPECT_DOUBLE_EQ(f.loss_transient_bytes, 8 * 1024.0 * (128256 / 8));
  o.tp = 1;
  o.loss = false;
  synthesize("llama3-8b", o, &f);
  EXPECT_DOUBLE_EQ(f.loss_transient_bytes, 0);
  synthesize("llama3-8b", with_mode(Mode::infer, 1, 1024), &f);
  EXPECT_DOUBLE_EQ(f.loss_transient_bytes, 0);
}

// Full recomputation: a layer keeps only its input (2 s b h bytes in 16 bits), so one more layer
// adds that; the layer being recomputed holds its whole activations once.
TEST(ActivationMemory, FullRecomputationKeepsEachLayersInput) {
  const TransformerConfig gpt = gpt_with_fused_gelu();
  const double s = 2048, b = 4, h = 2048;
  SynthOptions o = gpt_training();
  const double layer = one_layer(gpt, o);
  o.recompute = true;
  EXPECT_DOUBLE_EQ(one_layer(gpt, o), s * b * h * 2);
  Footprint with, without;
  o.layers = 3;
  synthesize_transformer(with_overrides(gpt, o), o, &with);
  o.recompute = false;
  synthesize_transformer(with_overrides(gpt, o), o, &without);
  EXPECT_DOUBLE_EQ(without.activation_bytes - with.activation_bytes, 2 * layer - 3 * s * b * h * 2);
}

// The time side: each layer's forward rows run once more before its backward, named "(recompute)",
// with the same work and count; nothing else changes.
TEST(ActivationMemory, FullRecomputationRerunsEachLayersForward) {
  SynthOptions o = with_mode(Mode::train, 2, 512);
  const auto plain = synthesize("llama3-8b", o);
  o.recompute = true;
  const auto re = synthesize("llama3-8b", o);
  const auto infer = synthesize("llama3-8b", with_mode(Mode::infer, 2, 512));
  size_t layer_rows = 0;
  for (const Kernel& k : infer) layer_rows += k.name.rfind("layer.", 0) == 0;
  const std::vector<std::string> recomputed = testing::recomputed_rows(plain, re);
  for (const std::string& name : recomputed) EXPECT_EQ(name.rfind("layer.", 0), 0u) << name;
  EXPECT_EQ(recomputed.size(), layer_rows);  // llama has no dropout: training's forward rows are inference's
  EXPECT_EQ(re.size(), plain.size() + recomputed.size());
  // Full or selective, recomputation is of transformer training.
  for (bool selective : {false, true}) {
    SynthOptions bad = with_mode(Mode::infer, 2, 512);
    bad.recompute = !selective;
    bad.selective_recompute = selective;
    EXPECT_THROW(synthesize("llama3-8b", bad), InputError);
    bad.mode = Mode::train;
    bad.seq = 0;
    EXPECT_THROW(synthesize("resnet50", bad), InputError);
  }
}

}  // namespace
}  // namespace kcast::synth
