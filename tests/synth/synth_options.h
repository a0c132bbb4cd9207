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

}  // namespace kcast::synth::testing
