// End-to-end predictor (predict/e2e/predictor.h): modes, transfer identity and ratio, floors,
// context, dedupe, multi-GPU determinism.
#include "predict/e2e/predictor.h"

#include <gtest/gtest.h>

#include <cmath>

#include "model/error.h"
#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

using namespace kcast::testing;

E2eOptions opts(PredictMode m, bool keep = false) {
  E2eOptions o;
  o.mode = m;
  o.keep_rows = keep;
  return o;
}

GpuPrediction predict_one(const std::vector<Kernel>& rows, const std::string& gpu, const E2eOptions& o,
                          const LoadedModel& m = model()) {
  PreparedWorkload w = prepare_workload(rows, m, db(), o, "test.csv");
  return predict_targets(w, {target(gpu, m)})[0];
}

TEST(Predictor, TransferToTheSourceGpuReproducesMeasuredSumExactly) {
  // Every GPU of the real fixture, its own rows, transfer mode, context kept (--with-context).
  const std::vector<Kernel> all = fixture();
  std::vector<std::string> gpus;
  for (const auto& k : all)
    if (std::find(gpus.begin(), gpus.end(), k.gpu) == gpus.end()) gpus.push_back(k.gpu);
  ASSERT_GE(gpus.size(), 5u);
  for (const auto& gpu : gpus) {
    std::vector<Kernel> rows;
    double measured = 0;
    for (const auto& k : all)
      if (k.gpu == gpu) rows.push_back(k), measured += k.count * k.duration_us;
    E2eOptions o = opts(PredictMode::transfer);
    o.with_context = true;
    const GpuPrediction p = predict_one(rows, gpu, o);
    EXPECT_EQ(p.kernel_us, measured) << gpu;
    EXPECT_EQ(p.step_us, measured) << gpu;
    EXPECT_EQ(p.transferred_rows, rows.size());
    // Without a context column the GPU-only time is the measurement itself.
    for (auto& k : rows) k.context.clear();
    EXPECT_EQ(predict_one(rows, gpu, opts(PredictMode::transfer)).kernel_us, measured) << gpu;
  }
}

TEST(Predictor, TransferIdentityHoldsForTimelinesToo) {
  std::vector<Kernel> rows;
  double t = 500.25;
  for (int i = 0; i < 40; ++i) {
    Kernel k = measured(i % 3 ? streaming(1e6 * (i + 1)) : gemm(512 + 64 * i, 1024, 768), 3.3 + 1.7 * i, "V100-SXM2-32GB");
    k.start_us = t;
    k.stream = i % 4 == 3 ? 1 : 0;
    t += k.duration_us + (i % 5 == 0 ? 7.5 : 0.0);
    rows.push_back(k);
  }
  PreparedWorkload w = prepare_workload(rows, model(), db(), opts(PredictMode::transfer), "t.csv");
  const GpuPrediction p = predict_targets(w, {target("V100-SXM2-32GB")})[0];
  EXPECT_EQ(p.step_us, w.measured_step_us);
  EXPECT_EQ(p.kernel_us, w.measured_kernel_us);
}

// A model whose GEMM and convolution deviations persist across compute capabilities by `share` (1:
// the plain ratio).
LoadedModel with_persistence(double share) {
  LoadedModel m = model();
  m.model.mutable_params()[kGemmBiasPersistence] = m.model.mutable_params()[kConvBiasPersistence] = share;
  return m;
}

TEST(Predictor, TransferScalesByModelRatio) {
  const LoadedModel m = with_persistence(1.0);
  const Kernel k = measured(gemm(4096, 4096, 1024), 180.0, "V100-SXM2-32GB");
  const Target src = target("V100-SXM2-32GB", m), dst = target("A100-SXM4-80GB", m);
  const double ms = m.model.predict(k, src.caps).time_us, mt = m.model.predict(k, dst.caps).time_us;
  const GpuPrediction p = predict_one({k}, "A100-SXM4-80GB", opts(PredictMode::transfer, true), m);
  EXPECT_DOUBLE_EQ(p.kernel_us, 180.0 * mt / ms);
  EXPECT_EQ(p.row_transferred[0], 1);
  EXPECT_EQ(p.source_gpus, std::vector<std::string>{"V100-SXM2-32GB"});
}

