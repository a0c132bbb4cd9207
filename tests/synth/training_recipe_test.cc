// Low-precision training recipes, Megatron's kernels, communication overlap, pipeline layouts and the
// predicted step's JSON (kcast synth --mode train --recipe / --framework / --pp-layout / --format json),
// checked in closed form on a small Llama-like model.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "predict/synth/pipeline_layout.h"
#include "predict/synth/synth.h"
#include "predict/synth/transformer/recipe.h"
#include "tests/input_error_of.h"
#include "tests/predict/predict_fixture.h"

namespace {

using namespace kcast;
using namespace kcast::synth;
using kcast::testing::run_kcast;

// A small Llama: 4 layers, d 256, 4 heads of 64 (2 KV heads), MLP 512, vocabulary 1000.
constexpr int64_t kL = 4, kD = 256, kH = 4, kKv = 2, kF = 512, kV = 1000, kB = 4, kS = 128;
constexpr int64_t kKvd = kKv * kD / kH;

SynthOptions small(Recipe r, Framework f = Framework::megatron) {
  SynthOptions o;
  o.mode = Mode::train;
  o.batch = kB, o.seq = kS;
  o.layers = kL, o.hidden = kD, o.heads = kH, o.kv_heads = kKv, o.ffn = kF, o.vocab = kV;
  o.attention = AttentionImpl::flash;
  o.master_weights = true;
  o.dtype = r == Recipe::nvfp4 ? DType::fp4 : r == Recipe::none ? DType::bf16 : DType::fp8;
  o.recipe = r;
  o.framework = f;
  return o;
}

const std::string kSmall = "synth llama3-8b --mode train --seq 128 --layers 4 --hidden 256 --heads 4 "
                           "--kv-heads 2 --ffn 512 --vocab 1000 --attention flash --master-weights ";

double sum_where(const std::vector<Kernel>& ks, const std::string& part, double Kernel::*field) {
  double s = 0;
  for (const Kernel& k : ks)
    if (k.name.find(part) != std::string::npos) s += k.count * k.*field;
  return s;
}

TEST(TrainingRecipe, BlockGemmsRunNarrowInThreeDirectionsAndTheRestStaysBf16) {
  for (Recipe r : {Recipe::delayed, Recipe::current, Recipe::mxfp8, Recipe::block, Recipe::nvfp4}) {
    const std::vector<Kernel> ks = synthesize("llama3-8b", small(r));
    const DType narrow = r == Recipe::nvfp4 ? DType::fp4 : DType::fp8;
    int fprop = 0, dgrad = 0, wgrad = 0;
    for (const Kernel& k : ks) {
      if (k.cls == KernelClass::gemm && k.name.starts_with("layer.")) {
        EXPECT_EQ(k.dtype, narrow) << k.name;
        fprop += k.name.ends_with("(fprop)"), dgrad += k.name.ends_with("(dgrad)"), wgrad += k.name.ends_with("(wgrad)");
      }
      if (k.cls == KernelClass::attention || k.name.starts_with("head.")) {
        EXPECT_EQ(k.dtype, DType::bf16) << k.name;
      }
    }
    // Megatron's four projections: linear_qkv, linear_proj, linear_fc1 (gate|up), linear_fc2.
    EXPECT_EQ(fprop, 4) << transformer::to_string(r);
    EXPECT_EQ(dgrad, 4);
    EXPECT_EQ(wgrad, 4);
  }
}

// Projections with biases (GPT-OSS's attention and experts) run narrow too: Transformer Engine adds the
// bias in the GEMM's epilogue and reduces its gradient in the output gradient's cast, so no block GEMM
// stays BF16 and no bias-gradient kernel of its own remains.
TEST(TrainingRecipe, BiasedProjectionsRunNarrowToo) {
  SynthOptions o = small(Recipe::mxfp8);
  o.layers = 0, o.hidden = 0, o.heads = 0, o.kv_heads = 0, o.ffn = 0, o.vocab = 0;  // the model as published
  o.batch = 1, o.seq = 256;  // longer than its 128-token window
  const std::vector<Kernel> ks = synthesize("gpt-oss-20b", o);
  int narrow = 0;
  for (const Kernel& k : ks) {
    if (k.cls != KernelClass::gemm || !(k.name.starts_with("layer.") || k.name.starts_with("local_layer."))) continue;
    if (k.name.find(".moe.gate ") != std::string::npos) continue;  // the router stays BF16
    EXPECT_EQ(k.dtype, DType::fp8) << k.name;
    narrow += k.dtype == DType::fp8;
  }
  EXPECT_GT(narrow, 0);
  // Only the BF16 router keeps its own bias-gradient kernel.
  EXPECT_EQ(sum_where(ks, "aten::sum (bias grad)", &Kernel::count),
            sum_where(ks, ".moe.gate aten::sum (bias grad)", &Kernel::count));
  EXPECT_GT(sum_where(ks, ".moe.gate aten::sum (bias grad)", &Kernel::count), 0);
}

TEST(TrainingRecipe, QuantizationBytesFollowTheFormats) {
  const double T = double(kB * kS);
  // Bytes a BF16 element's quantization moves: read 2, the row- and column-wise copies, their scales.
  const std::pair<Recipe, double> formats[] = {{Recipe::delayed, 2 + 1 + 1},
                                               {Recipe::current, 2 + 2 + 1 + 1},
                                               {Recipe::mxfp8, 2 + 1 + 1 + 2.0 / 32},
                                               {Recipe::block, 2 + 1 + 1 + 2 * 4.0 / 128},
                                               {Recipe::nvfp4, 2 + 0.5 + 0.5 + 2.0 / 16}};
  for (const auto& [r, per_elem] : formats) {
    const std::vector<Kernel> ks = synthesize("llama3-8b", small(r));
    const std::string q = transformer::recipe_kernels(r)->quantize;
    // linear_qkv's input: one micro-batch's tokens x hidden, once per layer.
    const Kernel* in = nullptr;
    for (const Kernel& k : ks)
      if (k.name == "layer.attn.qkv_proj " + q + " (input)") in = &k;
    ASSERT_NE(in, nullptr) << q;
    EXPECT_DOUBLE_EQ(in->bytes, per_elem * T * kD) << q;
    EXPECT_DOUBLE_EQ(in->count, double(kL));
    // The weights, once per step: every block projection's elements.
    const double weights = kL * (kD * (kD + 2 * kKvd) + kD * kD + kD * 2 * kF + kF * kD);
    EXPECT_DOUBLE_EQ(sum_where(ks, "recipe.weights", &Kernel::bytes), per_elem * weights) << q;
  }
}

// What the weights hold: the BF16 block weights and the narrow copies TE keeps beside them (row- and
// column-wise, with their scales: what quantizing writes, whatever it reads; current scaling reads
// twice but stores what delayed scaling stores). With FP8 parameters (Megatron's --fp8-param-gather)
// the narrow copies only: the BF16 copy of every block weight is gone.
TEST(TrainingRecipe, WeightsHoldTheNarrowCopiesAndWithFp8ParametersNoBf16Copy) {
  const double block = kL * (kD * (kD + 2 * kKvd) + kD * kD + kD * 2 * kF + kF * kD);
  Footprint plain;
  synthesize("llama3-8b", small(Recipe::none), &plain);
  const std::pair<Recipe, double> stored[] = {{Recipe::delayed, 1 + 1},
                                              {Recipe::current, 1 + 1},
                                              {Recipe::mxfp8, 1 + 1 + 2.0 / 32},
                                              {Recipe::block, 1 + 1 + 2 * 4.0 / 128},
                                              {Recipe::nvfp4, 0.5 + 0.5 + 2.0 / 16}};
  for (const auto& [r, per_elem] : stored) {
    Footprint f;
    synthesize("llama3-8b", small(r), &f);
    EXPECT_DOUBLE_EQ(f.weight_bytes - plain.weight_bytes, per_elem * block) << transformer::to_string(r);
    if (r == Recipe::nvfp4) continue;  // no FP4 parameters in Megatron
    SynthOptions o = small(r);
    o.fp8_param_gather = true;
    Footprint g;
    synthesize("llama3-8b", o, &g);
    EXPECT_DOUBLE_EQ(f.weight_bytes - g.weight_bytes, 2 * block) << transformer::to_string(r);
    // Memory only: the same kernels.
    const auto a = synthesize("llama3-8b", small(r)), b = synthesize("llama3-8b", o);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].bytes, b[i].bytes) << a[i].name;
  }
}

