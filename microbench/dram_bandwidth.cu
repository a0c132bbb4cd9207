// DRAM bandwidth: STREAM-style read, write, copy and triad kernels on arrays far larger than L2
// (max(32 x L2, 1 GiB) each, bounded by free memory), swept over block size and blocks per SM; then a
// ramp of the copy kernel over transfer sizes from 64 KiB up, cold (L2 flushed), which shows how
// small transfers fall short of the sustained rate. The summary `dram_bw` is the best copy or triad
// figure: what a well-shaped streaming kernel sustains, the number the cost model wants.
// Last, the streaming round trip `stream_latency` (chase_kernel): Little's law's latency for kernels
// whose threads keep one element in flight (the cost model's model/thread_access.h).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "microbench/benchmarks.h"
#include "microbench/timing.h"

namespace kcast::microbench {

namespace {

// float4 = 16-byte accesses, the widest a thread issues, so few load/store instructions are needed.
__global__ void read_kernel(const float4* __restrict__ a, size_t n, float* out) {
  float4 acc = make_float4(0, 0, 0, 0);
  const size_t stride = size_t(gridDim.x) * blockDim.x;
#pragma unroll 4
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float4 v = a[i];
    acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
  }
  // Never true for our data; keeps the loads from being optimised away.
  if (acc.x + acc.y + acc.z + acc.w == -1.0f) out[0] = acc.x;
}

__global__ void write_kernel(float4* __restrict__ a, size_t n, float v) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    a[i] = make_float4(v, v, v, v);
}

__global__ void copy_kernel(float4* __restrict__ dst, const float4* __restrict__ src, size_t n) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = src[i];
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b,
                             const float4* __restrict__ c, size_t n, float s) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

// A DRAM round trip as a streaming kernel sees it: every thread walks the array with one 8-byte load in
// flight, each address waiting for the last load (its value is 0), a grid's width apart so no line is
// read twice. Launched as 2 CTAs of 32 threads per SM, the load gpu-stream's read kernel puts on the
// memory at its smallest block (te42kyfo/gpu-benches, whose figures data/microbench transcribes).
__global__ void chase_kernel(const double* __restrict__ a, size_t n, int steps, double* out) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  double acc = 0;
  for (int s = 0; s < steps && i < n; ++s) {
    const double v = a[i];
    acc += v;
    i += stride + size_t(v);
  }
  if (acc == -1.0) out[0] = acc;
}

enum class Kind { read, write, copy, triad };
const char* name(Kind k) {
  switch (k) {
    case Kind::read: return "read";
    case Kind::write: return "write";
    case Kind::copy: return "copy";
    case Kind::triad: return "triad";
  }
  return "?";
}
// Arrays touched per element: STREAM counting (a store is one transfer; no write-allocate read,
// which NVIDIA GPUs avoid for full-sector writes).
int arrays_moved(Kind k) { return k == Kind::read || k == Kind::write ? 1 : k == Kind::copy ? 2 : 3; }

struct Arrays {
  float4 *a, *b, *c;
  float* sink;
};

void launch(Kind k, const Arrays& m, size_t n, int grid, int block, cudaStream_t s) {
  switch (k) {
    case Kind::read: read_kernel<<<grid, block, 0, s>>>(m.a, n, m.sink); break;
    case Kind::write: write_kernel<<<grid, block, 0, s>>>(m.a, n, 1.0f); break;
    case Kind::copy: copy_kernel<<<grid, block, 0, s>>>(m.a, m.b, n); break;
    case Kind::triad: triad_kernel<<<grid, block, 0, s>>>(m.a, m.b, m.c, n, 0.5f); break;
  }
}

int max_blocks_per_sm(Kind k, int block) {
  int b = 0;
  switch (k) {
    case Kind::read: check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, read_kernel, block, 0), "occupancy"); break;
    case Kind::write: check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, write_kernel, block, 0), "occupancy"); break;
    case Kind::copy: check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, copy_kernel, block, 0), "occupancy"); break;
    case Kind::triad: check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, triad_kernel, block, 0), "occupancy"); break;
  }
  return std::max(b, 1);
}

std::string config(int bps, int block) {
  return "blocks_per_sm=" + std::to_string(bps) + " block=" + std::to_string(block);
}

}  // namespace

