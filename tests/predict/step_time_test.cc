// Timeline replay (predict/e2e/step_time.h) on hand-built traces.
#include "predict/e2e/step_time.h"

#include <gtest/gtest.h>

#include <random>

namespace kcast {
namespace {

Kernel at(double start, double dur, int64_t stream, double count = 1) {
  Kernel k;
  k.name = "k";
  k.start_us = start;
  k.duration_us = dur;
  k.stream = stream;
  k.count = count;
  return k;
}

TEST(StepTime, WithoutStartTimesStepIsKernelSum) {
  std::vector<Kernel> rows = {at(kUnknown, 10, -1, 3), at(kUnknown, 5, -1)};
  EXPECT_DOUBLE_EQ(replay_step_time(rows, timeline_order(rows), {4.0, 2.0}), 3 * 4.0 + 2.0);
}

TEST(StepTime, HostGapsStayWhileKernelsScale) {
  // 0..10, idle 5 us (host), 15..25. Kernels twice as fast: 0..5, gap 5, 10..15.
  std::vector<Kernel> rows = {at(0, 10, 7), at(15, 10, 7)};
  EXPECT_DOUBLE_EQ(replay_step_time(rows, timeline_order(rows), {5.0, 5.0}), 15.0);
}

TEST(StepTime, QueuedKernelsStartWhenPredecessorEnds) {
  // Back to back in the trace (GPU-bound): the replay keeps them back to back.
  std::vector<Kernel> rows = {at(100, 50, 0), at(150, 50, 0), at(200, 50, 0)};
  EXPECT_DOUBLE_EQ(replay_step_time(rows, timeline_order(rows), {10.0, 10.0, 10.0}), 30.0);
}

TEST(StepTime, StreamsOverlap) {
  // Stream 0: 0..100. Stream 1 launched 10 us later: 10..60. Halved: stream 0 0..50, stream 1 10..35.
  std::vector<Kernel> rows = {at(0, 100, 0), at(10, 50, 1)};
  EXPECT_DOUBLE_EQ(replay_step_time(rows, timeline_order(rows), {50.0, 25.0}), 50.0);
  // Stream 1's kernel now the long one: 10..210.
  EXPECT_DOUBLE_EQ(replay_step_time(rows, timeline_order(rows), {50.0, 200.0}), 210.0);
}

TEST(StepTime, UnchangedTimesReproduceTheTraceExactly) {
  // Gaps, overlaps across streams, a small same-stream overlap (clock skew) and odd numbers.
  std::vector<Kernel> rows = {at(1000.125, 12.3, 0),  at(1013.7, 4.4, 0),     at(1014.1, 100.01, 1),
                              at(1018.0, 2.2, 0),     at(1020.05, 3.3, 0, 4), at(1119.9, 7.77, 1),
                              at(1119.95, 1.1, 0),    at(1500.5, 33.3, 2)};
  std::vector<double> same;
  for (const auto& k : rows) same.push_back(k.duration_us);
  const auto order = timeline_order(rows);
  EXPECT_EQ(replay_step_time(rows, order, same), measured_step_time(rows, order));
}

TEST(StepTime, TraceOrderNeedNotBeSorted) {
  std::vector<Kernel> rows = {at(15, 10, 7), at(0, 10, 7)};
  EXPECT_EQ(timeline_order(rows), (std::vector<uint32_t>{1, 0}));
  EXPECT_DOUBLE_EQ(replay_step_time(rows, timeline_order(rows), {5.0, 5.0}), 15.0);
}

TEST(StepTime, CudaGraphRemovesHostGaps) {
  std::vector<Kernel> rows = {at(0, 10, 7), at(15, 10, 7)};
  EXPECT_DOUBLE_EQ(replay_step_time(rows, timeline_order(rows), {5.0, 5.0}, ReplayOptions{true}), 10.0);
}

TEST(StepTime, UntimedRowsAddSerially) {
  std::vector<Kernel> rows = {at(0, 10, 0), at(kUnknown, 3, -1, 2)};
  EXPECT_DOUBLE_EQ(replay_step_time(rows, timeline_order(rows), {10.0, 3.0}), 16.0);
  EXPECT_DOUBLE_EQ(measured_step_time(rows, timeline_order(rows)), 16.0);
}

}  // namespace
}  // namespace kcast

