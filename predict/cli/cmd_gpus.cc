// `kcast gpus [NAME] [--format table|csv|json] [--model M]`: the GPU database, or one GPU; for one
// GPU also what the cost model makes of it (sustained rates, power limit, SGEMM scale), so a user can
// see why a board is predicted the way it is.
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "io/console.h"
#include "io/csv_quote.h"
#include "io/gpu_database_csv.h"
#include "calibrate/model_file.h"
#include "predict/cli/commands.h"
#include "predict/cli/options.h"
#include "model/error.h"

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
    {"int8_tops", &GpuSpec::int8_tops},             {"tdp_w", &GpuSpec::tdp_w},
    {"link_gbps", &GpuSpec::link_gbps}, {"host_gbps", &GpuSpec::host_gbps}};
// Columns added since: the csv writes them after `uncertain`, so a script reading the older columns
// by position still finds them where they were.
constexpr Field kAppended[] = {{"fp4_tflops", &GpuSpec::fp4_tflops}, {"net_gbps", &GpuSpec::net_gbps}};

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
  for (const auto& f : kAppended) j[f.name] = known(g.*f.member) ? nlohmann::json(g.*f.member) : nlohmann::json();
  // The scale-up domain the link reaches (null: unknown), whether the GPU is only announced, and
  // where the link, domain and network figures come from.
  j["domain_size"] = g.domain_size > 0 ? nlohmann::json(g.domain_size) : nlohmann::json();
  j["announced"] = g.announced;
  j["interconnect_source"] = g.interconnect_source;
  j["tensor_cores"] = g.tensor_cores;
  j["source"] = g.source;
  j["uncertain"] = g.uncertain;
  return j;
}

// What the model derives for one GPU: sustained rates, the power limit's clock fraction per dtype
// and where the SGEMM scale comes from (the board's own calibration, its chip siblings', or none).
nlohmann::json model_view(const LoadedModel& lm, const GpuSpec& g) {
  const GpuSpec spec = lm.spec_for(g);
  const GpuCaps c = lm.model.caps(spec);
  nlohmann::json j;
  j["model"] = lm.path;
  j["dram_bw_gbps"] = c.dram_bw_gbps;
  j["dram_bw_from"] = lm.dram_bw_from(g);
  j["l2_bw_gbps"] = c.l2_bw_gbps;
  j["launch_floor_us"] = c.launch_floor_us;
  j["mem_latency_us"] = c.mem_latency_us;  // the what-if knob mem_latency's baseline
  // The streaming round trip that bounds kernels whose threads keep one element in flight
  // (model/thread_access.h): measured, a chip sibling's, or the cycles default at the clock.
  j["stream_latency_us"] = c.stream_latency_us;
  // What collectives sustain over the GPU's own links and, between nodes, its NIC (null: no figure).
  j["link_gbps"] = c.link_gbps > 0 ? nlohmann::json(c.link_gbps) : nlohmann::json();
  j["net_gbps"] = c.net_gbps > 0 ? nlohmann::json(c.net_gbps) : nlohmann::json();
  nlohmann::json rate = nlohmann::json::object(), clock = nlohmann::json::object();
  for (DType d : kAllDTypes) {
    if (!(c.tensor_tflops[int(d)] > 0)) continue;
    rate[std::string(to_string(d))] = c.tensor_tflops[int(d)];
    clock[std::string(to_string(d))] = c.gemm_derate[int(d)];
  }
  j["gemm_tflops_at_boost"] = rate;
  j["dense_math_clock_fraction"] = clock;
  const auto own = lm.gpus.find(g.name);
  auto scale = [&](const char* key, double GpuMeasured::*field, double value, const char* otherwise) {
    const bool own_scale = own != lm.gpus.end() && known(own->second.*field);
    j[key] = known(value) ? nlohmann::json(value) : nlohmann::json();
    j[std::string(key) + "_from"] = own_scale      ? "own calibration"
                                    : known(value) ? "chip siblings (same compute capability and SM count)"
                                                   : otherwise;
  };
  scale("sgemm_scale", &GpuMeasured::sgemm_scale, spec.measured_sgemm_scale, "typical board");
  scale("conv_scale", &GpuMeasured::conv_scale, spec.measured_conv_scale, "its SGEMM scale");
  j["measured_source"] = spec.measured_source;
  // Fused attention: attn_eff of the GEMM rate; kernels written with mma.sync (FlashAttention-2) get
  // the architecture's share of that (model/attention_kernel.h).
  j["attention_eff"] = lm.model.params()[kAttnEff];
  j["mma_sync_fraction"] = c.arch.mma_sync_fraction;
  // Row kernels (norms, softmax): rows in flight per SM follow the threads an SM holds.
  j["threads_per_sm"] = c.arch.threads_per_sm;
  return j;
}

