// Parsing of kcast-microbench's options; see cli_options.h.
#include "microbench/cli_options.h"

#include <algorithm>
#include <charconv>
#include <string_view>

namespace kcast::microbench {

const std::vector<std::string>& benchmark_families() {
  static const std::vector<std::string> kFamilies{"launch", "dram", "l2", "fma", "tensor", "gemm"};
  return kFamilies;
}

const char* usage_text() {
  return "Usage: kcast-microbench [--device N] [--quick] [-o OUT.csv] [--only LIST] [--help]\n"
         "\n"
         "Measures the GPU capabilities kcast's cost model uses (DRAM and L2 bandwidth, FMA and\n"
         "tensor-core throughput, cuBLASLt GEMM rates, kernel-launch overhead) and writes one CSV row\n"
         "per measurement (format: docs/MICROBENCH.md). Progress goes to stderr.\n"
         "\n"
         "Options:\n"
         "  --device N     CUDA device index (default 0)\n"
         "  --quick        shorter sweeps and time caps (about a minute on a datacenter GPU)\n"
         "  -o, --output F write the CSV to F atomically (default: stdout)\n"
         "  --only LIST    comma-separated families to run: launch,dram,l2,fma,tensor,gemm\n"
         "                 (device_info rows are always written)\n"
         "  -h, --help     print this help\n"
         "\n"
         "Exit status: 0 success, 1 a CUDA error during the run, 2 bad usage,\n"
         "3 no usable CUDA GPU (nothing is written).\n";
}

std::optional<CliOptions> parse_cli(int argc, char** argv, std::string& error) {
  CliOptions o;
  auto value = [&](int& i, std::string_view opt) -> const char* {
    if (i + 1 >= argc) {
      error = "option '" + std::string(opt) + "' needs a value";
      return nullptr;
    }
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--device") {
      const char* v = value(i, a);
      if (!v) return std::nullopt;
      std::string_view s = v;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), o.device);
      if (ec != std::errc() || p != s.data() + s.size() || o.device < 0) {
        error = "option '--device': '" + std::string(s) + "' is not a device index";
        return std::nullopt;
      }
    } else if (a == "-o" || a == "--output") {
      const char* v = value(i, a);
      if (!v) return std::nullopt;
      o.output = v;
      if (o.output.empty()) {
        error = "option '" + std::string(a) + "': empty file name";
        return std::nullopt;
      }
    } else if (a == "--only") {
      const char* v = value(i, a);
      if (!v) return std::nullopt;
      std::string_view s = v;
      while (!s.empty()) {
        const size_t comma = s.find(',');
        std::string item(s.substr(0, comma));
        s = comma == std::string_view::npos ? std::string_view() : s.substr(comma + 1);
        if (item.empty()) continue;
        const auto& fam = benchmark_families();
        if (std::find(fam.begin(), fam.end(), item) == fam.end()) {
          error = "option '--only': unknown family '" + item +
                  "' (expected launch, dram, l2, fma, tensor or gemm)";
          return std::nullopt;
        }
        o.only.push_back(item);
      }
    } else {
      error = "unknown option '" + std::string(a) + "' (see --help)";
      return std::nullopt;
    }
  }
  return o;
}

}  // namespace kcast::microbench
