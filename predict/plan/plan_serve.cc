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

// What simulates a configuration (one engine, or a disaggregated deployment), and the engine that
// decodes (whose KV cache the load point reports).
using Simulate = std::function<serve::SimResult(const std::vector<serve::Request>&, const serve::Load&)>;

// `n` requests under `l` (open loop: Poisson arrivals, seed 0 as kcast serve's default, whose times
// scale as 1 / rate, so latency grows with it); the closed loop's first wave left out, as kcast serve
// leaves it out.
serve::LoadPoint load_point(const Simulate& simulate, const serve::Replica& decoding, const serve::Load& l, int64_t n,
                            const ServeGoal& g, const std::string& gpu) {
  auto reqs = serve::fixed_requests(n, g.input, g.output);
  serve::assign_arrivals(reqs, l, 0);
  return serve::summarize(simulate(reqs, l), gpu, l, g.slo, decoding.blocks, decoding.engine.block_size,
                          l.concurrency);
}

// A closed loop of `c` clients, kcast serve's default request count for it.
serve::LoadPoint at_clients(const Simulate& simulate, const serve::Replica& decoding, int64_t c, const ServeGoal& g,
                            const std::string& gpu) {
  serve::Load l;
  l.concurrency = c;
  l.label = std::to_string(c);
  return load_point(simulate, decoding, l, std::max<int64_t>(100, 10 * c), g, gpu);
}

// The goal's requests at `rate` per second (infinite: all at once).
serve::LoadPoint at_rate(const Simulate& simulate, const serve::Replica& decoding, double rate, const ServeGoal& g,
                         const std::string& gpu) {
  serve::Load l;
  l.infinite_rate = std::isinf(rate);
  l.rate = l.infinite_rate ? 0 : rate;
  l.label = l.infinite_rate ? "inf" : report::fixed(rate, 3);
  return load_point(simulate, decoding, l, g.requests, g, gpu);
}

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
void search_load(const Simulate& simulate, const serve::Replica& decoding, int64_t cap, const ServeGoal& goal,
                 const std::string& gpu, ServeCandidate& c) {
  const auto clients = [&](int64_t n) { return at_clients(simulate, decoding, n, goal, gpu); };
  serve::LoadPoint one = clients(1);
  if (!meets(one, goal)) {
    c.status = ServeCandidate::Status::slo_missed;
    c.point = std::move(one);
    c.why = "misses the SLOs at one client";
    return;
  }
  if (goal.request_rate)
    open_loop_search([&](double rate) { return at_rate(simulate, decoding, rate, goal, gpu); }, goal, c,
                     std::move(one));
  else
    closed_loop_search(clients, cap, goal, c, std::move(one));
}

// A disaggregated layout: its prefill and decode workers' replicas, then the load search.
void evaluate_disaggregated(const serve::StepSynthesizer& step, const synth::SynthOptions& base,
                            const serve::EngineConfig& e, const ServeGoal& goal, const GpuSpec& gpu,
                            const LoadedModel& lm, const GpuDatabase& db, const std::string& what, ServeCandidate& c) {
  const ServeLayout& l = c.layout;
  synth::SynthOptions o = base;
  o.tp = l.prefill_tp;
  serve::Replica prefill = serve::make_replica(step, o, gpu, lm, db, e, what);
  if (l.attention_dp) o.tp = 1, o.dp = l.decode_tp, o.ep = l.ep;
  else o.tp = l.decode_tp;
  serve::Replica decode = serve::make_replica(step, o, gpu, lm, db, e, what);
  const serve::Disaggregation d{l.prefill_workers, l.decode_workers, serve::kv_link_gbps(gpu, l.gpus_per_replica)};
  search_load(
      [&](const std::vector<serve::Request>& reqs, const serve::Load& load) {
        return serve::simulate_disaggregated(reqs, load, prefill, decode, d);
      },
      decode, std::min(goal.max_concurrency, decode.engine.max_num_seqs * l.decode_workers), goal, gpu.name, c);
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
  // Each configuration with each sequence limit: a lower one caps the decode batch, trading queueing
  // (TTFT) for a shorter iteration (ITL), which can meet an ITL objective at a higher rate.
  if (!s.seq_limits.empty()) {
    std::vector<ServeLayout> limited;
    for (const ServeLayout& l : out)
      for (int64_t n : s.seq_limits) {
        limited.push_back(l);
        limited.back().max_num_seqs = n;
      }
    out = std::move(limited);
  }
  // Each configuration with each draft count (speculative decoding); pipelines only without drafts.
  if (s.draft_counts.empty() || s.draft_counts == std::vector<int64_t>{0}) return out;
  std::vector<ServeLayout> drafted;
  for (const ServeLayout& l : out)
    for (int64_t k : s.draft_counts) {
      if (k > 0 && l.pp > 1) continue;
      drafted.push_back(l);
      drafted.back().speculative_tokens = k;
    }
  return drafted;
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
      e.speculative_tokens = c.layout.speculative_tokens;
      e.acceptance = goal.acceptance;
      if (c.layout.max_batched_tokens > 0) e.max_batched_tokens = c.layout.max_batched_tokens;
      c.layout.max_batched_tokens = e.max_batched_tokens;
      if (c.layout.max_num_seqs > 0) e.max_num_seqs = c.layout.max_num_seqs;
      c.layout.max_num_seqs = e.max_num_seqs;
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
      search_load(
          [&](const std::vector<serve::Request>& reqs, const serve::Load& load) {
            serve::check_fits_one_rank(r, reqs);
            serve::CostTimer timer(*r.cost);
            return serve::simulate(reqs, load, r.engine, r.blocks, timer);
          },
          r, std::min(goal.max_concurrency, r.engine.max_num_seqs * c.layout.pp), goal, gpu.name, c);
    } catch (const InputError& e) {
      c.status = ServeCandidate::Status::refused;
      c.why = e.what();
    }
  });
  // A sequence limit the engine never reached answers exactly as a larger one does: keep the larger.
  const auto same_but_limit = [](ServeLayout a, const ServeLayout& b) {
    a.max_num_seqs = b.max_num_seqs;
    return a == b;
  };
  const auto same_answer = [](const ServeCandidate& a, const ServeCandidate& b) {
    const auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
    return a.status == b.status && a.why == b.why && a.concurrency == b.concurrency &&
           same(a.request_rate, b.request_rate) && same(a.point.output_tokens_per_s, b.point.output_tokens_per_s) &&
           same(a.point.ttft_ms.mean, b.point.ttft_ms.mean) && same(a.point.itl_ms.mean, b.point.itl_ms.mean);
  };
  std::vector<ServeCandidate> kept;
  for (size_t i = 0; i < all.size(); ++i) {
    bool redundant = false;
    for (size_t j = 0; j < all.size() && !redundant; ++j)
      redundant = all[j].layout.max_num_seqs > all[i].layout.max_num_seqs &&
                  same_but_limit(all[i].layout, all[j].layout) && same_answer(all[i], all[j]);
    if (!redundant) kept.push_back(std::move(all[i]));
  }
  all = std::move(kept);
  std::stable_sort(all.begin(), all.end(), [](const ServeCandidate& a, const ServeCandidate& b) {
    if (a.status != b.status) return int(a.status) < int(b.status);
    if (a.status != ServeCandidate::Status::ranked) return false;
    return a.output_tokens_per_s_per_gpu() > b.output_tokens_per_s_per_gpu();
  });
  return all;
}

}  // namespace kcast::plan
