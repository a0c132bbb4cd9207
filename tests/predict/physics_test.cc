// Physics of the what-if knobs over real kernel lists: giving a GPU twice as much of any resource
// (launch overhead and memory latency: half as much) never slows a workload down and never speeds it up more than 2x.
// Checked on the mixed_ops fixture (real measured kernels: NeuSight FP32 ops, aiconfigurator
// BF16/FP8 GEMMs), the same with their work erased (an Nsight Systems trace) and a synthetic transformer-like list, on several GPUs, in absolute and auto mode.
// Per-kernel violations are reported in the failure message (kernel, times), since they point at
// the cost model rather than at the predictor. Every knob is held to the bounds per kernel too,
// l2_size included: the L2 hit share saturates (model/cost_model.cc memory_time), so a working
// set that starts to fit is at most twice as fast.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "predict/synth/synth.h"
#include "predict/whatif/knobs.h"
#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

using namespace kcast::testing;

std::vector<Kernel> transformer_like() {
  std::vector<Kernel> rows;
  for (int64_t tokens : {128, 2048, 16384})
    for (int64_t d : {1024, 4096}) {
      for (DType dt : {DType::bf16, DType::fp16, DType::fp32}) {
        rows.push_back(gemm(tokens, 3 * d, d, dt));
        rows.push_back(gemm(tokens, d, d, dt));
        rows.push_back(gemm(tokens, 4 * d, d, dt));
        rows.push_back(gemm(tokens, d, 4 * d, dt));
      }
      rows.push_back(streaming(tokens * d * 2.0 * 3));
      rows.push_back(streaming(tokens * d * 2.0 * 2, KernelClass::normalization));
      rows.push_back(streaming(tokens * 16.0 * tokens * 2, KernelClass::softmax));
    }
  return rows;
}

const std::vector<Knob> kKnobsChecked = {Knob::dram_bw,      Knob::l2_bw,    Knob::l2_size, Knob::tensor_flops,
                                         Knob::vector_flops, Knob::sm_count, Knob::clock,   Knob::launch_overhead,
                                         Knob::link_bw,      Knob::mem_latency, Knob::net_bw};

// Checks the bound on the workload total and on every distinct kernel; returns readable violations.
std::vector<std::string> check(const std::vector<Kernel>& rows, const std::string& gpu, PredictMode mode,
                               bool cuda_graph) {
  std::vector<std::string> bad;
  const GpuSpec& spec = db().resolve(gpu);
  const GpuCaps base = model().caps_for(spec);
  E2eOptions o;
  o.mode = mode;
  o.cuda_graph = cuda_graph;
  const PreparedWorkload w = prepare_workload(rows, model(), db(), o, "rows");
  const std::vector<KernelPrediction> p0 = predict_unique(w, base);
  const GpuPrediction g0 = evaluate_target(w, spec.name, base, p0);
  for (const auto& info : kKnobs) {
    if (std::find(kKnobsChecked.begin(), kKnobsChecked.end(), info.knob) == kKnobsChecked.end()) continue;
    if (info.knob == Knob::tensor_flops && knob_value(base, info.knob) <= 0) continue;  // no tensor cores
    if ((info.knob == Knob::link_bw || info.knob == Knob::net_bw) && knob_value(base, info.knob) <= 0)
      continue;  // no link / network figure
    GpuCaps c = base;
    const double factor = info.knob == Knob::launch_overhead || info.knob == Knob::mem_latency ? 0.5 : 2.0;
    scale_knob(c, info.knob, factor, "--scale");
    const std::vector<KernelPrediction> p1 = predict_unique(w, c);
    const GpuPrediction g1 = evaluate_target(w, spec.name, c, p1);
    std::ostringstream where;
    where << gpu << " " << to_string(mode) << (cuda_graph ? " graphs" : "") << " " << info.name << " x" << factor
          << ": ";
    if (g1.step_us > g0.step_us * (1 + 1e-12))
      bad.push_back(where.str() + "workload slower " + std::to_string(g0.step_us) + " -> " + std::to_string(g1.step_us));
    if (g1.step_us < g0.step_us / 2 * (1 - 1e-12))
      bad.push_back(where.str() + "workload more than 2x faster " + std::to_string(g0.step_us) + " -> " +
                    std::to_string(g1.step_us));
    for (size_t u = 0; u < p0.size(); ++u) {
      const double a = p0[u].time_us, b = p1[u].time_us;
      if (b > a * (1 + 1e-12) || b < a / 2 * (1 - 1e-12)) {
        const Kernel& k = w.kernels[u];
        std::ostringstream s;
        s << where.str() << "kernel " << to_string(k.cls) << " " << to_string(k.dtype) << " b" << k.batch << " m" << k.m
          << " n" << k.n << " k" << k.k << " flops " << k.flops << " bytes " << k.bytes << ": " << a << " -> " << b
          << " us";
        bad.push_back(s.str());
      }
    }
  }
  return bad;
}