void print_model_view(const nlohmann::json& v) {
  console_printf("model (%s):\n", v["model"].get<std::string>().c_str());
  console_printf("  sustained: DRAM %.0f GB/s, L2 %.0f GB/s, launch floor %.2f us, memory latency %.2f us%s%s\n",
              v["dram_bw_gbps"].get<double>(), v["l2_bw_gbps"].get<double>(), v["launch_floor_us"].get<double>(),
              v["mem_latency_us"].get<double>(),
              v["measured_source"].get<std::string>().empty() ? "" : "; measured: ",
              v["measured_source"].get<std::string>().c_str());
  console_printf("  DRAM bandwidth from: %s\n", v["dram_bw_from"].get<std::string>().c_str());
  if (!v["link_gbps"].is_null()) {
    console_printf("  collectives: GPU-to-GPU link %.0f GB/s", v["link_gbps"].get<double>());
    if (!v["net_gbps"].is_null()) console_printf(", between nodes (its NIC) %.0f GB/s", v["net_gbps"].get<double>());
    console_printf(" per direction\n");
  }
  console_printf("  GEMM rate at boost, TFLOP/s (x clock fraction a long GEMM settles at under the power limit):\n   ");
  for (const auto& [d, r] : v["gemm_tflops_at_boost"].items())
    console_printf(" %s %.4g (x%.2f)", d.c_str(), r.get<double>(), v["dense_math_clock_fraction"][d].get<double>());
  console_printf("\n  SGEMM scale: %s (%s); convolution scale: %s (%s)\n",
              v["sgemm_scale"].is_null() ? "1" : num(v["sgemm_scale"].get<double>()).c_str(),
              v["sgemm_scale_from"].get<std::string>().c_str(),
              v["conv_scale"].is_null() ? "as SGEMM" : num(v["conv_scale"].get<double>()).c_str(),
              v["conv_scale_from"].get<std::string>().c_str());
  console_printf("  fused attention: %.2f of the GEMM rate; kernels written with mma.sync (FlashAttention-2) x%.2f\n",
              v["attention_eff"].get<double>(), v["mma_sync_fraction"].get<double>());
  console_printf("  norms and softmax: one CTA per row, %d threads resident per SM"
              " (their re-reads find those rows in L2)\n",
              v["threads_per_sm"].get<int>());
}

void print_interconnect(const GpuSpec& g) {
  console_printf("interconnect: link %s GB/s per direction among %s GPUs (its scale-up domain); network %s GB/s per "
                 "GPU beyond it\n",
                 known(g.link_gbps) ? num(g.link_gbps).c_str() : "unknown",
                 g.domain_size > 0 ? std::to_string(g.domain_size).c_str() : "an unknown number of",
                 known(g.net_gbps) ? num(g.net_gbps).c_str() : "unknown");
  if (!g.interconnect_source.empty()) console_printf("interconnect source: %s\n", g.interconnect_source.c_str());
}

}  // namespace

