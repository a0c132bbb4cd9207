// The discrete-event simulation of a continuous-batching engine's scheduler: requests arrive (open
// loop) or are sent by clients (closed loop), wait, are admitted within the engine's limits (running
// sequences, tokens an iteration, KV-cache blocks), have their prompts prefilled in chunks mixed with
// the decode tokens of the running sequences, and leave when their last token is sampled. Each
// iteration's time is the IterationTimer's for that iteration's exact batch; time advances by it.
//
// vLLM V1's scheduler, which the others differ from in the flags of EngineConfig: the running
// sequences are scheduled first, in the order they were admitted (a decode needs one token; a prompt
// being prefilled its rest, or what the token budget leaves); then waiting requests are admitted in
// arrival order while sequences, tokens and blocks allow. KV blocks are taken as a sequence grows;
// when none is free, the most recently admitted running sequence is preempted (its blocks freed, its
// tokens recomputed as a prompt when it is readmitted) - never with reserve_whole_request, which
// admits only what the cache can hold to the end. Prefix caching is off.
//
// With pipeline stages (EngineConfig::pipeline_stages > 1) each iteration is a micro-batch: the next
// is scheduled when the first stage is free (IterationTimer::us after it started), from the sequences
// not already in flight, and a micro-batch's tokens are sampled when its pass ends
// (IterationTimer::latency_us); when nothing can be scheduled the engine waits for the first pass to
// end (or the next arrival). Sequences in flight are never preempted.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "predict/serve/engine.h"
#include "predict/serve/iteration_cost.h"
#include "predict/serve/workload.h"

namespace kcast::serve {

// What times an iteration (IterationCost; tests use simple stand-ins).
class IterationTimer {
 public:
  virtual ~IterationTimer() = default;
  virtual void add(IterationWork& w, const SeqWork& s) const = 0;
  // Speculative decoding: the draft model's `steps` one-token steps for a sequence at `s`.
  virtual void add_draft(IterationWork& w, const SeqWork& /*at*/, int64_t steps) const {
    ++w.draft_seqs;
    w.draft_steps = std::max(w.draft_steps, steps);
  }
  virtual double us(const IterationWork& w) = 0;
  // With pipeline stages: the micro-batch's pass through all of them (us() is the interval before the
  // next can start); the same without.
  virtual double latency_us(const IterationWork& w) { return us(w); }
  // Both, for timers that get them from one computation.
  virtual IterationPass pass(const IterationWork& w) { return {us(w), latency_us(w)}; }
};

class CostTimer : public IterationTimer {
 public:
  explicit CostTimer(IterationCost& c) : c_(c) {}
  void add(IterationWork& w, const SeqWork& s) const override { c_.add(w, s); }
  void add_draft(IterationWork& w, const SeqWork& s, int64_t steps) const override { c_.add_draft(w, s, steps); }
  double us(const IterationWork& w) override { return c_.us(w); }
  double latency_us(const IterationWork& w) override { return c_.latency_us(w); }
  IterationPass pass(const IterationWork& w) override { return c_.pass(w); }

 private:
  IterationCost& c_;
};

struct RequestResult {
  int64_t input = 0, output = 0;
  double arrival_s = 0, first_token_s = 0, finish_s = 0;
  double scheduled_s = 0;  // when it first ran in an iteration (its wait ends)
  int64_t preemptions = 0;
};

struct SimStats {
  int64_t iterations = 0;
  int64_t max_running = 0;      // sequences in one iteration, at most
  int64_t max_tokens = 0;       // tokens in one iteration, at most
  int64_t max_blocks_used = 0;  // KV blocks held at once, at most
  int64_t preemptions = 0;
  double busy_s = 0;            // time the GPUs ran iterations
  double end_s = 0;             // when the last request finished
  double in_system_area = 0;    // integral over time of the requests arrived and not finished
};

struct SimResult {
  std::vector<RequestResult> requests;  // in the order of `reqs`
  SimStats stats;
};

// Simulates `reqs` under `load` on an engine with `kv_blocks` KV-cache blocks. InputError when a
// request can never be admitted (longer than the cache, or than the token budget without chunking).
SimResult simulate(const std::vector<Request>& reqs, const Load& load, const EngineConfig& engine, int64_t kv_blocks,
                   IterationTimer& timer);

}  // namespace kcast::serve
