// `kcast gpus [NAME] [--format table|csv|json]`: the GPU database, or one GPU.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "calibrate/csv_quote.h"
#include "calibrate/gpu_database_csv.h"
#include "predict/cli/commands.h"
#include "predict/cli/options.h"

namespace kcast::cli {

namespace {

struct Field {
  const char* name;
  double GpuSpec::*member;
};
constexpr Field kNumbers[] = {
    {"boost_clock_mhz", &GpuSpec::boost_clock_mhz}, {"memory_gb", &GpuSpec::memory_gb},
    {"dram_bw_gbps", &GpuSpec::dram_bw_gbps},       {"l2_mb", &GpuSpec::l2_mb},
    {"fp64_tflops", &GpuSpec::fp64_tflops},         {"fp32_tflops", &GpuSpec::fp32_tflops},
    {"tf32_tflops", &GpuSpec::tf32_tflops},         {"fp16_tflops", &GpuSpec::fp16_tflops},
    {"bf16_tflops", &GpuSpec::bf16_tflops},         {"fp8_tflops", &GpuSpec::fp8_tflops},
    {"int8_tops", &GpuSpec::int8_tops},             {"tdp_w", &GpuSpec::tdp_w}};

std::string num(double v) {
  if (!known(v)) return "";
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}
std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

nlohmann::json to_json(const GpuSpec& g) {
  nlohmann::json j;
  j["name"] = g.name;
  j["aliases"] = g.aliases;
  j["vendor"] = g.vendor;
  j["arch"] = g.arch;
  j["compute_capability"] = g.compute_capability;
  j["release_year"] = g.release_year;
  j["sm_count"] = g.sm_count;
  for (const auto& f : kNumbers) j[f.name] = known(g.*f.member) ? nlohmann::json(g.*f.member) : nlohmann::json();
  j["tensor_cores"] = g.tensor_cores;
  j["source"] = g.source;
  j["uncertain"] = g.uncertain;
  return j;
}

}  // namespace

int cmd_gpus(int argc, char** argv) {
  po::options_description opts("kcast gpus options");
  std::string name, format = "table";
  opts.add_options()("name", po::value(&name), "GPU name or alias (positional)")(
      "format", po::value(&format)->default_value("table"), "table, csv or json");
  po::positional_options_description pos;
  pos.add("name", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv, "kcast gpus [NAME] [--format table|csv|json]", opts, pos, vm)) return 0;
  const Format fmt = parse_format(format);
  const GpuDatabase& db = default_gpu_database();
  std::vector<const GpuSpec*> rows;
  if (!name.empty()) rows.push_back(&db.resolve(name));
  else
    for (const auto& g : db.all()) rows.push_back(&g);

  if (fmt == Format::json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto* g : rows) arr.push_back(to_json(*g));
    std::cout << (name.empty() ? nlohmann::json{{"gpus", arr}} : arr[0]).dump(2) << "\n";
  } else if (fmt == Format::csv) {
    std::cout << "name,aliases,vendor,arch,compute_capability,release_year,sm_count";
    for (const auto& f : kNumbers) std::cout << ',' << f.name;
    std::cout << ",tensor_cores,source,uncertain\n";
    for (const auto* g : rows) {
      std::cout << csv_field(g->name) << ',' << csv_field(join(g->aliases, ";")) << ',' << g->vendor << ','
                << g->arch << ',' << g->compute_capability << ',' << g->release_year << ',' << g->sm_count;
      for (const auto& f : kNumbers) std::cout << ',' << num(g->*f.member);
      std::cout << ',' << (g->tensor_cores ? 1 : 0) << ',' << csv_field(g->source) << ','
                << csv_field(g->uncertain) << "\n";
    }
  } else {
    std::printf("%-16s %-9s %-6s %4s %6s %6s %7s %6s %7s %7s %7s %7s\n", "name", "arch", "cc", "SMs",
                "MHz", "GB", "DRAM GB/s", "L2 MB", "FP32", "BF16", "FP16", "FP8");
    for (const auto* g : rows)
      std::printf("%-16s %-9s %-6s %4d %6s %6s %9s %6s %7s %7s %7s %7s\n", g->name.c_str(), g->arch.c_str(),
                  g->compute_capability.c_str(), g->sm_count, num(g->boost_clock_mhz).c_str(),
                  num(g->memory_gb).c_str(), num(g->dram_bw_gbps).c_str(), num(g->l2_mb).c_str(),
                  num(g->fp32_tflops).c_str(), num(g->bf16_tflops).c_str(), num(g->fp16_tflops).c_str(),
                  num(g->fp8_tflops).c_str());
    if (name.empty()) std::printf("(%zu GPUs; dense peaks in TFLOP/s; --format csv for all fields)\n", rows.size());
    else std::printf("aliases: %s\nsource: %s\n", join(rows[0]->aliases, "; ").c_str(), rows[0]->source.c_str());
  }
  return 0;
}

}  // namespace kcast::cli
