#include "predict/cli/synth_time_report.h"

#include <cmath>
#include <cstdio>
#include <sstream>

#include "io/classifier_rules.h"
#include "io/kernel_list_csv.h"
#include "model/error.h"
#include "model/gpu_caps.h"

#include "predict/cli/synth_host_issue.h"
#include "predict/cli/synth_step_parts.h"
#include "predict/e2e/predictor.h"
#include "predict/report/text_util.h"
#include "predict/synth/emitter.h"
#include "predict/synth/generation.h"
#include "predict/synth/transformer/recipe.h"

namespace kcast::cli {

namespace {

using synth::Footprint;
using synth::Mode;
using synth::SynthOptions;

// Which rows a rate covers: a generation's prefill (MFU) or decode steps (MBU), else every row.
enum class Part { all, prefill, decode };
bool in_part(const Kernel& k, Part p) {
  if (p == Part::prefill) return k.name.starts_with(synth::kPrefillPrefix);
  if (p == Part::decode) return k.name.starts_with(synth::kDecodePrefix);
  return true;
}

// The matrix FLOPs of a part, none of them re-run by recomputation, and the dtype carrying most.
struct MatrixWork {
  double flops = 0;
  DType dtype = DType::fp32;
};
MatrixWork matrix_work(const PreparedWorkload& w, Part part) {
  PerDType<double> by{};
  for (size_t r = 0; r < w.rows.size(); ++r) {
    const Kernel& row = w.rows.kind(r);
    const Kernel& k = w.kernels[w.uniq.of_row[r]];
    const bool recomputed = row.name.ends_with(synth::kRecomputeSuffix);
    if (!is_matrix_class(k.cls) || !known(k.flops) || !in_part(row, part) || recomputed) continue;
    by[int(k.dtype)] += w.rows.count(r) * k.flops;
  }
  MatrixWork m;
  for (int i = 0; i < kNumDTypes; ++i) {
    m.flops += by[i];
    if (by[i] > by[int(m.dtype)]) m.dtype = DType(i);
  }
  return m;
}

double part_bytes(const PreparedWorkload& w, Part part) {
  double b = 0;
  for (size_t r = 0; r < w.rows.size(); ++r) {
    const Kernel& k = w.kernels[w.uniq.of_row[r]];
    if (in_part(w.rows.kind(r), part) && known(k.bytes)) b += w.rows.count(r) * k.bytes;
  }
  return b;
}

double part_us(const PreparedWorkload& w, const GpuPrediction& p, Part part) {
  double us = 0;
  for (size_t r = 0; r < w.rows.size(); ++r)
    if (in_part(w.rows.kind(r), part)) us += w.rows.count(r) * p.row_us[r];
  return us;
}

std::string percent(double v) { return report::fixed(v * 100, 0) + "%"; }

// "12,345" style, whole units, so a rate reads at a glance.
std::string grouped(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  std::string s = buf, out;
  const size_t lead = s.size() % 3 == 0 ? 3 : s.size() % 3;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0 && i >= lead && (i - lead) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

// How the experts' rows come about (JSON `routing`): the published runs force-balance the router; token
// dropping padded to capacity fixes every expert's rows whatever the router does.
const char* routing(const SynthOptions& o) {
  return o.moe_pad_to_capacity ? "capacity" : o.moe_load_imbalance != 1 ? "imbalanced" : "balanced";
}

}  // namespace

void check_recipe_units(const SynthOptions& o, const std::vector<const GpuSpec*>& gpus) {
  const synth::transformer::RecipeKernels* r = synth::transformer::recipe_kernels(o.recipe);
  if (!r) return;
  for (const GpuSpec* g : gpus) {
    const bool fp8 = known(g->fp8_tflops) && g->fp8_tflops > 0, fp4 = known(g->fp4_tflops) && g->fp4_tflops > 0;
    if (!fp8 || (r->needs_fp4_units && !fp4))
      throw InputError("option '--recipe': " + std::string(r->name) + " runs " +
                       (r->needs_fp4_units ? "block-scaled (MX / NV) GEMMs on Blackwell-generation tensor cores"
                                           : "FP8 GEMMs on FP8 tensor cores") +
                       "; " + g->name + " has none");
  }
}

std::vector<SynthTiming> time_synth_step(const std::vector<Kernel>& synthesized, const Footprint& fp,
                                         const SynthOptions& o, const std::vector<const GpuSpec*>& gpus,
                                         const LoadedModel& model, const GpuDatabase& db, bool cuda_graph,
                                         double acceptance, bool with_context) {
  check_recipe_units(o, gpus);
  // Through the kernel-list text, as predict reads the written file: the reader derives what names
  // tell the model (a fused attention kernel's instruction set, an SGEMM's tile), and its numbers are
  // the written digits, so the step is predict's to the last bit.
  std::ostringstream text;
  write_kernel_list(synthesized, text);
  const std::vector<Kernel> rows =
      parse_kernel_list(text.str(), "<synth>", KernelListOptions{&db, &default_classifier()});
  E2eOptions eo;
  eo.mode = PredictMode::absolute;
  eo.cuda_graph = cuda_graph;
  eo.with_context = with_context;  // rows a measurement setup tagged (kcast synth --context)
  eo.keep_rows = true;
  const PreparedWorkload w = prepare_workload(rows, model, db, eo, "<synth>");
  const bool train = o.mode == Mode::train;
  // A framework's training step holds the GPU under load for seconds: every GEMM runs at the clock the
  // power limit settles at (sustained_caps). Eager's step is the predictor's sum of kernels timed one by
  // one (NeuSight's per-op labels), each with the boost budget a lone kernel has.
  const bool sustained = train && o.framework != synth::Framework::eager;
  std::vector<Target> targets;
  for (const GpuSpec* g : gpus)
    targets.push_back({g->name, sustained ? sustained_caps(model.caps_for(*g)) : model.caps_for(*g)});
  const std::vector<GpuPrediction> preds = predict_targets(w, targets);

  const bool generate = o.mode == Mode::generate, decode = o.mode == Mode::decode;
  const MatrixWork matrix = matrix_work(w, generate ? Part::prefill : Part::all);
  const Part decode_part = generate ? Part::decode : Part::all;
  const double decode_bytes = generate || decode ? part_bytes(w, decode_part) : 0;
  std::vector<SynthTiming> out;
  // Each launch's host time (synth_host_issue.h): its op family's framework floor; none under CUDA graphs.
  std::vector<double> host_us;
  if (train && !cuda_graph && o.framework != synth::Framework::eager)  // eager: the predictor's sum
    host_us = launch_host_us(rows, model.model.params(), o.cuda_graph_modules);
  for (size_t i = 0; i < preds.size(); ++i) {
    const GpuPrediction& p = preds[i];
    const GpuSpec& g = *gpus[i];
    SynthTiming t;
    t.gpu = p.gpu;
    t.step_us = p.step_us;
    if (train) {
      const StepParts parts = step_parts(rows, p.row_us, o, fp, host_us, g.sm_count);
      // Eager PyTorch overlaps nothing: its step stays the predictor's, to the last bit.
      if (o.framework != synth::Framework::eager) t.step_us = parts.step_us;
      t.train = true;
      t.comm_us = parts.comm_us;
      t.exposed_comm_us = parts.exposed_comm_us;  // eager overlaps nothing: all of comm_us
      t.bubble_us = parts.bubble_us;
      t.recompute_us = parts.recompute_us;
      t.quantize_us = parts.quantize_us;
      t.expert_comm_us = parts.expert_comm_us;
      t.exposed_expert_comm_us = parts.exposed_expert_comm_us;
      t.expert_compute_us = parts.expert_compute_us;
      t.cpu_offload_us = parts.offload_us;
      t.exposed_cpu_offload_us = parts.exposed_offload_us;
      t.host_us = parts.host_us;
      t.exposed_host_us = parts.exposed_host_us;
      t.host_syncs = parts.host_syncs;
      t.overlap_slowdown_us = parts.overlap_slowdown_us;
    }
    t.unit = fp.step_unit;
    t.gpus = o.tp * o.pp * o.dp * o.cp;
    if (t.step_us > 0) t.tokens_per_s = fp.step_tokens / (t.step_us * 1e-6);
    // The time the decode steps take: a generation's decode@ rows, a decode step's all.
    const double decode_us = generate ? part_us(w, p, Part::decode) : p.step_us;
    if (generate) {
      t.prefill_us = part_us(w, p, Part::prefill);
      t.decode_step_us = decode_us / double(o.new_tokens);
    }
    if (decode) t.decode_step_us = p.step_us;
    if (decode && o.decode_tokens > 1 && known(acceptance) && p.step_us > 0) {
      t.acceptance = acceptance;
      t.tokens_per_step = synth::expected_tokens_per_step(o.decode_tokens, acceptance);
      t.accepted_tokens_per_s = t.tokens_per_s / double(o.decode_tokens) * t.tokens_per_step;
    }
    if (train && fp.model_flops_per_token > 0 && t.step_us > 0) {
      // The frameworks' convention: model FLOPs of the step's tokens over its time, per GPU.
      t.model_tflops_per_gpu = fp.model_flops_per_token * fp.step_tokens / (t.step_us * 1e-6) / double(t.gpus) / 1e12;
      const double peak = g.gemm_peak_tflops(matrix.dtype);
      if (known(peak) && peak > 0) {
        t.mfu = t.model_tflops_per_gpu / peak;
        t.mfu_dtype = std::string(to_string(g.gemm_peak_dtype(matrix.dtype)));
      }
    } else if (!decode && matrix.flops > 0) {
      const double us = generate ? t.prefill_us : p.step_us;
      const double peak = g.gemm_peak_tflops(matrix.dtype);
      if (known(peak) && peak > 0 && us > 0) {
        t.mfu = matrix.flops / (us * 1e-6) / (peak * 1e12);
        t.mfu_dtype = std::string(to_string(g.gemm_peak_dtype(matrix.dtype)));
      }
    }
    if ((generate || decode) && known(g.dram_bw_gbps) && g.dram_bw_gbps > 0 && decode_us > 0)
      t.mbu = decode_bytes / (decode_us * 1e-6) / (g.dram_bw_gbps * 1e9);
    out.push_back(std::move(t));
  }
  return out;
}

std::string timing_line(const SynthTiming& t, const SynthOptions& o, bool cuda_graph) {
  using report::human_time;
  std::string s = "kcast synth: " + t.gpu + ": predicted " + (o.mode == Mode::generate ? "generation " : "step ") +
                  human_time(t.step_us) + " (absolute" + (cuda_graph ? ", CUDA graphs" : ", eager launches") + ")";
  if (o.mode == Mode::generate)
    s += ": time to first token " + human_time(t.prefill_us) + ", per output token " + human_time(t.decode_step_us);
  s += std::string(o.mode == Mode::generate ? ", " : ": ") + grouped(t.tokens_per_s) + " " + t.unit + "/s";
  if (t.gpus > 1) s += " over " + std::to_string(t.gpus) + " GPUs (" + grouped(t.tokens_per_s_per_gpu()) +
                       " per GPU)";
  if (o.mode == Mode::generate) s += " generated";
  // Every draft counts: what a step yields is these times the drafts' acceptance.
  if (o.decode_tokens > 1) s += " verified";
  if (known(t.accepted_tokens_per_s)) {
    char buf[96];
    std::snprintf(buf, sizeof buf, " (%.2f a sequence a step at acceptance %.2f: ", t.tokens_per_step, t.acceptance);
    s += buf + grouped(t.accepted_tokens_per_s) + " " + t.unit + "/s)";
  }
  if (known(t.mfu))
    s += ", MFU " + percent(t.mfu) + " of the " + t.mfu_dtype + " dense peak" +
         (o.mode == Mode::generate ? " while prefilling" : "");
  if (known(t.mbu)) s += ", MBU " + percent(t.mbu) + " of the datasheet bandwidth" +
                         (o.mode == Mode::generate ? " while decoding" : "");
  return s;
}

std::string parts_line(const SynthTiming& t, const SynthOptions& o) {
  if (!t.train || (o.framework == synth::Framework::eager && o.recipe == synth::Recipe::none)) return "";
  using report::human_time;
  std::string s = "kcast synth: " + t.gpu + ": step parts: communication " + human_time(t.comm_us) + ", exposed " +
                  human_time(t.exposed_comm_us);
  if (t.bubble_us > 0) s += "; pipeline bubble " + human_time(t.bubble_us);
  if (t.recompute_us > 0) s += "; recompute " + human_time(t.recompute_us);
  if (t.quantize_us > 0) s += "; quantization " + human_time(t.quantize_us);
  if (o.cpu_offload_layers > 0)
    s += "; CPU offload copies " + human_time(t.cpu_offload_us) + ", exposed " + human_time(t.exposed_cpu_offload_us);
  if (t.overlap_slowdown_us > 0) s += "; hidden collectives' SMs " + human_time(t.overlap_slowdown_us);
  if (t.exposed_host_us > 0 || t.host_syncs > 0)
    s += "; host issue " + human_time(t.host_us) + ", exposed " + human_time(t.exposed_host_us) +
         (t.host_syncs > 0 ? " (" + grouped(t.host_syncs) + " host reads)" : "");
  if (o.ep > 1)
    s += "; expert parallel (" + std::string(synth::to_string(o.moe_dispatcher)) +
         (o.moe_a2a_overlap ? ", overlapped" : "") + (o.moe_pad_to_capacity ? ", rows padded to capacity"
          : o.moe_load_imbalance != 1 ? ", busiest GPU " + report::fixed(o.moe_load_imbalance, 2) + "x the mean"
                                      : std::string(", balanced routing")) +
         "): dispatch and combine " +
         human_time(t.expert_comm_us) + ", exposed " + human_time(t.exposed_expert_comm_us) + ", expert compute " +
         human_time(t.expert_compute_us);
  if (known(t.model_tflops_per_gpu)) s += "; model " + report::fixed(t.model_tflops_per_gpu, 0) + " TFLOP/s per GPU";
  return s;
}

nlohmann::json timing_json(const SynthTiming& t) {
  auto num = [](double v) { return known(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json j;
  j["step_us"] = t.step_us;
  j["time_to_first_token_us"] = num(t.prefill_us);
  j["time_per_output_token_us"] = num(t.decode_step_us);
  j["tokens_per_s"] = t.tokens_per_s;
  j["unit"] = t.unit;
  j["gpus"] = t.gpus;
  j["tokens_per_s_per_gpu"] = t.tokens_per_s_per_gpu();
  j["mfu"] = num(t.mfu);
  j["mfu_dtype"] = t.mfu_dtype.empty() ? nlohmann::json(nullptr) : nlohmann::json(t.mfu_dtype);
  j["mbu"] = num(t.mbu);
  j["acceptance"] = num(t.acceptance);
  j["tokens_per_step"] = num(t.tokens_per_step);
  j["accepted_tokens_per_s"] = num(t.accepted_tokens_per_s);
  return j;
}

nlohmann::json step_json_of(const SynthTiming& t, const MemoryFit& fit, const SynthOptions& o) {
  auto num = [](double v) { return known(v) ? nlohmann::json(v) : nlohmann::json(nullptr); };
  nlohmann::json j = timing_json(t);
  j["gpu"] = t.gpu;
  j["step_s"] = t.step_us * 1e-6;
  j["model_tflops_per_gpu"] = num(t.model_tflops_per_gpu);
  j["comm_s"] = t.comm_us * 1e-6;
  j["exposed_comm_s"] = t.exposed_comm_us * 1e-6;
  j["bubble_s"] = t.bubble_us * 1e-6;
  j["recompute_s"] = t.recompute_us * 1e-6;
  j["quantize_s"] = t.quantize_us * 1e-6;
  if (t.train) {
    j["host_s"] = t.host_us * 1e-6;
    j["exposed_host_s"] = t.exposed_host_us * 1e-6;
    j["host_syncs"] = t.host_syncs;
    j["overlap_slowdown_s"] = t.overlap_slowdown_us * 1e-6;
  }
  j["memory_gb"] = fit.need_bytes * 1e-9;
  j["fits"] = fit.fits;
  j["framework"] = synth::to_string(o.framework);
  j["recipe"] = synth::transformer::to_string(o.recipe);
  if (o.cpu_offload_layers > 0) {
    j["cpu_offload_layers"] = o.cpu_offload_layers;
    j["cpu_offload_s"] = t.cpu_offload_us * 1e-6;
    j["exposed_cpu_offload_s"] = t.exposed_cpu_offload_us * 1e-6;
  }
  if (o.mode == synth::Mode::train && t.expert_compute_us > 0) {
    // Mixtures of experts: the expert-parallel exchange and the MoE blocks' share of the step.
    j["moe_dispatcher"] = synth::to_string(o.moe_dispatcher);
    j["moe_a2a_overlap"] = o.moe_a2a_overlap;
    j["routing"] = routing(o);
    j["moe_expert_capacity_factor"] = o.moe_capacity_factor > 0 ? nlohmann::json(o.moe_capacity_factor) : nlohmann::json();
    j["moe_pad_expert_input_to_capacity"] = o.moe_pad_to_capacity;
    j["moe_load_imbalance"] = o.moe_load_imbalance;
    j["all_to_all_s"] = t.expert_comm_us * 1e-6;
    j["exposed_all_to_all_s"] = t.exposed_expert_comm_us * 1e-6;
    j["expert_compute_s"] = t.expert_compute_us * 1e-6;
    j["expert_compute_share"] = t.step_us > 0 ? t.expert_compute_us / t.step_us : 0.0;
  }
  return j;
}

}  // namespace kcast::cli
