// What-if knobs: named hardware changes mapped onto GpuCaps (the model's effective capabilities).
// Values are the model's sustained figures (what `kcast whatif` prints as the baseline), not
// datasheet peaks.
//
//   dram_bw          GB/s     caps.dram_bw_gbps
//   l2_bw            GB/s     caps.l2_bw_gbps
//   l2_size          MB       caps.l2_bytes
//   tensor_flops     TFLOP/s  the tensor-core GEMM rates. The value is the BF16 rate (FP16 where the
//                             GPU has no BF16 tensor unit); setting it scales every tensor dtype
//                             (tf32/fp16/bf16/fp8/int8) by the same factor, keeping their ratios.
//   vector_flops     TFLOP/s  the SIMT FP32 rate (caps.vector_tflops); setting it scales every SIMT
//                             rate (FP32/FP64 GEMM, and dtypes the GPU runs without tensor cores).
//   sm_count         SMs      caps.sm_count; all compute rates scale by new/old (GpuCaps rates are
//                             whole-GPU) and wave quantization changes (the GEMM tiles' slots); L2
//                             and DRAM bandwidth do not, nor does the power-limit derate (the
//                             hypothetical board gets the power its SMs need).
//   clock            MHz      caps.clock_mhz; compute rates and L2 bandwidth scale by new/old
//                             (the sustained clock under load: power limits are not re-derived).
//   launch_overhead  µs       caps.launch_floor_us (the per-kernel launch floor).
//   mem_latency      µs       caps.mem_latency_us: the latency a memory-bound kernel pays once before its
//                             data streams (DRAM round trip and ramp-up); it bounds the small kernels
//                             the model calls latency-bound. The clock knob scales it too (it is
//                             fitted in cycles).
//   link_bw          GB/s     caps.link_gbps: the GPU-to-GPU bandwidth collectives sustain, one direction.
//   net_bw           GB/s     caps.net_gbps: the same between nodes, over this GPU's NIC (the share of a
//                             collective's bytes that leave the node: the kernel list's net_bytes).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu_caps.h"
#include "model/gpu_spec.h"

namespace kcast {

enum class Knob {
  dram_bw,
  l2_bw,
  l2_size,
  tensor_flops,
  vector_flops,
  sm_count,
  clock,
  launch_overhead,
  link_bw,
  mem_latency,
  net_bw
};

struct KnobInfo {
  Knob knob;
  const char* name;
  const char* unit;
};
extern const std::vector<KnobInfo> kKnobs;

std::string_view to_string(Knob k);
std::string_view knob_unit(Knob k);
// InputError naming `option` and listing the knobs when `name` is not one.
Knob parse_knob(std::string_view name, const std::string& option);

// The knob's current value in its unit (tensor_flops: the BF16 rate, else FP16, else any tensor dtype).
double knob_value(const GpuCaps& caps, Knob k);
// Sets the knob to `value` (InputError naming `option` on a non-positive value, or tensor_flops on
// a GPU without tensor cores).
void set_knob(GpuCaps& caps, Knob k, double value, const std::string& option);
void scale_knob(GpuCaps& caps, Knob k, double factor, const std::string& option);

// "KNOB=NUMBER" -> (knob, number); InputError naming `option` otherwise.
std::pair<Knob, double> parse_knob_assignment(const std::string& text, const std::string& option);

// Building blocks the walls study uses: multiply all compute rates (tensor and SIMT), or DRAM and
// L2 bandwidth, by `factor`.
void scale_compute(GpuCaps& caps, double factor);
void scale_bandwidth(GpuCaps& caps, double factor);

}  // namespace kcast
