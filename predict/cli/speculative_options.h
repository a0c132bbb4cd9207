// Speculative decoding's options, shared by `kcast serve` and `kcast plan serve`: --speculative-tokens K
// (plan serve: a list K1,K2,... to search) --acceptance A, checked once before any engine is built.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace kcast::cli {

struct Speculative {
  std::vector<int64_t> tokens{0};  // draft tokens a decoding sequence verifies a step (0: off), ascending
  double acceptance = 0;
  bool on() const { return tokens.back() > 0; }
};

// " --speculative-tokens K --acceptance A", or nothing at K = 0: for the commands a plan prints.
std::string speculative_flags(int64_t tokens, double acceptance);

// `list`: --speculative-tokens takes K1,K2,... (plan serve) rather than one K (serve).
void add_speculative_options(boost::program_options::options_description& opts, bool list);
// Both options or neither (InputError naming the one given alone, or --acceptance given with only K = 0
// allowed), each K from 0 to 16, A from 0 to 1.
Speculative speculative_from(const boost::program_options::variables_map& vm, bool list);

}  // namespace kcast::cli
