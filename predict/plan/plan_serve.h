// `kcast plan serve`: the serving configurations of a model on N GPUs — GPUs per replica (tensor
// parallel, or attention data parallel with the experts split over them for a mixture; pipeline stages
// of whole nodes where a replica outgrows one, as the engines serve the largest models), the number of
// replicas, the engine's token budget and sequence limit per iteration — each simulated with `kcast serve`'s code at the
// highest load per replica (closed-loop clients, or a Poisson request rate) whose TTFT and ITL (at the
// chosen percentile) meet the SLOs, ranked by output tokens/s per GPU.
#pragma once
#include <string>
#include <vector>

#include "predict/serve/metrics.h"
#include "predict/serve/replica.h"

namespace kcast::plan {

struct ServeLayout {
  int64_t gpus_per_replica = 1, replicas = 1;
  bool attention_dp = false;  // else tensor parallel over the replica's GPUs
  int64_t ep = 1;
  int64_t max_batched_tokens = 0;  // per GPU (0: the engine's default)
  int64_t pp = 1;  // pipeline stages: gpus_per_replica = tensor-parallel GPUs x pp
  int64_t speculative_tokens = 0;  // draft tokens a decoding sequence verifies a step (0: off)
  // Disaggregated prefill / decode (prefill_workers > 0): prefill workers of prefill_tp GPUs, tensor
  // parallel, and decode workers of decode_tp GPUs (tensor parallel, or for a mixture attention data
  // parallel with the experts over them: attention_dp, ep), in one node; gpus_per_replica is their sum.
  int64_t prefill_workers = 0, prefill_tp = 0, decode_workers = 0, decode_tp = 0;
  int64_t max_num_seqs = 0;  // sequences an engine rank schedules an iteration (0: the engine's default)
  bool disaggregated() const { return prefill_workers > 0; }
  // The GPUs of the engine that decodes: the replica's, or a decode worker's.
  int64_t decode_gpus() const { return disaggregated() ? decode_tp : gpus_per_replica; }
  int64_t tp() const { return attention_dp ? 1 : disaggregated() ? decode_tp : gpus_per_replica / pp; }
  bool operator==(const ServeLayout&) const = default;
};

struct ServeSpace {
  int64_t gpus = 0, gpus_per_node = 8;
  bool moe = false;
  std::vector<int64_t> token_budgets;  // empty: the engine's default only
  std::vector<int64_t> seq_limits;     // --max-num-seqs values to try; empty: the engine's default only
  std::vector<int64_t> draft_counts;   // speculative decoding's draft counts to try; empty: off
  bool disaggregated = false;  // also the splits of a node's GPUs into prefill and decode workers
};

std::vector<ServeLayout> enumerate_serve_layouts(const ServeSpace& s);

struct ServeGoal {
  int64_t input = 0, output = 0;
  serve::Slo slo;
  int percentile = 99;  // 50, 90 or 99
  int64_t max_concurrency = 4096;  // per replica: the search stops here
  // The load the search raises: a closed loop of clients (AIPerf, `vllm bench serve --max-concurrency`,
  // whose clients with equal lengths move in step), or Poisson arrivals of `requests` requests at a rate
  // (QPS sweeps), which spread the prefills out: the same SLO holds at a higher load.
  bool request_rate = false;
  int64_t requests = 500;  // per open-loop run, as `kcast serve --request-rate` sends by default
  // Speculative decoding's acceptance (serve::EngineConfig's) for layouts with draft tokens; those are
  // not simulated over pipeline stages.
  double acceptance = 0;
};

struct ServeCandidate {
  ServeLayout layout;
  enum class Status { ranked, slo_missed, refused } status = Status::ranked;
  std::string why;
  int64_t concurrency = 0;  // per replica, the highest meeting the SLOs (closed loop)
  double request_rate = 0;  // per replica, requests/s: the highest found meeting them (open loop)
  serve::LoadPoint point;   // one replica at that load
  double output_tokens_per_s_per_gpu() const {
    return point.output_tokens_per_s / double(layout.gpus_per_replica);
  }
};

// Evaluates every layout (threads: 0 = all cores): ranked ones first, best first, then those that miss
// the SLOs even at one client, then refusals (does not fit, not servable).
std::vector<ServeCandidate> plan_serve(const serve::StepSynthesizer& step, const synth::SynthOptions& base,
                                       const std::vector<ServeLayout>& layouts, const ServeGoal& goal,
                                       const std::string& engine, const GpuSpec& gpu, const LoadedModel& lm,
                                       const GpuDatabase& db, const std::string& what, unsigned threads = 0);

}  // namespace kcast::plan