// Fully sharded (--zero 3) a layer's weights are whole only while gathered, two layers at a time, and
// so are their narrow copies: two layers' worth, not the stage's.
TEST(TrainingRecipe, FullyShardedNarrowCopiesAreTwoLayersWorth) {
  const double layer = kD * (kD + 2 * kKvd) + kD * kD + kD * 2 * kF + kF * kD;
  for (Recipe r : {Recipe::current, Recipe::mxfp8}) {
    SynthOptions o = small(r), bf16 = small(Recipe::none);
    o.zero = bf16.zero = 3;
    o.dp = bf16.dp = 2;
    o.batch = bf16.batch = 2 * kB;
    Footprint f, plain;
    synthesize("llama3-8b", o, &f);
    synthesize("llama3-8b", bf16, &plain);
    const double per_elem = r == Recipe::mxfp8 ? 1 + 1 + 2.0 / 32 : 2;
    EXPECT_DOUBLE_EQ(f.weight_bytes - plain.weight_bytes, 2 * layer * per_elem) << transformer::to_string(r);
  }
}

TEST(TrainingRecipe, WeightQuantizationIsOncePerStepNotPerMicrobatch) {
  SynthOptions one = small(Recipe::delayed), four = one;
  four.microbatches = 4;
  four.batch = 4 * kB;
  const auto a = synthesize("llama3-8b", one), b = synthesize("llama3-8b", four);
  EXPECT_DOUBLE_EQ(sum_where(a, "recipe.weights", &Kernel::bytes), sum_where(b, "recipe.weights", &Kernel::bytes));
  EXPECT_DOUBLE_EQ(4 * sum_where(a, "(input)", &Kernel::bytes), sum_where(b, "(input)", &Kernel::bytes));
  // Fully sharded, every gather (each micro-batch's forward and backward) quantizes them again.
  SynthOptions sharded = four;
  sharded.zero = 3, sharded.dp = 2, sharded.batch = 2 * four.batch;
  const auto c = synthesize("llama3-8b", sharded);
  EXPECT_DOUBLE_EQ(sum_where(c, "recipe.weights", &Kernel::bytes), 2 * 4 * sum_where(b, "recipe.weights", &Kernel::bytes));
}

