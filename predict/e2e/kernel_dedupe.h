// Deduplication of kernel rows by what the cost model reads (class, dtype, GEMM shape, FLOPs,
// bytes), so a trace of a million launches of a few hundred distinct kernels costs a few hundred
// model evaluations per GPU. Name, launch shape, duration and timing do not enter the model and are
// not part of the key.
#pragma once
#include <cstdint>
#include <vector>

#include "model/kernel_rows.h"

namespace kcast {

struct UniqueKernels {
  std::vector<uint32_t> rep;     // a representative row index of each distinct kernel
  std::vector<uint32_t> of_row;  // the distinct kernel each row maps to
};

// Over a table's rows the distinct kernels are found among its kinds (a few hundred), not its rows.
UniqueKernels dedupe_kernels(const KernelRows& rows);

// True when the model cannot tell the two kernels apart (same dedupe key).
bool same_model_inputs(const Kernel& a, const Kernel& b);

}  // namespace kcast
