#include "predict/synth/recompute_modules.h"

#include "model/error.h"
#include "predict/synth/module_list.h"

namespace kcast::synth {

namespace {

constexpr ModuleName kModules[] = {
    {"core_attn", kRecomputeCoreAttn}, {"layernorm", kRecomputeLayernorm},
    {"mla_up_proj", kRecomputeMlaUpProj}, {"mlp", kRecomputeMlp},
    {"moe_act", kRecomputeMoeAct}, {"shared_experts", kRecomputeSharedExperts},
};
constexpr RefusedModule kRefused[] = {
    {"moe", "'moe' (the whole mixture layer, its dispatch and combine included) is not modelled; name its parts: "
            "moe_act, shared_experts, layernorm"},
};

}  // namespace

unsigned parse_recompute_modules(const std::string& option, const std::string& text) {
  const unsigned bits = parse_module_list(option, text, kModules, kRefused);
  if (!bits) throw InputError("option '--" + option + "': name at least one module");
  return bits;
}

void set_recompute_modules(SynthOptions& o, unsigned bits) {
  o.recompute_modules = bits;
  o.selective_recompute = o.recomputes(kRecomputeCoreAttn);
}

std::vector<std::string> recompute_module_names(unsigned bits) { return module_names(bits, kModules); }

std::string recompute_modules_string(unsigned bits) { return module_list_string(bits, kModules); }

}  // namespace kcast::synth
