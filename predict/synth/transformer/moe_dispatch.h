// The bytes expert parallelism moves per micro-batch and direction, in closed form, for each
// dispatcher (synth.h, MoeDispatcher). Routing is taken as balanced and uniform, as the published
// MoE runs force it (Megatron-Core's --moe-router-force-load-balancing): a token's k experts are k
// distinct experts drawn uniformly from E, spread evenly over the GPUs and nodes of the group.
#pragma once
#include <cstdint>
#include <string>

#include "predict/synth/synth.h"

namespace kcast::synth::transformer {

// The expected number of `bins` (GPUs, nodes) holding at least one of k distinct experts drawn
// uniformly from E spread evenly over the bins: bins (1 - C(E - E / bins, k) / C(E, k)).
double expected_bins_hit(double experts, double k, double bins);

struct DispatchShape {
  double tokens = 0;        // routed by this GPU per micro-batch
  double hidden = 0;        // the activations' width
  double elem_bytes = 2;    // the dtype they travel in
  int64_t experts = 0, k = 1;
  // The rows the busiest GPU of the group receives, where not tokens x k (token dropping's capacity,
  // routing imbalance): each dispatcher's bytes scale by their share of tokens x k.
  double busiest_rows = 0;
  int64_t ep = 1;           // the expert-parallel group
  int64_t per_node = 8;     // its members that share a node (the rest sit on other nodes)
  // Group-limited routing (DeepSeek-V3's node-limited top-k): the experts of a token lie in
  // `topk_groups` of `groups` contiguous expert groups (0: no limit).
  int64_t groups = 0, topk_groups = 0;
};

struct DispatchBytes {
  double link = 0;  // what this GPU sends over its GPU-to-GPU link (NCCL's bus bytes)
  double net = 0;   // the part of them that leaves the node
};

// One dispatch (forward; its gradient's combine in backward moves the same).
DispatchBytes dispatch_bytes(MoeDispatcher d, const DispatchShape& s);

// The communication buffers DeepEP's normal (training) kernels allocate on every GPU of a group of `ep`
// for activations `hidden_bytes` wide (Megatron-Core's fused_a2a.get_buffer: the larger of the dispatch
// and combine configs' NVLink and RDMA size hints; deep_ep/buffer.py's configs, csrc/config.hpp's sizes,
// 20 SMs). Other dispatchers: 0 (NCCL's buffers are the margin plan leaves; HybridEP's are not counted).
double dispatch_buffer_bytes(MoeDispatcher d, int64_t ep, double hidden_bytes);

// --moe-dispatcher's value; InputError naming the option and the choices otherwise.
MoeDispatcher moe_dispatcher_option(const std::string& value);

}  // namespace kcast::synth::transformer
