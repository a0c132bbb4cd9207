// Which attention kernels are written with Ampere's warp-level tensor instruction (mma.sync) on
// every GPU they run on. FlashAttention-2 (and PyTorch's flash backend, which is FlashAttention-2:
// aten::_scaled_dot_product_flash_attention, pytorch_flash::flash_fwd_kernel) and the CUTLASS
// memory-efficient kernels (fmha_cutlassF/B_*_sm80, aten::_scaled_dot_product_efficient_attention)
// have no Hopper or Blackwell code path: on those GPUs they run the same mma.sync kernels, which the
// newer tensor cores do not speed up per SM and clock. FlashAttention-2 reaches 50-73% of the A100's
// peak but 35% of the H100's (the FlashAttention-2 and -3 abstracts, arXiv 2307.08691 and
// 2407.08608), so its rate on an architecture is its usual share times `ArchFacts::mma_sync_fraction`.
// FlashAttention-3 (FlashAttnFwdSm90), cuDNN's fused attention and Triton kernels use the native
// instructions of each architecture (names with sm90/sm100 are never matched). Matched by name
// (model/attention_kernel.cc).
#pragma once
#include <string_view>

namespace kcast {

bool runs_mma_sync(std::string_view attention_kernel_name);

}  // namespace kcast
