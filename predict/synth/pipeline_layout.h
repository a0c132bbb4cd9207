// How a pipeline-parallel run lays the layers over its stages (--pp, --virtual-stages, --pp-layout):
// one layer count per model chunk, chunk c on stage c mod pp (Megatron-LM's interleaving order).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "predict/synth/synth.h"
#include "predict/synth/transformer_config.h"

namespace kcast::synth {

// The layers of each of the pp x virtual-stages chunks:
//  - --pp-layout as given (one count per chunk, summing to the model's layers);
//  - else layers / chunks each where that divides;
//  - else Megatron-LM's account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split
//    (Megatron-Bridge's Llama 3.1 405B recipes: 126 layers over 8 x 8 or 16 x 1 chunks): the
//    embedding and the loss count as a layer each, the first chunk and the last one layer fewer;
//  - else balanced: floor(layers / chunks) each, the first layers mod chunks one more (the most a
//    stage holds matches Megatron-Bridge's DeepSeek-V3 layouts, 61 layers over 16 or 8 x 2 chunks);
//  - an InputError naming the option where there are more chunks than layers.
std::vector<int64_t> pipeline_layout(const TransformerConfig& cfg, const SynthOptions& opt);
// The stderr note that says which layout an uneven split took ("" where the layers divide or
// --pp-layout gives it).
std::string pipeline_layout_note(const TransformerConfig& cfg, const SynthOptions& opt);

// The layers of each of the pp stages (chunk c on stage c mod pp), and the most one holds (the
// schedule's slowest stage).
std::vector<int64_t> layers_per_stage(const std::vector<int64_t>& chunks, int64_t pp);
int64_t critical_stage_layers(const std::vector<int64_t>& chunks, int64_t pp);

// Megatron-Core's --pipeline-model-parallel-layout string (as Megatron-Bridge's recipes write it,
// e.g. DeepSeek-V3's "Et|(tt|)*30mL"): chunks split by '|', in them 'E' the embedding, 't' a
// transformer layer, 'm' a multi-token prediction depth, 'L' the loss; a letter or a parenthesized
// group followed by '*N' repeats N times. `option` names the flag in errors (an InputError naming the
// character and its position for anything else).
struct MegatronLayout {
  std::vector<int64_t> layers;  // 't' per chunk
  int64_t mtp = 0;              // 'm' in all
  int64_t mtp_chunk = -1;       // the chunk holding them (-1: none)
};
MegatronLayout parse_megatron_layout(const std::string& layout, const std::string& option);
// Whether a string is Megatron's layout syntax rather than kcast's comma-separated counts.
bool is_megatron_layout(const std::string& layout);

// Whether the multi-token prediction depths lie on the step's critical path: on the stage of their
// chunk (--pp-layout's 'm'; else the last), that stage's layers plus the depths exceed the most layers
// any stage holds (one depth weighs as a layer). Always with one stage.
bool mtp_on_critical_path(const TransformerConfig& cfg, const SynthOptions& opt);

}  // namespace kcast::synth
