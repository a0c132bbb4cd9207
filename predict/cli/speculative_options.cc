#include "predict/cli/speculative_options.h"

#include "model/error.h"
#include "predict/report/text_util.h"

namespace kcast::cli {

namespace po = boost::program_options;

std::string Speculative::flags() const {
  if (tokens == 0) return "";
  return " --speculative-tokens " + std::to_string(tokens) + " --acceptance " + report::fmt(acceptance);
}

void add_speculative_options(po::options_description& opts) {
  opts.add_options()("speculative-tokens", po::value<int64_t>(),
                     "speculative decoding: draft tokens each decoding sequence verifies a step, proposed by a "
                     "draft model of one layer and the LM head (MTP, EAGLE); with --acceptance (default 0: off)")(
      "acceptance", po::value<double>(),
      "with --speculative-tokens: the chance a draft token is accepted, its predecessors having been, 0 to 1");
}

Speculative speculative_from(const po::variables_map& vm) {
  if (vm.count("acceptance") && !vm.count("speculative-tokens"))
    throw InputError("option '--acceptance': only with --speculative-tokens");
  Speculative s;
  if (!vm.count("speculative-tokens")) return s;
  const int64_t k = vm["speculative-tokens"].as<int64_t>();
  if (k < 0 || k > 16)
    throw InputError("option '--speculative-tokens': a draft count from 0 to 16 (got " + std::to_string(k) + ")");
  if (k == 0) return s;
  if (!vm.count("acceptance"))
    throw InputError("option '--speculative-tokens': give --acceptance A, the chance a draft token is accepted");
  const double a = vm["acceptance"].as<double>();
  if (!(a >= 0 && a <= 1))
    throw InputError("option '--acceptance': a share from 0 to 1 (got " + report::fmt(a) + ")");
  s.tokens = k;
  s.acceptance = a;
  return s;
}

}  // namespace kcast::cli
