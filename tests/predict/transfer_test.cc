// Transfer-mode arithmetic (model/transfer.h) on hand-built numbers.
#include "model/transfer.h"

#include <gtest/gtest.h>

namespace kcast {
namespace {

TEST(Transfer, ScalesMeasuredDurationByModelRatio) {
  // Model says the target is 2.5x faster for this kernel: 100 us measured -> 40 us.
  EXPECT_DOUBLE_EQ(transfer_measurement(100.0, 0.0, 0.0, 50.0, 20.0, 2.5), 40.0);
  // And 3x slower on a smaller GPU.
  EXPECT_DOUBLE_EQ(transfer_measurement(100.0, 0.0, 0.0, 10.0, 30.0, 2.5), 300.0);
}

TEST(Transfer, SameModelTimeReproducesMeasurementExactly) {
  for (double d : {0.3, 1.7, 2.5, 3.14159, 97.123456789, 12345.678})
    for (double m : {1.0, 2.6, 77.7})
      EXPECT_EQ(transfer_measurement(d, 0.0, 0.0, m, m, 2.5), d) << d << " " << m;
}

TEST(Transfer, NeverDropsBelowTargetFloor) {
  // 3 us measured, model ratio 0.1 would give 0.3 us: held at the target's 2.5 us floor.
  EXPECT_DOUBLE_EQ(transfer_measurement(3.0, 0.0, 0.0, 10.0, 1.0, 2.5), 2.5);
  // A kernel measured faster than the target's floor keeps its measurement as the floor.
  EXPECT_DOUBLE_EQ(transfer_measurement(1.5, 0.0, 0.0, 2.5, 2.0, 2.0), 1.5);
}

TEST(Transfer, EachRigKeepsItsOwnContextFloor) {
  // Source rig: 30 us framework floor + 10 us GPU time. Target rig: 15 us floor, GPU twice as fast:
  // the target's measurement is 15 + 5 = 20 us.
  EXPECT_DOUBLE_EQ(transfer_measurement(40.0, 30.0, 15.0, 10.0, 5.0, 2.5), 20.0);
  // Same GPU, same rig: the measurement itself, context and all.
  EXPECT_EQ(transfer_measurement(41.3, 30.0, 30.0, 11.3, 11.3, 2.5), 41.3);
  // A floor-dominated row moves by the ratio of the rigs' floors, never below the target's.
  EXPECT_DOUBLE_EQ(transfer_measurement(33.0, 30.0, 15.0, 3.0, 3.0, 2.5), 18.0);
  EXPECT_DOUBLE_EQ(transfer_measurement(31.0, 30.0, 15.0, 1.0, 1.0, 2.5), 17.5);  // 2.5 floor + 15
}

TEST(Transfer, ContextFloorRemovedBeforeScaling) {
  EXPECT_DOUBLE_EQ(measured_gpu_time(30.0, 18.0, 2.5), 12.0);
  // Measured below the context floor: the GPU part is at least the source's launch floor.
  EXPECT_DOUBLE_EQ(measured_gpu_time(10.0, 18.0, 2.5), 2.5);
  // ... but never more than the measurement itself.
  EXPECT_DOUBLE_EQ(measured_gpu_time(10.0, 18.0, 20.0), 10.0);
  EXPECT_DOUBLE_EQ(measured_gpu_time(10.0, 0.0, 2.5), 10.0);
}

TEST(Transfer, CudaGraphShrinksLaunchFloorToGraphInterval) {
  const double floor = 2.5, graph = kGraphLaunchFraction * 2.5;
  EXPECT_DOUBLE_EQ(graph_time(100.0, floor), 100.0 - (floor - graph));
  EXPECT_DOUBLE_EQ(graph_time(2.5, floor), graph);
  // Already below the graph interval: unchanged.
  EXPECT_DOUBLE_EQ(graph_time(1.0, floor), 1.0);
}

}  // namespace
}  // namespace kcast