TEST(TrainingRecipe, MegatronFusesNormsRopeSwigluAndTheLoss) {
  const auto eager = synthesize("llama3-8b", small(Recipe::none, Framework::eager));
  const auto mega = synthesize("llama3-8b", small(Recipe::none, Framework::megatron));
  auto rows = [](const std::vector<Kernel>& ks, const std::string& part) {
    int n = 0;
    for (const Kernel& k : ks) n += k.name.find(part) != std::string::npos;
    return n;
  };
  EXPECT_EQ(rows(mega, "te::rmsnorm (forward)"), 3);  // two per layer (one row, count = layers) and the final
  EXPECT_EQ(rows(mega, "te::fused_rope (forward)"), 2);
  EXPECT_EQ(rows(mega, "te::swiglu (forward)"), 1);
  EXPECT_EQ(rows(mega, "te::fused_cross_entropy"), 2);  // forward and backward
  EXPECT_EQ(rows(mega, "te::multi_tensor_adam"), 1);
  EXPECT_EQ(rows(mega, "aten::pow"), 0);
  EXPECT_GT(rows(eager, "aten::pow"), 0);
  EXPECT_LT(mega.size(), eager.size());
  // The same matrix work either way: fusion changes the element-wise kernels only.
  double fe = 0, fm = 0;
  for (const Kernel& k : eager)
    if (k.cls == KernelClass::gemm || k.cls == KernelClass::attention) fe += k.count * k.flops;
  for (const Kernel& k : mega)
    if (k.cls == KernelClass::gemm || k.cls == KernelClass::attention) fm += k.count * k.flops;
  EXPECT_NEAR(fm / fe, 1.0, 1e-12);
}

