// Building blocks of synthesis: kernel-row factories and a tape of forward ops with their backward
// kernels, grouped in sections (embeddings, one layer x count, head, loss). Inference emits the
// forward rows; training emits forward, then each section's backward in reverse op order, then the
// data-parallel gradient all-reduce and the optimizer step over the parameters the sections
// registered.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "model/kernel.h"
#include "predict/synth/optimizer.h"
#include "predict/synth/synth.h"

namespace kcast::synth {

// The suffix of a forward row that activation recomputation runs again before its backward.
inline constexpr const char* kRecomputeSuffix = " (recompute)";
// The copies of --cpu-offload-layers (transformer_synth.cc), which the step's parts overlap.
inline constexpr const char* kCpuOffloadName = "activations (cpu offload)";
// A row whose result the host reads before it can issue what follows (Megatron-Core's tokens per
// expert): the CPU waits there for the GPU to drain (predict/cli/synth_host_issue.h).
inline constexpr const char* kToHostTag = " (to host)";
// A row of the repeated layers whose pipelining, host issue and CUDA graphs the step's parts follow
// ("layer.", and "local_layer." for sliding-window layers): its name past that prefix; empty for
// every other row.
std::string_view repeated_layer_part(std::string_view name);

// A GEMM row C[m x n] = A[m x k] B[k x n], `batch` products; flops and bytes derived from the shape.
Kernel gemm(const std::string& name, DType dt, int64_t batch, int64_t m, int64_t n, int64_t k);
// Any non-GEMM row with explicit work: flops of one invocation, DRAM bytes read + written.
Kernel work(const std::string& name, KernelClass cls, DType dt, double flops, double bytes);
// A pointwise kernel over `elems` outputs touching `tensors` full-size tensors (inputs + outputs)
// of `elem_bytes` each, `flops_per_elem` nominal flops per output.
Kernel pointwise(const std::string& name, DType dt, double elems, double tensors, double flops_per_elem,
                 KernelClass cls = KernelClass::elementwise);
// A NCCL collective or point-to-point transfer: `bus_bytes` is what each GPU sends over its link
// (NCCL's bus bytes), the work the cost model's communication term moves.
Kernel collective(const std::string& name, DType dt, double bus_bytes);
// A ring all-reduce of `elems` elements over `ranks` GPUs: each sends 2 (ranks - 1) / ranks of them.
Kernel all_reduce(const std::string& name, DType dt, double elems, int64_t ranks);
// The share of a collective's bus bytes that leave the node, for a group of `group` GPUs whose members
// sit `stride` ranks apart on nodes of `per_node` GPUs (0 when the group fits in one node). A ring
// (all-reduce, reduce-scatter, all-gather) runs one channel per member of the group on a node, each
// through its own NIC, so a member's NIC carries 1 / (members per node) of its bus bytes; an
// all-to-all sends each peer its share, and the peers off the node are (group - members) / (group - 1)
// of them.
double ring_net_share(int64_t group, int64_t stride, int64_t per_node);
// Members of a group of `group` GPUs, `stride` ranks apart, that share one node of `per_node`.
int64_t members_per_node(int64_t group, int64_t stride, int64_t per_node);
double all_to_all_net_share(int64_t group, int64_t stride, int64_t per_node);
// Pipeline stages `stride` ranks apart: the share of the pp - 1 stage boundaries that cross nodes.
double stage_boundary_net_share(int64_t pp, int64_t stride, int64_t per_node);
// The row with `share` of its bytes sent over the network.
Kernel over_network(Kernel k, double share);
// The same row standing for `n` identical launches.
Kernel times(Kernel k, double n);
// A row-wise reduction (softmax): m = rows, n = the length each row is reduced over
// (docs/CLI-EXTENSIONS.md), which decides the kernel the framework picks.
Kernel over_rows(Kernel k, double rows, double row_len);

struct Section {
  std::string prefix;  // prepended to every name: "embed.", "layer.", "head."
  double count = 1;    // runs of the whole section in one step (layers x micro-batches)
  double weights = 1;  // distinct parameter copies the section holds on this GPU (its layers)
  bool recompute = false;  // training: the forward rows run again, named kRecomputeSuffix, before the backward
  double recompute_share = 1;  // of the section's runs, those recomputed (Megatron's block method)
  // Training, selective recomputation: these of the forward rows (indices into fwd) run again so,
  // and these rows besides (part of a row's launches: torchtitan's policy saves every other matmul).
  std::vector<size_t> recompute_ops;
  std::vector<Kernel> recompute_rows;
  std::vector<Kernel> fwd;
  std::vector<std::vector<Kernel>> bwd;  // per op, in forward order
  std::vector<int64_t> params;           // numel of each parameter tensor (once per repetition)
  // Expert parameters under expert parallelism: their gradients are all-reduced over the replicas
  // holding the same experts (dp / ep), not over all dp.
  std::vector<int64_t> expert_params;

