// `--mode generate`: a prompt's forward, then the decode steps grouped at their mean context, so
// the list's work is the sum over the steps (exact where a step's work does not depend on the
// context, within a group's spread where it grows with it).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "predict/synth/synth.h"
#include "tests/input_error_of.h"
#include "tests/synth/synth_options.h"

namespace kcast::synth {
namespace {

using kcast::testing::input_error_of;
using testing::with_mode;

bool starts(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

// FLOPs x count of the rows whose name starts with `prefix` and contains `part`.
double flops(const std::vector<Kernel>& ks, const std::string& prefix, const std::string& part) {
  double f = 0;
  for (const auto& k : ks)
    if (starts(k.name, prefix) && k.name.find(part) != std::string::npos) f += k.flops * k.count;
  return f;
}

SynthOptions generate(int64_t prompt, int64_t tokens) {
  SynthOptions o = with_mode(Mode::generate, 4, prompt);
  o.new_tokens = tokens;
  o.attention = AttentionImpl::flash;
  return o;
}

TEST(SynthGeneration, PrefillThenDecodeStepsAtTheirContexts) {
  const int64_t P = 1000, N = 100;
  Footprint f;
  const auto ks = synthesize("llama3-8b", generate(P, N), &f);
  // The prefill is the prompt's forward.
  SynthOptions infer = generate(P, N);
  infer.mode = Mode::infer;
  infer.new_tokens = 0;
  EXPECT_DOUBLE_EQ(flops(ks, "prefill.", ""), flops(synthesize("llama3-8b", infer), "", ""));
  // The projections do not depend on the context: N times one step's.
  SynthOptions step = infer;
  step.mode = Mode::decode;
  step.seq = P + 1;
  const auto one = synthesize("llama3-8b", step);
  EXPECT_NEAR(flops(ks, "decode@", "proj") / (N * flops(one, "", "proj")), 1.0, 1e-12);
  // Attention grows with the context: the sum over steps t = 1..N of attention at P + t, to within
  // the groups' rounding (each at its mean step, rounded down).
  double exact = 0;
  for (int64_t t = 1; t <= N; ++t) exact += double(P + t);
  EXPECT_NEAR(flops(ks, "decode@", "attn.flash") / (flops(one, "", "attn.flash") / double(P + 1) * exact), 1.0, 1e-3);
  // The memory is the last step's: its cache holds P + N tokens.
  Footprint last;
  step.seq = P + N;
  synthesize("llama3-8b", step, &last);
  EXPECT_DOUBLE_EQ(f.kv_cache_bytes, last.kv_cache_bytes);
  ASSERT_EQ(f.notes.size(), 1u);
  EXPECT_NE(f.notes[0].find("100 tokens as 8 groups of decode steps at contexts 1006, 1019,"), std::string::npos)
      << f.notes[0];
}

TEST(SynthGeneration, FewTokensAreOneStepEach) {
  const auto ks = synthesize("gpt2-large", generate(10, 3));
  // Every row belongs to the prefill or to one of three single-step groups at contexts 11, 12, 13.
  std::set<std::string> groups;
  for (const auto& k : ks) {
    const std::string prefix = k.name.substr(0, k.name.find('.'));
    if (prefix != "prefill") groups.insert(prefix);
  }
  EXPECT_EQ(groups, (std::set<std::string>{"decode@11", "decode@12", "decode@13"}));
}

TEST(SynthGeneration, ErrorsNameTheOption) {
  auto err = [](const std::string& model, SynthOptions o) { return input_error_of([&] { synthesize(model, o); }); };
  EXPECT_NE(err("llama3-8b", generate(0, 10)).find("'--seq'"), std::string::npos);
  EXPECT_NE(err("llama3-8b", generate(100, 0)).find("'--new-tokens'"), std::string::npos);
  EXPECT_NE(err("resnet50", generate(100, 10)).find("is a CNN"), std::string::npos);
  EXPECT_NE(err("bert-large", generate(100, 10)).find("is an encoder"), std::string::npos);
  // GPT-2 Large has 1024 learned positions: the last tokens' contexts would pass them.
  EXPECT_NE(err("gpt2-large", generate(1000, 100)).find("'--seq'"), std::string::npos);
}

}  // namespace
}  // namespace kcast::synth
