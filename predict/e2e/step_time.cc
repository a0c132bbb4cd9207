#include "predict/e2e/step_time.h"

#include <algorithm>
#include <numeric>
#include <climits>
#include <cstdint>
#include <queue>
#include <utility>

namespace kcast {

std::vector<uint32_t> timeline_order(const KernelRows& rows) {
  std::vector<uint32_t> order;
  order.reserve(rows.size());  // grown by doubling, a million rows moved and faulted in 24 MB
  for (size_t r = 0; r < rows.size(); ++r)
    if (known(rows.start_us(r))) order.push_back(uint32_t(r));
  // Traces are usually already sorted; check before paying for a sort.
  auto before = [&](uint32_t a, uint32_t b) { return rows.start_us(a) < rows.start_us(b); };
  if (!std::is_sorted(order.begin(), order.end(), before)) std::stable_sort(order.begin(), order.end(), before);
  return order;
}

namespace {

// A point of the timeline: where it is in the trace and where it is in the replay.
struct Event {
  double measured = 0, replay = 0;
};

// The last kernel end on a stream, by its dense number (ReplayTimeline::Entry::stream).
struct StreamState {
  bool seen = false;
  Event end;
};

// `ref` shifted by the trace's distance from `ref` to `s`; when the replay has not moved `ref`,
// exactly `s` (so an identity replay is exact whatever the rounding).
double shifted(const Event& ref, double s, double gap) { return ref.replay == ref.measured ? s : ref.replay + gap; }

constexpr double kEventSlackUs = 1.0;

double measured_end(const ReplayTimeline::Entry& e, double time_us) {
  return e.start_us + e.count * (known(e.duration_us) ? e.duration_us : time_us);
}

// Where a launch starts in the replay, from the events the trace shows before it (see the header):
// the latest kernel end, the previous launch's start and the end of its stream's previous kernel
// (null: the first on its stream).
inline double replayed_start(double s, const Event& last_end, const Event& prev_start, const Event* stream_end,
                             const ReplayOptions& opt) {
  const Event* anchor = last_end.measured > prev_start.measured ? &last_end : &prev_start;
  if (stream_end && stream_end->measured > anchor->measured) anchor = stream_end;  // queued behind its predecessor
  const double gap = s - anchor->measured;
  double start = opt.cuda_graph && gap > 0                   ? anchor->replay
                 : gap > 0 && opt.host_gap_scale != 1.0 ? anchor->replay + gap * opt.host_gap_scale
                                                         : shifted(*anchor, s, gap);
  if (stream_end) {
    const double overlap = std::min(0.0, s - stream_end->measured);
    start = std::max(start, overlap < 0 ? shifted(*stream_end, s, overlap) : stream_end->replay);
  }
  return std::max(start, prev_start.replay);
}

// The anchors of a fully measured timeline, found once: the same sweep as the replay's, over the
// measured ends alone (the same heap operations in the same order, so ties resolve alike).
void plan_anchors(ReplayTimeline& t) {
  for (const auto& e : t.timed)
    if (!known(e.duration_us)) return;
  const size_t n = t.timed.size();
  if (n >= size_t(INT32_MAX)) return;
  t.last_end.assign(n, -1);
  t.stream_prev.assign(n, -1);
  struct Pending {
    double measured;
    int32_t entry;
  };
  auto later = [](const Pending& a, const Pending& b) { return a.measured > b.measured; };
  std::priority_queue<Pending, std::vector<Pending>, decltype(later)> pending(later);
  std::vector<int32_t> stream_last(size_t(t.streams), -1);  // per stream, its latest entry
  int32_t last = -1;
  for (size_t i = 0; i < n; ++i) {
    const ReplayTimeline::Entry& k = t.timed[i];
    while (!pending.empty() && pending.top().measured <= k.start_us + kEventSlackUs) {
      last = pending.top().entry;
      pending.pop();
    }
    t.last_end[i] = last;
    t.stream_prev[i] = std::exchange(stream_last[size_t(k.stream)], int32_t(i));
    pending.push({measured_end(k, 0.0), int32_t(i)});
  }
}

// The replay of a planned timeline: no heap, no stream search; each launch's end kept for the
// launches anchored to it.
double replay_planned(const ReplayTimeline& tl, const std::vector<double>& time_us, const ReplayOptions& opt) {
  const size_t n = tl.timed.size();
  thread_local std::vector<double> replay_end;  // this thread's, used again for its next target (predictor.cc)
  replay_end.resize(n);
  const double t0 = tl.timed.front().start_us;
  Event prev_start{t0, t0};
  double span_end = t0;
  for (size_t i = 0; i < n; ++i) {
    const ReplayTimeline::Entry& k = tl.timed[i];
    const int32_t le = tl.last_end[i], sp = tl.stream_prev[i];
    const Event last_end = le >= 0 ? Event{measured_end(tl.timed[size_t(le)], 0.0), replay_end[size_t(le)]}
                                   : Event{-1e300, -1e300};
    const Event stream_end = sp >= 0 ? Event{measured_end(tl.timed[size_t(sp)], 0.0), replay_end[size_t(sp)]} : Event{};
    const double start = replayed_start(k.start_us, last_end, prev_start, sp >= 0 ? &stream_end : nullptr, opt);
    replay_end[i] = start + k.count * time_us[k.row];
    prev_start = {k.start_us, start};
    span_end = std::max(span_end, replay_end[i]);
  }
  return span_end - t0;
}

}  // namespace

ReplayTimeline replay_timeline(const KernelRows& rows) { return replay_timeline(rows, timeline_order(rows)); }

ReplayTimeline replay_timeline(const KernelRows& rows, const std::vector<uint32_t>& order) {
  ReplayTimeline t;
  t.timed.reserve(order.size());
  // Streams are only ever compared: numbered densely they pack into 4 bytes. Few per trace.
  std::vector<int64_t> streams;
  int64_t last_stream = 0;
  int32_t last_id = -1;
  for (uint32_t r : order) {
    const int64_t stream = rows.stream(r);
    if (last_id < 0 || stream != last_stream) {
      auto it = std::find(streams.begin(), streams.end(), stream);
      if (it == streams.end()) it = streams.insert(it, stream);
      last_stream = stream, last_id = int32_t(it - streams.begin());
    }
    t.timed.push_back({rows.start_us(r), rows.count(r), rows.duration_us(r), last_id, r});
  }
  t.streams = int32_t(streams.size());
  // Without a timed row there is nothing to replay (the step is the rows' sum): no list of them all.
  if (t.timed.empty()) return t;
  for (size_t r = 0; r < rows.size(); ++r)
    if (!known(rows.start_us(r))) t.untimed.emplace_back(uint32_t(r), rows.count(r));
  plan_anchors(t);
  return t;
}

double replay_step_time(const KernelRows& rows, const std::vector<uint32_t>& order,
                        const std::vector<double>& time_us, const ReplayOptions& opt) {
  if (order.empty()) {  // nothing timed: the rows' sum
    double sum = 0;
    for (size_t r = 0; r < rows.size(); ++r) sum += rows.count(r) * time_us[r];
    return sum;
  }
  return replay_step_time(replay_timeline(rows, order), time_us, opt);
}

double replay_step_time(const ReplayTimeline& timeline, const std::vector<double>& time_us, const ReplayOptions& opt) {
  double untimed = 0;
  for (const auto& [r, count] : timeline.untimed) untimed += count * time_us[r];
  if (timeline.timed.empty()) return untimed;
  if (!timeline.last_end.empty()) return replay_planned(timeline, time_us, opt) + untimed;

  std::vector<StreamState> streams(size_t(timeline.streams));
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
    StreamState& st = streams[size_t(k.stream)];
    const double start = replayed_start(s, last_end, prev_start, st.seen ? &st.end : nullptr, opt);
    const double t = time_us[k.row];
    const Event end{measured_end(k, t), start + k.count * t};
    st = {true, end};
    pending.push(end);
    prev_start = {s, start};
    span_end = std::max(span_end, end.replay);
  }
  return (span_end - t0) + untimed;
}

double measured_step_time(const ReplayTimeline& timeline, const KernelRows& rows) {
  // The untimed rows in row order, the ends in start order.
  double untimed = 0;
  for (size_t r = 0; r < rows.size(); ++r)
    if (!known(rows.duration_us(r))) return kUnknown;
  for (const auto& [r, count] : timeline.untimed) untimed += rows.count(r) * rows.duration_us(r);
  if (timeline.timed.empty()) return untimed;
  const double t0 = timeline.timed.front().start_us;
  double end = t0;
  for (const auto& e : timeline.timed) end = std::max(end, e.start_us + e.count * e.duration_us);
  return (end - t0) + untimed;
}

double measured_step_time(const KernelRows& rows, const std::vector<uint32_t>& order) {
  return measured_step_time(replay_timeline(rows, order), rows);
}

}  // namespace kcast
