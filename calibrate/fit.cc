#include "calibrate/fit.h"

#include <ceres/ceres.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>

#include "io/console.h"
#include "calibrate/score.h"
#include "model/error.h"
#include "model/transfer.h"

namespace kcast {

namespace {

// A board gets its own SGEMM (or convolution) scale only with enough SIMT GEMM and convolution rows
// to pin it down, and its own rig scale only with enough rows measured in a context.
constexpr size_t kMinBoardRows = 50;

// A per-GPU scale the fit moves as its own parameter block (a board's SGEMM or convolution scale, a
// rig's context scale): which GPUs have one, their values, the bounds, and where it lives in
// GpuMeasured.
struct ScaleBlock {
  const char* name;                // also the --freeze name that turns the block off
  double GpuSpec::*spec_field;     // where the model reads it
  double GpuMeasured::*out_field;  // where the fitted model keeps it
  double lower, upper;
  std::vector<int> of_gpu;         // GPU index -> index in `values`, or -1
  std::vector<double> values;
  int block = -1;                  // its Ceres parameter block; -1 when no GPU has one
};

// Gives every GPU with at least kMinBoardRows rows that `counts` its own value in `b`, started at
// the base model's (within bounds) or at 1; none when `b` is frozen.
template <class Counts>
void select_scales(ScaleBlock& b, const MeasuredSet& data, const LoadedModel& base, const FitOptions& opt,
                   Counts counts) {
  b.of_gpu.assign(data.gpus.size(), -1);
  if (std::find(opt.frozen.begin(), opt.frozen.end(), b.name) != opt.frozen.end()) return;
  std::vector<size_t> rows(data.gpus.size(), 0);
  for (const auto& r : data.rows) rows[r.gpu_index] += counts(r);
  for (size_t g = 0; g < data.gpus.size(); ++g)
    if (rows[g] >= kMinBoardRows) {
      b.of_gpu[g] = int(b.values.size());
      const double start = base.spec_for(*data.gpus[g]).*b.spec_field;
      b.values.push_back(known(start) ? std::clamp(start, b.lower, b.upper) : 1.0);
    }
}

// One cost function for all rows: the model needs each GPU's capabilities derived from the current
// parameters, which is cheap once per evaluation and expensive per row. Ceres differentiates it
// numerically (the tile choice and wave count are piecewise, so there is no useful analytic form).
// Parameter blocks: the free model parameters; the context floors (if any, `ctx_block`); each
// GPU-side scale block (boards' SGEMM and convolution scales) with a GPU; the rigs' scales (if
// any). Each board or rig scale has a prior residual that keeps it near 1.
class BatchResidual {
 public:
  // `free` lists the parameters Ceres moves (its first block, in this order); the others keep their
  // values from `base`, and are not differentiated at all. Each of `boards` acts on GPU capabilities;
  // `rigs` scales the context floors of its GPUs' rows.
  BatchResidual(const MeasuredSet& data, const LoadedModel& base, std::vector<int> ctx_of_row,
                std::vector<double> weight, std::vector<int> free, std::vector<ScaleBlock> boards,
                ScaleBlock rigs, int ctx_block)
      : data_(data), ctx_of_row_(std::move(ctx_of_row)), weight_(std::move(weight)), free_(std::move(free)),
        boards_(std::move(boards)), rigs_(std::move(rigs)), ctx_block_(ctx_block), model_(base.model),
        rows_of_gpu_(data.gpus.size()) {
    for (const GpuSpec* g : data.gpus) specs_.push_back(base.spec_for(*g));
    for (size_t i = 0; i < data.rows.size(); ++i) rows_of_gpu_[data.rows[i].gpu_index].push_back(i);
    // Bytes of the extra kernel each row's context runs per op: data, fixed through the fit.
    for (const auto& r : data.rows) pass_bytes_.push_back(model_.context_pass_bytes(r.kernel));
    for (const ScaleBlock& b : boards_) cached_board_.emplace_back(b.values.size(), 0.0);
  }
  void set_delta(double d) { delta_ = d; }

