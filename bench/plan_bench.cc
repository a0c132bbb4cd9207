// `kcast plan`'s speed (docs/speed.md; goal: thousands of layouts in seconds):
//   BM_PlanTrain70B_256  every layout of Llama 3 70B BF16 (Megatron) on 256 H100s at a global batch of
//                        512 x 8192 tokens, synthesized, sized and predicted on all cores.
//   BM_PlanServe70B_8    every serving configuration of Llama 3 70B FP8 on 8 H100s (vLLM; replicas, token
//                        budgets, disaggregated prefill / decode splits), 1,024 in / 256 out, each at the
//                        highest closed-loop load meeting p99 TTFT 500 ms and ITL 30 ms, on all cores.
#include <benchmark/benchmark.h>

#include "calibrate/model_file.h"
#include "io/gpu_database_csv.h"
#include "predict/plan/plan_serve.h"
#include "predict/plan/plan_train.h"
#include "predict/serve/engine.h"

namespace kcast::plan {
namespace {

void BM_PlanTrain70B_256(benchmark::State& state) {
  LayoutSpace s;
  s.gpus = 256, s.batch = 512, s.seq = 8192, s.layers = 80, s.heads = 64, s.kv_heads = 8;
  const auto layouts = enumerate_train_layouts(s);
  synth::SynthOptions o;
  o.seq = 8192, o.dtype = DType::bf16, o.attention = synth::AttentionImpl::flash, o.master_weights = true;
  o.framework = synth::Framework::megatron, o.zero = 1;
  const StepSynthesizer step = [](const synth::SynthOptions& so, synth::Footprint* f) {
    return synth::synthesize("llama3-70b", so, f);
  };
  const GpuDatabase& db = default_gpu_database();
  for (auto _ : state)
    benchmark::DoNotOptimize(plan_train(step, o, layouts, s.batch, db.resolve("H100-SXM"), default_model(), db));
  state.counters["layouts"] = double(layouts.size());
  state.counters["layouts/s"] =
      benchmark::Counter(double(layouts.size()) * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PlanTrain70B_256)->Unit(benchmark::kMillisecond)->UseRealTime();

// A mixture with latent attention, as Megatron-Bridge runs it: DeepSeek-V3 MXFP8 on 256 B200s, 4,096 x
// 4,096 tokens, every layout (expert parallelism, folding, interleaving up to a layer a chunk), those that
// do not fit without recomputation tried with the recipes' module sets before full recomputation.
void BM_PlanTrainDeepSeekV3_256(benchmark::State& state) {
  LayoutSpace s;
  s.gpus = 256, s.batch = 4096, s.seq = 4096, s.layers = 61, s.heads = 128, s.kv_heads = 128, s.experts = 256;
  const auto layouts = enumerate_train_layouts(s);
  synth::SynthOptions o;
  o.seq = 4096, o.dtype = DType::fp8, o.recipe = synth::Recipe::mxfp8, o.attention = synth::AttentionImpl::flash;
  o.master_weights = true, o.framework = synth::Framework::megatron, o.zero = 1;
  o.etp = 1, o.moe_dispatcher = synth::MoeDispatcher::hybridep, o.mtp_layers = 1;
  const StepSynthesizer step = [](const synth::SynthOptions& so, synth::Footprint* f) {
    return synth::synthesize("deepseek-v3", so, f);
  };
  const GpuDatabase& db = default_gpu_database();
  const RecomputeLadder ladder = {recompute_module_ladder(*synth::zoo_config("deepseek-v3")), s.layers};
  for (auto _ : state)
    benchmark::DoNotOptimize(
        plan_train(step, o, layouts, s.batch, db.resolve("B200"), default_model(), db, 0, 0.9, ladder));
  state.counters["layouts"] = double(layouts.size());
  state.counters["layouts/s"] =
      benchmark::Counter(double(layouts.size()) * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PlanTrainDeepSeekV3_256)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);

void BM_PlanServe70B_8(benchmark::State& state) {
  ServeSpace s;
  s.gpus = 8, s.disaggregated = true, s.token_budgets = {2048, 8192};
  const auto layouts = enumerate_serve_layouts(s);
  ServeGoal g;
  g.input = 1024, g.output = 256, g.slo.ttft_ms = 500, g.slo.itl_ms = 30;
  synth::SynthOptions o;
  o.runtime = synth::Runtime::serving;
  o.serving_kernels = serve::engine_kernels("vllm");
  o.attention = synth::AttentionImpl::flash;
  o.dtype = DType::fp8;
  const serve::StepSynthesizer step = [](const synth::SynthOptions& so, synth::Footprint* f) {
    return synth::synthesize("llama3-70b", so, f);
  };
  const GpuDatabase& db = default_gpu_database();
  const GpuSpec& gpu = db.resolve("H100-SXM");
  for (auto _ : state)
    benchmark::DoNotOptimize(plan_serve(step, o, layouts, g, "vllm", gpu, default_model(), db, "llama3-70b"));
  state.counters["layouts"] = double(layouts.size());
  state.counters["layouts/s"] =
      benchmark::Counter(double(layouts.size()) * double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PlanServe70B_8)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace kcast::plan

BENCHMARK_MAIN();
