// libFuzzer target: arbitrary bytes as a Hugging Face config.json (`kcast synth --config`), then,
// where the config is accepted, a small training step and a decode step synthesized from it. Only
// kcast::InputError may escape: a bad config is an error naming the key, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "model/error.h"
#include "predict/synth/transformer_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace kcast::synth;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const TransformerConfig c = parse_hf_config(text, "fuzz.json");
    SynthOptions o;
    o.batch = 2;
    o.seq = 8;
    // Synthesis is sized by the config; keep each run short where the config is huge.
    if (c.layers > 4096 || c.hidden > 65536 || c.vocab > (1 << 20) || c.experts > 1024) return 0;
    for (Mode m : {Mode::train, Mode::decode}) {
      o.mode = m;
      try {
        synthesize_transformer(c, o);
      } catch (const kcast::InputError&) {
      }
    }
  } catch (const kcast::InputError&) {
  }
  return 0;
}
