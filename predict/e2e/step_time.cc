#include "predict/e2e/step_time.h"

#include <algorithm>
#include <numeric>
#include <queue>

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

// A point of the timeline: where it is in the trace and where it is in the replay.
struct Event {
  double measured = 0, replay = 0;
};

struct StreamState {
  int64_t id;
  Event end;
};

// Few streams per trace: a linear scan over a small vector beats a map.
StreamState* find_stream(std::vector<StreamState>& s, int64_t id) {
  for (auto& x : s)
    if (x.id == id) return &x;
  return nullptr;
}

// `ref` shifted by the trace's distance from `ref` to `s`; when the replay has not moved `ref`,
// exactly `s` (so an identity replay is exact whatever the rounding).
double shifted(const Event& ref, double s, double gap) { return ref.replay == ref.measured ? s : ref.replay + gap; }

constexpr double kEventSlackUs = 1.0;

}  // namespace

ReplayTimeline replay_timeline(const std::vector<Kernel>& rows, const std::vector<uint32_t>& order) {
  ReplayTimeline t;
  t.timed.reserve(order.size());
  for (uint32_t r : order) {
    const Kernel& k = rows[r];
    t.timed.push_back({k.start_us, k.count, k.duration_us, k.stream, r});
  }
  for (size_t r = 0; r < rows.size(); ++r)
    if (!known(rows[r].start_us)) t.untimed.emplace_back(uint32_t(r), rows[r].count);
  return t;
}

double replay_step_time(const std::vector<Kernel>& rows, const std::vector<uint32_t>& order,
                        const std::vector<double>& time_us, const ReplayOptions& opt) {
  return replay_step_time(replay_timeline(rows, order), time_us, opt);
}

double replay_step_time(const ReplayTimeline& timeline, const std::vector<double>& time_us, const ReplayOptions& opt) {
  double untimed = 0;
  for (const auto& [r, count] : timeline.untimed) untimed += count * time_us[r];
  if (timeline.timed.empty()) return untimed;

  std::vector<StreamState> streams;
  // Kernel ends not yet passed by the sweep, earliest measured end on top.
  auto later = [](const Event& a, const Event& b) { return a.measured > b.measured; };
  std::priority_queue<Event, std::vector<Event>, decltype(later)> pending(later);
  const double t0 = timeline.timed.front().start_us;
  Event last_end{-1e300, -1e300};  // latest kernel end at or before the current start
  Event prev_start{t0, t0};
  double span_end = t0;
  for (const ReplayTimeline::Entry& k : timeline.timed) {
    const double s = k.start_us;
    // Ends up to kEventSlackUs after the start count as "before": timestamps are rounded (integer
    // µs in older Kineto traces) and stream clocks skew, so a kernel that waited for another one's
    // end often appears to start a hair before it.
    while (!pending.empty() && pending.top().measured <= s + kEventSlackUs) {
      last_end = pending.top();
      pending.pop();
    }
    StreamState* st = find_stream(streams, k.stream);
    const Event* anchor = last_end.measured > prev_start.measured ? &last_end : &prev_start;
    if (st && st->end.measured > anchor->measured) anchor = &st->end;  // queued behind its predecessor
    const double gap = s - anchor->measured;
    double start = opt.cuda_graph && gap > 0                   ? anchor->replay
                   : gap > 0 && opt.host_gap_scale != 1.0 ? anchor->replay + gap * opt.host_gap_scale
                                                           : shifted(*anchor, s, gap);
    if (st) {
      const double overlap = std::min(0.0, s - st->end.measured);
      start = std::max(start, overlap < 0 ? shifted(st->end, s, overlap) : st->end.replay);
    }
    start = std::max(start, prev_start.replay);
    const double t = time_us[k.row];
    const double busy_replay = k.count * t;
    const double busy_measured = k.count * (known(k.duration_us) ? k.duration_us : t);
    const Event end{s + busy_measured, start + busy_replay};
    if (st) st->end = end;
    else streams.push_back({k.stream, end});
    pending.push(end);
    prev_start = {s, start};
    span_end = std::max(span_end, end.replay);
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
