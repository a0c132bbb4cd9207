// One engine's scheduler as the simulations step it (predict/serve/simulator.h says what it does): its
// waiting and running requests, KV blocks and in-flight micro-batches. simulate() drives one; a
// disaggregated deployment (disaggregated.h) drives its workers' side by side on one clock.
#pragma once
#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <vector>

#include "predict/serve/simulator.h"

namespace kcast::serve::detail {

// InputError when a request can never be admitted (longer than the cache, or than the token budget
// without chunking); logic_error for a prefilled request with nothing to decode.
void check_admissible(const std::vector<Request>& reqs, const EngineConfig& e, int64_t kv_blocks);

// A request's state in the engine.
struct Live {
  int64_t input = 0, output = 0;
  int64_t computed = 0;   // tokens whose keys and values are in its cache
  int64_t generated = 0;  // output tokens sampled so far
  int64_t blocks = 0;     // KV blocks it holds
  int64_t rank = 0;       // its attention data-parallel rank, from its admission (EngineConfig::ranks)
  bool scheduled = false;
  bool in_flight = false;  // in a micro-batch whose pass has not ended (pipeline stages)
  // Speculative decoding: the expected tokens its verification steps have kept so far; each step
  // keeps the whole tokens this sum newly passes (deterministic, the expectation on average).
  double kept = 0;
  // Tokens it can run: its prompt and every sampled token but the last, which the next step runs.
  int64_t known() const { return input + generated; }
  int64_t left() const { return known() - computed; }
  bool prefilling() const { return generated == 0 || left() > 1; }
};

struct Scheduled {
  size_t idx;
  int64_t tokens;
  int64_t drafts = 0;  // speculative decoding: draft tokens verified after the last one (tokens - 1)
};

// What an iteration may still schedule, per attention data-parallel rank (one rank without).
struct Budget {
  std::vector<int64_t> tokens, seqs;  // tokens left, sequences scheduled
};

class Scheduler {
 public:
  Scheduler(const std::vector<Request>& reqs, const EngineConfig& e, int64_t kv_blocks, IterationTimer& timer, SimResult& out)
      : e_(e), free_(kv_blocks), total_(kv_blocks), timer_(timer), out_(out), live_(reqs.size()),
        ranks_(std::max<int64_t>(1, e.ranks)), rank_seqs_(e.max_num_seqs / ranks_),
        rank_prompts_(size_t(ranks_), 0), rank_active_(size_t(ranks_), 0) {
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
  Budget full_budget() const;
  // The rank a waiting request goes to (DefaultADPRouter: the fewest active prompt tokens, then
  // requests, then the lowest index) among those with room this iteration; -1 when none has.
  int64_t route(const Budget& b) const;
  void join(size_t idx, int64_t rank);  // a request starts running on `rank`
  void leave(size_t idx);               // and stops (finished or preempted)
  // The running sequences' share of the iteration; false when a preemption stopped it.
  bool schedule_running(std::vector<Scheduled>& s, Budget& budget, bool prefill_phase);
  void admit_waiting(std::vector<Scheduled>& s, Budget& budget);
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
  int64_t ranks_, rank_seqs_;                  // attention data-parallel ranks; sequences one runs at most
  std::vector<int64_t> rank_prompts_, rank_active_;  // per rank: running requests' prompt tokens, and count
};

}  // namespace kcast::serve::detail
