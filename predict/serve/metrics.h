// A simulated serving run's figures, by the benchmark clients' definitions:
//   * TTFT: first output token's time minus the request's send time (queueing included);
//   * ITL: AIPerf / genai-perf's inter-token latency, per request (end-to-end - TTFT) / (output - 1);
//     vLLM's TPOT is the same formula, reported as tpot_ms (requests of one output token have none);
//   * end-to-end latency: last token's time minus send time;
//   * throughput: tokens over the run's duration, from t = 0 to the last request's finish;
//   * goodput: requests meeting every SLO given, per second.
// Percentiles interpolate linearly between order statistics (numpy's default, as the clients compute them).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "predict/serve/simulator.h"

namespace kcast::serve {

struct Stat {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0;
};
Stat stat_of(std::vector<double> v);
// {"mean", "p50", "p90", "p99"}, as every JSON of serve and plan serve carries a statistic.
nlohmann::json stat_json(const Stat& s);
// The statistic at a percentile the SLOs hold at: 50, 90 or 99.
double at_percentile(const Stat& s, int percentile);

struct Slo {
  double ttft_ms = 0, itl_ms = 0;  // 0: none
};

struct LoadPoint {
  std::string gpu;
  Load load;
  int64_t requests = 0, warmup = 0;
  Stat ttft_ms, itl_ms, tpot_ms, e2e_ms;
  double output_tokens_per_s = 0, total_tokens_per_s = 0, requests_per_s = 0;
  double goodput_requests_per_s = -1;  // -1: no SLO given
  double duration_s = 0;
  int64_t kv_blocks = 0, block_size = 0, iterations = 0, preemptions = 0, max_running = 0;
};

// `warmup`: the first requests sent that the statistics leave out (benchmark clients' warm-up requests:
// a closed loop's first wave arrives at once, which no steady state repeats); throughput still counts
// the whole run.
LoadPoint summarize(const SimResult& r, const std::string& gpu, const Load& load, const Slo& slo, int64_t kv_blocks,
                    int64_t block_size, int64_t warmup = 0);

// The JSON object of a load point (docs/serve.md): inputs given in `inputs` are merged in first.
nlohmann::json load_point_json(const LoadPoint& p, const Slo& slo, const nlohmann::json& inputs);
void write_table(const std::vector<LoadPoint>& pts, std::ostream& os);
void write_csv(const std::vector<LoadPoint>& pts, std::ostream& os);
// One row per request of each load point: gpu, load, input/output tokens, arrival, TTFT, ITL, end-to-end.
void write_per_request(const std::vector<std::pair<LoadPoint, SimResult>>& runs, std::ostream& os);

}  // namespace kcast::serve
