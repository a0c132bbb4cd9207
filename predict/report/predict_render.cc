// Table, CSV and JSON renderers of PredictValues (predict_values.h).
#include <cstdio>

#include "predict/report/predict_values.h"
#include "predict/report/text_util.h"

namespace kcast {

using report::csv_cell;
using report::fixed;
using report::fmt;
using report::human_time;

namespace {

std::string pct(double part, double whole) { return whole > 0 ? fixed(100.0 * part / whole, 1) : "-"; }

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

bool class_present(const PredictValues& v, KernelClass c) {
  for (const auto& g : v.gpus)
    if (g.class_rows[int(c)] > 0) return true;
  return false;
}

}  // namespace

void render_predict_table(const PredictValues& v, std::ostream& o) {
  char line[512];
  o << "kcast predict: " << v.kernels_file << " (" << (v.gpus.empty() ? 0 : v.gpus[0].kernels)
    << " rows), model " << v.model << (v.cuda_graph ? ", CUDA graphs" : "")
    << (v.with_context ? ", with measurement context" : "") << "\n";
  if (known(v.measured_kernel_us))
    o << "measured: kernels " << human_time(v.measured_kernel_us) << ", step " << human_time(v.measured_step_us)
      << "\n";
  if (v.inferred_work_rows > 0)
    o << "work inferred: " << v.inferred_work_rows
      << " measured rows without shape, flops or bytes get what their measured time implies on their GPU\n";
  o << "\n";
  std::snprintf(line, sizeof line, "%-16s %-8s %8s %11s %11s %8s %6s %6s %6s %6s %6s %6s %6s\n", "gpu", "mode",
                "transfer", "kernel time", "step time", "vs 1st", "gemm%", "other%", "launch%", "comp%",
                "mem%", "lat%", "link%");
  o << line;
  for (const auto& g : v.gpus) {
    std::snprintf(line, sizeof line, "%-16s %-8s %8zu %11s %11s %8s %6s %6s %6s %6s %6s %6s %6s\n", g.gpu.c_str(),
                  g.mode.c_str(), g.transferred_rows, human_time(g.kernel_us).c_str(),
                  human_time(g.step_us).c_str(), (fixed(g.speedup_vs_first, 2) + "x").c_str(),
                  pct(g.gemm_us, g.kernel_us).c_str(), pct(g.non_gemm_us, g.kernel_us).c_str(),
                  pct(g.launch_bound_us, g.kernel_us).c_str(),
                  pct(g.bound_us[int(Bound::compute)], g.kernel_us).c_str(),
                  pct(g.bound_us[int(Bound::memory)], g.kernel_us).c_str(),
                  pct(g.bound_us[int(Bound::latency)], g.kernel_us).c_str(),
                  pct(g.bound_us[int(Bound::link)], g.kernel_us).c_str());
    o << line;
  }
  // The breakdown tables' GPU columns, after each row's label: the GPU names or each GPU's cell.
  auto gpu_columns = [&](auto&& cell) {
    for (const auto& g : v.gpus) {
      std::snprintf(line, sizeof line, " %14s", cell(g).c_str());
      o << line;
    }
    o << "\n";
  };
  auto gpu_name = [](const PredictGpuValues& g) { return g.gpu; };
  o << "\nper class (us, count x time):\n";
  std::snprintf(line, sizeof line, "%-14s %7s", "class", "rows");
  o << line;
  gpu_columns(gpu_name);
  for (KernelClass c : kAllClasses) {
    if (!class_present(v, c)) continue;
    std::snprintf(line, sizeof line, "%-14s %7zu", std::string(to_string(c)).c_str(),
                  v.gpus.empty() ? size_t(0) : v.gpus[0].class_rows[int(c)]);
    o << line;
    gpu_columns([&](const PredictGpuValues& g) { return fmt(g.class_us[int(c)], 6); });
  }
  if (!v.prefixes.empty()) {
    o << "\nper name prefix (us, count x time):\n";
    std::snprintf(line, sizeof line, "%-22s", "prefix");
    o << line;
    gpu_columns(gpu_name);
    for (size_t p = 0; p < v.prefixes.size(); ++p) {
      std::snprintf(line, sizeof line, "%-22s", v.prefixes[p].c_str());
      o << line;
      gpu_columns([&](const PredictGpuValues& g) { return fmt(g.prefix_us[p], 6); });
    }
  }
  if (!v.gpus.empty() && v.gpus.size() > 1) {
    o << "\nvs " << v.gpus[0].gpu << " (" << v.dominant_dtype << " peak):";
    for (const auto& g : v.gpus)
      o << "  " << g.gpu << " " << fixed(g.speedup_vs_first, 2) << "x (peak " << fixed(g.peak_ratio_vs_first, 2)
        << "x)";
    o << "\n";
  }
}

void render_predict_csv(const PredictValues& v, std::ostream& o) {
  o << "gpu,mode,kernels,transferred_rows,invocations,kernel_us,step_us,gemm_us,non_gemm_us,launch_bound_us,"
       "compute_us,memory_us,launch_us,peak_dtype,peak_tflops,speedup_vs_first,peak_ratio_vs_first,source_gpus";
  for (KernelClass c : kAllClasses) o << ",class_" << to_string(c) << "_us";
  o << ",link_us,latency_us";  // appended: the columns before keep their positions
  for (const std::string& p : v.prefixes) o << ',' << csv_cell("prefix_" + p + "_us");  // --by-prefix, last
  o << "\n";
  for (const auto& g : v.gpus) {
    o << csv_cell(g.gpu) << ',' << g.mode << ',' << g.kernels << ',' << g.transferred_rows << ','
      << fmt(g.invocations, 12) << ',' << fmt(g.kernel_us, 10) << ',' << fmt(g.step_us, 10) << ','
      << fmt(g.gemm_us, 10) << ',' << fmt(g.non_gemm_us, 10) << ',' << fmt(g.launch_bound_us, 10);
    for (Bound b : {Bound::compute, Bound::memory, Bound::launch}) o << ',' << fmt(g.bound_us[int(b)], 10);
    o << ',' << v.dominant_dtype << ',' << fmt(g.peak_tflops) << ',' << fmt(g.speedup_vs_first) << ','
      << fmt(g.peak_ratio_vs_first) << ',' << csv_cell(join(g.source_gpus, ";"));
    for (KernelClass c : kAllClasses) o << ',' << fmt(g.class_us[int(c)], 10);
    o << ',' << fmt(g.bound_us[int(Bound::link)], 10) << ',' << fmt(g.bound_us[int(Bound::latency)], 10);
    for (double us : g.prefix_us) o << ',' << fmt(us, 10);
    o << "\n";
  }
}

nlohmann::json predict_json(const PredictValues& v) {
  using nlohmann::json;
  auto num = [](double x) { return known(x) ? json(x) : json(); };
  json arr = json::array();
  for (const auto& g : v.gpus) {
    json by_class = json::object(), by_bound = json::object();
    for (KernelClass c : kAllClasses)
      if (g.class_rows[int(c)] > 0) by_class[std::string(to_string(c))] = g.class_us[int(c)];
    for (Bound b : kAllBounds)
      by_bound[std::string(to_string(b))] = g.bound_us[int(b)];
    json e = {{"gpu", g.gpu},
              {"mode", g.mode},
              {"kernels", g.kernels},
              {"total_us", g.step_us},
              {"by_class", by_class},
              {"kernel_us", g.kernel_us},
              {"step_us", g.step_us},
              {"by_bound", by_bound},
              {"split", {{"gemm_us", g.gemm_us}, {"non_gemm_us", g.non_gemm_us},
                         {"launch_bound_us", g.launch_bound_us}}},
              {"invocations", g.invocations},
              {"transferred_rows", g.transferred_rows},
              {"inferred_work_rows", v.inferred_work_rows},
              {"source_gpus", g.source_gpus},
              {"cuda_graph", v.cuda_graph},
              {"with_context", v.with_context},
              {"peak_dtype", v.dominant_dtype},
              {"peak_tflops", num(g.peak_tflops)},
              {"speedup_vs_first", num(g.speedup_vs_first)},
              {"peak_ratio_vs_first", num(g.peak_ratio_vs_first)}};
    if (g.announced) e["announced"] = true;  // only where true: other GPUs' JSON is unchanged
    if (!v.prefixes.empty()) {
      json by_prefix = json::object();
      for (size_t p = 0; p < v.prefixes.size(); ++p) by_prefix[v.prefixes[p]] = g.prefix_us[p];
      e["by_prefix"] = by_prefix;
    }
    if (known(v.measured_kernel_us)) {
      e["measured_kernel_us"] = v.measured_kernel_us;
      e["measured_step_us"] = num(v.measured_step_us);
    }
    arr.push_back(std::move(e));
  }
  return json{{"predictions", arr}};
}

}  // namespace kcast
