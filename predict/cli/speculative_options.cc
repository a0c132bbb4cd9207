#include "predict/cli/speculative_options.h"

#include <algorithm>

#include "model/error.h"
#include "predict/cli/options.h"
#include "predict/report/text_util.h"

namespace kcast::cli {

namespace po = boost::program_options;

std::string speculative_flags(int64_t tokens, double acceptance) {
  if (tokens == 0) return "";
  return " --speculative-tokens " + std::to_string(tokens) + " --acceptance " + report::fmt(acceptance);
}

void add_speculative_options(po::options_description& opts, bool list) {
  opts.add_options()("speculative-tokens", po::value<std::string>(),
                     list ? "speculative decoding: draft counts to try, K1,K2,... (0: off), each configuration "
                            "with each; with --acceptance"
                          : "speculative decoding: draft tokens each decoding sequence verifies a step, proposed "
                            "by a draft model of one layer and the LM head (MTP, EAGLE); with --acceptance "
                            "(default 0: off)")(
      "acceptance", po::value<double>(),
      "with --speculative-tokens: the chance a draft token is accepted, its predecessors having been, 0 to 1");
}

Speculative speculative_from(const po::variables_map& vm, bool list) {
  if (vm.count("acceptance") && !vm.count("speculative-tokens"))
    throw InputError("option '--acceptance': only with --speculative-tokens");
  Speculative s;
  if (!vm.count("speculative-tokens")) return s;
  const std::string text = vm["speculative-tokens"].as<std::string>();
  s.tokens = parse_int_list("speculative-tokens", text, 0, list ? "a draft count (give K1,K2,...)" : "a draft count");
  if (!list && s.tokens.size() != 1)
    throw InputError("option '--speculative-tokens': one draft count (kcast plan serve searches a list)");
  for (int64_t k : s.tokens)
    if (k > 16) throw InputError("option '--speculative-tokens': a draft count from 0 to 16 (got " + std::to_string(k) + ")");
  std::sort(s.tokens.begin(), s.tokens.end());
  s.tokens.erase(std::unique(s.tokens.begin(), s.tokens.end()), s.tokens.end());
  if (!s.on()) {
    if (vm.count("acceptance")) throw InputError("option '--acceptance': no draft tokens to accept (--speculative-tokens 0)");
    return s;
  }
  if (!vm.count("acceptance"))
    throw InputError("option '--speculative-tokens': give --acceptance A, the chance a draft token is accepted");
  s.acceptance = vm["acceptance"].as<double>();
  if (!(s.acceptance >= 0 && s.acceptance <= 1))
    throw InputError("option '--acceptance': a share from 0 to 1 (got " + report::fmt(s.acceptance) + ")");
  return s;
}

}  // namespace kcast::cli
