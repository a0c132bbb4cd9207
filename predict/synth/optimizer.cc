// The optimizer step as PyTorch runs it: torch.optim's foreach kernels (Adam, AdamW, SGD defaults on
// CUDA: foreach=True) over every parameter this GPU updates, their launch count from
// multi_tensor_apply's chunking, and mixed precision's casts around fp32 master weights.
#include "predict/synth/optimizer.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "predict/synth/emitter.h"

namespace kcast::synth {

int64_t multi_tensor_launches(const std::vector<int64_t>& numels, int max_tensors) {
  // Mirrors at::native::multi_tensor_apply: chunks of 65536 elements, one block each; a launch
  // when 320 blocks are queued, when the tensor list is full at a tensor's last chunk, or at the end.
  constexpr int64_t kChunk = 65536, kMaxBlocks = 320;
  int64_t launches = 0, blocks = 0, tensors = 0;
  for (size_t t = 0; t < numels.size(); ++t) {
    if (numels[t] <= 0) continue;
    ++tensors;
    const int64_t chunks = (numels[t] + kChunk - 1) / kChunk;
    for (int64_t c = 0; c < chunks; ++c) {
      ++blocks;
      const bool last_chunk = c == chunks - 1;
      const bool tensors_full = tensors == max_tensors && last_chunk;
      const bool end = last_chunk && t + 1 == numels.size();
      if (blocks == kMaxBlocks || tensors_full || end) {
        ++launches;
        blocks = 0;
        tensors = last_chunk ? 0 : 1;
      }
    }
  }
  return launches;
}

std::vector<Kernel> optimizer_rows(Optimizer opt, const std::vector<int64_t>& numels, DType dt,
                                   bool master_weights) {
  if (opt == Optimizer::none || numels.empty()) return {};
  double params = 0;
  for (int64_t n : numels) params += double(n);
  const DType pdt = dt == DType::tf32 || master_weights ? DType::fp32 : dt;
  struct Step {
    const char* op;
    double tensors;  // full-size tensors read + written per parameter
    double flops;    // per parameter
    int max_tensors;  // PyTorch's per-launch tensor limit for this op's list depth
  };
  // torch.optim.Adam(foreach=True), no weight decay, no amsgrad, step counters on the host:
  // m.lerp_(g, 1-b1); v.mul_(b2); v.addcmul_(g, g, 1-b2); d = v.sqrt(); d.div_(bc2_sqrt);
  // d.add_(eps); p.addcdiv_(m, d, -step_size): 18 tensor passes = 72 bytes/param in fp32.
  static const Step kAdam[] = {{"aten::_foreach_lerp_ (exp_avg)", 3, 3, 64},
                               {"aten::_foreach_mul_ (exp_avg_sq)", 2, 1, 110},
                               {"aten::_foreach_addcmul_ (exp_avg_sq)", 3, 3, 48},
                               {"aten::_foreach_sqrt (denom)", 2, 1, 64},
                               {"aten::_foreach_div_ (denom)", 2, 1, 96},
                               {"aten::_foreach_add_ (denom eps)", 2, 1, 110},
                               {"aten::_foreach_addcdiv_ (param)", 4, 3, 48}};
  // torch.optim.SGD(foreach=True), no momentum: p.add_(g, alpha=-lr).
  static const Step kSgd[] = {{"aten::_foreach_add_ (param)", 3, 2, 64}};
  std::vector<Kernel> out;
  const char* name = opt == Optimizer::adam    ? "optimizer.adam "
                     : opt == Optimizer::adamw ? "optimizer.adamw "
                                               : "optimizer.sgd ";
  // A multi-tensor launch series over every parameter: `bytes` per parameter read + written.
  auto emit_bytes = [&](const std::string& op, DType kdt, double flops, double bytes, int max_tensors) {
    const double launches = double(multi_tensor_launches(numels, max_tensors));
    Kernel k = work(std::string(name) + op, KernelClass::optimizer, kdt, params * flops / launches,
                    params * bytes / launches);
    k.count = launches;
    out.push_back(std::move(k));
  };
  auto emit = [&](const Step& s) { emit_bytes(s.op, pdt, s.flops, s.tensors * dtype_bytes(pdt), s.max_tensors); };
  // _foreach_copy_ between the 16-bit tensors and their fp32 copies (two tensors per launch list).
  const double cast_bytes = dtype_bytes(dt) + 4;
  if (master_weights) emit_bytes("aten::_foreach_copy_ (gradients to fp32)", pdt, 0, cast_bytes, 110);
  // torch.optim.AdamW(foreach=True) first decays the parameters, p.mul_(1 - lr * weight_decay).
  if (opt == Optimizer::adamw) emit({"aten::_foreach_mul_ (decoupled weight decay)", 2, 1, 110});
  if (keeps_moments(opt))
    for (const auto& s : kAdam) emit(s);
  else
    for (const auto& s : kSgd) emit(s);
  if (master_weights) emit_bytes("aten::_foreach_copy_ (fp32 master to weights)", dt, 0, cast_bytes, 110);
  return out;
}

// Megatron's distributed optimizer steps its shard with Transformer Engine's / Apex's fused Adam
// (multi_tensor_adam): one kernel per multi-tensor launch, reading each parameter's FP32 gradient
// (Megatron's main_grad), master weight and both moments, writing those three and the 16-bit weight.
std::vector<Kernel> fused_adam_rows(const std::vector<int64_t>& numels, DType dt, bool master_weights) {
  if (numels.empty()) return {};
  double params = 0;
  for (int64_t n : numels) params += double(n);
  const double e = dtype_bytes(dt);
  // Lists per launch: gradient, parameter, two moments (and the master copy): PyTorch's
  // multi_tensor_apply holds 36 tensors a launch at depth 4 and 30 at depth 5.
  const int64_t launches = multi_tensor_launches(numels, master_weights ? 30 : 36);
  const double bytes = master_weights ? 4 + 2 * (4 + 4 + 4) + e : e + 2 * (e + e + e);
  Kernel k = work("optimizer.fused_adam te::multi_tensor_adam", KernelClass::optimizer, DType::fp32,
                  params * 16 / double(launches), params * bytes / double(launches));
  k.count = double(launches);
  return {std::move(k)};
}

}  // namespace kcast::synth
