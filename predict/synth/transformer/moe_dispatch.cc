// Expert-parallel dispatch bytes (moe_dispatch.h).
#include "predict/synth/transformer/moe_dispatch.h"

#include <algorithm>

#include "model/error.h"

namespace kcast::synth::transformer {

double expected_bins_hit(double experts, double k, double bins) {
  if (bins <= 1) return bins;
  const double per_bin = experts / bins;
  // P(a bin holds none of the k): k draws without replacement, each missing the bin's experts.
  double miss = 1;
  for (int i = 0; i < int(k); ++i) miss *= std::max(0.0, (experts - per_bin - i) / (experts - i));
  return bins * (1 - miss);
}

namespace {

// deep_ep/buffer.py's recommended configs by group size: the NVLink receive slots of a channel and the
// RDMA send / receive slots, for dispatch and combine (num_max_nvl_chunked_recv_tokens,
// num_max_rdma_chunked_send_tokens, num_max_rdma_chunked_recv_tokens).
struct DeepEpConfig {
  int64_t ranks, nvl_recv, rdma_send, rdma_recv;
};
constexpr DeepEpConfig kDeepEpDispatch[] = {{2, 256, 6, 128},   {4, 256, 6, 128},   {8, 256, 6, 128},
                                            {16, 288, 20, 128}, {24, 288, 32, 128}, {32, 288, 32, 128},
                                            {64, 288, 28, 128}, {128, 560, 32, 128}, {144, 720, 12, 128},
                                            {160, 720, 12, 128}};
constexpr DeepEpConfig kDeepEpCombine[] = {{2, 256, 6, 128},   {4, 256, 6, 128},   {8, 256, 6, 128},
                                           {16, 288, 28, 128}, {24, 288, 20, 128}, {32, 288, 20, 128},
                                           {64, 288, 20, 128}, {128, 560, 12, 128}, {144, 720, 8, 128},
                                           {160, 720, 8, 128}};

// The config for a group: its own size's, else the next listed (DeepEP lists only these), else the largest.
template <size_t N>
const DeepEpConfig& deepep_config(const DeepEpConfig (&table)[N], int64_t ep) {
  for (const DeepEpConfig& c : table)
    if (c.ranks >= ep) return c;
  return table[N - 1];
}

// csrc/config.hpp's size hints, for 20 SMs (10 channels), 8 NVLink peers, an 8-byte SourceMeta, top-k
// and scale slots of 128.
constexpr double kChannels = 10, kPeers = 8, kSlotExtras = 8 + 128 * 8 + 128 * 4 + 128 * 4;

double rdma_ranks(int64_t ep) { return std::max<double>(double(ep) / kPeers, 1); }

// get_nvl_buffer_size_hint.
double deepep_nvl_bytes(const DeepEpConfig& c, int64_t ep, double hidden_bytes) {
  const double nvl_ranks = std::min<double>(double(ep), kPeers);
  return kChannels * nvl_ranks * (2 * rdma_ranks(ep) + 3) * 4 +
         kChannels * nvl_ranks * double(c.nvl_recv) * (hidden_bytes + kSlotExtras);
}

// get_rdma_buffer_size_hint: none inside one node.
double deepep_rdma_bytes(const DeepEpConfig& c, int64_t ep, double hidden_bytes) {
  if (ep <= kPeers) return 0;
  const double recv = double((c.rdma_recv + c.rdma_send - 1) / c.rdma_send * c.rdma_send);  // aligned to the sends
  return kChannels * rdma_ranks(ep) * (kPeers * 2 + 2) * 2 * 4 +
         kChannels * rdma_ranks(ep) * recv * 2 * (hidden_bytes + kSlotExtras + 16) + 1048576;
}

}  // namespace

double dispatch_buffer_bytes(MoeDispatcher d, int64_t ep, double hidden_bytes) {
  if (d != MoeDispatcher::deepep || ep <= 1) return 0;
  const DeepEpConfig &dispatch = deepep_config(kDeepEpDispatch, ep), &combine = deepep_config(kDeepEpCombine, ep);
  return std::max(deepep_nvl_bytes(dispatch, ep, hidden_bytes), deepep_nvl_bytes(combine, ep, hidden_bytes)) +
         std::max(deepep_rdma_bytes(dispatch, ep, hidden_bytes), deepep_rdma_bytes(combine, ep, hidden_bytes));
}

DispatchBytes dispatch_bytes(MoeDispatcher d, const DispatchShape& s) {
  DispatchBytes b;
  if (s.ep <= 1) return b;
  const double ep = double(s.ep), row = s.hidden * s.elem_bytes;
  const int64_t members = std::clamp<int64_t>(s.per_node, 1, s.ep);
  const double nodes = double((s.ep + members - 1) / members);
  switch (d) {
    case MoeDispatcher::alltoall: {
      // k rows a token; (ep - 1) / ep of them to other GPUs, (ep - members) / ep off the node.
      const double rows = s.busiest_rows > 0 ? s.busiest_rows : s.tokens * double(s.k);
      b.link = rows * row * (ep - 1) / ep;
      b.net = rows * row * (ep - double(members)) / ep;
      return b;
    }
    case MoeDispatcher::allgather:
      // Every GPU's tokens to every other: an all-gather's bus bytes; a ring crosses nodes through one
      // NIC per member of the group on a node.
      b.link = s.tokens * row * (ep - 1);
      b.net = nodes > 1 ? b.link / double(members) : 0;
      return b;
    case MoeDispatcher::deepep:
    case MoeDispatcher::hybridep: {
      const double E = double(s.experts), k = double(s.k);
      // The busiest GPU's share of the balanced tokens x k, which the exchange waits for.
      const double busiest = s.busiest_rows > 0 ? s.busiest_rows / (s.tokens * k) : 1.0;
      // Other GPUs holding one of the token's experts: by symmetry (ep - 1) / ep of those hit.
      b.link = busiest * s.tokens * row * expected_bins_hit(E, k, ep) * (ep - 1) / ep;
      if (nodes > 1) {
        double hit = expected_bins_hit(E, k, nodes);
        // Node-limited routing with groups that nodes hold whole: at most the chosen groups' nodes,
        // those drawn as topk_groups of the groups.
        if (s.groups > 1 && s.topk_groups > 0 && s.topk_groups < s.groups && s.groups % int64_t(nodes) == 0)
          hit = std::min(hit, expected_bins_hit(double(s.groups), double(s.topk_groups), nodes));
        b.net = busiest * s.tokens * row * hit * (nodes - 1) / nodes;
      }
      return b;
    }
  }
  return b;
}

MoeDispatcher moe_dispatcher_option(const std::string& value) {
  for (MoeDispatcher d : {MoeDispatcher::alltoall, MoeDispatcher::deepep, MoeDispatcher::hybridep, MoeDispatcher::allgather})
    if (value == to_string(d)) return d;
  throw InputError("option '--moe-dispatcher': '" + value + "' is not one of alltoall, deepep, hybridep, allgather");
}

}  // namespace kcast::synth::transformer
