// device_info rows: what the device says about itself (SMs, clocks, memory, L2, compute capability,
// driver and runtime), so a result file is self-describing and peak rates can be derived from device
// queries rather than tables.
#include <cstdio>
#include <string>

#include "microbench/benchmarks.h"

namespace kcast::microbench {

namespace {

int attribute(cudaDeviceAttr a, int device) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, a, device) != cudaSuccess) {
    cudaGetLastError();  // an attribute this driver lacks is not fatal
    return 0;
  }
  return v;
}

// CUDA encodes versions as 1000*major + 10*minor (12040 = 12.4).
double version_number(int v) { return double(v / 1000) + double((v % 1000) / 10) / 10.0; }

}  // namespace

void run_device_info(BenchContext& ctx) {
  const cudaDeviceProp& p = ctx.prop;
  const int dev = ctx.device;
  const double clock_mhz = attribute(cudaDevAttrClockRate, dev) / 1000.0;
  const double mem_clock_mhz = attribute(cudaDevAttrMemoryClockRate, dev) / 1000.0;
  const int bus_bits = p.memoryBusWidth;
  int driver = 0, runtime = 0;
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  char pci[32] = "";
  cudaDeviceGetPCIBusId(pci, sizeof pci, dev);
  cudaGetLastError();

  auto row = [&](double value, const char* unit, std::string notes = "") {
    ctx.add(Row{"device_info", "", "", value, unit, 0.0, std::move(notes)});
  };
  row(p.multiProcessorCount, "sm_count",
      std::string("tool=kcast-microbench mode=") + (ctx.quick ? "quick" : "full") + " pci=" + pci);
  row(clock_mhz, "clock_mhz", "peak SM clock reported by the driver");
  row(double(p.totalGlobalMem) / 1e9, "memory_gb", "bytes=" + std::to_string(p.totalGlobalMem));
  row(double(p.l2CacheSize) / double(1 << 20), "l2_mb", "bytes=" + std::to_string(p.l2CacheSize));
  row(p.major + p.minor / 10.0, "compute_capability",
      "sm_" + std::to_string(p.major) + std::to_string(p.minor));
  row(version_number(driver), "driver", "cudaDriverGetVersion=" + std::to_string(driver));
  row(version_number(runtime), "runtime", "cudaRuntimeGetVersion=" + std::to_string(runtime));
  if (mem_clock_mhz > 0) row(mem_clock_mhz, "memory_clock_mhz");
  if (bus_bits > 0) row(bus_bits, "memory_bus_bits");
  // Theoretical DRAM bandwidth from the queries: 2 transfers per clock (DDR) x bus width.
  if (mem_clock_mhz > 0 && bus_bits > 0)
    row(2.0 * mem_clock_mhz * 1e6 * (bus_bits / 8.0) / 1e9, "dram_peak_gbps",
        "2 x memory clock x bus width (double data rate assumed)");
  row(p.maxThreadsPerMultiProcessor, "max_threads_per_sm");
  row(double(p.sharedMemPerMultiprocessor) / 1024.0, "smem_per_sm_kb");
  row(p.regsPerMultiprocessor, "regs_per_sm");
  row(p.ECCEnabled, "ecc_enabled");
}

}  // namespace kcast::microbench
