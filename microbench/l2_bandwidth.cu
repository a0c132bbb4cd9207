// L2 bandwidth: every thread of a full-occupancy grid streams 16-byte loads over a working set with
// ld.global.cg (cached in L2, not L1), sweeping the working-set size from 256 KiB to 4x the L2 size.
// Below the L2 size the rate sits on a plateau; past it, it falls to DRAM bandwidth. The summary
// `l2_bw` is the median of the points between L2/16 and L2/2: small sets can be served from the L2
// slice nearest each SM (H100/H200 show 30% more there), large ones start to spill.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "microbench/benchmarks.h"
#include "microbench/timing.h"

namespace kcast::microbench {

namespace {

constexpr int kBlock = 512;

// Thread t reads elements t, t+T, t+2T, ... (T = threads in the grid) wrapped into [0, n): coalesced,
// and every element of the working set is touched once per n/T iterations.
__global__ void l2_read_kernel(const float4* __restrict__ a, unsigned n, unsigned step, int iters,
                               float* out) {
  const unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned idx = gid % n;
  float4 acc0 = make_float4(0, 0, 0, 0), acc1 = acc0;
  for (int i = 0; i < iters; i += 2) {
    const float4 v = __ldcg(&a[idx]);
    idx += step;
    if (idx >= n) idx -= n;
    const float4 w = __ldcg(&a[idx]);
    idx += step;
    if (idx >= n) idx -= n;
    acc0.x += v.x; acc0.y += v.y; acc0.z += v.z; acc0.w += v.w;
    acc1.x += w.x; acc1.y += w.y; acc1.z += w.z; acc1.w += w.w;
  }
  if (acc0.x + acc1.y + acc0.z + acc1.w == -1.0f) out[0] = acc0.x;
}

}  // namespace

void run_l2_bandwidth(BenchContext& ctx) {
  const size_t l2 = ctx.l2_bytes();
  const size_t max_ws = std::min<size_t>(4 * l2, free_device_memory() / 2);
  DeviceBuffer buf(max_ws), sink(sizeof(float));
  check(cudaMemset(buf.get(), 0, max_ws), "cudaMemset");
  check(cudaDeviceSynchronize(), "buffer initialisation");  // the timer's stream does not wait
  int bps = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, l2_read_kernel, kBlock, 0), "occupancy");
  const int grid = std::max(bps, 1) * ctx.prop.multiProcessorCount;
  const unsigned threads = unsigned(grid) * kBlock;

  Timer timer(ctx);
  TimingOptions opt;
  opt.max_seconds = ctx.point_seconds();

  struct Point { size_t ws; double gbps, spread; };
  std::vector<Point> points;
  // Sizes 256 KiB x {1, 1.5, 2, 3, 4, ...}: powers of two and the midpoints between them.
  std::vector<size_t> sizes;
  for (size_t p = 256 << 10; p <= max_ws; p *= 2) {
    sizes.push_back(p);
    if (!ctx.quick && p + p / 2 <= max_ws) sizes.push_back(p + p / 2);
  }
  for (size_t ws : sizes) {
    const unsigned n = unsigned(ws / sizeof(float4));
    const unsigned step = threads % n == 0 ? n : threads % n;  // step n wraps to the same index
    // Enough iterations that each launch covers the working set twice and moves >= 256 MB.
    const int iters = int(std::max<size_t>({64, 2 * (size_t(n) + threads - 1) / threads,
                                            (size_t(256) << 20) / (size_t(threads) * 16)}) + 1) & ~1;
    const float4* a = buf.get<float4>();
    float* out = sink.get<float>();
    const Timing t = timer.measure(
        [&](cudaStream_t s) { l2_read_kernel<<<grid, kBlock, 0, s>>>(a, n, step, iters, out); }, opt);
    const double gbps = double(threads) * iters * sizeof(float4) / t.seconds / 1e9;
    points.push_back({ws, gbps, t.spread});
    ctx.add(Row{"l2_bw_sweep", "", std::to_string(ws), gbps, "GB/s", t.spread,
                "ld.global.cg grid=" + std::to_string(grid) + " block=" + std::to_string(kBlock)});
  }

  std::vector<Point> plateau;
  for (const Point& p : points)
    if (p.ws >= l2 / 16 && p.ws <= l2 / 2) plateau.push_back(p);
  if (plateau.empty()) return;
  std::sort(plateau.begin(), plateau.end(), [](const Point& x, const Point& y) { return x.gbps < y.gbps; });
  const Point& med = plateau[plateau.size() / 2];
  ctx.add(Row{"l2_bw", "", std::to_string(med.ws), med.gbps, "GB/s", med.spread,
              "median of " + std::to_string(plateau.size()) + " working sets in [L2/16, L2/2]"});
}

}  // namespace kcast::microbench
