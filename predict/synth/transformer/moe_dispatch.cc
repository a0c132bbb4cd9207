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

DispatchBytes dispatch_bytes(MoeDispatcher d, const DispatchShape& s) {
  DispatchBytes b;
  if (s.ep <= 1) return b;
  const double ep = double(s.ep), row = s.hidden * s.elem_bytes;
  const int64_t members = std::clamp<int64_t>(s.per_node, 1, s.ep);
  const double nodes = double((s.ep + members - 1) / members);
  switch (d) {
    case MoeDispatcher::alltoall: {
      // k rows a token; (ep - 1) / ep of them to other GPUs, (ep - members) / ep off the node.
      const double rows = s.tokens * double(s.k);
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
      // Other GPUs holding one of the token's experts: by symmetry (ep - 1) / ep of those hit.
      b.link = s.tokens * row * expected_bins_hit(E, k, ep) * (ep - 1) / ep;
      if (nodes > 1) {
        double hit = expected_bins_hit(E, k, nodes);
        // Node-limited routing with groups that nodes hold whole: at most the chosen groups' nodes,
        // those drawn as topk_groups of the groups.
        if (s.groups > 1 && s.topk_groups > 0 && s.topk_groups < s.groups && s.groups % int64_t(nodes) == 0)
          hit = std::min(hit, expected_bins_hit(double(s.groups), double(s.topk_groups), nodes));
        b.net = s.tokens * row * hit * (nodes - 1) / nodes;
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
