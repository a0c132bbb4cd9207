// Tests of `kcast synth`: FLOP totals against closed forms worked out by hand, parameter counts
// against published sizes, every built-in in every mode and dtype, HF config reading and errors.
#include "predict/synth/synth.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "io/kernel_list_csv.h"
#include "model/error.h"
#include "predict/synth/transformer_config.h"
#include "tests/input_error_of.h"
#include "tests/synth/synth_options.h"
#include "tests/synth/synth_rows.h"

namespace kcast::synth {
namespace {

using kcast::testing::input_error_of;
using testing::find;
using testing::with_mode;
using testing::write_temp;

double total_flops(const std::vector<Kernel>& ks, std::initializer_list<KernelClass> classes) {
  double f = 0;
  for (const auto& k : ks)
    for (auto c : classes)
      if (k.cls == c) f += k.flops * k.count;
  return f;
}

TEST(SynthConfig, BuiltinParameterCountsMatchPublished) {
  struct Case {
    const char* name;
    double published;
    double tol;
  };
  // Published sizes: BERT-Large 335M, GPT-2 Large 774M, Llama 2 7B 6.74B, Llama 3 8B 8.03B,
  // OPT-1.3B 1.3B, GPT-3 XL 1.3B, GPT-3 2.7B 2.7B (the GPT-3 paper's rounded sizes).
  for (const Case& c : {Case{"bert-large", 335e6, 0.01}, Case{"gpt2-large", 774e6, 0.005},
                        Case{"llama2-7b", 6.74e9, 0.005}, Case{"llama3-8b", 8.03e9, 0.005},
                        Case{"opt-1.3b", 1.3e9, 0.02}, Case{"gpt3-xl", 1.3e9, 0.02}, Case{"gpt3-2.7b", 2.7e9, 0.03}}) {
    const TransformerConfig* cfg = find_builtin_transformer(c.name);
    ASSERT_NE(cfg, nullptr) << c.name;
    EXPECT_NEAR(cfg->parameter_count() / c.published, 1.0, c.tol) << c.name << " " << cfg->parameter_count();
  }
  // Exact by hand: GPT-2 Large = 36 * (12 d^2 + 13 d) + (50257 + 1024) d + 2 d, d = 1280.
  const double d = 1280;
  EXPECT_DOUBLE_EQ(find_builtin_transformer("gpt2-large")->parameter_count(),
                   36 * (12 * d * d + 13 * d) + (50257 + 1024) * d + 2 * d);
}

TEST(SynthTransformer, DecoderTrainingGemmFlopsAreSixTimesParamsTimesTokens) {
  SynthOptions o;
  o.mode = Mode::train;
  o.batch = 2;
  o.seq = 1024;
  const auto ks = synthesize("gpt2-large", o);
  const double L = 36, d = 1280, V = 50257, T = 2 * 1024.0, S = 1024, B = 2;
  // Weight GEMMs: 12 d^2 per layer plus the (tied) LM head, 6 flops per weight per token
  // (forward 2, data grad 2, weight grad 2); attention: QK^T and PV are 2*S*S*d each per sequence
  // and layer forward, times 3 with backward.
  const double weights = L * 12 * d * d + d * V;
  const double expected = 6 * weights * T + 12 * L * B * S * S * d;
  EXPECT_NEAR(total_flops(ks, {KernelClass::gemm}) / expected, 1.0, 1e-3);
  // The usual shorthand 6 * parameters * tokens (+ attention) holds within a percent.
  const double params = find_builtin_transformer("gpt2-large")->parameter_count();
  EXPECT_NEAR(total_flops(ks, {KernelClass::gemm}) / (6 * params * T + 12 * L * B * S * S * d), 1.0, 0.01);
}

TEST(SynthTransformer, InferenceGemmFlopsAreTwiceParamsTimesTokens) {
  SynthOptions o;
  o.seq = 2048;
  const auto ks = synthesize("llama3-8b", o);
  const double L = 32, d = 4096, kvd = 1024, F = 14336, V = 128256, T = 2048, S = 2048;
  const double weights = L * (2 * d * d + 2 * d * kvd + 3 * d * F) + d * V;
  const double expected = 2 * weights * T + 4 * L * S * S * d;
  // The rotary cos/sin product is a tiny extra GEMM.
  EXPECT_NEAR(total_flops(ks, {KernelClass::gemm}) / expected, 1.0, 1e-3);
  const Kernel* qk = find(ks, "layer.attn.qk aten::bmm (QK^T)");
  ASSERT_NE(qk, nullptr);
  EXPECT_EQ(qk->batch, 32);
  EXPECT_EQ(qk->m, 2048);
  EXPECT_EQ(qk->n, 2048);
  EXPECT_EQ(qk->k, 128);
  EXPECT_EQ(qk->count, 32);
  EXPECT_EQ(qk->dtype, DType::bf16);  // llama default
}

// Quantized serving: the same GEMM work as BF16 (2 x params x tokens plus attention), but the blocks'
// projections are narrow GEMMs, each after a quantization of its BF16 input (one per projection
// launch); attention, norms, embeddings and the LM head stay BF16. FP8 quantizes per token in two
// passes (5 bytes per element); NVFP4 in one (the BF16 read, 4-bit values and an 8-bit scale per 16
// written), and its GEMM operands take 0.5625 bytes per element.
TEST(SynthTransformer, QuantizedInferenceQuantizesEachBlockProjection) {
  struct Case {
    DType dtype;
    const char *quantize, *gemm;
    double quant_bytes_per_elem, operand_bytes;
  };
  for (const Case& c : {Case{DType::fp8, "per_token_quant_fp8", "fp8_scaled_mm", 5, 1},
                        Case{DType::fp4, "scaled_fp4_quant", "cutlass_scaled_fp4_mm", 2 + 0.5 + 1.0 / 16, 0.5625}}) {
    SCOPED_TRACE(to_string(c.dtype));
    SynthOptions o;
    o.seq = 2048;
    const auto bf = synthesize("llama3-8b", o);
    o.dtype = c.dtype;
    const auto ks = synthesize("llama3-8b", o);
    EXPECT_NEAR(total_flops(ks, {KernelClass::gemm}) / total_flops(bf, {KernelClass::gemm}), 1.0, 1e-12);
    const double L = 32, d = 4096, kvd = 1024, F = 14336, T = 2048;
    double narrow_flops = 0, quant_launches = 0, quant_bytes = 0;
    for (const auto& k : ks) {
      EXPECT_TRUE(k.dtype == c.dtype || k.dtype == DType::bf16 || k.dtype == DType::fp32) << k.name;
      if (k.dtype == c.dtype) {
        EXPECT_EQ(k.cls, KernelClass::gemm) << k.name;
        EXPECT_EQ(k.name.rfind("layer.", 0), 0u) << k.name;
        EXPECT_NE(k.name.find(c.gemm), std::string::npos) << k.name;
        narrow_flops += k.flops * k.count;
      }
      if (k.name.find(c.quantize) != std::string::npos) {
        EXPECT_EQ(k.dtype, DType::bf16) << k.name;
        quant_launches += k.count;
        quant_bytes += k.bytes * k.count;
      }
    }
    EXPECT_NEAR(narrow_flops / (2 * T * L * (2 * d * d + 2 * d * kvd + 3 * d * F)), 1.0, 1e-12);
    // q, k, v, o, gate, up, down: seven launches per layer; inputs d wide except down_proj's F.
    EXPECT_DOUBLE_EQ(quant_launches, 7 * L);
    EXPECT_NEAR(quant_bytes / (L * (6 * T * d + T * F) * c.quant_bytes_per_elem), 1.0, 1e-3);
    // q_proj's operands: its narrow weight and input, a BF16 output.
    const Kernel* q = find(ks, std::string("layer.attn.q_proj ") + c.gemm);
    ASSERT_NE(q, nullptr);
    EXPECT_DOUBLE_EQ(q->bytes, (T * d + d * d) * c.operand_bytes + T * d * 2);
    for (const char* bf16 : {"layer.attn.qk aten::bmm (QK^T)", "head.lm_head aten::mm"}) {
      const Kernel* k = find(ks, bf16);
      ASSERT_NE(k, nullptr) << bf16;
      EXPECT_EQ(k->dtype, DType::bf16) << bf16;
    }
  }
}

TEST(SynthTransformer, LinearShapesAndBackwardGemms) {
  SynthOptions o;
  o.mode = Mode::train;
  o.batch = 4;
  o.seq = 512;
  const auto ks = synthesize("bert-large", o);
  const Kernel* fwd = find(ks, "layer.mlp.fc1 aten::addmm");
  const Kernel* dgrad = find(ks, "layer.mlp.fc1 aten::mm (dgrad)");
  const Kernel* wgrad = find(ks, "layer.mlp.fc1 aten::mm (wgrad)");
  ASSERT_TRUE(fwd && dgrad && wgrad);
  EXPECT_EQ(std::vector<int64_t>({fwd->m, fwd->n, fwd->k}), std::vector<int64_t>({2048, 4096, 1024}));
  EXPECT_EQ(std::vector<int64_t>({dgrad->m, dgrad->n, dgrad->k}), std::vector<int64_t>({2048, 1024, 4096}));
  EXPECT_EQ(std::vector<int64_t>({wgrad->m, wgrad->n, wgrad->k}), std::vector<int64_t>({4096, 1024, 2048}));
  EXPECT_EQ(fwd->count, 24);
  // Training adds dropout, softmax backward, norm backward, embedding backward, the loss.
  for (const char* name : {"layer.attn.dropout aten::native_dropout", "layer.attn.softmax aten::_softmax_backward_data",
                           "layer.mlp.LayerNorm aten::native_layer_norm_backward (input)",
                           "embed.word_embeddings aten::embedding_dense_backward",
                           "loss.mlm aten::_log_softmax", "layer.mlp.act aten::gelu_backward"})
    EXPECT_NE(find(ks, name), nullptr) << name;
  // Inference launches no dropout and no backward.
  o.mode = Mode::infer;
  for (const auto& k : synthesize("bert-large", o)) {
    EXPECT_EQ(k.name.find("dropout"), std::string::npos) << k.name;
    EXPECT_EQ(k.name.find("backward"), std::string::npos) << k.name;
  }
}

TEST(SynthTransformer, ElementwiseBytesFollowTheTensors) {
  SynthOptions o;
  o.batch = 8;
  o.seq = 512;
  const auto ks = synthesize("bert-large", o);
  const Kernel* add = find(ks, "layer.attn.residual aten::add");
  ASSERT_NE(add, nullptr);
  const double T = 8 * 512 * 1024.0;
  EXPECT_DOUBLE_EQ(add->bytes, 12 * T);  // fp32: read two, write one
  const Kernel* ln = find(ks, "layer.attn.LayerNorm aten::native_layer_norm");
  ASSERT_NE(ln, nullptr);
  // Reads x, writes y (fp32), plus the weight and bias and the fp32 mean and rstd of each row.
  EXPECT_GE(ln->bytes, 8 * T);
  EXPECT_LE(ln->bytes, 8 * T + 2 * 1024 * 4 + 2 * 8 * 512 * 4 * 2);
  EXPECT_EQ(ln->cls, KernelClass::normalization);
  const Kernel* sm = find(ks, "layer.attn.softmax aten::_softmax");
  ASSERT_NE(sm, nullptr);
  EXPECT_DOUBLE_EQ(sm->bytes, 8.0 * 8 * 16 * 512 * 512);
}

TEST(SynthTransformer, HeadSplitCopiesVanishAtBatchOneForward) {
  // matmul can view [1,H,S,hd] as [H,S,hd]; with B > 1 it copies q, k and v; the backward copies.
  SynthOptions o;
  o.mode = Mode::train;
  o.seq = 1024;
  o.batch = 1;
  auto ks = synthesize("gpt2-large", o);
  EXPECT_EQ(find(ks, "layer.attn.split_heads aten::copy_"), nullptr);
  ASSERT_NE(find(ks, "layer.attn.split_heads aten::copy_ (backward)"), nullptr);
  EXPECT_EQ(find(ks, "layer.attn.split_heads aten::copy_ (backward)")->count, 3 * 36);
  o.batch = 2;
  ks = synthesize("gpt2-large", o);
  ASSERT_NE(find(ks, "layer.attn.split_heads aten::copy_"), nullptr);
  EXPECT_EQ(find(ks, "layer.attn.split_heads aten::copy_")->bytes, 2 * 2 * 1024 * 1280 * 4.0);
}

TEST(SynthTransformer, FlashAttentionIsOneRowPerLayer) {
  SynthOptions o;
  o.mode = Mode::train;
  o.attention = AttentionImpl::flash;
  o.seq = 4096;
  const auto ks = synthesize("llama2-7b", o);
  const Kernel* fa = find(ks, "layer.attn.flash aten::_scaled_dot_product_flash_attention");
  ASSERT_NE(fa, nullptr);
  // 4 * B * heads * S^2 * head_dim, halved by the causal mask.
  EXPECT_DOUBLE_EQ(fa->flops, 4.0 * 32 * 4096.0 * 4096 * 128 / 2);
  EXPECT_EQ(fa->cls, KernelClass::attention);
  EXPECT_EQ(fa->count, 32);
  EXPECT_NE(find(ks, "layer.attn.flash aten::_scaled_dot_product_flash_attention_backward"), nullptr);
  EXPECT_EQ(find(ks, "layer.attn.qk aten::bmm (QK^T)"), nullptr);
  EXPECT_EQ(find(ks, "layer.attn.softmax aten::_softmax (fp32)"), nullptr);
}

TEST(SynthTransformer, LayerOverrideReproducesASmallerModel) {
  SynthOptions o;
  o.layers = 2;
  o.hidden = 3072;
  o.heads = 24;
  o.ffn = 12288;
  o.seq = 2048;
  const auto ks = synthesize("gpt3-xl", o);
  const Kernel* qkv = find(ks, "layer.attn.c_attn aten::addmm");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->count, 2);
  EXPECT_EQ(qkv->n, 3 * 3072);
  const Kernel* qk = find(ks, "layer.attn.qk aten::bmm (QK^T)");
  ASSERT_NE(qk, nullptr);
  EXPECT_EQ(qk->k, 128);
}

// One decode step: every weight GEMM runs once per new token (m = batch), attention reads the
// whole KV cache: QK^T and PV are 2 * Sk * d flops per token and layer each.
TEST(SynthTransformer, DecodeStepGemmFlopsAreTwiceParamsPerTokenPlusCacheAttention) {
  SynthOptions o = with_mode(Mode::decode, 8, 4096);
  const auto ks = synthesize("llama3-8b", o);
  const double L = 32, d = 4096, kvd = 1024, F = 14336, V = 128256, B = 8, Sk = 4096;
  const double weights = L * (2 * d * d + 2 * d * kvd + 3 * d * F) + d * V;
  EXPECT_NEAR(total_flops(ks, {KernelClass::gemm}) / (2 * weights * B + 4 * L * B * Sk * d), 1.0, 1e-3);
  const Kernel* qk = find(ks, "layer.attn.qk aten::bmm (QK^T)");
  ASSERT_NE(qk, nullptr);
  EXPECT_EQ(qk->batch, 8 * 32);
  EXPECT_EQ(qk->m, 1);
  EXPECT_EQ(qk->n, 4096);
  EXPECT_EQ(qk->k, 128);
  const Kernel* q = find(ks, "layer.attn.q_proj aten::mm");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->m, 8);
  // Grouped-query attention in eager mode expands the whole cache to the 32 heads, twice (K, V).
  const Kernel* rep = find(ks, "layer.attn.repeat_kv aten::clone");
  ASSERT_NE(rep, nullptr);
  EXPECT_DOUBLE_EQ(rep->bytes, (B * Sk * kvd + B * Sk * d) * 2);
  // Flash decoding reads K and V of the cache once: 2 x B x Sk x kvd BF16 values, plus q, o, LSE.
  o.attention = AttentionImpl::flash;
  const auto flash = synthesize("llama3-8b", o);
  const Kernel* fa = find(flash, "layer.attn.flash aten::_scaled_dot_product_flash_attention");
  ASSERT_NE(fa, nullptr);
  EXPECT_NEAR(fa->bytes / (2 * B * Sk * kvd * 2), 1.0, 0.01);
  EXPECT_DOUBLE_EQ(fa->flops, 4 * B * 32 * Sk * 128);  // no causal halving for one query
  o.attention = AttentionImpl::eager;
  EXPECT_NE(input_error_of([&] { synthesize("bert-large", o); }).find("'--mode': decode"), std::string::npos);
  EXPECT_NE(input_error_of([&] { synthesize("resnet50", o); }).find("'--mode'"), std::string::npos);
}

