#include "predict/serve/simulator.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <numeric>

#include "model/error.h"

namespace kcast::serve {

namespace {

// A request's state in the engine.
struct Live {
  int64_t input = 0, output = 0;
  int64_t computed = 0;   // tokens whose keys and values are in its cache
  int64_t generated = 0;  // output tokens sampled so far
  int64_t blocks = 0;     // KV blocks it holds
  bool scheduled = false;
  bool in_flight = false;  // in a micro-batch whose pass has not ended (pipeline stages)
  // Tokens it can run: its prompt and every sampled token but the last, which the next step runs.
  int64_t known() const { return input + generated; }
  int64_t left() const { return known() - computed; }
  bool prefilling() const { return generated == 0 || left() > 1; }
};

struct Scheduled {
  size_t idx;
  int64_t tokens;
};

class Engine {
 public:
  Engine(const std::vector<Request>& reqs, const EngineConfig& e, int64_t kv_blocks, IterationTimer& timer, SimResult& out)
      : e_(e), free_(kv_blocks), total_(kv_blocks), timer_(timer), out_(out), live_(reqs.size()) {
    for (size_t i = 0; i < reqs.size(); ++i) {
      live_[i].input = reqs[i].input;
      live_[i].output = reqs[i].output;
      prefilled_.push_back(reqs[i].prefilled);
      out_.requests[i].input = reqs[i].input;
      out_.requests[i].output = reqs[i].output;
    }
  }

  void arrive(size_t i, double t) {
    out_.requests[i].arrival_s = t;
    if (prefilled_[i]) {
      // Its cache is whole and its first token out: blocks for the prompt come with admission.
      live_[i].computed = live_[i].input;
      live_[i].generated = 1;
      out_.requests[i].first_token_s = t;
    }
    waiting_.push_back(i);
    ++in_system_;
  }
  bool idle() const { return running_.empty() && waiting_.empty(); }
  size_t in_system() const { return in_system_; }
  // Runs one iteration from `now`; returns the requests that finished, at the time it ends. With
  // pipeline stages, when nothing can be scheduled, waits for the first pass in flight to end but not
  // past `horizon` (the next arrival).
  std::vector<size_t> step(double& now, double horizon = std::numeric_limits<double>::infinity());

 private:
  int64_t blocks_for(int64_t tokens) const { return (tokens + e_.block_size - 1) / e_.block_size; }
  void preempt(size_t idx);
  // The running sequences' share of the iteration; false when a preemption stopped it.
  bool schedule_running(std::vector<Scheduled>& s, int64_t& budget, bool prefill_phase);
  void admit_waiting(std::vector<Scheduled>& s, int64_t& budget);
  std::vector<Scheduled> schedule();
  // The scheduled tokens run: sampled, finished requests released, at time t.
  void apply(const std::vector<Scheduled>& sched, double start, double t, std::vector<size_t>& finished);
  // Pipeline stages: the micro-batches whose pass ended by `now`.
  void land(double now, std::vector<size_t>& finished);
  // The last running sequence a preemption may take (not `keep`, not in flight); none: running_.end().
  std::vector<size_t>::iterator victim(size_t keep);

