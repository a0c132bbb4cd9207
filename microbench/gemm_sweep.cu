// cuBLASLt GEMM throughput over a sweep of shapes, per dtype the GPU supports: what a framework's
// matmul reaches, from small (launch- and tile-bound) to large (peak-bound) problems. One GEMM is
// C[m x n] = A[m x k] * B[k x n] in the "TN" layout (A transposed, column-major), the one layout every
// dtype including FP8 and FP4 supports; the algorithm is cuBLASLt's first heuristic choice, as PyTorch
// uses. FP4 is block-scaled NVFP4 (E2M1 values, one UE4M3 scale per 16 along K; Blackwell only).
// Summary rows `gemm_peak` hold the best rate per dtype.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "microbench/benchmarks.h"
#include "microbench/timing.h"

namespace kcast::microbench {

namespace {

void check_lt(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": cuBLAS status " + std::to_string(int(s)));
}

// Operands uniform in [-1, 1): realistic bit patterns (zeros would flatter power-limited GPUs).
template <typename T>
__global__ void fill_kernel(T* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t x = uint32_t(i) * 0x9e3779b9U ^ seed;
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;
    const float f = float(x) * (2.0f / 4294967296.0f) - 1.0f;
    if constexpr (sizeof(T) == 1 && std::is_same_v<T, int8_t>)
      p[i] = int8_t(int(f * 127.0f));
    else
      p[i] = T(f);
  }
}

template <typename T>
void fill(void* p, size_t n, uint32_t seed) {
  fill_kernel<T><<<1024, 256>>>(static_cast<T*>(p), n, seed);
  check(cudaGetLastError(), "fill kernel");
}

// Packed FP4 operands: n values, two per byte. Every 4-bit E2M1 code is a finite value, so random
// bytes are realistic operands.
__global__ void fill_bytes_kernel(uint8_t* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint32_t x = uint32_t(i) * 0x9e3779b9U ^ seed;
    x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15;
    p[i] = uint8_t(x);
  }
}

void fill_packed4(void* p, size_t n, uint32_t seed) {
  fill_bytes_kernel<<<1024, 256>>>(static_cast<uint8_t*>(p), (n + 1) / 2, seed);
  check(cudaGetLastError(), "fill kernel");
}

struct GemmType {
  const char* dtype;
  cudaDataType_t ab, cd;
  cublasComputeType_t compute;
  cudaDataType_t scale;
  int min_cc;
  size_t ab_bits, cd_bytes;  // A/B bits per element (FP4: 4), C/D bytes
  int scale_block;           // block-scaled A/B: one UE4M3 scale per this many values along K; 0: none
  void (*fill_ab)(void*, size_t, uint32_t);
  const char* unit;
  const char* out;  // output (C/D) type, for the notes
};

