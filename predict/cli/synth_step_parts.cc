// Step parts (synth_step_parts.h): the rows told apart by the names synth gives them.
#include "predict/cli/synth_step_parts.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "predict/cli/synth_host_issue.h"
#include "predict/synth/emitter.h"
#include "predict/synth/transformer/recipe.h"

namespace kcast::cli {

namespace {

using synth::Framework;

enum Group { kDpGrad, kDpParams, kFsdpForward, kFsdpBackward, kTensor, kPipeline, kContext, kExpert, kOther, kGroups };

bool has(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

Group group_of(const std::string& name, bool forward) {
  if (has(name, "dp.grad ") || has(name, "dp.zero nccl:reduce_scatter")) return kDpGrad;
  if (has(name, "dp.zero nccl:all_gather")) return kDpParams;
  if (has(name, "fsdp nccl:")) return forward ? kFsdpForward : kFsdpBackward;
  if (has(name, "(tensor parallel") || has(name, "(sequence parallel") || has(name, "vocab-parallel"))
    return kTensor;
  if (has(name, "(pipeline ")) return kPipeline;
  if (has(name, "context-parallel")) return kContext;
  if (has(name, "(expert parallel")) return kExpert;
  return kOther;
}

bool in_pipelined_layers(const std::string& name) { return !synth::repeated_layer_part(name).empty(); }

// The section a row belongs to: its name up to the first '.' ("layer", "local_layer", "head", ...).
std::string_view section_of(const std::string& name) {
  const size_t dot = name.find('.');
  return std::string_view(name).substr(0, dot == std::string::npos ? 0 : dot);
}

// Transformer Engine's userbuffers overlap each sequence-parallel collective with one GEMM
// (transformer_engine/pytorch/module/base.py, initialize_ub): an all-gather of a projection's input,
// or of the output gradient before a data-gradient GEMM, with the GEMM that consumes it, chunk by
// chunk (ring_exchange: qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad); a reduce-scatter of a
// projection's output with the GEMM that produces it (pipeline: proj_fprop, fc2_fprop); in the
// backward of the column-parallel projections the input gradient's reduce-scatter with the weight-
// gradient GEMM and the input's second all-gather with the data-gradient GEMM (bulk: qkv_dgrad,
// qkv_wgrad, fc1_dgrad, fc1_wgrad). In synth's row order: an all-gather's partner is the next GEMM, a
// reduce-scatter's the previous one, the input's second all-gather's the previous data-gradient GEMM;
// all in the collective's own section. -1 where there is none.
long userbuffers_partner(const std::vector<Kernel>& rows, size_t r) {
  const std::string& name = rows[r].name;
  const std::string_view section = section_of(name);
  const bool again = has(name, "(input again)"), gather = has(name, "all_gather");
  auto gemm_in_section = [&](size_t i) {
    return rows[i].cls == KernelClass::gemm && section_of(rows[i].name) == section;
  };
  if (gather && !again) {
    for (size_t i = r + 1; i < rows.size() && section_of(rows[i].name) == section; ++i)
      if (gemm_in_section(i)) return long(i);
    return -1;
  }
  for (size_t i = r; i-- > 0 && section_of(rows[i].name) == section;)
    if (gemm_in_section(i) && (!again || has(rows[i].name, "(dgrad)"))) return long(i);
  return -1;
}

// The SMs a group's collectives hold while they run (synth_step_parts.h): NCCL's 16 on a DGX with 8 NICs
// (NVIDIA/nccl#689; its all-to-all's send/recv kernel runs 16 CTAs, NVIDIA/nccl#1598), 4 for the
// point-to-point exchanges of the pipeline and the context-parallel ring (a send to the next rank and a
// receive from the previous at once, NCCL's channels per peer "typically 2", NVIDIA/nccl#1424), the
// expert-parallel exchange's own kernels where
// the dispatcher has them (Megatron-Core's defaults), none for the tensor-parallel userbuffers'
// copy-engine exchanges.
constexpr double kNcclSms = 16, kP2pSms = 4, kDeepEpSms = 20, kHybridEpSms = 16;
double sms_held(Group g, const synth::SynthOptions& o) {
  if (g == kTensor || g == kOther) return 0;
  if (g == kPipeline || g == kContext) return kP2pSms;
  if (g != kExpert) return kNcclSms;
  return o.moe_dispatcher == synth::MoeDispatcher::deepep     ? kDeepEpSms
         : o.moe_dispatcher == synth::MoeDispatcher::hybridep ? kHybridEpSms
                                                              : kNcclSms;
}

}  // namespace

StepParts step_parts(const std::vector<Kernel>& rows, const std::vector<double>& row_us, const synth::SynthOptions& o,
                     const synth::Footprint& fp, const std::vector<double>& host_us, int sm_count) {
  StepParts p;
  std::array<double, kGroups> comm{};
  double forward = 0, backward = 0, gemm = 0, attention = 0, pipelined = 0, pipelined_compute = 0;
  double layers_forward = 0, layers_backward = 0, offload_out = 0, offload_back = 0;
  const size_t forward_rows = fp.forward_rows > 0 ? fp.forward_rows : rows.size();
  // The recipe's quantization kernels, by the name its table gives them (recipe.h).
  const synth::transformer::RecipeKernels* recipe = synth::transformer::recipe_kernels(o.recipe);
  // The host's issue races the compute stream's rows: collectives and the offload copies run beside it.
  std::vector<double> compute_stream_us(host_us.empty() ? 0 : rows.size(), 0.0);
  for (size_t r = 0; r < rows.size(); ++r) {
    const Kernel& k = rows[r];
    const double us = row_us[r] * k.count;
    p.list_us += us;
    if (in_pipelined_layers(k.name)) pipelined += us;
    if (has(k.name, synth::kCpuOffloadName)) {  // on the copy stream, not the compute one
      (r < forward_rows ? offload_out : offload_back) += us;
      continue;
    }
    if (k.cls == KernelClass::communication) {
      comm[group_of(k.name, r < forward_rows)] += us;
      continue;
    }
    if (!host_us.empty()) compute_stream_us[r] = row_us[r];
    if (in_pipelined_layers(k.name)) {
      pipelined_compute += us;
      (r < forward_rows ? layers_forward : layers_backward) += us;
    }
    if (has(k.name, ".moe.")) p.expert_compute_us += us;
    if (k.name.ends_with(synth::kRecomputeSuffix)) p.recompute_us += us;
    if (recipe && (has(k.name, recipe->quantize) || (recipe->multi_quantize && has(k.name, recipe->multi_quantize))))
      p.quantize_us += us;
    if (k.cls == KernelClass::gemm) gemm += us;
    if (k.cls == KernelClass::attention) attention += us;
    if (k.cls == KernelClass::optimizer) continue;
    (r < forward_rows ? forward : backward) += us;
  }
  for (double c : comm) p.comm_us += c;
  p.offload_us = offload_out + offload_back;
  p.compute_us = p.list_us - p.comm_us - p.offload_us;
  // CPU offloading: each offloaded layer's copy runs behind the next layer's compute (its reload behind
  // the backward of the layer after it), one copy at a time: what a layer's copy outlasts a layer's
  // compute is waited for, in each direction.
  if (p.offload_us > 0 && fp.layers > 0) {
    const double share = double(o.cpu_offload_layers) / fp.layers;
    p.exposed_offload_us = std::max(0.0, offload_out - share * layers_forward) +
                           std::max(0.0, offload_back - share * layers_backward);
  }
  // The 1F1B schedule's fill and drain: pp - 1 of the m v + pp - 1 chunk times the layers' rows stand for.
  const double m = double(o.microbatches), v = double(o.virtual_stages), pp = double(o.pp);
  if (o.pp > 1) p.bubble_us = pipelined * (pp - 1) / (m * v + pp - 1);

  auto beyond = [](double c, double hidden_by) { return std::max(0.0, c - hidden_by); };
  std::array<double, kGroups> exposed = comm;
  if (o.framework != Framework::eager) {
    exposed[kContext] = beyond(comm[kContext], attention);
    exposed[kDpGrad] = beyond(comm[kDpGrad], backward / m);
    exposed[kDpParams] = beyond(comm[kDpParams], forward / m);
    exposed[kFsdpForward] = beyond(comm[kFsdpForward], forward);
    exposed[kFsdpBackward] = beyond(comm[kFsdpBackward], backward);
  }
  if (o.framework == Framework::megatron) {
    // Each sequence-parallel collective behind its own GEMM (userbuffers_partner): what it outlasts
    // that GEMM is waited for. The rest of the tensor-parallel traffic (vocabulary-parallel head and
    // loss, all-reduces without sequence parallelism) behind the GEMMs no collective is paired with.
    double paired_comm = 0, paired_gemm = 0, paired_exposed = 0;
    for (size_t r = 0; r < rows.size(); ++r) {
      const Kernel& k = rows[r];
      if (k.cls != KernelClass::communication || !has(k.name, "(sequence parallel)")) continue;
      const long g = userbuffers_partner(rows, r);
      if (g < 0) continue;
      const double c = row_us[r] * k.count, over = row_us[size_t(g)] * rows[size_t(g)].count;
      paired_comm += c;
      paired_gemm += over;
      paired_exposed += beyond(c, over);
    }
    exposed[kTensor] = paired_exposed + beyond(comm[kTensor] - paired_comm, gemm - paired_gemm);
    if (o.virtual_stages > 1) exposed[kPipeline] = beyond(comm[kPipeline], p.compute_us);
    // Batch-level EP overlap: one micro-batch's dispatch and combine behind the other's layer compute.
    if (o.moe_a2a_overlap) exposed[kExpert] = beyond(comm[kExpert], pipelined_compute);
  }
  p.expert_comm_us = comm[kExpert];
  p.exposed_expert_comm_us = exposed[kExpert];
  for (double e : exposed) p.exposed_comm_us += e;
  // What runs hidden holds SMs the compute beside it cannot use.
  if (sm_count > 0)
    for (int g = 0; g < kGroups; ++g)
      p.overlap_slowdown_us += (comm[g] - exposed[g]) * std::min(1.0, sms_held(Group(g), o) / sm_count);
  if (!host_us.empty()) {
    const HostIssue h = host_issue(rows, compute_stream_us, host_us, forward_rows);
    p.host_us = h.host_us;
    p.exposed_host_us = h.exposed_us;
    p.host_syncs = h.syncs;
  }
  p.step_us = o.framework == Framework::eager
                  ? p.list_us
                  : std::max(p.compute_us + p.exposed_comm_us + p.exposed_offload_us + p.exposed_host_us +
                                 p.overlap_slowdown_us,
                             p.comm_us);
  return p;
}

}  // namespace kcast::cli
