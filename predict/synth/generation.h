// `--mode generate`: a whole generation as one kernel list, the prompt's forward then the decode
// steps. Decode steps differ only in the context their token attends to, and what synth emits per
// step is affine in that context (attention FLOPs and cache reads) or independent of it (the
// projections, norms, head), so consecutive steps are synthesized once per group, at the group's
// mean context, with their count: at most kGenerationGroups groups, so a 4096-token generation is
// not 4096 copies of the layer rows. The cost model is not linear in work (tiles, waves, floors),
// which the grouping approximates within a group's context range.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "predict/synth/synth.h"

namespace kcast::synth {

constexpr int64_t kGenerationGroups = 8;
// The name prefixes of a generation's rows: its prompt's forward, and each group of decode steps
// (kDecodePrefix, the group's context, '.').
inline constexpr const char* kPrefillPrefix = "prefill.";
inline constexpr const char* kDecodePrefix = "decode@";

// One step of a model (mode infer or decode) as the caller synthesizes it.
using StepSynth = std::function<std::vector<Kernel>(const SynthOptions&, Footprint*)>;

// The generation `opt` asks for (mode generate, seq = the prompt, new_tokens): the prefill rows,
// then each group's decode rows. `fp`: the last step's memory (its KV cache holds seq + new_tokens
// tokens), with a note naming each group's context.
std::vector<Kernel> synthesize_generation(const StepSynth& step, const SynthOptions& opt, Footprint* fp);

// Speculative decoding: the tokens a step that verifies q - 1 drafts after the last token keeps on
// average when each draft is accepted with chance a given its predecessors were:
// (1 - a^q) / (1 - a), q at a = 1.
double expected_tokens_per_step(int64_t q, double a);

}  // namespace kcast::synth
