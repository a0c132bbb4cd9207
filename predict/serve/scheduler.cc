#include "predict/serve/scheduler.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "model/error.h"
#include "predict/synth/generation.h"

namespace kcast::serve::detail {

void check_admissible(const std::vector<Request>& reqs, const EngineConfig& e, int64_t kv_blocks) {
  for (const Request& r : reqs) {
    if (r.prefilled && r.output < 2)
      throw std::logic_error("serve: a prefilled request has nothing to decode");  // the caller routes those
    const int64_t blocks = (r.input + r.output + e.block_size - 1) / e.block_size;
    if (blocks > kv_blocks)
      throw InputError("serve: a request of " + std::to_string(r.input) + " + " + std::to_string(r.output) +
                       " tokens needs " + std::to_string(blocks) + " KV blocks of " + std::to_string(e.block_size) +
                       " tokens; the GPUs' cache holds " + std::to_string(kv_blocks) +
                       " (a larger --tp, --gpu-memory-utilization or --kv-cache-dtype fp8 makes room)");
    const int64_t rank_tokens = e.max_batched_tokens / std::max<int64_t>(1, e.ranks);  // one rank runs a prompt
    if (!e.chunked_prefill && r.input > rank_tokens)
      throw InputError("option '--max-batched-tokens': a prompt of " + std::to_string(r.input) +
                       " tokens exceeds it (" + std::to_string(rank_tokens) + ") and --chunked-prefill is off");
  }
}

std::vector<size_t>::iterator Scheduler::victim(size_t keep) {
  for (auto it = running_.end(); it != running_.begin();) {
    --it;
    if (*it == keep) return running_.end();  // only sequences admitted after it
    if (!live_[*it].in_flight) return it;
  }
  return running_.end();
}

Budget Scheduler::full_budget() const {
  return Budget{std::vector<int64_t>(size_t(ranks_), e_.max_batched_tokens / ranks_), std::vector<int64_t>(size_t(ranks_), 0)};
}

int64_t Scheduler::route(const Budget& b) const {
  // With pipeline stages the limit is per micro-batch: pp of them in flight hold up to pp times it.
  const int64_t pp = std::max<int64_t>(1, e_.pipeline_stages);
  int64_t best = -1;
  for (int64_t r = 0; r < ranks_; ++r) {
    const size_t i = size_t(r);
    if (b.tokens[i] <= 0 || b.seqs[i] >= rank_seqs_ || rank_active_[i] >= pp * rank_seqs_) continue;
    if (best < 0 || std::pair(rank_prompts_[i], rank_active_[i]) <
                        std::pair(rank_prompts_[size_t(best)], rank_active_[size_t(best)]))
      best = r;
  }
  return best;
}

void Scheduler::join(size_t idx, int64_t rank) {
  live_[idx].rank = rank;
  rank_prompts_[size_t(rank)] += live_[idx].input;
  ++rank_active_[size_t(rank)];
  running_.push_back(idx);
}

void Scheduler::leave(size_t idx) {
  const Live& s = live_[idx];
  rank_prompts_[size_t(s.rank)] -= s.input;
  --rank_active_[size_t(s.rank)];
  running_.erase(std::find(running_.begin(), running_.end(), idx));
}

void Scheduler::preempt(size_t idx) {
  Live& s = live_[idx];
  free_ += s.blocks;
  s.blocks = 0;
  s.computed = 0;  // recomputed as a prompt of everything it knows when readmitted
  leave(idx);
  waiting_.push_front(idx);
  ++out_.requests[idx].preemptions;
  ++out_.stats.preemptions;
}

bool Scheduler::schedule_running(std::vector<Scheduled>& sched, Budget& b, bool prefill_phase) {
  for (size_t i = 0; i < running_.size();) {
    const size_t idx = running_[i];
    Live& s = live_[idx];
    int64_t& budget = b.tokens[size_t(s.rank)];
    if (s.in_flight || (!e_.mixed_batches && s.prefilling() != prefill_phase) || budget <= 0 ||
        b.seqs[size_t(s.rank)] >= rank_seqs_) {
      ++i;
      continue;
    }
    // A decoding sequence verifies its drafts with its last token where the budget has room for them
    // all (the drafts' cache slots are taken with them; the rejected ones are overwritten later).
    // Drafts past the request's last token are not verified (its cache ends there).
    const int64_t drafts = !s.prefilling() && budget > e_.speculative_tokens
                               ? std::min(e_.speculative_tokens, s.output - s.generated - 1)
                               : 0;
    const int64_t run = drafts > 0 ? 1 + drafts : std::min(s.left(), budget);
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
    ++b.seqs[size_t(s.rank)];
    sched.push_back({idx, run, drafts});
    ++i;
  }
  return true;
}

void Scheduler::admit_waiting(std::vector<Scheduled>& sched, Budget& b) {
  while (!waiting_.empty()) {
    const int64_t rank = route(b);
    if (rank < 0) break;
    const size_t idx = waiting_.front();
    Live& s = live_[idx];
    int64_t& budget = b.tokens[size_t(rank)];
    const int64_t run = std::min(s.left(), budget);
    if (!e_.chunked_prefill && run < s.left()) break;
    const int64_t want = e_.reserve_whole_request ? blocks_for(s.input + s.output) : blocks_for(s.computed + run);
    const int64_t need = std::max<int64_t>(0, want - s.blocks);
    if (need > free_) break;
    free_ -= need;
    s.blocks += need;
    budget -= run;
    ++b.seqs[size_t(rank)];
    waiting_.pop_front();
    join(idx, rank);
    sched.push_back({idx, run});
  }
}

std::vector<Scheduled> Scheduler::schedule() {
  std::vector<Scheduled> sched;
  Budget budget = full_budget();
  if (e_.mixed_batches) {
    if (schedule_running(sched, budget, false)) admit_waiting(sched, budget);
    return sched;
  }
  // A prefill batch first (prompts being chunked, then admissions), a decode batch when it is empty.
  if (schedule_running(sched, budget, true)) admit_waiting(sched, budget);
  if (!sched.empty()) return sched;
  budget = full_budget();
  schedule_running(sched, budget, false);
  return sched;
}

void Scheduler::apply(const std::vector<Scheduled>& sched, double start, double t, std::vector<size_t>& finished) {
  for (const Scheduled& x : sched) {
    Live& s = live_[x.idx];
    RequestResult& r = out_.requests[x.idx];
    s.in_flight = false;
    if (!s.scheduled) r.scheduled_s = start, s.scheduled = true;
    if (x.drafts > 0) {
      // The last token's and the accepted drafts' keys stay; the token sampled after them is next.
      const double before = s.kept;
      s.kept += synth::expected_tokens_per_step(x.drafts + 1, e_.acceptance);
      const int64_t kept = std::min(int64_t(std::floor(s.kept)) - int64_t(std::floor(before)), s.output - s.generated);
      s.computed += kept;
      s.generated += kept;
      if (s.generated < s.output) continue;
    } else {
      s.computed += x.tokens;
      if (s.computed < s.known()) continue;
      if (s.generated == 0) r.first_token_s = t;
      if (++s.generated < s.output) continue;
    }
    r.finish_s = t;
    free_ += s.blocks;
    s.blocks = 0;
    leave(x.idx);
    --in_system_;
    finished.push_back(x.idx);
  }
}

void Scheduler::land(double now, std::vector<size_t>& finished) {
  while (!in_flight_.empty() && in_flight_.begin()->first <= now) {
    const auto it = in_flight_.begin();
    const size_t before = finished.size();
    apply(it->second.sched, it->second.start, it->first, finished);
    // The time average of requests in the system was counted up to `now`; these left at the pass's end.
    out_.stats.in_system_area -= double(finished.size() - before) * (now - it->first);
    in_flight_.erase(it);
  }
}

std::vector<size_t> Scheduler::step(double& now, double horizon) {
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
    timer_.add(w, SeqWork{x.tokens, s.computed, s.rank});
    if (x.drafts > 0) {
      w.sample(s.rank, x.tokens);  // logits at every verified position
      timer_.add_draft(w, SeqWork{1, s.computed + x.tokens, s.rank}, e_.speculative_tokens);
    } else if (s.computed + x.tokens == s.known()) {
      w.sample(s.rank);
    }
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

}  // namespace kcast::serve::detail