void expect_physical(const std::vector<Kernel>& rows) {
  std::vector<std::string> all;
  for (const char* gpu : {"V100-PCIe-32GB", "T4", "A100-SXM4-80GB", "L4", "H100-SXM", "P100-PCIe-16GB", "B200"})
    for (PredictMode m : {PredictMode::absolute, PredictMode::automatic})
      for (bool graphs : {false, true}) {  // graph replay too: a smaller floor must not lengthen it
        auto v = check(rows, gpu, m, graphs);
        all.insert(all.end(), v.begin(), v.end());
      }
  std::string msg;
  for (size_t i = 0; i < all.size() && i < 40; ++i) msg += all[i] + "\n";
  EXPECT_TRUE(all.empty()) << all.size() << " violations, first ones:\n" << msg;
}

TEST(Physics, DoublingAResourceOnRealKernelsIsBetweenNoChangeAnd2x) { expect_physical(fixture()); }

TEST(Physics, DoublingAResourceOnTransformerShapesIsBetweenNoChangeAnd2x) { expect_physical(transformer_like()); }

// The real kernels again with their work erased, as an Nsight Systems trace records them: in auto mode
// each measured row moves through the knobs as the work its measurement implies (model/inferred_work.h).
TEST(Physics, DoublingAResourceOnKernelsWithoutWorkIsBetweenNoChangeAnd2x) {
  std::vector<Kernel> rows = fixture();
  for (Kernel& k : rows) k.batch = 1, k.m = k.n = k.k = 0, k.flops = k.bytes = kUnknown;
  const PreparedWorkload w = prepare_workload(rows, model(), db(), E2eOptions{}, "rows");
  ASSERT_GT(w.inferred_work_rows, rows.size() / 2);
  EXPECT_LT(w.unknown_work_rows, rows.size() / 10);  // nearly every row was measured
  expect_physical(rows);
}

