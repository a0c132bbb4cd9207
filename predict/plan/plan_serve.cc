#include "predict/plan/plan_serve.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>

#include "model/error.h"
#include "predict/e2e/predictor.h"
#include "predict/report/text_util.h"
#include "predict/serve/disaggregated.h"
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

// Poisson arrivals of `n` requests at `rate` per second (infinite: all at once), seed 0 as kcast
// serve's default: the arrival times scale as 1 / rate, so latency grows with it.
serve::Load rate_load(double rate) {
  serve::Load l;
  l.infinite_rate = std::isinf(rate);
  l.rate = l.infinite_rate ? 0 : rate;
  l.label = l.infinite_rate ? "inf" : report::fixed(rate, 3);
  return l;
}

std::vector<serve::Request> arriving(int64_t n, const ServeGoal& g, const serve::Load& l) {
  auto reqs = serve::fixed_requests(n, g.input, g.output);
  serve::assign_arrivals(reqs, l, 0);
  return reqs;
}

// One replica under such a load.
serve::LoadPoint run_at_rate(serve::Replica& r, const ServeGoal& g, double rate, const std::string& gpu) {
  const serve::Load l = rate_load(rate);
  const auto reqs = arriving(g.requests, g, l);
  serve::check_fits_one_rank(r, reqs);
  serve::CostTimer timer(*r.cost);
  const serve::SimResult sim = serve::simulate(reqs, l, r.engine, r.blocks, timer);
  return serve::summarize(sim, gpu, l, g.slo, r.blocks, r.engine.block_size, 0);
}

// A disaggregated deployment under such a load (n requests: one gives a request alone).
struct Deployment {
  serve::Replica prefill, decode;
  serve::Disaggregation d;
  serve::LoadPoint at_rate(const ServeGoal& g, double rate, const std::string& gpu, int64_t n) {
    const serve::Load l = rate_load(rate);
    const serve::SimResult sim = serve::simulate_disaggregated(arriving(n, g, l), l, prefill, decode, d);
    return serve::summarize(sim, gpu, l, g.slo, decode.blocks, decode.engine.block_size, 0);
  }
  // `clients` in a closed loop, as run_at (its first wave left out).
  serve::LoadPoint at_clients(const ServeGoal& g, int64_t clients, const std::string& gpu) {
    serve::Load l;
    l.concurrency = clients;
    l.label = std::to_string(clients);
    const auto reqs = serve::fixed_requests(std::max<int64_t>(100, 10 * clients), g.input, g.output);
    const serve::SimResult sim = serve::simulate_disaggregated(reqs, l, prefill, decode, d);
    return serve::summarize(sim, gpu, l, g.slo, decode.blocks, decode.engine.block_size, clients);
  }
};

// The highest closed-loop load up to `cap` clients meeting the SLOs, given that one client meets them:
// doubling, then bisection (latency grows with the load).
using ClientsRun = std::function<serve::LoadPoint(int64_t clients)>;
void closed_loop_search(const ClientsRun& run, int64_t cap, const ServeGoal& goal, ServeCandidate& c,
                        serve::LoadPoint best) {
  int64_t lo = 1, hi = 0;
  while (lo * 2 <= cap) {
    serve::LoadPoint p = run(lo * 2);
    if (!meets(p, goal)) {
      hi = lo * 2;
      break;
    }
    lo *= 2;
    best = std::move(p);
  }
  if (hi == 0 && lo < cap) {  // every doubling met them: the cap itself
    serve::LoadPoint p = run(cap);
    if (meets(p, goal)) lo = cap, best = std::move(p);
    else hi = cap;
  }
  while (hi > lo + 1) {
    const int64_t mid = (lo + hi) / 2;
    serve::LoadPoint p = run(mid);
    if (meets(p, goal)) lo = mid, best = std::move(p);
    else hi = mid;
  }
  c.concurrency = lo;
  c.point = std::move(best);
}

// A rate on a grid of three significant digits, read back from its text: the command a candidate
// prints (`--request-rate`) then runs exactly the rate it was ranked at.
double on_grid(double rate) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", rate);
  return std::strtod(buf, nullptr);
}