// Across compute capabilities a GEMM (or a convolution) keeps only the persisting share of its (log)
// deviation from the model: with none it is the model's own prediction on the target, with all the
// plain ratio, between them the geometric blend. Within a compute capability, and for the other
// classes, the plain ratio.
TEST(Predictor, TransferKeepsTheMatrixKernelsPersistingDeviationAcrossComputeCapabilities) {
  const Kernel k = measured(gemm(4096, 4096, 1024), 180.0, "V100-SXM2-32GB");
  const double ms = model().model.predict(k, target("V100-SXM2-32GB").caps).time_us;
  const double mt = model().model.predict(k, target("A100-SXM4-80GB").caps).time_us;
  ASSERT_GT(std::fabs(std::log(180.0 / ms)), 0.05);  // a deviation to keep or drop
  EXPECT_DOUBLE_EQ(predict_one({k}, "A100-SXM4-80GB", opts(PredictMode::transfer), with_persistence(0.0)).kernel_us, mt);
  const double half = predict_one({k}, "A100-SXM4-80GB", opts(PredictMode::transfer), with_persistence(0.5)).kernel_us;
  EXPECT_NEAR(half, std::sqrt(180.0 * mt / ms * mt), 1e-9 * mt);
  // The same board family (compute capability 8.0 both): the measured deviation carries whole.
  const Kernel a = measured(gemm(4096, 4096, 1024), 180.0, "A100-SXM4-80GB");
  const double ma = model().model.predict(a, target("A100-SXM4-80GB").caps).time_us;
  const double mp = model().model.predict(a, target("A100-PCIe-40GB").caps).time_us;
  EXPECT_DOUBLE_EQ(predict_one({a}, "A100-PCIe-40GB", opts(PredictMode::transfer), with_persistence(0.0)).kernel_us,
                   180.0 * mp / ma);
  // A convolution the same way.
  Kernel c = measured(gemm(8192, 256, 2304, DType::fp32), 900.0, "V100-SXM2-32GB");
  c.cls = KernelClass::conv;
  const double cs = model().model.predict(c, target("V100-SXM2-32GB").caps).time_us;
  const double ct = model().model.predict(c, target("A100-SXM4-80GB").caps).time_us;
  ASSERT_GT(std::fabs(std::log(900.0 / cs)), 0.05);
  EXPECT_DOUBLE_EQ(predict_one({c}, "A100-SXM4-80GB", opts(PredictMode::transfer), with_persistence(0.0)).kernel_us, ct);
  // A memory-bound kernel moves by the plain ratio whatever the GEMMs' persistence.
  const Kernel s = measured(streaming(4e8), 900.0, "V100-SXM2-32GB");
  const double ss = model().model.predict(s, target("V100-SXM2-32GB").caps).time_us;
  const double st = model().model.predict(s, target("A100-SXM4-80GB").caps).time_us;
  EXPECT_DOUBLE_EQ(predict_one({s}, "A100-SXM4-80GB", opts(PredictMode::transfer), with_persistence(0.0)).kernel_us,
                   900.0 * st / ss);
}

TEST(Predictor, TransferredLaunchBoundKernelStaysAtTargetFloor) {
  // A tiny kernel measured at 3 us on a GPU whose model floor we raise to 30 us: the ratio would
  // push it far below the target's floor; it must stay at the target floor.
  LoadedModel m = model();
  const Target dst = target("A100-SXM4-80GB", m);
  const std::vector<Kernel> rows = {measured(streaming(1024), 3.0, "A100-SXM4-80GB")};
  PreparedWorkload w = prepare_workload(rows, m, db(), opts(PredictMode::transfer, true), "t.csv");
  w.source_caps[0].launch_floor_us = 30.0;
  w.source_pred[0] = predict_unique(w, w.source_caps[0]);
  const GpuPrediction p = predict_targets(w, {dst})[0];
  EXPECT_DOUBLE_EQ(p.row_us[0], std::min(3.0, dst.caps.launch_floor_us));
  EXPECT_EQ(Bound(p.row_bound[0]), Bound::launch);
}

TEST(Predictor, AutoTransfersMeasuredRowsOnly) {
  const Kernel a = measured(gemm(2048, 2048, 2048), 150.0, "A100-SXM4-80GB");
  const Kernel b = streaming(64e6);
  const GpuPrediction p = predict_one({a, b}, "H100-SXM", opts(PredictMode::automatic, true));
  EXPECT_EQ(p.transferred_rows, 1u);
  EXPECT_EQ(p.row_transferred[0], 1);
  EXPECT_EQ(p.row_transferred[1], 0);
  EXPECT_DOUBLE_EQ(p.row_us[1], model().model.predict(b, target("H100-SXM").caps).time_us);
}

