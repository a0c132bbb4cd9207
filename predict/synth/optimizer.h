// The optimizer step's kernels (optimizer.cc). multi_tensor_launches, their launch count, is declared
// in synth.h beside the other figures tests and reports use.
#pragma once
#include <cstdint>
#include <vector>

#include "model/kernel.h"
#include "predict/synth/synth.h"

namespace kcast::synth {

// PyTorch foreach optimizer kernels (torch.optim.Adam / SGD defaults on CUDA: foreach=True).
// `master_weights`: the step runs on fp32 master copies of 16-bit `dt` weights (SynthOptions::
// master_weights): the gradients cast to fp32 first, the updated weights cast back after.
std::vector<Kernel> optimizer_rows(Optimizer opt, const std::vector<int64_t>& param_numels, DType dt,
                                   bool master_weights = false);
// Megatron's fused Adam over this GPU's shard of the parameters (optimizer.cc).
std::vector<Kernel> fused_adam_rows(const std::vector<int64_t>& numels, DType dt, bool master_weights);

}  // namespace kcast::synth
