// What-if knobs (predict/whatif/knobs.h) and sweeps (predict/whatif/whatif.h).
#include "predict/whatif/knobs.h"

#include <gtest/gtest.h>

#include "model/error.h"
#include "predict/whatif/whatif.h"
#include "tests/input_error_of.h"
#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

using namespace kcast::testing;


TEST(Knobs, UnknownKnobIsAnErrorListingTheKnobs) {
  const std::string e = input_error_of([] { parse_knob("hbm_speed", "--set"); });
  EXPECT_NE(e.find("'--set'"), std::string::npos) << e;
  EXPECT_NE(e.find("hbm_speed"), std::string::npos) << e;
  for (const auto& k : kKnobs) EXPECT_NE(e.find(k.name), std::string::npos) << k.name;
}

TEST(Knobs, BadAssignmentsAreErrors) {
  EXPECT_NE(input_error_of([] { parse_knob_assignment("dram_bw", "--set"); }).find("KNOB=NUMBER"), std::string::npos);
  EXPECT_NE(input_error_of([] { parse_knob_assignment("dram_bw=fast", "--set"); }).find("not a number"), std::string::npos);
  EXPECT_NE(input_error_of([] { parse_knob_assignment("=3", "--set"); }).find("unknown knob"), std::string::npos);
  const auto [k, v] = parse_knob_assignment("l2_size=96", "--set");
  EXPECT_EQ(k, Knob::l2_size);
  EXPECT_EQ(v, 96.0);
  const GpuSpec& a100 = db().resolve("A100-SXM4-80GB");
  GpuCaps c = model().caps_for(a100);
  EXPECT_FALSE(input_error_of([&] { set_knob(c, Knob::dram_bw, -1, "--set"); }).empty());
  EXPECT_FALSE(input_error_of([&] { scale_knob(c, Knob::clock, 0, "--scale"); }).empty());
}

TEST(Knobs, SimpleKnobsSetTheirField) {
  const GpuSpec& spec = db().resolve("H100-SXM");
  GpuCaps c = model().caps_for(spec);
  set_knob(c, Knob::dram_bw, 5000, "--set");
  set_knob(c, Knob::l2_bw, 9000, "--set");
  set_knob(c, Knob::l2_size, 100, "--set");
  set_knob(c, Knob::launch_overhead, 1.25, "--set");
  EXPECT_EQ(c.dram_bw_gbps, 5000);
  EXPECT_EQ(c.l2_bw_gbps, 9000);
  EXPECT_EQ(c.l2_bytes, 100e6);
  EXPECT_EQ(c.launch_floor_us, 1.25);
  EXPECT_EQ(knob_value(c, Knob::l2_size), 100);
}

// The memory latency is the fitted cycle count at the GPU's clock: the knob reads and sets it in
// µs, a faster clock shortens it (a wait in cycles), and 0 is allowed (no latency) but not < 0.
TEST(Knobs, MemLatencyIsTheFittedCyclesAtTheClock) {
  const GpuSpec& spec = db().resolve("H100-SXM");
  GpuCaps c = model().caps_for(spec);
  const double cycles = model().model.params()[kMemLatencyCycles];
  ASSERT_GT(cycles, 0);
  EXPECT_DOUBLE_EQ(knob_value(c, Knob::mem_latency), cycles / c.clock_mhz);
  GpuCaps fast = c;
  scale_knob(fast, Knob::clock, 2, "--scale");
  EXPECT_DOUBLE_EQ(fast.mem_latency_us, c.mem_latency_us / 2);
  EXPECT_DOUBLE_EQ(fast.stream_latency_us, c.stream_latency_us / 2);
  GpuCaps half = c;
  set_knob(half, Knob::mem_latency, c.mem_latency_us / 2, "--set");
  EXPECT_DOUBLE_EQ(half.stream_latency_us, c.stream_latency_us / 2);
  set_knob(c, Knob::mem_latency, 0, "--set");
  EXPECT_EQ(c.mem_latency_us, 0);
  EXPECT_FALSE(input_error_of([&] { set_knob(c, Knob::mem_latency, -1, "--set"); }).empty());
}

