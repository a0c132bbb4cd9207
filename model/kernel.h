// Kernel: one row of the kernel list (docs/formats.md, kcast-csv v1). Unknown numbers are NaN, unknown
// integers 0, so "not given" is never confused with a real zero duration or shape.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "model/conv_algo.h"
#include "model/copy_kind.h"
#include "model/dtype.h"
#include "model/kernel_class.h"
#include "model/sgemm_name.h"
#include "model/thread_access.h"

namespace kcast {

inline constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
inline bool known(double v) { return !std::isnan(v); }

struct Kernel {
  std::string name;
  KernelClass cls = KernelClass::other;
  bool cls_given = false;  // class came from the file (else from the classifier)
  DType dtype = DType::fp32;
  ConvAlgo conv_algo = ConvAlgo::unknown;  // conv rows: the cuDNN family, from the kernel name
  SgemmTile tile;  // gemm rows: the cuBLAS SGEMM tile the name records (model/sgemm_name.h), if any
  // GEMM shape C[m x n] = A[m x k] * B[k x n], `batch` independent products (0 = unknown).
  int64_t batch = 1, m = 0, n = 0, k = 0;
  double flops = kUnknown;  // per invocation, FMA = 2
  double bytes = kUnknown;  // DRAM bytes read + written per invocation
  int64_t grid[3] = {0, 0, 0};
  int64_t block[3] = {0, 0, 0};
  int64_t registers = 0, shared_bytes = 0;
  double count = 1;              // identical invocations this row stands for
  double duration_us = kUnknown;  // measured, one invocation, on `gpu`
  std::string gpu;                // where duration_us was measured (any resolvable name)
  double start_us = kUnknown;
  int64_t stream = -1;
  // Extension column `context`: the measurement setup (e.g. "neusight", "aiconfigurator"); its
  // framework/host floor is fitted per context and never leaks into a GPU's parameters.
  std::string context;
  // Extension column `l2` = `cold`: the kernel started with none of its data in L2 (Nsight Compute
  // flushes the caches before each kernel it profiles, and its `bytes` are then DRAM counters;
  // triton.testing.do_bench flushes L2 before each rep). Inside a workload a kernel usually reads
  // what the previous one left in L2, which the model's L2 share assumes (warm, the default).
  bool l2_cold = false;
  // normalization and softmax rows: the kernel holds each row in registers and reads it once (from
  // its name, model/row_kernel.h); otherwise the framework kernels' extra reads are charged.
  bool row_read_once = false;
  // attention rows: the kernel is written with Ampere's mma.sync on every architecture (FlashAttention-2
  // and the CUTLASS memory-efficient kernels, from its name: model/attention_kernel.h).
  bool mma_sync = false;
  // The family of kernels whose threads keep about one element in flight each, from its name
  // (model/thread_access.h): Little's law bounds their bandwidth.
  ThreadAccess access = ThreadAccess::none;
  // memcpy rows: the link the copy crosses, from its name (model/copy_kind.h).
  CopyKind copy = CopyKind::device;
  // communication rows, extension column `net_bytes`: of the bytes this GPU sends, those that leave its
  // node through its NIC (a collective whose group spans nodes); 0 = none, all over the GPU's own links.
  double net_bytes = 0;

  bool has_shape() const { return m > 0 && n > 0 && k > 0; }
  double gemm_flops() const { return 2.0 * double(batch) * double(m) * double(n) * double(k); }
  // Each operand read once, C written once. An FP8 or FP4 GEMM accumulates wide and writes a 16-bit C
  // (BF16/FP16: cuBLASLt's FP8 matmuls as Transformer Engine, torch._scaled_mm and the serving
  // stacks' scaled_mm call them; the block-scaled FP4 GEMMs likewise); other dtypes write C in their
  // own type.
  double gemm_bytes() const {
    const bool narrow = dtype == DType::fp8 || dtype == DType::fp4;
    const double in = dtype_bytes(dtype), out = narrow ? 2.0 : in;
    return double(batch) * ((double(m) * double(k) + double(k) * double(n)) * in + double(m) * double(n) * out);
  }
  // Fill flops/bytes from the GEMM shape where the file left them empty.
  void derive_from_shape() {
    if (!has_shape()) return;
    if (!known(flops)) flops = gemm_flops();
    if (!known(bytes)) bytes = gemm_bytes();
  }
};

}  // namespace kcast
