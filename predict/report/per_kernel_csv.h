// `--per-kernel OUT.csv`: one row per input row and target GPU, in input order (all targets of row 0,
// in --gpu order, then row 1, ...). Columns:
//   row,target_gpu,name,class,predicted_us,bound,measured_us,mode,source_gpu
// predicted_us is one invocation on the target; bound is compute|memory|launch (a transferred kernel
// held at the target's floor is launch); measured_us is the row's duration_us as given; mode is the
// mode used for that row (transfer|absolute). Written atomically.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "predict/e2e/predictor.h"

namespace kcast {

// `preds` must have been computed with E2eOptions::keep_rows.
void write_per_kernel_csv(const PreparedWorkload& w, const std::vector<GpuPrediction>& preds, std::ostream& out);
void write_per_kernel_csv_file(const PreparedWorkload& w, const std::vector<GpuPrediction>& preds,
                               const std::string& path);

}  // namespace kcast
