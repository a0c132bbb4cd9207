// Copies by the link they cross (model/copy_kind.h): host copies on the host link, peer copies on
// the GPU-to-GPU link, device copies through DRAM.
#include "model/copy_kind.h"

#include <gtest/gtest.h>

#include "io/kernel_list_csv.h"
#include "tests/predict/predict_fixture.h"

namespace kcast {
namespace {

using namespace kcast::testing;

TEST(CopyKind, NamesFromNsightSystemsAndThePytorchProfiler) {
  for (const char* host : {"[CUDA memcpy Host-to-Device]", "[CUDA memcpy Device-to-Host]", "[CUDA memcpy HtoD]",
                           "[CUDA memcpy DtoH]", "Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pinned)",
                           "[CUDA memcpy Host-to-Array]"})
    EXPECT_EQ(copy_kind_of(host), CopyKind::host) << host;
  for (const char* peer : {"[CUDA memcpy Peer-to-Peer]", "[CUDA memcpy PtoP]", "Memcpy PtoP (Device -> Device)"})
    EXPECT_EQ(copy_kind_of(peer), CopyKind::peer) << peer;
  for (const char* dev : {"[CUDA memcpy Device-to-Device]", "Memcpy DtoD (Device -> Device)", "[CUDA memcpy Array-to-Array]"})
    EXPECT_EQ(copy_kind_of(dev), CopyKind::device) << dev;
}

TEST(CopyKind, HostCopiesAndCollectivesRunAtTheirLinkAndDeviceCopiesAtDram) {
  const auto rows = parse_kernel_list(
      "name,class,bytes\n[CUDA memcpy Host-to-Device],memcpy,1e9\n[CUDA memcpy Device-to-Device],memcpy,1e9\n"
      "[CUDA memcpy Peer-to-Peer],memcpy,1e9\n[CUDA memcpy Host-to-Device],elementwise,1e9\n"
      "ncclDevKernel_AllReduce_Sum_f32_RING_LL,communication,1e8\n"
      "ncclDevKernel_AllReduce_Sum_f32_RING_LL,communication,8\n",
      "c.csv", {});
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0].copy, CopyKind::host);
  EXPECT_EQ(rows[3].copy, CopyKind::device);  // only memcpy rows carry a kind
  const CostModel& m = model().model;
  const GpuCaps h100 = target("H100-SXM").caps, a100 = target("A100-SXM4-80GB").caps;
  ASSERT_GT(h100.host_gbps, 0);
  // 1 GB over the host link: bytes / sustained bandwidth, far above the floor.
  EXPECT_NEAR(m.predict(rows[0], h100).time_us, 1e9 / (h100.host_gbps * 1e3), 0.01 * 1e9 / (h100.host_gbps * 1e3));
  EXPECT_GT(m.predict(rows[0], h100).time_us, 20 * m.predict(rows[1], h100).time_us);
  EXPECT_NEAR(m.predict(rows[2], h100).time_us, 1e9 / (h100.link_gbps * 1e3), 0.01 * 1e9 / (h100.link_gbps * 1e3));
  // PCIe Gen4 (A100) against Gen5 (H100): the host copy takes twice as long.
  EXPECT_NEAR(m.predict(rows[0], a100).time_us / m.predict(rows[0], h100).time_us, 2.0, 0.05);
  // What holds them: the link for host and peer copies, DRAM for the device copy.
  EXPECT_EQ(m.predict(rows[0], h100).bound, Bound::link);
  EXPECT_EQ(m.predict(rows[1], h100).bound, Bound::memory);
  EXPECT_EQ(m.predict(rows[2], h100).bound, Bound::link);
  // A collective's bytes cross the GPU-to-GPU link; 8 bytes still take the link's latency, at
  // least the launch floor; on a GPU without a link figure it streams as any kernel.
  EXPECT_EQ(m.predict(rows[4], h100).bound, Bound::link);
  EXPECT_GE(m.predict(rows[5], h100).time_us, h100.launch_floor_us);
  GpuCaps linkless = h100;
  linkless.link_gbps = 0;
  EXPECT_EQ(m.predict(rows[4], linkless).bound, Bound::memory);
}

}  // namespace
}  // namespace kcast
