// The parts of a predicted training step (`kcast synth --mode train --gpu`): its communication by
// parallel group and what of it the framework hides behind compute, the pipeline bubble, the
// recomputed forward and the recipe's quantization kernels. The synthesized list is one GPU's step in
// sequence; a framework that overlaps a group's collectives with compute (synth.h, Framework) only
// waits for the part the overlapped compute cannot cover:
//   megatron:   tensor-parallel collectives behind the projections' GEMMs (tp_comm_overlap); pipeline
//               sends behind compute with the interleaved schedule (overlap_p2p_comm); the context-
//               parallel ring behind attention (Transformer Engine); the distributed optimizer's
//               gradient reduce-scatter behind one micro-batch's backward (overlap_grad_reduce) and
//               its parameter all-gather behind one micro-batch's forward (overlap_param_gather) —
//               the settings of Megatron-Bridge's published performance recipes;
//   torchtitan, automodel: FSDP2's all-gathers and reduce-scatters prefetched behind the forward and
//               the backward they serve, DDP's buckets behind the backward, the context-parallel ring
//               behind attention;
//               With --moe-a2a-overlap (Megatron-Core's batch-level EP overlap), the expert-parallel
//               dispatch and combine behind the layers' compute of the other micro-batch;
//   eager:      nothing overlaps (the step is the list's sum, as `kcast predict` gives it).
//   CPU activation offloading (--cpu-offload-layers): each offloaded layer's copy to the host behind the
//               next layer's forward, its reload behind the backward of the layer after it.
//   The host's issue of the kernels (synth_host_issue.h): what the GPU waits for the CPU, at the MoE
//               layers' host reads and wherever the host's issue outlasts the GPU's work.
//   The SMs of hidden collectives: a collective that runs beside compute holds SMs the compute cannot
//               use (NCCL's CTAs take an SM each and share it with nothing: 16 on a DGX with 8 NICs,
//               NVIDIA/nccl#689, 4 for a ring's send and receive; DeepEP's 20 and HybridEP's 16, Megatron-Core's
//               moe_deepep_num_sms / moe_hybridep_num_sms defaults; Transformer Engine's tensor-parallel
//               userbuffers move data with the copy engines, none): the compute beside it loses
//               hidden x SMs held / SMs.
// The step is then compute + exposed communication (+ exposed offload copies, + exposed host issue, +
// the hidden collectives' SMs), and never less than the communication itself.
#pragma once
#include <vector>

#include "model/kernel.h"
#include "predict/synth/synth.h"

namespace kcast::cli {

struct StepParts {
  double list_us = 0;          // every row's time x count, in sequence
  double compute_us = 0;       // the rows that are not collectives
  double comm_us = 0;          // every collective
  double exposed_comm_us = 0;  // the communication the step waits for
  double step_us = 0;          // compute + exposed communication, at least the communication
  double bubble_us = 0;        // the pipeline schedule's fill and drain (in compute_us already)
  double recompute_us = 0;     // the forward rows activation recomputation runs again
  double quantize_us = 0;      // a recipe's quantization kernels
  // Mixtures of experts: the expert-parallel dispatch and combine, the part the step waits for, and
  // the MoE blocks' own kernels (router, permutations, experts, shared experts).
  double expert_comm_us = 0, exposed_expert_comm_us = 0, expert_compute_us = 0;
  // CPU activation offloading: the copies to the host and back, and the part the step waits for.
  double offload_us = 0, exposed_offload_us = 0;
  // The host's issue of the kernels: its time, the part the GPU waits for, and the host reads.
  double host_us = 0, exposed_host_us = 0, host_syncs = 0;
  // The compute time hidden collectives cost by holding SMs (0 where the GPU's SM count is not given).
  double overlap_slowdown_us = 0;
};

// `rows`: the list as predicted; `row_us`: each row's time (one launch); `fp`: its footprint; `host_us`:
// each row's host time of one launch (empty: the host's issue is not charged, as under CUDA graphs);
// `sm_count`: the GPU's SMs (0: hidden collectives hold none).
StepParts step_parts(const std::vector<Kernel>& rows, const std::vector<double>& row_us, const synth::SynthOptions& o,
                     const synth::Footprint& fp, const std::vector<double>& host_us = {}, int sm_count = 0);

}  // namespace kcast::cli