TEST(TrainingRecipe, BadCombinationsAreOneLineErrorsNamingTheOption) {
  struct Case {
    std::string args, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"--dtype fp8 --recipe delayed --gpu A100-SXM4-80GB", "'--recipe': delayed"},
           {"--dtype fp8 --recipe mxfp8 --gpu H100-SXM", "H100-SXM has none"},
           {"--dtype fp4 --recipe nvfp4 --gpu H100-SXM", "'--recipe': nvfp4"},
           {"--dtype bf16 --recipe delayed", "'--recipe': delayed runs fp8 GEMMs"},
           {"--dtype fp8 --recipe nvfp4", "'--recipe': nvfp4 runs fp4 GEMMs"},
           {"--dtype fp8 --recipe e4m3", "'--recipe': 'e4m3' is not one of"},
           {"--framework megatron --compile", "'--compile'"},
           {"--framework nemo", "'--framework': 'nemo' is not one of"},
           {"--pp 2 --pp-layout 1,1,2", "'--pp-layout': give 2 layer counts"},
           {"--pp 2 --pp-layout 1,2", "'--pp-layout': the counts sum to 3"},
           {"--pp 4 --virtual-stages 2 --microbatches 4", "are more chunks than the 4 layers"},
           {"--dtype fp8 --recipe delayed --fp8-param-gather", "'--fp8-param-gather'"},  // eager, the default
           {"--framework megatron --fp8-param-gather", "'--fp8-param-gather'"},  // no recipe
           {"--framework megatron --dtype fp4 --recipe nvfp4 --fp8-param-gather", "'--fp8-param-gather'"},
           {"--framework megatron --dtype fp8 --recipe delayed --dp 2 --zero 3 --fp8-param-gather",
            "'--fp8-param-gather'"}}) {
    const auto r = run_kcast(kSmall + "--batch 4 " + c.args + " -o /dev/null", true);
    EXPECT_EQ(r.rc, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << c.args << "\n" << r.out;
  }
}

// Megatron-LM, torchtitan and AutoModel run attention fused (Transformer Engine, SDPA): without
// --attention their steps are the flash ones; eager PyTorch keeps bmm + softmax unless told.
TEST(TrainingRecipe, FrameworksAttendFusedUnlessToldOtherwise) {
  const std::string small = "synth llama3-8b --mode train --seq 128 --layers 4 --hidden 256 --heads 4 --kv-heads 2 "
                            "--ffn 512 --vocab 1000 --batch 4 --dtype bf16 --gpu H100-SXM --format json -o /dev/null ";
  for (const std::string f : {"megatron", "torchtitan", "automodel"}) {
    const auto unsaid = run_kcast(small + "--framework " + f);
    ASSERT_EQ(unsaid.rc, 0) << unsaid.out;
    EXPECT_EQ(unsaid.out, run_kcast(small + "--framework " + f + " --attention flash").out) << f;
    EXPECT_NE(unsaid.out, run_kcast(small + "--framework " + f + " --attention eager").out) << f;
  }
  const auto eager = run_kcast(small + "--framework eager");
  EXPECT_EQ(eager.out, run_kcast(small + "--framework eager --attention eager").out);
  EXPECT_NE(eager.out, run_kcast(small + "--framework eager --attention flash").out);
}

