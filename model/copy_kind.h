// Which link a copy crosses, from its name: Nsight Systems names copies "[CUDA memcpy Host-to-Device]"
// (older: "[CUDA memcpy HtoD]"), the PyTorch profiler "Memcpy HtoD (Pageable -> Device)". A copy to or
// from the host crosses the GPU's host link (GpuSpec::host_gbps: its PCIe slot, a GB200's NVLink-C2C),
// a peer copy its GPU-to-GPU link (GpuSpec::link_gbps); device-to-device and array copies stay in DRAM.
#pragma once
#include <cstdint>
#include <string_view>

namespace kcast {

enum class CopyKind : uint8_t { device, host, peer };

CopyKind copy_kind_of(std::string_view memcpy_name);

}  // namespace kcast
