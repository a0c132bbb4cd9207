#include "predict/report/predict_values.h"

#include <stdexcept>
#include <unordered_map>

namespace kcast {

namespace {

// The dtype carrying the most FLOPs as the model sees each row (inferred work included); rows without
// flops count as one FLOP so a list without any still has an answer (its most common dtype).
DType dominant_dtype(const PreparedWorkload& w) {
  PerDType<double> flops{};
  for (size_t r = 0; r < w.rows.size(); ++r) {
    const Kernel& k = w.kernels[w.uniq.of_row[r]];
    flops[int(k.dtype)] += w.rows.count(r) * (known(k.flops) ? k.flops : 1.0);
  }
  int best = int(DType::fp32);
  for (int i = 0; i < kNumDTypes; ++i)
    if (flops[i] > flops[best]) best = i;
  return DType(best);
}

}  // namespace

PredictValues make_predict_values(const PreparedWorkload& w, const std::vector<GpuPrediction>& preds,
                                  const std::vector<const GpuSpec*>& specs, const std::string& kernels_file,
                                  const std::string& model) {
  PredictValues v;
  v.kernels_file = kernels_file;
  v.model = model;
  v.cuda_graph = w.opt.cuda_graph;
  v.with_context = w.opt.with_context;
  v.timeline = w.has_timeline();
  const DType dt = dominant_dtype(w);
  v.dominant_dtype = std::string(to_string(dt));
  v.measured_kernel_us = w.measured_kernel_us;
  v.measured_step_us = w.measured_step_us;
  v.inferred_work_rows = w.inferred_work_rows;
  for (size_t i = 0; i < preds.size(); ++i) {
    const GpuPrediction& p = preds[i];
    PredictGpuValues g;
    g.gpu = p.gpu;
    g.announced = i < specs.size() && specs[i] && specs[i]->announced;
    g.mode = std::string(to_string(p.mode));
    g.kernels = p.rows;
    g.transferred_rows = p.transferred_rows;
    g.invocations = p.invocations;
    g.kernel_us = p.kernel_us;
    g.step_us = p.step_us;
    g.class_rows = p.class_rows;
    for (KernelClass c : kAllClasses) {
      const auto& cb = p.by_class_bound[int(c)];
      g.class_us[int(c)] = p.by_class(c);
      // Every bound but the launch floor counts as the class's work: a latency-bound kernel is small,
      // but its time is its memory's, not the floor's.
      for (Bound b : kAllBounds) {
        g.bound_us[int(b)] += cb[int(b)];
        (b == Bound::launch ? g.launch_bound_us : is_matrix_class(c) ? g.gemm_us : g.non_gemm_us) += cb[int(b)];
      }
    }
    g.source_gpus = p.source_gpus;
    if (i < specs.size() && specs[i]) {
      g.peak_tflops = specs[i]->gemm_peak_tflops(dt);
    }
    v.gpus.push_back(std::move(g));
  }
  if (!v.gpus.empty()) {
    const PredictGpuValues& first = v.gpus[0];
    for (auto& g : v.gpus) {
      g.speedup_vs_first = g.step_us > 0 ? first.step_us / g.step_us : kUnknown;
      g.peak_ratio_vs_first = first.peak_tflops > 0 ? g.peak_tflops / first.peak_tflops : kUnknown;
    }
  }
  return v;
}

void add_prefix_breakdown(PredictValues& v, const PreparedWorkload& w, const std::vector<GpuPrediction>& preds) {
  const KernelRows& rows = w.rows;
  // The prefix of each kind's name, then of each row.
  std::vector<size_t> of_kind(rows.kind_count());
  std::unordered_map<std::string, size_t> index;
  for (size_t i = 0; i < rows.kind_count(); ++i) {
    const std::string& name = rows.kind_at(i).name;
    const size_t dot = name.find('.');
    const std::string p = dot == std::string::npos || dot == 0 ? "-" : name.substr(0, dot);
    auto [it, added] = index.emplace(p, v.prefixes.size());
    if (added) v.prefixes.push_back(p);
    of_kind[i] = it->second;
  }
  for (size_t i = 0; i < preds.size() && i < v.gpus.size(); ++i) {
    if (preds[i].row_us.size() != rows.size()) throw std::logic_error("prefix breakdown needs keep_rows predictions");
    std::vector<double>& us = v.gpus[i].prefix_us;
    us.assign(v.prefixes.size(), 0.0);
    for (size_t r = 0; r < rows.size(); ++r) us[of_kind[rows.kind_of(r)]] += rows.count(r) * preds[i].row_us[r];
  }
}

}  // namespace kcast
