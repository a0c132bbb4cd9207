// The memory report of `kcast synth` (synth_memory_report.h).
#include "predict/cli/synth_memory_report.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

namespace kcast::cli {

using synth::Footprint;
using synth::Optimizer;
using synth::SynthOptions;

namespace {

std::string gigabytes(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB", bytes / 1e9);
  return buf;
}

// The first pipeline stage's need: the last stage's figures with the first stage's activations in
// place of the last's (it holds no loss).
double first_stage_need(const Footprint& f) {
  return f.total_bytes() - f.activation_bytes - f.loss_transient_bytes + f.first_stage_activation_bytes;
}

bool per_microbatch(const SynthOptions& o) { return o.dp > 1 || o.microbatches > 1; }

}  // namespace

MemoryFit memory_fit(const Footprint& f, const GpuSpec& g) {
  MemoryFit r;
  r.gpu = g.name;
  if (!known(g.memory_gb)) return r;
  r.capacity_known = true;
  r.first_stage_decides = f.first_stage_activation_bytes > f.activation_bytes + f.loss_transient_bytes;
  r.capacity_bytes = g.memory_gb * 1073741824.0;
  r.need_bytes = r.first_stage_decides ? first_stage_need(f) : f.total_bytes();
  r.fits = r.need_bytes <= r.capacity_bytes;
  const double activations =
      r.first_stage_decides ? f.first_stage_activation_bytes : f.activation_bytes + f.loss_transient_bytes;
  const double scaled = f.kv_cache_bytes + activations;
  if (scaled > 0 && f.batch_sequences > 0) {
    const double fixed = r.need_bytes - scaled;
    r.largest_batch =
        r.capacity_bytes > fixed ? std::floor(f.batch_sequences * (r.capacity_bytes - fixed) / scaled) : 0;
  }
  return r;
}

std::string footprint_line(const Footprint& f, const SynthOptions& o) {
  char params[32];
  // Billions from what rounds to 1.00B at three digits (999.9M would print as "1e+03M").
  if (f.params >= 0.9995e9) std::snprintf(params, sizeof params, "%.3gB", f.params / 1e9);
  else std::snprintf(params, sizeof params, "%.3gM", f.params / 1e6);
  std::string s = std::string("kcast synth: memory per GPU") + (o.pp > 1 ? " (the last pipeline stage)" : "") + ": " +
                  params + " parameters, weights " + gigabytes(f.weight_bytes);
  if (f.gradient_bytes > 0) s += ", gradients " + gigabytes(f.gradient_bytes);
  if (f.optimizer_bytes > 0)
    s += std::string(o.master_weights ? synth::keeps_moments(o.optimizer) ? ", fp32 master weights and Adam state "
                                                                        : ", fp32 master weights "
                                      : ", Adam state ") +
         gigabytes(f.optimizer_bytes);
  if (f.kv_cache_bytes > 0) s += ", KV cache " + gigabytes(f.kv_cache_bytes);
  if (f.activation_bytes > 0)
    s += ", activations " + gigabytes(f.activation_bytes) +
         (f.activations_transient ? " (one layer's peak, estimate)" : " (estimate)");
  if (f.loss_transient_bytes > 0)
    s += ", the loss's backward " + gigabytes(f.loss_transient_bytes) + " more at its peak";
  if (f.dispatch_buffer_bytes > 0) s += ", DeepEP's buffers " + gigabytes(f.dispatch_buffer_bytes);
  if (f.offloaded_activation_bytes > 0)
    s += " (" + std::to_string(o.cpu_offload_layers) + " layers' activations, " +
         gigabytes(f.offloaded_activation_bytes) + ", offloaded to host memory)";
  s += "; " + gigabytes(f.total_bytes()) +
       (f.activation_bytes > 0 ? " before workspace" : " before activations and workspace");
  if (f.first_stage_activation_bytes > 0) {
    char in_flight[32];
    std::snprintf(in_flight, sizeof in_flight, "%g", f.first_stage_microbatches);
    s += " (the first stage's activations: " + gigabytes(f.first_stage_activation_bytes) + ", " + in_flight +
         " micro-batches in flight)";
  }
  return s;
}

std::string fit_line(const Footprint& f, const SynthOptions& o, const MemoryFit& fit) {
  if (!fit.capacity_known) return "kcast synth: " + fit.gpu + ": memory capacity unknown";
  std::string s = "kcast synth: " + fit.gpu + " (" + gigabytes(fit.capacity_bytes) + "): ";
  const std::string who = fit.first_stage_decides ? "its first pipeline stage" : "the step";
  s += !fit.fits ? "does not fit, " + who + " needs at least " + gigabytes(fit.need_bytes)
                 : "fits, " + gigabytes(fit.capacity_bytes - fit.need_bytes) + " left for " +
                       (f.activation_bytes > 0 ? "workspace" : "activations and workspace") +
                       (fit.first_stage_decides ? " on its first pipeline stage" : "");
  if (fit.largest_batch < 0) return s;
  const char* per = per_microbatch(o) ? " per micro-batch of a replica" : "";
  const double n = fit.largest_batch;
  char buf[160];
  if (n == 0)
    std::snprintf(buf, sizeof buf, "; not one sequence%s fits (%g now)", per, f.batch_sequences);
  else
    std::snprintf(buf, sizeof buf, "; at most %.0f sequence%s%s %s (%g now)", n, n == 1 ? "" : "s", per,
                  n == 1 ? "fits" : "fit", f.batch_sequences);
  return s + buf;
}

nlohmann::json fit_json(const MemoryFit& fit) {
  const auto known = [&](auto v) { return fit.capacity_known ? nlohmann::json(v) : nlohmann::json(); };
  nlohmann::json g;
  g["gpu"] = fit.gpu;
  g["capacity_bytes"] = known(fit.capacity_bytes);
  g["need_bytes"] = fit.need_bytes;
  g["fits"] = known(fit.fits);
  g["decided_by"] = known(fit.first_stage_decides ? "first pipeline stage" : "step");
  g["largest_batch"] = fit.largest_batch >= 0 ? nlohmann::json(fit.largest_batch) : nlohmann::json();
  return g;
}

nlohmann::json memory_json_of(const Footprint& f, const SynthOptions& o, const std::vector<MemoryFit>& fits) {
  nlohmann::json j;
  j["params"] = f.params;
  j["weight_bytes"] = f.weight_bytes;
  j["gradient_bytes"] = f.gradient_bytes;
  j["optimizer_bytes"] = f.optimizer_bytes;
  j["master_weights"] = o.master_weights;
  j["fp8_param_gather"] = o.fp8_param_gather;
  j["kv_cache_bytes"] = f.kv_cache_bytes;
  j["activation_bytes"] = f.activation_bytes;
  // A json null where nothing is estimated (the ResNets): a null char* would not be one.
  j["activations"] =
      f.activation_bytes > 0 ? nlohmann::json(f.activations_transient ? "peak" : "kept") : nlohmann::json();
  j["loss_transient_bytes"] = f.loss_transient_bytes;
  j["dispatch_buffer_bytes"] = f.dispatch_buffer_bytes;
  j["cpu_offload_layers"] = o.cpu_offload_layers;
  j["offloaded_activation_bytes"] = f.offloaded_activation_bytes;
  j["first_stage_activation_bytes"] = f.first_stage_activation_bytes;
  j["first_stage_microbatches"] = f.first_stage_microbatches;
  j["total_bytes"] = f.total_bytes();
  j["batch_sequences"] = f.batch_sequences;
  j["per_micro_batch"] = per_microbatch(o);
  j["notes"] = f.notes;
  nlohmann::json gpus = nlohmann::json::array();
  for (const MemoryFit& fit : fits) gpus.push_back(fit_json(fit));
  j["gpus"] = std::move(gpus);
  return j;
}

}  // namespace kcast::cli
