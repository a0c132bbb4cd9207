#include "model/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "io/gpu_database_csv.h"
#include "calibrate/model_file.h"

namespace kcast {
namespace {

// A hand-made GPU with round numbers, so expected times can be worked out on paper.
GpuSpec paper_gpu() {
  GpuSpec g;
  g.name = "PaperGPU";
  g.compute_capability = "8.0";
  g.sm_count = 100;
  g.boost_clock_mhz = 1000;
  g.dram_bw_gbps = 1000;
  g.measured_dram_bw_gbps = 1000;  // sustained = 1000 GB/s = 1e6 bytes/µs... per ms; 1e3 bytes/ns
  g.measured_launch_us = 2.0;
  g.l2_mb = 0;
  g.fp32_tflops = 10;
  g.bf16_tflops = 100;
  g.tensor_cores = true;
  g.measured_gemm_eff[int(DType::bf16)] = 0.5;
  return g;
}

CostModel plain_model() {
  ModelParams p;
  p[kFloorBlend] = 1.0;  // floor + work, easy to check
  p[kMemLatencyCycles] = 0.0;
  return CostModel(p, default_arch_facts());
}

// Worked on paper: floor 3, work 4, q = 2 -> 5 (the 3-4-5 triangle); q = 1 -> 7; a blend off the
// power-of-two fast path (q = 3) must invert the same way.
TEST(CostModel, WorkBehindFloorInvertsTheFloorBlend) {
  EXPECT_NEAR(with_floor(3, 4, 2), 5.0, 1e-12);
  EXPECT_NEAR(work_behind_floor(5, 3, 2), 4.0, 1e-12);
  EXPECT_NEAR(with_floor(3, 4, 1), 7.0, 1e-12);
  EXPECT_NEAR(work_behind_floor(7, 3, 1), 4.0, 1e-12);
  for (double q : {3.0, 8.0})
    EXPECT_NEAR(work_behind_floor(with_floor(3, 4, q), 3, q), 4.0, 1e-9) << "q = " << q;
}

TEST(CostModel, StreamingKernelIsFloorPlusBytesOverBandwidth) {
  CostModel m = plain_model();
  GpuCaps c = m.caps(paper_gpu());
  Kernel k;
  k.cls = KernelClass::elementwise;
  k.bytes = 1e9;  // 1 GB at 1000 GB/s = 1 ms; the ramp is negligible at 10 MB per SM
  k.flops = 0;
  KernelPrediction p = m.predict(k, c);
  EXPECT_NEAR(p.time_us, 2.0 + 1000.0, 1000.0 * 0.001);
  EXPECT_EQ(p.bound, Bound::memory);
}

// A kernel whose data is in L2 when it starts (warm, the default) reads part of it at L2 bandwidth;
// one that starts cold (Nsight Compute's flushed replays, a benchmark that clears L2) streams all
// of it from DRAM, whatever the L2 size.
TEST(CostModel, ColdL2KernelStreamsEverythingFromDram) {
  CostModel m = plain_model();
  GpuSpec spec = paper_gpu();
  spec.l2_mb = 40;
  spec.measured_l2_bw_gbps = 4000;
  Kernel k;
  k.cls = KernelClass::elementwise;
  k.bytes = 10e6;  // fits in the 40 MB L2
  k.flops = 0;
  const double warm = m.predict(k, m.caps(spec)).time_us;
  k.l2_cold = true;
  const double cold = m.predict(k, m.caps(spec)).time_us;
  EXPECT_NEAR(cold, 2.0 + 10.0, 0.01);  // floor + 10 MB at 1000 GB/s
  EXPECT_LT(warm, cold - 5.0);          // most of it at 4000 GB/s
  spec.l2_mb = 80;
  EXPECT_DOUBLE_EQ(m.predict(k, m.caps(spec)).time_us, cold);
}

// A norm that holds its rows in registers streams its bytes once; the framework's kernels read each
// row a second time (the fitted norm_passes).
TEST(CostModel, OnePassNormSkipsTheSecondReadOfItsRows) {
  ModelParams params;
  params[kFloorBlend] = 1.0;
  params[kMemLatencyCycles] = 0.0;
  params[kNormPasses] = 1.0;  // one extra half pass: 1.5 x the bytes
  CostModel m(params, default_arch_facts());
  GpuCaps c = m.caps(paper_gpu());
  Kernel k;
  k.cls = KernelClass::normalization;
  k.bytes = 1e9;
  const double two_sweeps = m.predict(k, c).time_us;
  k.row_read_once = true;
  const double one_sweep = m.predict(k, c).time_us;
  EXPECT_NEAR(one_sweep, 2.0 + 1000.0, 1.0);
  EXPECT_NEAR(two_sweeps, 2.0 + 1500.0, 1.5);
  // So does a Triton softmax over long rows, which PyTorch's cunn_SoftMaxForward reads again.
  params[kSoftmaxPasses] = 1.0;
  CostModel ms(params, default_arch_facts());
  Kernel s;
  s.cls = KernelClass::softmax;
  s.bytes = 1e9;
  s.m = 1000, s.n = 4096;  // rows longer than a warp holds
  EXPECT_NEAR(ms.predict(s, c).time_us, 2.0 + 1500.0, 1.5);
  s.row_read_once = true;
  EXPECT_NEAR(ms.predict(s, c).time_us, 2.0 + 1000.0, 1.0);
}

// A row kernel's extra passes re-read rows its resident CTAs read a pass before: they find them in
// L2 by the share the L2 holds of the resident rows (one CTA per row, threads_per_sm / CTA threads
// of them per SM), not of the whole tensor. Worked on paper: 100 SMs x 2048 / 256 = 800 rows.
TEST(CostModel, RowKernelRereadsFindTheResidentRowsInL2) {
  ModelParams params;
  params[kFloorBlend] = 1.0;
  params[kMemLatencyCycles] = 0.0;
  params[kSoftmaxPasses] = 1.0;  // one extra read of the input: half the bytes
  CostModel m(params, default_arch_facts());
  GpuSpec spec = paper_gpu();
  spec.l2_mb = 40;
  spec.measured_l2_bw_gbps = 4000;
  const GpuCaps c = m.caps(spec);
  ASSERT_EQ(c.arch.threads_per_sm, 2048);
  const double bytes = 1e9, l2 = 40e6;
  auto softmax = [&](int64_t row) {
    Kernel k;
    k.cls = KernelClass::softmax;
    k.bytes = bytes;
    k.n = row;
    k.m = int64_t(bytes / 8 / double(row));  // fp32 rows read and written
    k.block[0] = 256;
    return k;
  };
  // The first read and the write stream with the whole tensor's L2 share, as any kernel's.
  const double s_all = l2 / (l2 + bytes);
  // Re-reads of a working set of w bytes hit at 1 / (1 + (w / L2)^2).
  auto reread_share = [&](double w) { return 1.0 / (1.0 + (w / l2) * (w / l2)); };
  const double base = 2.0 + bytes / 1e3 * ((1 - s_all) / 1000 + s_all / 4000);
  auto expected = [&](double row_bytes, double resident = 800) {
    const double s = reread_share(resident * row_bytes);
    return base + bytes / 2 / 1e3 * ((1 - s) / 1000 + s / 4000);
  };
  EXPECT_NEAR(m.predict(softmax(4096), c).time_us, expected(4096 * 4.0), 0.05);    // 13 MB resident
  EXPECT_NEAR(m.predict(softmax(65536), c).time_us, expected(65536 * 4.0), 0.05);  // 210 MB resident
  // Without a recorded launch, PyTorch's block for the row: 65536 / 4 floats per load / 2, at most
  // 1024 / 2 = 512 threads (4 CTAs per SM, 400 rows); 2048 floats: 256 (800 rows).
  Kernel unlaunched = softmax(65536);
  unlaunched.block[0] = 0;
  EXPECT_NEAR(m.predict(unlaunched, c).time_us, expected(65536 * 4.0, 400), 0.05);
  unlaunched = softmax(2048);
  unlaunched.block[0] = 0;
  EXPECT_NEAR(m.predict(unlaunched, c).time_us, expected(2048 * 4.0, 800), 0.05);
  // An SM that holds half the threads (Turing: 1024) holds half the rows.
  GpuSpec turing = spec;
  turing.compute_capability = "7.5";
  ASSERT_EQ(m.caps(turing).arch.threads_per_sm, 1024);
  EXPECT_NEAR(m.predict(softmax(65536), m.caps(turing)).time_us, expected(65536 * 4.0, 400), 0.05);
  // Fewer rows than CTAs fit: all of them are resident, the whole input is the working set.
  Kernel few = softmax(65536);
  few.m = 400;
  few.bytes = 8.0 * 400 * 65536;
  const double s_few = l2 / (l2 + few.bytes), s_in = reread_share(few.bytes / 2);
  EXPECT_NEAR(m.predict(few, c).time_us,
              2.0 + few.bytes / 1e3 * ((1 - s_few) / 1000 + s_few / 4000) +
                  few.bytes / 2 / 1e3 * ((1 - s_in) / 1000 + s_in / 4000),
              0.01);
  // A norm without a shape: the launch grid gives the rows (one CTA each), its block the residency
  // (128 threads: 16 CTAs per SM, 1600 rows).
  params[kNormPasses] = 1.0;
  CostModel mn(params, default_arch_facts());
  Kernel ln;
  ln.cls = KernelClass::normalization;
  ln.bytes = bytes;
  ln.grid[0] = int64_t(bytes / 8 / 16384);
  ln.block[0] = 32, ln.block[1] = 4;
  const double s_ln = reread_share(1600 * 16384 * 4.0);
  EXPECT_NEAR(mn.predict(ln, c).time_us, base + bytes / 2 / 1e3 * ((1 - s_ln) / 1000 + s_ln / 4000), 0.05);
  // More SMs (the what-if knob) leave the L2's sharers, and the re-reads, as they were.
  GpuCaps more = c;
  more.sm_count *= 2;
  EXPECT_DOUBLE_EQ(mn.predict(ln, more).time_us, mn.predict(ln, c).time_us);
}

TEST(CostModel, TinyKernelIsLaunchBound) {
  CostModel m = plain_model();
  GpuCaps c = m.caps(paper_gpu());
  Kernel k;
  k.cls = KernelClass::elementwise;
  k.bytes = 64;
  KernelPrediction p = m.predict(k, c);
  EXPECT_GE(p.time_us, 2.0);
  EXPECT_LT(p.time_us, 2.5);
  EXPECT_EQ(p.bound, Bound::launch);
}

// A memory kernel whose bytes take less time at bandwidth than its fixed DRAM latency is bound by
// that latency (more bandwidth barely helps it); past that, by memory. The same for a GEMM's
// operand stream; without a latency nothing is latency-bound.
TEST(CostModel, KernelWhoseBytesTakeLessThanItsLatencyIsLatencyBound) {
  ModelParams params;
  params[kFloorBlend] = 1.0;
  params[kMemLatencyCycles] = 3000.0;  // 3 µs at the paper GPU's 1000 MHz
  const CostModel m(params, default_arch_facts());
  const GpuCaps c = m.caps(paper_gpu());
  auto stream = [&](double bytes) {
    Kernel k;
    k.cls = KernelClass::elementwise;
    k.bytes = bytes;
    k.flops = 0;
    return m.predict(k, c);
  };
  EXPECT_EQ(stream(1e6).bound, Bound::latency);   // 1 µs of bytes, 3 µs of latency
  EXPECT_EQ(stream(3e6).bound, Bound::latency);   // as long as the latency
  EXPECT_EQ(stream(3.2e6).bound, Bound::memory);  // longer
  EXPECT_EQ(stream(1e9).bound, Bound::memory);
  const CostModel no_latency = plain_model();
  const GpuCaps c0 = no_latency.caps(paper_gpu());
  Kernel k;
  k.cls = KernelClass::elementwise;
  k.bytes = 1e6;
  EXPECT_EQ(no_latency.predict(k, c0).bound, Bound::launch);
  k.bytes = 1e7;
  EXPECT_EQ(no_latency.predict(k, c0).bound, Bound::memory);
  // A GEMV's weights stream the same way where its math is negligible (tensor rate raised 1000x).
  GpuSpec fast = paper_gpu();
  fast.bf16_tflops *= 1000;
  const GpuCaps cf = m.caps(fast);
  auto gemv = [&](int64_t n) {
    Kernel g;
    g.cls = KernelClass::gemm;
    g.dtype = DType::bf16;
    g.batch = 1, g.m = 1, g.n = n, g.k = n;
    g.derive_from_shape();
    return m.predict(g, cf).bound;
  };
  EXPECT_EQ(gemv(512), Bound::latency);  // 0.5 MB of weights: 0.6 µs at the GEMM operand bandwidth
  EXPECT_EQ(gemv(8192), Bound::memory);  // 134 MB
}

// The floor blend (floor^q + work^q)^(1/q) has a fast path for q = 2, 4, 8 (the fitted value
// sits at 8); it must give the closed form, and agree with the general pow() path next to it.
TEST(CostModel, FloorBlendFastPathMatchesClosedFormAndGeneralPath) {
  for (double q : {2.0, 4.0, 8.0}) {
    ModelParams p;
    p[kFloorBlend] = q;
    p[kMemLatencyCycles] = 0.0;
    CostModel fast(p, default_arch_facts());
    p[kFloorBlend] = q * (1 + 1e-12);  // not a power of two: takes pow()
    CostModel general(p, default_arch_facts());
    const GpuCaps cf = fast.caps(paper_gpu()), cg = general.caps(paper_gpu());
    for (double bytes : {64.0, 1e5, 2e6, 1e7, 1e9}) {
      Kernel k;
      k.cls = KernelClass::elementwise;
      k.bytes = bytes;
      k.flops = 0;
      const double t = fast.predict(k, cf).time_us;
      EXPECT_NEAR(t, general.predict(k, cg).time_us, t * 1e-9) << "q=" << q << " bytes=" << bytes;
      // Work alone is bytes over the sustained bandwidth (1e3 bytes/µs at 1000 GB/s, times the
      // streaming share); recover it from a q = 1 model, where time = floor + work.
      ModelParams s;
      s[kFloorBlend] = 1.0;
      s[kMemLatencyCycles] = 0.0;
      CostModel sum(s, default_arch_facts());
      const double work = sum.predict(k, sum.caps(paper_gpu())).time_us - 2.0;
      EXPECT_NEAR(t, std::pow(std::pow(2.0, q) + std::pow(work, q), 1.0 / q), t * 1e-12) << "q=" << q;
    }
  }
}

// Where cuBLAS runs every batched SGEMM with one tile (A100: ampere_sgemm_128x128_nn), a thin
// batched GEMM pays for the unused part of that tile; single GEMMs still choose from the menu.
TEST(CostModel, BatchedSgemmRunsTheArchitecturesOneTile) {
  CostModel m = plain_model();
  GpuSpec g = paper_gpu();  // compute capability 8.0: archs.csv gives 128x128 for batched SGEMMs
  const GpuCaps with = m.caps(g);
  ASSERT_EQ(with.simt_batched.n, 1);
  GpuCaps without = with;
  without.simt_batched.n = 0;
  Kernel k;
  k.cls = KernelClass::gemm;
  k.dtype = DType::fp32;
  k.batch = 256, k.m = 1024, k.n = 8, k.k = 1024;
  k.derive_from_shape();
  EXPECT_GT(m.predict(k, with).time_us, 2.0 * m.predict(k, without).time_us);
  k.batch = 1;
  EXPECT_EQ(m.predict(k, with).time_us, m.predict(k, without).time_us);
}

TEST(CostModel, LargeGemmApproachesSustainedTensorRate) {
  CostModel m = plain_model();
  GpuCaps c = m.caps(paper_gpu());
  Kernel k;
  k.cls = KernelClass::gemm;
  k.dtype = DType::bf16;
  k.m = k.n = k.k = 16384;
  k.derive_from_shape();
  KernelPrediction p = m.predict(k, c);
  // 8.8 TFLOP at 50 TFLOP/s sustained (100 peak x 0.5 measured) = 176 ms; tiles divide evenly
  // into the 100 SMs only approximately, so allow the wave tail and pipeline fill.
  const double ideal_us = k.flops / 50e6;
  EXPECT_GT(p.time_us, ideal_us);
  EXPECT_LT(p.time_us, ideal_us * 1.25);
  EXPECT_EQ(p.bound, Bound::compute);
}

// An FP8 GEMM reads 1-byte operands but writes a 16-bit C: with a short K the output dominates, so
// it is memory-bound at nearly the BF16 GEMM's time (half of it if C were FP8 too).
TEST(CostModel, Fp8GemmWritesASixteenBitResult) {
  Kernel k;
  k.cls = KernelClass::gemm;
  k.dtype = DType::fp8;
  k.m = k.n = 8192;
  k.k = 16;
  EXPECT_DOUBLE_EQ(k.gemm_bytes(), 8192.0 * 16 * 2 + 8192.0 * 8192 * 2);
  GpuSpec g = paper_gpu();
  g.fp8_tflops = 200;
  g.measured_gemm_eff[int(DType::fp8)] = 0.5;
  g.measured_dram_bw_gbps = 250;  // the output stream, not the pipeline fill of a 16-deep K, bounds it
  CostModel m = plain_model();
  const GpuCaps c = m.caps(g);
  Kernel b = k;
  b.dtype = DType::bf16;
  k.derive_from_shape(), b.derive_from_shape();
  const KernelPrediction p8 = m.predict(k, c), p16 = m.predict(b, c);
  EXPECT_EQ(p8.bound, Bound::memory);
  EXPECT_EQ(p16.bound, Bound::memory);
  EXPECT_GT(p8.time_us, 0.95 * p16.time_us);
  EXPECT_LE(p8.time_us, p16.time_us);
}

TEST(CostModel, PartialLastWaveCostsAFullWave) {
  CostModel m = plain_model();
  GpuCaps c = m.caps(paper_gpu());
  Kernel a, b;
  a.cls = b.cls = KernelClass::gemm;
  a.dtype = b.dtype = DType::bf16;
  // Same K; the second has just over twice the output tiles of the first, so it needs one extra wave.
  a.m = 128 * 10;
  a.n = 128 * 10;  // 100 tiles of 128x128 = one wave on 100 SMs
  a.k = b.k = 8192;
  b.m = 128 * 10;
  b.n = 128 * 10 + 128;  // 110 tiles: a second, mostly idle wave
  a.derive_from_shape();
  b.derive_from_shape();
  const double ta = m.predict(a, c).time_us, tb = m.predict(b, c).time_us;
  EXPECT_GT(tb / ta, 1.5) << "10% more work should cost close to a full extra wave";
  EXPECT_LT(tb / ta, 2.05) << "and no more than a full one";
}

// A SIMT SGEMM's last wave costs what its busiest SM holds: 100 CTAs of a 64x64 tile (4 fit per SM)
// on 100 SMs run one per SM, each with the whole SM, in a quarter of the time 400 take; 101 put a
// second CTA on one SM (half of the 400's time).
TEST(CostModel, SgemmLastWaveCostsWhatItsBusiestSmHolds) {
  CostModel m = plain_model();
  GpuSpec g = paper_gpu();
  g.compute_capability = "7.0";  // volta_sgemm names apply
  g.measured_dram_bw_gbps = g.dram_bw_gbps = 1e6;  // compute-bound throughout
  const GpuCaps c = m.caps(g);
  auto time_of = [&](int64_t tiles_m, int64_t tiles_n) {
    Kernel k;
    k.name = "volta_sgemm_64x64_nn";
    k.cls = KernelClass::gemm;
    k.dtype = DType::fp32;
    k.tile = sgemm_tile_of(k.name);
    k.m = 64 * tiles_m, k.n = 64 * tiles_n, k.k = 65536;
    k.grid[0] = tiles_n, k.grid[1] = tiles_m, k.grid[2] = 1;  // as traced: no K split
    k.derive_from_shape();
    return m.predict(k, c).time_us - g.measured_launch_us;
  };
  const double t400 = time_of(20, 20), t100 = time_of(10, 10), t101 = time_of(101, 1);
  EXPECT_NEAR(t100, t400 / 4, t400 * 0.01);
  EXPECT_NEAR(t101, t400 / 2, t400 * 0.01);
  // Tensor-core GEMMs keep the full-wave rule (PartialLastWaveCostsAFullWave).
}

// Pascal SGEMMs slow down over long per-CTA K ranges (ArchFacts::simt_long_k): with the exponent at
// 0.5, a named maxwell SGEMM running K = 65536 in one range costs 16^0.5 = 4x the per-K work of the
// same GEMM without the term; split 16 ways (4096 per CTA) it is untouched; so are K <= 4096, a
// Volta SGEMM and a convolution of the same shape.
TEST(CostModel, PascalSgemmPaysForLongKRangesPerCta) {
  ModelParams p;
  p[kFloorBlend] = 1.0;
  p[kKFillSimt] = 0.0;  // per-K work alone
  CostModel flat(p, default_arch_facts());
  p[kSimtLongKExp] = 0.5;
  CostModel longk(p, default_arch_facts());
  auto ratio = [&](const char* cc, const char* name, int64_t k, int64_t split, KernelClass cls) {
    GpuSpec g = paper_gpu();
    g.compute_capability = cc;
    g.measured_dram_bw_gbps = g.dram_bw_gbps = 1e6;  // compute-bound
    Kernel kn;
    kn.name = name;
    kn.cls = cls;
    kn.dtype = DType::fp32;
    kn.tile = sgemm_tile_of(kn.name);
    kn.m = 64 * 20, kn.n = 64 * 20, kn.k = k;
    kn.grid[0] = 20, kn.grid[1] = 20, kn.grid[2] = split;
    kn.derive_from_shape();
    const double floor = g.measured_launch_us;
    return (longk.predict(kn, longk.caps(g)).time_us - floor) / (flat.predict(kn, flat.caps(g)).time_us - floor);
  };
  EXPECT_NEAR(ratio("6.0", "maxwell_sgemm_64x64_tn", 65536, 1, KernelClass::gemm), 4.0, 1e-9);
  EXPECT_NEAR(ratio("6.1", "maxwell_sgemm_64x64_tn", 65536, 4, KernelClass::gemm), 2.0, 1e-3);  // + split-K cost
  EXPECT_NEAR(ratio("6.0", "maxwell_sgemm_64x64_tn", 65536, 16, KernelClass::gemm), 1.0, 1e-12);
  EXPECT_NEAR(ratio("6.0", "maxwell_sgemm_64x64_tn", 4096, 1, KernelClass::gemm), 1.0, 1e-12);
  EXPECT_NEAR(ratio("7.0", "volta_sgemm_64x64_tn", 65536, 1, KernelClass::gemm), 1.0, 1e-12);
  EXPECT_NEAR(ratio("6.0", "implicit_convolve_sgemm", 65536, 1, KernelClass::conv), 1.0, 1e-12);
}

TEST(CostModel, MoreBandwidthNeverSlowsAndAtMostDoubles) {
  CostModel m = plain_model();
  GpuCaps c = m.caps(paper_gpu());
  GpuCaps c2 = c;
  c2.dram_bw_gbps *= 2;
  for (double bytes : {1e3, 1e5, 1e7, 1e9}) {
    Kernel k;
    k.cls = KernelClass::softmax;
    k.bytes = bytes;
    const double t1 = m.predict(k, c).time_us, t2 = m.predict(k, c2).time_us;
    EXPECT_LE(t2, t1);
    EXPECT_GE(t2, t1 / 2);
  }
}

// FP8 where the GPU has no FP8 units runs on its 16-bit tensor cores (weight-only FP8 kernels), not on
// CUDA cores: on an A100 a large FP8 GEMM takes about the BF16 time; on an H100 it is faster than BF16.
TEST(CostModel, Fp8WithoutFp8UnitsRunsOnSixteenBitTensorCores) {
  const LoadedModel& lm = default_model();
  auto time_of = [&](const char* gpu, DType d) {
    Kernel k;
    k.cls = KernelClass::gemm;
    k.dtype = d;
    k.m = k.n = k.k = 8192;
    k.derive_from_shape();
    return lm.model.predict(k, lm.caps_for(default_gpu_database().resolve(gpu))).time_us;
  };
  const double a8 = time_of("A100-SXM4-80GB", DType::fp8), a16 = time_of("A100-SXM4-80GB", DType::bf16);
  EXPECT_GT(a8, 0.9 * a16);
  EXPECT_LT(a8, 1.1 * a16);
  EXPECT_GT(time_of("A100-SXM4-80GB", DType::fp32), 3 * a8);  // SIMT FP32 is far slower
  EXPECT_LT(time_of("H100-SXM", DType::fp8), 0.8 * time_of("H100-SXM", DType::bf16));
}

// FP4 (NVFP4): Blackwell's FP4 tensor cores run a large GEMM well ahead of FP8; on a GPU without FP4
// units (H100) the weight-only kernels multiply at the 16-bit rate but still stream 4-bit weights,
// so a memory-bound decode GEMM (one token) beats BF16 by about the weight bytes' ratio.
TEST(CostModel, Fp4OnBlackwellUnitsAndWeightOnlyElsewhere) {
  const LoadedModel& lm = default_model();
  auto time_of = [&](const char* gpu, DType d, int64_t m) {
    Kernel k;
    k.cls = KernelClass::gemm;
    k.dtype = d;
    k.m = m;
    k.n = k.k = 8192;
    k.derive_from_shape();
    return lm.model.predict(k, lm.caps_for(default_gpu_database().resolve(gpu))).time_us;
  };
  EXPECT_LT(time_of("B200", DType::fp4, 8192), 0.8 * time_of("B200", DType::fp8, 8192));
  const double h4 = time_of("H100-SXM", DType::fp4, 8192), h16 = time_of("H100-SXM", DType::bf16, 8192);
  EXPECT_GT(h4, 0.9 * h16);
  EXPECT_LT(h4, 1.1 * h16);
  EXPECT_LT(time_of("H100-SXM", DType::fp4, 1), 0.5 * time_of("H100-SXM", DType::bf16, 1));
  // Operand bytes: 4-bit values plus an 8-bit scale per 16, a 16-bit C.
  Kernel k;
  k.cls = KernelClass::gemm;
  k.dtype = DType::fp4;
  k.m = 16, k.n = 32, k.k = 64;
  k.derive_from_shape();
  EXPECT_DOUBLE_EQ(k.bytes, (16 * 64 + 64 * 32) * 0.5625 + 16 * 32 * 2);
}

TEST(CostModel, ShippedDatabaseGivesEveryGpuPositiveFiniteTimes) {
  const LoadedModel& lm = default_model();
  for (const GpuSpec& g : default_gpu_database().all()) {
    GpuCaps c = lm.caps_for(g);
    for (DType d : kAllDTypes) {
      Kernel k;
      k.cls = KernelClass::gemm;
      k.dtype = d;
      k.m = 4096, k.n = 4096, k.k = 4096;
      k.derive_from_shape();
      double t = lm.model.predict(k, c).time_us;
      EXPECT_TRUE(std::isfinite(t) && t > 0) << g.name << " " << to_string(d);
    }
  }
}

}  // namespace
}  // namespace kcast