TEST(PipelineLayout, UnevenLayersCountTheEmbeddingAndTheLossAsMegatronDoes) {
  TransformerConfig c;
  c.name = "m", c.layers = 126;
  SynthOptions o;
  o.pp = 8, o.virtual_stages = 8;
  const std::vector<int64_t> chunks = pipeline_layout(c, o);
  ASSERT_EQ(chunks.size(), 64u);
  EXPECT_EQ(chunks.front(), 1);
  EXPECT_EQ(chunks.back(), 1);
  EXPECT_EQ(chunks[1], 2);
  EXPECT_EQ(critical_stage_layers(chunks, 8), 16);  // a middle stage's 8 chunks of 2
  o.pp_layout = std::vector<int64_t>(64, 2);
  o.pp_layout[0] = 0, o.pp_layout[1] = 3, o.pp_layout[2] = 1;  // 126 layers, stage 1 holding 17
  EXPECT_EQ(critical_stage_layers(pipeline_layout(c, o), 8), 17);
  c.layers = 32, o.pp_layout.clear(), o.virtual_stages = 1;
  EXPECT_EQ(pipeline_layout(c, o), std::vector<int64_t>(8, 4));
  // Neither divides (DeepSeek-V3's 61 layers over 16 chunks, nor 63): 13 chunks of 4 and 3 of 3, at
  // most 4 on a stage as Megatron-Bridge's recipe layout has (15 of 4 and the last 1); over 8 x 4
  // chunks 29 of 2 and 3 of 1, at most 8 on a stage.
  c.layers = 61, o.pp = 16;
  std::vector<int64_t> ds(13, 4);
  ds.insert(ds.end(), 3, 3);
  EXPECT_EQ(pipeline_layout(c, o), ds);
  EXPECT_EQ(critical_stage_layers(ds, 16), 4);
  o.pp = 8, o.virtual_stages = 4;
  EXPECT_EQ(critical_stage_layers(pipeline_layout(c, o), 8), 8);
  EXPECT_NE(pipeline_layout_note(c, o).find("32 chunks of 1 or 2 layers (the first 29 one more)"), std::string::npos)
      << pipeline_layout_note(c, o);
  o.pp = 64, o.virtual_stages = 1;  // more chunks than layers
  EXPECT_THROW(pipeline_layout(c, o), InputError);
}

// The step's JSON over several layouts: its keys, overlap bounds, and MFU in closed form.
TEST(TrainingStepJson, OverlapIsBoundedAndMfuIsTheModelFlopsOverTheStep) {
  // Megatron's model FLOPs of a token: 6 x the projections it passes (the LM head included) and causal
  // attention's 6 x layers x seq x hidden (synth counts the norms' weights too: a part in a thousand).
  const double projections = kL * (kD * (kD + 2 * kKvd) + kD * kD + 3 * kD * kF) + kV * kD;
  const double per_token = 6 * projections + 6.0 * kL * kS * kD;
  const double h100_fp8 = 1979, h100_bf16 = 989;  // datasheet dense peaks (data/gpus.csv)
  const std::vector<std::string> layouts = {
      "--framework megatron --dtype fp8 --tp 2 --dp 2 --zero 1 --sequence-parallel --batch 8",
      "--framework megatron --dtype bf16 --pp 2 --virtual-stages 2 --microbatches 4 --batch 8",
      "--framework megatron --dtype fp8 --pp 2 --dp 2 --microbatches 2 --recompute full --batch 8",
      "--framework torchtitan --dtype bf16 --dp 4 --zero 3 --compile --batch 8",
      "--framework eager --dtype bf16 --tp 2 --pp 2 --microbatches 2 --batch 8"};
  for (const std::string& l : layouts) {
    const auto r = run_kcast(kSmall + l + " --gpu H100-SXM --format json -o /dev/null");
    ASSERT_EQ(r.rc, 0) << l << "\n" << r.out;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j.size(), 1u);
    const auto& g = j[0];
    for (const char* key : {"gpu", "step_s", "tokens_per_s", "tokens_per_s_per_gpu", "model_tflops_per_gpu", "mfu",
                            "exposed_comm_s", "bubble_s", "recompute_s", "quantize_s", "memory_gb", "fits"})
      EXPECT_TRUE(g.contains(key)) << key << " " << l;
    const double step = g["step_s"], comm = g["comm_s"], exposed = g["exposed_comm_s"];
    const double compute = step - exposed;
    EXPECT_GE(step, std::max(compute, comm) * (1 - 1e-12)) << l;
    EXPECT_LE(step, (compute + comm) * (1 + 1e-12)) << l;
    EXPECT_GE(exposed, 0) << l;
    const double gpus = g["gpus"], tokens = 8.0 * kS;
    const double peak = l.find("fp8") != std::string::npos ? h100_fp8 : h100_bf16;
    EXPECT_NEAR(g["mfu"].get<double>(), per_token * tokens / step / gpus / (peak * 1e12), 2e-3 * g["mfu"].get<double>())
        << l;
    EXPECT_NEAR(g["tokens_per_s_per_gpu"].get<double>(), tokens / step / gpus, 1e-9 * tokens / step) << l;
    if (l.find("--pp 2") != std::string::npos) {
      EXPECT_GT(g["bubble_s"].get<double>(), 0) << l;
    }
    if (l.find("recompute") != std::string::npos) {
      EXPECT_GT(g["recompute_s"].get<double>(), 0) << l;
    }
    if (l.find("fp8") != std::string::npos) {
      EXPECT_GT(g["quantize_s"].get<double>(), 0) << l;
    }
  }
}

