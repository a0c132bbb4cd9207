#include "predict/cli/options.h"

#include <exception>
#include <iostream>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "io/console.h"
#include "model/error.h"

namespace kcast::cli {

bool parse_options(int argc, char** argv, const std::string& usage, po::options_description& opts,
                   const po::positional_options_description& pos, po::variables_map& vm) {
  opts.add_options()("help,h", "show this help");
  try {
    po::store(po::command_line_parser(argc, argv).options(opts).positional(pos).run(), vm);
    if (vm.count("help")) {
      console_out() << "usage: " << usage << "\n\n" << opts << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw InputError(std::string(argv[0]) + ": " + e.what() + " (see 'kcast " + argv[0] + " --help')");
  }
  return true;
}

Format parse_format(const std::string& s) {
  if (s == "table") return Format::table;
  if (s == "csv") return Format::csv;
  if (s == "json") return Format::json;
  throw InputError("option '--format': '" + s + "' is not one of table, csv, json");
}

int64_t domain_gpus_per_node(const std::vector<const GpuSpec*>& gpus, int64_t layout_gpus) {
  int64_t lo = 0, hi = 0;
  std::string lo_gpu, hi_gpu;
  for (const GpuSpec* g : gpus) {
    if (g->domain_size < 1) {
      if (layout_gpus > 1)
        throw InputError("option '--gpus-per-node': GPU '" + g->name + "' has no domain_size in the GPU database " +
                         "(a KCAST_GPUS row without it?): give --gpus-per-node or add the column");
      return 8;  // one GPU: nothing crosses a node
    }
    if (lo == 0 || g->domain_size < lo) lo = g->domain_size, lo_gpu = g->name;
    if (g->domain_size > hi) hi = g->domain_size, hi_gpu = g->name;
  }
  if (lo != hi && layout_gpus > lo)
    throw InputError("option '--gpus-per-node': the layout spans " + std::to_string(layout_gpus) + " GPUs, beyond " +
                     lo_gpu + "'s scale-up domain of " + std::to_string(lo) + " but within " + hi_gpu + "'s " +
                     std::to_string(hi) + ": one kernel list cannot place it on both; give --gpus-per-node or " +
                     "one domain size of GPU at a time");
  return hi > 0 ? hi : 8;
}

void mark_announced(nlohmann::json& j, const GpuSpec& g) {
  if (g.announced) j["announced"] = true;
}

void note_if_announced(const GpuSpec& g) {
  if (g.announced)
    console_err() << "kcast: note: " << g.name << " is announced, not shipping: its figures are the vendor's "
                  << "preliminary ones, some derived (kcast gpus " << g.name << ", data/gpus.md)\n";
}

std::vector<const GpuSpec*> resolve_gpu_list(const GpuDatabase& db, const std::string& list) {
  std::vector<const GpuSpec*> out;
  size_t from = 0;
  while (true) {
    const size_t comma = list.find(',', from);
    const std::string part = list.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    const auto b = part.find_first_not_of(" \t"), e = part.find_last_not_of(" \t");
    if (b == std::string::npos) throw InputError("option '--gpu': empty GPU name in '" + list + "'");
    // "all": every GPU of the database, in its order (which GPU suits a workload best).
    if (part.substr(b, e - b + 1) == "all") {
      for (const GpuSpec& g : db.all()) out.push_back(&g);
      if (comma == std::string::npos) break;
      from = comma + 1;
      continue;
    }
    try {
      out.push_back(&db.resolve(part.substr(b, e - b + 1)));
    } catch (const InputError& err) {
      throw InputError(std::string("option '--gpu': ") + err.what());
    }
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  for (const GpuSpec* g : out) note_if_announced(*g);
  return out;
}

void require_kernel_rows(const KernelRows& rows, const std::string& file) {
  if (rows.empty())
    throw InputError(file + ": no kernel rows (only a header): nothing to predict");
}

std::vector<int64_t> parse_int_list(const char* option, const std::string& value, int64_t min,
                                    const std::string& what) {
  std::vector<int64_t> out;
  size_t from = 0;
  while (true) {
    const size_t comma = value.find(',', from);
    const std::string part = value.substr(from, comma == std::string::npos ? std::string::npos : comma - from);
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || v < min || v > (1LL << 24))
      throw InputError(std::string("option '--") + option + "': '" + part + "' is not " + what);
    out.push_back(v);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return out;
}

int64_t positive_int(const po::variables_map& vm, const char* option, int64_t fallback) {
  if (!vm.count(option)) return fallback;
  const int64_t v = vm[option].as<int64_t>();
  if (v <= 0 || v > (int64_t(1) << 24))
    throw InputError(std::string("option '--") + option + "': must be a positive integer up to 16777216 (got " +
                     std::to_string(v) + ")");
  return v;
}

double positive_number(const po::variables_map& vm, const char* option, double fallback, const char* what) {
  if (!vm.count(option)) return fallback;
  const double v = vm[option].as<double>();
  if (!(v > 0)) throw InputError(std::string("option '--") + option + "': " + what);
  return v;
}

DType dtype_named(const char* option, const std::string& name) {
  const std::optional<DType> d = parse_dtype(name);
  if (!d) throw InputError(std::string("option '--") + option + "': unknown dtype '" + name + "'");
  return *d;
}

}  // namespace kcast::cli
