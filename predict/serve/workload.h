// The requests a serving run is asked to handle, and when they arrive: fixed lengths or a dataset file,
// in a closed loop of clients or an open loop at a request rate.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kcast::serve {

struct Request {
  int64_t input = 0, output = 0;
  double arrival_s = 0;  // open loop: when it is sent; closed loop: set by the simulation
  // Its prompt's keys and values arrive with it and its first token is already sampled (a decode
  // worker of a disaggregated deployment, predict/serve/disaggregated.h): it only decodes.
  bool prefilled = false;
};

// How the requests are sent.
struct Load {
  // concurrency > 0: a closed loop of that many clients, each sending its next request when its last
  // one finishes (AIPerf / genai-perf, `vllm bench serve --max-concurrency`). Otherwise an open loop:
  // `rate` requests/s (infinite: every request at t = 0, the engines' offline max-throughput mode),
  // Poisson or evenly spaced; or the dataset's own arrival times when `dataset_arrivals`.
  int64_t concurrency = 0;
  double rate = 0;
  bool infinite_rate = false;
  bool poisson = true;
  bool dataset_arrivals = false;
  // The label of the load point as given ("25", "inf", "4.5").
  std::string label;
};

// `n` requests of the same lengths.
std::vector<Request> fixed_requests(int64_t n, int64_t input, int64_t output);

// Requests from a CSV (header with input_tokens, output_tokens and optionally arrival_s) or JSONL
// file (one object a line with those keys), by extension: .csv, .jsonl / .json. A negative, zero or
// missing length is an InputError naming the file, line and column or key. `has_arrivals` says
// whether every row gave arrival_s.
std::vector<Request> read_dataset(const std::string& path, bool* has_arrivals);
// The same from the file's text, `name` standing for the file (its extension picks the format: .csv,
// else JSONL).
std::vector<Request> parse_dataset(const std::string& text, const std::string& name, bool* has_arrivals);

// Sets open-loop arrival times: Poisson (exponential gaps from a 64-bit Mersenne twister seeded
// `seed`, the same on every platform) or evenly spaced at `rate`, or all at 0 for an infinite rate.
// A closed loop leaves them (the simulation sets them).
void assign_arrivals(std::vector<Request>& reqs, const Load& load, uint64_t seed);

}  // namespace kcast::serve
