// The host's side of a predicted training step (`kcast synth --mode train --gpu`): PyTorch issues
// every kernel from one CPU thread, and the GPU runs ahead only while that thread keeps its queue ahead
// of it. Two ways the issue shows in the step:
//   - Throughput: over a stretch without a synchronization, the GPU takes at least as long as the host
//     takes to issue its kernels (the sum of their host times).
//   - Synchronization: where the host reads a value the GPU computes (rows tagged synth::kToHostTag:
//     Megatron-Core's tokens per expert, which Transformer Engine's grouped GEMM takes as a host list),
//     the host waits for the GPU to drain, and the kernels after it start no sooner than the host
//     issues them. The stretch from one such row to the next (an MoE layer's forward) is raced launch
//     by launch: kernel i starts at max(the GPU's end of kernel i - 1, the host's issue of kernel i).
// The host time of one launch is the framework floor the model holds for the kernel's op family
// (ModelParams::context_overhead_us: PyTorch eager's per-op time on NeuSight's rig, fitted on its per-op
// corpus; measurement_context.h names the family). A model without those floors charges none. CUDA-
// graph replay issues without the host: the caller passes no host times then.
#pragma once
#include <cstddef>
#include <vector>

#include "model/kernel.h"
#include "model/model_params.h"

namespace kcast::cli {

struct HostIssue {
  double host_us = 0;     // every launch's host time, x count
  double exposed_us = 0;  // the GPU's idle time waiting for the host
  double syncs = 0;       // the host reads (x count) the stretches start at
};

// `rows` in the step's order with their counts; `gpu_us`: each row's GPU time of one launch (0 for rows
// off the compute stream: collectives, whose exposure the step's parts count, and the offload copies);
// `host_us`: each row's host time of one launch; rows before `forward_rows` are the forward.
HostIssue host_issue(const std::vector<Kernel>& rows, const std::vector<double>& gpu_us,
                     const std::vector<double>& host_us, size_t forward_rows);

// Each row's host time of one launch: its op family's framework floor in `params`. Rows inside the
// per-layer CUDA graphs of `graph_modules` (synth/cuda_graph_modules.h) cost nothing of their own; the
// first row of each captured run carries the graph's replay, one launch at the element-wise floor.
std::vector<double> launch_host_us(const std::vector<Kernel>& rows, const ModelParams& params,
                                   unsigned graph_modules = 0);

}  // namespace kcast::cli
