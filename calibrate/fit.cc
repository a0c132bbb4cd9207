#include "calibrate/fit.h"

#include <ceres/ceres.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <map>

#include "calibrate/score.h"
#include "model/error.h"

namespace kcast {

namespace {

// One cost function for all rows: the model needs each GPU's capabilities derived from the current
// parameters, which is cheap once per evaluation and expensive per row. Ceres differentiates it
// numerically (the tile choice and wave count are piecewise, so there is no useful analytic form).
class BatchResidual {
 public:
  // `free` lists the parameters Ceres moves (its first block, in this order); the others keep their
  // values from `base`, and are not differentiated at all.
  BatchResidual(const MeasuredSet& data, const LoadedModel& base, std::vector<int> ctx_of_row,
                std::vector<double> weight, std::vector<int> free)
      : data_(data), ctx_of_row_(std::move(ctx_of_row)), weight_(std::move(weight)),
        free_(std::move(free)), model_(base.model) {
    for (const GpuSpec* g : data.gpus) specs_.push_back(base.spec_for(*g));
  }
  void set_delta(double d) { delta_ = d; }

  bool operator()(double const* const* p, double* residuals) const {
    // Numeric differentiation perturbs one parameter at a time; when only a context floor moved,
    // the GPU-side predictions are unchanged and are reused.
    const size_t nf = free_.size();
    if (!cached_valid_ || !std::equal(p[0], p[0] + nf, cached_params_.begin())) {
      cached_valid_ = true;
      ModelParams& mp = model_.mutable_params();
      for (size_t i = 0; i < nf; ++i) mp.p[free_[i]] = p[0][i];
      std::vector<GpuCaps> caps;
      caps.reserve(specs_.size());
      for (const auto& s : specs_) caps.push_back(model_.caps(s));
      cached_pred_.resize(data_.rows.size());
      for (size_t i = 0; i < data_.rows.size(); ++i)
        cached_pred_[i] = model_.predict(data_.rows[i].kernel, caps[data_.rows[i].gpu_index]).time_us;
      std::copy(p[0], p[0] + nf, cached_params_.begin());
    }
    for (size_t i = 0; i < data_.rows.size(); ++i) {
      const auto& r = data_.rows[i];
      double pred = cached_pred_[i];
      if (ctx_of_row_[i] >= 0) pred += p[1][ctx_of_row_[i]];
      const double e = std::log(std::max(pred, 1e-3)) - std::log(r.kernel.duration_us);
      // Pseudo-Huber: quadratic near zero, linear in the tails; sign kept for Gauss-Newton.
      const double rho = 2 * delta_ * delta_ * (std::sqrt(1 + (e / delta_) * (e / delta_)) - 1);
      residuals[i] = weight_[i] * std::copysign(std::sqrt(rho), e);
    }
    return true;
  }

