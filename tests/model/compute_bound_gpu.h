// A hand-made GPU whose memory never binds (1e5 GB/s) and whose launch floor is 1 µs, so a GEMM or
// convolution test sees its compute term alone: `sms` SMs at 1 GHz, 10 TFLOP/s FP32.
#pragma once
#include "model/gpu_spec.h"

namespace kcast::testing {

inline GpuSpec compute_bound_gpu(const char* compute_capability, int sms) {
  GpuSpec g;
  g.name = "ComputeBoundGPU";
  g.compute_capability = compute_capability;
  g.sm_count = sms;
  g.boost_clock_mhz = 1000;
  g.dram_bw_gbps = 1e5;
  g.measured_dram_bw_gbps = 1e5;
  g.measured_launch_us = 1.0;
  g.fp32_tflops = 10;
  return g;
}

}  // namespace kcast::testing
