#include "predict/synth/recompute_modules.h"

#include <algorithm>
#include <utility>

#include "model/error.h"

namespace kcast::synth {

namespace {

const std::pair<const char*, unsigned> kModules[] = {
    {"core_attn", kRecomputeCoreAttn}, {"layernorm", kRecomputeLayernorm},
    {"mla_up_proj", kRecomputeMlaUpProj}, {"mlp", kRecomputeMlp},
    {"moe_act", kRecomputeMoeAct}, {"shared_experts", kRecomputeSharedExperts},
};

}  // namespace

unsigned parse_recompute_modules(const std::string& option, const std::string& text) {
  unsigned bits = 0;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find_first_of(", ", start), text.size());
    const std::string name = text.substr(start, end - start);
    start = end + 1;
    if (name.empty()) continue;
    if (name == "moe")
      throw InputError("option '--" + option + "': 'moe' (the whole mixture layer, its dispatch and combine "
                       "included) is not modelled; name its parts: moe_act, shared_experts, layernorm");
    bool known = false;
    for (const auto& [n, bit] : kModules)
      if (name == n) bits |= bit, known = true;
    if (!known)
      throw InputError("option '--" + option + "': '" + name + "' is not one of core_attn, layernorm, mla_up_proj, "
                       "mlp, moe_act, shared_experts");
  }
  if (!bits) throw InputError("option '--" + option + "': name at least one module");
  return bits;
}

void set_recompute_modules(SynthOptions& o, unsigned bits) {
  o.recompute_modules = bits;
  o.selective_recompute = o.recomputes(kRecomputeCoreAttn);
}

std::vector<std::string> recompute_module_names(unsigned bits) {
  std::vector<std::string> out;
  for (const auto& [n, bit] : kModules)
    if (bits & bit) out.emplace_back(n);
  return out;
}

std::string recompute_modules_string(unsigned bits) {
  std::string out;
  for (const std::string& n : recompute_module_names(bits)) {
    if (!out.empty()) out += ',';
    out += n;
  }
  return out;
}

}  // namespace kcast::synth
