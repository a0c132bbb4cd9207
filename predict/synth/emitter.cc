// Kernel-row factories, the forward/backward tape that assembles a step (optimizer.cc adds the
// optimizer step), and the data-parallel gradient collectives.
#include "predict/synth/emitter.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "model/error.h"
#include "predict/synth/optimizer.h"

namespace kcast::synth {

std::string_view repeated_layer_part(std::string_view name) {
  for (std::string_view prefix : {"layer.", "local_layer."})
    if (name.starts_with(prefix)) return name.substr(prefix.size());
  return {};
}

Kernel gemm(const std::string& name, DType dt, int64_t batch, int64_t m, int64_t n, int64_t k) {
  Kernel g;
  g.name = name;
  g.cls = KernelClass::gemm;
  g.cls_given = true;
  g.dtype = dt;
  g.batch = batch;
  g.m = m;
  g.n = n;
  g.k = k;
  g.derive_from_shape();
  return g;
}

Kernel work(const std::string& name, KernelClass cls, DType dt, double flops, double bytes) {
  Kernel w;
  w.name = name;
  w.cls = cls;
  w.cls_given = true;
  // tf32 is a GEMM math mode; everything else runs in fp32.
  w.dtype = dt == DType::tf32 ? DType::fp32 : dt;
  w.flops = flops;
  w.bytes = bytes;
  w.access = thread_access_of(cls, name);  // as the kernel-list reader finds it
  return w;
}

Kernel pointwise(const std::string& name, DType dt, double elems, double tensors, double flops_per_elem,
                 KernelClass cls) {
  return work(name, cls, dt, elems * flops_per_elem, elems * tensors * dtype_bytes(dt));
}

Kernel collective(const std::string& name, DType dt, double bus_bytes) {
  return work(name, KernelClass::communication, dt, 0, bus_bytes);
}

int64_t members_per_node(int64_t group, int64_t stride, int64_t per_node) {
  return std::clamp<int64_t>(per_node / std::max<int64_t>(stride, 1), 1, std::max<int64_t>(group, 1));
}

double ring_net_share(int64_t group, int64_t stride, int64_t per_node) {
  const int64_t m = members_per_node(group, stride, per_node);
  return group <= m ? 0.0 : 1.0 / double(m);
}

double all_to_all_net_share(int64_t group, int64_t stride, int64_t per_node) {
  const int64_t m = members_per_node(group, stride, per_node);
  return group <= m ? 0.0 : double(group - m) / double(group - 1);
}

double stage_boundary_net_share(int64_t pp, int64_t stride, int64_t per_node) {
  if (pp <= 1) return 0.0;
  if (stride >= per_node) return 1.0;  // every stage on nodes of its own
  const int64_t stages_per_node = per_node / stride;
  if (pp <= stages_per_node) return 0.0;
  const int64_t nodes = (pp + stages_per_node - 1) / stages_per_node;
  return double(nodes - 1) / double(pp - 1);
}

Kernel over_network(Kernel k, double share) {
  if (share > 0 && known(k.bytes)) k.net_bytes = share * k.bytes;
  return k;
}

Kernel all_reduce(const std::string& name, DType dt, double elems, int64_t ranks) {
  const double w = dtype_bytes(dt);
  return collective(name, dt, 2.0 * double(ranks - 1) / double(ranks) * elems * w);
}

Kernel times(Kernel k, double n) {
  k.count *= n;
  return k;
}

Kernel over_rows(Kernel k, double rows, double row_len) {
  k.m = int64_t(rows);
  k.n = int64_t(row_len);
  return k;
}

void Section::op(Kernel fwd_kernel, std::vector<Kernel> bwd_kernels) {
  fwd.push_back(std::move(fwd_kernel));
  bwd.push_back(std::move(bwd_kernels));
}

void Section::backward_only(std::vector<Kernel> bwd_kernels) { bwd.push_back(std::move(bwd_kernels)); }

Section& Tape::section(const std::string& prefix, double count) {
  sections_.emplace_back(prefix, count);
  return sections_.back();
}

std::vector<int64_t> Tape::parameter_tensors(bool experts) const {
  std::vector<int64_t> out;
  for (const auto& s : sections_) {
    const auto& p = experts ? s.expert_params : s.params;
    for (double r = 0; r < s.weights; ++r) out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

std::vector<int64_t> Tape::parameter_tensors() const {
  std::vector<int64_t> out = parameter_tensors(false), experts = parameter_tensors(true);
  out.insert(out.end(), experts.begin(), experts.end());
  return out;
}

namespace {

double sum(const std::vector<int64_t>& numels) {
  double n = 0;
  for (int64_t v : numels) n += double(v);
  return n;
}

// Each tensor's share on one of `ranks` replicas (ZeRO's flat shards, tensor by tensor here).
std::vector<int64_t> shards(const std::vector<int64_t>& numels, int64_t ranks) {
  std::vector<int64_t> out;
  for (int64_t n : numels) out.push_back((n + ranks - 1) / ranks);
  return out;
}

}  // namespace

Footprint Tape::footprint(const SynthOptions& o, DType param_dtype, double narrow_params, DType narrow_dtype) const {
  Footprint f;
  const double dense = sum(parameter_tensors(false)), experts = sum(parameter_tensors(true));
  f.params = dense + experts;
  const double e = dtype_bytes(param_dtype);
  f.weight_bytes = (f.params - narrow_params) * e + narrow_params * dtype_bytes(narrow_dtype);
  if (o.mode != Mode::train) return f;
  // ZeRO: the dense parameters' state is sharded over the dp replicas, the experts' over the dp / ep
  // replicas that hold the same experts.
  // Context-parallel GPUs hold the same weights: their state is sharded and their gradients reduced
  // over dp x cp.
  const double dp = double(o.dp * o.cp), edp = double(o.expert_replicas());
  const double sharded = dense / dp + experts / edp;
  f.gradient_bytes = (o.zero >= 2 ? sharded : f.params) * e;
  // Adam's two moments in the weights' dtype, or with fp32 master weights the master copy and both
  // moments in fp32 (SGD without momentum: the master copy alone).
  const double state = o.master_weights ? 4.0 * (1 + (keeps_moments(o.optimizer) ? 2 : 0))
                       : keeps_moments(o.optimizer) ? 2 * e
                                                        : 0.0;
  f.optimizer_bytes = o.optimizer == Optimizer::none ? 0 : state * (o.zero >= 1 ? sharded : f.params);
  if (o.zero >= 3) {
    // Held sharded, but a section's parameters are gathered whole while it runs, and FSDP prefetches
    // the next one in backward: two sections' worth at a time.
    double largest = 0;
    for (const auto& s : sections_)
      if (s.weights > 0) largest = std::max(largest, sum(s.params) + sum(s.expert_params));
    f.weight_bytes = sharded * e + 2 * largest * e;
  }
  return f;
}

std::vector<Kernel> Tape::assemble(const SynthOptions& o, DType param_dtype) const {
  std::vector<Kernel> out;
  auto put = [&](const Section& s, Kernel k) {
    if (s.count <= 0) return;  // a section that holds weights here but launches nothing on the path
    k.name = s.prefix + k.name;
    k.count *= s.count;
    out.push_back(std::move(k));
  };
  if (o.master_weights && dtype_bytes(param_dtype) != 2)
    throw InputError("option '--master-weights': fp32 master copies of 16-bit weights; this step trains in " +
                     std::string(to_string(param_dtype)) + " (give --dtype bf16 or fp16)");
  const int64_t dp = o.dp * o.cp, edp = o.expert_replicas();  // the weights' replicas (context parallel too)
  const bool full_shard = o.mode == Mode::train && o.zero >= 3 && dp > 1;
  // Data-parallel groups: replicas tp ranks apart; the expert replicas holding the same experts tp x ep.
  const double dp_net = ring_net_share(dp, o.tp, o.gpus_per_node);
  const double edp_net = ring_net_share(edp, o.folded_experts() ? o.ep : o.tp * o.cp * o.ep, o.gpus_per_node);
  auto put_net = [&](std::vector<Kernel> ks, double share, double n = 1) {
    for (auto& k : ks) out.push_back(times(over_network(std::move(k), share), n));
  };
  const double w = dtype_bytes(param_dtype);
  // ZeRO-3 / FSDP FULL_SHARD: a section's parameters are all-gathered from the replicas before its
  // forward and again before its backward, and its gradients reduce-scattered after it, every run
  // of the section (count), each on (ranks - 1) / ranks of the bytes.
  auto unit_collective = [&](const Section& s, const std::string& what) {
    if (s.weights <= 0) return;  // parameters another GPU holds (the embedding on a later pipeline stage)
    const auto units = {std::tuple{&s.params, dp, dp_net, ""},
                        std::tuple{&s.expert_params, edp, edp_net, "expert "}};
    for (const auto& [numels, ranks, net, kind] : units) {
      const double elems = sum(*numels);
      if (elems <= 0 || ranks <= 1) continue;
      put(s, over_network(collective("fsdp nccl:" + what + " (" + kind +
                                         (what == "reduce_scatter" ? "gradients)" : "parameters)"),
                                     param_dtype, double(ranks - 1) / double(ranks) * elems * w),
                          net));
    }
  };
  for (const auto& s : sections_) {
    if (full_shard) unit_collective(s, "all_gather");
    for (const auto& k : s.fwd) put(s, k);
  }
  forward_rows_ = out.size();
  if (o.mode != Mode::train) return out;
  for (auto s = sections_.rbegin(); s != sections_.rend(); ++s) {
    if (full_shard) unit_collective(*s, "all_gather");
    auto recompute = [&](Kernel k) {
      k.name += kRecomputeSuffix;
      put(*s, std::move(k));
    };
    if (s->recompute)
      for (Kernel k : s->fwd) {
        k.count *= s->recompute_share;
        recompute(std::move(k));
      }
    else
      for (size_t i : s->recompute_ops) recompute(s->fwd[i]);
    for (const Kernel& k : s->recompute_rows) recompute(k);
    for (auto op = s->bwd.rbegin(); op != s->bwd.rend(); ++op)
      for (const auto& k : *op) put(*s, k);
    if (full_shard) unit_collective(*s, "reduce_scatter");
  }
  std::vector<int64_t> params = parameter_tensors(false);
  const std::vector<int64_t> experts = parameter_tensors(true);
  if (o.zero == 0) {
    put_net(gradient_all_reduce(params, param_dtype, dp), dp_net);
    put_net(gradient_all_reduce(experts, param_dtype, edp, "expert gradients, "), edp_net);
  } else if (!full_shard) {
    // ZeRO-1/2: the gradients reduce-scattered (each replica keeps its shard's sum), then the updated
    // shards all-gathered: an all-reduce's bytes in two halves around the optimizer step.
    // ZeRO-2 keeps no whole gradients, so each micro-batch's are reduce-scattered as they come.
    const double per_step = o.zero == 2 ? double(o.microbatches) : 1.0;
    put_net(sharded_gradient_collectives(params, param_dtype, dp, "reduce_scatter (gradients)"), dp_net, per_step);
    put_net(sharded_gradient_collectives(experts, param_dtype, edp, "reduce_scatter (expert gradients)"), edp_net,
            per_step);
  }
  // The optimizer updates this replica's shard under ZeRO, everything otherwise.
  std::vector<int64_t> updated = o.zero >= 1 ? shards(params, dp) : params;
  const std::vector<int64_t> updated_experts = o.zero >= 1 ? shards(experts, edp) : experts;
  updated.insert(updated.end(), updated_experts.begin(), updated_experts.end());
  const bool fused_adam = o.framework == Framework::megatron && keeps_moments(o.optimizer);
  for (auto& k : fused_adam ? fused_adam_rows(updated, param_dtype, o.master_weights)
                            : optimizer_rows(o.optimizer, updated, param_dtype, o.master_weights))
    out.push_back(std::move(k));
  if (o.zero >= 1 && !full_shard) {
    put_net(sharded_gradient_collectives(params, param_dtype, dp, "all_gather (updated parameters)"), dp_net);
    put_net(sharded_gradient_collectives(experts, param_dtype, edp, "all_gather (updated expert parameters)"),
            edp_net);
  }
  return out;
}

// --moe-a2a-overlap: a Megatron training option, under Megatron-Core's own conditions for
// overlap_moe_expert_parallel_comm (TransformerConfig.__post_init__,
// megatron/core/transformer/transformer_config.py): expert parallelism over the all-to-all or a flex
// (DeepEP / HybridEP) dispatcher, an interleaved schedule where there are pipeline stages (the overlap
// pairs one micro-batch's forward with another's backward chunk by chunk), and no full recomputation
// (a checkpointed layer's backward is one opaque recompute-and-backward the scheduler cannot split).
namespace {
void check_moe_a2a_overlap(const SynthOptions& opt) {
  if (!opt.moe_a2a_overlap) return;
  if (opt.framework != Framework::megatron || opt.mode != Mode::train)
    throw InputError("option '--moe-a2a-overlap': Megatron-Core's overlap, only with --mode train --framework megatron");
  const std::string what = "option '--moe-a2a-overlap': Megatron-Core overlaps the expert-parallel exchange ";
  if (opt.ep < 2) throw InputError(what + "only with expert parallelism; give --ep 2 or more");
  if (opt.moe_dispatcher == MoeDispatcher::allgather)
    throw InputError(what + "only with the alltoall or a flex dispatcher (--moe-dispatcher alltoall, deepep or hybridep)");
  if (opt.pp > 1 && opt.virtual_stages < 2)
    throw InputError(what + "with pipeline stages only on an interleaved schedule; give --virtual-stages 2 or more");
  if (opt.recompute)
    throw InputError(what + "without full recomputation; drop --recompute full (selective modules are fine)");
}

// Megatron-Core's conditions on token dropping (TransformerConfig.__post_init__): a capacity only with
// the alltoall or allgather dispatcher (the flex ones, DeepEP and HybridEP, move every routed row), padding
// only with a capacity.
void check_moe_capacity(const SynthOptions& opt) {
  if (opt.moe_capacity_factor == 0 && !opt.moe_pad_to_capacity) return;
  const char* option = opt.moe_capacity_factor != 0 ? "--moe-expert-capacity-factor" : "--moe-pad-expert-input-to-capacity";
  const std::string what = std::string("option '") + option + "': ";
  if (opt.mode != Mode::train || opt.framework != Framework::megatron)
    throw InputError(what + "Megatron-Core's token dropping, only with --mode train --framework megatron");
  if (opt.moe_capacity_factor != 0 && !(opt.moe_capacity_factor > 0 && std::isfinite(opt.moe_capacity_factor)))
    throw InputError(what + kCapacityFactorWhat);
  if (opt.moe_pad_to_capacity && opt.moe_capacity_factor == 0)
    throw InputError(what + "pads each expert's rows to a capacity; give --moe-expert-capacity-factor too");
  if (opt.moe_dispatcher == MoeDispatcher::deepep || opt.moe_dispatcher == MoeDispatcher::hybridep)
    throw InputError(what + "Megatron-Core drops tokens only with the alltoall or allgather dispatcher "
                     "(--moe-dispatcher alltoall or allgather)");
}

// The busiest GPU of the group receives between the mean and every routed row.
void check_moe_load_imbalance(const SynthOptions& opt) {
  if (opt.moe_load_imbalance == 1) return;
  const std::string what = "option '--moe-load-imbalance': ";
  if (opt.ep < 2)
    throw InputError(what + "the busiest expert-parallel GPU's rows over the mean; give --ep 2 or more");
  if (!(opt.moe_load_imbalance >= 1 && opt.moe_load_imbalance <= double(opt.ep)))
    throw InputError(what + "from 1 (balanced) to --ep " + std::to_string(opt.ep) + " (every routed row on one GPU)");
}
}  // namespace

void check_parallelism(const SynthOptions& opt) {
  const std::pair<const char*, int64_t> degrees[] = {
      {"tp", opt.tp}, {"pp", opt.pp}, {"dp", opt.dp}, {"ep", opt.ep}, {"microbatches", opt.microbatches}};
  for (const auto& [option, v] : degrees)
    if (v < 1) throw InputError(std::string("option '--") + option + "': must be at least 1");
  if (opt.zero < 0 || opt.zero > 3) throw InputError("option '--zero': a ZeRO stage, 0 to 3");
  if (opt.zero > 0 && opt.mode != Mode::train)
    throw InputError("option '--zero': shards training state (optimizer, gradients, parameters); use --mode train");
  if (opt.zero > 0 && opt.dp * opt.cp < 2)
    throw InputError("option '--zero': shards over the data-parallel replicas; give --dp 2 or more");
  if (opt.gpus_per_node < 1) throw InputError("option '--gpus-per-node': must be at least 1");
  if (opt.cp < 1) throw InputError("option '--cp': must be at least 1");
  if (opt.master_weights && opt.mode != Mode::train)
    throw InputError("option '--master-weights': mixed-precision training state; use --mode train");
  check_moe_a2a_overlap(opt);
  check_moe_capacity(opt);
  check_moe_load_imbalance(opt);
  if (opt.fp8_param_gather &&
      (opt.mode != Mode::train || opt.framework != Framework::megatron || opt.recipe == Recipe::none ||
       opt.recipe == Recipe::nvfp4 || opt.zero >= 3))
    throw InputError("option '--fp8-param-gather': Megatron's FP8 parameters, only with --mode train --framework "
                     "megatron, an FP8 --recipe (delayed, current, mxfp8, block) and --zero 0 to 2");
  if (opt.cuda_graph_modules != 0 && (opt.mode != Mode::train || opt.framework != Framework::megatron))
    throw InputError("option '--cuda-graph-modules': Megatron-LM's per-layer training graphs, only with --mode train "
                     "--framework megatron");
  if (opt.mtp_layers > 0 && opt.mode != Mode::train)
    throw InputError("option '--mtp-layers': multi-token prediction is a training objective; use --mode train");
  if (opt.etp != 0 && opt.mode != Mode::train)
    throw InputError("option '--etp': expert tensor parallelism of a training step; use --mode train");
  if (opt.etp != 0 && opt.etp != 1 && opt.etp != opt.tp)
    throw InputError("option '--etp': " + std::to_string(opt.etp) + " is neither 1 (whole experts on each GPU) nor --tp " +
                     std::to_string(opt.tp) + " (each expert split as the dense MLP)");
  if ((opt.dp * opt.cp) % opt.ep != 0 && !opt.folded_experts())
    throw InputError("option '--ep': " + std::to_string(opt.ep) + " expert-parallel GPUs divide neither the " +
                     std::to_string(opt.dp * opt.cp) + " data" + (opt.cp > 1 ? " x context" : "") +
                     "-parallel GPUs (--dp" + (opt.cp > 1 ? " x --cp" : "") + ") nor the " +
                     std::to_string(opt.tp * opt.cp * opt.dp) + " tensor x data" + (opt.cp > 1 ? " x context" : "") +
                     "-parallel GPUs they are drawn from");
  if (opt.folded_experts() && opt.tp > 1 && !opt.sequence_parallel)
    throw InputError("option '--ep': " + std::to_string(opt.ep) + " expert-parallel GPUs fold over the tensor-parallel "
                     "ranks (more than the " + std::to_string(opt.dp) + " data-parallel replicas), which routes each "
                     "GPU's sequence-parallel shard of the tokens: give --sequence-parallel");
  const int64_t batch = opt.batch ? opt.batch : 1;
  if (batch % (opt.dp * opt.microbatches) != 0)
    throw InputError("option '--batch': the global batch " + std::to_string(batch) + " does not divide into " +
                     std::to_string(opt.dp) + " data-parallel replicas x " + std::to_string(opt.microbatches) +
                     " micro-batches");
}

std::vector<Kernel> sharded_gradient_collectives(const std::vector<int64_t>& numels, DType dt, int64_t dp,
                                                const std::string& what) {
  if (dp <= 1 || numels.empty()) return {};
  const double w = dtype_bytes(dt), elems = sum(numels);
  constexpr double kBucketBytes = 25.0 * 1024 * 1024;  // the DDP bucket size, for the same launch granularity
  const double buckets = std::max(1.0, std::ceil(elems * w / kBucketBytes));
  Kernel k = collective("dp.zero nccl:" + what, dt, double(dp - 1) / double(dp) * elems / buckets * w);
  k.count = buckets;
  return {std::move(k)};
}

std::vector<Kernel> gradient_all_reduce(const std::vector<int64_t>& numels, DType dt, int64_t dp, const std::string& what) {
  if (dp <= 1 || numels.empty()) return {};
  double elems = 0;
  for (int64_t n : numels) elems += double(n);
  const double w = dtype_bytes(dt);
  constexpr double kBucketBytes = 25.0 * 1024 * 1024;  // torch DDP bucket_cap_mb = 25
  const double buckets = std::max(1.0, std::ceil(elems * w / kBucketBytes));
  Kernel k = all_reduce("dp.grad nccl:all_reduce (" + what + "DistributedDataParallel bucket)", dt, elems / buckets, dp);
  k.count = buckets;
  return {std::move(k)};
}

}  // namespace kcast::synth
