// Megatron-LM's per-layer CUDA graph modules (cuda_graph_modules.h).
#include "predict/synth/cuda_graph_modules.h"

#include <initializer_list>
#include <string_view>

#include "model/error.h"
#include "predict/synth/emitter.h"
#include "predict/synth/module_list.h"

namespace kcast::synth {

namespace {

constexpr ModuleName kModules[] = {{"attn", kGraphAttn},
                                   {"mlp", kGraphMlp},
                                   {"moe_router", kGraphMoeRouter},
                                   {"moe_preprocess", kGraphMoePreprocess}};
constexpr RefusedModule kRefused[] = {
    {"moe", "moe (the whole mixture layer) is captured by Megatron only with a fixed token count per expert; "
            "dropless routing reads its counts on the host (use moe_router,moe_preprocess)"},
    {"mamba", "mamba: these models have no Mamba layers"},
};

}  // namespace

unsigned parse_cuda_graph_modules(const std::string& option, const std::string& text) {
  const unsigned bits = parse_module_list(option, text, kModules, kRefused);
  if (bits == 0)
    throw InputError("option '--" + option + "': name at least one module (attn, mlp, moe_router, moe_preprocess)");
  if ((bits & kGraphMoePreprocess) && !(bits & kGraphMoeRouter))
    throw InputError("option '--" + option + "': moe_preprocess extends the router's graph; name moe_router too");
  return bits;
}

std::string cuda_graph_modules_string(unsigned bits) { return module_list_string(bits, kModules); }

bool in_cuda_graph(const Kernel& row, unsigned bits) {
  const std::string_view n = repeated_layer_part(row.name);
  if (n.empty() || bits == 0) return false;
  const auto any_of = [&](std::initializer_list<std::string_view> prefixes) {
    for (std::string_view p : prefixes)
      if (n.starts_with(p)) return true;
    return false;
  };
  if ((bits & kGraphAttn) && any_of({"input_norm", "attn."})) return true;
  if ((bits & (kGraphMlp | kGraphMoeRouter)) && any_of({"post_attention_norm"})) return true;
  if ((bits & kGraphMlp) && any_of({"mlp."})) return true;
  // The router's graph also holds the all-reduce of its input (tensor parallelism without folding)
  // and, backward, the sum of the input's gradients.
  if ((bits & kGraphMoeRouter) && any_of({"mlp.input", "moe.gate", "moe.router", "moe.input"})) return true;
  return (bits & kGraphMoePreprocess) && any_of({"moe.tokens_per_expert"});
}

}  // namespace kcast::synth
