// Measured rows that name no work (model/inferred_work.h): an Nsight Systems kernel row moves to
// another GPU as the work its measurement implies would, not by the ratio of launch floors.
#include "model/inferred_work.h"

#include <gtest/gtest.h>

#include "predict/e2e/predictor.h"
#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

using namespace kcast::testing;

// A kernel given by its work only (no shape), as a trace with counters would record it.
Kernel by_work(KernelClass c, DType dt, double flops, double bytes) {
  Kernel k;
  k.cls = c;
  k.dtype = dt;
  k.flops = flops;
  k.bytes = bytes;
  return k;
}

Kernel without_work(Kernel k) {
  k.flops = kUnknown;
  k.bytes = kUnknown;
  return k;
}

double predict_on(const Kernel& k, const std::string& gpu) { return model().model.predict(k, target(gpu).caps).time_us; }

GpuPrediction transfer_to(const std::vector<Kernel>& rows, const std::string& gpu) {
  E2eOptions o;
  o.mode = PredictMode::transfer;
  o.keep_rows = true;
  PreparedWorkload w = prepare_workload(rows, model(), db(), o, "trace.csv");
  return predict_targets(w, {target(gpu)})[0];
}

TEST(InferredWork, WorklessRowMovesAsTheWorkItsMeasurementImplies) {
  // A 10 TFLOP-scale FP16 GEMM and a 2 GB elementwise pass, timed on an H100 by the model itself;
  // the same rows with their work erased must land where the model puts that work on each target.
  const Kernel gemm_work = by_work(KernelClass::gemm, DType::fp16, 2e11, kUnknown);
  const Kernel stream_work = by_work(KernelClass::elementwise, DType::bf16, kUnknown, 2e9);
  for (const Kernel& work : {gemm_work, stream_work}) {
    const std::vector<Kernel> rows = {measured(without_work(work), predict_on(work, "H100-SXM"), "H100-SXM")};
    for (const std::string gpu : {"B200", "A100-SXM4-80GB", "L4", "H100-PCIe"}) {
      const GpuPrediction p = transfer_to(rows, gpu);
      EXPECT_NEAR(p.row_us[0] / predict_on(work, gpu), 1.0, 1e-3) << to_string(work.cls) << " on " << gpu;
      EXPECT_NE(Bound(p.row_bound[0]), Bound::launch) << gpu;
    }
  }
}

TEST(InferredWork, GemmFollowsTensorThroughputAndStreamingFollowsBandwidth) {
  // The same 300 us measured on an A100: as a GEMM it speeds up on an H100 by about the ratio of
  // tensor rates (3.2x in the database), as a memory-bound kernel by about the ratio of bandwidths (1.6x).
  const Target a100 = target("A100-SXM4-80GB"), h100 = target("H100-SXM");
  const double d = 300;
  const GpuPrediction g = transfer_to({measured(without_work(by_work(KernelClass::gemm, DType::bf16, 1, kUnknown)), d, a100.name)}, h100.name);
  const GpuPrediction s = transfer_to({measured(without_work(streaming(1e9)), d, a100.name)}, h100.name);
  const double tensor = h100.caps.tensor_tflops[int(DType::bf16)] / a100.caps.tensor_tflops[int(DType::bf16)];
  const double bw = h100.caps.dram_bw_gbps / a100.caps.dram_bw_gbps;
  EXPECT_NEAR(d / g.row_us[0], tensor, 0.1 * tensor);
  EXPECT_NEAR(d / s.row_us[0], bw, 0.1 * bw);
  EXPECT_GT(d / g.row_us[0], 1.5 * d / s.row_us[0]);
  // cuBLAS's matrix-vector kernel (a batch-1 linear layer) is a GEMM-class row bound by bandwidth.
  Kernel gemv = by_work(KernelClass::gemm, DType::bf16, 1, kUnknown);
  gemv.name = "void gemv2T_kernel_val<int, int, __nv_bfloat16, __nv_bfloat16, float, float, 128, 16, 4, 4, false, false>";
  const GpuPrediction v = transfer_to({measured(without_work(gemv), d, a100.name)}, h100.name);
  EXPECT_NEAR(d / v.row_us[0], bw, 0.1 * bw);
}

