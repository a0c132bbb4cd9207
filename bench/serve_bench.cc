// `kcast serve`'s speed (docs/speed.md; goal: 10,000 requests well under a second):
//   BM_Serve10k_Inf    10,000 requests of 1,024 in / 256 out sent at once to Llama 3 70B FP8 on two
//                      H100s (vLLM's scheduler): the iteration-cost grid built from nothing, then the
//                      simulation, as one `kcast serve` run does;
//   BM_Serve10k_Conc64 the same requests in a closed loop of 64 clients (more, smaller iterations).
#include <benchmark/benchmark.h>

#include "calibrate/model_file.h"
#include "io/gpu_database_csv.h"
#include "predict/serve/engine.h"
#include "predict/serve/iteration_cost.h"
#include "predict/serve/simulator.h"
#include "predict/serve/workload.h"

namespace kcast::serve {
namespace {

void run(benchmark::State& state, const Load& load) {
  synth::SynthOptions o;
  o.runtime = synth::Runtime::serving;
  o.attention = synth::AttentionImpl::flash;
  o.dtype = DType::fp8;
  o.kv_cache_dtype = DType::fp8;
  o.tp = 2;
  const GpuDatabase& db = default_gpu_database();
  const GpuSpec& g = db.resolve("H100-SXM");
  const EngineConfig e = engine_defaults("vllm", g);
  const StepSynthesizer step = [](const synth::SynthOptions& so, synth::Footprint* f) {
    return synth::synthesize("llama3-70b", so, f);
  };
  std::vector<Request> reqs = fixed_requests(10000, 1024, 256);
  assign_arrivals(reqs, load, 0);
  int64_t iterations = 0, steps = 0;
  for (auto _ : state) {
    IterationCost cost(step, o, g, default_model(), db, e.graph_max_tokens);
    CostTimer timer(cost);
    const SimResult r = simulate(reqs, load, e, 200000, timer);
    iterations = r.stats.iterations;
    steps = cost.synthesized_steps();
    benchmark::DoNotOptimize(r.stats.end_s);
  }
  state.counters["iterations"] = double(iterations);
  state.counters["synthesized_steps"] = double(steps);
  state.counters["requests/s"] = benchmark::Counter(1e4 * double(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_Serve10k_Inf(benchmark::State& state) {
  Load l;
  l.infinite_rate = true;
  run(state, l);
}
void BM_Serve10k_Conc64(benchmark::State& state) {
  Load l;
  l.concurrency = 64;
  run(state, l);
}
BENCHMARK(BM_Serve10k_Inf)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Serve10k_Conc64)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace kcast::serve

BENCHMARK_MAIN();