TEST(SynthTransformer, AdamIsForeachKernelsOverAllParameters) {
  SynthOptions o;
  o.mode = Mode::train;
  o.seq = 128;
  const auto ks = synthesize("gpt2-large", o);
  double bytes = 0;
  int rows = 0;
  for (const auto& k : ks)
    if (k.cls == KernelClass::optimizer) {
      bytes += k.bytes * k.count;
      ++rows;
      EXPECT_GE(k.count, 1);
    }
  EXPECT_EQ(rows, 7);
  // 18 fp32 tensor passes per parameter (lerp 3, mul 2, addcmul 3, sqrt 2, div 2, add 2, addcdiv 4).
  EXPECT_NEAR(bytes / (72 * find_builtin_transformer("gpt2-large")->parameter_count()), 1.0, 1e-9);
  o.optimizer = Optimizer::sgd;
  int sgd = 0;
  for (const auto& k : synthesize("gpt2-large", o)) sgd += k.cls == KernelClass::optimizer;
  EXPECT_EQ(sgd, 1);
}

TEST(SynthTransformer, MultiTensorLaunchesFollowChunking) {
  const int64_t chunk = 65536;
  EXPECT_EQ(multi_tensor_launches({320 * chunk}, 64), 1);
  EXPECT_EQ(multi_tensor_launches({320 * chunk + 1}, 64), 2);
  EXPECT_EQ(multi_tensor_launches(std::vector<int64_t>(111, 10), 110), 2);
  EXPECT_EQ(multi_tensor_launches({}, 110), 0);
}