void run_dram_bandwidth(BenchContext& ctx) {
  const size_t l2 = ctx.l2_bytes();
  // Three arrays (triad), each far beyond L2 so no kernel is served from cache, within 60% of free
  // memory so the driver and the timer's flush buffer fit too.
  size_t bytes = std::max<size_t>(32 * l2, size_t(1) << 30);
  bytes = std::min(bytes, free_device_memory() * 6 / 10 / 3);
  bytes = bytes / (1 << 20) * (1 << 20);  // whole MiB
  if (bytes < 8 * l2) {
    std::fprintf(stderr, "kcast-microbench: dram: skipped, only %zu MiB free per array\n", bytes >> 20);
    return;
  }
  DeviceBuffer a(bytes), b(bytes), c(bytes), sink(sizeof(double));  // chase_kernel's sink is a double
  check(cudaMemset(a.get(), 0, bytes), "cudaMemset");
  check(cudaMemset(b.get(), 0, bytes), "cudaMemset");
  check(cudaMemset(c.get(), 0, bytes), "cudaMemset");
  // The timer's stream does not wait for the legacy default stream the memsets ran on.
  check(cudaDeviceSynchronize(), "array initialisation");
  const Arrays m{a.get<float4>(), b.get<float4>(), c.get<float4>(), sink.get<float>()};
  const size_t n = bytes / sizeof(float4);
  const int sms = ctx.prop.multiProcessorCount;

  Timer timer(ctx);
  TimingOptions opt;
  opt.max_seconds = ctx.point_seconds();
  const std::vector<int> blocks = ctx.quick ? std::vector<int>{256, 1024} : std::vector<int>{128, 256, 512, 1024};
  const std::vector<int> per_sm = ctx.quick ? std::vector<int>{1, 2, 4, 8} : std::vector<int>{1, 2, 4, 8, 16, 32};

  double best = 0, best_spread = 0;
  std::string best_note;
  int copy_grid = sms * 4, copy_block = 256;
  double copy_best = 0;
  for (Kind k : {Kind::read, Kind::write, Kind::copy, Kind::triad}) {
    for (int block : blocks) {
      const int cap = max_blocks_per_sm(k, block);
      for (int bps : per_sm) {
        if (bps > cap) break;
        const int grid = bps * sms;
        const Timing t = timer.measure([&](cudaStream_t s) { launch(k, m, n, grid, block, s); }, opt);
        const double gbps = double(arrays_moved(k)) * double(bytes) / t.seconds / 1e9;
        ctx.add(Row{std::string("dram_bw_") + name(k), "", std::to_string(bytes), gbps, "GB/s",
                    t.spread, config(bps, block)});
        if ((k == Kind::copy || k == Kind::triad) && gbps > best) {
          best = gbps;
          best_spread = t.spread;
          best_note = std::string("kernel=") + name(k) + " " + config(bps, block);
        }
        if (k == Kind::copy && gbps > copy_best) {
          copy_best = gbps;
          copy_grid = grid;
          copy_block = block;
        }
      }
    }
  }

  // Ramp: copy of `size` bytes (read size + write size), cold, with the best sustained configuration
  // capped to the number of blocks the transfer can use.
  TimingOptions cold = opt;
  cold.cold = true;
  cold.min_samples = 10;
  const size_t step = ctx.quick ? 4 : 2;
  for (size_t size = 64 << 10; size <= bytes; size *= step) {
    const size_t elems = size / sizeof(float4);
    const int grid = int(std::min<size_t>(size_t(copy_grid), (elems + copy_block - 1) / copy_block));
    const Timing t = timer.measure(
        [&](cudaStream_t s) { copy_kernel<<<grid, copy_block, 0, s>>>(m.a, m.b, elems); }, cold);
    ctx.add(Row{"dram_bw_ramp", "", std::to_string(size), 2.0 * double(size) / t.seconds / 1e9, "GB/s",
                t.spread, "kernel=copy cold grid=" + std::to_string(grid) + " block=" +
                               std::to_string(copy_block)});
  }

  if (best > 0) ctx.add(Row{"dram_bw", "", std::to_string(bytes), best, "GB/s", best_spread, best_note});

  // Streaming round trip (the cost model's stream_latency): one sweep of the array, cold.
  {
    const int grid = 2 * sms, block = 32;
    const size_t doubles = bytes / sizeof(double);
    const int steps = int(std::min<size_t>(doubles / (size_t(grid) * block), 1 << 20));
    const Timing t = timer.measure(
        [&](cudaStream_t s) {
          chase_kernel<<<grid, block, 0, s>>>(reinterpret_cast<const double*>(m.a), doubles, steps,
                                              reinterpret_cast<double*>(m.sink));
        },
        cold);
    ctx.add(Row{"stream_latency", "", std::to_string(bytes), t.seconds / steps * 1e6, "us", t.spread,
                "2 CTAs of 32 threads per SM, one 8-byte load in flight per thread, " + std::to_string(steps) +
                    " dependent loads each"});
  }
}

}  // namespace kcast::microbench
