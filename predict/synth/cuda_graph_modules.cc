// Megatron-LM's per-layer CUDA graph modules (cuda_graph_modules.h).
#include "predict/synth/cuda_graph_modules.h"

#include <sstream>
#include <string_view>

#include "model/error.h"
#include "predict/synth/emitter.h"

namespace kcast::synth {

namespace {

struct Named {
  const char* name;
  unsigned bit;
};
constexpr Named kModules[] = {{"attn", kGraphAttn},
                              {"mlp", kGraphMlp},
                              {"moe_router", kGraphMoeRouter},
                              {"moe_preprocess", kGraphMoePreprocess}};

bool starts(std::string_view s, std::string_view p) { return s.starts_with(p); }

}  // namespace

unsigned parse_cuda_graph_modules(const std::string& option, const std::string& text) {
  unsigned bits = 0;
  std::string item;
  std::istringstream in(text);
  while (in >> item) {
    std::istringstream parts(item);
    std::string name;
    while (std::getline(parts, name, ',')) {
      if (name.empty()) continue;
      if (name == "moe")
        throw InputError("option '--" + option + "': moe (the whole mixture layer) is captured by Megatron only with "
                         "a fixed token count per expert; dropless routing reads its counts on the host (use "
                         "moe_router,moe_preprocess)");
      if (name == "mamba") throw InputError("option '--" + option + "': mamba: these models have no Mamba layers");
      bool known = false;
      for (const Named& m : kModules)
        if (name == m.name) bits |= m.bit, known = true;
      if (!known)
        throw InputError("option '--" + option + "': '" + name + "' is not one of attn, mlp, moe_router, moe_preprocess");
    }
  }
  if (bits == 0) throw InputError("option '--" + option + "': name at least one module (attn, mlp, moe_router, moe_preprocess)");
  if ((bits & kGraphMoePreprocess) && !(bits & kGraphMoeRouter))
    throw InputError("option '--" + option + "': moe_preprocess extends the router's graph; name moe_router too");
  return bits;
}

std::string cuda_graph_modules_string(unsigned bits) {
  std::string s;
  for (const Named& m : kModules) {
    if (!(bits & m.bit)) continue;
    if (!s.empty()) s += ',';
    s += m.name;
  }
  return s;
}

bool in_cuda_graph(const Kernel& row, unsigned bits) {
  const std::string_view n = repeated_layer_part(row.name);
  if (n.empty() || bits == 0) return false;
  if ((bits & kGraphAttn) && (starts(n, "input_norm") || starts(n, "attn."))) return true;
  const bool mixture = starts(n, "moe.");
  if ((bits & (kGraphMlp | kGraphMoeRouter)) && starts(n, "post_attention_norm")) return true;
  if ((bits & kGraphMlp) && starts(n, "mlp.")) return true;
  // The router's graph also holds the all-reduce of its input (tensor parallelism without folding)
  // and, backward, the sum of the input's gradients.
  if ((bits & kGraphMoeRouter) && (starts(n, "mlp.input") ||
                                   (mixture && (starts(n, "moe.gate") || starts(n, "moe.router") ||
                                                starts(n, "moe.input")))))
    return true;
  return (bits & kGraphMoePreprocess) && starts(n, "moe.tokens_per_expert");
}

}  // namespace kcast::synth