TEST(Predictor, AbsoluteIgnoresMeasurements) {
  const Kernel a = measured(gemm(2048, 2048, 2048), 1e6, "A100-SXM4-80GB");
  const GpuPrediction p = predict_one({a}, "A100-SXM4-80GB", opts(PredictMode::absolute));
  EXPECT_DOUBLE_EQ(p.kernel_us, model().model.predict(a, target("A100-SXM4-80GB").caps).time_us);
  EXPECT_EQ(p.transferred_rows, 0u);
}

TEST(Predictor, TransferModeRejectsUnmeasuredRows) {
  const std::vector<Kernel> rows = {measured(gemm(64, 64, 64), 5.0, "T4"), streaming(1e6)};
  try {
    prepare_workload(rows, model(), db(), opts(PredictMode::transfer), "w.csv");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("w.csv: data row 2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("duration_us"), std::string::npos) << e.what();
  }
}

TEST(Predictor, ContextFloorAddedOnlyWhenAsked) {
  LoadedModel m = model();
  m.model.mutable_params().context_overhead_us["bench"] = 7.0;
  Kernel k = streaming(8e6);
  k.context = "bench";
  const double gpu_only = m.model.predict(k, target("L4", m).caps).time_us;
  EXPECT_DOUBLE_EQ(predict_one({k}, "L4", opts(PredictMode::absolute), m).kernel_us, gpu_only);
  E2eOptions with = opts(PredictMode::absolute);
  with.with_context = true;
  EXPECT_DOUBLE_EQ(predict_one({k}, "L4", with, m).kernel_us, gpu_only + 7.0);
  // Transfer: 40 us measured in the context scales by the ratio of the predicted measurements
  // (GPU time + 7 us); the GPU-only answer drops the 7 us again, the --with-context one keeps it.
  const Kernel t = measured(k, 40.0, "A100-SXM4-80GB");
  const double ms = m.model.predict(t, target("A100-SXM4-80GB", m).caps).time_us;
  const double on_l4 = 40.0 * (gpu_only + 7.0) / (ms + 7.0);
  ASSERT_GT(on_l4 - 7.0, target("L4", m).caps.launch_floor_us);  // the floor rule stays out of it
  EXPECT_NEAR(predict_one({t}, "L4", opts(PredictMode::transfer), m).kernel_us, on_l4 - 7.0, 1e-9);
  E2eOptions tw = opts(PredictMode::transfer);
  tw.with_context = true;
  EXPECT_NEAR(predict_one({t}, "L4", tw, m).kernel_us, on_l4, 1e-9);
  // Onto its own GPU the measurement comes back exactly.
  EXPECT_EQ(predict_one({t}, "A100-SXM4-80GB", tw, m).kernel_us, 40.0);
}

// A source GPU measured on a rig with twice the typical framework floors: transfer removes that rig's
// floor (14 us), and a target without a rig scale of its own gets the typical floor (7 us).
TEST(Predictor, TransferUsesEachRigsContextFloor) {
  LoadedModel m = model();
  m.model.mutable_params().context_overhead_us["bench"] = 7.0;
  m.gpus["A100-SXM4-80GB"].context_scale = 2.0;
  Kernel k = streaming(8e6);
  k.context = "bench";
  const Kernel t = measured(k, 40.0, "A100-SXM4-80GB");
  const double ms = m.model.predict(t, target("A100-SXM4-80GB", m).caps).time_us;
  const double pl4 = m.model.predict(k, target("L4", m).caps).time_us;
  const double on_l4 = 40.0 * (pl4 + 7.0) / (ms + 14.0);
  ASSERT_GT(on_l4 - 7.0, target("L4", m).caps.launch_floor_us);
  E2eOptions tw = opts(PredictMode::transfer);
  tw.with_context = true;
  EXPECT_NEAR(predict_one({t}, "L4", tw, m).kernel_us, on_l4, 1e-9);
  EXPECT_NEAR(predict_one({t}, "L4", opts(PredictMode::transfer), m).kernel_us, on_l4 - 7.0, 1e-9);
  // Onto its own GPU (and rig) the measurement still comes back exactly; absolute mode with the
  // context adds that GPU's rig floor.
  EXPECT_EQ(predict_one({t}, "A100-SXM4-80GB", tw, m).kernel_us, 40.0);
  E2eOptions aw = opts(PredictMode::absolute);
  aw.with_context = true;
  EXPECT_DOUBLE_EQ(predict_one({k}, "A100-SXM4-80GB", aw, m).kernel_us, ms + 14.0);
}

// A context whose op streams the GEMM's activation once more (aiconfigurator's FP8 GEMM quantizes it
// per token first): that kernel is part of the measured op on each GPU, like the floor, and never of
// the GPU-only answer.
TEST(Predictor, ContextOperandPassIsPartOfTheMeasuredOp) {
  LoadedModel m = with_persistence(1.0);  // the plain ratio, whose arithmetic this checks
  m.model.mutable_params().context_a_pass_bytes["bench:fp8"] = 5;
  Kernel k = gemm(4096, 4096, 8192, DType::fp8);
  k.context = "bench:fp8";
  const GpuCaps h100 = target("H100-SXM", m).caps, a100 = target("A100-SXM4-80GB", m).caps;
  const double gpu_only = m.model.predict(k, h100).time_us;
  const double pass = m.model.context_pass_us(k, h100);
  // A separate kernel: at least the launch floor; 5 bytes per A element take longer than 1 does.
  EXPECT_GT(pass, h100.launch_floor_us);
  LoadedModel one = m;
  one.model.mutable_params().context_a_pass_bytes["bench:fp8"] = 1;
  EXPECT_GT(pass, one.model.context_pass_us(k, h100));
  // No pass outside that context, nor for a row without a GEMM shape.
  Kernel other = k;
  other.context = "bench";
  EXPECT_EQ(m.model.context_pass_us(other, h100), 0.0);
  Kernel shapeless = streaming(1e8);
  shapeless.context = "bench:fp8";
  EXPECT_EQ(m.model.context_pass_us(shapeless, h100), 0.0);

  EXPECT_DOUBLE_EQ(predict_one({k}, "H100-SXM", opts(PredictMode::absolute), m).kernel_us, gpu_only);
  E2eOptions with = opts(PredictMode::absolute);
  with.with_context = true;
  EXPECT_DOUBLE_EQ(predict_one({k}, "H100-SXM", with, m).kernel_us, gpu_only + pass);
  // Transfer scales the whole op and drops the target's pass from the GPU-only answer.
  const Kernel t = measured(k, 900.0, "H100-SXM");
  const double pa = m.model.predict(k, a100).time_us, pass_a = m.model.context_pass_us(k, a100);
  const double op_on_a100 = 900.0 * (pa + pass_a) / (gpu_only + pass);
  EXPECT_NEAR(predict_one({t}, "A100-SXM4-80GB", opts(PredictMode::transfer), m).kernel_us, op_on_a100 - pass_a,
              1e-9);
  E2eOptions tw = opts(PredictMode::transfer);
  tw.with_context = true;
  EXPECT_NEAR(predict_one({t}, "A100-SXM4-80GB", tw, m).kernel_us, op_on_a100, 1e-9);
  EXPECT_EQ(predict_one({t}, "H100-SXM", tw, m).kernel_us, 900.0);
}

TEST(Predictor, IdenticalKernelsAreDeduplicated) {
  Kernel a = gemm(1024, 1024, 1024), b = a, c = gemm(1024, 1024, 512);
  b.name = "another_name";
  b.duration_us = 12.0;  // measurements do not enter the model
  const UniqueKernels u = dedupe_kernels(std::vector<Kernel>{a, b, c, a});
  EXPECT_EQ(u.rep.size(), 2u);
  EXPECT_EQ(u.of_row, (std::vector<uint32_t>{0, 0, 1, 0}));
  Kernel d = a;
  d.dtype = DType::fp16;
  EXPECT_FALSE(same_model_inputs(a, d));
  // Convolutions of one shape run by different cuDNN families are different kernels to the model.
  Kernel e = a, f = a;
  e.cls = f.cls = KernelClass::conv;
  f.conv_algo = ConvAlgo::winograd;
  EXPECT_FALSE(same_model_inputs(e, f));
  // So are SGEMMs of one shape that ran different named tiles, or split K differently.
  Kernel g = a, h = a;
  g.name = "volta_sgemm_128x64_nn", h.name = "volta_sgemm_64x64_nn";
  g.tile = sgemm_tile_of(g.name), h.tile = sgemm_tile_of(h.name);
  EXPECT_FALSE(same_model_inputs(g, h));
  Kernel i = g;
  i.grid[2] = 4;
  EXPECT_FALSE(same_model_inputs(g, i));
  Kernel j = a;
  j.grid[2] = 4;  // without a named tile the grid does not enter the model
  EXPECT_TRUE(same_model_inputs(a, j));
  Kernel l = a;
  l.l2_cold = true;  // the same GEMM with its operands out of L2 streams them from DRAM
  EXPECT_FALSE(same_model_inputs(a, l));
}

TEST(Predictor, ManyGpusInParallelMatchOneThread) {
  const std::vector<Kernel> rows = fixture();
  const std::vector<std::string> names = {"A100-SXM4-80GB", "H100-SXM", "T4", "V100-PCIe-32GB", "L4", "B200"};
  std::vector<Target> targets;
  for (const auto& n : names) targets.push_back(target(n));
  E2eOptions one = opts(PredictMode::automatic), many = one;
  one.max_threads = 1;
  many.max_threads = 6;
  const auto a = predict_targets(prepare_workload(rows, model(), db(), one, "f"), targets);
  const auto b = predict_targets(prepare_workload(rows, model(), db(), many, "f"), targets);
  ASSERT_EQ(a.size(), names.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].gpu, db().resolve(names[i]).name);
    EXPECT_EQ(a[i].kernel_us, b[i].kernel_us);
    EXPECT_EQ(a[i].step_us, b[i].step_us);
    EXPECT_GT(a[i].kernel_us, 0);
  }
}

