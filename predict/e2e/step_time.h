// End-to-end step time from a trace's timeline: replays the measured launch sequence with the
// target's kernel times.
//
// The trace gives each kernel a start time and a stream. Replay walks kernels in measured start order:
//   * on its stream, a kernel starts when the previous kernel on that stream ends on the target, plus
//     the idle gap the trace shows there (s_i - e_prev). Idle gaps are host time (launch overhead,
//     CPU work, synchronization) and do not scale with the GPU; a negative gap (overlap in the trace)
//     is kept too, so the replay of unchanged times reproduces the trace;
//   * the first kernel of a stream starts at the previous launch's replayed start plus the measured
//     offset between the two launches;
//   * launches keep their order: no kernel starts before the one launched before it.
// Kernels on different streams overlap as they did. Step time = last replayed end - first start.
// Rows without start_us are not on the timeline: their count * time is added serially.
// With CUDA graphs, positive idle gaps vanish (a graph issues the next kernel without the host).
// `count` > 1 on a timed row occupies its stream for count back-to-back invocations.
#pragma once
#include <cstdint>
#include <vector>

#include "model/kernel.h"

namespace kcast {

// Rows with a known start_us, in start order (ties by row order).
std::vector<uint32_t> timeline_order(const std::vector<Kernel>& rows);

struct ReplayOptions {
  bool cuda_graph = false;
};

// `time_us[r]`: the target time of one invocation of row r. Measured busy time of a row is
// count * duration_us where measured, else count * time_us[r] (no better estimate of where it ended).
// Returns the step time: replayed span of the timeline plus the untimed rows' count * time.
double replay_step_time(const std::vector<Kernel>& rows, const std::vector<uint32_t>& order,
                        const std::vector<double>& time_us, const ReplayOptions& opt = {});

// The measured step: span of the trace (first start to last end) plus the untimed rows' measured
// count * duration_us. NaN when some row lacks duration_us.
double measured_step_time(const std::vector<Kernel>& rows, const std::vector<uint32_t>& order);

}  // namespace kcast
