#include "predict/serve/disaggregated.h"

#include <algorithm>
#include <numeric>

#include "model/error.h"
#include "model/gpu_caps.h"

namespace kcast::serve {

namespace {

// Request indices in arrival order (ties in file order), dealt to `workers` in turn.
std::vector<std::vector<size_t>> deal(const std::vector<double>& at, const std::vector<size_t>& which, int64_t workers) {
  std::vector<size_t> order = which;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return at[a] < at[b]; });
  std::vector<std::vector<size_t>> out(size_t(std::max<int64_t>(1, workers)));
  for (size_t k = 0; k < order.size(); ++k) out[k % out.size()].push_back(order[k]);
  return out;
}

// One pool's workers, each an engine of `r` simulated on its share; `make` gives a share's request.
template <class Make, class Done>
void run_pool(const std::vector<std::vector<size_t>>& shares, Replica& r, SimStats& stats, Make make, Done done) {
  CostTimer timer(*r.cost);
  Load open;  // the arrival times are the requests' own
  open.dataset_arrivals = true;
  for (const std::vector<size_t>& share : shares) {
    if (share.empty()) continue;
    std::vector<Request> part;
    part.reserve(share.size());
    for (size_t i : share) part.push_back(make(i));
    check_fits_one_rank(r, part);
    const SimResult sim = simulate(part, open, r.engine, r.blocks, timer);
    for (size_t k = 0; k < share.size(); ++k) done(share[k], sim.requests[k]);
    stats.iterations += sim.stats.iterations;
    stats.busy_s += sim.stats.busy_s;
    stats.preemptions += sim.stats.preemptions;
    stats.max_running = std::max(stats.max_running, sim.stats.max_running);
    stats.max_tokens = std::max(stats.max_tokens, sim.stats.max_tokens);
    stats.max_blocks_used = std::max(stats.max_blocks_used, sim.stats.max_blocks_used);
  }
}

}  // namespace

double kv_link_gbps(const GpuSpec& g, int64_t gpus) {
  const int64_t domain = g.domain_size > 0 ? g.domain_size : 8;
  const double gbps = gpus <= domain ? g.link_gbps * kLinkEff : g.net_gbps * kNetEff;
  return known(gbps) && gbps > 0 ? gbps : 0;
}

double kv_transfer_s(const Replica& prefill, int64_t tokens, double link_gbps) {
  if (!(link_gbps > 0))
    throw InputError("option '--prefill-workers': the GPU database gives no link or network bandwidth to move "
                     "KV caches between the workers");
  return prefill.cost->kv_bytes_per_token() * double(tokens) / (link_gbps * 1e9);
}

SimResult simulate_disaggregated(const std::vector<Request>& reqs, const Load& load, Replica& prefill, Replica& decode,
                                 const Disaggregation& d) {
  if (load.concurrency > 0)
    throw InputError("option '--concurrency': a disaggregated deployment is simulated under an open loop "
                     "(--request-rate or a dataset's arrivals)");
  const size_t n = reqs.size();
  SimResult out;
  out.requests.resize(n);
  std::vector<double> arrival(n), cache_lands(n);
  for (size_t i = 0; i < n; ++i) {
    arrival[i] = reqs[i].arrival_s;
    out.requests[i].input = reqs[i].input;
    out.requests[i].output = reqs[i].output;
  }
  std::vector<size_t> all(n);
  std::iota(all.begin(), all.end(), 0);
  // Prefill: every request's prompt and first token.
  run_pool(
      deal(arrival, all, d.prefill_workers), prefill, out.stats,
      [&](size_t i) { return Request{reqs[i].input, 1, reqs[i].arrival_s}; },
      [&](size_t i, const RequestResult& q) {
        RequestResult& r = out.requests[i];
        r.arrival_s = q.arrival_s;
        r.scheduled_s = q.scheduled_s;
        r.preemptions += q.preemptions;
        cache_lands[i] = q.first_token_s + kv_transfer_s(prefill, reqs[i].input, d.link_gbps);
        r.first_token_s = cache_lands[i];
        r.finish_s = cache_lands[i];  // a one-token request ends there
      });
  // Decode: the rest of every request with more than one token.
  std::vector<size_t> decoding;
  for (size_t i = 0; i < n; ++i)
    if (reqs[i].output > 1) decoding.push_back(i);
  run_pool(
      deal(cache_lands, decoding, d.decode_workers), decode, out.stats,
      [&](size_t i) { return Request{reqs[i].input, reqs[i].output, cache_lands[i], true}; },
      [&](size_t i, const RequestResult& q) {
        out.requests[i].finish_s = q.finish_s;
        out.requests[i].preemptions += q.preemptions;
      });
  for (const RequestResult& r : out.requests) {
    out.stats.end_s = std::max(out.stats.end_s, r.finish_s);
    out.stats.in_system_area += r.finish_s - r.arrival_s;
  }
  return out;
}

}  // namespace kcast::serve
