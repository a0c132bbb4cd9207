// FP32 and FP64 FMA throughput of the SIMT cores: a full-occupancy grid where every thread runs
// several independent FMA chains (enough instruction-level parallelism to hide FMA latency), with the
// iteration count scaled so one launch lasts a few milliseconds (FP64 is 1/64 rate on some GPUs).
#include <algorithm>
#include <string>

#include "microbench/benchmarks.h"
#include "microbench/timing.h"

namespace kcast::microbench {

namespace {

constexpr int kBlock = 256;

template <typename T, int kChains>
__global__ void fma_kernel(T* out, int iters, T b, T c) {
  T acc[kChains];
#pragma unroll
  for (int j = 0; j < kChains; ++j) acc[j] = T(threadIdx.x + j) * T(1e-3);
#pragma unroll 4
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < kChains; ++j) acc[j] = fma(acc[j], b, c);
  }
  T s = 0;
#pragma unroll
  for (int j = 0; j < kChains; ++j) s += acc[j];
  if (s == T(-1)) out[0] = s;  // never true; keeps the chains alive
}

template <typename T, int kChains>
void measure_fma(BenchContext& ctx, Timer& timer, const char* benchmark, T* out) {
  int bps = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, fma_kernel<T, kChains>, kBlock, 0),
        "occupancy");
  const int grid = std::max(bps, 1) * ctx.prop.multiProcessorCount;
  // b slightly below 1 and c small keep the values bounded however long the chain runs.
  const T b = T(0.999999), c = T(1e-6);
  const int probe_iters = 256;
  const double probe = timer.probe(
      [&](cudaStream_t s) { fma_kernel<T, kChains><<<grid, kBlock, 0, s>>>(out, probe_iters, b, c); });
  const int iters = int(scaled_iters(probe_iters, probe, ctx.quick ? 2e-3 : 5e-3, 256, 1 << 24)) & ~3;
  TimingOptions opt;
  opt.max_seconds = ctx.point_seconds();
  const Timing t = timer.measure(
      [&](cudaStream_t s) { fma_kernel<T, kChains><<<grid, kBlock, 0, s>>>(out, iters, b, c); }, opt);
  const double flops = 2.0 * double(grid) * kBlock * double(iters) * kChains;
  ctx.add(Row{benchmark, "", "", flops / t.seconds / 1e12, "TFLOP/s", t.spread,
              "chains=" + std::to_string(kChains) + " grid=" + std::to_string(grid) +
                  " block=" + std::to_string(kBlock) + " iters=" + std::to_string(iters)});
}

}  // namespace

void run_fma_throughput(BenchContext& ctx) {
  DeviceBuffer sink(sizeof(double));
  Timer timer(ctx);
  measure_fma<float, 16>(ctx, timer, "fma_fp32", sink.get<float>());
  measure_fma<double, 8>(ctx, timer, "fma_fp64", sink.get<double>());
}

}  // namespace kcast::microbench