  bool operator()(double const* const* p, double* residuals) const {
    // Numeric differentiation perturbs one value at a time: when a context floor moved, the
    // GPU-side predictions are reused; when one board's scale moved, only its rows are redone.
    const size_t nf = free_.size();
    const double* rig = rigs_.block >= 0 ? p[rigs_.block] : nullptr;
    if (!cached_valid_ || !std::equal(p[0], p[0] + nf, cached_params_.begin())) {
      cached_valid_ = true;
      ModelParams& mp = model_.mutable_params();
      for (size_t i = 0; i < nf; ++i) mp.p[free_[i]] = p[0][i];
      cached_pred_.resize(data_.rows.size());
      for (size_t g = 0; g < specs_.size(); ++g) predict_gpu(g, p);
      std::copy(p[0], p[0] + nf, cached_params_.begin());
    } else {
      for (size_t g = 0; g < specs_.size(); ++g)
        if (board_moved(g, p)) predict_gpu(g, p);
    }
    for (size_t i = 0; i < data_.rows.size(); ++i) {
      const auto& r = data_.rows[i];
      double pred = cached_pred_[i];
      if (ctx_of_row_[i] >= 0) {
        const int rb = rigs_.of_gpu[r.gpu_index];
        pred += p[ctx_block_][ctx_of_row_[i]] * (rb >= 0 ? rig[rb] : 1.0);
      }
      const double e = std::log(std::max(pred, 1e-3)) - std::log(r.kernel.duration_us);
      residuals[i] = weight_[i] * robust(e);
    }
    // A board's scale is a deviation from the population's eff_simt, not a free per-GPU efficiency:
    // a prior on log(scale), robust (L1-like) so that eff_simt settles near the median board.
    // Likewise a rig's scale is a deviation from the typical rig, whose floors the context block holds.
    size_t at = data_.rows.size();
    auto prior = [&](const ScaleBlock& b) {
      for (size_t j = 0; j < b.values.size(); ++j)
        residuals[at++] = kBoardPriorWeight * robust(std::log(p[b.block][j]));
    };
    for (const ScaleBlock& b : boards_) prior(b);
    prior(rigs_);
    return true;
  }

 private:
  static constexpr double kBoardPriorWeight = 0.2;  // vs ~1 per (GPU, class) group of rows: weak

  // Pseudo-Huber: quadratic near zero, linear in the tails; sign kept for Gauss-Newton.
  double robust(double e) const {
    const double rho = 2 * delta_ * delta_ * (std::sqrt(1 + (e / delta_) * (e / delta_)) - 1);
    return std::copysign(std::sqrt(rho), e);
  }

  bool board_moved(size_t g, double const* const* p) const {
    for (size_t s = 0; s < boards_.size(); ++s) {
      const int j = boards_[s].of_gpu[g];
      if (j >= 0 && p[boards_[s].block][j] != cached_board_[s][size_t(j)]) return true;
    }
    return false;
  }

  void predict_gpu(size_t g, double const* const* p) const {
    GpuSpec spec = specs_[g];
    for (size_t s = 0; s < boards_.size(); ++s) {
      const int j = boards_[s].of_gpu[g];
      if (j < 0) continue;
      spec.*boards_[s].spec_field = cached_board_[s][size_t(j)] = p[boards_[s].block][j];
    }
    const GpuCaps caps = model_.caps(spec);
    // A context's extra kernel per op (CostModel::context_pass_us) is GPU work measured with the row.
    for (size_t i : rows_of_gpu_[g])
      cached_pred_[i] = model_.predict(data_.rows[i].kernel, caps).time_us + model_.operand_pass_us(pass_bytes_[i], caps);
  }

