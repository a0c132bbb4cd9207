// Kernel-launch overhead: the interval between back-to-back launches of an empty kernel on one stream
// (the floor under every tiny kernel in a trace), the same with a full grid of empty blocks, the same
// for kernels replayed from a CUDA graph, and the host-side latency of launch + synchronize. Also the
// two helpers the driver needs before measuring: a probe that the binary has code for the device, and
// a spin-up that raises the clocks.
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "microbench/benchmarks.h"
#include "microbench/timing.h"

namespace kcast::microbench {

namespace {

__global__ void empty_kernel() {}

__global__ void spin_kernel(float* out, int iters) {
  float x = threadIdx.x * 1e-3f;
  for (int i = 0; i < iters; ++i) x = fmaf(x, 0.999999f, 1e-6f);
  if (x == -1.0f) out[0] = x;
}

}  // namespace

cudaError_t probe_kernel_image() {
  cudaFuncAttributes attr{};
  cudaError_t e = cudaFuncGetAttributes(&attr, empty_kernel);
  cudaGetLastError();  // clear it; the caller reports
  return e;
}

void spin_up(BenchContext& ctx, double seconds) {
  DeviceBuffer sink(sizeof(float));
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
    spin_kernel<<<ctx.prop.multiProcessorCount * 4, 256>>>(sink.get<float>(), 1 << 14);
    check(cudaDeviceSynchronize(), "spin-up kernel");
  }
}

void run_launch_overhead(BenchContext& ctx) {
  Timer timer(ctx);
  TimingOptions opt;
  opt.max_seconds = ctx.point_seconds();
  const int n = 1000;  // launches per timed unit, so event resolution is irrelevant
  const int full_grid = ctx.prop.multiProcessorCount;

  const Timing t1 = timer.measure([&](cudaStream_t s) {
    for (int i = 0; i < n; ++i) empty_kernel<<<1, 32, 0, s>>>();
  }, opt);
  ctx.add(Row{"launch_interval", "", "", t1.seconds / n * 1e6, "us", t1.spread,
              "empty kernel grid=1 block=32, " + std::to_string(n) + " back-to-back launches on one stream"});

  const Timing t2 = timer.measure([&](cudaStream_t s) {
    for (int i = 0; i < n; ++i) empty_kernel<<<full_grid, 256, 0, s>>>();
  }, opt);
  ctx.add(Row{"launch_interval_fullgrid", "", "", t2.seconds / n * 1e6, "us", t2.spread,
              "empty kernel grid=" + std::to_string(full_grid) + " block=256"});

  // The same n launches captured once into a graph and replayed.
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  check(cudaStreamBeginCapture(timer.stream(), cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  for (int i = 0; i < n; ++i) empty_kernel<<<1, 32, 0, timer.stream()>>>();
  check(cudaStreamEndCapture(timer.stream(), &graph), "cudaStreamEndCapture");
  check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  const Timing t3 =
      timer.measure([&](cudaStream_t s) { check(cudaGraphLaunch(exec, s), "cudaGraphLaunch"); }, opt);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  ctx.add(Row{"launch_interval_graph", "", "", t3.seconds / n * 1e6, "us", t3.spread,
              "empty kernel grid=1 block=32, " + std::to_string(n) + " kernel nodes in one CUDA graph"});

  // Launch + cudaStreamSynchronize, host wall clock: what a framework pays when it waits on a kernel.
  const int reps = ctx.quick ? 200 : 1000;
  std::vector<double> samples;
  for (int round = 0; round < 10; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) {
      empty_kernel<<<1, 32, 0, timer.stream()>>>();
      check(cudaStreamSynchronize(timer.stream()), "cudaStreamSynchronize");
    }
    samples.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps);
  }
  check(cudaGetLastError(), "kernel launch");
  double mean = 0, var = 0;
  for (double s : samples) mean += s;
  mean /= double(samples.size());
  for (double s : samples) var += (s - mean) * (s - mean);
  const double spread = std::sqrt(var / double(samples.size() - 1)) / mean;
  ctx.add(Row{"launch_latency_sync", "", "", mean * 1e6, "us", spread,
              "empty kernel launch + cudaStreamSynchronize, host wall clock"});
}

}  // namespace kcast::microbench
