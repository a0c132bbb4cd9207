// `--per-kernel OUT.csv`: one row per input row and target GPU, in input order (all targets of row 0,
// in --gpu order, then row 1, ...). Columns:
//   row,target_gpu,name,class,predicted_us,bound,measured_us,mode,source_gpu,
//   model_compute_us,model_memory_us,model_latency_us,floor_us,extra_us,tile,split_k,waves
// predicted_us is one invocation on the target; bound is compute|memory|launch|link|latency (a
// transferred kernel held at the target's floor is launch); measured_us is the row's duration_us as
// given; mode is the mode used for that row (transfer|absolute). The columns after source_gpu say why:
// the cost model's terms for the kernel on the target (KernelTerms: its absolute-mode time is the
// smooth maximum of floor_us and max(compute, memory) + extra; a transferred row scales its
// measurement by a ratio of such times), and for a GEMM or convolution the tile, K split and waves
// the model takes the library to run. Written atomically.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "predict/e2e/predictor.h"

namespace kcast {

// `preds` must have been computed with E2eOptions::keep_rows; `caps` are the targets' capabilities,
// in the same order.
void write_per_kernel_csv(const PreparedWorkload& w, const std::vector<GpuPrediction>& preds,
                          const std::vector<GpuCaps>& caps, std::ostream& out);

}  // namespace kcast
