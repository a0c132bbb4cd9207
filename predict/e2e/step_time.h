// End-to-end step time from a trace's timeline: replays the measured launch sequence with the
// target's kernel times.
//
// The trace gives each kernel a start time and a stream. Replay walks kernels in measured start order
// and anchors each one to the latest event the trace shows before it started: the end of the last
// kernel (on any stream) that had finished by then (within 1 µs: timestamps are rounded and stream
// clocks skew), the end of the previous kernel on its own stream, or the start of the previous
// launch, whichever is latest. What separates the anchor from the kernel's start is host time (launch overhead, CPU
// work, synchronization) and is kept as measured; the anchor itself moves with the target's times.
// So a kernel queued behind its predecessor starts when that predecessor ends on the target, a
// kernel launched after a host gap keeps its gap, and a kernel on another stream that waited for an
// event (a collective after a layer's compute) starts when the kernel it waited for ends. In addition
//   * a kernel never starts before the previous kernel on its stream ends (an overlap the trace
//     shows, e.g. clock skew, is kept as is), and
//   * launches keep their order: no kernel starts before the one launched before it.
// Kernels on different streams overlap as they did. Step time = last replayed end - first start.
// Replaying unchanged times reproduces the trace exactly.
// Rows without start_us are not on the timeline: their count * time is added serially.
// With CUDA graphs, positive host gaps vanish (a graph issues the next kernel without the host).
// `count` > 1 on a timed row occupies its stream for count back-to-back invocations.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "model/kernel_rows.h"

namespace kcast {

// Rows with a known start_us, in start order (ties by row order).
std::vector<uint32_t> timeline_order(const KernelRows& rows);

struct ReplayOptions {
  bool cuda_graph = false;
  // Positive host gaps (the time between a kernel and the event it waited for: launch overhead, host
  // work, synchronization) times this: the walls study's host wall halves them.
  double host_gap_scale = 1.0;
};

// The rows replay_step_time reads, packed once per workload: a million-row trace is replayed once per
// target GPU, and reading each row's start, count, duration and stream out of its Kernel (hundreds of
// bytes apart) made the replay wait on memory.
struct ReplayTimeline {
  struct Entry {
    double start_us, count, duration_us;  // duration_us: NaN where not measured
    int32_t stream;                       // the row's stream, numbered densely in order of appearance
    uint32_t row;
  };
  std::vector<Entry> timed;                           // rows with start_us, in start order
  int32_t streams = 0;                                // distinct streams among them
  std::vector<std::pair<uint32_t, double>> untimed;   // rows without: (row, count)
  // Where every timed row is measured, the events each launch is anchored to are the trace's, not
  // the target's: per timed entry, the entry whose end is the latest measured end before its start
  // and the previous entry on its stream (-1: none). Empty otherwise (replayed event by event).
  std::vector<int32_t> last_end, stream_prev;
};
// Empty (no untimed list either) when no row is timed: there is nothing to replay, the step is the rows'
// sum (replay_step_time over rows computes it; over such a timeline it is 0).
ReplayTimeline replay_timeline(const KernelRows& rows, const std::vector<uint32_t>& order);
// The rows in start order, packed (the same as replay_timeline(rows, timeline_order(rows))).
ReplayTimeline replay_timeline(const KernelRows& rows);

// `time_us[r]`: the target time of one invocation of row r. Measured busy time of a row is
// count * duration_us where measured, else count * time_us[r] (no better estimate of where it ended).
// Returns the step time: replayed span of the timeline plus the untimed rows' count * time.
double replay_step_time(const KernelRows& rows, const std::vector<uint32_t>& order,
                        const std::vector<double>& time_us, const ReplayOptions& opt = {});
double replay_step_time(const ReplayTimeline& timeline, const std::vector<double>& time_us,
                        const ReplayOptions& opt = {});

// The measured step: span of the trace (first start to last end) plus the untimed rows' measured
// count * duration_us. NaN when some row lacks duration_us.
double measured_step_time(const KernelRows& rows, const std::vector<uint32_t>& order);
// The same from the packed timeline of `rows`.
double measured_step_time(const ReplayTimeline& timeline, const KernelRows& rows);

}  // namespace kcast