TEST(InferredWork, CollectiveFollowsTheLinkBandwidth) {
  // An NCCL all-reduce timed at 2 ms on an A100 SXM4 (NVLink): on an H100 SXM it speeds up by the
  // ratio of the two GPUs' links in the database, not by their DRAM or tensor rates.
  Kernel nccl = by_work(KernelClass::communication, DType::bf16, kUnknown, 1);
  nccl.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
  const Target a100 = target("A100-SXM4-80GB"), h100 = target("H100-SXM");
  const GpuPrediction p = transfer_to({measured(without_work(nccl), 2000, a100.name)}, h100.name);
  const double link = h100.caps.link_gbps / a100.caps.link_gbps;
  EXPECT_GT(link, 1.2);
  EXPECT_NEAR(2000 / p.row_us[0], link, 0.02 * link);
  // Moving bytes over a PCIe slot instead: the L4's 32 GB/s against the A100's NVLink.
  EXPECT_GT(transfer_to({measured(without_work(nccl), 2000, a100.name)}, "L4").row_us[0], 5 * 2000);
}

TEST(InferredWork, SameGpuReproducesTheMeasurementExactly) {
  std::vector<Kernel> rows = {measured(without_work(by_work(KernelClass::gemm, DType::fp16, 1, kUnknown)), 98.1, "H100-SXM"),
                              measured(without_work(streaming(1e6)), 14.2, "H100-SXM"),
                              measured(without_work(streaming(1e6, KernelClass::softmax)), 1.1, "H100-SXM")};
  const GpuPrediction p = transfer_to(rows, "H100-SXM");
  EXPECT_EQ(p.row_us[0], 98.1);
  EXPECT_EQ(p.row_us[1], 14.2);
  EXPECT_EQ(p.row_us[2], 1.1);
}

TEST(InferredWork, LaunchBoundAndCollectiveRowsAreLeftAlone) {
  const GpuCaps& h100 = target("H100-SXM").caps;
  // At or under the floor there is no work to read from the time.
  const Kernel tiny = measured(without_work(streaming(1e3)), 0.9 * h100.launch_floor_us, "H100-SXM");
  EXPECT_TRUE(lacks_work(with_inferred_work(tiny, tiny.duration_us, h100, model().model)));
  // A collective on a GPU without a link figure has nothing to be scaled by.
  Kernel nccl = measured(without_work(streaming(1e6)), 500, "H100-SXM");
  nccl.cls = KernelClass::communication;
  GpuCaps no_link = h100;
  no_link.link_gbps = 0;
  EXPECT_TRUE(lacks_work(with_inferred_work(nccl, nccl.duration_us, no_link, model().model)));
  EXPECT_FALSE(lacks_work(with_inferred_work(nccl, nccl.duration_us, h100, model().model)));
  // A row that has work keeps it.
  const Kernel shaped = measured(gemm(1024, 1024, 1024), 50, "H100-SXM");
  const Kernel same = with_inferred_work(shaped, 500, h100, model().model);
  EXPECT_EQ(same.flops, shaped.flops);
  EXPECT_EQ(same.m, 1024);
}

TEST(InferredWork, RowsWithNeitherWorkNorMeasurementAreCountedForAWarning) {
  E2eOptions o;  // auto: measured rows transfer, the others are predicted absolutely
  Kernel unmeasured = without_work(streaming(1e6));
  unmeasured.name = "mystery_kernel";
  const std::vector<Kernel> rows = {measured(without_work(streaming(1e6)), 40, "H100-SXM"), gemm(512, 512, 512),
                                    unmeasured, unmeasured};
  const PreparedWorkload w = prepare_workload(rows, model(), db(), o, "trace.csv");
  EXPECT_EQ(w.unknown_work_rows, 2u);
  EXPECT_EQ(w.inferred_work_rows, 1u);
  const std::string warn = unknown_work_warning(w, "trace.csv");
  EXPECT_NE(warn.find("trace.csv: 2 of 4 rows"), std::string::npos) << warn;
  EXPECT_NE(warn.find("data row 3 ('mystery_kernel', elementwise)"), std::string::npos) << warn;
  E2eOptions absolute;
  absolute.mode = PredictMode::absolute;
  const std::string abs_warn = unknown_work_warning(prepare_workload(rows, model(), db(), absolute, "t.csv"), "t.csv");
  EXPECT_NE(abs_warn.find("3 of 4 rows"), std::string::npos) << abs_warn;
  EXPECT_NE(abs_warn.find("absolute mode"), std::string::npos) << abs_warn;
  const std::vector<Kernel> fine = {rows[0], rows[1]};
  EXPECT_EQ(unknown_work_warning(prepare_workload(fine, model(), db(), o, "t.csv"), "t.csv"), "");
}

}  // namespace
}  // namespace kcast
