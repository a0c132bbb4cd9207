#include "predict/synth/generation.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "model/error.h"

namespace kcast::synth {

std::vector<Kernel> synthesize_generation(const StepSynth& step, const SynthOptions& opt, Footprint* fp) {
  if (opt.seq <= 0) throw InputError("option '--seq': give the prompt length for --mode generate");
  if (opt.new_tokens <= 0) throw InputError("option '--new-tokens': give the tokens to generate (--mode generate)");
  auto prefixed = [](std::vector<Kernel> ks, const std::string& prefix, double times) {
    for (Kernel& k : ks) {
      k.name = prefix + k.name;
      k.count *= times;
    }
    return ks;
  };
  SynthOptions o = opt;
  o.mode = Mode::infer;
  o.kv_cache_dtype.reset();  // the prompt's forward reads no cache
  Footprint prefill;
  std::vector<Kernel> out = prefixed(step(o, fp ? &prefill : nullptr), kPrefillPrefix, 1);
  // Step t (1-based) adds the token at position seq + t, which attends to seq + t keys.
  o.mode = Mode::decode;
  o.kv_cache_dtype = opt.kv_cache_dtype;
  const int64_t n = opt.new_tokens, groups = std::min(n, kGenerationGroups);
  std::string contexts;  // each group's, for the note
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t first = g * n / groups + 1, last = (g + 1) * n / groups;
    o.seq = opt.seq + (first + last) / 2;  // the group's mean step, rounded down
    contexts += (contexts.empty() ? "" : ", ") + std::to_string(o.seq);
    const std::vector<Kernel> ks = step(o, nullptr);
    const std::vector<Kernel> d = prefixed(ks, kDecodePrefix + std::to_string(o.seq) + ".", double(last - first + 1));
    out.insert(out.end(), d.begin(), d.end());
  }
  if (fp) {
    o.seq = opt.seq + n;
    step(o, fp);
    fp->step_tokens *= double(n);  // one token per sequence and decode step
    // The prompt's forward holds far more at once than a decode step (every token's scores and logits).
    fp->activation_bytes = std::max(fp->activation_bytes, prefill.activation_bytes);
    fp->notes.push_back("generation: the prompt of " + std::to_string(opt.seq) + " tokens (rows prefill.), then " +
                        std::to_string(n) + " tokens as " + std::to_string(groups) +
                        " groups of decode steps at contexts " + contexts +
                        " (rows decode@CONTEXT.); the memory figures are the last step's, with the prefill's "
                        "activations where they are the larger");
  }
  return out;
}

double expected_tokens_per_step(int64_t q, double a) {
  if (a >= 1) return double(q);
  return (1 - std::pow(a, double(q))) / (1 - a);
}

}  // namespace kcast::synth
