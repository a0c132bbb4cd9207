// GpuSpec: one GPU as the cost model sees it. Datasheet fields come from data/gpus.csv; the optional
// "measured" fields come from microbenchmarks (kcast-microbench or published figures) and override the
// architecture defaults when present. Units are in the field names. Missing values are NaN.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "model/dtype.h"
#include "model/kernel.h"

namespace kcast {

struct GpuSpec {
  std::string name;                  // canonical name, e.g. "A100-SXM4-40GB"
  std::vector<std::string> aliases;  // device strings tools record (nvidia-smi, torch, nsys)
  std::string vendor;                // NVIDIA, AMD
  std::string arch;                  // Kepler, Pascal, Volta, Turing, Ampere, Ada, Hopper, Blackwell, CDNA2, ...
  std::string compute_capability;    // "8.0"; gfx id for AMD
  int release_year = 0;
  int sm_count = 0;
  double boost_clock_mhz = kUnknown;
  double memory_gb = kUnknown;
  double dram_bw_gbps = kUnknown;  // datasheet peak
  double l2_mb = kUnknown;
  // Dense datasheet peaks. fp32/fp64 are SIMT (CUDA cores); tf32..int8 and fp4 are tensor-core figures.
  double fp64_tflops = kUnknown, fp32_tflops = kUnknown, tf32_tflops = kUnknown,
         fp16_tflops = kUnknown, bf16_tflops = kUnknown, fp8_tflops = kUnknown,
         int8_tops = kUnknown, fp4_tflops = kUnknown;
  bool tensor_cores = false;  // false: fp16 figures are packed-vector SIMT rates (Pascal)
  double tdp_w = kUnknown;
  // GPU-to-GPU bandwidth in one direction, GB/s: the NVLink / Infinity Fabric figure where the board
  // has one built in (datasheets quote both directions: halved), else its PCIe x16 slot.
  double link_gbps = kUnknown;
  // Host link in one direction, GB/s: the PCIe x16 slot (a GB200's NVLink-C2C to its Grace CPU).
  double host_gbps = kUnknown;
  // Scale-out network in one direction, GB/s, this GPU's share of its node's NICs (a DGX H100: eight
  // 400 Gb/s ConnectX-7, one per GPU: 50): what a collective whose group spans nodes crosses.
  double net_gbps = kUnknown;
  // GPUs in one scale-up domain (the link's reach): 8 on an HGX / DGX board or an MI300X platform, 72
  // in a GB200 / GB300 NVL72 rack, the PCIe server for boards without built-in links; 0 = unknown.
  // Collectives whose group spans more GPUs cross net_gbps (synth's --gpus-per-node defaults to it).
  int domain_size = 0;
  // Announced, not shipping: its figures are the vendor's preliminary ones; every output naming it says so.
  bool announced = false;
  std::string interconnect_source;  // where link_gbps, domain_size and net_gbps come from
  std::string source;     // where the datasheet numbers come from
  std::string uncertain;  // columns not confirmed by two sources (see data/gpus.md)

  // --- Measured capabilities (optional; NaN = use the architecture default) ---
  double measured_dram_bw_gbps = kUnknown;   // sustained copy/triad bandwidth
  double measured_l2_bw_gbps = kUnknown;     // L2 plateau bandwidth
  double measured_launch_us = kUnknown;      // back-to-back launch interval of an empty kernel
  double measured_stream_latency_us = kUnknown;  // DRAM round trip under a streaming load (Little's law)
  double measured_fp32_tflops = kUnknown;    // FMA-loop throughput
  // Sustained fraction of the datasheet tensor peak in large GEMMs, per dtype (NaN = default).
  PerDType<double> measured_gemm_eff = per_dtype(kUnknown);
  // This board's SIMT (CUDA-core) GEMM efficiency relative to the model's eff_simt, fitted from its
  // own measured kernels (boards of one chip differ: clocks they hold, cooling, library version).
  double measured_sgemm_scale = kUnknown;
  // The same for its CUDA-core convolutions, where only those were measured (cuDNN's kernels, not
  // cuBLAS's: A100 80GB PCIe convolutions 0.87 against A100 GEMMs 1.2). NaN: its SGEMM scale.
  double measured_conv_scale = kUnknown;
  // The framework floors of this board's measurement rig (host CPU, driver, framework build)
  // relative to the typical rig's, fitted from its own measured kernels: multiplies every context
  // floor (ModelParams::context_overhead) of rows measured on it. Not a GPU capability.
  double measured_context_scale = kUnknown;
  std::string measured_source;

  // Dense peak for `d` in TFLOP/s; NaN when the GPU lacks the unit.
  double peak_tflops(DType d) const;
  // Whether `d` runs on tensor cores on this GPU (false: SIMT, e.g. fp16 on Pascal).
  bool has_tensor(DType d) const;
  // FP8 or FP4 on a GPU without such units: the 16-bit dtype (BF16, else FP16) whose tensor cores the
  // serving stacks' weight-only kernels multiply on; nullopt where `d` has its own units, is another
  // dtype, or no 16-bit tensor unit exists.
  std::optional<DType> weight_only_unit(DType d) const;
  // The datasheet peak GEMMs of `d` run at: its own, else that weight-only unit's, else FP32 (SIMT).
  // The peak-FLOP ratio between GPUs.
  // The dtype whose datasheet peak gemm_peak_tflops(d) is: d's own, else the unit that runs it (a
  // V100 has no BF16 peak: its BF16 work is sized against what runs it), else FP32.
  DType gemm_peak_dtype(DType d) const;
  double gemm_peak_tflops(DType d) const;
};

}  // namespace kcast
