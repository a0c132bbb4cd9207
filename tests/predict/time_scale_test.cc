// The time scale, pinned two-sided against figures derived outside the predictor: a large GEMM runs
// at the GPU's sustained tensor rate (`kcast gpus NAME`'s "GEMM rate at boost"), a large streaming
// kernel at its sustained DRAM bandwidth, and a synthesized training step's GEMMs at that rate over the
// FLOPs synth counts for them. Each bound is tight enough that a 1.2x error in the GEMM compute term
// or in memory time fails it (#42: a planted error used to pass every predictor, synth and CLI test).
#include <gtest/gtest.h>

#include "calibrate/model_file.h"
#include "io/gpu_database_csv.h"
#include "predict/cli/synth_time_report.h"
#include "predict/e2e/predictor.h"
#include "predict/synth/synth.h"

namespace kcast {
namespace {

// One GPU's prediction of `rows` (absolute mode, eager launches).
GpuPrediction predicted(const std::vector<Kernel>& rows, const char* gpu) {
  const GpuDatabase& db = default_gpu_database();
  const LoadedModel& lm = default_model();
  E2eOptions o;
  o.mode = PredictMode::absolute;
  const PreparedWorkload w = prepare_workload(rows, lm, db, o, "<test>");
  return predict_targets(w, {{gpu, lm.caps_for(db.resolve(gpu))}}).front();
}

GpuCaps caps_of(const char* gpu) { return default_model().caps_for(default_gpu_database().resolve(gpu)); }

TEST(TimeScale, ALargeGemmRunsAtTheSustainedTensorRate) {
  for (const char* gpu : {"H100-SXM", "A100-SXM4-80GB", "L40S"}) {
    Kernel k;
    k.name = "gemm_bf16";
    k.cls = KernelClass::gemm;
    k.dtype = DType::bf16;
    k.m = k.n = k.k = 8192;
    k.derive_from_shape();
    const GpuCaps c = caps_of(gpu);
    // The rate a long GEMM settles at: boost rate x the power-limit clock fraction.
    const double rate = c.tensor_tflops[int(DType::bf16)] * c.gemm_derate[int(DType::bf16)] * 1e12;
    const double ideal_us = 2.0 * 8192 * 8192 * 8192 / rate * 1e6;
    const double t = predicted({k}, gpu).step_us;
    EXPECT_GT(t, 0.95 * ideal_us) << gpu;
    EXPECT_LT(t, 1.12 * ideal_us) << gpu << ": 64 x 64 tiles of 128 in waves lose a few percent, no more";
  }
}

TEST(TimeScale, ALargeStreamingKernelRunsAtTheSustainedBandwidth) {
  for (const char* gpu : {"H100-SXM", "A100-SXM4-80GB", "MI300X"}) {
    Kernel k;
    k.name = "vectorized_elementwise_kernel";
    k.cls = KernelClass::elementwise;
    k.dtype = DType::bf16;
    const double elems = 512.0 * 1024 * 1024;  // a 1 GiB bf16 tensor read and one written
    k.flops = elems;
    k.bytes = 2 * 2 * elems;
    const GpuCaps c = caps_of(gpu);
    const double ideal_us = k.bytes / (c.dram_bw_gbps * 1e9) * 1e6;
    const double t = predicted({k}, gpu).step_us;
    EXPECT_GT(t, 0.97 * ideal_us) << gpu;
    EXPECT_LT(t, 1.1 * ideal_us) << gpu;
  }
}

TEST(TimeScale, ASynthesizedStepsGemmsRunAtTheTensorRate) {
  // Llama 3 8B training, 4 x 4096 tokens, BF16, flash attention: its GEMMs are large (M = 16k tokens),
  // so together they take their FLOPs at the sustained rate, within the tiles' waste.
  synth::SynthOptions o;
  o.mode = synth::Mode::train;
  o.batch = 4;
  o.seq = 4096;
  o.dtype = DType::bf16;
  o.attention = synth::AttentionImpl::flash;
  synth::Footprint fp;
  const std::vector<Kernel> ks = synth::synthesize("llama3-8b", o, &fp);
  double gemm_flops = 0;
  for (const Kernel& k : ks)
    if (k.cls == KernelClass::gemm) gemm_flops += k.count * k.flops;
  const GpuCaps c = caps_of("H100-SXM");
  const double rate = c.tensor_tflops[int(DType::bf16)] * c.gemm_derate[int(DType::bf16)] * 1e12;
  const double ideal_us = gemm_flops / rate * 1e6;
  const double t = predicted(ks, "H100-SXM").by_class(KernelClass::gemm);
  EXPECT_GT(t, 0.97 * ideal_us);
  EXPECT_LT(t, 1.15 * ideal_us);
  // And its element-wise rows stream at the sustained bandwidth: their bytes at it, within the fixed
  // costs of the small ones.
  double ew_bytes = 0;
  for (const Kernel& k : ks)
    if (k.cls == KernelClass::elementwise) ew_bytes += k.count * k.bytes;
  const double ew_ideal_us = ew_bytes / (c.dram_bw_gbps * 1e9) * 1e6;
  const double ew = predicted(ks, "H100-SXM").by_class(KernelClass::elementwise);
  EXPECT_GT(ew, 0.97 * ew_ideal_us);
  EXPECT_LT(ew, 1.15 * ew_ideal_us);
}

}  // namespace
}  // namespace kcast
