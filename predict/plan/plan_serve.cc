#include "predict/plan/plan_serve.h"

#include <algorithm>
#include <cmath>

#include "model/error.h"
#include "predict/e2e/predictor.h"
#include "predict/serve/simulator.h"

namespace kcast::plan {

namespace {

const int64_t kReplicaSizes[] = {1, 2, 4, 8, 16, 32, 64};

bool meets(const serve::LoadPoint& p, const ServeGoal& g) {
  const double ttft = serve::at_percentile(p.ttft_ms, g.percentile), itl = serve::at_percentile(p.itl_ms, g.percentile);
  return (g.slo.ttft_ms <= 0 || ttft <= g.slo.ttft_ms) && (g.slo.itl_ms <= 0 || std::isnan(itl) || itl <= g.slo.itl_ms);
}

// One replica under a closed loop of `c` clients (warm-up: the first wave, as kcast serve leaves it out).
serve::LoadPoint run_at(serve::Replica& r, const ServeGoal& g, int64_t c, const std::string& gpu) {
  serve::Load l;
  l.concurrency = c;
  l.label = std::to_string(c);
  const auto reqs = serve::fixed_requests(std::max<int64_t>(100, 10 * c), g.input, g.output);
  serve::check_fits_one_rank(r, reqs);
  serve::CostTimer timer(*r.cost);
  const serve::SimResult sim = serve::simulate(reqs, l, r.engine, r.blocks, timer);
  return serve::summarize(sim, gpu, l, g.slo, r.blocks, r.engine.block_size, c);
}

}  // namespace

std::vector<ServeLayout> enumerate_serve_layouts(const ServeSpace& s) {
  std::vector<ServeLayout> out;
  const std::vector<int64_t> budgets = s.token_budgets.empty() ? std::vector<int64_t>{0} : s.token_budgets;
  for (int64_t g : kReplicaSizes) {
    if (g > s.gpus_per_node || s.gpus % g) continue;
    for (bool adp : {false, true}) {
      if (adp && (!s.moe || g == 1)) continue;
      for (int64_t b : budgets) out.push_back({g, s.gpus / g, adp, adp ? g : 1, b});
    }
  }
  // Replicas beyond a node: a node's GPUs tensor-parallel, 2 to 8 such stages in a pipeline.
  for (int64_t pp : {2, 4, 8}) {
    const int64_t g = s.gpus_per_node * pp;
    if (s.gpus % g) continue;
    for (int64_t b : budgets) out.push_back({g, s.gpus / g, false, 1, b, pp});
  }
  return out;
}

std::vector<ServeCandidate> plan_serve(const serve::StepSynthesizer& step, const synth::SynthOptions& base,
                                       const std::vector<ServeLayout>& layouts, const ServeGoal& goal,
                                       const std::string& engine, const GpuSpec& gpu, const LoadedModel& lm,
                                       const GpuDatabase& db, const std::string& what, unsigned threads) {
  std::vector<ServeCandidate> all(layouts.size());
  parallel_for(layouts.size(), threads, [&](size_t i) {
    ServeCandidate& c = all[i];
    c.layout = layouts[i];
    try {
      synth::SynthOptions o = base;
      if (c.layout.attention_dp) {
        o.tp = 1, o.dp = c.layout.gpus_per_replica, o.ep = c.layout.ep;
      } else {
        o.tp = c.layout.tp();
      }
      serve::EngineConfig e = serve::engine_defaults(engine, gpu);
      e.pipeline_stages = c.layout.pp;
      if (c.layout.max_batched_tokens > 0) e.max_batched_tokens = c.layout.max_batched_tokens;
      c.layout.max_batched_tokens = e.max_batched_tokens;
      serve::Replica r = serve::make_replica(step, o, gpu, lm, db, e, what);
      // The highest load meeting the SLOs: doubling, then bisection (latency grows with the load).
      const int64_t cap = std::min(goal.max_concurrency, r.engine.max_num_seqs * c.layout.pp);
      serve::LoadPoint best = run_at(r, goal, 1, gpu.name);
      if (!meets(best, goal)) {
        c.status = ServeCandidate::Status::slo_missed;
        c.point = best;
        c.why = "misses the SLOs at one client";
        return;
      }
      int64_t lo = 1, hi = 0;
      while (lo * 2 <= cap) {
        serve::LoadPoint p = run_at(r, goal, lo * 2, gpu.name);
        if (!meets(p, goal)) {
          hi = lo * 2;
          break;
        }
        lo *= 2;
        best = std::move(p);
      }
      if (hi == 0 && lo < cap) {  // every doubling met them: the cap itself
        serve::LoadPoint p = run_at(r, goal, cap, gpu.name);
        if (meets(p, goal)) lo = cap, best = std::move(p);
        else hi = cap;
      }
      while (hi > lo + 1) {
        const int64_t mid = (lo + hi) / 2;
        serve::LoadPoint p = run_at(r, goal, mid, gpu.name);
        if (meets(p, goal)) lo = mid, best = std::move(p);
        else hi = mid;
      }
      c.concurrency = lo;
      c.point = best;
    } catch (const InputError& e) {
      c.status = ServeCandidate::Status::refused;
      c.why = e.what();
    }
  });
  std::stable_sort(all.begin(), all.end(), [](const ServeCandidate& a, const ServeCandidate& b) {
    if (a.status != b.status) return int(a.status) < int(b.status);
    if (a.status != ServeCandidate::Status::ranked) return false;
    return a.output_tokens_per_s_per_gpu() > b.output_tokens_per_s_per_gpu();
  });
  return all;
}

}  // namespace kcast::plan
