// kcast-microbench: runs the microbenchmark suite on one CUDA GPU and writes the results CSV that
// `kcast calibrate --microbench` reads (docs/MICROBENCH.md). The driver only parses options, picks
// the device, runs the families in order and writes the file; the measurements live in their own files.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>

#include "microbench/benchmarks.h"
#include "microbench/cli_options.h"
#include "microbench/csv_output.h"

using namespace kcast::microbench;

namespace {

constexpr int kExitCudaError = 1, kExitUsage = 2, kExitNoGpu = 3;

int no_gpu(const std::string& why) {
  std::fprintf(stderr, "kcast-microbench: no usable CUDA GPU: %s\n", why.c_str());
  return kExitNoGpu;
}

struct Family {
  const char* name;
  void (*run)(BenchContext&);
};

}  // namespace

int main(int argc, char** argv) {
  kcast::install_interrupt_cleanup();  // an interrupted run leaves no temporary file beside -o
  std::string error;
  auto opt = parse_cli(argc, argv, error);
  if (!opt) {
    std::fprintf(stderr, "kcast-microbench: %s\n", error.c_str());
    return kExitUsage;
  }
  if (opt->help) {
    std::fputs(usage_text(), stdout);
    return 0;
  }

  int count = 0;
  if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) return no_gpu(cudaGetErrorString(e));
  if (count == 0) return no_gpu(cudaGetErrorString(cudaErrorNoDevice));
  if (opt->device >= count) {
    std::fprintf(stderr, "kcast-microbench: option '--device': %d is out of range (%d device%s)\n",
                 opt->device, count, count == 1 ? "" : "s");
    return kExitUsage;
  }

  BenchContext ctx;
  ctx.device = opt->device;
  ctx.quick = opt->quick;
  if (cudaError_t e = cudaSetDevice(ctx.device); e != cudaSuccess) return no_gpu(cudaGetErrorString(e));
  if (cudaError_t e = cudaGetDeviceProperties(&ctx.prop, ctx.device); e != cudaSuccess)
    return no_gpu(cudaGetErrorString(e));
  ctx.device_name = ctx.prop.name;
  if (cudaError_t e = probe_kernel_image(); e != cudaSuccess) {
    return no_gpu(std::string(cudaGetErrorString(e)) + " (device " + ctx.device_name +
                  " is compute capability " + std::to_string(ctx.prop.major) + "." +
                  std::to_string(ctx.prop.minor) + "; rebuild with -DCMAKE_CUDA_ARCHITECTURES=" +
                  std::to_string(ctx.cc()) + ")");
  }

  const Family families[] = {
      {"launch", run_launch_overhead}, {"dram", run_dram_bandwidth},
      {"l2", run_l2_bandwidth},        {"fma", run_fma_throughput},
      {"tensor", run_tensor_throughput}, {"gemm", run_gemm_sweep},
  };
  const auto t0 = std::chrono::steady_clock::now();
  std::fprintf(stderr, "kcast-microbench: %s (device %d, sm_%d, %d SMs), %s run\n",
               ctx.device_name.c_str(), ctx.device, ctx.cc(), ctx.prop.multiProcessorCount,
               ctx.quick ? "quick" : "full");
  try {
    run_device_info(ctx);
    spin_up(ctx, ctx.quick ? 0.2 : 0.5);
    for (const Family& f : families) {
      if (!opt->only.empty() &&
          std::find(opt->only.begin(), opt->only.end(), f.name) == opt->only.end())
        continue;
      const auto tf = std::chrono::steady_clock::now();
      const size_t before = ctx.rows.size();
      f.run(ctx);
      std::fprintf(stderr, "kcast-microbench: %-6s %3zu rows in %.1f s\n", f.name,
                   ctx.rows.size() - before,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - tf).count());
    }
  } catch (const CudaError& e) {
    // Most CUDA errors poison the context, so the run stops here and writes nothing.
    std::fprintf(stderr, "kcast-microbench: CUDA error: %s; no results written\n", e.what());
    return kExitCudaError;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kcast-microbench: %s; no results written\n", e.what());
    return kExitCudaError;
  }

  try {
    if (opt->output.empty())
      write_csv(std::cout, ctx.rows, ctx.device_name);
    else
      write_csv_file(opt->output, ctx.rows, ctx.device_name);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kcast-microbench: %s\n", e.what());
    return kExitCudaError;
  }
  std::fprintf(stderr, "kcast-microbench: %zu rows in %.0f s%s%s\n", ctx.rows.size(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(),
               opt->output.empty() ? "" : " -> ", opt->output.c_str());
  return 0;
}