TEST(Knobs, TensorFlopsSetsBf16AndScalesOtherTensorDtypes) {
  const GpuSpec& spec = db().resolve("A100-SXM4-80GB");
  const GpuCaps before = model().caps_for(spec);
  GpuCaps c = before;
  const double bf16 = before.tensor_tflops[int(DType::bf16)];
  set_knob(c, Knob::tensor_flops, 2 * bf16, "--set");
  EXPECT_DOUBLE_EQ(c.tensor_tflops[int(DType::bf16)], 2 * bf16);
  EXPECT_DOUBLE_EQ(c.tensor_tflops[int(DType::fp16)], 2 * before.tensor_tflops[int(DType::fp16)]);
  EXPECT_DOUBLE_EQ(c.tensor_tflops[int(DType::tf32)], 2 * before.tensor_tflops[int(DType::tf32)]);
  // The A100 has no FP8 or FP4 units: those GEMMs run weight-only on its 16-bit tensor cores, so
  // they follow the tensor rate too (they used to be scaled as SIMT rates).
  for (DType narrow : {DType::fp8, DType::fp4}) {
    ASSERT_GT(before.tensor_tflops[int(narrow)], 0) << to_string(narrow);
    EXPECT_DOUBLE_EQ(c.tensor_tflops[int(narrow)], 2 * before.tensor_tflops[int(narrow)]) << to_string(narrow);
  }
  EXPECT_EQ(c.tensor_tflops[int(DType::fp32)], before.tensor_tflops[int(DType::fp32)]);  // SIMT
  EXPECT_EQ(c.vector_tflops, before.vector_tflops);
  // A GPU without tensor cores has no tensor_flops to set.
  const GpuSpec& p100 = db().resolve("P100-PCIe-16GB");
  GpuCaps p = model().caps_for(p100);
  EXPECT_NE(input_error_of([&] { set_knob(p, Knob::tensor_flops, 100, "--set"); }).find("vector_flops"),
            std::string::npos);
}

TEST(Knobs, VectorFlopsScalesSimtRatesOnly) {
  const GpuSpec& spec = db().resolve("A100-SXM4-80GB");
  const GpuCaps before = model().caps_for(spec);
  GpuCaps c = before;
  scale_knob(c, Knob::vector_flops, 3, "--scale");
  EXPECT_DOUBLE_EQ(c.vector_tflops, 3 * before.vector_tflops);
  EXPECT_DOUBLE_EQ(c.tensor_tflops[int(DType::fp32)], 3 * before.tensor_tflops[int(DType::fp32)]);
  EXPECT_DOUBLE_EQ(c.tensor_tflops[int(DType::fp64)], 3 * before.tensor_tflops[int(DType::fp64)]);
  EXPECT_EQ(c.tensor_tflops[int(DType::bf16)], before.tensor_tflops[int(DType::bf16)]);
  EXPECT_EQ(c.tensor_tflops[int(DType::fp8)], before.tensor_tflops[int(DType::fp8)]);
}

TEST(Knobs, SmCountScalesComputeButNotBandwidth) {
  const GpuSpec& spec = db().resolve("L4");
  const GpuCaps before = model().caps_for(spec);
  GpuCaps c = before;
  scale_knob(c, Knob::sm_count, 2, "--scale");
  EXPECT_EQ(c.sm_count, 2 * before.sm_count);
  EXPECT_DOUBLE_EQ(c.vector_tflops, 2 * before.vector_tflops);
  for (int i = 0; i < kNumDTypes; ++i) EXPECT_DOUBLE_EQ(c.tensor_tflops[i], 2 * before.tensor_tflops[i]);
  EXPECT_EQ(c.dram_bw_gbps, before.dram_bw_gbps);
  EXPECT_EQ(c.l2_bw_gbps, before.l2_bw_gbps);
}

