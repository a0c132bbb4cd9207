#include "predict/serve/disaggregated.h"

#include <algorithm>
#include <functional>  // std::greater
#include <memory>
#include <numeric>
#include <queue>
#include <stdexcept>

#include "model/error.h"
#include "model/gpu_caps.h"
#include "predict/serve/scheduler.h"

namespace kcast::serve {

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

namespace {

// One worker: an engine's scheduler on its own clock (the end of its last iteration).
struct Worker {
  SimResult out;
  std::unique_ptr<detail::Scheduler> s;
  double now = 0;
  Worker(const std::vector<Request>& reqs, const Replica& r, IterationTimer& timer) {
    out.requests.resize(reqs.size());
    s = std::make_unique<detail::Scheduler>(reqs, r.engine, r.blocks, timer, out);
  }
};

// What happens next to a request: it is sent to a prefill worker, or its cache lands at a decode worker.
struct Event {
  double t;
  uint64_t seq;  // ties in the order they were made
  bool to_decode;
  size_t idx;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

}  // namespace

SimResult simulate_disaggregated(const std::vector<Request>& reqs, const Load& load, Replica& prefill, Replica& decode,
                                 const Disaggregation& d) {
  const size_t n = reqs.size();
  // The workers' views of the requests: a prompt and its first token; the rest, its cache arrived.
  std::vector<Request> prompts(n), rests(n);
  for (size_t i = 0; i < n; ++i) {
    prompts[i] = Request{reqs[i].input, 1, 0};
    rests[i] = Request{reqs[i].input, std::max<int64_t>(reqs[i].output, 2), 0, reqs[i].output > 1};
  }
  check_fits_one_rank(prefill, prompts);
  check_fits_one_rank(decode, rests);
  detail::check_admissible(prompts, prefill.engine, prefill.blocks);
  detail::check_admissible(rests, decode.engine, decode.blocks);
  CostTimer prefill_timer(*prefill.cost), decode_timer(*decode.cost);
  std::vector<std::unique_ptr<Worker>> workers;  // the prefill workers, then the decode workers
  const size_t np = size_t(std::max<int64_t>(1, d.prefill_workers)), nd = size_t(std::max<int64_t>(1, d.decode_workers));
  for (size_t w = 0; w < np + nd; ++w)
    workers.push_back(w < np ? std::make_unique<Worker>(prompts, prefill, prefill_timer)
                             : std::make_unique<Worker>(rests, decode, decode_timer));

  SimResult out;
  out.requests.resize(n);
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  uint64_t seq = 0;
  size_t next = 0, done = 0, to_prefill = 0, to_decode = 0;
  const bool closed = load.concurrency > 0;
  // Open loop: every request at its arrival time (ties in file order). Closed loop: the clients' first
  // requests at once, each next one when its client's last one ends.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  if (!closed)
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return reqs[a].arrival_s < reqs[b].arrival_s; });
  for (; next < n && (!closed || next < size_t(load.concurrency)); ++next)
    events.push({closed ? 0.0 : reqs[order[next]].arrival_s, seq++, false, order[next]});
  auto finish = [&](size_t i, double t) {
    out.requests[i].finish_s = t;
    ++done;
    if (closed && next < n) events.push({t, seq++, false, order[next++]});  // the client's next request
  };
  while (done < n) {
    // The busy worker furthest behind; events up to its clock happen first.
    Worker* behind = nullptr;
    bool prefilling = false;
    for (size_t k = 0; k < workers.size(); ++k)
      if (!workers[k]->s->idle() && (!behind || workers[k]->now < behind->now))
        behind = workers[k].get(), prefilling = k < np;
    if (!events.empty() && (!behind || events.top().t <= behind->now)) {
      const Event e = events.top();
      events.pop();
      Worker& w = *workers[e.to_decode ? np + to_decode++ % nd : to_prefill++ % np];
      if (w.s->idle()) w.now = std::max(w.now, e.t);  // it waited for this request
      w.s->arrive(e.idx, e.t);
      continue;
    }
    if (!behind) throw std::logic_error("serve: disaggregated simulation stalled");
    for (size_t i : behind->s->step(behind->now)) {
      const double t = behind->now;
      if (!prefilling) {
        finish(i, t);
        continue;
      }
      // The first token leaves with the cache; a one-token request ends there.
      RequestResult& r = out.requests[i];
      const RequestResult& q = behind->out.requests[i];
      r.arrival_s = q.arrival_s;
      r.scheduled_s = q.scheduled_s;
      r.first_token_s = t + kv_transfer_s(prefill, reqs[i].input, d.link_gbps);
      if (reqs[i].output > 1) events.push({r.first_token_s, seq++, true, i});
      else finish(i, r.first_token_s);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    RequestResult& r = out.requests[i];
    r.input = reqs[i].input;
    r.output = reqs[i].output;
    for (const auto& w : workers) r.preemptions += w->out.requests[i].preemptions;
    out.stats.end_s = std::max(out.stats.end_s, r.finish_s);
    out.stats.in_system_area += r.finish_s - r.arrival_s;
  }
  for (const auto& w : workers) {
    const SimStats& st = w->out.stats;
    out.stats.iterations += st.iterations;
    out.stats.busy_s += st.busy_s;
    out.stats.preemptions += st.preemptions;
    out.stats.max_running = std::max(out.stats.max_running, st.max_running);
    out.stats.max_tokens = std::max(out.stats.max_tokens, st.max_tokens);
    out.stats.max_blocks_used = std::max(out.stats.max_blocks_used, st.max_blocks_used);
  }
  return out;
}

}  // namespace kcast::serve