namespace kcast {
namespace {

// Ratio of an FP32 (SIMT) GEMM's time on a board whose power budget holds only half the boost
// clock under dense math to its time without a power limit.
double power_ratio(int64_t n) {
  CostModel m = plain_model();
  GpuSpec free_board = paper_gpu(), limited = paper_gpu();
  // 100 SMs x 1 GHz x watts_per_sm_ghz: half of that budget leaves half the clock.
  limited.tdp_w = 0.5 * 100 * 1.0 * m.params()[kWattsPerSmGhz];
  Kernel k;
  k.cls = KernelClass::gemm;
  k.dtype = DType::fp32;
  k.m = k.n = k.k = n;
  k.derive_from_shape();
  return m.predict(k, m.caps(limited)).time_us / m.predict(k, m.caps(free_board)).time_us;
}

TEST(CostModel, PowerLimitStretchesLongGemmsNotShortOnes) {
  // A short GEMM finishes on the boost budget; a long one runs at the sustained clock.
  EXPECT_LT(power_ratio(256), 1.05);
  EXPECT_NEAR(power_ratio(16384), 2.0, 0.02);
  EXPECT_GT(power_ratio(2048), power_ratio(512));
}

// An architecture whose SMs draw their own watts per GHz (data/archs.csv) is power-limited by that
// figure, not the fitted one: a board whose budget just holds boost at the fitted figure holds half
// the clock when its SMs draw twice as much.
TEST(CostModel, AnArchitecturesOwnSmPowerReplacesTheFittedFigure) {
  ModelParams p;
  p[kFloorBlend] = 1.0;
  p[kMemLatencyCycles] = 0.0;
  std::vector<ArchFacts> archs = default_arch_facts();
  for (ArchFacts& a : archs)
    if (a.compute_capability == "8.0") a.watts_per_sm_ghz = 2 * p[kWattsPerSmGhz];
  const CostModel fitted(p, default_arch_facts()), own(p, archs);
  GpuSpec board = paper_gpu();
  board.tdp_w = 100 * 1.0 * p[kWattsPerSmGhz];  // 100 SMs x 1 GHz at the fitted figure
  Kernel k;
  k.cls = KernelClass::gemm;
  k.dtype = DType::fp32;
  k.m = k.n = k.k = 16384;
  k.derive_from_shape();
  const double t_fitted = fitted.predict(k, fitted.caps(board)).time_us;
  EXPECT_NEAR(t_fitted, fitted.predict(k, fitted.caps(paper_gpu())).time_us, t_fitted * 1e-9);
  EXPECT_NEAR(own.predict(k, own.caps(board)).time_us / t_fitted, 2.0, 0.02);
}

// A board's convolution scale moves its CUDA-core convolutions' compute rate, relative to its SGEMM
// scale, and leaves its GEMMs alone; without one, convolutions follow the SGEMM scale.
TEST(CostModel, ConvolutionScaleMovesConvolutionsNotGemms) {
  ModelParams p;
  p[kFloorBlend] = 1.0;
  p[kMemLatencyCycles] = 0.0;
  const CostModel model(p, default_arch_facts());
  auto big = [](KernelClass cls) {
    Kernel k;
    k.cls = cls;
    k.dtype = DType::fp32;
    k.m = k.n = k.k = 8192;
    k.derive_from_shape();
    return k;
  };
  GpuSpec plain = paper_gpu(), sgemm = paper_gpu(), both = paper_gpu();
  sgemm.measured_sgemm_scale = 1.25;
  both.measured_sgemm_scale = 1.25;
  both.measured_conv_scale = 0.5;
  auto t = [&](KernelClass cls, const GpuSpec& g) { return model.predict(big(cls), model.caps(g)).time_us; };
  const double g0 = t(KernelClass::gemm, plain), c0 = t(KernelClass::conv, plain);
  EXPECT_NEAR(t(KernelClass::gemm, sgemm) / g0, 1 / 1.25, 1e-3);  // compute-bound: time ~ 1 / rate
  EXPECT_NEAR(t(KernelClass::conv, sgemm) / c0, 1 / 1.25, 1e-3);
  EXPECT_DOUBLE_EQ(t(KernelClass::gemm, both), t(KernelClass::gemm, sgemm));
  EXPECT_NEAR(t(KernelClass::conv, both) / c0, 1 / 0.5, 1e-3);
}

TEST(CostModel, ShortSoftmaxRowsAreReadOnce) {
  CostModel m = plain_model();
  GpuCaps c = m.caps(paper_gpu());
  Kernel k;
  k.cls = KernelClass::softmax;
  k.bytes = 8.0 * (1 << 27);  // read + write of 128M fp32: memory-bound
  Kernel short_rows = k, long_rows = k;
  short_rows.m = (1 << 27) / 512, short_rows.n = 512;
  long_rows.m = (1 << 27) / 4096, long_rows.n = 4096;
  const double t_short = m.predict(short_rows, c).time_us, t_long = m.predict(long_rows, c).time_us;
  const double passes = 1.0 + m.params()[kSoftmaxPasses] * 0.5;
  EXPECT_NEAR(t_long / t_short, passes, 0.01 * passes);
  // Without a row length the model assumes the long-row kernel.
  EXPECT_DOUBLE_EQ(m.predict(k, c).time_us, t_long);
}

}  // namespace
}  // namespace kcast