namespace kcast {
namespace {

TEST(StepTime, KernelWaitingOnAnotherStreamFollowsIt) {
  // Stream 0: 0..100; stream 1 starts 3 us after it ends (an event wait plus launch): halved -> 53..58.
  std::vector<Kernel> rows = {at(0, 100, 0), at(103, 10, 1)};
  EXPECT_DOUBLE_EQ(replay_step_time(rows, timeline_order(rows), {50.0, 5.0}), 58.0);
}

TEST(StepTime, SporadicStreamDoesNotKeepOtherStreamsWorkAsGap) {
  // A collective stream used once per layer: its idle time is the compute stream's work, not host time.
  std::vector<Kernel> rows = {at(0, 100, 0), at(100, 10, 1), at(100, 100, 0), at(200, 10, 1)};
  EXPECT_DOUBLE_EQ(replay_step_time(rows, timeline_order(rows), {50.0, 5.0, 50.0, 5.0}), 105.0);
}

}  // namespace
}  // namespace kcast

namespace kcast {
namespace {

TEST(StepTime, RoundedTimestampsDoNotFreezeKernelTimes) {
  // Back to back, but the rounded start is 0.4 ns before the predecessor's end: halved -> ~10.
  std::vector<Kernel> rows = {at(0, 10.0004, 0), at(10.0, 10, 0), at(20.0003, 10, 0)};
  EXPECT_NEAR(replay_step_time(rows, timeline_order(rows), {5.0, 5.0, 5.0}), 15.0, 1e-3);
  // Another stream waited for stream 0, its clock 0.4 us behind: it follows stream 0's end.
  std::vector<Kernel> skew = {at(0, 100, 0), at(99.6, 10, 1)};
  EXPECT_NEAR(replay_step_time(skew, timeline_order(skew), {50.0, 5.0}), 54.6, 1e-9);
}

// A fully measured timeline is replayed from anchors found once (ReplayTimeline::last_end /
// stream_prev); it must give, bit for bit, what the event-by-event sweep gives on the same trace:
// random traces over three streams with overlaps, ties of measured ends, counts and untimed rows.
TEST(StepTime, PlannedAnchorsReplayExactlyAsTheEventSweep) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 40; ++trial) {
    std::vector<Kernel> rows;
    double t = 100;
    for (int i = 0; i < 300; ++i) {
      const double dur = u(rng) < 0.2 ? 5.0 : 1 + 20 * u(rng);  // repeated durations: tied ends
      rows.push_back(at(u(rng) < 0.03 ? kUnknown : t, dur, int64_t(rng() % 3), u(rng) < 0.1 ? 2 : 1));
      t += u(rng) < 0.5 ? 0.0 : (u(rng) < 0.5 ? 2.0 : 10 * u(rng));
    }
    std::vector<double> times(rows.size());
    for (double& x : times) x = 0.5 + 30 * u(rng);
    const ReplayTimeline planned = replay_timeline(rows, timeline_order(rows));
    ASSERT_EQ(planned.last_end.size(), planned.timed.size());
    ReplayTimeline swept = planned;
    swept.last_end.clear();
    swept.stream_prev.clear();
    for (const ReplayOptions& o : {ReplayOptions{}, ReplayOptions{true}, ReplayOptions{false, 0.5}})
      EXPECT_EQ(replay_step_time(planned, times, o), replay_step_time(swept, times, o)) << trial;
  }
}

// A timed row without a measured duration ends where the target's time says: no plan, the sweep.
TEST(StepTime, UnmeasuredTimedRowsAreSweptEventByEvent) {
  std::vector<Kernel> rows = {at(0, 10, 1), at(1, kUnknown, 2), at(20, 5, 1)};
  const ReplayTimeline t = replay_timeline(rows, timeline_order(rows));
  EXPECT_TRUE(t.last_end.empty());
  // The second row waits for nothing; the third was launched 10 us after the first ended.
  EXPECT_DOUBLE_EQ(replay_step_time(t, {4.0, 8.0, 2.0}), 16.0);
}

}  // namespace
}  // namespace kcast
