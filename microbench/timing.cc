// Timer implementation: CUDA events around batches of launches, stopping on a noise criterion.
#include "microbench/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace kcast::microbench {

Timer::Timer(const BenchContext& ctx) : flush_(2 * ctx.l2_bytes()) {
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreate(&start_), "cudaEventCreate");
  check(cudaEventCreate(&stop_), "cudaEventCreate");
}

Timer::~Timer() {
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (stream_) cudaStreamDestroy(stream_);
}

void Timer::flush_l2() {
  // Writing twice the L2 size evicts whatever earlier work left there. A changing byte value keeps the
  // driver from treating the memset as a no-op.
  check(cudaMemsetAsync(flush_.get(), int(++flush_byte_ & 0xff), flush_.bytes(), stream_),
        "L2 flush");
}

double Timer::elapsed(const std::function<void(cudaStream_t)>& launch, int n) {
  check(cudaEventRecord(start_, stream_), "cudaEventRecord");
  for (int i = 0; i < n; ++i) launch(stream_);
  check(cudaGetLastError(), "kernel launch");
  check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
  check(cudaEventSynchronize(stop_), "kernel execution");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
  return double(ms) * 1e-3;
}

double Timer::probe(const std::function<void(cudaStream_t)>& launch) {
  elapsed(launch, 1);  // warm-up: first-launch costs (module load, page mapping, clocks)
  return elapsed(launch, 1);
}

Timing Timer::measure(const std::function<void(cudaStream_t)>& launch, const TimingOptions& opt) {
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  if (opt.cold) flush_l2();
  const double one = elapsed(launch, 1);  // warm-up, and a first estimate of one launch
  int batch = 1;
  if (!opt.cold && one > 0)
    batch = int(std::clamp(std::ceil(opt.min_sample_ms * 1e-3 / one), 1.0, 10000.0));

  std::vector<double> samples;
  double mean = 0, sd = 0;
  for (;;) {
    if (opt.cold) flush_l2();
    samples.push_back(elapsed(launch, batch) / batch);
    const double n = double(samples.size());
    mean = 0;
    for (double s : samples) mean += s;
    mean /= n;
    double var = 0;
    for (double s : samples) var += (s - mean) * (s - mean);
    sd = samples.size() > 1 ? std::sqrt(var / (n - 1)) : 0;
    const double wall = std::chrono::duration<double>(clock::now() - t0).count();
    if (int(samples.size()) >= opt.min_samples && sd <= opt.target_spread * mean) break;
    if (int(samples.size()) >= opt.max_samples) break;
    if (wall > opt.max_seconds && int(samples.size()) >= 2) break;
  }
  return Timing{mean, mean > 0 ? sd / mean : 0, int(samples.size())};
}

long scaled_iters(long probe_iters, double probe_s, double target_s, long min_iters, long max_iters) {
  if (probe_s <= 0) return std::clamp(probe_iters * 16, min_iters, max_iters);
  const double scaled = double(probe_iters) * target_s / probe_s;
  return std::clamp(long(scaled), min_iters, max_iters);
}

}  // namespace kcast::microbench
