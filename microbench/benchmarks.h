// The benchmark suite. Each function measures one family on ctx's device and appends rows (sweep
// points first, then the summary rows the calibration reads); names and units are defined in
// docs/MICROBENCH.md. A benchmark that the device cannot run (e.g. FP8 MMA before sm_89) is skipped
// with a line on stderr, not an error.
#pragma once
#include "microbench/bench_context.h"

namespace kcast::microbench {

void run_device_info(BenchContext& ctx);      // device_info rows
void run_dram_bandwidth(BenchContext& ctx);   // dram_bw_{read,write,copy,triad}, dram_bw_ramp, dram_bw, stream_latency
void run_l2_bandwidth(BenchContext& ctx);     // l2_bw_sweep, l2_bw
void run_fma_throughput(BenchContext& ctx);   // fma_fp32, fma_fp64
void run_tensor_throughput(BenchContext& ctx);  // tensor_mma per dtype
void run_gemm_sweep(BenchContext& ctx);       // gemm_cublaslt per dtype and shape, gemm_peak
void run_launch_overhead(BenchContext& ctx);  // launch_interval[_graph|_fullgrid], launch_latency_sync

// cudaSuccess when this binary holds code the device can run (else cudaErrorNoKernelImageForDevice).
cudaError_t probe_kernel_image();
// Keeps the GPU busy for about `seconds` so clocks are up before the first measurement.
void spin_up(BenchContext& ctx, double seconds);

}  // namespace kcast::microbench