TEST(SynthTransformer, EveryBuiltinInEveryModeAndDtype) {
  for (const auto& m : builtin_models()) {
    for (Mode mode : {Mode::infer, Mode::train, Mode::decode})
      for (DType dt : {DType::fp32, DType::tf32, DType::fp16, DType::bf16, DType::fp8, DType::fp4})
        for (AttentionImpl att : {AttentionImpl::eager, AttentionImpl::flash}) {
          if (!m.transformer && att == AttentionImpl::flash) continue;
          // Decoding is for decoders (BERT and the ResNets are rejected, tested below).
          if (mode == Mode::decode && (!m.transformer || m.name == "bert-large")) continue;
          // FP8 and FP4 are transformer serving: inference only (training and CNNs are rejected, tested below).
          if ((dt == DType::fp8 || dt == DType::fp4) && (mode == Mode::train || !m.transformer)) continue;
          SynthOptions o;
          o.mode = mode;
          o.dtype = dt;
          o.attention = att;
          o.batch = 2;
          if (m.transformer) o.seq = 256;
          const auto ks = synthesize(m.name, o);
          ASSERT_FALSE(ks.empty()) << m.name;
          for (const auto& k : ks) {
            ASSERT_FALSE(k.name.empty());
            EXPECT_TRUE(known(k.flops) && k.flops >= 0) << m.name << " " << k.name;
            EXPECT_TRUE(known(k.bytes) && k.bytes > 0) << m.name << " " << k.name;
            EXPECT_GE(k.count, 1) << k.name;
            if (k.cls == KernelClass::gemm || k.cls == KernelClass::conv) {
              EXPECT_TRUE(k.has_shape()) << k.name;
            } else {
              EXPECT_NE(k.dtype, DType::tf32) << k.name;  // tf32 is a GEMM math mode only
            }
          }
          // Round trip through the kernel-list CSV.
          std::ostringstream csv;
          write_kernel_list(ks, csv);
          const auto back = parse_kernel_list(csv.str(), "synth.csv", {});
          ASSERT_EQ(back.size(), ks.size());
          EXPECT_NEAR(total_flops(back, {KernelClass::gemm, KernelClass::conv}),
                      total_flops(ks, {KernelClass::gemm, KernelClass::conv}),
                      1e-6 * total_flops(ks, {KernelClass::gemm, KernelClass::conv}));
        }
  }
}

