// Which normalization kernels read their rows from DRAM once. PyTorch's own layer/RMS/group norm
// kernels (vectorized_layer_norm_kernel and the rest) compute a row's statistics in one sweep and
// normalize it in a second, and the fitted `norm_passes` charges that second read. Triton norm
// kernels that hold the whole row in registers read it once: Inductor's persistent reductions
// (triton_per_fused_*) and the hand-written one-block-per-row kernels of Liger-Kernel, Unsloth and
// others (_rms_norm_forward_kernel, _layer_norm_forward_kernel, ...; BLOCK_SIZE >= the row).
// Matched by name (model/norm_kernel.cc); a kernel this rule misses is charged the second read.
#pragma once
#include <string_view>

namespace kcast {

bool norm_reads_row_once(std::string_view kernel_name);

}  // namespace kcast
