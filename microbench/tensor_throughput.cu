// Tensor-core throughput with warp-level mma.sync (inline PTX): every warp keeps several independent
// accumulator tiles in registers and issues MMAs back to back, so the figure is the tensor pipe's rate
// without any memory traffic. Shapes: FP16 m16n8k8 on sm_75, FP16/BF16 m16n8k16, TF32 m16n8k8 and
// INT8 m16n8k32 on sm_80+, FP8 e4m3 m16n8k32 on sm_89+. Each kernel body is compiled only for the
// architectures that have the instruction and the host skips it by compute capability. On Hopper and
// Blackwell mma.sync does not reach the wgmma/tcgen05 peak; those rows say so in their notes.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "microbench/benchmarks.h"
#include "microbench/timing.h"

namespace kcast::microbench {

namespace {

constexpr int kBlock = 256;  // 8 warps
constexpr int kChains = 8;   // independent accumulator tiles per warp

// Pseudo-random operand bits (a finite value with a random sign and mantissa): realistic switching
// activity, so power-limited GPUs are measured at the clocks real data gives, not zeros.
__device__ uint32_t mix(uint32_t x) {
  x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
  return x;
}

enum Variant { kFp16K8, kFp16K16, kBf16K16, kTf32K8, kInt8K32, kFp8K32 };

// Operand registers for each variant: bits that decode to values of magnitude in [1, 2).
__device__ uint32_t operand(Variant v, uint32_t r) {
  switch (v) {
    case kFp16K8:
    case kFp16K16: return (r & 0x83ff83ffU) | 0x3c003c00U;
    case kBf16K16: return (r & 0x807f807fU) | 0x3f803f80U;
    case kTf32K8: return (r & 0x807fe000U) | 0x3f800000U;
    case kInt8K32: return r & 0x7f7f7f7fU;  // non-negative bytes; accumulators are 32-bit
    case kFp8K32: return (r & 0x87878787U) | 0x38383838U;
  }
  return r;
}

template <Variant V>
__global__ void mma_kernel(float* out, int iters) {
  uint32_t a[4], b[2];
  const uint32_t seed = mix(blockIdx.x * blockDim.x + threadIdx.x);
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = operand(V, mix(seed + i));
#pragma unroll
  for (int i = 0; i < 2; ++i) b[i] = operand(V, mix(seed + 7 + i));
  float c[kChains][4];
  int32_t ci[kChains][4];
#pragma unroll
  for (int j = 0; j < kChains; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) c[j][e] = 0.f, ci[j][e] = 0;

  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int j = 0; j < kChains; ++j) {
      if constexpr (V == kFp16K8) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
        asm("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
            : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
            : "r"(a[0]), "r"(a[1]), "r"(b[0]));
#endif
      } else if constexpr (V == kFp16K16) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
            : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
      } else if constexpr (V == kBf16K16) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
            : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
      } else if constexpr (V == kTf32K8) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
            : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
      } else if constexpr (V == kInt8K32) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
            : "+r"(ci[j][0]), "+r"(ci[j][1]), "+r"(ci[j][2]), "+r"(ci[j][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
      } else if constexpr (V == kFp8K32) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
        asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
            : "+f"(c[j][0]), "+f"(c[j][1]), "+f"(c[j][2]), "+f"(c[j][3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
      }
    }
  }
  float s = 0;
#pragma unroll
  for (int j = 0; j < kChains; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) s += c[j][e] + float(ci[j][e]);
  if (s == -1.0f) out[0] = s;  // never true; keeps the MMAs alive
}

struct VariantInfo {
  Variant v;
  const char* dtype;
  const char* shape;
  int m, n, k;
  int min_cc;  // compute capability (x10) that has the instruction
  int max_cc;  // above this a better shape of the same dtype is measured instead (fp16 k8 vs k16)
  const char* unit;
};

constexpr VariantInfo kVariants[] = {
    {kFp16K8, "fp16", "m16n8k8", 16, 8, 8, 75, 79, "TFLOP/s"},
    {kFp16K16, "fp16", "m16n8k16", 16, 8, 16, 80, 1000, "TFLOP/s"},
    {kBf16K16, "bf16", "m16n8k16", 16, 8, 16, 80, 1000, "TFLOP/s"},
    {kTf32K8, "tf32", "m16n8k8", 16, 8, 8, 80, 1000, "TFLOP/s"},
    {kInt8K32, "int8", "m16n8k32", 16, 8, 32, 80, 1000, "TOP/s"},
    {kFp8K32, "fp8", "m16n8k32", 16, 8, 32, 89, 1000, "TFLOP/s"},
};

void (*kernel_of(Variant v))(float*, int) {
  switch (v) {
    case kFp16K8: return mma_kernel<kFp16K8>;
    case kFp16K16: return mma_kernel<kFp16K16>;
    case kBf16K16: return mma_kernel<kBf16K16>;
    case kTf32K8: return mma_kernel<kTf32K8>;
    case kInt8K32: return mma_kernel<kInt8K32>;
    case kFp8K32: return mma_kernel<kFp8K32>;
  }
  return nullptr;
}

}  // namespace

void run_tensor_throughput(BenchContext& ctx) {
  if (ctx.cc() < 75) {
    std::fprintf(stderr, "kcast-microbench: tensor: skipped (mma.sync shapes need sm_75 or newer)\n");
    return;
  }
  DeviceBuffer sink(sizeof(float));
  float* out = sink.get<float>();
  Timer timer(ctx);
  TimingOptions opt;
  opt.max_seconds = ctx.point_seconds();
  for (const VariantInfo& vi : kVariants) {
    if (ctx.cc() < vi.min_cc || ctx.cc() > vi.max_cc) continue;
    auto* kernel = kernel_of(vi.v);
    int bps = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, kernel, kBlock, 0), "occupancy");
    const int grid = std::max(bps, 1) * ctx.prop.multiProcessorCount;
    const int probe_iters = 64;
    const double probe = timer.probe([&](cudaStream_t s) { kernel<<<grid, kBlock, 0, s>>>(out, probe_iters); });
    const int iters = int(scaled_iters(probe_iters, probe, ctx.quick ? 2e-3 : 5e-3, 64, 1 << 24));
    const Timing t = timer.measure([&](cudaStream_t s) { kernel<<<grid, kBlock, 0, s>>>(out, iters); }, opt);
    const double ops = 2.0 * vi.m * vi.n * vi.k * double(kChains) * iters * (double(grid) * kBlock / 32);
    std::string notes = std::string("mma.sync ") + vi.shape + " chains=" + std::to_string(kChains) +
                        " grid=" + std::to_string(grid) + " block=" + std::to_string(kBlock);
    if (ctx.cc() >= 90) notes += " (below the wgmma/tcgen05 peak on this architecture)";
    ctx.add(Row{"tensor_mma", vi.dtype, "", ops / t.seconds / 1e12, vi.unit, t.spread, notes});
  }
}

}  // namespace kcast::microbench