TEST(SynthResNet, ForwardFlopsMatchTorchvision) {
  SynthOptions o;
  const auto ks = synthesize("resnet50", o);
  // torchvision lists ResNet-50 at 4.09 GMACs per 224x224 image = 8.18 GFLOP (FMA = 2).
  EXPECT_NEAR(total_flops(ks, {KernelClass::conv, KernelClass::gemm}) / 8.18e9, 1.0, 0.01);
  const Kernel* stem = find(ks, "stem.conv1 aten::cudnn_convolution");
  ASSERT_NE(stem, nullptr);
  EXPECT_EQ(stem->cls, KernelClass::conv);
  EXPECT_EQ(std::vector<int64_t>({stem->m, stem->n, stem->k}), std::vector<int64_t>({112 * 112, 64, 3 * 7 * 7}));
  const Kernel* rep = find(ks, "layer3.1-5.conv2 aten::cudnn_convolution");
  ASSERT_NE(rep, nullptr);
  EXPECT_EQ(rep->count, 5);
}

TEST(SynthResNet, TrainingIsThreeForwardsLessTheStemDataGradient) {
  SynthOptions o;
  o.batch = 8;
  const double fwd = total_flops(synthesize("resnet50", o), {KernelClass::conv});
  o.mode = Mode::train;
  const auto ks = synthesize("resnet50", o);
  const double stem = 2.0 * 8 * 112 * 112 * 64 * 3 * 7 * 7;
  EXPECT_NEAR(total_flops(ks, {KernelClass::conv}) / (3 * fwd - stem), 1.0, 1e-9);
  // Parameters, from the Adam lerp row (3 fp32 tensors per parameter): 25,557,032.
  const Kernel* lerp = find(ks, "optimizer.adam aten::_foreach_lerp_ (exp_avg)");
  ASSERT_NE(lerp, nullptr);
  EXPECT_NEAR(lerp->bytes * lerp->count / 12, 25557032, 1);
  EXPECT_NE(find(ks, "stem.bn1 aten::cudnn_batch_norm_backward"), nullptr);
  EXPECT_NE(find(ks, "stem.relu aten::threshold_backward"), nullptr);
}

