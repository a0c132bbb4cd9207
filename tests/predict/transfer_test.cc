// Transfer-mode arithmetic (model/transfer.h) on hand-built numbers.
#include "model/transfer.h"

#include <gtest/gtest.h>

#include <cmath>

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
  // Additive blend (q = 1): the interval replaces the floor in every kernel's sum.
  EXPECT_DOUBLE_EQ(graph_time(100.0, floor, 1.0), 100.0 - (floor - graph));
  // The fitted smooth maximum (q = 8): a kernel of work w took (floor^8 + w^8)^(1/8) and replays in
  // (graph^8 + w^8)^(1/8), which for long kernels is w.
  for (double w : {0.5, 2.0, 3.0, 10.0, 100.0}) {
    const double t = std::pow(std::pow(floor, 8) + std::pow(w, 8), 1.0 / 8);
    EXPECT_NEAR(graph_time(t, floor, 8.0), std::pow(std::pow(graph, 8) + std::pow(w, 8), 1.0 / 8), 1e-9 * t) << w;
  }
  // At the floor (no work) the interval; already below the graph interval: unchanged.
  EXPECT_DOUBLE_EQ(graph_time(2.5, floor, 8.0), graph);
  EXPECT_DOUBLE_EQ(graph_time(1.0, floor, 8.0), 1.0);
  // A smaller floor never lengthens a replayed kernel of the same work.
  for (double w : {0.5, 2.0, 10.0}) {
    auto replay = [&](double f) { return graph_time(std::pow(std::pow(f, 8) + std::pow(w, 8), 1.0 / 8), f, 8.0); };
    EXPECT_LE(replay(floor / 2), replay(floor) * (1 + 1e-12)) << w;
  }
}

TEST(Transfer, AMeasuredKernelReplaysOnItsOwnGpuThenMoves) {
  const double q = 8;
  auto wf = [&](double f, double w) { return std::pow(std::pow(f, q) + std::pow(w, q), 1.0 / q); };
  // Same GPU: the measurement's own replay.
  EXPECT_DOUBLE_EQ(transferred_graph_time(2.4, 2.5, wf(2.5, 2.3), wf(2.5, 2.3), 2.5, q), graph_time(2.4, 2.5, q));
  // A kernel measured just under the floor, its model work 2.3 us: halving the target's floor shortens
  // its replay (graphing the transferred time instead had lengthened it).
  const double base = transferred_graph_time(2.4, 2.5, wf(2.5, 2.3), wf(2.5, 2.3), 2.5, q);
  const double half = transferred_graph_time(2.4, 2.5, wf(2.5, 2.3), wf(1.25, 2.3), 1.25, q);
  EXPECT_LE(half, base);
  // A long kernel moves by the model's ratio, as without graphs.
  EXPECT_NEAR(transferred_graph_time(100.0, 2.5, wf(2.5, 80), wf(2.5, 40), 2.5, q), 50.0, 0.01);
}

TEST(Transfer, PersistentMeasurementKeepsTheShareOfTheLogDeviation) {
  // Measured 200 us where the model says 100: all of it kept, none of it, half of it (in log).
  EXPECT_EQ(persistent_measurement(200.0, 100.0, 1.0), 200.0);
  EXPECT_DOUBLE_EQ(persistent_measurement(200.0, 100.0, 0.0), 100.0);
  EXPECT_DOUBLE_EQ(persistent_measurement(200.0, 100.0, 0.5), 100.0 * std::sqrt(2.0));
  // Symmetric in log: 50 measured against 100 at half is 100 / sqrt(2).
  EXPECT_DOUBLE_EQ(persistent_measurement(50.0, 100.0, 0.5), 100.0 / std::sqrt(2.0));
  // Without a prediction the measurement stands.
  EXPECT_EQ(persistent_measurement(200.0, 0.0, 0.2), 200.0);
  // Monotone in the measurement: a slower source never predicts a faster target.
  double last = 0;
  for (double d : {10.0, 50.0, 99.0, 100.0, 101.0, 400.0}) {
    const double x = persistent_measurement(d, 100.0, 0.15);
    EXPECT_GT(x, last) << d;
    last = x;
  }
}

TEST(Transfer, OnlyGemmsAndConvolutionsAcrossComputeCapabilitiesLoseTheirDeviation) {
  ModelParams p;
  p[kGemmBiasPersistence] = 0.2;
  p[kConvBiasPersistence] = 0.7;
  GpuCaps v100, a100, a100_pcie;
  v100.compute_capability = "7.0";
  a100.compute_capability = a100_pcie.compute_capability = "8.0";
  EXPECT_DOUBLE_EQ(bias_persistence(KernelClass::gemm, v100, a100, p), 0.2);
  EXPECT_DOUBLE_EQ(bias_persistence(KernelClass::conv, a100, v100, p), 0.7);
  for (KernelClass c : {KernelClass::gemm, KernelClass::conv}) {
    EXPECT_EQ(bias_persistence(c, a100, a100_pcie, p), 1.0) << to_string(c);
    EXPECT_EQ(bias_persistence(c, a100, a100, p), 1.0) << to_string(c);
  }
  for (KernelClass c : {KernelClass::attention, KernelClass::elementwise, KernelClass::normalization})
    EXPECT_EQ(bias_persistence(c, v100, a100, p), 1.0) << to_string(c);
  // Out of range in a hand-edited model.json: held to [0, 1].
  p[kGemmBiasPersistence] = 1.7;
  EXPECT_EQ(bias_persistence(KernelClass::gemm, v100, a100, p), 1.0);
  p[kGemmBiasPersistence] = -0.5;
  EXPECT_EQ(bias_persistence(KernelClass::gemm, v100, a100, p), 0.0);
}

}  // namespace
}  // namespace kcast
