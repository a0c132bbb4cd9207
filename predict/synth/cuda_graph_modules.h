// Megatron-LM's per-layer CUDA graphs in training (--cuda-graph-impl transformer_engine
// --cuda-graph-modules ...; Megatron-Bridge's cuda_graph_scope): Transformer Engine's
// make_graphed_callables captures a layer's forward and backward from its start through the named
// modules, and each micro-batch replays them as one graph launch a direction. The kernels are the same;
// only the host's issue changes (predict/cli/synth_host_issue.h). The names are Megatron's, so a
// launch command's list carries over as written (`kcast synth --cuda-graph-modules`).
#pragma once
#include <string>
#include <vector>

#include "model/kernel.h"
#include "predict/synth/synth.h"

namespace kcast::synth {

enum CudaGraphModule : unsigned {
  kGraphAttn = 1u << 0,           // the attention block: input norm, attention, its residual add
  kGraphMlp = 1u << 1,            // a dense layer's MLP with its pre-MLP norm
  kGraphMoeRouter = 1u << 2,      // a mixture layer's pre-MLP norm, router GEMM and top-k
  kGraphMoePreprocess = 1u << 3,  // and the dispatcher's preprocessing: the token counts copied out
};

// "attn,moe_router" (commas or spaces) as bits; InputError naming `option` on an unknown name, on
// `moe` (the whole mixture layer, which Megatron captures only with a fixed token count per expert:
// dropless routing reads its counts on the host), on `mamba` (no Mamba layers here) or an empty list.
unsigned parse_cuda_graph_modules(const std::string& option, const std::string& text);
// The bits as Megatron's names, in the order of the enum, comma-separated.
std::string cuda_graph_modules_string(unsigned bits);
// Whether a layer row (a name synth gives, "layer." or "local_layer." prefixed) runs inside a captured
// module of `bits`.
bool in_cuda_graph(const Kernel& row, unsigned bits);

}  // namespace kcast::synth