TEST(SynthResNet, FamilyMatchesTorchvisionFlopsAndParameters) {
  // torchvision's published GMACs per 224x224 image (FMA = 2 FLOPs) and parameter counts.
  struct Ref {
    const char* name;
    double gmacs, params;
  };
  for (const Ref& r : {Ref{"resnet18", 1.81, 11689512}, Ref{"resnet34", 3.66, 21797672},
                       Ref{"resnet101", 7.80, 44549160}, Ref{"resnet152", 11.51, 60192808}}) {
    SynthOptions o;
    EXPECT_NEAR(total_flops(synthesize(r.name, o), {KernelClass::conv, KernelClass::gemm}) / (2e9 * r.gmacs), 1.0, 0.01)
        << r.name;
    o.mode = Mode::train;
    const auto ks = synthesize(r.name, o);
    const Kernel* lerp = find(ks, "optimizer.adam aten::_foreach_lerp_ (exp_avg)");
    ASSERT_NE(lerp, nullptr) << r.name;
    EXPECT_NEAR(lerp->bytes * lerp->count / 12, r.params, 1) << r.name;
  }
}

TEST(SynthResNet, BasicBlocksDownsampleOnlyWhereTheShapeChanges) {
  SynthOptions o;
  const auto ks = synthesize("resnet18", o);
  // Stage 1 keeps 64 channels at stride 1: no downsample; stages 2-4 halve the resolution.
  EXPECT_EQ(find(ks, "layer1.0.downsample.0 aten::cudnn_convolution"), nullptr);
  const Kernel* ds = find(ks, "layer2.0.downsample.0 aten::cudnn_convolution");
  ASSERT_NE(ds, nullptr);
  EXPECT_EQ(std::vector<int64_t>({ds->m, ds->n, ds->k}), std::vector<int64_t>({28 * 28, 128, 64}));
  // Two 3x3 convs per block, no third; the second block of a stage of two is `.1.`, count 1.
  const Kernel* c2 = find(ks, "layer4.1.conv2 aten::cudnn_convolution");
  ASSERT_NE(c2, nullptr);
  EXPECT_EQ(std::vector<int64_t>({c2->m, c2->n, c2->k, int64_t(c2->count)}),
            std::vector<int64_t>({7 * 7, 512, 512 * 9, 1}));
  EXPECT_EQ(find(ks, "layer4.1.conv3 aten::cudnn_convolution"), nullptr);
  o.seq = 128;  // the error names the model it refuses
  EXPECT_NE(input_error_of([&] { synthesize("resnet152", o); }).find("resnet152"), std::string::npos);
}

