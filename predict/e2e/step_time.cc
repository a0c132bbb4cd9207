#include "predict/e2e/step_time.h"

#include <algorithm>
#include <numeric>

namespace kcast {

std::vector<uint32_t> timeline_order(const std::vector<Kernel>& rows) {
  std::vector<uint32_t> order;
  for (size_t r = 0; r < rows.size(); ++r)
    if (known(rows[r].start_us)) order.push_back(uint32_t(r));
  // Traces are usually already sorted; check before paying for a sort.
  auto before = [&](uint32_t a, uint32_t b) { return rows[a].start_us < rows[b].start_us; };
  if (!std::is_sorted(order.begin(), order.end(), before)) std::stable_sort(order.begin(), order.end(), before);
  return order;
}

namespace {

struct StreamState {
  int64_t id;
  double measured_end, replay_end;
};

// Few streams per trace: a linear scan over a small vector beats a map.
StreamState* find_stream(std::vector<StreamState>& s, int64_t id) {
  for (auto& x : s)
    if (x.id == id) return &x;
  return nullptr;
}

}  // namespace

double replay_step_time(const std::vector<Kernel>& rows, const std::vector<uint32_t>& order,
                        const std::vector<double>& time_us, const ReplayOptions& opt) {
  double untimed = 0;
  for (size_t r = 0; r < rows.size(); ++r)
    if (!known(rows[r].start_us)) untimed += rows[r].count * time_us[r];
  if (order.empty()) return untimed;

  std::vector<StreamState> streams;
  const double t0 = rows[order[0]].start_us;
  double prev_measured_start = t0, prev_replay_start = t0, span_end = t0;
  for (uint32_t r : order) {
    const Kernel& k = rows[r];
    const double s = k.start_us;
    const double busy_replay = k.count * time_us[r];
    const double busy_measured = k.count * (known(k.duration_us) ? k.duration_us : time_us[r]);
    StreamState* st = find_stream(streams, k.stream);
    double ref_measured, ref_replay;  // where the gap is measured from, in the trace and in the replay
    if (st) ref_measured = st->measured_end, ref_replay = st->replay_end;
    else ref_measured = prev_measured_start, ref_replay = prev_replay_start;
    double gap = s - ref_measured;
    double start;
    if (opt.cuda_graph && gap > 0) start = ref_replay;
    // Unchanged reference: take the trace's start itself, so an identity replay is exact.
    else start = ref_replay == ref_measured ? s : ref_replay + gap;
    start = std::max(start, prev_replay_start);
    const double end = start + busy_replay;
    if (st) st->measured_end = s + busy_measured, st->replay_end = end;
    else streams.push_back({k.stream, s + busy_measured, end});
    prev_measured_start = s;
    prev_replay_start = start;
    span_end = std::max(span_end, end);
  }
  return (span_end - t0) + untimed;
}

double measured_step_time(const std::vector<Kernel>& rows, const std::vector<uint32_t>& order) {
  double untimed = 0;
  for (const Kernel& k : rows) {
    if (!known(k.duration_us)) return kUnknown;
    if (!known(k.start_us)) untimed += k.count * k.duration_us;
  }
  if (order.empty()) return untimed;
  const double t0 = rows[order[0]].start_us;
  double end = t0;
  for (uint32_t r : order) end = std::max(end, rows[r].start_us + rows[r].count * rows[r].duration_us);
  return (end - t0) + untimed;
}

}  // namespace kcast