  const MeasuredSet& data_;
  std::vector<int> ctx_of_row_;
  std::vector<double> weight_;
  std::vector<int> free_;
  std::vector<ScaleBlock> boards_;  // those with at least one GPU
  ScaleBlock rigs_;
  int ctx_block_;
  std::vector<GpuSpec> specs_;
  mutable CostModel model_;
  std::vector<std::vector<size_t>> rows_of_gpu_;
  std::vector<double> pass_bytes_;  // per row
  mutable bool cached_valid_ = false;
  mutable std::array<double, kNumParams> cached_params_{};
  mutable std::vector<std::vector<double>> cached_board_;  // per board block, the values predicted with
  mutable std::vector<double> cached_pred_;
  double delta_ = 0.25;
};

// Rows that run as SIMT (CUDA-core) GEMMs or convolutions on their GPU: what a board's SGEMM and
// convolution scales act on.
bool is_simt_gemm(const Kernel& k, const GpuCaps& caps) {
  return (k.cls == KernelClass::gemm || k.cls == KernelClass::conv) && k.has_shape() && caps.simt_gemm[int(k.dtype)];
}

// The median of `v` (which it reorders); `fallback` when it has fewer than kMinBoardRows values.
double median_or(std::vector<double>& v, double fallback) {
  if (v.size() < kMinBoardRows) return fallback;
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// The library-choice ratios, measured rather than fitted, each kept as it was without enough rows:
//  * kSimtChoiceEff: over the SGEMMs whose names record the tile their GPU ran, the median ratio of
//    the model's time with the menu's best tile to its time with the named one (compute-bound rows
//    well above the floor, where the ratio is the tiles' alone);
//  * kConvChoiceGain: over the CUDA-core convolutions whose names say which cuDNN algorithm ran, the
//    median ratio of the model's time for the same shape as implicit GEMM to its time with that
//    algorithm (its family gain, and for Winograd also its grid's tiling; compute-bound rows well
//    above the floor).
void measure_library_choices(LoadedModel& m, const MeasuredSet& data, bool simt_choice, bool conv_choice) {
  ModelParams& mp = m.model.mutable_params();
  const double before = mp[kSimtChoiceEff];
  mp[kSimtChoiceEff] = 1.0;  // the menu's best tile itself, for the comparison
  const std::vector<GpuCaps> caps = measured_caps(data, m);
  std::vector<double> tile_ratios, conv_gains;
  for (const auto& r : data.rows) {
    const GpuCaps& c = caps[r.gpu_index];
    const Kernel& k = r.kernel;
    if (!is_simt_gemm(k, c)) continue;
    const bool conv = k.cls == KernelClass::conv;
    if (conv ? !conv_choice || k.conv_algo == ConvAlgo::unknown
             : !simt_choice || !k.tile.known() || !c.arch.runs(k.tile.family))
      continue;
    const KernelPrediction named = m.model.predict(k, c);
    if (named.bound != Bound::compute || named.time_us < 4 * c.launch_floor_us) continue;
    // The same kernel as a trace without names records it: no tile (Winograd-nonfused convolutions
    // carry their SGEMM's) and, for a convolution, no algorithm: implicit GEMM.
    Kernel unnamed = k;
    unnamed.tile = {};
    if (conv) unnamed.conv_algo = ConvAlgo::implicit;
    (conv ? conv_gains : tile_ratios).push_back(m.model.predict(unnamed, c).time_us / named.time_us);
  }
  mp[kSimtChoiceEff] = simt_choice ? std::clamp(median_or(tile_ratios, before), kParamInfo[kSimtChoiceEff].lower, 1.0)
                                   : before;
  if (conv_choice)
    mp[kConvChoiceGain] = std::clamp(median_or(conv_gains, mp[kConvChoiceGain]), kParamInfo[kConvChoiceGain].lower,
                                     kParamInfo[kConvChoiceGain].upper);
}

// A class's bias persistence (kGemmBiasPersistence, kConvBiasPersistence), measured rather than
// fitted (transfer does not enter the fit): over the kernels of class `cls` measured on GPUs of
// different compute capabilities, the regression slope of one GPU's log residual (log predicted /
// measured) on the other's, each ordered pair of GPUs centred on its own means so that a board's
// overall offset (its SGEMM scale's business) does not count as persistence. Clamped to [0, 1]; kept
// as it was with fewer than kMinBoardRows such pairs.
void measure_bias_persistence(LoadedModel& m, const MeasuredSet& data, KernelClass cls, Param param) {
  const std::vector<GpuCaps> caps = measured_caps(data, m);
  std::map<KernelKey, std::vector<std::pair<size_t, double>>> by_key;  // GPU index, log residual
  for (const auto& r : data.rows) {
    if (r.kernel.cls != cls) continue;
    const double pred = predicted_as_measured(m, r.kernel, caps[r.gpu_index]);
    if (pred > 0) by_key[key_of(r.kernel)].emplace_back(r.gpu_index, std::log(pred / r.kernel.duration_us));
  }
  std::map<std::pair<size_t, size_t>, std::vector<std::pair<double, double>>> pairs;
  for (const auto& [key, v] : by_key)
    for (const auto& [gs, es] : v)
      for (const auto& [gt, et] : v)
        if (caps[gs].compute_capability != caps[gt].compute_capability) pairs[{gs, gt}].emplace_back(es, et);
  double sxy = 0, sxx = 0;
  size_t n = 0;
  for (const auto& [gpus, v] : pairs) {
    double mx = 0, my = 0;
    for (const auto& [x, y] : v) mx += x, my += y;
    mx /= double(v.size()), my /= double(v.size());
    for (const auto& [x, y] : v) sxy += (x - mx) * (y - my), sxx += (x - mx) * (x - mx);
    n += v.size();
  }
  if (n < kMinBoardRows || !(sxx > 0)) return;
  m.model.mutable_params()[param] = std::clamp(sxy / sxx, 0.0, 1.0);
}

// The measurement contexts of the data, each with its own floor parameter, started below the
// smallest measurement of that context (the floor cannot exceed the fastest kernel measured in it).
struct ContextFloors {
  std::map<std::string, double> ctx_min;
  std::vector<std::string> contexts;
  std::vector<double> ctx_values;
  std::vector<int> ctx_of_row;  // index into contexts, or -1
};

ContextFloors context_floors(const MeasuredSet& data, const LoadedModel& base) {
  ContextFloors f;
  auto& [ctx_min, contexts, ctx_values, ctx_of_row] = f;
  for (const auto& r : data.rows)
    if (!r.kernel.context.empty()) {
      auto [it, fresh] = ctx_min.emplace(r.kernel.context, r.kernel.duration_us);
      if (!fresh) it->second = std::min(it->second, r.kernel.duration_us);
    }
  for (const auto& [c, mn] : ctx_min) {
    contexts.push_back(c);
    const double start = base.model.params().context_overhead_us.count(c)
                             ? base.model.params().context_overhead(c)
                             : 0.5 * mn;
    ctx_values.push_back(std::min(start, 0.95 * mn));
  }
  for (const auto& r : data.rows) {
    int ci = -1;
    if (!r.kernel.context.empty())
      ci = int(std::lower_bound(contexts.begin(), contexts.end(), r.kernel.context) - contexts.begin());
    ctx_of_row.push_back(ci);
  }
  return f;
}

// Each row weighs 1 / sqrt(rows of its GPU and class), so that no large group drowns the others.
std::vector<double> row_weights(const MeasuredSet& data) {
  std::map<std::pair<size_t, int>, double> group_n;
  for (const auto& r : data.rows) group_n[{r.gpu_index, int(r.kernel.cls)}] += 1;
  std::vector<double> weight;
  for (const auto& r : data.rows) weight.push_back(1.0 / std::sqrt(group_n[{r.gpu_index, int(r.kernel.cls)}]));

  return weight;
}

// The per-board scale blocks.
struct BoardScales {
  ScaleBlock sgemms, convs, rigs;
};

BoardScales board_scales(const MeasuredSet& data, const LoadedModel& base, const FitOptions& opt) {
  // Boards with enough SIMT GEMM and convolution rows get their own SGEMM scale, which acts on
  // both; a board measured on convolutions alone gets a convolution scale instead: cuDNN's kernels
  // say little of its cuBLAS GEMMs (the A100 80GB PCIe's convolutions run at 0.87 of eff_simt, the
  // GEMMs of its 40GB sibling at 1.2 and its own linear layers, NeuSight's test set, at 1.2 too).
  // Boards with enough rows measured in a context get their own rig scale (the framework floors of
  // each measurement machine differ: host CPU, driver, framework).
  BoardScales b{{"sgemm_scale", &GpuSpec::measured_sgemm_scale, &GpuMeasured::sgemm_scale, 0.3, 3.0, {}, {}},
                {"conv_scale", &GpuSpec::measured_conv_scale, &GpuMeasured::conv_scale, 0.3, 3.0, {}, {}},
                {"context_scale", &GpuSpec::measured_context_scale, &GpuMeasured::context_scale, 0.2, 5.0, {}, {}}};
  auto& [sgemms, convs, rigs] = b;
  std::vector<GpuCaps> base_caps;
  for (const GpuSpec* g : data.gpus) base_caps.push_back(base.caps_for(*g));
  std::vector<size_t> gemm_rows(data.gpus.size(), 0), conv_rows(data.gpus.size(), 0);
  for (const auto& r : data.rows)
    if (is_simt_gemm(r.kernel, base_caps[r.gpu_index]))
      ++(r.kernel.cls == KernelClass::conv ? conv_rows : gemm_rows)[r.gpu_index];
  auto convs_only = [&](size_t g) { return gemm_rows[g] < kMinBoardRows && conv_rows[g] >= kMinBoardRows; };
  select_scales(sgemms, data, base, opt, [&](const MeasuredRow& r) {
    return !convs_only(r.gpu_index) && is_simt_gemm(r.kernel, base_caps[r.gpu_index]);
  });
  select_scales(convs, data, base, opt, [&](const MeasuredRow& r) {
    return convs_only(r.gpu_index) && r.kernel.cls == KernelClass::conv &&
           is_simt_gemm(r.kernel, base_caps[r.gpu_index]);
  });
  select_scales(rigs, data, base, opt, [](const MeasuredRow& r) { return !r.kernel.context.empty(); });

  return b;
}

// Which model parameters the fit may move: --freeze, and those measured rather than fitted.
struct FreeParams {
  std::vector<bool> is_frozen;
  bool measure_tiles = false, measure_convs = false;
  std::vector<std::pair<KernelClass, Param>> persistences;  // those to measure
};

FreeParams free_params(const FitOptions& opt, const BoardScales& scales) {
  FreeParams fp;
  std::vector<bool>& is_frozen = fp.is_frozen;
  is_frozen.assign(kNumParams, false);
  const ScaleBlock &sgemms = scales.sgemms, &convs = scales.convs, &rigs = scales.rigs;
  for (const auto& name : opt.frozen) {
    if (name == sgemms.name || name == convs.name || name == rigs.name) continue;
    int idx = -1;
    for (int i = 0; i < kNumParams; ++i)
      if (name == kParamInfo[i].name) idx = i;
    if (idx < 0) throw InputError("calibrate: unknown parameter '" + name + "' to freeze");
    is_frozen[idx] = true;
  }
  // The library-choice ratios are measured after the fit, never fitted (the rows they are measured
  // on do not depend on them); measured before it too, so that rows without a named tile or cuDNN
  // algorithm are fitted with them.
  fp.measure_tiles = !is_frozen[kSimtChoiceEff], fp.measure_convs = !is_frozen[kConvChoiceGain];
  for (KernelClass c : kAllClasses)
    if (const std::optional<Param> q = persistence_param(c)) {
      if (!is_frozen[*q]) fp.persistences.emplace_back(c, *q);
      is_frozen[*q] = true;
    }
  is_frozen[kSimtChoiceEff] = is_frozen[kConvChoiceGain] = true;
  return fp;
}

// What the fit solves for: the free model parameters, and the scale blocks with at least one GPU
// (in parameter-block order).
struct Unknowns {
  std::vector<int> free;
  std::vector<double> params;
  std::vector<ScaleBlock*> scales;
};

// The Ceres problem over the free parameters, the context floors and the board scales, solved in
// place (their values in `u`, `cf` and `bs` are the solution afterwards).
ceres::Solver::Summary solve(const MeasuredSet& data, const LoadedModel& base, const LoadedModel& start,
                             const FitOptions& opt, const std::vector<bool>& is_frozen, ContextFloors& cf,
                             const std::vector<double>& weight, BoardScales& bs, Unknowns& u) {
  auto& [ctx_min, contexts, ctx_values, ctx_of_row] = cf;
  auto& [sgemms, convs, rigs] = bs;
  std::vector<int>& free = u.free;
  std::vector<double>& params = u.params;
  std::vector<ScaleBlock*>& scales = u.scales;
  for (int i = 0; i < kNumParams; ++i)
    if (!is_frozen[i]) {
      free.push_back(i);
      params.push_back(std::clamp(base.model.params().p[i], kParamInfo[i].lower, kParamInfo[i].upper));
    }
  const bool has_ctx = !contexts.empty();
  for (ScaleBlock* b : {&sgemms, &convs, &rigs})
    if (!b->values.empty()) scales.push_back(b);
  if (free.empty() && !has_ctx && scales.empty())
    throw InputError("calibrate: every parameter is frozen; nothing to fit");
  int next_block = 1;
  const int ctx_block = has_ctx ? next_block++ : -1;
  for (ScaleBlock* b : scales) b->block = next_block++;
  std::vector<ScaleBlock> boards;
  for (const ScaleBlock* b : {&sgemms, &convs})
    if (b->block >= 0) boards.push_back(*b);
  auto* functor = new BatchResidual(data, start, ctx_of_row, weight, free, boards, rigs, ctx_block);
  functor->set_delta(opt.huber_delta);
  auto* cost = new ceres::DynamicNumericDiffCostFunction<BatchResidual, ceres::FORWARD>(functor);
  // Ceres needs a non-empty first block; with everything frozen it carries one inert value.
  if (params.empty()) params.push_back(0.0);
  cost->AddParameterBlock(int(params.size()));
  if (has_ctx) cost->AddParameterBlock(int(contexts.size()));
  size_t prior_residuals = 0;
  for (const ScaleBlock* b : scales) {
    cost->AddParameterBlock(int(b->values.size()));
    prior_residuals += b->values.size();
  }
  cost->SetNumResiduals(int(data.rows.size() + prior_residuals));

  ceres::Problem problem;
  std::vector<double*> blocks{params.data()};
  if (has_ctx) blocks.push_back(ctx_values.data());
  for (ScaleBlock* b : scales) blocks.push_back(b->values.data());
  problem.AddResidualBlock(cost, nullptr, blocks);
  for (ScaleBlock* b : scales)
    for (size_t i = 0; i < b->values.size(); ++i) {
      problem.SetParameterLowerBound(b->values.data(), int(i), b->lower);
      problem.SetParameterUpperBound(b->values.data(), int(i), b->upper);
    }
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
  return summary;
}

}  // namespace

LoadedModel fit_model(const MeasuredSet& data, const LoadedModel& base, const FitOptions& opt,
                      FitReport* report) {
  if (data.rows.empty()) throw InputError("calibrate: no measured rows (need 'gpu' and 'duration_us')");
  const auto t0 = std::chrono::steady_clock::now();
  ContextFloors cf = context_floors(data, base);
  const std::vector<double> weight = row_weights(data);
  BoardScales bs = board_scales(data, base, opt);
  const FreeParams fp = free_params(opt, bs);
  LoadedModel start = base;
  measure_library_choices(start, data, fp.measure_tiles, fp.measure_convs);
  Unknowns u;
  const ceres::Solver::Summary summary = solve(data, base, start, opt, fp.is_frozen, cf, weight, bs, u);

  const std::vector<int>& free = u.free;
  const std::vector<double>& params = u.params;
  const std::vector<std::string>& contexts = cf.contexts;
  const std::vector<double>& ctx_values = cf.ctx_values;
  const std::vector<ScaleBlock*>& scales = u.scales;
  LoadedModel out = start;
  ModelParams& mp = out.model.mutable_params();
  for (size_t j = 0; j < free.size(); ++j) mp.p[free[j]] = params[j];
  for (size_t i = 0; i < contexts.size(); ++i) mp.context_overhead_us[contexts[i]] = ctx_values[i];
  for (const ScaleBlock* b : scales)
    for (size_t g = 0; g < data.gpus.size(); ++g) {
      if (b->of_gpu[g] < 0) continue;
      GpuMeasured& gm = out.gpus[data.gpus[g]->name];
      gm.*b->out_field = b->values[b->of_gpu[g]];
      const std::string note = std::string(b->name) + " fitted from measured kernels";
      if (gm.source.find(note) == std::string::npos) gm.source += (gm.source.empty() ? "" : "; ") + note;
    }
  measure_library_choices(out, data, fp.measure_tiles, fp.measure_convs);
  for (const auto& [cls, param] : fp.persistences) measure_bias_persistence(out, data, cls, param);
  if (report) {
    report->brief = summary.BriefReport();
    if (opt.verbose) console_err() << summary.FullReport() << "\n";
    report->initial_cost = summary.initial_cost;
    report->final_cost = summary.final_cost;
    report->iterations = int(summary.iterations.size());
    report->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  return out;
}

}  // namespace kcast
