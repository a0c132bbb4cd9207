// Timer: times GPU work with CUDA events the way nvbench does. Warm-up first; then samples until the
// relative spread (stddev/mean) falls under a target or a time cap is hit, so quiet GPUs finish fast
// and noisy ones are not measured forever. Cold measurements flush L2 before every sample by writing a
// buffer twice the L2 size, so the timed kernel finds none of its data cached.
#pragma once
#include <functional>

#include "microbench/bench_context.h"

namespace kcast::microbench {

struct TimingOptions {
  bool cold = false;             // flush L2 before each sample (then one launch per sample)
  double min_sample_ms = 0.5;    // warm: batch launches until one sample lasts about this long
  int min_samples = 5;
  int max_samples = 400;
  double max_seconds = 0.5;      // wall-clock cap for the whole measurement
  double target_spread = 0.02;   // stop once stddev/mean is below this
};

struct Timing {
  double seconds = 0;  // mean time of one launch
  double spread = 0;   // stddev/mean over samples
  int samples = 0;
};

class Timer {
 public:
  explicit Timer(const BenchContext& ctx);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  // Times `launch`, which enqueues one unit of work on the given stream.
  Timing measure(const std::function<void(cudaStream_t)>& launch, const TimingOptions& opt);
  // One launch, timed once after one warm-up; used to size work before the real measurement.
  double probe(const std::function<void(cudaStream_t)>& launch);
  void flush_l2();
  cudaStream_t stream() const { return stream_; }

 private:
  double elapsed(const std::function<void(cudaStream_t)>& launch, int n);
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  DeviceBuffer flush_;
  unsigned flush_byte_ = 0;
};

// Scales a probe's iteration count so that one launch lasts about target_s.
long scaled_iters(long probe_iters, double probe_s, double target_s, long min_iters = 1,
                  long max_iters = 1L << 30);

}  // namespace kcast::microbench
