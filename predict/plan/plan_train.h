// `kcast plan train`: every layout of the space synthesized and predicted with the code `kcast synth
// --mode train --gpu` runs (so each candidate's figures are that command's, which the candidate's
// `command` reproduces), in parallel, the ones that do not fit the GPU's memory or that synth refuses
// set aside with the reason, the rest ranked by tokens/s per GPU.
#pragma once
#include <string>
#include <vector>

#include "calibrate/model_file.h"
#include "model/gpu_database.h"
#include "predict/cli/synth_memory_report.h"
#include "predict/cli/synth_time_report.h"
#include "predict/plan/train_layouts.h"
#include "predict/synth/generation.h"

namespace kcast::plan {

using StepSynthesizer = synth::StepSynth;  // synth's step for a set of options (generation.h)

// What plan_train may try, under Megatron, on a layout that does not fit without recomputation.
struct RecomputeLadder {
  std::vector<unsigned> modules;  // recompute_module_ladder(), cheapest first
  int64_t layers = 0;             // the model's layers: > 0 lets the two below be tried
  bool block = true;    // the block method (--recompute-layers); off where --fix holds the recomputation
  // Megatron's CPU activation offloading on one-stage layouts (--cpu-offload-layers); off where --fix holds
  // the offloaded layers or a recomputation (Megatron offloads only without one).
  bool offload = true;
};

struct TrainCandidate {
  TrainLayout layout;
  enum class Status { ranked, no_fit, refused } status = Status::ranked;
  std::string why;  // no_fit / refused: the memory verdict or synth's message
  cli::SynthTiming timing;
  cli::MemoryFit fit;
  synth::SynthOptions options;
};

// Evaluates every layout on `gpu` (threads: 0 = all cores); the result holds every layout, ranked
// ones first, best first (ties kept in enumeration order), then those that do not fit, then refusals.
// A layout fits when synth's footprint is at most `memory_fraction` of the GPU's memory: the rest is
// the CUDA context, NCCL's buffers, library workspaces and the allocator's fragmentation.
// `ladder`: a layout without recomputation that does not fit is tried with each module set in turn
// (recompute selective, its modules), then, where `ladder.layers` is given, with the block method's
// fewest recomputed layers a chunk (recompute full, recompute_layers), and ranked with the first that fits;
// a one-stage layout also with the fewest offloaded layers that fit (ladder.offload), the faster kept.
std::vector<TrainCandidate> plan_train(const StepSynthesizer& step, const synth::SynthOptions& base,
                                       const std::vector<TrainLayout>& layouts, int64_t batch, const GpuSpec& gpu,
                                       const LoadedModel& lm, const GpuDatabase& db, unsigned threads = 0,
                                       double memory_fraction = 1.0, const RecomputeLadder& ladder = {});

}  // namespace kcast::plan