TEST(Knobs, SmCountChangesWaveQuantization) {
  // A large compute-bound GEMM fills many waves: twice the SMs (and so twice the whole-GPU rate at
  // the same per-SM rate) must make it clearly faster, which needs the tiles' slots to follow.
  const GpuSpec& spec = db().resolve("A100-SXM4-80GB");
  const GpuCaps before = model().caps_for(spec);
  GpuCaps c = before;
  scale_knob(c, Knob::sm_count, 2, "--scale");
  for (int t = 0; t < c.tiles.n; ++t) EXPECT_EQ(c.tiles.t[t].slots, 2 * before.tiles.t[t].slots);
  for (int t = 0; t < c.simt_tiles.n; ++t) EXPECT_EQ(c.simt_tiles.t[t].slots, 2 * before.simt_tiles.t[t].slots);
  const Kernel big = gemm(8192, 8192, 8192);
  EXPECT_LT(model().model.predict(big, c).time_us, 0.6 * model().model.predict(big, before).time_us);
}

TEST(Knobs, ClockScalesComputeAndL2Bandwidth) {
  const GpuSpec& spec = db().resolve("T4");
  const GpuCaps before = model().caps_for(spec);
  GpuCaps c = before;
  set_knob(c, Knob::clock, before.clock_mhz / 2, "--set");
  EXPECT_DOUBLE_EQ(c.clock_mhz, before.clock_mhz / 2);
  EXPECT_DOUBLE_EQ(c.vector_tflops, before.vector_tflops / 2);
  EXPECT_DOUBLE_EQ(c.tensor_tflops[int(DType::fp16)], before.tensor_tflops[int(DType::fp16)] / 2);
  EXPECT_DOUBLE_EQ(c.l2_bw_gbps, before.l2_bw_gbps / 2);
  EXPECT_EQ(c.dram_bw_gbps, before.dram_bw_gbps);
}

TEST(Sweep, ParsesRangeAndRejectsBadText) {
  const SweepSpec s = parse_sweep("dram_bw=1000:2000:3", "--sweep");
  EXPECT_EQ(s.knob, Knob::dram_bw);
  EXPECT_EQ(s.values(), (std::vector<double>{1000, 1500, 2000}));
  EXPECT_EQ(parse_sweep("clock=900:900:1", "--sweep").values(), std::vector<double>{900});
  for (const char* bad : {"dram_bw=1:2", "dram_bw=1:2:0", "dram_bw=1:2:2.5", "dram_bw=a:2:3", "dram_bw",
                          "warp_speed=1:2:3", "dram_bw=1:2:3:4"})
    EXPECT_FALSE(input_error_of([&] { parse_sweep(bad, "--sweep"); }).empty()) << bad;
}

TEST(Sweep, OnePointPerStepAndMoreBandwidthNeverSlower) {
  const std::vector<Kernel> rows = fixture();
  E2eOptions o;
  o.mode = PredictMode::absolute;
  const PreparedWorkload w = prepare_workload(rows, model(), db(), o, "f");
  const GpuSpec& spec = db().resolve("A100-SXM4-80GB");
  WhatifSpec ws;
  ws.sweep = parse_sweep("dram_bw=500:4000:8", "--sweep");
  const WhatifResult r = run_whatif(w, spec, model().caps_for(spec), ws);
  ASSERT_EQ(r.sweep.size(), 8u);
  EXPECT_EQ(r.sweep.front().value, 500);
  EXPECT_EQ(r.sweep.back().value, 4000);
  for (size_t i = 1; i < r.sweep.size(); ++i) EXPECT_LE(r.sweep[i].pred.step_us, r.sweep[i - 1].pred.step_us);
  // No --set: modified is the baseline.
  EXPECT_EQ(r.modified.step_us, r.baseline.step_us);
}

// The walls study of `rows` (absolute mode) on `gpu`.
WhatifResult walls_of(const std::vector<Kernel>& rows, const std::string& gpu) {
  E2eOptions o;
  o.mode = PredictMode::absolute;
  const PreparedWorkload w = prepare_workload(rows, model(), db(), o, "f");
  const GpuSpec& spec = db().resolve(gpu);
  WhatifSpec ws;
  ws.walls = true;
  return run_whatif(w, spec, model().caps_for(spec), ws);
}