int cmd_gpus(int argc, char** argv) {
  po::options_description opts("kcast gpus options");
  std::string name, format = "table", model_path;
  opts.add_options()("name", po::value(&name), "GPU name or alias (positional)")(
      "format", po::value(&format)->default_value("table"), "table, csv or json")(
      "model", po::value(&model_path), "with NAME: model.json whose view of the GPU to show (default: the shipped model)");
  po::positional_options_description pos;
  pos.add("name", 1);
  po::variables_map vm;
  if (!parse_options(argc, argv, "kcast gpus [NAME] [--format table|csv|json] [--model M]", opts, pos, vm)) return 0;
  const Format fmt = parse_format(format);
  const GpuDatabase& db = default_gpu_database();
  std::vector<const GpuSpec*> rows;
  if (!name.empty()) rows.push_back(&db.resolve(name));
  else
    for (const auto& g : db.all()) rows.push_back(&g);
  if (!model_path.empty() && (name.empty() || fmt == Format::csv))
    throw InputError("option '--model': needs a GPU NAME and the table or json format (csv has no model view)");
  nlohmann::json view;
  if (!name.empty() && fmt != Format::csv) view = model_view(model_or_default(model_path), *rows[0]);  // csv: no view

  if (fmt == Format::json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto* g : rows) arr.push_back(to_json(*g));
    if (!name.empty()) arr[0]["model"] = view;
    console_out() << (name.empty() ? nlohmann::json{{"gpus", arr}} : arr[0]).dump(2) << "\n";
  } else if (fmt == Format::csv) {
    console_out() << "name,aliases,vendor,arch,compute_capability,release_year,sm_count";
    for (const auto& f : kNumbers) console_out() << ',' << f.name;
    console_out() << ",tensor_cores,source,uncertain";
    for (const auto& f : kAppended) console_out() << ',' << f.name;
    console_out() << ",domain_size,announced,interconnect_source\n";
    for (const auto* g : rows) {
      console_out() << csv_field(g->name) << ',' << csv_field(join(g->aliases, ";")) << ',' << g->vendor << ','
                << g->arch << ',' << g->compute_capability << ',' << g->release_year << ',' << g->sm_count;
      for (const auto& f : kNumbers) console_out() << ',' << num(g->*f.member);
      console_out() << ',' << (g->tensor_cores ? 1 : 0) << ',' << csv_field(g->source) << ','
                << csv_field(g->uncertain);
      for (const auto& f : kAppended) console_out() << ',' << num(g->*f.member);
      console_out() << ',' << (g->domain_size > 0 ? std::to_string(g->domain_size) : "") << ','
                    << (g->announced ? 1 : 0) << ',' << csv_field(g->interconnect_source) << "\n";
    }
  } else {
    console_printf("%-16s %-9s %-6s %4s %6s %6s %7s %6s %7s %7s %7s %7s %7s\n", "name", "arch", "cc", "SMs",
                "MHz", "GiB", "DRAM GB/s", "L2 MB", "FP32", "BF16", "FP16", "FP8", "FP4");
    bool any_announced = false;
    for (const auto* g : rows) {
      any_announced |= g->announced;
      console_printf("%-16s %-9s %-6s %4d %6s %6s %9s %6s %7s %7s %7s %7s %7s\n",
                  (g->name + (g->announced ? "*" : "")).c_str(), g->arch.c_str(),
                  g->compute_capability.c_str(), g->sm_count, num(g->boost_clock_mhz).c_str(),
                  num(g->memory_gb).c_str(), num(g->dram_bw_gbps).c_str(), num(g->l2_mb).c_str(),
                  num(g->fp32_tflops).c_str(), num(g->bf16_tflops).c_str(), num(g->fp16_tflops).c_str(),
                  num(g->fp8_tflops).c_str(), num(g->fp4_tflops).c_str());
    }
    if (any_announced) console_printf("* announced, not shipping: the vendor's preliminary figures\n");
    // memory_gb is the datasheet's "80GB", which is GiB (2^30 bytes); synth and serve count GB (1e9).
    if (name.empty()) {
      console_printf("(%zu GPUs; memory in GiB, as datasheets' \"80GB\" means; dense peaks in TFLOP/s; --format csv "
                     "for all fields)\n", rows.size());
    } else {
      if (known(rows[0]->memory_gb))
        console_printf("memory: %s GiB = %.2f GB (synth's and serve's unit)\n", num(rows[0]->memory_gb).c_str(),
                       rows[0]->memory_gb * 1073741824.0 / 1e9);
      console_printf("aliases: %s\nsource: %s\n", join(rows[0]->aliases, "; ").c_str(), rows[0]->source.c_str());
      print_interconnect(*rows[0]);
      print_model_view(view);
    }
  }
  return 0;
}

}  // namespace kcast::cli
