// GpuDatabase: the GPUs kcast knows, and how a device string from a trace or a user becomes one of
// them. Matching ignores case, vendor prefixes ("NVIDIA", "Tesla") and punctuation, so
// "Tesla V100-PCIE-32GB", "v100 pcie 32gb" and the canonical "V100-PCIe-32GB" are the same key.
// Board variants the table does not list resolve by properties (SMs, compute capability, memory).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "model/gpu_spec.h"

namespace kcast {

// What a trace records about a device besides its name (0 / empty / NaN = unknown).
struct DeviceProps {
  int sm_count = 0;
  std::string compute_capability;
  double memory_gb = kUnknown;
};

struct GpuResolution {
  const GpuSpec* gpu = nullptr;
  std::string warning;  // non-empty when resolved by properties rather than by name
};

class GpuDatabase {
 public:
  explicit GpuDatabase(std::vector<GpuSpec> gpus);

  const std::vector<GpuSpec>& all() const { return gpus_; }
  // By canonical name or alias; nullptr when unknown.
  const GpuSpec* find(std::string_view name) const;
  // Like find(), but throws InputError("unknown GPU 'x'; did you mean: ...") when unknown.
  const GpuSpec& resolve(std::string_view name) const;
  // By name, else by properties; gpu == nullptr when neither works.
  GpuResolution resolve(std::string_view name, const DeviceProps& props) const;
  // The closest known names (canonical), best first.
  std::vector<std::string> suggestions(std::string_view name, size_t n = 3) const;

  // The matching key of a device string: lower case, vendor words and punctuation dropped.
  static std::string normalize(std::string_view name);

 private:
  std::vector<GpuSpec> gpus_;
  std::vector<std::pair<std::string, size_t>> keys_;  // normalized name/alias -> index
};

}  // namespace kcast