const GemmType kTypes[] = {
    {"fp64", CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, 0, 64, 8, 0, fill<double>, "TFLOP/s", "fp64"},
    {"fp32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 0, 32, 4, 0, fill<float>, "TFLOP/s", "fp32"},
    {"tf32", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, 80, 32, 4, 0, fill<float>, "TFLOP/s",
     "fp32"},
    {"fp16", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 70, 16, 2, 0, fill<__half>, "TFLOP/s", "fp16"},
    {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 80, 16, 2, 0, fill<__nv_bfloat16>, "TFLOP/s",
     "bf16"},
    {"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 89, 8, 2, 0, fill<__nv_fp8_e4m3>, "TFLOP/s",
     "bf16"},
    {"int8", CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I, 75, 8, 4, 0, fill<int8_t>, "TOP/s", "int32"},
#if CUDART_VERSION >= 12080
    {"fp4", CUDA_R_4F_E2M1, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 100, 4, 2, 16, fill_packed4, "TFLOP/s",
     "bf16"},
#endif
};

struct Shape { int64_t m, n, k; };

std::vector<Shape> shapes(bool quick) {
  std::vector<Shape> s;
  // Squares from small to large, then the skinny shapes of LLM decode and prefill (m = tokens).
  for (int64_t d : quick ? std::vector<int64_t>{1024, 4096, 8192}
                         : std::vector<int64_t>{256, 512, 1024, 2048, 4096, 8192, 16384})
    s.push_back({d, d, d});
  for (int64_t m : quick ? std::vector<int64_t>{128} : std::vector<int64_t>{16, 128, 1024})
    s.push_back({m, 8192, 8192});
  return s;
}

std::string shape_text(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

// RAII wrappers for the cuBLASLt descriptors of one problem.
struct LtMatmul {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtMatmul() {
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// The cuBLASLt descriptors of one TN GEMM of `g` at `sh` (block scales at `sa` / `sb` where the dtype
// has them) and the heuristic's first algorithm; false when cuBLASLt offers none.
bool describe_matmul(LtMatmul& mm, cublasLtMatmulHeuristicResult_t& heur, cublasLtHandle_t lt, const GemmType& g,
                     const Shape& sh, [[maybe_unused]] const void* sa, [[maybe_unused]] const void* sb,
                     size_t workspace_bytes) {
  check_lt(cublasLtMatmulDescCreate(&mm.op, g.compute, g.scale), "cublasLtMatmulDescCreate");
  const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  check_lt(cublasLtMatmulDescSetAttribute(mm.op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a), "TRANSA");
  check_lt(cublasLtMatmulDescSetAttribute(mm.op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b), "TRANSB");
#if CUDART_VERSION >= 12080
  if (g.scale_block) {
    const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
    check_lt(cublasLtMatmulDescSetAttribute(mm.op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof mode), "A scale mode");
    check_lt(cublasLtMatmulDescSetAttribute(mm.op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof mode), "B scale mode");
    check_lt(cublasLtMatmulDescSetAttribute(mm.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa), "A scales");
    check_lt(cublasLtMatmulDescSetAttribute(mm.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb), "B scales");
  }
#endif
  // Column-major: A is stored k x m (transposed), B k x n, C m x n.
  check_lt(cublasLtMatrixLayoutCreate(&mm.a, g.ab, uint64_t(sh.k), uint64_t(sh.m), sh.k), "layout A");
  check_lt(cublasLtMatrixLayoutCreate(&mm.b, g.ab, uint64_t(sh.k), uint64_t(sh.n), sh.k), "layout B");
  check_lt(cublasLtMatrixLayoutCreate(&mm.c, g.cd, uint64_t(sh.m), uint64_t(sh.n), sh.m), "layout C");
  check_lt(cublasLtMatmulPreferenceCreate(&mm.pref), "preference");
  check_lt(cublasLtMatmulPreferenceSetAttribute(mm.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                &workspace_bytes, sizeof workspace_bytes), "workspace");
  int found = 0;
  return cublasLtMatmulAlgoGetHeuristic(lt, mm.op, mm.a, mm.b, mm.c, mm.c, mm.pref, 1, &heur, &found) ==
             CUBLAS_STATUS_SUCCESS && found > 0;
}

// One dtype's sweep; adds its gemm_cublaslt rows and the gemm_peak row.
void sweep_dtype(BenchContext& ctx, Timer& timer, cublasLtHandle_t lt, const DeviceBuffer& workspace,
                 const GemmType& g) {
  const size_t workspace_bytes = workspace.bytes();
  TimingOptions opt;
  opt.max_seconds = ctx.point_seconds();
  // A dtype stops growing once one call takes this long (FP64 on gaming parts is 1/64 rate).
  const double max_call_s = ctx.quick ? 0.02 : 0.1;
  double best = 0, best_spread = 0;
  std::string best_shape, best_note;
  double slow_flops = 0;  // shapes with at least this many FLOPs are skipped (too slow per call)
  for (const Shape& sh : shapes(ctx.quick)) {
    const double flops = 2.0 * double(sh.m) * double(sh.n) * double(sh.k);
    if (slow_flops > 0 && flops >= slow_flops) continue;
    const size_t bytes_a = size_t(sh.m * sh.k) * g.ab_bits / 8, bytes_b = size_t(sh.k * sh.n) * g.ab_bits / 8,
                 bytes_c = size_t(sh.m * sh.n) * g.cd_bytes;
    // Block scales, in cuBLASLt's tiled layout: rows padded to 128, scale columns (K / block) to 4.
    auto pad = [](int64_t v, int64_t to) { return size_t((v + to - 1) / to * to); };
    const size_t scales_a = g.scale_block ? pad(sh.m, 128) * pad(sh.k / g.scale_block, 4) : 0,
                 scales_b = g.scale_block ? pad(sh.n, 128) * pad(sh.k / g.scale_block, 4) : 0;
    if (bytes_a + bytes_b + bytes_c + scales_a + scales_b > free_device_memory() * 7 / 10) continue;
    DeviceBuffer A(bytes_a), B(bytes_b), C(bytes_c), SA(std::max<size_t>(scales_a, 1)), SB(std::max<size_t>(scales_b, 1));
    if (g.scale_block) {  // every scale 1.0 (UE4M3 0x38): the operands' own values are what is multiplied
      check(cudaMemset(SA.get(), 0x38, scales_a), "cudaMemset");
      check(cudaMemset(SB.get(), 0x38, scales_b), "cudaMemset");
    }
    g.fill_ab(A.get(), size_t(sh.m * sh.k), 1);
    g.fill_ab(B.get(), size_t(sh.k * sh.n), 2);
    check(cudaMemset(C.get(), 0, bytes_c), "cudaMemset");
    // The fills ran on the legacy default stream, which the timer's stream does not wait for.
    check(cudaDeviceSynchronize(), "operand initialisation");

    LtMatmul mm;
    cublasLtMatmulHeuristicResult_t heur{};
    if (!describe_matmul(mm, heur, lt, g, sh, SA.get(), SB.get(), workspace_bytes)) {
      std::fprintf(stderr, "kcast-microbench: gemm %s %s: no cuBLASLt algorithm, skipped\n", g.dtype,
                   shape_text(sh).c_str());
      continue;
    }
    // alpha = 1, beta = 0 in the scale type.
    const double one64 = 1, zero64 = 0;
    const float one32 = 1, zero32 = 0;
    const int32_t onei = 1, zeroi = 0;
    const void* alpha = g.scale == CUDA_R_64F ? (const void*)&one64 : g.scale == CUDA_R_32I ? (const void*)&onei : &one32;
    const void* beta = g.scale == CUDA_R_64F ? (const void*)&zero64 : g.scale == CUDA_R_32I ? (const void*)&zeroi : &zero32;
    void* ws = workspace.get();
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    auto call = [&](cudaStream_t s) {
      cublasStatus_t st = cublasLtMatmul(lt, mm.op, alpha, A.get(), mm.a, B.get(), mm.b, beta, C.get(), mm.c,
                                         C.get(), mm.c, &heur.algo, ws, workspace_bytes, s);
      if (st != CUBLAS_STATUS_SUCCESS) status = st;
    };
    const double one_call = timer.probe(call);
    check_lt(status, "cublasLtMatmul");
    const Timing t = timer.measure(call, opt);
    check_lt(status, "cublasLtMatmul");
    const double rate = flops / t.seconds / 1e12;
    const std::string note = std::string("layout=TN out=") + g.out + " algo=heuristic#1 workspace=32MiB" +
                             (g.scale_block ? " scales=ue4m3/16" : "");
    ctx.add(Row{"gemm_cublaslt", g.dtype, shape_text(sh), rate, g.unit, t.spread, note});
    if (rate > best) {
      best = rate;
      best_spread = t.spread;
      best_shape = shape_text(sh);
      best_note = note;
    }
    if (one_call > max_call_s && (slow_flops == 0 || flops < slow_flops)) {
      // Bigger problems would only take longer; smaller (skinny) ones are still worth measuring.
      slow_flops = 2 * flops;
      std::fprintf(stderr, "kcast-microbench: gemm %s: %.0f ms per call at %s, skipping larger shapes\n",
                   g.dtype, one_call * 1e3, shape_text(sh).c_str());
    }
  }
  if (best > 0) ctx.add(Row{"gemm_peak", g.dtype, best_shape, best, g.unit, best_spread, best_note});
}

}  // namespace

void run_gemm_sweep(BenchContext& ctx) {
  cublasLtHandle_t lt = nullptr;
  check_lt(cublasLtCreate(&lt), "cublasLtCreate");
  struct HandleGuard { cublasLtHandle_t h; ~HandleGuard() { cublasLtDestroy(h); } } guard{lt};
  DeviceBuffer workspace(32 << 20);
  Timer timer(ctx);
  for (const GemmType& g : kTypes) {
    if (ctx.cc() < g.min_cc) continue;
    try {
      sweep_dtype(ctx, timer, lt, workspace, g);
    } catch (const CudaError&) {
      throw;  // the context may be unusable: stop the run
    } catch (const std::runtime_error& e) {
      // A cuBLAS status for one dtype (e.g. a type this library build lacks) skips only that dtype.
      std::fprintf(stderr, "kcast-microbench: gemm %s: %s; rest of this dtype skipped\n", g.dtype, e.what());
    }
  }
}

}  // namespace kcast::microbench
