// What hf_config.cc's parser asks of hf_config_families.cc: the family- and feature-specific fields
// of a Hugging Face config.json, each read into the TransformerConfig being built (the comments
// in hf_config_families.cc say what each reads and which defaults it follows).
#pragma once
#include <string>

#include "predict/synth/hf_config_reader.h"
#include "predict/synth/transformer_config.h"

namespace kcast::synth::hf {

bool is_gemma(const std::string& type);
bool is_llama4(const std::string& type);
void sliding_window_from_hf(const Reader& r, const std::string& type, TransformerConfig& c);
void linear_attention_from_hf(const Reader& r, const std::string& type, TransformerConfig& c);
void gemma_from_hf(const Reader& r, const std::string& type, TransformerConfig& c);
void llama4_attention_from_hf(const Reader& r, TransformerConfig& c);
void mla_from_hf(const Reader& r, TransformerConfig& c);
void moe_from_hf(const Reader& r, const std::string& type, TransformerConfig& c);
void partial_rotary_from_hf(const Reader& r, TransformerConfig& c);
void glm4_moe_from_hf(const Reader& r, TransformerConfig& c);
void minimax_m2_from_hf(const Reader& r, TransformerConfig& c);

}  // namespace kcast::synth::hf