TEST(SynthConfigFile, ReadsHuggingFaceConfigs) {
  const std::string gpt2 = write_temp("gpt2.json", R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12,
      "n_head": 12, "n_inner": null, "vocab_size": 50257, "n_positions": 1024,
      "activation_function": "gelu_new", "resid_pdrop": 0.1})");
  const TransformerConfig c = read_hf_config(gpt2);
  EXPECT_EQ(c.ffn, 3072);
  EXPECT_EQ(c.act, Activation::gelu_new);
  EXPECT_NEAR(c.parameter_count(), 124439808, 1);  // GPT-2 small
  const std::string mistral = write_temp("mistral.json", R"({"model_type": "mistral", "hidden_size": 4096,
      "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
      "vocab_size": 32000, "max_position_embeddings": 32768, "hidden_act": "silu", "rms_norm_eps": 1e-5,
      "tie_word_embeddings": false})");
  const TransformerConfig m = read_hf_config(mistral);
  EXPECT_EQ(m.family, Family::llama);
  EXPECT_EQ(m.norm, NormKind::rms);
  EXPECT_TRUE(m.gated_mlp);
  EXPECT_NEAR(m.parameter_count() / 7.24e9, 1.0, 0.005);  // Mistral 7B
  SynthOptions o;
  o.seq = 512;
  const auto ks = synthesize_config_file(mistral, o);
  const Kernel* k = find(ks, "layer.attn.k_proj|v_proj aten::mm");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->n, 1024);
  std::filesystem::remove(gpt2);
  std::filesystem::remove(mistral);
}