TEST(Walls, EachWallHelpsAndBothHelpMost) {
  const WhatifResult r = walls_of(fixture(), "V100-PCIe-32GB");
  ASSERT_EQ(r.walls.size(), 5u);
  const double base = r.modified.step_us;
  for (const auto& wall : r.walls) {
    EXPECT_LE(wall.pred.step_us, base) << wall.name;
    EXPECT_GE(wall.pred.step_us, base / 2 * (1 - 1e-12)) << wall.name;
  }
  EXPECT_LE(r.walls[2].pred.step_us, r.walls[0].pred.step_us);
  EXPECT_LE(r.walls[2].pred.step_us, r.walls[1].pred.step_us);
}

// Kernels with too few bytes to stream are latency-bound, and the memory wall still speeds them up
// (2x bandwidth halves the part of their time their bytes take), by far less than 2x; the
// small-kernel wall is what holds them.
TEST(Walls, LatencyBoundKernelsMeetTheSmallKernelWall) {
  const std::vector<Kernel> rows(4, streaming(2e5));
  const WhatifResult r = walls_of(rows, "H100-SXM");
  ASSERT_GT(r.baseline.kernel_us, 0);
  EXPECT_GT(r.baseline.by_bound(Bound::latency), 0.99 * r.baseline.kernel_us);
  const double speedup = r.modified.step_us / r.walls[1].pred.step_us;
  EXPECT_GT(speedup, 1.0);
  EXPECT_LT(speedup, 1.2);
  // What holds them is their fixed costs: halving the launch floor and the latency together helps
  // far more than either wall above (the latency alone would leave them at the floor).
  ASSERT_EQ(r.walls[4].name, "small_kernels_half");
  const double small_speedup = r.modified.step_us / r.walls[4].pred.step_us;
  EXPECT_GT(small_speedup, 1.5);
  EXPECT_LT(r.modified.step_us / r.walls[3].pred.step_us, small_speedup);
  EXPECT_LE(r.walls[4].pred.step_us, r.walls[3].pred.step_us);
}

// A profiler trace whose step is mostly idle GPU between kernels (#42 item 7): no GPU wall moves it,
// the host wall (the gaps halved) nearly halves it and says what holds the step back.
TEST(Walls, AStepOfHostGapsMeetsTheHostWall) {
  std::vector<Kernel> rows;
  for (int i = 0; i < 20; ++i) {
    Kernel k = streaming(4e6);  // a few microseconds on an H100
    k.start_us = 300.0 * i;     // launched every 300 us: the GPU idles between them
    k.stream = 7;
    rows.push_back(k);
  }
  const WhatifResult r = walls_of(rows, "H100-SXM");
  ASSERT_EQ(r.walls.back().name, "host_half");
  const double base = r.modified.step_us;
  for (size_t i = 0; i + 1 < r.walls.size(); ++i) EXPECT_LT(base / r.walls[i].pred.step_us, 1.02) << r.walls[i].name;
  const double host = base / r.walls.back().pred.step_us;
  EXPECT_GT(host, 1.8);
  EXPECT_LT(host, 2.0);
  // Without a timeline there are no gaps to halve, and no host wall.
  for (Kernel& k : rows) k.start_us = kUnknown;
  EXPECT_NE(walls_of(rows, "H100-SXM").walls.back().name, "host_half");
}

TEST(Walls, CollectivesAddTheLinkWall) {
  // The fixture plus an all-reduce: a sixth wall, which speeds up only the collective.
  std::vector<Kernel> rows = fixture();
  Kernel nccl = streaming(4e8, KernelClass::communication);
  nccl.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL";
  rows.push_back(nccl);
  const WhatifResult r = walls_of(rows, "H100-SXM");
  ASSERT_EQ(r.walls.size(), 6u);
  EXPECT_EQ(r.walls[5].name, "link_2x");
  const double base = r.modified.step_us, comm = r.baseline.by_class(KernelClass::communication);
  ASSERT_GT(comm, 0);
  EXPECT_LT(r.walls[5].pred.step_us, base);
  // Only the collective moved, by at most half of its own time.
  EXPECT_GE(r.walls[5].pred.step_us, base - comm / 2 * (1 + 1e-9));
  EXPECT_NEAR(r.walls[5].pred.by_class(KernelClass::elementwise), r.baseline.by_class(KernelClass::elementwise), 1e-9);
}

}  // namespace
}  // namespace kcast