  const EngineConfig& e_;
  int64_t free_, total_;
  IterationTimer& timer_;
  SimResult& out_;
  std::vector<Live> live_;
  std::vector<bool> prefilled_;
  std::deque<size_t> waiting_;
  std::vector<size_t> running_;  // in admission order
  size_t in_system_ = 0;
  struct InFlight {
    double start;
    std::vector<Scheduled> sched;
  };
  std::multimap<double, InFlight> in_flight_;  // by the time their pass ends
};

std::vector<size_t>::iterator Engine::victim(size_t keep) {
  for (auto it = running_.end(); it != running_.begin();) {
    --it;
    if (*it == keep) return running_.end();  // only sequences admitted after it
    if (!live_[*it].in_flight) return it;
  }
  return running_.end();
}

void Engine::preempt(size_t idx) {
  Live& s = live_[idx];
  free_ += s.blocks;
  s.blocks = 0;
  s.computed = 0;  // recomputed as a prompt of everything it knows when readmitted
  running_.erase(std::find(running_.begin(), running_.end(), idx));
  waiting_.push_front(idx);
  ++out_.requests[idx].preemptions;
  ++out_.stats.preemptions;
}

bool Engine::schedule_running(std::vector<Scheduled>& sched, int64_t& budget, bool prefill_phase) {
  for (size_t i = 0; i < running_.size() && budget > 0 && int64_t(sched.size()) < e_.max_num_seqs;) {
    const size_t idx = running_[i];
    Live& s = live_[idx];
    if (s.in_flight || (!e_.mixed_batches && s.prefilling() != prefill_phase)) {
      ++i;
      continue;
    }
    const int64_t run = std::min(s.left(), budget);
    if (!e_.chunked_prefill && run < s.left()) {
      ++i;
      continue;
    }
    const int64_t need = std::max<int64_t>(0, blocks_for(s.computed + run) - s.blocks);
    for (auto v = victim(idx); need > free_ && v != running_.end(); v = victim(idx)) preempt(*v);
    if (need > free_) {
      preempt(idx);
      return false;
    }
    free_ -= need;
    s.blocks += need;
    budget -= run;
    sched.push_back({idx, run});
    ++i;
  }
  return true;
}

void Engine::admit_waiting(std::vector<Scheduled>& sched, int64_t& budget) {
  // With pipeline stages the limit is per micro-batch: pp of them in flight hold up to pp times it.
  const int64_t pp = std::max<int64_t>(1, e_.pipeline_stages);
  while (!waiting_.empty() && budget > 0 && int64_t(running_.size()) < pp * e_.max_num_seqs &&
         int64_t(sched.size()) < e_.max_num_seqs) {
    const size_t idx = waiting_.front();
    Live& s = live_[idx];
    const int64_t run = std::min(s.left(), budget);
    if (!e_.chunked_prefill && run < s.left()) break;
    const int64_t want = e_.reserve_whole_request ? blocks_for(s.input + s.output) : blocks_for(s.computed + run);
    const int64_t need = std::max<int64_t>(0, want - s.blocks);
    if (need > free_) break;
    free_ -= need;
    s.blocks += need;
    budget -= run;
    waiting_.pop_front();
    running_.push_back(idx);
    sched.push_back({idx, run});
  }
}

std::vector<Scheduled> Engine::schedule() {
  std::vector<Scheduled> sched;
  int64_t budget = e_.max_batched_tokens;
  if (e_.mixed_batches) {
    if (schedule_running(sched, budget, false)) admit_waiting(sched, budget);
    return sched;
  }
  // A prefill batch first (prompts being chunked, then admissions), a decode batch when it is empty.
  if (schedule_running(sched, budget, true)) admit_waiting(sched, budget);
  if (!sched.empty()) return sched;
  budget = e_.max_batched_tokens;
  schedule_running(sched, budget, false);
  return sched;
}

void Engine::apply(const std::vector<Scheduled>& sched, double start, double t, std::vector<size_t>& finished) {
  for (const Scheduled& x : sched) {
    Live& s = live_[x.idx];
    RequestResult& r = out_.requests[x.idx];
    s.in_flight = false;
    if (!s.scheduled) r.scheduled_s = start, s.scheduled = true;
    s.computed += x.tokens;
    if (s.computed < s.known()) continue;
    if (s.generated == 0) r.first_token_s = t;
    if (++s.generated < s.output) continue;
    r.finish_s = t;
    free_ += s.blocks;
    s.blocks = 0;
    running_.erase(std::find(running_.begin(), running_.end(), x.idx));
    --in_system_;
    finished.push_back(x.idx);
  }
}

void Engine::land(double now, std::vector<size_t>& finished) {
  while (!in_flight_.empty() && in_flight_.begin()->first <= now) {
    const auto it = in_flight_.begin();
    const size_t before = finished.size();
    apply(it->second.sched, it->second.start, it->first, finished);
    // The time average of requests in the system was counted up to `now`; these left at the pass's end.
    out_.stats.in_system_area -= double(finished.size() - before) * (now - it->first);
    in_flight_.erase(it);
  }
}

std::vector<size_t> Engine::step(double& now, double horizon) {
  std::vector<size_t> finished;
  SimStats& st = out_.stats;
  land(now, finished);
  std::vector<Scheduled> sched = schedule();
  if (sched.empty()) {
    if (in_flight_.empty()) {
      // Nothing can run: the first waiting request does not fit even an empty cache (checked up front,
      // so this is a scheduler bug rather than bad input).
      throw std::logic_error("serve: no request could be scheduled");
    }
    // Every schedulable sequence is in flight: wait for the first pass to end (or the next arrival).
    const double until = std::max(now, std::min(in_flight_.begin()->first, horizon));
    st.in_system_area += double(in_system_) * (until - now);
    now = until;
    land(now, finished);
    return finished;
  }
  IterationWork w;
  for (const Scheduled& x : sched) {
    const Live& s = live_[x.idx];
    timer_.add(w, SeqWork{x.tokens, s.computed});
    if (s.computed + x.tokens == s.known()) ++w.sampled;
  }
  st.max_running = std::max(st.max_running, int64_t(running_.size()));
  st.max_tokens = std::max(st.max_tokens, w.tokens);
  st.max_blocks_used = std::max(st.max_blocks_used, total_ - free_);
  ++st.iterations;
  const IterationPass p = timer_.pass(w);
  const double dt = p.interval_us * 1e-6;
  st.busy_s += dt;
  st.in_system_area += double(in_system_) * dt;
  const double start = now;
  now += dt;
  if (e_.pipeline_stages <= 1) {
    apply(sched, now - dt, now, finished);
    return finished;
  }
  for (const Scheduled& x : sched) live_[x.idx].in_flight = true;
  in_flight_.emplace(start + p.latency_us * 1e-6, InFlight{start, std::move(sched)});
  land(now, finished);
  return finished;
}

}  // namespace

SimResult simulate(const std::vector<Request>& reqs, const Load& load, const EngineConfig& engine, int64_t kv_blocks,
                   IterationTimer& timer) {
  for (const Request& r : reqs) {
    if (r.prefilled && r.output < 2)
      throw std::logic_error("serve: a prefilled request has nothing to decode");  // the caller routes those
    const int64_t blocks = (r.input + r.output + engine.block_size - 1) / engine.block_size;
    if (blocks > kv_blocks)
      throw InputError("serve: a request of " + std::to_string(r.input) + " + " + std::to_string(r.output) +
                       " tokens needs " + std::to_string(blocks) + " KV blocks of " + std::to_string(engine.block_size) +
                       " tokens; the GPUs' cache holds " + std::to_string(kv_blocks) +
                       " (a larger --tp, --gpu-memory-utilization or --kv-cache-dtype fp8 makes room)");
    if (!engine.chunked_prefill && r.input > engine.max_batched_tokens)
      throw InputError("option '--max-batched-tokens': a prompt of " + std::to_string(r.input) +
                       " tokens exceeds it (" + std::to_string(engine.max_batched_tokens) +
                       ") and --chunked-prefill is off");
  }
  SimResult out;
  out.requests.resize(reqs.size());
  Engine eng(reqs, engine, kv_blocks, timer, out);
  const size_t n = reqs.size();
  // Open loop: requests in arrival order (ties in file order). Closed loop: in file order, as sent.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  const bool closed = load.concurrency > 0;
  if (!closed)
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return reqs[a].arrival_s < reqs[b].arrival_s; });
  size_t next = 0, done = 0;
  double now = 0;
  if (closed)
    for (; next < n && next < size_t(load.concurrency); ++next) eng.arrive(order[next], 0);
  while (done < n) {
    // Open loop: every request that arrived by now waits; the time it waited within the last
    // iteration counts towards the time-average number in the system.
    for (; !closed && next < n && reqs[order[next]].arrival_s <= now; ++next) {
      out.stats.in_system_area += now - reqs[order[next]].arrival_s;
      eng.arrive(order[next], reqs[order[next]].arrival_s);
    }
    if (eng.idle()) {
      now = std::max(now, reqs[order[next]].arrival_s);  // the engine waits for the next arrival
      continue;
    }
    const double horizon = !closed && next < n ? reqs[order[next]].arrival_s : std::numeric_limits<double>::infinity();
    const size_t finished = eng.step(now, horizon).size();
    for (size_t k = 0; k < finished; ++k) {
      ++done;
      if (closed && next < n) eng.arrive(order[next++], now);  // the client sends its next request
    }
  }
  out.stats.end_s = now;
  return out;
}

}  // namespace kcast::serve
