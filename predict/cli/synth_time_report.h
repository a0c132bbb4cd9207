// `kcast synth --gpu`'s predicted time: the list synth writes, predicted on each GPU exactly as
// `kcast predict --mode absolute` predicts the written file (the same predictor and model, so the
// step equals predict's), and the rates a run is sized by, which a kernel list alone cannot give
// because they need the step's tokens (synth::Footprint::step_tokens):
//   * tokens (ResNets: images) per second, over the whole run and per GPU;
//   * a generation's time to first token (its prefill rows) and time per output token (the mean
//     decode step);
//   * model FLOPs utilization (MFU): the list's matrix FLOPs (GEMMs, convolutions, attention; rows
//     re-run by activation recomputation left out, as PaLM's MFU leaves them out) over the step,
//     against the datasheet's dense peak for the dtype carrying most of them; for a generation, the
//     prefill's;
//   * while decoding, memory-bandwidth utilization (MBU): the decode rows' DRAM bytes (weights, KV
//     cache reads, activations) over the decode time, against the datasheet bandwidth.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/model_file.h"
#include "model/gpu_database.h"
#include "predict/cli/synth_memory_report.h"
#include "predict/synth/synth.h"

namespace kcast::cli {

struct SynthTiming {
  std::string gpu;
  double step_us = 0;                // the whole list (a generation: prefill and every decode step)
  double prefill_us = kUnknown;      // generate: its prefill. rows
  double decode_step_us = kUnknown;  // decode: the step; generate: the mean decode step
  double tokens_per_s = 0;           // Footprint::step_tokens over step_us, every GPU of the run together
  std::string unit = "tokens";       // Footprint::step_unit
  int64_t gpus = 1;                  // tp x pp x dp x cp
  double tokens_per_s_per_gpu() const { return tokens_per_s / double(gpus); }
  double mfu = kUnknown;             // train, infer, a generation's prefill
  std::string mfu_dtype;
  double mbu = kUnknown;  // decode, a generation's decode steps; unknown without a datasheet bandwidth
  // Speculative verification (--decode-tokens Q > 1) at a per-draft acceptance rate a: the tokens a
  // step yields per sequence, (1 - a^Q) / (1 - a) (Leviathan et al. 2023, i.i.d. acceptance: the
  // accepted drafts and the one token the verification adds), and their rate. Unknown without a rate.
  double acceptance = kUnknown, tokens_per_step = kUnknown, accepted_tokens_per_s = kUnknown;
  // train: the step's parts (synth_step_parts.h) and the model TFLOP/s per GPU by the frameworks'
  // convention (Footprint::model_flops_per_token over the step; MFU is it over the dense peak).
  bool train = false;
  double comm_us = 0, exposed_comm_us = 0, bubble_us = 0, recompute_us = 0, quantize_us = 0;
  double expert_comm_us = 0, exposed_expert_comm_us = 0, expert_compute_us = 0;  // mixtures of experts
  double cpu_offload_us = 0, exposed_cpu_offload_us = 0;  // --cpu-offload-layers' copies
  double host_us = 0, exposed_host_us = 0, host_syncs = 0;  // the host's issue (synth_host_issue.h)
  double overlap_slowdown_us = 0;  // compute lost to the SMs hidden collectives hold (synth_step_parts.h)
  double model_tflops_per_gpu = kUnknown;
};

// InputError naming --recipe and the GPU when a GPU lacks the tensor cores the recipe's GEMMs need.
void check_recipe_units(const synth::SynthOptions& o, const std::vector<const GpuSpec*>& gpus);

// `synthesized`: the list synth writes for `o` (with its Footprint `fp`).
// `acceptance`: the drafts' acceptance rate for a speculative step (kUnknown: none given).
std::vector<SynthTiming> time_synth_step(const std::vector<Kernel>& synthesized, const synth::Footprint& fp,
                                         const synth::SynthOptions& o, const std::vector<const GpuSpec*>& gpus,
                                         const LoadedModel& model, const GpuDatabase& db, bool cuda_graph,
                                         double acceptance = kUnknown, bool with_context = false);

// One GPU's stderr line (without a trailing newline), and the same as a JSON object.
std::string timing_line(const SynthTiming& t, const synth::SynthOptions& o, bool cuda_graph);
// A training step's parts on one GPU, for frameworks and recipes beyond eager PyTorch ("" otherwise).
std::string parts_line(const SynthTiming& t, const synth::SynthOptions& o);
nlohmann::json timing_json(const SynthTiming& t);
// `kcast synth --gpu ... --format json`: one GPU's predicted step, its parts and its memory verdict.
nlohmann::json step_json_of(const SynthTiming& t, const MemoryFit& fit, const synth::SynthOptions& o);

}  // namespace kcast::cli