 private:
  const MeasuredSet& data_;
  std::vector<int> ctx_of_row_;
  std::vector<double> weight_;
  std::vector<int> free_;
  std::vector<GpuSpec> specs_;
  mutable CostModel model_;
  mutable bool cached_valid_ = false;
  mutable std::array<double, kNumParams> cached_params_{};
  mutable std::vector<double> cached_pred_;
  double delta_ = 0.25;
};

}  // namespace

LoadedModel fit_model(const MeasuredSet& data, const LoadedModel& base, const FitOptions& opt,
                      FitReport* report) {
  if (data.rows.empty()) throw InputError("calibrate: no measured rows (need 'gpu' and 'duration_us')");
  const auto t0 = std::chrono::steady_clock::now();

  // Contexts present in the data, each with its own floor parameter, started below the smallest
  // measurement of that context (the floor cannot exceed the fastest kernel measured in it).
  std::map<std::string, double> ctx_min;
  for (const auto& r : data.rows)
    if (!r.kernel.context.empty()) {
      auto [it, fresh] = ctx_min.emplace(r.kernel.context, r.kernel.duration_us);
      if (!fresh) it->second = std::min(it->second, r.kernel.duration_us);
    }
  std::vector<std::string> contexts;
  std::vector<double> ctx_values;
  for (const auto& [c, mn] : ctx_min) {
    contexts.push_back(c);
    const double start = base.model.params().context_overhead_us.count(c)
                             ? base.model.params().context_overhead(c)
                             : 0.5 * mn;
    ctx_values.push_back(std::min(start, 0.95 * mn));
  }
  std::vector<int> ctx_of_row;
  std::map<std::pair<size_t, int>, double> group_n;
  for (const auto& r : data.rows) {
    int ci = -1;
    if (!r.kernel.context.empty())
      ci = int(std::lower_bound(contexts.begin(), contexts.end(), r.kernel.context) - contexts.begin());
    ctx_of_row.push_back(ci);
    group_n[{r.gpu_index, int(r.kernel.cls)}] += 1;
  }
  std::vector<double> weight;
  for (const auto& r : data.rows) weight.push_back(1.0 / std::sqrt(group_n[{r.gpu_index, int(r.kernel.cls)}]));

  std::vector<bool> is_frozen(kNumParams, false);
  for (const auto& name : opt.frozen) {
    int idx = -1;
    for (int i = 0; i < kNumParams; ++i)
      if (name == kParamInfo[i].name) idx = i;
    if (idx < 0) throw InputError("calibrate: unknown parameter '" + name + "' to freeze");
    is_frozen[idx] = true;
  }
  std::vector<int> free;
  std::vector<double> params;
  for (int i = 0; i < kNumParams; ++i)
    if (!is_frozen[i]) {
      free.push_back(i);
      params.push_back(std::clamp(base.model.params().p[i], kParamInfo[i].lower, kParamInfo[i].upper));
    }
  const bool has_ctx = !contexts.empty();
  if (free.empty() && !has_ctx) throw InputError("calibrate: every parameter is frozen; nothing to fit");
  auto* functor = new BatchResidual(data, base, ctx_of_row, weight, free);
  functor->set_delta(opt.huber_delta);
  auto* cost = new ceres::DynamicNumericDiffCostFunction<BatchResidual, ceres::FORWARD>(functor);
  // Ceres needs a non-empty first block; with everything frozen it carries one inert value.
  if (params.empty()) params.push_back(0.0);
  cost->AddParameterBlock(int(params.size()));
  if (has_ctx) cost->AddParameterBlock(int(contexts.size()));
  cost->SetNumResiduals(int(data.rows.size()));

  ceres::Problem problem;
  std::vector<double*> blocks{params.data()};
  if (has_ctx) blocks.push_back(ctx_values.data());
  problem.AddResidualBlock(cost, nullptr, blocks);
  if (free.empty()) problem.SetParameterBlockConstant(params.data());
  for (size_t j = 0; j < free.size(); ++j) {
    problem.SetParameterLowerBound(params.data(), int(j), kParamInfo[free[j]].lower);
    problem.SetParameterUpperBound(params.data(), int(j), kParamInfo[free[j]].upper);
  }
  if (has_ctx) {
    for (size_t i = 0; i < contexts.size(); ++i) {
      problem.SetParameterLowerBound(ctx_values.data(), int(i), 0.0);
      problem.SetParameterUpperBound(ctx_values.data(), int(i), ctx_min[contexts[i]]);
    }
  }

  ceres::Solver::Options so;
  so.linear_solver_type = ceres::DENSE_QR;
  so.max_num_iterations = opt.max_iterations;
  so.num_threads = 1;
  so.minimizer_progress_to_stdout = opt.verbose;
  so.function_tolerance = 1e-7;
  std::string why;
  if (!so.IsValid(&why)) throw std::runtime_error("ceres options: " + why);
  ceres::Solver::Summary summary;
  ceres::Solve(so, &problem, &summary);

  LoadedModel out = base;
  ModelParams& mp = out.model.mutable_params();
  for (size_t j = 0; j < free.size(); ++j) mp.p[free[j]] = params[j];
  for (size_t i = 0; i < contexts.size(); ++i) mp.context_overhead_us[contexts[i]] = ctx_values[i];
  if (report) {
    report->brief = summary.BriefReport();
    report->initial_cost = summary.initial_cost;
    report->final_cost = summary.final_cost;
    report->iterations = int(summary.iterations.size());
    report->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return out;
}

}  // namespace kcast