// A trace read as a table (model/kernel_rows.h: rows sharing the kernel they launched) predicts what
// the same rows as Kernels predict, bit for bit: measured and unmeasured rows, two source GPUs, a
// context floor, rows without work (inferred from their measurement), a timeline on two streams.
TEST(Predictor, ATableOfSharedKindsPredictsWhatItsRowsPredict) {
  KernelTable t;
  t.kinds.push_back(measured(gemm(2048, 1024, 768), 0, "A100-SXM4-80GB"));
  t.kinds.push_back(measured(streaming(4e7), 0, "V100-SXM2-32GB"));
  Kernel ctx = gemm(256, 512, 128);
  ctx.context = "neusight:linear";
  t.kinds.push_back(ctx);
  Kernel workless;
  workless.name = "void some_kernel<128>";
  workless.cls = KernelClass::elementwise;
  workless.gpu = "A100-SXM4-80GB";
  t.kinds.push_back(workless);
  double at = 10;
  for (uint32_t i = 0; i < 400; ++i) {
    const uint32_t kind = i % 7 == 0 ? 2 : i % 5 == 0 ? 3 : i % 2;
    const double us = kind == 2 ? kUnknown : 5.0 + 0.37 * double(i % 13);
    t.rows.push_back({double(1 + i % 3), us, at, int64_t(i % 4 == 0), kind});
    at += 7.5 + double(i % 5);
  }
  std::vector<Kernel> rows;
  const KernelRows view(t);
  for (size_t r = 0; r < t.rows.size(); ++r) rows.push_back(view.row(r));
  for (PredictMode mode : {PredictMode::automatic, PredictMode::absolute}) {
    E2eOptions o = opts(mode, true);
    o.with_context = true;
    const PreparedWorkload wt = prepare_workload(t, model(), db(), o, "t.csv");
    const PreparedWorkload wr = prepare_workload(rows, model(), db(), o, "t.csv");
    EXPECT_EQ(wt.kernels.size(), wr.kernels.size());
    EXPECT_EQ(wt.inferred_work_rows, wr.inferred_work_rows);
    const std::vector<Target> targets = {target("H100-SXM"), target("T4")};
    const auto pt = predict_targets(wt, targets), pr = predict_targets(wr, targets);
    for (size_t g = 0; g < targets.size(); ++g) {
      EXPECT_EQ(pt[g].kernel_us, pr[g].kernel_us) << targets[g].name;
      EXPECT_EQ(pt[g].step_us, pr[g].step_us) << targets[g].name;
      EXPECT_EQ(pt[g].transferred_rows, pr[g].transferred_rows) << targets[g].name;
      EXPECT_EQ(pt[g].row_us, pr[g].row_us) << targets[g].name;
    }
    if (mode == PredictMode::automatic) {
      EXPECT_GT(pt[0].transferred_rows, 0u);
      EXPECT_GT(wt.inferred_work_rows, 0u);
    }
  }
}

}  // namespace
}  // namespace kcast
