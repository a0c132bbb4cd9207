// The ResNet family of `kcast synth`: torchvision's ResNet-18/34/50/101/152 at 224x224.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "model/kernel.h"
#include "predict/synth/synth.h"

namespace kcast::synth {

struct ResNetConfig {
  const char* name;
  bool bottleneck;     // bottleneck blocks (1x1, 3x3, 1x1 with 4x channels) or basic blocks (two 3x3)
  int64_t blocks[4];   // residual blocks per stage (64, 128, 256, 512 channels wide)
  const char* description;
};

// In `kcast synth --list` order.
const std::vector<ResNetConfig>& builtin_resnets();
// The ResNet named `lower_name` (lower case), or nullptr.
const ResNetConfig* find_builtin_resnet(const std::string& lower_name);

// Options a CNN cannot take (sequence, attention, heads, tensor or pipeline parallelism, FP8)
// -> InputError naming the option and the model.
std::vector<Kernel> synthesize_resnet(const ResNetConfig& cfg, const SynthOptions& opt, Footprint* footprint = nullptr);

}  // namespace kcast::synth