// Synthesized steps with kernels the fixtures lack: a mixture of experts under expert parallelism
// (all-to-alls, the per-expert host syncs, gathers and scatter-adds), the same served in FP8 and FP4
// (grouped GEMMs), a speculative verification step, DeepSeek-V3 (latent attention, eager and the serving
// path's latent decode), serving-stack and linear-attention steps, and a CNN training step
// (convolutions, batch norm). Each with and without CUDA-graph replay.
TEST(Physics, DoublingAResourceOnSynthesizedStepsIsBetweenNoChangeAnd2x) {
  synth::SynthOptions train;
  train.mode = synth::Mode::train;
  train.batch = 16;
  train.seq = 512;
  train.dp = train.ep = 8;
  expect_physical(synth::synthesize("mixtral-8x7b", train));
  synth::SynthOptions fsdp = train;  // ZeRO-3: every section's parameters gathered, gradients scattered
  fsdp.ep = 1;
  fsdp.zero = 3;
  expect_physical(synth::synthesize("llama3-8b", fsdp));
  synth::SynthOptions nodes = fsdp;  // the same over nodes of 4 GPUs: half of each ring through the NICs
  nodes.gpus_per_node = 4;
  expect_physical(synth::synthesize("llama3-8b", nodes));
  synth::SynthOptions ring = train;  // context parallelism: ring attention's K|V exchanges
  ring.dp = 2, ring.ep = 1, ring.cp = 4;
  ring.attention = synth::AttentionImpl::flash;
  expect_physical(synth::synthesize("llama3-8b", ring));
  synth::SynthOptions sp = fsdp;  // Megatron sequence parallelism: all-gathers and reduce-scatters
  sp.zero = 0;
  sp.dp = 1;
  sp.tp = 4;
  sp.sequence_parallel = true;
  expect_physical(synth::synthesize("llama3-8b", sp));
  synth::SynthOptions serve;
  serve.mode = synth::Mode::decode;
  serve.batch = 32;
  serve.seq = 2048;
  serve.dtype = DType::fp8;
  expect_physical(synth::synthesize("mixtral-8x7b", serve));
  serve.dtype = DType::fp4;  // NVFP4: FP4 units on Blackwell, weight-only on the 16-bit ones elsewhere
  expect_physical(synth::synthesize("mixtral-8x7b", serve));
  synth::SynthOptions verify = serve;  // speculative decoding's verification of 3 draft tokens
  verify.dtype = DType::bf16;
  verify.decode_tokens = 4;
  expect_physical(synth::synthesize("llama3-8b", verify));
  verify.attention = synth::AttentionImpl::flash;  // and reading an FP8 KV cache
  verify.kv_cache_dtype = DType::fp8;
  expect_physical(synth::synthesize("llama3-8b", verify));
  serve.dtype = DType::fp8;
  synth::SynthOptions mla = serve;  // DeepSeek-V3's latent attention and group-limited router, FP8 and bf16
  mla.seq = 512;
  expect_physical(synth::synthesize("deepseek-v3", mla));
  mla.attention = synth::AttentionImpl::flash;  // the serving path: latent cache, absorbed bmms
  expect_physical(synth::synthesize("deepseek-v3", mla));
  mla.dtype = DType::bf16;
  mla.mode = synth::Mode::infer;
  mla.batch = 2;
  expect_physical(synth::synthesize("deepseek-v3", mla));
  // Llama 4: every expert on every token in eager (batched GEMMs over all experts), routed in FP8.
  synth::SynthOptions l4 = mla;
  l4.seq = 1024;
  expect_physical(synth::synthesize("llama4-maverick", l4));
  l4 = serve;
  expect_physical(synth::synthesize("llama4-scout", l4));
  l4 = mla;  // GPT-OSS: sliding-window layers, attention sinks, the clamped gate, all experts in eager
  l4.seq = 1024;
  expect_physical(synth::synthesize("gpt-oss-20b", l4));
  // A serving stack's decode step (fused kernels, paged cache) and a Gated DeltaNet hybrid's, with its
  // recurrent-state kernels.
  synth::SynthOptions stack = verify;
  stack.runtime = synth::Runtime::serving;
  stack.decode_tokens = 1;
  stack.kv_cache_dtype.reset();
  expect_physical(synth::synthesize("llama3-8b", stack));
  stack.seq = 1024;
  expect_physical(synth::synthesize("qwen3-next-80b-a3b", stack));
  synth::SynthOptions prompt = stack;
  prompt.mode = synth::Mode::infer;
  prompt.batch = 2;
  prompt.runtime = synth::Runtime::eager;
  expect_physical(synth::synthesize("qwen3-next-80b-a3b", prompt));
  synth::SynthOptions cnn;
  cnn.mode = synth::Mode::train;
  cnn.batch = 32;
  expect_physical(synth::synthesize("resnet152", cnn));
}

}  // namespace
}  // namespace kcast
