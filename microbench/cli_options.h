// Command line of kcast-microbench (docs/cli-contract.md, docs/MICROBENCH.md). A small hand loop: the CUDA tool
// links no Boost, and there are only four options.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace kcast::microbench {

struct CliOptions {
  int device = 0;
  bool quick = false;
  bool help = false;
  std::string output;              // empty: CSV to stdout
  std::vector<std::string> only;   // empty: every benchmark family
};

// Parses argv; on bad usage returns nullopt and sets `error` to a one-line message.
std::optional<CliOptions> parse_cli(int argc, char** argv, std::string& error);
const char* usage_text();
// The benchmark families --only accepts, in run order.
const std::vector<std::string>& benchmark_families();

}  // namespace kcast::microbench