TEST(TrainingStepJson, EagerOverlapsNothingAndMegatronHidesTensorParallelCollectives) {
  const std::string l = "--batch 4 --dtype bf16 --tp 2 --sequence-parallel --gpu H100-SXM --format json -o /dev/null";
  const auto eager = nlohmann::json::parse(run_kcast(kSmall + "--framework eager " + l).out)[0];
  EXPECT_DOUBLE_EQ(eager["exposed_comm_s"].get<double>(), eager["comm_s"].get<double>());
  const auto mega = nlohmann::json::parse(run_kcast(kSmall + "--framework megatron " + l).out)[0];
  EXPECT_LT(mega["exposed_comm_s"].get<double>(), mega["comm_s"].get<double>());
  // Transformer Engine's tensor-parallel exchanges run on the copy engines: hidden, they hold no SMs.
  EXPECT_DOUBLE_EQ(eager["overlap_slowdown_s"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(mega["overlap_slowdown_s"].get<double>(), 0);
  // FSDP's NCCL gathers and reduce-scatters hold 16 of the H100's 132 SMs while the compute they hide
  // behind runs: that compute loses hidden x 16 / 132.
  const std::string fsdp_run = "--framework torchtitan --batch 8 --dtype bf16 --dp 4 --zero 3 --gpu H100-SXM";
  const auto fsdp = nlohmann::json::parse(run_kcast(kSmall + fsdp_run + " --format json -o /dev/null").out)[0];
  const double hidden = fsdp["comm_s"].get<double>() - fsdp["exposed_comm_s"].get<double>();
  EXPECT_GT(hidden, 0);
  EXPECT_NEAR(fsdp["overlap_slowdown_s"].get<double>(), hidden * 16 / 132, 1e-12);
  // The interleaved pipeline's sends and receives, hidden, hold 4 (two peers, two channels each).
  const std::string pp_run = "--framework megatron --dtype bf16 --pp 2 --virtual-stages 2 --microbatches 4 --batch 8";
  const auto pp = nlohmann::json::parse(run_kcast(kSmall + pp_run + " --gpu H100-SXM --format json -o /dev/null").out)[0];
  const double pp_hidden = pp["comm_s"].get<double>() - pp["exposed_comm_s"].get<double>();
  EXPECT_GT(pp_hidden, 0);
  EXPECT_NEAR(pp["overlap_slowdown_s"].get<double>(), pp_hidden * 4 / 132, 1e-12);
}

}  // namespace

// MFU names the dtype whose peak it divides by (#42 item 6): a V100 has no BF16 peak, and its BF16
// work is sized against the FP32 units that run it.
TEST(TrainingStepJson, MfuNamesTheDtypeWhosePeakItUses) {
  const auto v100 = nlohmann::json::parse(run_kcast(kSmall + "--batch 4 --gpu V100-SXM2-32GB,H100-SXM --format json "
                                                    "-o /dev/null")
                                              .out);
  ASSERT_EQ(v100.size(), 2u);
  EXPECT_EQ(v100[0]["mfu_dtype"], "fp32");
  EXPECT_EQ(v100[1]["mfu_dtype"], "bf16");
  const double ratio = v100[1]["mfu"].get<double>() / v100[0]["mfu"].get<double>();
  // Same model FLOPs over each step, against 989 and 15.7 TFLOP/s (data/gpus.csv).
  const double steps = v100[0]["step_s"].get<double>() / v100[1]["step_s"].get<double>();
  EXPECT_NEAR(ratio, steps * 15.7 / 989.0, 0.02 * ratio);
}
