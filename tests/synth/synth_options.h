// Options of one synthesized step for the synth tests: a mode, a batch and a sequence length.
#pragma once
#include <cstdint>

#include "predict/synth/synth.h"

namespace kcast::synth::testing {

inline SynthOptions with_mode(Mode mode, int64_t batch, int64_t seq) {
  SynthOptions o;
  o.mode = mode;
  o.batch = batch;
  o.seq = seq;
  return o;
}

// Mixtral 8x7B's expert-parallel training step under Megatron: 8 GPUs, one expert each, 2 sequences of
// 1024 tokens a GPU.
inline SynthOptions megatron_ep8() {
  SynthOptions o = with_mode(Mode::train, 16, 1024);
  o.attention = AttentionImpl::flash;
  o.framework = Framework::megatron;
  o.dp = 8;
  o.ep = 8;
  return o;
}

}  // namespace kcast::synth::testing
