// The host's issue of a training step (predict/cli/synth_host_issue.h): over a stretch without a host
// read the GPU waits only for what the host's issue outlasts it; after a read the GPU starts from empty
// and each kernel starts no sooner than the host issues it. The race's figures here are worked by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "predict/cli/synth_host_issue.h"
#include "predict/synth/cuda_graph_modules.h"
#include "predict/synth/emitter.h"
#include "predict/synth/synth.h"
#include "tests/input_error_of.h"
#include "tests/predict/predict_fixture.h"
#include "tests/synth/synth_options.h"

namespace kcast::synth {
namespace {

using cli::host_issue;
using testing::with_mode;

Kernel row(const std::string& name, double count, KernelClass cls = KernelClass::gemm) {
  Kernel k;
  k.name = name;
  k.cls = cls;
  k.count = count;
  return k;
}

const std::string kRead = std::string("layer.moe.tokens_per_expert [CUDA memcpy Device-to-Host]") + kToHostTag;

TEST(HostIssue, WithoutAHostReadTheGpuWaitsOnlyForWhatTheIssueOutlasts) {
  const std::vector<Kernel> rows = {row("layer.a", 10), row("layer.b", 10), row("optimizer.step", 1)};
  // The GPU's 10 x 5 + 10 x 1 + 20 = 80 us against the host's 10 x 2 + 10 x 2 + 2 = 42: hidden.
  auto h = host_issue(rows, {5, 1, 20}, {2, 2, 2}, 2);
  EXPECT_DOUBLE_EQ(h.host_us, 42);
  EXPECT_DOUBLE_EQ(h.exposed_us, 0);
  EXPECT_DOUBLE_EQ(h.syncs, 0);
  // A host 5x slower: 210 us of issue over 80 us of work.
  h = host_issue(rows, {5, 1, 20}, {10, 10, 10}, 2);
  EXPECT_DOUBLE_EQ(h.exposed_us, 210 - 80);
}

TEST(HostIssue, AfterAHostReadKernelsStartNoSoonerThanIssued) {
  // Three layers' forwards, each: a GEMM (host 2, GPU 10), the read (host 1), four small launches
  // (host 5, GPU 1). After a read the host issues the four in 20 us, the last ends at 21; the GEMM is
  // issued at 22 and ends at 32; the next read waits for it. The GPU worked 14 of those 32 us.
  const std::vector<Kernel> rows = {row("layer.gemm", 3), row(kRead, 3, KernelClass::memcpy), row("layer.small", 12)};
  const auto h = host_issue(rows, {10, 0, 1}, {2, 1, 5}, rows.size());
  EXPECT_DOUBLE_EQ(h.syncs, 3);
  EXPECT_DOUBLE_EQ(h.exposed_us, 3 * (32 - 14));
  EXPECT_DOUBLE_EQ(h.host_us, 3 * 2 + 3 * 1 + 12 * 5);
}

TEST(HostIssue, AGpuBoundStretchWaitsOnlyForTheFirstIssueAfterTheRead) {
  const std::vector<Kernel> rows = {row(kRead, 4, KernelClass::memcpy), row("layer.a", 4), row("layer.b", 4)};
  const auto h = host_issue(rows, {0, 50, 50}, {1, 3, 3}, rows.size());
  EXPECT_DOUBLE_EQ(h.exposed_us, 4 * 3.0);
}

TEST(HostIssue, NoHostTimesChargeNothing) {
  const std::vector<Kernel> rows = {row(kRead, 4, KernelClass::memcpy), row("layer.a", 4)};
  const auto h = host_issue(rows, {0, 50}, {}, rows.size());
  EXPECT_DOUBLE_EQ(h.host_us, 0);
  EXPECT_DOUBLE_EQ(h.exposed_us, 0);
}

TEST(HostIssue, MegatronMoeReadsTheTokenCountsOncePerLayerForward) {
  SynthOptions o = with_mode(Mode::train, 16, 1024);
  o.attention = AttentionImpl::flash;
  o.framework = Framework::megatron;
  o.dp = 8;
  o.ep = 8;
  o.microbatches = 2;
  const auto reads = [](const std::vector<Kernel>& ks) {
    double n = 0;
    for (const auto& k : ks)
      if (k.name.find(kToHostTag) != std::string::npos) n += k.count;
    return n;
  };
  // Mixtral 8x7B: 32 MoE layers, two micro-batches; full recomputation reads them again.
  EXPECT_DOUBLE_EQ(reads(synthesize("mixtral-8x7b", o)), 32 * 2);
  o.recompute = true;
  EXPECT_DOUBLE_EQ(reads(synthesize("mixtral-8x7b", o)), 2 * 32 * 2);
  o.recompute = false;
  o.ep = 1;
  EXPECT_DOUBLE_EQ(reads(synthesize("mixtral-8x7b", o)), 32 * 2);  // the grouped GEMM's splits still
  EXPECT_DOUBLE_EQ(reads(synthesize("llama3-8b", o)), 0);           // a dense model reads nothing
}

// Delayed scaling quantizes a grouped projection's expert inputs in one launch (TE's
// nvte_multi_cast_transpose); MXFP8 launches one per expert. The bytes are the same either way.
TEST(HostIssue, DelayedScalingQuantizesTheExpertsInOneLaunch) {
  SynthOptions o = with_mode(Mode::train, 16, 1024);
  o.attention = AttentionImpl::flash;
  o.framework = Framework::megatron;
  o.dtype = DType::fp8;
  o.dp = 8;
  o.ep = 2;  // Mixtral's 8 experts: 4 on each GPU, every one chosen
  o.microbatches = 2;
  const auto quantized = [&](Recipe r, const char* kernel) {
    o.recipe = r;
    double launches = 0, bytes = 0;
    for (const Kernel& k : synthesize("mixtral-8x7b", o))
      if (k.name.starts_with("layer.moe.experts.gate_up_proj") && k.name.find(kernel) != std::string::npos &&
          k.name.ends_with("(input)")) {
        launches += k.count;
        bytes += k.count * k.bytes;
      }
    return std::pair{launches, bytes};
  };
  const auto delayed = quantized(Recipe::delayed, "te::multi_cast_transpose");
  const auto mx = quantized(Recipe::mxfp8, "te::quantize_mxfp8");
  EXPECT_DOUBLE_EQ(delayed.first, 32 * 2);  // a launch per layer and micro-batch
  EXPECT_DOUBLE_EQ(mx.first, 32 * 2 * 4);   // a launch per local expert besides
  // Per element: BF16 read once, two FP8 copies (delayed); MXFP8 adds its E8M0 scales, one per 32 values.
  EXPECT_DOUBLE_EQ(mx.second / delayed.second, (2 + 2 + 2.0 / 32) / (2 + 2));
}

nlohmann::json step_of(const std::string& args) {
  const auto r = kcast::testing::run_kcast("synth " + args + " --format json -o /dev/null");
  EXPECT_EQ(r.rc, 0) << r.out;
  return nlohmann::json::parse(r.out)[0];
}

TEST(HostIssue, TheStepWaitsForTheExposedIssueAndCudaGraphsRemoveIt) {
  const std::string run =
      "qwen3-30b-a3b --mode train --batch 64 --seq 4096 --dtype fp8 --recipe mxfp8 --framework megatron "
      "--attention flash --master-weights --dp 8 --ep 8 --etp 1 --moe-dispatcher hybridep --gpu B200";
  const auto small = step_of(run + " --microbatches 8");  // one sequence a micro-batch
  const double exposed = small["exposed_host_s"].get<double>();
  EXPECT_GT(exposed, 0);
  EXPECT_GE(small["host_s"].get<double>(), exposed);
  EXPECT_DOUBLE_EQ(small["host_syncs"].get<double>(), 48 * 8);
  // Under CUDA graphs the host issues nothing (and launches cost less): at most the step less the issue.
  const auto graphed = step_of(run + " --microbatches 8 --cuda-graph");
  EXPECT_DOUBLE_EQ(graphed["exposed_host_s"].get<double>(), 0);
  EXPECT_LE(graphed["step_s"].get<double>(), small["step_s"].get<double>() - exposed * (1 - 1e-12));
  // Four sequences a micro-batch issue the same kernels for four times the work: the host shows less.
  const auto large = step_of(run + " --microbatches 2");
  EXPECT_LT(large["exposed_host_s"].get<double>() / large["step_s"].get<double>(),
            exposed / small["step_s"].get<double>());
}

}  // namespace
}  // namespace kcast::synth

