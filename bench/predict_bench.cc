// Speed of the predictor (reported, never asserted):
//   BM_PredictOne          kernel x GPU cost-model predictions per second on one core, over real
//                          kernels (tests/data/predict/mixed_ops.csv) and ten GPUs;
//   BM_EndToEnd_1Mx10      a 1M-row measured trace (transformer-like, start_us and streams) on ten
//                          GPUs in auto mode: dedupe, transfer, per-class sums and the step replay,
//                          on all cores (the CSV read is timed separately, below);
//   BM_ReadKernelList_1M   reading the same trace from its CSV (io/kernel_list_csv.cc);
//   BM_SynthTrain405B_1024 synthesizing and predicting a Llama-3.1-405B FP8 training step on 1,024
//                          GPUs as Megatron-Bridge lays it out (TP8 PP8 CP2 VP8, 192 micro-batches),
//                          what `kcast synth ... --gpu H100-SXM` does (goal: under 1 s).
// scripts/bench_predict.sh times the whole `kcast predict` command against Python's csv module.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>

#include "io/classifier_rules.h"
#include "io/gpu_database_csv.h"
#include "io/kernel_list_csv.h"
#include "calibrate/model_file.h"
#include "predict/cli/synth_time_report.h"
#include "predict/e2e/predictor.h"
#include "predict/synth/synth.h"

namespace kcast {
namespace {

const char* const kGpus[] = {"A100-SXM4-80GB", "H100-SXM", "H200", "B200", "V100-SXM2-32GB",
                             "T4",             "L4",       "L40S", "A10",  "MI300X"};

std::vector<Target> ten_targets(const LoadedModel& m) {
  std::vector<Target> t;
  for (const char* g : kGpus) {
    const GpuSpec& s = default_gpu_database().resolve(g);
    t.push_back({s.name, m.caps_for(s)});
  }
  return t;
}

// A measured training trace: 48 layers of 4 GEMMs and 6 other kernels, sequence lengths varying.
std::vector<Kernel> synthetic_trace(size_t n) {
  std::mt19937 rnd(42);
  std::uniform_real_distribution<double> jitter(0.95, 1.1);
  const KernelClass other[] = {KernelClass::elementwise, KernelClass::normalization, KernelClass::softmax,
                               KernelClass::attention,   KernelClass::reduction,     KernelClass::communication};
  std::vector<Kernel> rows;
  rows.reserve(n);
  double t = 0;
  const int64_t d = 4096;
  while (rows.size() < n) {
    const int64_t tokens = 4 * (512 << (rows.size() / 5000 % 4));
    for (int layer = 0; layer < 48 && rows.size() < n; ++layer) {
      for (auto [m, nn, kk] : {std::tuple{tokens, 3 * d, d}, {tokens, d, d}, {tokens, 4 * d, d}, {tokens, d, 4 * d}}) {
        Kernel k;
        k.name = "sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n";
        k.cls = KernelClass::gemm;
        k.dtype = DType::bf16;
        k.m = m, k.n = nn, k.k = kk;
        k.derive_from_shape();
        k.duration_us = k.flops / 250e6 * jitter(rnd);
        k.gpu = "A100-SXM4-80GB";
        k.start_us = t;
        k.stream = 7;
        t += k.duration_us + (rnd() % 4 == 0 ? 4.0 : 0.0);
        rows.push_back(std::move(k));
      }
      for (KernelClass c : other) {
        Kernel k;
        k.name = "other";
        k.cls = c;
        k.dtype = DType::bf16;
        k.bytes = double(tokens) * d * 2 * 3;
        k.duration_us = std::max(2.5, k.bytes / 1.6e6) * jitter(rnd);
        k.gpu = "A100-SXM4-80GB";
        k.start_us = t;
        k.stream = c == KernelClass::communication ? 13 : 7;
        t += k.duration_us + (rnd() % 3 == 0 ? 2.0 : 0.0);
        rows.push_back(std::move(k));
      }
    }
  }
  rows.resize(n);
  return rows;
}

void BM_PredictOne(benchmark::State& state) {
  const LoadedModel& m = default_model();
  const std::vector<Kernel> rows =
      read_kernel_list(KCAST_SOURCE_DIR "/tests/data/predict/mixed_ops.csv",
                       KernelListOptions{&default_gpu_database(), &default_classifier()});
  const std::vector<Target> targets = ten_targets(m);
  size_t i = 0, g = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(m.model.predict(rows[i], targets[g].caps));
    if (++i == rows.size()) i = 0, g = (g + 1) % targets.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["predictions/s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_PredictOne);

void BM_EndToEnd_1Mx10(benchmark::State& state) {
  const LoadedModel& m = default_model();
  const std::vector<Kernel> rows = synthetic_trace(1000000);
  const std::vector<Target> targets = ten_targets(m);
  for (auto _ : state) {
    const PreparedWorkload w = prepare_workload(rows, m, default_gpu_database(), E2eOptions{}, "synthetic");
    benchmark::DoNotOptimize(predict_targets(w, targets));
  }
  const double kernels = double(rows.size()) * targets.size() * state.iterations();
  state.counters["kernel-GPU/s"] = benchmark::Counter(kernels, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EndToEnd_1Mx10)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

void BM_ReadKernelList_1M(benchmark::State& state) {
  const std::string path = "/tmp/kcast_predict_bench_1m.csv";
  write_kernel_list_file(synthetic_trace(1000000), path);
  for (auto _ : state)
    benchmark::DoNotOptimize(
        read_kernel_list(path, KernelListOptions{&default_gpu_database(), &default_classifier()}));
  state.counters["rows/s"] = benchmark::Counter(1e6 * state.iterations(), benchmark::Counter::kIsRate);
  std::remove(path.c_str());
}
void BM_SynthTrain405B_1024(benchmark::State& state) {
  synth::SynthOptions o;
  o.mode = synth::Mode::train;
  o.batch = 1536, o.seq = 8192, o.dtype = DType::fp8, o.recipe = synth::Recipe::delayed;
  o.framework = synth::Framework::megatron, o.attention = synth::AttentionImpl::flash, o.master_weights = true;
  o.tp = 8, o.pp = 8, o.cp = 2, o.dp = 8, o.microbatches = 192, o.virtual_stages = 8, o.sequence_parallel = true;
  o.zero = 1;
  const LoadedModel& m = default_model();
  const GpuDatabase& db = default_gpu_database();
  const std::vector<const GpuSpec*> gpus{&db.resolve("H100-SXM")};
  for (auto _ : state) {
    synth::Footprint fp;
    const std::vector<Kernel> ks = synth::synthesize("llama3.1-405b", o, &fp);
    benchmark::DoNotOptimize(cli::time_synth_step(ks, fp, o, gpus, m, db, false));
  }
}
BENCHMARK(BM_SynthTrain405B_1024)->Unit(benchmark::kMillisecond);

BENCHMARK(BM_ReadKernelList_1M)->Unit(benchmark::kMillisecond)->Iterations(2)->UseRealTime();

}  // namespace
}  // namespace kcast

BENCHMARK_MAIN();
