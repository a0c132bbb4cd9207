#include "model/inferred_work.h"

#include <algorithm>
#include <cmath>

#include "model/ascii_lower.h"

namespace kcast {

namespace {

// GEMM-class kernels that stream their operands instead of reusing them from shared memory: cuBLAS's
// matrix-vector kernels (gemv2T_kernel_val, gemvx, gemvNSP: a batch-1 linear layer, as in LLM
// decoding) and the split-K reduction (splitKreduce_kernel) are bound by bandwidth, not tensor rate.
bool streams_operands(std::string_view name) {
  return contains_ci(name, "gemv") || contains_ci(name, "splitkreduce") || contains_ci(name, "splitk_reduce");
}

}  // namespace

bool infers_flops(const Kernel& k) {
  return (k.cls == KernelClass::gemm && !streams_operands(k.name)) || k.cls == KernelClass::conv ||
         k.cls == KernelClass::attention;
}

Kernel with_inferred_work(const Kernel& k, double gpu_time_us, const GpuCaps& source, const CostModel& model) {
  // A collective's bytes cross the link: without a link figure the model has nothing to scale them by.
  if (!lacks_work(k) || !(gpu_time_us > 0) || (k.cls == KernelClass::communication && !(source.link_gbps > 0)))
    return k;
  const bool flops = infers_flops(k);
  Kernel w = k;
  auto time_of = [&](double work) {
    (flops ? w.flops : w.bytes) = work;
    return model.predict(w, source).time_us;
  };
  // The least work a kernel moves (one 4-byte element, one FMA): a measurement no longer than its
  // prediction is launch- or latency-bound, and its work cannot be read from its time.
  const double least = flops ? 2.0 : 4.0;
  if (gpu_time_us <= time_of(least)) return k;
  // First guess from the GPU's nominal rate, then the secant method: above the floor the model's
  // time is close to affine in the work (rate plus latency), so a few steps reach the measurement.
  const int gd = source.tensor_tflops[int(k.dtype)] > 0 ? int(k.dtype) : int(DType::fp32);
  const double bw = k.cls == KernelClass::communication ? source.link_gbps : source.dram_bw_gbps;
  const double rate = flops ? std::max(source.tensor_tflops[gd], 1e-3) * 1e6 : std::max(bw, 1.0) * 1e3;
  double w0 = gpu_time_us * rate, t0 = time_of(w0);
  double w1 = 1.1 * w0, t1 = time_of(w1);
  for (int i = 0; i < 8 && std::fabs(t1 - gpu_time_us) > 1e-3 * gpu_time_us; ++i) {
    const double slope = (t1 - t0) / (w1 - w0);
    // Flat (deep under the floor) or decreasing: step by the time ratio instead.
    double next = slope > 0 ? w1 + (gpu_time_us - t1) / slope : w1 * gpu_time_us / t1;
    if (!(next > least)) next = std::max(least, w1 / 4);
    w0 = w1, t0 = t1;
    w1 = next, t1 = time_of(w1);
  }
  (flops ? w.flops : w.bytes) = w1;
  return w;
}

}  // namespace kcast