namespace kcast::synth {
namespace {

TEST(CudaGraphModules, NamesAreMegatronsAndTheUncapturableOnesAreRefused) {
  EXPECT_EQ(parse_cuda_graph_modules("cuda-graph-modules", "attn,moe_router moe_preprocess"),
            kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess);
  EXPECT_EQ(cuda_graph_modules_string(kGraphMoeRouter | kGraphAttn), "attn,moe_router");
  const auto error = [](const std::string& text) {
    return kcast::testing::input_error_of([&] { parse_cuda_graph_modules("cuda-graph-modules", text); });
  };
  EXPECT_NE(error("moe").find("dropless routing reads its counts on the host"), std::string::npos);
  EXPECT_NE(error("mamba").find("no Mamba layers"), std::string::npos);
  EXPECT_NE(error("attn,core_attn").find("'core_attn' is not one of attn, mlp, moe_router, moe_preprocess"),
            std::string::npos);
  EXPECT_NE(error("moe_preprocess").find("name moe_router too"), std::string::npos);
  EXPECT_NE(error(",").find("name at least one module"), std::string::npos);
  for (const std::string& e : std::vector<std::string>{error("moe"), error("x"), error("")})
    EXPECT_EQ(e.rfind("option '--cuda-graph-modules': ", 0), 0u) << e;
}

// Qwen3-30B-A3B's layer with attn, moe_router and moe_preprocess captured: the rows from the layer's
// input norm to the token counts are one graph forward and one backward, the experts stay eager.
TEST(CudaGraphModules, ACapturedRunCostsOneReplayADirection) {
  SynthOptions o = with_mode(Mode::train, 8, 1024);
  o.attention = AttentionImpl::flash;
  o.framework = Framework::megatron;
  o.dp = 8, o.ep = 8, o.etp = 1;
  o.dtype = DType::fp8, o.recipe = Recipe::mxfp8;
  o.cuda_graph_modules = kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess;
  const std::vector<Kernel> rows = synthesize("qwen3-30b-a3b", o);
  ModelParams params;
  params.context_overhead_us = {{"neusight:add", 20}, {"neusight:linear", 40}, {"neusight:bmm", 30},
                                {"neusight:ln", 35}, {"neusight:softmax", 25}};
  const std::vector<double> eager = cli::launch_host_us(rows, params);
  const std::vector<double> graphed = cli::launch_host_us(rows, params, o.cuda_graph_modules);
  int replays = 0, captured = 0;
  for (size_t r = 0; r < rows.size(); ++r) {
    const bool in = in_cuda_graph(rows[r], o.cuda_graph_modules);
    captured += in;
    if (!in) {
      EXPECT_DOUBLE_EQ(graphed[r], eager[r]) << rows[r].name;
    }
    if (in && graphed[r] > 0) {
      ++replays;
      EXPECT_DOUBLE_EQ(graphed[r], 20) << rows[r].name;  // one launch at the element-wise floor
    }
    if (rows[r].name.find(".experts") != std::string::npos) {
      EXPECT_FALSE(in) << rows[r].name;
    }
    if (rows[r].name.starts_with("layer.attn.flash") || rows[r].name.starts_with("layer.moe.router") ||
        rows[r].name.find(kToHostTag) != std::string::npos) {
      EXPECT_TRUE(in) << rows[r].name;
    }
  }
  EXPECT_GT(captured, 20);
  EXPECT_EQ(replays, 2);
  // Outside the layers nothing is captured, whatever the modules.
  for (const Kernel& k : rows) {
    if (!k.name.starts_with("layer.")) {
      EXPECT_FALSE(in_cuda_graph(k, ~0u)) << k.name;
    }
  }
}

TEST(CudaGraphModules, TheStepIssuesLessAndTheOptionIsMegatronTrainingOnly) {
  const std::string run =
      "qwen3-30b-a3b --mode train --batch 64 --seq 4096 --dtype fp8 --recipe mxfp8 --framework megatron "
      "--attention flash --master-weights --dp 8 --ep 8 --etp 1 --moe-dispatcher hybridep --microbatches 8 --gpu B200";
  const auto eager = step_of(run);
  const auto graphed = step_of(run + " --cuda-graph-modules attn,moe_router,moe_preprocess");
  EXPECT_LT(graphed["host_s"].get<double>(), eager["host_s"].get<double>());
  EXPECT_LT(graphed["exposed_host_s"].get<double>(), eager["exposed_host_s"].get<double>());
  EXPECT_LT(graphed["step_s"].get<double>(), eager["step_s"].get<double>());
  EXPECT_DOUBLE_EQ(graphed["host_syncs"].get<double>(), eager["host_syncs"].get<double>());  // still read on the host
  for (const std::string& bad : {run + " --cuda-graph-modules attn --cuda-graph",
                                 std::string("llama3-8b --mode infer --cuda-graph-modules attn"),
                                 std::string("llama3-8b --mode train --cuda-graph-modules attn")}) {
    const auto r = kcast::testing::run_kcast("synth " + bad + " -o /dev/null", true);
    EXPECT_EQ(r.rc, 2) << bad;
    EXPECT_NE(r.out.find("option '--cuda-graph-modules'"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace kcast::synth
