// Which row-wise kernels (norms, softmax) read their rows from DRAM once. PyTorch's own layer/RMS/
// group norm kernels (vectorized_layer_norm_kernel and the rest) compute a row's statistics in one
// sweep and normalize it in a second, and its long-row softmax re-reads a row for the max and the
// sum; the fitted `norm_passes` / `softmax_passes` charge those reads. Triton kernels that hold the
// whole row in registers read it once: Inductor's persistent reductions (triton_per_fused_*) and
// the hand-written one-block-per-row kernels of Liger-Kernel, Unsloth and others
// (_rms_norm_forward_kernel, _layer_norm_forward_kernel, _softmax_single_block_forward_kernel;
// BLOCK_SIZE >= the row). Matched by name (model/row_kernel.cc); a kernel the rule misses is charged
// the framework's extra reads.
#pragma once
#include <string_view>

namespace kcast {

bool reads_rows_once(std::string_view kernel_name);

}  // namespace kcast