TEST(SynthConfigFile, ErrorsNameFileAndKey) {
  auto err = [](const std::string& json) {
    const std::string p = write_temp("bad.json", json);
    const std::string e = input_error_of([&] { read_hf_config(p); });
    std::filesystem::remove(p);
    return std::make_pair(p, e);
  };
  auto [p1, e1] = err(R"({"hidden_size": "big", "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10})");
  EXPECT_NE(e1.find(p1 + ": key 'hidden_size'"), std::string::npos) << e1;
  auto [p2, e2] = err(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2})");
  EXPECT_NE(e2.find("'vocab_size'"), std::string::npos) << e2;
  auto [p3, e3] = err(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10,
      "hidden_act": "mish"})");
  EXPECT_NE(e3.find("key 'hidden_act'"), std::string::npos) << e3;
  auto [p5, e5] = err(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10,
      "intermediate_size": 256, "rms_norm_eps": 1e-6, "num_local_experts": 8})");
  EXPECT_NE(e5.find(p5 + ": missing key 'num_experts_per_tok'"), std::string::npos) << e5;
  auto [p6, e6] = err(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10,
      "head_dim": 64})");
  EXPECT_NE(e6.find("key 'head_dim'"), std::string::npos) << e6;
  // A gap in the config is an error naming the key, unless Transformers' config class for the
  // model_type has a default, which is used and said (#42 item 3); a head that cannot rotate is
  // blamed on the keys that sized it, not on a partial_rotary_factor the file does not have.
  auto [p11, e11] = err(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10,
      "rms_norm_eps": 1e-6, "model_type": "olmo2"})");
  EXPECT_NE(e11.find(p11 + ": missing key 'intermediate_size'"), std::string::npos) << e11;
  const TransformerConfig llama = parse_hf_config(R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
      "num_attention_heads": 2, "vocab_size": 10, "rms_norm_eps": 1e-6})", "l.json");
  EXPECT_EQ(llama.ffn, 11008);
  ASSERT_FALSE(llama.notes.empty());
  EXPECT_NE(llama.notes.back().find("LlamaConfig's default 11008"), std::string::npos);
  auto [p12, e12] = err(R"({"hidden_size": 66, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10,
      "intermediate_size": 128, "rms_norm_eps": 1e-6})");
  EXPECT_NE(e12.find("keys 'hidden_size' / 'num_attention_heads': a head of 33 dimensions"), std::string::npos)
      << e12;
  EXPECT_EQ(e12.find("partial_rotary_factor"), std::string::npos) << e12;
  auto [p7, e7] = err(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 10,
      "head_dim": 32, "intermediate_size": 256})");
  EXPECT_EQ(e7, "");  // consistent head_dim is fine
  auto [p8, e8] = err(R"({"hidden_size": 1e400})");
  EXPECT_NE(e8.find(p8 + ": not valid JSON"), std::string::npos) << e8;
  auto [p9, e9] = err(R"({"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2, "vocab_size": 4000000000})");
  EXPECT_NE(e9.find("implausibly large"), std::string::npos) << e9;
  auto [p4, e4] = err("{not json");
  EXPECT_NE(e4.find(p4), std::string::npos) << e4;
  EXPECT_NE(input_error_of([] { read_hf_config("/nonexistent/config.json"); }).find("/nonexistent/config.json"),
            std::string::npos);
}

