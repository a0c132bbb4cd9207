// The collectives a parallel layout adds to a transformer layer.
//  - Tensor parallelism as Megatron-LM (Shoeybi et al. 2019): q/k/v and the first MLP projection
//    split their outputs (column parallel), the attention output and the second MLP projection
//    their inputs (row parallel), each GPU holding heads / tp and ffn / tp; after each row-parallel
//    projection an all-reduce of the activations, in backward one before each column-parallel
//    input's gradient leaves the block; norms, residuals and dropout on the hidden state run whole
//    on every GPU. The word embedding and the LM head split the vocabulary (an all-reduce after the
//    lookup; the cross-entropy all-reduces each token's max, target logit and sum).
//  - Sequence parallelism (Korthikanti et al. 2022): the all-reduces become reduce-scatter /
//    all-gather pairs around the regions outside tensor parallelism.
//  - Expert parallelism: the tokens' all-to-all to the GPUs holding their experts and back.
//  - Pipeline parallelism: the point-to-point sends at a stage boundary (their count is the
//    schedule's, set in transformer_synth.cc).
// Each collective's share of bytes that leaves the node comes from emitter.h's placement rules.
#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "model/error.h"
#include "predict/synth/transformer/moe_dispatch.h"
#include "predict/synth/transformer/transformer_synth.h"

namespace kcast::synth::transformer {

// Expert parallelism's exchange of this GPU's routed tokens (forward; their gradients in backward),
// as the --moe-dispatcher moves them (moe_dispatch.h): `dispatch` sends the tokens to their experts'
// GPUs, else the combine brings the results back.
void TransformerSynth::all_to_all(Section& s, const std::string& name, bool dispatch) {
  if (o_.ep <= 1) return;
  // Experts tp x cp ranks apart (Megatron-Core's order tp-cp-ep-dp); folded, on adjacent ranks.
  const int64_t stride = o_.folded_experts() ? 1 : tp_ * o_.cp;
  DispatchShape shape;
  shape.tokens = T_;
  shape.hidden = double(d_);
  shape.elem_bytes = e_;
  shape.experts = c_.experts;
  shape.k = c_.experts_per_token;
  // NCCL's all-to-all ends when the busiest GPU has received (dispatch) or sent back (combine) its rows.
  shape.busiest_rows = busiest_rows();
  shape.ep = o_.ep;
  shape.per_node = members_per_node(o_.ep, stride, o_.gpus_per_node);
  shape.groups = c_.expert_groups;
  shape.topk_groups = c_.topk_groups;
  const DispatchBytes b = dispatch_bytes(o_.moe_dispatcher, shape);
  std::string op;
  switch (o_.moe_dispatcher) {
    case MoeDispatcher::alltoall: op = " nccl:all_to_all"; break;
    case MoeDispatcher::allgather: op = dispatch ? " nccl:all_gather" : " nccl:reduce_scatter"; break;
    default: op = std::string(" ") + to_string(o_.moe_dispatcher) + (dispatch ? ":dispatch" : ":combine");
  }
  auto row = [&](const char* what) {
    Kernel k = collective(name + op + what, dt_, b.link);
    if (b.net > 0) k.net_bytes = b.net;
    return k;
  };
  s.op(row(" (expert parallel)"), {row(" (expert parallel, backward)")});
}

// The all-reduce of a [tokens, hidden] activation (or its gradient) over the tensor-parallel group.
// `forward`: the all-reduce of a row-parallel output (forward); else of a column-parallel input's
// gradient (backward). Under sequence parallelism a region's input is all-gathered (forward; its
// gradient reduce-scattered, and the input gathered again for the weight gradients, Megatron-LM
// keeping only its shard) and its output reduce-scattered (its gradient all-gathered).
void TransformerSynth::tp_all_reduce(Section& s, const std::string& name, bool forward, bool block) {
  if (tp_ <= 1) return;
  const double net = tp_net_share();
  if (!o_.sequence_parallel) {
    Kernel k = over_network(all_reduce(name + " nccl:all_reduce (tensor parallel)", dt_, T_ * d_, tp_), net);
    if (forward) s.op(std::move(k));
    else s.backward_only({std::move(k)});
    return;
  }
  const double share = double(tp_ - 1) / double(tp_) * T_ * d_;
  // Under a training recipe Transformer Engine quantizes a block projection's input (and the output
  // gradient before its data-gradient GEMM) first and all-gathers the narrow copy with its scales
  // (transformer_engine/pytorch/module/base.py: "AllGather buffers use fp8 when using fp8 recipe");
  // the reduce-scatters carry the 16-bit GEMM outputs.
  const bool narrow = block && recipe_;
  const DType gather_dt = narrow ? recipe_->gemm_dtype : dt_;
  const double gather_bytes = narrow ? recipe_->stored_bytes_per_elem / 2 : e_;  // one copy of the two
  auto c = [&](const char* op) {
    const bool gather = std::string_view(op).starts_with("all_gather");
    return over_network(collective(name + " nccl:" + op + " (sequence parallel)", gather ? gather_dt : dt_,
                                   share * (gather ? gather_bytes : e_)),
                        net);
  };
  if (forward) s.op(c("reduce_scatter"), {c("all_gather")});
  else s.op(c("all_gather"), {c("reduce_scatter"), c("all_gather (input again)")});
}

// One stage boundary crossed by a micro-batch: its activations forward, their gradient back.
void TransformerSynth::stage_sends(Section& s) {
  s.weights = 0;
  // Neighbouring stages sit tp x cp x dp ranks apart.
  const double net = stage_boundary_net_share(o_.pp, tp_ * o_.cp * o_.dp, o_.gpus_per_node);
  s.op(over_network(collective("send_recv nccl:send (pipeline activations)", dt_, T_ * d_ * e_), net),
       {over_network(collective("send_recv nccl:send (pipeline gradients)", dt_, T_ * d_ * e_), net)});
}

}  // namespace kcast::synth::transformer