// The highest Poisson request rate meeting the SLOs, given that one client alone meets them (a
// vanishing rate: every request runs alone). Every request at once first (no TTFT objective: the
// engine's full batch may meet an ITL one); else from one client's request rate, doubling and halving
// to a meeting and a missing rate, then bisection to 2% (or the grid's step).
using RateRun = std::function<serve::LoadPoint(double rate)>;
void open_loop_search(const RateRun& run, const ServeGoal& goal, ServeCandidate& c, serve::LoadPoint one) {
  const double inf = std::numeric_limits<double>::infinity();
  serve::LoadPoint best = run(inf);
  if (meets(best, goal)) {
    c.request_rate = inf;
    c.point = std::move(best);
    return;
  }
  double lo = 0, hi = 0, rate = on_grid(one.requests_per_s);
  bool found = false;
  for (int i = 0; i < 40 && (!found || hi == 0); ++i) {
    serve::LoadPoint p = run(rate);
    if (meets(p, goal)) {
      lo = rate, best = std::move(p), found = true;
      if (hi > 0) break;
      rate = on_grid(rate * 2);
    } else {
      hi = rate;
      if (found) break;
      rate = on_grid(rate / 2);
    }
  }
  if (!found) {  // not even at 2^-40 of one client's rate: the SLOs sit at one client's latency
    c.status = ServeCandidate::Status::slo_missed;
    c.point = std::move(one);  // the closest-miss message quotes one client's latencies
    c.why = "misses the SLOs at any request rate";
    return;
  }
  while (hi > 0 && hi > lo * 1.02) {
    const double mid = on_grid(std::sqrt(lo * hi));
    if (mid <= lo || mid >= hi) break;  // the grid's resolution
    serve::LoadPoint p = run(mid);
    if (meets(p, goal)) lo = mid, best = std::move(p);
    else hi = mid;
  }
  c.request_rate = lo;
  c.point = std::move(best);
}

// One client against the SLOs, then the highest load of the goal's kind meeting them (clients up to
// `cap`, or a request rate).
void search_load(const ClientsRun& clients, const RateRun& rate, int64_t cap, const ServeGoal& goal,
                 ServeCandidate& c) {
  serve::LoadPoint one = clients(1);
  if (!meets(one, goal)) {
    c.status = ServeCandidate::Status::slo_missed;
    c.point = std::move(one);
    c.why = "misses the SLOs at one client";
    return;
  }
  if (goal.request_rate) open_loop_search(rate, goal, c, std::move(one));
  else closed_loop_search(clients, cap, goal, c, std::move(one));
}

// A disaggregated layout: its prefill and decode workers' replicas, then the load search.
void evaluate_disaggregated(const serve::StepSynthesizer& step, const synth::SynthOptions& base,
                            const serve::EngineConfig& e, const ServeGoal& goal, const GpuSpec& gpu,
                            const LoadedModel& lm, const GpuDatabase& db, const std::string& what, ServeCandidate& c) {
  const ServeLayout& l = c.layout;
  synth::SynthOptions o = base;
  Deployment dep;
  o.tp = l.prefill_tp;
  dep.prefill = serve::make_replica(step, o, gpu, lm, db, e, what);
  if (l.attention_dp) o.tp = 1, o.dp = l.decode_tp, o.ep = l.ep;
  else o.tp = l.decode_tp;
  dep.decode = serve::make_replica(step, o, gpu, lm, db, e, what);
  dep.d = {l.prefill_workers, l.decode_workers, serve::kv_link_gbps(gpu, l.gpus_per_replica)};
  search_load([&](int64_t n) { return dep.at_clients(goal, n, gpu.name); },
              [&](double rate) { return dep.at_rate(goal, rate, gpu.name, goal.requests); },
              std::min(goal.max_concurrency, dep.decode.engine.max_num_seqs * l.decode_workers), goal, c);
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
  // Disaggregated: X prefill workers of P GPUs and Y decode workers of D GPUs filling a group of 2 to a
  // node's GPUs, the group replicated over the rest.
  for (int64_t g : kReplicaSizes) {
    if (!s.disaggregated || g < 2 || g > s.gpus_per_node || s.gpus % g) continue;
    for (int64_t p : {1, 2, 4, 8})
      for (int64_t d : {1, 2, 4, 8})
        for (int64_t x = 1; x * p < g; ++x) {
          if ((g - x * p) % d) continue;
          for (bool adp : {false, true}) {
            if (adp && (!s.moe || d == 1)) continue;
            for (int64_t b : budgets) {
              ServeLayout l{g, s.gpus / g, adp, adp ? d : 1, b};
              l.prefill_workers = x, l.prefill_tp = p, l.decode_workers = (g - x * p) / d, l.decode_tp = d;
              out.push_back(l);
            }
          }
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
      serve::EngineConfig e = serve::engine_defaults(engine, gpu);
      e.pipeline_stages = c.layout.pp;
      if (c.layout.max_batched_tokens > 0) e.max_batched_tokens = c.layout.max_batched_tokens;
      c.layout.max_batched_tokens = e.max_batched_tokens;
      if (c.layout.disaggregated()) {
        evaluate_disaggregated(step, base, e, goal, gpu, lm, db, what, c);
        return;
      }
      synth::SynthOptions o = base;
      if (c.layout.attention_dp) {
        o.tp = 1, o.dp = c.layout.gpus_per_replica, o.ep = c.layout.ep;
      } else {
        o.tp = c.layout.tp();
      }
      serve::Replica r = serve::make_replica(step, o, gpu, lm, db, e, what);
      search_load([&](int64_t n) { return run_at(r, goal, n, gpu.name); },
                  [&](double rate) { return run_at_rate(r, goal, rate, gpu.name); },
                  std::min(goal.max_concurrency, r.engine.max_num_seqs * c.layout.pp), goal, c);
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
