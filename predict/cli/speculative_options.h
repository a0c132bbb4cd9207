// Speculative decoding's options, shared by `kcast serve` and `kcast plan serve`: --speculative-tokens K
// --acceptance A, checked once and applied to every engine the command builds.
#pragma once
#include <cstdint>
#include <string>

#include <boost/program_options.hpp>

#include "predict/serve/engine.h"

namespace kcast::cli {

struct Speculative {
  int64_t tokens = 0;  // draft tokens a decoding sequence verifies a step (0: off)
  double acceptance = 0;
  void apply(serve::EngineConfig& e) const {
    e.speculative_tokens = tokens;
    e.acceptance = acceptance;
  }
  // " --speculative-tokens K --acceptance A", or nothing when off: for the commands a plan prints.
  std::string flags() const;
};

void add_speculative_options(boost::program_options::options_description& opts);
// Both options or neither (InputError naming the one given alone), K from 0 to 16, A from 0 to 1.
Speculative speculative_from(const boost::program_options::variables_map& vm);

}  // namespace kcast::cli