TEST(SynthOptionsTest, BadOptionsNameTheOption) {
  SynthOptions o;
  EXPECT_NE(input_error_of([&] { synthesize("gpt5", o); }).find("unknown model 'gpt5'"), std::string::npos);
  o.seq = 128;
  EXPECT_NE(input_error_of([&] { synthesize("resnet50", o); }).find("'--seq'"), std::string::npos);
  o.seq = 4096;
  EXPECT_NE(input_error_of([&] { synthesize("gpt2-large", o); }).find("'--seq'"), std::string::npos);
  o.seq = 0;
  o.dtype = DType::fp8;
  o.mode = Mode::train;  // FP8 / FP4 training runs by a named recipe
  EXPECT_NE(input_error_of([&] { synthesize("bert-large", o); }).find("'--dtype': fp8 training runs by a recipe"),
            std::string::npos);
  o.dtype = DType::fp4;
  EXPECT_NE(input_error_of([&] { synthesize("llama3-8b", o); }).find("'--dtype': fp4 training runs by a recipe"),
            std::string::npos);
  o.mode = Mode::infer;
  EXPECT_NE(input_error_of([&] { synthesize("resnet50", o); }).find("'--dtype'"), std::string::npos);
  o.dtype = DType::fp8;
  EXPECT_NE(input_error_of([&] { synthesize("resnet50", o); }).find("'--dtype'"), std::string::npos);
  o.dtype = DType::int8;
  EXPECT_NE(input_error_of([&] { synthesize("bert-large", o); }).find("'--dtype'"), std::string::npos);
  o.dtype.reset();
  o.heads = 7;
  EXPECT_NE(input_error_of([&] { synthesize("bert-large", o); }).find("not a multiple"), std::string::npos);
}

TEST(SynthCli, ListsModelsAndRejectsBadOptions) {
  FILE* p = popen((std::string(KCAST_BINARY) + " synth --list").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out = "\n";  // so every name, the first included, follows a newline
  char buf[256];
  while (fgets(buf, sizeof buf, p)) out += buf;
  EXPECT_EQ(pclose(p), 0);
  for (const char* m : {"bert-large", "gpt2-large", "gpt3-xl", "gpt3-2.7b", "opt-1.3b", "llama2-7b", "llama3-8b", "mixtral-8x7b", "resnet18",
                        "resnet34", "resnet50", "resnet101", "resnet152"})
    EXPECT_NE(out.find(std::string("\n") + m + " "), std::string::npos) << m;
  const int rc = std::system((std::string(KCAST_BINARY) + " synth gpt2-large --mode fly 2>/dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(rc), 2);
}

}  // namespace
}  // namespace kcast::synth
