// The memory `kcast synth` reports a step holds per GPU (Footprint), against closed-form counts of
// the same models.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "predict/synth/synth.h"
#include "tests/predict/predict_fixture.h"
#include "tests/synth/synth_options.h"

namespace kcast::synth {
namespace {

using kcast::testing::run_kcast;

using testing::with_mode;

TEST(SynthFootprint, WeightsGradientsOptimizerAndKvCache) {
  Footprint f;
  synthesize("llama3-8b", with_mode(Mode::decode, 64, 8192), &f);
  const double P = 8030261248;  // Llama 3 8B
  EXPECT_DOUBLE_EQ(f.params, P);
  EXPECT_DOUBLE_EQ(f.weight_bytes, 2 * P);  // bf16
  EXPECT_DOUBLE_EQ(f.gradient_bytes + f.optimizer_bytes, 0);
  EXPECT_DOUBLE_EQ(f.kv_cache_bytes, 32.0 * 2 * 64 * 8192 * 8 * 128 * 2);  // layers x K,V x tokens x kv width
  synthesize("llama3-8b", with_mode(Mode::train, 1, 128), &f);
  EXPECT_DOUBLE_EQ(f.weight_bytes + f.gradient_bytes + f.optimizer_bytes, 4 * 2 * P);  // weight, grad, 2 moments
  EXPECT_DOUBLE_EQ(f.kv_cache_bytes, 0);
  SynthOptions sgd = with_mode(Mode::train, 1, 128);
  sgd.optimizer = Optimizer::sgd;
  synthesize("llama3-8b", sgd, &f);
  EXPECT_DOUBLE_EQ(f.optimizer_bytes, 0);
  // FP8 serving: every projection in the 32 blocks takes one byte, embeddings and head two.
  SynthOptions f8 = with_mode(Mode::infer, 1, 128);
  f8.dtype = DType::fp8;
  synthesize("llama3-8b", f8, &f);
  const double proj = 32 * (2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 14336);
  EXPECT_DOUBLE_EQ(f.weight_bytes, proj + 2 * (P - proj));
  // NVFP4 serving: half a byte per projection weight plus one 8-bit scale per 16.
  f8.dtype = DType::fp4;
  synthesize("llama3-8b", f8, &f);
  EXPECT_DOUBLE_EQ(f.weight_bytes, proj * (0.5 + 1.0 / 16) + 2 * (P - proj));
  // Mixtral under expert parallelism over 8 GPUs: one expert per layer on each.
  SynthOptions ep = with_mode(Mode::train, 8, 128);
  ep.dp = ep.ep = 8;
  synthesize("mixtral-8x7b", ep, &f);
  constexpr double d = 4096, L = 32, V = 32000, Fe = 14336, E = 8, attn = 2 * d * d + 2 * d * 1024;
  EXPECT_DOUBLE_EQ(f.params, L * (attn + d * E + 3 * d * Fe + 2 * d) + 2 * V * d + d);
  Footprint r;
  synthesize("resnet50", with_mode(Mode::train, 8, 0), &r);
  EXPECT_DOUBLE_EQ(r.params, 25557032);
}

TEST(SynthFootprint, TheCliReportsItOnStderr) {
  const std::string cmd =
      std::string(KCAST_BINARY) +
      " synth llama3-8b --mode decode --batch 64 --seq 8192 --attention flash 2>&1 >/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string err;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) err += buf;
  EXPECT_EQ(pclose(p), 0);
  // The activations: the residual stream and norm output (2 x 64 x 4096 x 2 bytes) beside the logits
  // (64 x 128256 x 2), the largest of one layer's transients: 17.5 MB.
  EXPECT_NE(err.find("weights 16.06 GB, KV cache 68.72 GB, activations 0.02 GB (one layer's peak, estimate); 84.80 GB"),
            std::string::npos) << err;
}

// `--gpu` says whether the step's memory fits each board's datasheet capacity (binary GB): Llama 3
// 8B decoding 64 x 8192 tokens holds 16.06 + 68.72 + 0.0175 = 84.80 GB, under an H100's 80 GiB
// (85.90 GB), over a T4's 16 GiB. A GPU name that does not resolve fails before anything is written.
TEST(SynthFootprint, GpuOptionSaysWhetherTheStepFits) {
  const std::string out = ::testing::TempDir() + "/fit.csv";
  std::remove(out.c_str());
  const auto r =
      run_kcast("synth llama3-8b --mode decode --batch 64 --seq 8192 --attention flash --gpu 'H100-SXM, Tesla T4' "
                "-o '" + out + "'",
                true);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("kcast synth: H100-SXM (85.90 GB): fits, 1.10 GB left for workspace"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kcast synth: T4 (17.18 GB): does not fit, the step needs at least 84.80 GB"), std::string::npos)
      << r.out;
  // Each sequence's cache is 32 layers x K,V x 8192 tokens x 8 heads x 128 x 2 bytes = 1 GiB, beside
  // the weights' 2 x 8030261248 bytes = 14.96 GiB: 80 GiB hold 65 sequences, 16 GiB one.
  EXPECT_NE(r.out.find("fits, 1.10 GB left for workspace; at most 65 sequences fit (64 now)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("does not fit, the step needs at least 84.80 GB; at most 1 sequence fits (64 now)"),
            std::string::npos) << r.out;
  std::remove(out.c_str());
  const auto bad = run_kcast("synth llama3-8b --gpu H1000 -o '" + out + "'", true);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.out.find("option '--gpu': unknown GPU 'H1000'"), std::string::npos) << bad.out;
  EXPECT_FALSE(std::ifstream(out).good());
}

// With pipeline stages the first stage holds min(micro-batches, stages) micro-batches' activations,
// and the fit is judged by the stage that needs more.
TEST(SynthFootprint, PipelineFitIsJudgedByTheFirstStage) {
  const std::string step =
      "synth llama3-70b --mode train --batch 64 --seq 4096 --attention flash --tp 8 --pp 4 --dp 2 --microbatches 8 "
      "--gpu H100-SXM -o /dev/null";
  const auto r = run_kcast(step, true);
  EXPECT_EQ(r.rc, 0) << r.out;
  EXPECT_NE(r.out.find("4 micro-batches in flight)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kcast synth: H100-SXM (85.90 GB): does not fit, its first pipeline stage needs at least"),
            std::string::npos)
      << r.out;
  // Interleaved with two chunks per GPU: 4 + 3 / 2 micro-batches in flight.
  const auto interleaved = run_kcast(step + " --virtual-stages 2", true);
  EXPECT_NE(interleaved.out.find("5.5 micro-batches in flight)"), std::string::npos) << interleaved.out;
  // Recomputing every layer leaves the first stage four micro-batches' layer inputs: it fits.
  const auto re = run_kcast(step + " --recompute full", true);
  EXPECT_EQ(re.rc, 0) << re.out;
  EXPECT_NE(re.out.find("left for workspace on its first pipeline stage"), std::string::npos) << re.out;
}

// In training the line adds the activation estimate, and what is left on a GPU is for workspace only.
TEST(SynthFootprint, TrainingLineCountsActivations) {
  const auto r =
      run_kcast("synth llama3-8b --mode train --batch 1 --seq 1024 --attention flash --gpu B200 -o /dev/null", true);
  EXPECT_EQ(r.rc, 0) << r.out;
  // ... and the loss backward's fp32 gradients over 1024 x 128256 logits, 8 bytes each.
  EXPECT_NE(r.out.find(" (estimate), the loss's backward 1.05 GB more at its peak; "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" before workspace"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("left for workspace"), std::string::npos) << r.out;
  Footprint f;
  SynthOptions o = with_mode(Mode::train, 1, 1024);
  o.attention = AttentionImpl::flash;
  synthesize("llama3-8b", o, &f);
  char gb[32];
  std::snprintf(gb, sizeof gb, "activations %.2f GB", f.activation_bytes / 1e9);
  EXPECT_NE(r.out.find(gb), std::string::npos) << r.out;
}

// "At most N sequences fit": the KV cache and the activations grow with the sequences of a micro-batch,
// the rest does not, so the step with N sequences fits the GPU and the step with N + 1 does not — for
// serving, an eager prefill and a training step whose first pipeline stage decides.
TEST(SynthFootprint, TheLargestBatchThatFitsIsNamed) {
  const std::pair<std::string, std::string> steps[] = {
      {"synth llama3-8b --mode decode --seq 8192 --attention flash --gpu H100-SXM", ""},
      {"synth llama3-70b --mode decode --seq 8192 --attention flash --tp 8 --kv-cache-dtype fp8 --gpu H100-SXM", ""},
      {"synth llama3-8b --mode generate --seq 2048 --new-tokens 512 --gpu L40S", ""},
      {"synth llama3-8b --seq 4096 --gpu H100-SXM", ""},
      {"synth llama3-8b --mode train --seq 4096 --attention flash --recompute full --gpu H100-SXM", ""},
      {"synth llama3-70b --mode train --seq 4096 --attention flash --tp 8 --pp 4 --microbatches 8 --recompute full "
       "--gpu H100-SXM",
       " per micro-batch of a replica"}};
  for (const auto& [step, per] : steps) {
    const auto probe = run_kcast(step + " --batch 8 -o /dev/null", true);
    ASSERT_EQ(probe.rc, 0) << probe.out;
    const auto at = probe.out.find("; at most ");
    ASSERT_NE(at, std::string::npos) << probe.out;
    const int n = std::stoi(probe.out.substr(at + 10));
    ASSERT_GT(n, 0) << probe.out;
    EXPECT_NE(probe.out.find(per + " fit"), std::string::npos) << probe.out;
    // With micro-batches the batch is the micro-batch's sequences times their count.
    const int m = per.empty() ? 1 : 8;
    const auto fits = run_kcast(step + " --batch " + std::to_string(n * m) + " -o /dev/null", true);
    EXPECT_NE(fits.out.find("): fits"), std::string::npos) << step << " at " << n << ":\n" << fits.out;
    const auto over = run_kcast(step + " --batch " + std::to_string((n + 1) * m) + " -o /dev/null", true);
    EXPECT_NE(over.out.find("): does not fit"), std::string::npos) << step << " at " << n + 1 << ":\n" << over.out;
  }
}

}  // namespace
}  // namespace kcast::synth
