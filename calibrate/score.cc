#include "calibrate/score.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "model/transfer.h"

namespace kcast {

ErrorStats summarize(std::vector<double> e) {
  ErrorStats s;
  s.rows = e.size();
  if (e.empty()) return s;
  std::sort(e.begin(), e.end());
  auto q = [&](double f) {
    double pos = f * double(e.size() - 1);
    size_t lo = size_t(pos);
    size_t hi = std::min(lo + 1, e.size() - 1);
    return e[lo] + (pos - double(lo)) * (e[hi] - e[lo]);
  };
  s.median = q(0.5);
  s.p90 = q(0.9);
  double sum = 0;
  for (double v : e) sum += v;
  s.mean = sum / double(e.size());
  return s;
}

std::vector<GpuCaps> measured_caps(const MeasuredSet& s, const LoadedModel& m) {
  std::vector<GpuCaps> caps;
  for (const GpuSpec* g : s.gpus) caps.push_back(m.caps_for(*g));
  return caps;
}

double context_floor_us(const LoadedModel& m, const Kernel& k, const GpuCaps& caps) {
  return m.model.params().context_overhead(k.context) * caps.context_scale + m.model.context_pass_us(k, caps);
}

double predicted_as_measured(const LoadedModel& m, const Kernel& k, const GpuCaps& caps) {
  return m.model.predict(k, caps).time_us + context_floor_us(m, k, caps);
}

namespace {

using Groups = std::map<std::pair<std::string, std::string>, std::vector<double>>;

void emit(const Groups& g, const std::string& mode, std::vector<ScoreLine>& out) {
  std::map<std::string, std::vector<double>> all;
  for (const auto& [key, errs] : g) {
    const auto& [gpu, cls] = key;
    out.push_back({mode, "", gpu, cls, summarize(errs)});
    auto& a = all[gpu];
    a.insert(a.end(), errs.begin(), errs.end());
  }
  for (const auto& [gpu, errs] : all) out.push_back({mode, "", gpu, "all", summarize(errs)});
}

}  // namespace

KernelKey key_of(const Kernel& k) {
  return {int(k.cls), int(k.dtype), k.batch, k.m, k.n, k.k, known(k.flops) ? k.flops : -1.0,
          known(k.bytes) ? k.bytes : -1.0, k.context, k.l2_cold};
}

std::vector<ScoreLine> score_absolute(const MeasuredSet& s, const LoadedModel& m) {
  const auto caps = measured_caps(s, m);
  Groups g;
  for (const auto& r : s.rows) {
    const double pred = predicted_as_measured(m, r.kernel, caps[r.gpu_index]);
    g[{s.gpus[r.gpu_index]->name, std::string(to_string(r.kernel.cls))}].push_back(
        std::fabs(pred - r.kernel.duration_us) / r.kernel.duration_us);
  }
  std::vector<ScoreLine> out;
  emit(g, "absolute", out);
  return out;
}

std::vector<ScoreLine> score_transfer(const MeasuredSet& targets, const MeasuredSet& sources,
                                      const LoadedModel& m) {
  const auto tcaps = measured_caps(targets, m);
  const auto scaps = measured_caps(sources, m);
  std::multimap<KernelKey, size_t> by_key;
  for (size_t i = 0; i < sources.rows.size(); ++i) by_key.emplace(key_of(sources.rows[i].kernel), i);
  // (source, target, class) -> errors
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>> g;
  for (const auto& t : targets.rows) {
    auto [lo, hi] = by_key.equal_range(key_of(t.kernel));
    for (auto it = lo; it != hi; ++it) {
      const auto& src = sources.rows[it->second];
      const std::string& sname = sources.gpus[src.gpu_index]->name;
      const std::string& tname = targets.gpus[t.gpu_index]->name;
      if (sname == tname) continue;
      const GpuCaps &sc = scaps[src.gpu_index], &tc = tcaps[t.gpu_index];
      const double ps = m.model.predict(src.kernel, sc).time_us;
      const double pt = m.model.predict(src.kernel, tc).time_us;
      // The same arithmetic `kcast predict --mode transfer --with-context` applies (model/transfer.h).
      const double ctx_s = context_floor_us(m, src.kernel, sc);
      const double d = persistent_measurement(src.kernel.duration_us, ps + ctx_s,
                                              bias_persistence(src.kernel.cls, sc, tc, m.model.params()));
      const double pred =
          transfer_measurement(d, ctx_s, context_floor_us(m, src.kernel, tc), ps, pt, tc.launch_floor_us);
      const double err = std::fabs(pred - t.kernel.duration_us) / t.kernel.duration_us;
      g[{sname, tname, std::string(to_string(t.kernel.cls))}].push_back(err);
      g[{sname, tname, "all"}].push_back(err);
    }
  }
  std::vector<ScoreLine> out;
  for (const auto& [key, errs] : g) {
    const auto& [s, t, c] = key;
    out.push_back({"transfer", s, t, c, summarize(errs)});
  }
  return out;
}

}  // namespace kcast