  Section(std::string p, double c) : prefix(std::move(p)), count(c), weights(c) {}
  // A forward op and the kernels its backward launches (in launch order).
  void op(Kernel fwd_kernel, std::vector<Kernel> bwd_kernels = {});
  // Kernels that run only in backward at this point of the tape (gradient accumulation where a
  // tensor feeds several consumers).
  void backward_only(std::vector<Kernel> bwd_kernels);
  void param(int64_t numel) { params.push_back(numel); }
};

class Tape {
 public:
  Section& section(const std::string& prefix, double count);
  // The kernel list: forward rows; in training the backward rows, then, over `dp` data-parallel
  // replicas, the gradient all-reduce (the expert parameters' over dp / ep), and the optimizer step.
  // With `o.zero`, the ZeRO / FSDP collectives instead of the all-reduce, and the optimizer over this
  // replica's shard.
  std::vector<Kernel> assemble(const SynthOptions& o, DType param_dtype) const;
  // The forward rows of the last assemble() (its list starts with them).
  size_t forward_rows() const { return forward_rows_; }
  // Every parameter tensor this GPU holds (`experts`: only the expert-parallel ones; else the others).
  std::vector<int64_t> parameter_tensors() const;
  std::vector<int64_t> parameter_tensors(bool experts) const;
  // The step's footprint of those parameters (weights in `param_dtype`, of which `narrow_params` are
  // stored in `narrow_dtype` (quantized serving); gradients and optimizer state in training); the
  // caller adds any KV cache. ZeRO (o.zero) shards optimizer state, gradients and weights by stage.
  Footprint footprint(const SynthOptions& o, DType param_dtype, double narrow_params, DType narrow_dtype) const;

 private:
  std::deque<Section> sections_;  // deque: references from section() stay valid
  mutable size_t forward_rows_ = 0;
};

// InputError naming the option when a parallel degree or the micro-batch count is below 1, or when
// the global batch does not split evenly into data-parallel replicas x micro-batches.
void check_parallelism(const SynthOptions& opt);
// What --moe-expert-capacity-factor takes (SynthOptions::moe_capacity_factor), for the commands' errors.
inline constexpr const char* kCapacityFactorWhat = "a capacity factor above 0 (leave it out for dropless)";
// What --moe-load-imbalance takes (SynthOptions::moe_load_imbalance).
inline constexpr const char* kImbalanceWhat = "the busiest expert-parallel GPU's rows over the mean, 1 or more";

// DistributedDataParallel's gradient all-reduce over `dp` replicas: the parameters' gradients in
// buckets of 25 MiB (bucket_cap_mb), one ring all-reduce each. None for dp = 1.
// `what` qualifies the row's name (e.g. "expert gradients, ").
std::vector<Kernel> gradient_all_reduce(const std::vector<int64_t>& param_numels, DType dt, int64_t dp,
                                        const std::string& what = "");

// ZeRO's bucketed reduce-scatter or all-gather of `numels` over `dp` replicas (`what`: the NCCL op
// and what it moves): each sends (dp - 1) / dp of the bytes.
std::vector<Kernel> sharded_gradient_collectives(const std::vector<int64_t>& numels, DType dt, int64_t dp,
                                                const std::string& what);

}  // namespace kcast::synth
