#include "model/thread_access.h"

#include <gtest/gtest.h>

#include "calibrate/model_file.h"
#include "model/cost_model.h"

namespace kcast {
namespace {

TEST(ThreadAccess, NamesTheFamiliesOfVllmsScalarKernelsAndIndexSelect) {
  EXPECT_EQ(thread_access_of(KernelClass::elementwise, "void vllm::rms_norm_kernel<c10::Half>(c10::Half*, c10::Half const*, float, int)"),
            ThreadAccess::row_norm);
  EXPECT_EQ(thread_access_of(KernelClass::elementwise, "layer.0.input_norm vllm::rms_norm"), ThreadAccess::row_norm);
  // The fused residual-add norm loads 8-wide vectors: it streams.
  EXPECT_EQ(thread_access_of(KernelClass::elementwise, "void vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(...)"), ThreadAccess::none);
  EXPECT_EQ(thread_access_of(KernelClass::elementwise, "layer.1.post_attention_norm vllm::fused_add_rms_norm"), ThreadAccess::none);
  EXPECT_EQ(thread_access_of(KernelClass::elementwise, "void vllm::act_and_mul_kernel<c10::Half, &vllm::silu_kernel<c10::Half>, true>(...)"),
            ThreadAccess::gated_activation);
  EXPECT_EQ(thread_access_of(KernelClass::elementwise, "layer.0.mlp.act vllm::silu_and_mul"), ThreadAccess::gated_activation);
  EXPECT_EQ(thread_access_of(KernelClass::elementwise, "void vllm::activation_kernel<c10::Half, &vllm::gelu_new_kernel<c10::Half>>(...)"),
            ThreadAccess::activation);
  EXPECT_EQ(thread_access_of(KernelClass::elementwise, "void vllm::rotary_embedding_kernel<c10::Half, true>(...)"), ThreadAccess::rotary);
  EXPECT_EQ(thread_access_of(KernelClass::elementwise, "void at::native::indexSelectLargeIndex<c10::Half, long, unsigned int, 2, 2, -2, true>"),
            ThreadAccess::index_select);
  EXPECT_EQ(thread_access_of(KernelClass::elementwise, "embed.word_embeddings aten::embedding"), ThreadAccess::index_select);
  EXPECT_EQ(thread_access_of(KernelClass::elementwise, "embed.word_embeddings aten::embedding_dense_backward"), ThreadAccess::none);
  // PyTorch's vectorized kernels, Triton's and Transformer Engine's stream.
  EXPECT_EQ(thread_access_of(KernelClass::elementwise, "void at::native::vectorized_elementwise_kernel<4, ...>"), ThreadAccess::none);
  EXPECT_EQ(thread_access_of(KernelClass::elementwise, "triton_per_fused_add_mean_mul_pow_rsqrt_0"), ThreadAccess::none);
  EXPECT_EQ(thread_access_of(KernelClass::elementwise, "layer.0.norm te::rmsnorm (forward)"), ThreadAccess::none);
  // A GEMM or attention row is timed as such, whatever its name shares with these.
  EXPECT_EQ(thread_access_of(KernelClass::gemm, "void vllm::rms_norm_kernel<c10::Half>(...)"), ThreadAccess::none);
  EXPECT_EQ(thread_access_of(KernelClass::normalization, "void vllm::rms_norm_kernel<c10::Half>(...)"),
            ThreadAccess::row_norm);
}

// A GPU with round numbers: 100 SMs, 1000 GB/s, a 1 µs round trip under load.
GpuSpec paper_gpu(const char* cc) {
  GpuSpec g;
  g.name = "PaperGPU";
  g.compute_capability = cc;
  g.sm_count = 100;
  g.boost_clock_mhz = 1000;
  g.dram_bw_gbps = 1000;
  g.measured_dram_bw_gbps = 1000;
  g.measured_launch_us = 2.0;
  g.measured_stream_latency_us = 1.0;
  g.l2_mb = 0;
  g.fp32_tflops = 10;
  return g;
}

CostModel plain_model() {
  ModelParams p;
  p[kFloorBlend] = 1.0;  // floor + work
  p[kMemLatencyCycles] = 0.0;
  p[kNormPasses] = 0.0;
  p[kStreamMemEff] = 1.0;
  return CostModel(p, default_arch_facts());
}

// 32768 FP16 rows of 4096 through vLLM's rms_norm: 1024-thread CTAs, one row each.
Kernel rms_norm_rows() {
  Kernel k;
  k.name = "vllm::rms_norm_kernel";
  k.cls = KernelClass::normalization;
  k.dtype = DType::fp16;
  k.access = ThreadAccess::row_norm;
  k.m = 32768, k.n = 4096;
  k.bytes = 2.0 * 32768 * 4096 * 2;  // read x, write y
  return k;
}

// Worked on paper: two 1024-thread CTAs fill an SM of 2048 threads, 100 SMs keep 204,800 threads x the
// family's elements x 2 bytes in flight per 1 µs round trip; the rows' bytes take that many round trips.
// Streaming them at 1000 GB/s would take half as long or less: Little's law, not bandwidth, bounds it.
TEST(ThreadAccess, LittlesLawBoundsAKernelWhoseThreadsKeepOneElementInFlight) {
  const CostModel m = plain_model();
  const GpuCaps c = m.caps(paper_gpu("8.0"));
  ASSERT_EQ(c.arch.threads_per_sm, 2048);
  const Kernel k = rms_norm_rows();
  const double in_flight = 100.0 * 2048 * facts(ThreadAccess::row_norm).elements * 2;
  const KernelPrediction p = m.predict(k, c);
  EXPECT_NEAR(p.time_us, 2.0 + k.bytes / in_flight, 1e-6 * p.time_us);
  EXPECT_EQ(p.bound, Bound::memory);
  Kernel streams = k;
  streams.access = ThreadAccess::none;
  EXPECT_GT(p.time_us - 2.0, 1.5 * (m.predict(streams, c).time_us - 2.0));
  // A round trip twice as long halves the bandwidth.
  GpuSpec slow = paper_gpu("8.0");
  slow.measured_stream_latency_us = 2.0;
  EXPECT_NEAR(m.predict(k, m.caps(slow)).time_us - 2.0, 2 * (p.time_us - 2.0), 1e-6 * p.time_us);
}

// An SM of 1536 threads (GA10x: A40, A10, RTX 30) holds one 1024-thread CTA, an A100's SM two: the same
// rows take twice as long. Recorded 256-thread CTAs fit six to the smaller SM, eight to the larger.
TEST(ThreadAccess, ResidentCtasSetTheThreadsInFlight) {
  const CostModel m = plain_model();
  const GpuCaps two = m.caps(paper_gpu("8.0")), one = m.caps(paper_gpu("8.6"));
  ASSERT_EQ(one.arch.threads_per_sm, 1536);
  Kernel k = rms_norm_rows();
  const double on_two = m.predict(k, two).time_us - 2.0, on_one = m.predict(k, one).time_us - 2.0;
  EXPECT_NEAR(on_one / on_two, 2.0, 1e-9);
  k.block[0] = 256;
  EXPECT_NEAR((m.predict(k, one).time_us - 2.0) / on_two, 2048.0 / 1536.0, 1e-9);
  EXPECT_NEAR(m.predict(k, two).time_us - 2.0, on_two, 1e-6 * on_two);
  // Short rows launch small CTAs (rms_norm: min(hidden, 1024) threads), which fill the SM all the same.
  k.block[0] = 0;
  k.n = 512, k.m = 32768 * 8;
  EXPECT_NEAR(m.predict(k, two).time_us - 2.0, on_two, 1e-6 * on_two);
}

// index_select runs a grid-stride loop of 128-thread CTAs, 8 per SM: 1024 threads however many the
// SM holds.
TEST(ThreadAccess, GridStrideKernelsKeepTheirLaunchedCtas) {
  const CostModel m = plain_model();
  Kernel k;
  k.cls = KernelClass::embedding;
  k.dtype = DType::fp16;
  k.access = ThreadAccess::index_select;
  k.m = 65536, k.n = 4096;
  k.bytes = 2.0 * 65536 * 4096 * 2;
  const double in_flight = 100.0 * 1024 * facts(ThreadAccess::index_select).elements * 2;
  for (const char* cc : {"8.0", "8.6"})
    EXPECT_NEAR(m.predict(k, m.caps(paper_gpu(cc))).time_us, 2.0 + k.bytes / in_flight, 1e-3) << cc;
}

// Without a figure of its own a GPU's round trip is kStreamLatencyCycles at its clock.
TEST(ThreadAccess, StreamLatencyDefaultsToCyclesAtTheClock) {
  const CostModel m = plain_model();
  GpuSpec g = paper_gpu("8.0");
  g.measured_stream_latency_us = kUnknown;
  EXPECT_NEAR(m.caps(g).stream_latency_us, kStreamLatencyCycles / 1000.0, 1e-12);
  g.boost_clock_mhz = 2000;
  EXPECT_NEAR(m.caps(g).stream_latency_us, kStreamLatencyCycles / 2000.0, 1e-12);
}

}  // namespace
}  // namespace kcast
